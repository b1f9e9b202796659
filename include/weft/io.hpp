// weft/io.hpp - files, printing, host functions and host-timed sleeps, from tasks.
//
//   weft::result<weft::io::file> f = co_await weft::io::open("/data/in.bin", O_RDONLY);
//   weft::result<std::size_t> n = co_await weft::io::read(*f, buf, 4 << 20, offset);  // 0 at EOF
//   co_await weft::io::write(*out, buf, *n, offset);
//   co_await weft::io::close(*f);
//   co_await weft::io::print("done\n");
//   weft::result<std::uint64_t> r = co_await weft::host_call(7, a, b);  // rt.register_host_fn(7, ...)
//   co_await weft::io::sleep_for(5'000'000'000);                       // on the host's clock
//
// Each call posts a request to the runtime's host reactor (docs/mailbox.md) and parks
// the task until the answer comes; the worker runs other tasks meanwhile. Each gives a
// result: the error is a value (never an exception, never a hang).
//
// Buffers: on the cuda backend `buf` may be device memory (cudaMalloc), managed memory
// or mapped pinned memory; the reactor copies through a staging buffer when the host
// cannot touch it. Small transfers (<= 104 bytes read, <= 184 written) travel inline in
// the mailbox slot. The buffer must stay valid until the call completes.
//
// Errors: not_found (no such file), bad_handle (not an open file), io_error (another
// system call failure), too_large (a path of 4096 bytes or more, a print over 64 KiB),
// invalid_argument (a null text; a FIFO or a socket given to open: files are read and
// written at offsets, and open never waits for a FIFO's other end), host_unavailable
// (the reactor thread stopped), shutting_down (the runtime is stopping),
// backend_unavailable (no runtime: run_inline).
// A short read is not an error: read returns the bytes it got, 0 at end of file. A read
// or write that a system error stops after some bytes returns those bytes, as read(2)
// and write(2) do; the next call at the following offset gets the error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "weft/detail/host_request.hpp"

namespace weft {
namespace io {

// An open file on the host: a descriptor the reactor gave out. Plain value; close it
// with io::close (the runtime's shutdown closes any left open).
struct file {
  int fd = -1;
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return fd >= 0; }
};

namespace detail {
struct as_file {
  WEFT_HOST_DEVICE static file convert(std::uint64_t v) noexcept { return file{static_cast<int>(v)}; }
};
}  // namespace detail

// open(2) on the host, with O_CLOEXEC added. `path` must be readable by the task's
// backend (on the GPU: device, managed or mapped memory, or a string literal).
WEFT_HOST_DEVICE inline auto open(const char* path, int posix_flags, int mode = 0644) noexcept {
  weft::detail::host_request_awaiter<file, detail::as_file> aw(
      weft::detail::opcode::open, static_cast<std::uint64_t>(static_cast<std::uint32_t>(posix_flags)),
      static_cast<std::uint64_t>(static_cast<std::uint32_t>(mode)));
  weft::detail::attach_text(aw, path, weft::detail::max_path_bytes - 1, 2);
  return aw;
}

// Reads up to n bytes at `offset` into buf; the bytes read, 0 at end of file.
WEFT_HOST_DEVICE inline auto read(file f, void* buf, std::size_t n, std::uint64_t offset) noexcept {
  weft::detail::host_request_awaiter<std::size_t, weft::detail::as_size> aw(
      weft::detail::opcode::read, static_cast<std::uint64_t>(static_cast<std::int64_t>(f.fd)),
      reinterpret_cast<std::uint64_t>(buf), n, offset);
  if (n <= weft::detail::completion_inline_bytes) aw.op.inline_dst = buf;
  if (buf == nullptr && n != 0) aw.early = errc::invalid_argument;
  return aw;
}

// Writes n bytes from buf at `offset`; the bytes written.
WEFT_HOST_DEVICE inline auto write(file f, const void* buf, std::size_t n, std::uint64_t offset) noexcept {
  weft::detail::host_request_awaiter<std::size_t, weft::detail::as_size> aw(
      weft::detail::opcode::write, static_cast<std::uint64_t>(static_cast<std::int64_t>(f.fd)),
      reinterpret_cast<std::uint64_t>(buf), n, offset);
  if (n <= weft::detail::request_inline_bytes) {
    aw.op.inline_src = buf;
    aw.op.req.inline_bytes = static_cast<std::uint32_t>(n);
  }
  if (buf == nullptr && n != 0) aw.early = errc::invalid_argument;
  return aw;
}

WEFT_HOST_DEVICE inline auto close(file f) noexcept {
  return weft::detail::host_request_awaiter<void, weft::detail::as_void>(
      weft::detail::opcode::close, static_cast<std::uint64_t>(static_cast<std::int64_t>(f.fd)));
}

// Writes `text` to the host's standard output (whole, in one write).
WEFT_HOST_DEVICE inline auto print(const char* text) noexcept {
  weft::detail::host_request_awaiter<void, weft::detail::as_void> aw(weft::detail::opcode::print);
  weft::detail::attach_text(aw, text, weft::detail::max_print_bytes, 0);
  return aw;
}

// Parks the task for at least `ns` nanoseconds of the host's steady clock: the reactor's
// timer wakes it. For long waits; weft::sleep_for uses the backend's own clock.
WEFT_HOST_DEVICE inline auto sleep_for(std::uint64_t ns) noexcept {
  return weft::detail::host_request_awaiter<void, weft::detail::as_void>(weft::detail::opcode::sleep, ns);
}

}  // namespace io

// Calls the host function registered under `id` (runtime::register_host_fn) with up to
// six integral arguments; its return value. not_found: no function under `id`;
// host_error: it threw (the reactor catches it and serves on). The arguments are values:
// on the GPU a task alone in its warp may publish the request without a system-scope
// release (it takes its own answer: device_io.hpp), so an address passed as an integer
// gives the host function no guarantee of seeing what the task wrote there just before.
// Pass data by value, or fence first on the GPU (cuda::atomic_thread_fence with
// memory_order_release and thread_scope_system).
template <class... A>
WEFT_HOST_DEVICE inline auto host_call(std::uint32_t id, A... a) noexcept {
  static_assert(sizeof...(A) <= 6, "host_call takes at most 6 arguments");
  static_assert((std::is_integral_v<A> && ...), "host_call arguments must be integral");
  // args[0] = id | argc << 32; the arguments follow in args[1..5], and a sixth travels
  // as 8 inline bytes.
  const std::uint64_t v[6] = {static_cast<std::uint64_t>(a)...};
  weft::detail::host_request_awaiter<std::uint64_t, weft::detail::as_u64> aw(
      weft::detail::opcode::host_call, std::uint64_t{id} | (std::uint64_t{sizeof...(A)} << 32), v[0], v[1], v[2],
      v[3], v[4]);
  if constexpr (sizeof...(A) == 6) {
    aw.op.value = v[5];  // until the answer: the inline word (see host_request_awaiter)
    aw.inline_value = true;
  }
  return aw;
}

}  // namespace weft
