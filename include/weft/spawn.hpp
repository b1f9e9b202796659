// weft/spawn.hpp - spawn, join_handle and yield.
//
//   weft::join_handle<int> h = weft::spawn(add(3, n));  // runs concurrently, on any worker
//   int y = co_await std::move(h);                       // join (fails the joiner on error)
//   auto r = co_await weft::try_await(std::move(h2));    // join, the error as a value
//   co_await weft::yield();                              // let other ready tasks run
//   auto p = weft::spawn_pinned(w, serve(q));            // runs only on worker w
//
// Dropping a join_handle detaches the task: it runs to completion and frees itself.
// spawn never fails silently: a task that could not be allocated or accepted gives a
// handle whose join reports why (out_of_memory, no_runtime, shutting_down).
#pragma once
#include "weft/detail/run.hpp"
#include "weft/task.hpp"

namespace weft {

template <class T>
class join_handle;

namespace detail {

// Awaiter of a join. Parks the joiner until the root completes (see the AWAITER bit).
template <class T, bool Catches>
struct join_awaiter {
  using weft_awaitable = void;
  task_header* root;
  errc failed;
  join_handle<T>* owner;  // the awaited handle: it outlives the await (a temporary lives
                          // to the end of the full co_await expression)
  std::uint32_t seen = 0;  // the state word as await_ready read it
  mutable errc refused{};  // not joined: run_inline's task would have parked (would_block,
                           // task_header.hpp), or another task is parked in a join of it
                           // (already_taken)

  WEFT_HOST_DEVICE bool await_ready() noexcept {
    if (root == nullptr) return Catches;
    const std::uint32_t s = seen = state_of(root).load(mo_acquire);
    return (s & task_state::completed) && (Catches || promise_of(frame_of(root)).error == errc{});
  }
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) const noexcept {
    if (root == nullptr) return fail_current(h, failed), true;
    task_header* me = promise_of(h.address()).root;
    if (parks_nowhere(me) && !(seen & task_state::completed)) {  // run_inline: no waiting
      if constexpr (Catches) return (refused = errc::would_block), false;  // the handle keeps the task
      return fail_current(h, errc::would_block), true;
    }
    // A second joiner of one handle while the first is parked: the first keeps its place.
    // (Two first joins of one handle at the same instant are a contract breach this does
    // not catch: the later write of `joiner` wins.)
    if ((seen & task_state::awaiter) && !(seen & task_state::completed)) {
      if constexpr (Catches) return (refused = errc::already_taken), false;
      return fail_current(h, errc::already_taken), true;
    }
    root->joiner = me;  // published by the CAS below
    auto st = state_of(root);
    // Starts from await_ready's acquire load, not a second one (an L2 round trip, and on
    // the GPU an L1 invalidation): if the task completed since, the CAS fails and its
    // failure load (acquire) is what makes the task's writes visible to the joiner.
    std::uint32_t s = seen;
    const std::uint32_t bits = task_state::awaiter | (Catches ? task_state::awaiter_catches : 0u);
    while (!(s & task_state::completed)) {
      if (st.compare_exchange_weak(s, s | bits, mo_acq_rel, mo_acquire)) {
        me->act = action::park;
        return true;
      }
    }
    // Completed meanwhile (acquire above): resume now, or unwind on an uncaught error.
    const errc e = promise_of(frame_of(root)).error;
    if (e != errc{} && !Catches) return fail_current(h, e), true;
    return false;
  }
  // Resuming here, the joiner has seen the task completed (await_ready's or the CAS's
  // acquire, or the wake-up that completion sent). complete_root touches the frame after
  // its RMW only to read `joiner`, and only before it wakes a parked joiner, so the frame
  // is the handle's alone from now on: its drop frees it without the RMW that
  // release_handle would make (one L2 round trip less per join).
  WEFT_HOST_DEVICE auto await_resume() const {
    if constexpr (Catches) {
      if (root == nullptr) return result<T>(unexpected(failed));
      if (refused != errc{}) return result<T>(unexpected(refused));
      owner->owns_frame_ = true;
      return outcome_of<T>(promise_base_of<task_promise<T>>(frame_of(root)));
    } else {
      owner->owns_frame_ = true;
      return promise_base_of<task_promise<T>>(frame_of(root)).take();
    }
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] WEFT_DEVICE_OWNER_ABI join_handle {
 public:
  using value_type = T;
  using weft_awaitable = void;

  WEFT_HOST_DEVICE join_handle() noexcept : root_(nullptr), failed_(errc::invalid_argument) {}
  WEFT_HOST_DEVICE explicit join_handle(errc failed) noexcept : root_(nullptr), failed_(failed) {}
  WEFT_HOST_DEVICE explicit join_handle(detail::task_header* root) noexcept : root_(root), failed_{} {}
  // A moved-from handle is invalid and reports errc::already_taken.
  WEFT_HOST_DEVICE join_handle(join_handle&& o) noexcept
      : root_(o.root_), failed_(o.failed_), owns_frame_(o.owns_frame_) {
    o.mark_taken();
  }
  WEFT_HOST_DEVICE join_handle& operator=(join_handle&& o) noexcept {
    if (this != &o) {
      detach();
      root_ = o.root_;
      failed_ = o.failed_;
      owns_frame_ = o.owns_frame_;
      o.mark_taken();
    }
    return *this;
  }
  join_handle(const join_handle&) = delete;
  join_handle& operator=(const join_handle&) = delete;
  WEFT_HOST_DEVICE ~join_handle() { detach(); }

  // False when spawn did not start the task; error() says why.
  WEFT_HOST_DEVICE bool valid() const noexcept { return root_ != nullptr; }
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return valid(); }
  WEFT_HOST_DEVICE errc error() const noexcept { return root_ ? errc{} : failed_; }
  // True once the task has finished (with a value or an error).
  WEFT_HOST_DEVICE bool is_finished() const noexcept {
    return root_ && (owns_frame_ || (detail::state_of(root_).load(detail::mo_acquire) & detail::task_state::completed));
  }

