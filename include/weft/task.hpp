// weft/task.hpp - weft::task<T>: a lazy, move-only coroutine that runs on either backend.
//
//   WEFT_HOST_DEVICE weft::task<int> add(int a, int b) { co_return a + b; }
//   int x = co_await add(1, 2);                              // T, or the awaiting task fails
//   weft::result<int> r = co_await weft::try_await(add(1, 2)); // the error as a value
//
// Lazy: creating a task allocates its frame and runs nothing; awaiting it runs it on
// the awaiting task's worker, spawning it (spawn.hpp) runs it concurrently.
//
// Errors. Task code has no exceptions. Errors are values (task<result<T>>), plus one
// implicit path for failures a task cannot express itself: when a task's frame
// cannot be allocated (errc::out_of_memory) or a joined task failed, a plain
// `co_await` cannot produce a T. The awaiting task then *fails*: it stops at that
// await and the error propagates to its own awaiter, frame by frame, until a frame
// that awaited through try_await receives it as a result (or the root fails, and its
// join handle / block_on reports it). Destructors run and nothing leaks. This mirrors
// `?` in Rust. The frames a failure passes are destroyed innermost first as it passes
// them, as an exception unwinds C++ frames; the frame whose awaiter catches the error is
// kept for that awaiter to read, and destroyed by its task object (task_header.hpp,
// "Destruction order of an await chain").
#pragma once
#include <new>
#include <type_traits>
#include <utility>

#include "weft/config.hpp"
#include "weft/detail/backend_hooks.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/result.hpp"

namespace weft {

template <class T = void>
class task;

// The value a void task contributes to when_all's tuple.
struct unit {
  WEFT_HOST_DEVICE constexpr bool operator==(const unit&) const noexcept { return true; }
};

namespace detail {

template <class T>
using unit_if_void_t = std::conditional_t<std::is_void_v<T>, unit, T>;

// Final suspend: hand control back to the continuation through the trampoline.
struct final_awaiter {
  using weft_awaitable = void;
  WEFT_HOST_DEVICE bool await_ready() const noexcept { return false; }
  template <class P>
  WEFT_HOST_DEVICE void await_suspend(std::coroutine_handle<P> h) const noexcept {
    promise_base& p = promise_of(h.address());
    task_header* r = p.root;
    if (p.continuation != nullptr) {
      r->current = p.continuation;
      r->act = action::run_current;
    } else {
      r->act = action::complete;
    }
  }
  WEFT_HOST_DEVICE void await_resume() const noexcept {}
};

// Frame allocation shared by every weft promise: the executor's pool, never malloc
// per frame. A null return makes the compiler call
// get_return_object_on_allocation_failure, which yields a failed task.
struct frame_alloc_mixin {
  WEFT_HOST_DEVICE static void* operator new(std::size_t n) noexcept { return frame_allocate(n); }
  WEFT_HOST_DEVICE static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
};

template <class T>
struct value_slot {
  alignas(T) unsigned char bytes[sizeof(T)];
  bool full = false;
  WEFT_HOST_DEVICE T& get() noexcept { return *std::launder(reinterpret_cast<T*>(bytes)); }
  template <class U>
  WEFT_HOST_DEVICE void emplace(U&& v) {
    ::new (static_cast<void*>(bytes)) T(std::forward<U>(v));
    full = true;
  }
  WEFT_HOST_DEVICE ~value_slot() {
    if (full) get().~T();
  }
};

template <class T>
struct task_promise : promise_base, frame_alloc_mixin {
  value_slot<T> value;

