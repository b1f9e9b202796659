// weft/when_any.hpp - run several tasks concurrently and continue with the first to finish.
//
//   auto [index, value] = co_await weft::when_any(fetch(a), fetch(b), fetch(c));
//   weft::result<weft::when_any_result<int>> r = co_await weft::try_await(weft::when_any(...));
//
// Every task must have the same value type T (a std::variant is not usable on the
// device); the result is when_any_result<T>{index, value}: the argument position of the
// first task to complete and its value. For void tasks the value is a weft::unit.
// Each task is spawned, as in when_all, so they run in parallel on the workers.
//
// The first task to *complete* wins, with a value or with an error. When the winner
// failed, its error fails the awaiting task (or is the error of try_await(when_any(..))),
// exactly like a failed co_await. A task that could not be allocated or spawned counts
// as a task that failed at once, with that error.
//
// The other tasks are NOT cancelled (weft has no cancellation yet): they run to
// completion detached, and their values are dropped. Whatever they reference must
// outlive them, not just the when_any. Nothing leaks and nothing touches freed memory:
// the shared state is reference-counted (see below) and each task frees its own frame.
//
// Design
//   any_state  allocated from the frame allocator (errc::out_of_memory if it cannot be),
//              holding: refs (one per runner plus one for the when_any frame), claimed
//              (0 until a winner), the winner's index and outcome, and an event.
//   runner     one spawned, detached root per task: awaits it through try_await, then
//              offer()s the outcome. The first offer() to swap claimed 0 -> 1 stores
//              index and outcome and sets the event; later ones drop theirs.
//   when_any   waits on the event, copies the winner out, and returns.
//   Each reference is held by an object in the runner's / when_any's frame (any_ref), so
//   it is dropped when that frame is destroyed: at completion, or when shutdown destroys
//   a task still suspended. A runner takes its reference as a parameter, so its frame
//   holds it from creation: a runner destroyed before it ever ran (shutdown) drops it
//   too. (A local in the runner's body, until the thirty-seventh session, was never
//   made then, and the state leaked; found by review.) The last drop destroys and frees
//   the state.
// Memory orders: claimed's exchange is acq_rel (one winner). The winner's writes reach
// the waiter through event::set (acq_rel) and the waiter's wake / is_set (acquire). The
// refcount decrement is acq_rel, so every use of the state happens-before its free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/event.hpp"
#include "weft/when_all.hpp"

namespace weft {

template <class T>
struct when_any_result {
  std::size_t index;  // the argument position of the first task to complete
  T value;            // its value (weft::unit for void tasks)
};

namespace detail {

template <class U>
struct any_state {
  std::uint32_t refs;
  std::uint32_t claimed = 0;
  std::size_t index = 0;
  value_slot<result<U>> outcome;
  event done;

  WEFT_HOST_DEVICE explicit any_state(std::uint32_t r) noexcept : refs(r) {}

  WEFT_HOST_DEVICE static any_state* create(std::uint32_t refs) noexcept {
    void* p = object_allocate(sizeof(any_state));
    return p ? ::new (p) any_state(refs) : nullptr;
  }
  // Records the outcome of task i if it is the first; sets `done` then.
  WEFT_HOST_DEVICE void offer(std::size_t i, result<U>&& r) {
    if (device_atomic<std::uint32_t>(claimed).exchange(1, mo_acq_rel) != 0) return;
    index = i;
    outcome.emplace(std::move(r));
    done.set();
  }
  WEFT_HOST_DEVICE void release() noexcept {
    if (device_atomic<std::uint32_t>(refs).fetch_sub(1, mo_acq_rel) != 1) return;
    this->~any_state();
    object_deallocate(this, sizeof(any_state));
  }
};

// One reference to an any_state, dropped when the frame holding it is destroyed. Passed
// by value into a runner (moved into its frame): WEFT_DEVICE_OWNER_ABI, as for task<T>,
// so that clang's device ABI does not destroy a bitwise copy's reference twice.
template <class U>
struct WEFT_DEVICE_OWNER_ABI any_ref {
  any_state<U>* s;
  WEFT_HOST_DEVICE explicit any_ref(any_state<U>* st) noexcept : s(st) {}
  WEFT_HOST_DEVICE any_ref(any_ref&& o) noexcept : s(o.s) { o.s = nullptr; }
  any_ref(const any_ref&) = delete;
  any_ref& operator=(const any_ref&) = delete;
  WEFT_HOST_DEVICE ~any_ref() {
    if (s != nullptr) s->release();
  }
};

// The root spawned for task i: runs it and offers its outcome.
template <class T>
WEFT_HOST_DEVICE task<void> any_runner(task<T> t, any_ref<unit_if_void_t<T>> ref, std::size_t i) {
  ref.s->offer(i, as_unit_result<T>(co_await try_await(t)));
}

// Spawns the runner of task i, detached. A runner that cannot start has dropped its
// reference already (with its frame, or with the argument when no frame was made: the
// when_any frame's own reference keeps the state alive here), and its task fails at
// once with the reason.
template <class T>
WEFT_HOST_DEVICE void any_start(any_state<unit_if_void_t<T>>* s, std::size_t i, task<T>&& t) {
  join_handle<void> h = spawn(any_runner(std::move(t), any_ref<unit_if_void_t<T>>(s), i));
  if (h.valid()) return;  // dropping the handle detaches the runner
  s->offer(i, unexpected(h.error()));
}

template <class T, class... Ts>
WEFT_HOST_DEVICE task<when_any_result<unit_if_void_t<T>>> when_any_impl(task<T> t0, task<Ts>... ts) {
  using U = unit_if_void_t<T>;
  constexpr std::uint32_t n = 1 + sizeof...(Ts);
  any_state<U>* s = any_state<U>::create(n + 1);
  if (s == nullptr) co_await fail_awaiter{errc::out_of_memory};
  any_ref<U> mine(s);
  std::size_t i = 0;
  any_start(s, i++, std::move(t0));
  (any_start(s, i++, std::move(ts)), ...);
  co_await s->done.wait();
  result<U>& r = s->outcome.get();
  if (!r) co_await fail_awaiter{r.error()};
  co_return when_any_result<U>{s->index, std::move(*r)};
}

}  // namespace detail

// Runs every task concurrently; completes with the first to complete (see above).
template <class T, class... Ts>
WEFT_HOST_DEVICE task<when_any_result<detail::unit_if_void_t<T>>> when_any(task<T> t0, task<Ts>... ts) {
  static_assert((std::is_same_v<T, Ts> && ...),
                "when_any: every task must have the same value type (a variant is not usable on the device)");
  return detail::when_any_impl(std::move(t0), std::move(ts)...);
}

}  // namespace weft
