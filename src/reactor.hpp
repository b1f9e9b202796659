// src/reactor.hpp - the host reactor: threads that serve tasks' requests to the host.
//
// Tasks post requests into mailboxes (weft/detail/mailbox.hpp, docs/mailbox.md). Each
// reactor thread owns one mailbox: it is the only consumer of its request ring and
// the only producer of its completion ring. Thread 0 also owns the sockets (its epoll
// set): net requests all go to mailbox 0.
//
// A thread's loop (reactor_thread::run):
//   1. poll: read the doorbell line; when it moved (or the last scan stopped at a slot
//      not yet published), copy out every published request, in ticket order, and
//      store req_head after every 64 of them and once at the batch's end;
//   2. dispatch each by opcode. Most complete at once; a socket that is not ready, and
//      io::sleep_for, leave the request pending (epoll or the timer heap finishes it);
//   3. poll epoll (timeout 0) and the timer heap;
//   4. flush: write the completions the completion ring has room for, as LL words
//      (each word carries its completion's flag, so no index word is published); the
//      rest wait in the thread's queue;
//   5. on the host backend, drain: deliver the completions to their tasks and publish
//      requests that waited for ring space (on the GPU a worker warp does this);
//   6. wait adaptively: after work, spin (spin_ns); then sleep, each sleep the smallest
//      1 us * 2^k that is at least a quarter of the idle time so far, capped at
//      max_sleep_ns, which bounds the wake-up latency (the GPU cannot signal a host
//      thread, so an idle thread must look at the doorbell now and then). After each
//      sleep the thread rescans its ring once even if the doorbell did not change.
//
// Memory: requests wait in the tasks' frames, never in the reactor, while the rings are
// full; the reactor stops taking requests while a completion ring's worth of answers is
// queued. Requests that complete later (io::sleep_for timers, sockets that are not
// ready) are held by the reactor until they complete: a few dozen bytes each.
//
// Faults: a handler that throws gives host_error and the thread serves on. When a
// thread is stopped (stop_thread, a fault drill) it fails every pending request with
// host_unavailable and keeps failing each new one until shutdown, so no task waits
// forever and no request is lost. At shutdown (close) every pending and new request
// fails with shutting_down until the tasks' side has taken every completion and has run
// the tasks those completions woke (reactor::close, then reactor::await_late_answers for
// answers published after close's last look).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "weft/detail/mailbox_layout.hpp"
#include "weft/errc.hpp"

namespace weft::rt {

// How the reactor reaches task buffers and allocates the shared rings: plain memory on
// the host backend; pinned mapped memory and staged copies on the cuda backend.
class memory_ops {
 public:
  virtual ~memory_ops() = default;
  // Called first on each reactor thread, before it serves: the cuda backend makes the
  // runtime's device current there, so every later call of that thread acts on it.
  virtual void bind_thread(unsigned thread) noexcept { (void)thread; }
  virtual void* alloc_shared(std::size_t bytes) = 0;  // zeroed, shared with the task side
  virtual void free_shared(void* p) noexcept = 0;
  // True when a host thread may read and write the memory at p directly.
  virtual bool host_accessible(const void* p) noexcept = 0;
  // Copies between host memory and a task buffer the host cannot touch (calls from
  // reactor threads; each thread passes its own index for its own staging stream).
  virtual errc to_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept = 0;
  virtual errc from_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept = 0;
  // A pinned host buffer of at least `bytes` for thread's staged transfers (files, and
  // recvs into task memory the host cannot touch), kept for the thread's later calls.
  // Null when none can be had: the request that needed it fails with out_of_memory.
  virtual void* staging(unsigned thread, std::size_t bytes) noexcept = 0;
  // Starts an asynchronous copy host -> task buffer on the thread's stream; wait() ends it.
  virtual errc to_task_async(unsigned thread, void* dst, const void* src, std::size_t n) noexcept = 0;
  // The same the other way: task buffer -> host (into the staging buffer: a copy into
  // pageable memory would not be asynchronous); wait() ends it.
  virtual errc from_task_async(unsigned thread, void* dst, const void* src, std::size_t n) noexcept = 0;
  virtual errc wait(unsigned thread) noexcept = 0;
};
std::unique_ptr<memory_ops> make_host_memory_ops();

// Every staged transfer of a reactor thread asks for this size, so that the thread's
// one buffer (memory_ops::staging) is allocated once and never grown.
inline constexpr std::size_t staging_bytes = std::size_t{4} << 20;

struct reactor_config {
  unsigned threads = 1;
  std::uint32_t slots = 1024;           // request ring capacity per mailbox (power of two)
  std::uint32_t completions = 1024;     // completion ring capacity per mailbox (power of two)
  std::uint32_t spin_ns = 50000;        // spin this long after the last work before sleeping
  std::uint32_t max_sleep_ns = 50000;   // longest sleep while idle: the wake-up latency bound
  bool drain_here = true;               // host backend: the reactor delivers completions too
};

struct reactor_stats {
  std::uint64_t requests = 0;             // requests taken from the rings
  std::uint64_t completions = 0;          // completions published
  std::uint64_t deferred = 0;             // requests that waited on epoll or a timer
  std::uint64_t max_queued_completions = 0;  // peak of completions waiting for ring room
  std::uint64_t handler_errors = 0;       // host functions that threw
};

using host_fn = std::function<std::uint64_t(std::span<const std::uint64_t>)>;

class reactor_thread;

// The largest request (and completion) ring per mailbox: 2^20 slots of a few hundred
// bytes each, pinned (a bigger ring is a configuration error, not a wish).
inline constexpr std::uint32_t max_mailbox_slots = 1u << 20;

class reactor;
// The reactor whose thread the caller is (a host function runs there), or nullptr.
const reactor* current_reactor() noexcept;

class reactor {
 public:
  reactor(const reactor_config& cfg, std::unique_ptr<memory_ops> mem);  // throws weft::error
  ~reactor();
  reactor(const reactor&) = delete;
  reactor& operator=(const reactor&) = delete;