  WEFT_HOST_DEVICE task<T> get_return_object() noexcept;
  WEFT_HOST_DEVICE static task<T> get_return_object_on_allocation_failure() noexcept;
  WEFT_HOST_DEVICE std::suspend_always initial_suspend() const noexcept { return {}; }
  WEFT_HOST_DEVICE final_awaiter final_suspend() const noexcept { return {}; }
  template <class U = T>
    requires std::is_convertible_v<U&&, T>
  WEFT_HOST_DEVICE void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  WEFT_HOST_DEVICE void unhandled_exception() noexcept { contract_violation("exception escaped a weft task"); }
  WEFT_HOST_DEVICE T take() { return std::move(value.get()); }
};

template <>
struct task_promise<void> : promise_base, frame_alloc_mixin {
  WEFT_HOST_DEVICE task<void> get_return_object() noexcept;
  WEFT_HOST_DEVICE static task<void> get_return_object_on_allocation_failure() noexcept;
  WEFT_HOST_DEVICE std::suspend_always initial_suspend() const noexcept { return {}; }
  WEFT_HOST_DEVICE final_awaiter final_suspend() const noexcept { return {}; }
  WEFT_HOST_DEVICE void return_void() noexcept {}
  WEFT_HOST_DEVICE void unhandled_exception() noexcept { contract_violation("exception escaped a weft task"); }
  WEFT_HOST_DEVICE void take() noexcept {}
};

// Wraps a task's outcome as result<T> (void -> result<void>).
template <class T, class P>
WEFT_HOST_DEVICE result<T> outcome_of(P& p) {
  if (p.error != errc{}) return unexpected(p.error);
  if constexpr (std::is_void_v<T>) return result<void>{};
  else return result<T>(p.take());
}

// Enters a child chain through the trampoline: the child runs next, then returns to
// the awaiting frame via final_awaiter. `owner` is the awaited task object's frame
// pointer (task_header.hpp, "Destruction order of an await chain").
template <class P>
WEFT_HOST_DEVICE inline void enter_child(std::coroutine_handle<P> parent, void* child_frame, void** owner,
                                         bool catches) noexcept {
  static_assert(std::is_base_of_v<promise_base, P>, "weft awaitables may only be awaited from weft tasks");
  task_header* r = promise_of(parent.address()).root;
  promise_base& child = promise_of(child_frame);
  child.continuation = parent.address();
  child.root = r;
  child.owner_slot = owner;
  child.parent_catches = catches;
  r->current = child_frame;
  r->act = action::run_current;
}

// Makes the awaiting chain fail with `e` (see "Errors" above).
template <class P>
WEFT_HOST_DEVICE inline void fail_current(std::coroutine_handle<P> h, errc e) noexcept {
  task_header* r = promise_of(h.address()).root;
  r->failure = e;
  r->act = action::unwind;
}

// Awaiter of a task. Catches=false: yields T; Catches=true (try_await): yields result<T>.
// A task awaited a second time (or a finished one) fails the await with
// errc::already_taken and is not run again.
template <class T, bool Catches>
struct task_awaiter {
  using weft_awaitable = void;
  void* frame;
  errc failed;
  // The task object the awaiter came from, which must not move until the await is over (an
  // awaiter kept across a move of its task would mark the moved-from one). Its frame_ is
  // what enter_child records as the frame's owner; its entered_ says the frame ran.
  task<T>* owner;

