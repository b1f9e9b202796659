// weft/runtime.hpp - weft::runtime: picks a backend and runs root tasks on it.
//
//   weft::runtime rt;                        // backend from WEFT_BACKEND, else automatic
//   int r = rt.block_on([] WEFT_HOST_DEVICE (int n) { return root(n); }, 39);
//
// Backend selection (config::kind, then the environment):
//   * config::kind = host or cuda forces that backend;
//   * with backend::automatic, WEFT_BACKEND=host|cuda forces one; any other value is an
//     error (errc::invalid_argument) naming the value;
//   * otherwise the cuda backend when weft was built with it and a GPU is usable, else
//     the host backend.
//   * asking for cuda throws weft::error(errc::backend_unavailable) with the reason: no
//     usable GPU (with the CUDA runtime's message) or weft built without CUDA.
//   * a host worker thread or a reactor thread that cannot start (std::thread's
//     system_error) is errc::backend_unavailable too, after the threads that did start
//     have stopped.
// Host-side API errors are C++ exceptions (weft::error); inside tasks errors are values.
//
// The cuda backend runs device code compiled in a CUDA translation unit (see
// weft_device_sources() in CMake): block_on and spawn called from a translation unit
// compiled as plain C++ report errc::backend_unavailable on it. One runtime runs the
// device code of one translation unit (weft/executor/device_program.hpp says why).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <span>
#include <optional>
#include <type_traits>

#include "weft/executor/device_runtime.hpp"
#include "weft/executor/host_executor.hpp"
#include "weft/executor/host_frames.hpp"
#include "weft/frame_allocator.hpp"
#include "weft/spawn.hpp"
#if WEFT_CUDA_COMPILE
#include "weft/executor/device_program.hpp"
#endif

namespace weft {

enum class backend { automatic, host, cuda };

// The runtime's constructor rejects values outside the bounds given below with
// weft::error(errc::invalid_argument), naming the field; it changes none silently (but
// for the cuda backend's rings of at least 64 cells).
inline constexpr unsigned max_host_workers = 4096;
inline constexpr std::uint32_t min_park_max_ns = 256, max_park_max_ns = 1'000'000;
inline constexpr std::uint32_t max_timer_capacity = 1u << 24;  // 16 B a timer on the GPU: 256 MiB

struct config {
  backend kind = backend::automatic;
  int device = 0;                            // CUDA device ordinal (cuda backend), >= 0; with
                                             // automatic, one past the GPUs present is an error
  unsigned workers = 0;                      // host: threads (0: one per core; at most
                                             // max_host_workers); cuda: worker warps (0, or
                                             // more than fit: every warp slot of the GPU)
  std::size_t frame_pool_bytes = 256u << 20; // size-class pool arena (one block .. under 256 GiB)
  std::uint32_t local_queue_capacity = 256;  // per-worker ring (power of two, 2..8192; cuda
                                             // rounds it up to 64)
  std::uint32_t inject_capacity = 1u << 20;  // cuda: global inject queue (all shards; 1..2^30)
  std::uint32_t park_max_ns = 10000;         // cuda: longest nap of an idle worker warp (a
                                             // wake-up that needs it waits up to this long;
                                             // 256..1,000,000; 100 us until the thirty-first
                                             // session)
  std::uint32_t timer_capacity = 1u << 16;   // cuda: tasks in sleep_for at once (more: queue_full;
                                             // 1..max_timer_capacity)
  weft::frame_allocator* frame_allocator = nullptr;  // replaces the pool when set (host)
  // The host reactor (io::, host_call, net::; docs/mailbox.md)
  unsigned reactor_threads = 2;              // one mailbox each; thread 0 runs the sockets
  std::uint32_t mailbox_slots = 1024;        // request ring per mailbox (power of two, 2..2^20;
                                             // the completion ring has as many)
  std::uint32_t reactor_spin_ns = 50000;     // a reactor thread spins this long after work
  std::uint32_t reactor_max_sleep_ns = 50000;  // then sleeps at most this long: the bound on
                                               // its wake-up latency when idle
};

// A host function that tasks call with weft::host_call(id, args...).
using host_fn = std::function<std::uint64_t(std::span<const std::uint64_t>)>;

// Counters of the host reactor (all threads).
struct io_stats {
  std::uint64_t requests = 0;                // taken from the request rings
  std::uint64_t completions = 0;             // published to the completion rings
  std::uint64_t deferred = 0;                // waited on epoll or a timer before completing
  std::uint64_t max_queued_completions = 0;  // peak completions waiting for ring room
  std::uint64_t handler_errors = 0;          // host functions that threw
};

// A host-side failure: a bad configuration, an unavailable backend, a failed root.
class error : public std::runtime_error {
 public:
  error(errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  errc code() const noexcept { return code_; }

 private:
  errc code_;
};

namespace detail {
template <class X>
inline constexpr bool is_task_v = false;
template <class T>
inline constexpr bool is_task_v<task<T>> = true;

template <class F, class... Args>
using root_value_t = typename std::invoke_result_t<F&, Args&...>::value_type;

// True on a thread that some weft runtime runs work on: a host backend's worker thread
// (task code) or a reactor thread (a host function). A wait for a root there could wait
// for itself (the root queued behind the waiting worker, or needing the blocked reactor
// thread), so host_handle's waits and block_on refuse it (errc::would_block), as tokio
// refuses to block inside a runtime.
bool on_runtime_thread() noexcept;
}  // namespace detail

namespace detail {

// Where a root started by the host backend's runtime::spawn leaves its outcome. The
// root is a wrapper task (host_root_task) that awaits fn(args...) and stores the
// result; the box is marked done when the wrapper's frame is destroyed, by its
// `host_box_guard` parameter (parameters live until the frame goes). So the waiter
// wakes only after the root is gone (live_tasks() is 0 then), and a root that shutdown
// destroys unfinished reports errc::shutting_down instead of leaving a waiter on a
// freed frame.
template <class T>
struct host_box {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::optional<result<T>> r;