  // The shared halves of the mailboxes (one per thread), for the task side.
  const std::vector<detail::mailbox_shared*>& shared() const noexcept { return shared_; }
  // Host backend: the task side's mailboxes (in host memory), as tasks find them.
  detail::io_link host_link() noexcept { return {host_boxes_.data(), static_cast<std::uint32_t>(host_boxes_.size())}; }
  // Starts the threads (after the task side's mailboxes exist).
  void start();

  void register_fn(std::uint32_t id, host_fn fn);
  // Shutdown, step 1: every pending and new request fails with shutting_down; returns
  // when the task side has taken every completion and has no request left waiting to
  // be posted and, when there was anything to answer, the task side is idle: the tasks
  // that got answers have run (or after timeout_ms). `task_side_inflight` counts the
  // task side's requests not yet delivered where the reactor cannot see them (the GPU's
  // mailboxes, in device memory); the host backend's mailboxes are read here.
  // `task_side_idle` says whether no task runs or waits to run (the host executor; on the
  // GPU, no warp ran a batch since its last call: runtime.cpp).
  void close(unsigned timeout_ms, const std::function<std::uint64_t()>& task_side_inflight = {},
             const std::function<bool()>& task_side_idle = {}) noexcept;
  // Shutdown, step 2: joins the threads; nothing is delivered afterwards.
  void stop() noexcept;
  // Shutdown, after step 2: when the threads published answers after close's last look
  // (a request posted and refused in close's last millisecond, or while stop joined the
  // threads), waits, within close's deadline, until the task side has handed every answer
  // back and is idle, twice 1 ms apart, so that the tasks they woke run before the
  // executor's shutdown destroys them. Nothing can be answered any more, so the woken set
  // is final. Returns at once when there was no such answer (or no task_side_idle).
  void await_late_answers(const std::function<bool()>& task_side_idle) noexcept;
  // Fault drill: stops thread i's service (see the file comment).
  void stop_thread(unsigned i) noexcept;

  reactor_stats stats() const noexcept;
  unsigned thread_count() const noexcept { return static_cast<unsigned>(threads_.size()); }

  // ---- for the threads (reactor.cpp, reactor_ops.cpp, reactor_net.cpp)
  memory_ops& mem() noexcept { return *mem_; }
  const reactor_config& cfg() const noexcept { return cfg_; }
  bool closing() const noexcept { return closing_.load(std::memory_order_acquire); }
  // host_call: runs the function; errc::not_found when none, host_error when it threw.
  errc call_fn(std::uint32_t id, std::span<const std::uint64_t> args, std::uint64_t* out) noexcept;
  // Files opened through the reactor: only these may be read, written or closed. A read
  // or a write holds use_file's shared lock for its whole call, and close_file takes it
  // exclusively around the forget and the ::close, so a close from another reactor
  // thread waits for the call in flight: the descriptor's number cannot be closed and
  // reused (by an open, or an accept on thread 0) under a pread or pwrite.
  void add_file(int fd);
  std::shared_lock<std::shared_mutex> use_file(int fd, bool* known);
  // False when fd is not a file opened here; else closes it, *err = ::close's errno or 0.
  bool close_file(int fd, int* err) noexcept;

 private:
  reactor_config cfg_;
  std::unique_ptr<memory_ops> mem_;
  std::vector<detail::mailbox_shared*> shared_;
  void free_shared_memory() noexcept;  // the rings, and shared_ itself
  bool requests_settled(const std::function<std::uint64_t()>& task_side_inflight) noexcept;  // close's look
  std::uint64_t answers_published() const noexcept;  // completions published, all threads
  std::vector<detail::mailbox> host_boxes_;
  std::vector<std::unique_ptr<reactor_thread>> threads_;
  std::atomic<bool> closing_{false};
  std::uint64_t answers_at_last_look_ = 0;  // answers_published() at close's last look
  std::uint64_t close_until_ = 0;           // close's deadline (steady_ns), also await_late_answers'
  bool stopped_ = false;

  std::shared_mutex fns_m_;
  std::unordered_map<std::uint32_t, host_fn> fns_;
  std::shared_mutex files_m_;
  std::unordered_set<int> files_;
  std::atomic<std::uint64_t> handler_errors_{0};
};

}  // namespace weft::rt
