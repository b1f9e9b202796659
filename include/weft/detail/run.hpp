// weft/detail/run.hpp - the trampoline driver and the state-word transitions.
//
// Both executors call these; they hold no backend-specific code. See task_header.hpp
// for the state word and for why resumption goes through a driver loop.
#pragma once
#include "weft/detail/backend_hooks.hpp"
#include "weft/detail/task_header.hpp"

namespace weft::detail {

enum class run_result : std::uint8_t { parked, yielded, completed };

// Propagates t->failure from the innermost frame outwards. Each frame passed is
// marked failed and left suspended (its owner destroys it). Stops at the first frame
// whose parent awaited through try_await: the parent resumes and sees the error.
// Returns false when no frame catches it: the root itself has failed.
WEFT_HOST_DEVICE inline bool unwind_chain(task_header* t) noexcept {
  const errc e = t->failure;
  void* frame = t->current;
  for (;;) {
    promise_base& p = promise_of(frame);
    p.error = e;
    if (p.continuation == nullptr) return false;
    if (p.parent_catches) {
      t->current = p.continuation;
      t->failure = errc{};
      return true;
    }
    frame = p.continuation;
  }
}

// Resumes the task's chain until it yields, parks or completes. The caller owns the
// task (RUNNING). Stack use is constant: a child is entered, and a parent returned
// to, by looping here rather than by nested resumes.
WEFT_HOST_DEVICE inline run_result run_task(task_header* t) noexcept {
  for (;;) {
    if (t->failure != errc{} && !unwind_chain(t)) return run_result::completed;
    t->act = action::none;
    coro_handle{t->current}.resume();
    switch (t->act) {
      case action::run_current:
      case action::unwind:  // t->failure is set; the loop head unwinds
        continue;
      case action::yield: return run_result::yielded;
      case action::park: return run_result::parked;
      case action::complete: return run_result::completed;
      case action::none: break;
    }
    contract_violation("a weft task suspended without telling the executor");
  }
}

// SCHEDULED -> RUNNING: the worker that popped the task now owns it.
WEFT_HOST_DEVICE inline void begin_run(task_header* t) noexcept {
  state_of(t).fetch_xor(task_state::scheduled | task_state::running, mo_acq_rel);
}

// RUNNING -> idle, or RUNNING -> SCHEDULED when a wake-up arrived during the run.
// Returns true when the caller must requeue the task.
WEFT_HOST_DEVICE inline bool end_run_parked(task_header* t) noexcept {
  auto st = state_of(t);
  std::uint32_t s = st.load(mo_relaxed);
  for (;;) {
    const bool notified = (s & task_state::notified) != 0;
    const std::uint32_t n = notified ? ((s & ~(task_state::notified | task_state::running)) | task_state::scheduled)
                                     : (s & ~task_state::running);
    if (st.compare_exchange_weak(s, n, mo_acq_rel, mo_relaxed)) return notified;
  }
}

// RUNNING -> SCHEDULED for a yield. No wake-up can be pending (see the invariant).
WEFT_HOST_DEVICE inline void end_run_yielded(task_header* t) noexcept {
  state_of(t).fetch_xor(task_state::running | task_state::scheduled, mo_acq_rel);
}

// Wakes a parked task. Returns true when the caller must queue it (it was idle); false
// when its current runner will requeue it (it was still RUNNING).
WEFT_HOST_DEVICE inline bool wake_needs_queue(task_header* t) noexcept {
  auto st = state_of(t);
  std::uint32_t s = st.load(mo_relaxed);
  for (;;) {
    const std::uint32_t n = (s & task_state::running) ? (s | task_state::notified) : (s | task_state::scheduled);
    if (st.compare_exchange_weak(s, n, mo_acq_rel, mo_relaxed)) return (s & task_state::running) == 0;
  }
}

WEFT_HOST_DEVICE inline void wake(task_header* t) noexcept {
  if (wake_needs_queue(t)) schedule(t);
}

// Wakes a parked task so that it unwinds with `e` instead of resuming. The write to
// `failure` is published by the wake's release RMW; the runner reads it after its own
// acquire in begin_run.
WEFT_HOST_DEVICE inline void wake_with_error(task_header* t, errc e) noexcept {
  t->failure = e;
  wake(t);
}

// Drops the reference held by a join handle; the second of {completion, drop}
// destroys the frame.
WEFT_HOST_DEVICE inline void release_handle(task_header* t) noexcept {
  const std::uint32_t old = state_of(t).fetch_and(~task_state::handle, mo_acq_rel);
  if (old & task_state::completed) destroy_root(t);
}

// Marks a root completed after run_task returned `completed`, then wakes whoever
// waits for it. After the RMW the task may be destroyed by its handle's owner at any
// moment, so nothing below reads it unless a waiter still pins it.
WEFT_HOST_DEVICE inline void complete_root(task_header* t) noexcept {
  const bool failed = promise_of(frame_of(t)).error != errc{};
  const errc err = promise_of(frame_of(t)).error;
  auto st = state_of(t);
  std::uint32_t s = st.load(mo_relaxed);
  while (!st.compare_exchange_weak(s, (s | task_state::completed) & ~task_state::running, mo_acq_rel, mo_relaxed)) {
  }
  if (s & task_state::awaiter) {
    // The joiner holds the handle and is parked, so the frame stays alive here.
    task_header* j = t->joiner;
    if (failed && !(s & task_state::awaiter_catches)) wake_with_error(j, err);
    else wake(j);
  }
  if (!(s & task_state::handle)) destroy_root(t);
}

// The worker's side of running one task: own it, run it, hand it on.
// Returns what happened so the executor can requeue it in the right place.
enum class after_run : std::uint8_t { idle, requeue_now, requeue_back, finished };
WEFT_HOST_DEVICE inline after_run run_and_settle(task_header* t) noexcept {
  begin_run(t);
  switch (run_task(t)) {
    case run_result::parked: return end_run_parked(t) ? after_run::requeue_now : after_run::idle;
    case run_result::yielded: end_run_yielded(t); return after_run::requeue_back;
    case run_result::completed: complete_root(t); return after_run::finished;
  }
  return after_run::idle;
}

}  // namespace weft::detail