  void store(result<T>&& v) {
    std::lock_guard lk(m);
    r.emplace(std::move(v));
  }
  void finish() {
    {
      std::lock_guard lk(m);
      if (!r) r.emplace(unexpected(errc::shutting_down));  // destroyed before it finished
      done = true;
    }
    cv.notify_all();
  }
  result<T> wait() {
    std::unique_lock lk(m);
    cv.wait(lk, [&] { return done; });
    return std::move(*r);
  }
  bool ready() {
    std::lock_guard lk(m);
    return done;
  }
};

template <class T>
struct host_box_guard {
  std::shared_ptr<host_box<T>> box;
  explicit host_box_guard(std::shared_ptr<host_box<T>> b) : box(std::move(b)) {}
  host_box_guard(host_box_guard&&) noexcept = default;
  ~host_box_guard() {
    if (box) box->finish();
  }
};

template <class T, class F, class... Args>
task<void> host_root_task(host_box_guard<T> guard, F f, Args... args) {
  guard.box->store(co_await try_await(f(args...)));
}

}  // namespace detail

// The host's handle to a root started by runtime::spawn. get() waits for the root and
// returns its value (throws weft::error on failure); try_get() returns it as a result.
// Both take the value: a second call reports errc::already_taken. Dropping the handle
// detaches the root, which runs to completion. A handle may outlive its runtime: it keeps
// what it reads alive (the host box, or on the cuda backend the executor's completion
// records), and reports the value of a root that finished, or errc::shutting_down for one
// that the runtime's shutdown destroyed.
// On a thread that runs any weft runtime's work (task code on a host worker, a host
// function on a reactor thread: detail::on_runtime_thread), of this runtime or another, an
// unfinished root is not waited for: errc::would_block, and the handle keeps the root (a
// later call, or is_ready(), may find it done). As tokio, which refuses to block inside
// any runtime: a worker that waits stops running its own runtime's tasks.
template <class T>
class host_handle {
 public:
  host_handle() = default;
  host_handle(host_handle&& o) noexcept { *this = std::move(o); }
  host_handle& operator=(host_handle&& o) noexcept {
    if (this != &o) {
      reset();
      box_ = std::move(o.box_);
      dev_ = std::move(o.dev_);
      rec_ = o.rec_;
      failed_ = o.failed_;
      o.rec_ = nullptr;
      o.failed_ = errc::already_taken;
    }
    return *this;
  }
  ~host_handle() { reset(); }

  // False when the root was not started; try_get() says why.
  bool valid() const noexcept { return box_ != nullptr || rec_ != nullptr; }
  bool is_ready() const noexcept {
    if (rec_ != nullptr) return dev_->ready(rec_);
    return box_ == nullptr || box_->ready();
  }

  result<T> try_get() {
    result<T> r = take();
    if (r || r.error() != errc::would_block) reset();
    return r;
  }
  T get() {
    result<T> r = try_get();
    if (!r) throw error(r.error(), std::string("weft: host_handle::get: ") + to_string(r.error()));
    if constexpr (!std::is_void_v<T>) return std::move(*r);
  }

 private:
  friend class runtime;
  result<T> take() {
    if (valid() && !is_ready() && detail::on_runtime_thread()) return unexpected(errc::would_block);
    if (rec_ != nullptr) {
      const errc e = dev_->wait(rec_);
      if (e != errc{}) return unexpected(e);
      if constexpr (std::is_void_v<T>) return result<void>{};
      else {
        T v;
        std::memcpy(static_cast<void*>(&v), rec_->value, sizeof(T));
        return v;
      }
    }
    if (box_ == nullptr) return unexpected(failed_);
    return box_->wait();
  }
  void reset() noexcept {
    if (rec_ != nullptr) dev_->release(rec_);
    box_.reset();  // the root runs on; it finishes into a box nobody reads
    dev_.reset();
    rec_ = nullptr;
    failed_ = errc::already_taken;
  }

