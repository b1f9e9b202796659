// weft/event.hpp - weft::event, a manual-reset event awaitable from tasks.
//
//   weft::event ev;  co_await ev.wait();  ...  ev.set();
//
// set() wakes every waiting task and leaves the event set until reset(); wait() on a
// set event does not suspend. An event may live in a task's frame and be shared by
// reference with tasks that its owner outlives.
// set() may also be called from host code outside any task (on the host backend).
// Tasks still waiting when their runtime shuts down are destroyed by the shutdown, but
// the event's list still names them: after that shutdown the event may only be
// destroyed, not set (docs/design.md, Known limits).
//
// Design (one word): `state_` is either
//   0            not set, nobody waiting
//   1            set
//   other        not set; the address of the most recently registered waiter's
//                task_header, whose `link` continues the list (a Treiber stack).
// A waiter pushes its header with a CAS (release, so its `link` write is visible to
// the setter); set() swaps in 1 (acq_rel) and wakes the list it took. Each waiter is
// registered once and woken once, the invariant the task state word relies on.
// On the GPU a waiter alone in its warp first polls the word in place for up to ~20 us
// (device_hooks.hpp, await_word_in_place; from await_ready, before the suspend point),
// which spares a cross-warp hop its wake-up. A waiter alone in its warp that finds the
// event set only in await_suspend, while its warp owes its worker loop a trip (a look at
// other work or 1,024 in-place waits spent the trip's budget), yields once instead of
// going on, so that the warp runs its other duties first (device_hooks.hpp, Fairness).
#pragma once
#include <cstdint>

#include "weft/detail/run.hpp"
#include "weft/task.hpp"  // detail::fail_current

namespace weft {

class event {
 public:
  WEFT_HOST_DEVICE explicit event(bool initially_set = false) noexcept : state_(initially_set ? set_value : 0) {}
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  WEFT_HOST_DEVICE bool is_set() const noexcept {
    return detail::device_atomic<std::uint64_t>(const_cast<std::uint64_t&>(state_)).load(detail::mo_acquire) == set_value;
  }

  // Sets the event and wakes every waiter.
  WEFT_HOST_DEVICE void set() noexcept {
    std::uint64_t old = word().exchange(set_value, detail::mo_acq_rel);
    if (old == set_value) return;
    auto* w = reinterpret_cast<detail::task_header*>(old);
    while (w != nullptr) {
      detail::task_header* next = w->link;  // read before the wake may reuse `link`
      detail::wake(w);
      w = next;
    }
  }

  // Clears a set event; no effect on an unset one (its waiters stay registered).
  // set() wakes the tasks registered when it runs; a task still on its way into wait()
  // (on the GPU, one polling the word in place for up to ~20 us) sees only the state
  // it finds: set then reset before it looks, it waits for the next set(). So set()
  // followed by reset() is no broadcast to every task inside wait(); a reset belongs
  // after the waiters have been woken (a count, a second event, or a channel says so).
  WEFT_HOST_DEVICE void reset() noexcept {
    std::uint64_t expected = set_value;
    word().compare_exchange_strong(expected, 0, detail::mo_acq_rel, detail::mo_relaxed);
  }

  struct wait_awaiter {
    using weft_awaitable = void;
    event* ev;
    WEFT_HOST_DEVICE bool await_ready() const noexcept {
#if WEFT_DEVICE_PASS
      // A task alone in its warp polls the word for a while first (device_hooks.hpp,
      // await_word_in_place): set meanwhile, it goes on without suspending. Here rather
      // than in await_suspend: measured on an H200, the unpinned ping_pong's p50 fell
      // from 1.28-1.34 to 1.18 us and nothing else moved (twenty-second session). Why is
      // not known: in both forms the task reloads its locals from the frame after it.
      // A set event here goes on even while the warp owes its loop a trip: a build that
      // yielded here too (device_owes_trip) ran spawn_many 4 % slower on an H200
      // (thirty-fourth session); the yield is await_suspend's alone.
      return ev->is_set() || detail::device_await_word_in_place(ev->state_, set_value);
#else
      return ev->is_set();
#endif
    }
    template <class P>
    WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) const noexcept {
      detail::task_header* me = detail::promise_of(h.address()).root;
      auto w = ev->word();
      std::uint64_t old = w.load(detail::mo_acquire);
      do {
        if (old == set_value) {  // set meanwhile: do not suspend, unless the warp owes its loop a trip
#if WEFT_DEVICE_PASS
          if (detail::device_owes_trip()) {
            me->act = detail::action::yield;  // device_hooks.hpp, Fairness: the warp goes round first
            return true;
          }
#endif
          return false;
        }
        if (detail::parks_nowhere(me)) return detail::fail_current(h, errc::would_block), true;  // run_inline
        me->link = reinterpret_cast<detail::task_header*>(old);
      } while (!w.compare_exchange_weak(old, reinterpret_cast<std::uint64_t>(me), detail::mo_release,
                                        detail::mo_acquire));
      me->act = detail::action::park;
      return true;
    }
    WEFT_HOST_DEVICE void await_resume() const noexcept {}
  };

  // Waits until the event is set.
  WEFT_HOST_DEVICE wait_awaiter wait() noexcept { return {this}; }

 private:
  static constexpr std::uint64_t set_value = 1;
  WEFT_HOST_DEVICE detail::device_atomic<std::uint64_t> word() noexcept {
    return detail::device_atomic<std::uint64_t>(state_);
  }
  std::uint64_t state_;
};

}  // namespace weft
