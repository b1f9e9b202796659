// weft/run_inline.hpp - drive one task to completion on the calling thread or lane.
//
// run_inline runs a task, and everything it awaits, through the same trampoline as
// the executors, but without a scheduler: a yield continues at once, and nothing can
// queue the task again once it waits. So whatever would make it wait refuses with
// errc::would_block (detail::parks_nowhere) and registers nothing: a join of a task not
// finished yet, an event not set, a semaphore or mutex with no free permit, a channel
// full (send) or empty (recv), a host request (backend_unavailable with no runtime),
// sleep_for (backend_unavailable). The error fails the task as any other does (try_await
// and the channel's and host requests' results take it as a value); run_inline returns
// it. What needs no waiting goes on. It exists for device kernels that drive tasks lane
// by lane, and for tests of the trampoline; applications use runtime::block_on.
#pragma once
#include "weft/detail/run.hpp"
#include "weft/task.hpp"

namespace weft {

template <class T>
WEFT_HOST_DEVICE result<T> run_inline(task<T>&& t) noexcept {
  if (!t.valid()) return unexpected(t.error());
  if (t.started()) return unexpected(errc::already_taken);  // it ran already: never again
  void* frame = t.release();
  detail::promise_base& p = detail::promise_of(frame);
  p.root = &p;
  p.continuation = nullptr;
  p.current = frame;
  for (;;) {
    switch (detail::run_task(&p)) {
      case detail::run_result::yielded: continue;
      // Only an awaiter outside weft's own parks here (they all refuse, above); its
      // registration, if any, is its own affair.
      case detail::run_result::parked:
      case detail::run_result::held:  // (device executor only; run_inline never holds)
        detail::destroy_frame(frame);
        return unexpected(errc::would_block);
      case detail::run_result::completed: {
        result<T> r = detail::outcome_of<T>(detail::promise_base_of<detail::task_promise<T>>(frame));
        detail::destroy_frame(frame);
        return r;
      }
    }
  }
}

}  // namespace weft