  std::shared_ptr<detail::host_box<T>> box_;      // host backend
  std::shared_ptr<exec::device_runtime> dev_;     // cuda backend: outlives the runtime if need be
  exec::host_completion* rec_ = nullptr;          // (freed with the device_runtime, not at shutdown)
  errc failed_ = errc::invalid_argument;
};

class runtime {
 public:
  runtime();
  explicit runtime(const config& cfg);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // "cuda" or "host".
  const char* backend_name() const noexcept;

  // Creates fn(args...) on the backend, runs it to completion and returns its value.
  // fn is a WEFT_HOST_DEVICE callable returning task<T>; fn, args and T are trivially
  // copyable. Throws weft::error when the root fails (out_of_memory, shutting_down...).
  template <class F, class... Args>
  auto block_on(F&& fn, Args... args) {
    auto r = try_block_on(static_cast<F&&>(fn), args...);
    if (!r) throw error(r.error(), std::string("weft: block_on: ") + to_string(r.error()) + fault_suffix());
    if constexpr (!std::is_void_v<typename decltype(r)::value_type>) return std::move(*r);
  }

  // As block_on, with the root's failure as a value instead of an exception.
  // On a thread of any weft runtime (a task on a host worker, a host function) both refuse
  // with errc::would_block and create nothing: the wait could wait for itself (host_handle).
  template <class F, class... Args>
  auto try_block_on(F&& fn, Args... args) -> result<detail::root_value_t<F, Args...>> {
    if (detail::on_runtime_thread()) return unexpected(errc::would_block);
    return spawn(static_cast<F&&>(fn), args...).try_get();
  }

  // Starts fn(args...) on the backend and returns at once; the runtime keeps running
  // it while the host does other work. The handle's get() waits for the value.
  template <class F, class... Args>
  host_handle<detail::root_value_t<F, Args...>> spawn(F&& fn, Args... args) {
    return spawn_root(detail::no_home, static_cast<F&&>(fn), args...);
  }

  // As spawn, with the root pinned to worker `worker` (< workers()), as weft::spawn_pinned
  // pins a task spawned by a task: every resumption of it runs on that worker (a warp on
  // the cuda backend, a thread on the host backend). A root pinned to a parked warp
  // starts when that warp's nap ends (at most config::park_max_ns); while a warp is home
  // to pinned tasks that have not completed, its naps last about 2 us at most (worker 0,
  // which polls the host, naps at most 1 us), so their later
  // wake-ups reach it within that (device_worker::pinned_live). A worker out of range
  // (no_worker too): the handle reports errc::invalid_argument and the root is not
  // created; on the cuda backend the range is known once the kernel runs, so a first
  // call starts the kernel before it refuses the worker. A runtime that is shutting
  // down (or, on the cuda backend, faulted) reports that instead, on both backends,
  // whatever the worker but no_worker.
  template <class F, class... Args>
  host_handle<detail::root_value_t<F, Args...>> spawn_pinned(std::uint32_t worker, F&& fn, Args... args) {
    if (worker == detail::no_home) {  // would read as "any worker" below
      host_handle<detail::root_value_t<F, Args...>> h;
      h.failed_ = errc::invalid_argument;
      return h;
    }
    return spawn_root(worker, static_cast<F&&>(fn), args...);  // each backend checks the range
  }

  // Stops the workers and destroys every task still alive (the numbered steps are in
  // host_executor.hpp and device_runtime.hpp). Idempotent; the destructor calls it.
  // block_on afterwards returns errc::shutting_down. Called (or the destructor run) on
  // one of this runtime's own threads, a task or a host function, it would wait for
  // that thread to end: a contract violation, reported on stderr, then abort.
  void shutdown() noexcept;

  // Makes fn callable from tasks as host_call(id, ...), on a reactor thread (so fn
  // should be quick: a slow fn delays the other requests of its mailbox). Replaces an
  // earlier fn with the same id. Throws weft::error(invalid_argument) for an empty fn.
  void register_host_fn(std::uint32_t id, host_fn fn);
  io_stats reactor_stats() const noexcept;
  // Fault drill: reactor thread i stops serving; its requests fail with host_unavailable.
  void stop_reactor_thread(unsigned i) noexcept;