  WEFT_HOST_DEVICE bool await_ready() noexcept {
    if (frame != nullptr && owner->entered_) {
      frame = nullptr;
      failed = errc::already_taken;
    }
    return frame == nullptr && Catches;
  }
  template <class P>
  WEFT_HOST_DEVICE void await_suspend(std::coroutine_handle<P> h) const noexcept {
    if (frame == nullptr) return fail_current(h, failed);
    owner->entered_ = true;
    enter_child(h, frame, &owner->frame_, Catches);
  }
  WEFT_HOST_DEVICE auto await_resume() const {
    if constexpr (Catches) {
      if (frame == nullptr) return result<T>(unexpected(failed));
      return outcome_of<T>(promise_base_of<task_promise<T>>(frame));
    } else {
      return promise_base_of<task_promise<T>>(frame).take();
    }
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] WEFT_DEVICE_OWNER_ABI task {
 public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;
  using weft_awaitable = void;

  WEFT_HOST_DEVICE task() noexcept : frame_(nullptr), failed_(errc::invalid_argument) {}
  // A moved-from task is invalid and reports errc::already_taken, like a released one.
  WEFT_HOST_DEVICE task(task&& o) noexcept : frame_(o.frame_), failed_(o.failed_), entered_(o.entered_) {
    o.mark_taken();
  }
  WEFT_HOST_DEVICE task& operator=(task&& o) noexcept {
    if (this != &o) {
      reset();
      frame_ = o.frame_;
      failed_ = o.failed_;
      entered_ = o.entered_;
      o.mark_taken();
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  WEFT_HOST_DEVICE ~task() { reset(); }

  // False when the frame could not be allocated (or the task was moved from).
  WEFT_HOST_DEVICE bool valid() const noexcept { return frame_ != nullptr; }
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return valid(); }
  // True once an await of this task object has entered its frame: it cannot run again,
  // and awaiting, spawning or running it again gives errc::already_taken. (A spawned or
  // run_inline-driven task gives its frame up first: the object is then not valid.)
  WEFT_HOST_DEVICE bool started() const noexcept { return frame_ != nullptr && entered_; }
  // Why the task is not valid (errc::out_of_memory after a failed frame allocation).
  WEFT_HOST_DEVICE errc error() const noexcept { return frame_ ? errc{} : failed_; }

  WEFT_HOST_DEVICE detail::task_awaiter<T, false> operator co_await() & noexcept { return {frame_, failed_, this}; }
  WEFT_HOST_DEVICE detail::task_awaiter<T, false> operator co_await() && noexcept { return {frame_, failed_, this}; }
  WEFT_HOST_DEVICE detail::task_awaiter<T, true> as_result() noexcept { return {frame_, failed_, this}; }

  // Gives up ownership of the frame (spawn uses this to make it a root).
  WEFT_HOST_DEVICE void* release() noexcept {
    void* f = frame_;
    mark_taken();
    return f;
  }

 private:
  friend struct detail::task_promise<T>;
  template <class, bool>
  friend struct detail::task_awaiter;
  WEFT_HOST_DEVICE explicit task(void* frame) noexcept : frame_(frame), failed_{} {}
  WEFT_HOST_DEVICE explicit task(errc e) noexcept : frame_(nullptr), failed_(e) {}
  WEFT_HOST_DEVICE void mark_taken() noexcept {
    frame_ = nullptr;
    failed_ = errc::already_taken;
    entered_ = false;
  }
  WEFT_HOST_DEVICE void reset() noexcept {
    if (frame_) detail::destroy_frame(frame_);
    frame_ = nullptr;
  }

  void* frame_;
  errc failed_;
  // The frame ran (an await entered it: task_awaiter). Only an await enters a frame its task
  // object keeps (spawn and run_inline release it first), so this says what the frame's
  // `root` says, without a load from the frame: the frame was just written, and a spawn or
  // an await of a new task otherwise read it back from L2 (forty-third session).
  bool entered_ = false;
};
// An awaiter lives in its awaiting frame for the whole await: three words (frame, error,
// task), where it held a pointer to each of the task's two fields until the forty-fourth
// session.
static_assert(sizeof(detail::task_awaiter<int, false>) == 3 * sizeof(void*), "task_awaiter grew");

namespace detail {
template <class T>
WEFT_HOST_DEVICE task<T> task_promise<T>::get_return_object() noexcept {
  return task<T>(coro_handle::from_promise(*this).frame);
}
template <class T>
WEFT_HOST_DEVICE task<T> task_promise<T>::get_return_object_on_allocation_failure() noexcept {
  return task<T>(errc::out_of_memory);
}
WEFT_HOST_DEVICE inline task<void> task_promise<void>::get_return_object() noexcept {
  return task<void>(coro_handle::from_promise(*this).frame);
}
WEFT_HOST_DEVICE inline task<void> task_promise<void>::get_return_object_on_allocation_failure() noexcept {
  return task<void>(errc::out_of_memory);
}
}  // namespace detail

// Awaits `a` (a task, join handle or when_all) and returns its outcome as a
// result instead of failing the awaiting task: co_await weft::try_await(child()).
template <class A>
WEFT_HOST_DEVICE auto try_await(A&& a) noexcept -> decltype(a.as_result()) {
  return a.as_result();
}

}  // namespace weft