  // Lets the task run on by itself; it frees its frame when it completes. (After a join
  // the handle alone owns the finished frame, and frees it here: join_awaiter::await_resume.)
  WEFT_HOST_DEVICE void detach() noexcept {
    if (root_ && owns_frame_) detail::destroy_root(root_);
    else if (root_) detail::release_handle(root_);
    mark_taken();
  }

  // Join: a handle is awaitable once (std::move it, or await the lvalue once). A second
  // join of the same handle fails with errc::already_taken (its value was taken), as
  // does a join while another task is already parked in a join of it.
  WEFT_HOST_DEVICE detail::join_awaiter<T, false> operator co_await() & noexcept { return awaiter<false>(); }
  WEFT_HOST_DEVICE detail::join_awaiter<T, false> operator co_await() && noexcept { return awaiter<false>(); }
  WEFT_HOST_DEVICE detail::join_awaiter<T, true> as_result() noexcept { return awaiter<true>(); }

  WEFT_HOST_DEVICE detail::task_header* native() const noexcept { return root_; }
  // Forgets the task without releasing it: only for a root that shutdown destroyed.
  WEFT_HOST_DEVICE void abandon() noexcept {
    root_ = nullptr;
    failed_ = errc::shutting_down;
    owns_frame_ = false;
  }

