// weft/sleep.hpp - weft::sleep_for, a timed wait for tasks, and the backend's clock.
//
//   co_await weft::sleep_for(2'000'000);                      // at least 2 ms
//   weft::result<void> r = co_await weft::try_await(weft::sleep_for(ns));
//   std::uint64_t t = weft::now_ns();                         // the backend's monotonic clock
//
// The task parks and the backend's timer wakes it at or after now_ns() + ns (never
// earlier; how much later depends on the load). The worker runs other tasks meanwhile.
// sleep_for(0) does not suspend. Deadlines saturate instead of overflowing.
//
// Backends: the host executor has a timer thread (see host_executor.hpp); the device
// executor a timer heap polled by its warps (executor/weft/executor/device_timers.hpp).
// When the timer refuses the task, sleep_for fails it (or try_await reports it):
// errc::queue_full when the device's timer heap is full, errc::backend_unavailable for
// a task driven by run_inline, which has no scheduler to wake it.
//
// Protocol: await_suspend sets act = park, then asks detail::schedule_at to wake the
// task at the deadline. The timer may fire before await_suspend returns (the task is
// still RUNNING: SCHEDULED|RUNNING covers that), so nothing is read or written after the call
// except the task's own `act` and `failure` when the call refused (and then no wake
// will come). One registration, one wake: the task_header.hpp invariant.
#pragma once
#include <cstdint>

#include "weft/detail/run.hpp"
#include "weft/result.hpp"
#include "weft/task.hpp"

namespace weft {

// The backend's monotonic clock, in nanoseconds (host: steady_clock; device:
// %globaltimer). Only differences are meaningful.
WEFT_HOST_DEVICE inline std::uint64_t now_ns() noexcept { return detail::now_ns(); }

namespace detail {

// Catches=false: a refused timer fails the awaiting task; Catches=true (try_await):
// yields result<void> instead.
template <bool Catches>
struct sleep_awaiter {
  using weft_awaitable = void;
  std::uint64_t ns;
  errc failed{};

  WEFT_HOST_DEVICE bool await_ready() const noexcept { return ns == 0; }
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
    task_header* me = promise_of(h.address()).root;
    const std::uint64_t now = now_ns();
    const std::uint64_t deadline = ns > ~std::uint64_t{0} - now ? ~std::uint64_t{0} : now + ns;
    me->act = action::park;  // before schedule_at: the wake may come at once
    const errc why = schedule_at(me, deadline);
    if (why == errc{}) return true;
    if constexpr (Catches) {
      me->act = action::none;
      failed = why;
      return false;
    } else {
      fail_current(h, why);
      return true;
    }
  }
  WEFT_HOST_DEVICE auto await_resume() const noexcept {
    if constexpr (Catches) {
      if (failed != errc{}) return result<void>(unexpected(failed));
      return result<void>{};
    }
  }
  WEFT_HOST_DEVICE sleep_awaiter<true> as_result() const noexcept { return {ns}; }
};

}  // namespace detail

// Suspends the calling task for at least `ns` nanoseconds.
WEFT_HOST_DEVICE inline detail::sleep_awaiter<false> sleep_for(std::uint64_t ns) noexcept { return {ns}; }

}  // namespace weft
