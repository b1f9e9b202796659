// weft/errc.hpp - the error codes every weft operation reports through weft::result.
#pragma once
#include <cstdint>

#include "weft/config.hpp"

namespace weft {

// Error codes. Zero is never an error, so an errc{} means "no error" where a raw
// code is stored. Add new codes at the end; the numbers are part of the ABI of the
// host<->device mailboxes.
enum class errc : std::uint32_t {
  out_of_memory = 1,      // the frame pool (or another bounded pool) is exhausted
  queue_full = 2,         // a bounded queue had no room and the caller asked not to wait
  shutting_down = 3,      // the runtime is stopping and takes no new work
  no_runtime = 4,         // an operation that needs a runtime ran outside one
  backend_unavailable = 5,// the requested backend cannot run here (no GPU, not built)
  invalid_argument = 6,   // a malformed request
  already_taken = 7,      // a one-shot value (join result) was already consumed, or a task already ran
  would_block = 8,        // the operation would have to wait: run_inline's task parked with
                          // nothing to wake it, or a try_ operation found nothing ready
  closed = 9,             // the channel was closed (send), or closed and drained (recv)
  device_fault = 10,      // the GPU kernel faulted (a trap, an illegal address): the runtime is dead
  io_error = 11,          // a host system call failed (a read, a write, a socket call)
  not_found = 12,         // no such file, or no host function registered under that id
  bad_handle = 13,        // a file or socket handle that is not open (never was, or closed)
  too_large = 14,         // a payload over the mailbox's limit (a path, a print, a message)
  host_error = 15,        // a host function threw: the reactor caught it and serves on
  host_unavailable = 16,  // the reactor thread that serves this request has stopped
};

// A short, static, human-readable message for an error code.
WEFT_HOST_DEVICE constexpr const char* to_string(errc e) noexcept {
  switch (e) {
    case errc::out_of_memory: return "out of memory (frame pool exhausted)";
    case errc::queue_full: return "queue full";
    case errc::shutting_down: return "runtime is shutting down";
    case errc::no_runtime: return "no weft runtime on this thread";
    case errc::backend_unavailable: return "backend unavailable";
    case errc::invalid_argument: return "invalid argument";
    case errc::already_taken: return "result already taken";
    case errc::would_block: return "operation would block (nothing ready, or no scheduler to wake the task)";
    case errc::closed: return "closed (a channel, or a connection the peer closed)";
    case errc::device_fault: return "the GPU kernel faulted";
    case errc::io_error: return "a host I/O call failed";
    case errc::not_found: return "not found (no such file, or no host function with that id)";
    case errc::bad_handle: return "bad handle (the file or socket is not open)";
    case errc::too_large: return "payload over the limit";
    case errc::host_error: return "the host function threw";
    case errc::host_unavailable: return "the host reactor serving this request has stopped";
  }
  return "unknown weft error";
}

}  // namespace weft