  // Workers: host threads, or worker warps on the cuda backend (0 there until the first
  // root has started the kernel, which sizes itself to the GPU then, and 0 again while a
  // start failed: each later submission tries again).
  unsigned workers() const noexcept;
  // Root tasks alive (running, queued or suspended).
  std::size_t live_tasks() const noexcept;
  // Frame-pool blocks in use or cached; after shutdown(), the frames still alive (0).
  // On the cuda backend known only after shutdown() (-1 before, and -1 after a shutdown
  // that met a fault: nothing is read from the GPU then).
  std::int64_t live_frame_blocks() const noexcept;
  // The cuda backend's executor (nullptr on the host backend): kernel report, stats.
  exec::device_runtime* device() noexcept;

 private:
  // spawn and spawn_pinned: `home` is the worker the root is pinned to, or detail::no_home.
  template <class F, class... Args>
  host_handle<detail::root_value_t<F, Args...>> spawn_root(std::uint32_t home, F&& fn, Args... args);
  exec::host_executor* host_executor_() noexcept;
  std::shared_ptr<exec::device_runtime> device_shared() noexcept;  // what a handle keeps
  void shutdown_steps() noexcept;
  std::string fault_suffix() const;
  struct impl;
  std::unique_ptr<impl> impl_;
};

template <class F, class... Args>
host_handle<detail::root_value_t<F, Args...>> runtime::spawn_root(std::uint32_t home, F&& fn, Args... args) {
  using task_t = std::invoke_result_t<F&, Args&...>;
  static_assert(detail::is_task_v<task_t>, "spawn/block_on: fn(args...) must return weft::task<T>");
  using T = typename task_t::value_type;
  static_assert(std::is_void_v<T> || std::is_trivially_copyable_v<T>,
                "spawn/block_on: the root task's value must be trivially copyable (it crosses to the host)");
  static_assert((std::is_trivially_copyable_v<Args> && ...), "spawn/block_on: arguments must be trivially copyable");
  // Checked in every build, so that code that builds for the host backend builds for the
  // GPU too (only the payload's packed size is checked in CUDA translation units alone).
  using F0 = std::remove_cvref_t<F>;
  static_assert(!std::is_pointer_v<F0> && !std::is_function_v<F0> && !std::is_member_pointer_v<F0>,
                "spawn/block_on: fn must be a WEFT_HOST_DEVICE callable object (a lambda, a functor): a function "
                "pointer is a host address, meaningless on the GPU");
  static_assert(std::is_trivially_copyable_v<F0>, "spawn/block_on: fn must be trivially copyable (it is copied to the GPU)");
  // (sizeof(void) is not C++: a GNU extension that warns, so void is measured as a char.)
  static_assert(sizeof(std::conditional_t<std::is_void_v<T>, char, T>) <= exec::completion_value_bytes,
                "spawn/block_on: the value is too large");
  host_handle<T> h;
  if (exec::device_runtime* dev = device()) {
#if WEFT_CUDA_COMPILE
    const exec::packed<F0, Args...> payload{fn, {args...}};
    static_assert(sizeof(payload) <= exec::submission_payload_bytes, "spawn/block_on: fn and args are too large");
    // Stopped, faulted, or another translation unit's kernel (device_program.hpp): said
    // before this unit's module is touched.
    if (const errc refused = dev->refusal(&exec::this_tu_program); refused != errc{}) {
      h.failed_ = refused;
      return h;
    }
    // Null when the look-up failed: submit says why (device_fault, shutting_down, or
    // backend_unavailable when the device has no such code).
    const exec::root_create_fn create =
        exec::create_fn_address<T, F0, Args...>(dev->cu_context(), dev->ordinal(), dev->side_stream());
    const errc e = dev->submit(&exec::this_tu_program, create, &payload, sizeof(payload), home, &h.rec_);
    if (e != errc{}) h.failed_ = e;
    else h.dev_ = device_shared();
#else
    h.failed_ = errc::backend_unavailable;  // this translation unit was not compiled as CUDA
#endif
    return h;
  }
  exec::host_executor* ex = host_executor_();
  if (ex == nullptr) {
    h.failed_ = errc::backend_unavailable;
    return h;
  }
  if (home != detail::no_home && home >= ex->worker_count()) {
    // A runtime that is shutting down says so first, as the cuda backend's submit does.
    h.failed_ = ex->stopping() ? errc::shutting_down : errc::invalid_argument;
    return h;
  }
  auto box = std::make_shared<detail::host_box<T>>();
  errc e;
  {
    exec::frame_scope frames(ex->frame_allocator(), nullptr);  // the root frame comes from the pool
    // Detached: the box, not a handle, carries the outcome.
    e = detail::spawn_detached_on(ex, detail::host_root_task<T>(detail::host_box_guard<T>(box), fn, args...), home);
  }
  if (e != errc{}) {
    h.failed_ = e;
    return h;
  }
  h.box_ = std::move(box);
  return h;
}

}  // namespace weft
