// weft/run_inline.hpp - drive one task to completion on the calling thread or lane.
//
// run_inline runs a task, and everything it awaits, through the same trampoline as
// the executors, but without a scheduler: a yield continues at once, and a task that
// parks (waits on an event or a join) cannot be woken, so it is destroyed and
// errc::would_block returned. It exists for device kernels that drive tasks lane by
// lane, and for tests of the trampoline; applications use runtime::block_on.
#pragma once
#include "weft/detail/run.hpp"
#include "weft/task.hpp"

namespace weft {

template <class T>
WEFT_HOST_DEVICE result<T> run_inline(task<T>&& t) noexcept {
  if (!t.valid()) return unexpected(t.error());
  void* frame = t.release();
  detail::promise_base& p = detail::promise_of(frame);
  p.root = &p;
  p.continuation = nullptr;
  p.current = frame;
  for (;;) {
    switch (detail::run_task(&p)) {
      case detail::run_result::yielded: continue;
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