 private:
  template <class, bool>
  friend struct detail::join_awaiter;
  template <bool Catches>
  WEFT_HOST_DEVICE detail::join_awaiter<T, Catches> awaiter() noexcept {
    if (owns_frame_) return {nullptr, errc::already_taken, this};  // joined before: its value is gone
    return {root_, failed_, this};
  }
  WEFT_HOST_DEVICE void mark_taken() noexcept {
    root_ = nullptr;
    failed_ = errc::already_taken;
    owns_frame_ = false;
  }
  detail::task_header* root_;
  errc failed_;
  bool owns_frame_ = false;  // joined: the task completed and nothing else touches its frame
};

namespace detail {

// Turns a task's frame into a root on `sched`, with a handle's reference (`named`) or
// none (a detached root: it frees itself when it completes). On failure the frame is
// destroyed and the error returned; *root is set on success. A task that already ran
// (awaited, or finished) is refused with already_taken and stays with its task object.
// `home`: the worker it is pinned to (no_home: any; spawn_pinned checked it).
template <class T>
WEFT_HOST_DEVICE errc start_root(void* sched, task<T>&& t, std::uint32_t home, bool named, task_header** root) noexcept {
  if (!t.valid()) return t.error();
  if (t.started()) return errc::already_taken;
  if (sched == nullptr) return errc::no_runtime;
  void* frame = t.release();
  promise_base& p = promise_of(frame);
  p.root = &p;
  p.continuation = nullptr;
  p.current = frame;
  p.sched = sched;
  p.home = home;
  p.state = task_state::scheduled | (named ? task_state::handle : 0u) | (home != no_home ? task_state::pinned : 0u);
  *root = &p;  // before the submission: a detached root may be gone once it returns
  const errc e = submit_root(sched, &p);
  if (e != errc{}) destroy_frame(frame);
  return e;
}
template <class T>
WEFT_HOST_DEVICE join_handle<T> spawn_on(void* sched, task<T>&& t, std::uint32_t home = no_home) noexcept {
  task_header* root = nullptr;
  const errc e = start_root(sched, std::move(t), home, true, &root);
  return e == errc{} ? join_handle<T>(root) : join_handle<T>(e);
}
// A root nobody joins (runtime::spawn's wrapper, whose outcome travels another way). With
// no handle there is nothing to drop after the submission, which a shutdown on another
// thread could race (step 5 destroying the root between the two).
template <class T>
WEFT_HOST_DEVICE errc spawn_detached_on(void* sched, task<T>&& t, std::uint32_t home = no_home) noexcept {
  task_header* root = nullptr;
  return start_root(sched, std::move(t), home, false, &root);
}

struct yield_awaiter {
  using weft_awaitable = void;
  WEFT_HOST_DEVICE bool await_ready() const noexcept { return false; }
  template <class P>
  WEFT_HOST_DEVICE void await_suspend(std::coroutine_handle<P> h) const noexcept {
    promise_of(h.address()).root->act = action::yield;
  }
  WEFT_HOST_DEVICE void await_resume() const noexcept {}
};

}  // namespace detail

// Starts `t` at once on the executor of the calling task; returns its join handle.
template <class T>
WEFT_HOST_DEVICE join_handle<T> spawn(task<T>&& t) noexcept {
  return detail::spawn_on(detail::current_scheduler(), std::move(t));
}

// Workers. Each worker of the runtime (a GPU warp on the cuda backend, a thread on the
// host backend) has an index in [0, worker_count()). Outside a runtime's worker,
// this_worker() is no_worker and worker_count() is 0.
inline constexpr std::uint32_t no_worker = detail::no_home;
WEFT_HOST_DEVICE inline std::uint32_t this_worker() noexcept { return detail::current_worker_index(); }
WEFT_HOST_DEVICE inline std::uint32_t worker_count() noexcept {
  return detail::worker_count_of(detail::current_scheduler());
}

// Starts `t` pinned to worker `worker`: every resumption of it runs there, whoever
// wakes it (an event set on another worker, a join, a timer, a host answer). A wake-up
// sends it to the home worker's inbox; a worker that finds it in its own queues anyway
// (a thief that took it after a yield, a host answer delivered elsewhere) hands it on
// there, one detour more than an unpinned task would take. On the GPU the home warp
// looks at its inbox whenever it runs dry, every 16th trip while busy, and on each nap
// while parked: a warp that is home to pinned tasks not yet completed naps about 2 us at
// most (worker 0, which polls the host, 1 us), so a wake-up reaches a
// parked home within that (the first task pinned to a warp that parked before it had any
// waits for that nap to end, at most config::park_max_ns); on the host the home thread
// looks after its own queue, first every 61st pick, and is woken from its park for it.
// worker >= worker_count(): the handle reports errc::invalid_argument (the task is
// destroyed unstarted); otherwise as spawn().
template <class T>
WEFT_HOST_DEVICE join_handle<T> spawn_pinned(std::uint32_t worker, task<T>&& t) noexcept {
  void* sched = detail::current_scheduler();
  // (A task that already ran is left to start_root, which refuses it and leaves it be.)
  if (t.valid() && !t.started() && sched != nullptr && worker >= detail::worker_count_of(sched)) {  // no_worker too
    detail::destroy_frame(t.release());
    return join_handle<T>(errc::invalid_argument);
  }
  return detail::spawn_on(sched, std::move(t), worker);
}

// Requeues the calling task behind the tasks that are ready now.
WEFT_HOST_DEVICE inline detail::yield_awaiter yield() noexcept { return {}; }

}  // namespace weft
