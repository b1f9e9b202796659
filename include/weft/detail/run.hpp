// weft/detail/run.hpp - the trampoline driver and the state-word transitions.
//
// Both executors call these; they hold no backend-specific code. See task_header.hpp
// for the state word and for why resumption goes through a driver loop.
#pragma once
#include "weft/detail/backend_hooks.hpp"
#include "weft/detail/group_core.hpp"
#include "weft/detail/task_header.hpp"

namespace weft::detail {

enum class run_result : std::uint8_t { parked, yielded, completed, held };

// Propagates t->failure from the innermost frame outwards. Each frame passed is marked
// failed. Stops at the first frame whose parent awaited through try_await: the parent
// resumes and reads the error from it, and that frame's owner destroys it later. Frames
// below it (whose parents fail too) are read by nobody again: each is taken from its
// owner and destroyed as the failure passes it, innermost first, as C++ unwinds frames
// (task_header.hpp, "Destruction order of an await chain").
// Returns false when no frame catches it: the root itself has failed (its frame kept for
// its handle; `current` is the root again, with nothing below it).
// Inline, its call marked unlikely in run_task: made a call from the worker loop (with
// destroy_chain_below out of line too) it cost yield_many 2.7x and spawn_many 1.3x on an
// H100 (docs/benchmarks.md, fortieth session).
WEFT_HOST_DEVICE inline bool unwind_chain(task_header* t) noexcept {
  const errc e = t->failure;
  void* frame = t->current;
  for (;;) {
    promise_base& p = promise_of(frame);
    p.error = e;
    if (p.continuation == nullptr) {
      t->current = frame;
      return false;
    }
    if (p.parent_catches) {
      t->current = p.continuation;
      t->failure = errc{};
      return true;
    }
    void* parent = take_from_owner(frame);
    destroy_frame(frame);
    frame = parent;
  }
}

// Resumes the task's chain until it yields, parks or completes. The caller owns the
// task (RUNNING). Stack use is constant: a child is entered, and a parent returned
// to, by looping here rather than by nested resumes.
WEFT_HOST_DEVICE inline run_result run_task(task_header* t) noexcept {
  for (;;) {
    if (t->failure != errc{}) [[unlikely]] {
      if (!unwind_chain(t)) return run_result::completed;
    }
    t->act = action::none;
    coro_handle{t->current}.resume();
    switch (t->act) {
      case action::run_current:
      case action::unwind:  // t->failure is set; the loop head unwinds
        continue;
      case action::yield: return run_result::yielded;
      case action::park: return run_result::parked;
      case action::hold: return run_result::held;
      case action::complete: return run_result::completed;
      case action::none: break;
    }
    contract_violation("a weft task suspended without telling the executor");
  }
}

// Memory orders of the run transitions. On the host every transition is acq_rel (an
// x86 RMW is a full barrier anyway). On the GPU an acquire at device scope also
// invalidates the SM's L1, so the next resume reads the frame from L2, one round trip
// per dependent load; the device therefore acquires only where nothing else did:
//   begin_run      relaxed: every way a task reaches a worker warp already carried an
//                  acquire on that warp (a steal's or an inject pop's acquire, the wake
//                  RMW of the lane that put it in the warp's staging area, the acquire of
//                  end_run_parked below, a host submission's acquire), or the task last
//                  ran on that same warp; __syncwarp passes it between the warp's lanes.
//   end_run_yielded  relaxed: the task goes into the worker's own ring, whose tail
//                  store (release) publishes the frame to thieves.
//   end_run_parked release (the waker acquires it), plus an acquire fence when a
//                  wake-up came during the run: the waker's writes, for our requeue.
#if WEFT_DEVICE_PASS
inline constexpr memory_order mo_begin_run = mo_relaxed;
inline constexpr memory_order mo_end_yield = mo_relaxed;
inline constexpr memory_order mo_end_park = mo_release;
#else
inline constexpr memory_order mo_begin_run = mo_acq_rel;
inline constexpr memory_order mo_end_yield = mo_acq_rel;
inline constexpr memory_order mo_end_park = mo_acq_rel;
#endif

// SCHEDULED -> RUNNING: the worker that popped the task now owns it.
WEFT_HOST_DEVICE inline void begin_run(task_header* t) noexcept {
  state_of(t).fetch_xor(task_state::scheduled | task_state::running, mo_begin_run);
}

// RUNNING -> idle, or RUNNING -> SCHEDULED when a wake-up arrived during the run (it
// left SCHEDULED set beside RUNNING). Returns true when the caller must requeue the task.
WEFT_HOST_DEVICE inline bool end_run_parked(task_header* t) noexcept {
  if ((state_of(t).fetch_and(~task_state::running, mo_end_park) & task_state::scheduled) == 0) return false;
  if (WEFT_DEVICE_PASS) fence_device_acquire();  // the waker's writes (see above)
  return true;
}

// RUNNING -> SCHEDULED for a yield. No wake-up can be pending (see the invariant).
WEFT_HOST_DEVICE inline void end_run_yielded(task_header* t) noexcept {
  state_of(t).fetch_xor(task_state::running | task_state::scheduled, mo_end_yield);
}

// The wake-up's RMW: sets SCHEDULED and returns the state before it. The task needs
// queueing when it was not RUNNING (it was idle); otherwise its current runner requeues
// it (end_run_parked sees SCHEDULED). Every wake below is this RMW and what follows it.
WEFT_HOST_DEVICE inline std::uint32_t mark_woken(task_header* t, memory_order mo = mo_acq_rel) noexcept {
  return state_of(t).fetch_or(task_state::scheduled, mo);
}

// Wakes a parked task. Returns true when the caller must queue it (it was idle); false
// when its current runner will requeue it (it was still RUNNING: SCHEDULED now tells it).
// A task that shutdown doomed (task_header.hpp) is never queued again: a frame destroyed
// in shutdown's last step (a mutex guard's unlock, an event set by a destructor) may
// still wake one whose frame went before it.
WEFT_HOST_DEVICE inline bool wake_needs_queue(task_header* t) noexcept {
  return (mark_woken(t) & (task_state::running | task_state::doomed)) == 0;
}

// A pinned task goes straight to its home's inbox, unless the waker is its home.
WEFT_HOST_DEVICE inline void schedule_woken(task_header* t, std::uint32_t old_state) noexcept {
  if ((old_state & task_state::pinned) && t->home != current_worker_index()) send_home(t);
  else schedule(t);
}

// Wakes a parked task: queues it (a pinned one at its home) when it was idle, or leaves
// it to its runner when it was still RUNNING. acq_rel (the default): the waker's writes
// go to the task's next runner, and the task's writes before it parked come to the waker.
WEFT_HOST_DEVICE inline void wake(task_header* t, memory_order mo = mo_acq_rel) noexcept {
  const std::uint32_t old = mark_woken(t, mo);
  if ((old & (task_state::running | task_state::doomed)) == 0) schedule_woken(t, old);  // doomed: see above
}

// wake() for a waker that shares everything with the task already: the task parked on
// the waker's own warp in this trip, and every write the task must see was made by
// that warp (ordered by __syncwarp). Relaxed: no acquire, so the SM's L1 stays valid
// for the task's next resume. The device's private bulk jobs use it.
WEFT_HOST_DEVICE inline void wake_from_own_warp(task_header* t) noexcept {
  wake(t, WEFT_DEVICE_PASS ? mo_relaxed : mo_acq_rel);
}

// Wakes a parked task so that it unwinds with `e` instead of resuming. The write to
// `failure` is published by the wake's release RMW; the runner reads it after the
// acquire that handed it the task (begin_run's on the host; on the GPU, where begin_run
// is relaxed, the queue's acquire or end_run_parked's fence: see the orders above).
WEFT_HOST_DEVICE inline void wake_with_error(task_header* t, errc e) noexcept {
  t->failure = e;
  wake(t);
}

// Drops the reference held by a join handle that was not joined; the second of
// {completion, drop} destroys the frame. (A joined handle frees it directly:
// join_awaiter::await_resume says why that is safe.)
WEFT_HOST_DEVICE inline void release_handle(task_header* t) noexcept {
  const std::uint32_t old = state_of(t).fetch_and(~task_state::handle, mo_acq_rel);
  if (old & task_state::completed) destroy_root(t);
}

// Marks a root completed after run_task returned `completed`, then wakes whoever
// waits for it. After the RMW the task may be destroyed by its handle's owner at any
// moment, so nothing below reads it unless a parked joiner still pins it, and that only
// until wake(j): the woken joiner owns the frame from then on (join_awaiter::await_resume
// relies on this), so nothing here may read `t` after the wake.
WEFT_HOST_DEVICE inline void complete_root(task_header* t) noexcept {
  const bool failed = promise_of(frame_of(t)).error != errc{};
  const errc err = promise_of(frame_of(t)).error;
  const std::uint32_t s = state_of(t).fetch_xor(task_state::running | task_state::completed, mo_acq_rel);
  if (s & task_state::awaiter) {
    // The joiner holds the handle and is parked, so the frame stays alive here.
    task_header* j = t->joiner;
    if (failed && !(s & task_state::awaiter_catches)) wake_with_error(j, err);
    else wake(j);
  }
  if (!(s & task_state::handle)) destroy_root(t);
}

// ---- spawn groups (group_core.hpp has the roles, the state word and the orders)

WEFT_HOST_DEVICE inline void group_free(group_base* g) noexcept { object_deallocate(g, g->bytes); }

// A child counts itself finished, its outcome written. The one that takes UNFINISHED to
// 0 frees the block when the owner dropped the group, else wakes the owner if it waits
// (not when shutdown cancels it: `may_wake` false, nothing runs again). Nothing reads the
// block after the RMW except that one child, and it only before its wake or free.
WEFT_HOST_DEVICE inline void group_child_done(group_base* g, bool may_wake) noexcept {
  const std::uint32_t s = group_state_of(g).fetch_sub(1, mo_acq_rel);
  if ((s & group_state::unfinished_mask) != 1) return;
  if (s & group_state::dropped) return group_free(g);
  if ((s & group_state::awaiter) && may_wake) wake(g->joiner);
}

// The owner's drop. After a join that saw every child spawned so far finished (`joined`
// == `size`), no child can touch the block again and the join's acquire ordered their
// writes before this: free it at once. Otherwise mark it DROPPED (clearing AWAITER: a
// frame destroyed by shutdown while parked in join) and leave it to the last child.
WEFT_HOST_DEVICE inline void group_drop(group_base* g) noexcept {
  if (g->joined == g->size) return group_free(g);
  auto st = group_state_of(g);
  std::uint32_t s = st.load(mo_relaxed);
  while (!st.compare_exchange_weak(s, (s & ~group_state::awaiter) | group_state::dropped, mo_acq_rel, mo_relaxed)) {
  }
  if ((s & group_state::unfinished_mask) == 0) group_free(g);
}

// Queues a filled slot as a child (spawn_group::spawn). The GPU queues the slot itself
// (tagged), and the lane that takes it makes the frame (device_worker.hpp: start_group_child); the
// host makes the frame here and submits the child as a root. UNFINISHED counts the
// child first: it may finish before this returns. errc{}: accepted (a child whose
// frame could not be made counts as one that failed at once).
WEFT_HOST_DEVICE inline errc submit_group_child(group_slot* s) noexcept {
  group_base* g = group_of(s);
  void* sched = current_scheduler();
  if (sched == nullptr) return errc::no_runtime;
  group_state_of(g).fetch_add(1, mo_relaxed);  // ordered before the child's RMW by the queue
#if WEFT_DEVICE_PASS
  const errc e = device_submit_entry(sched, tag_group_entry(s), no_home);
#else
  task_header* t = s->ops->create(s);
  if (t == nullptr) return errc{};  // failed at once: its outcome says why
  t->state = task_state::scheduled;  // no handle: it frees itself (finish_group_child)
  const errc e = submit_root(sched, t);
  if (e != errc{}) destroy_frame(frame_of(t));
#endif
  if (e != errc{}) group_state_of(g).fetch_sub(1, mo_relaxed);  // never queued: nobody else counts it
  return e;
}

// A child's completion (run_and_settle): its outcome into the group, its frame freed, then
// the RMW (the frame is gone first, so that a woken owner finds it back in a cache).
WEFT_HOST_DEVICE inline void finish_group_child(task_header* t) noexcept {
  auto* s = reinterpret_cast<group_slot*>(t->joiner);
  group_base* g = group_of(s);
  s->ops->deliver(s, frame_of(t));
  destroy_root(t);
  group_child_done(g, /*may_wake=*/true);
}

// Shutdown, before it destroys a root that never completed: a child reports
// shutting_down and counts itself finished, waking nobody. Idempotent.
WEFT_HOST_DEVICE inline void cancel_group_child(task_header* t) noexcept {
  if (!t->group_child) return;
  t->group_child = 0;
  auto* s = reinterpret_cast<group_slot*>(t->joiner);
  s->ops->fail(s, errc::shutting_down);
  group_child_done(group_of(s), /*may_wake=*/false);
}

// The worker's side of running one task: own it, run it, hand it on.
// Returns what happened so the executor can requeue it in the right place.
// `held`: the task asked to be held (action::hold) and is still RUNNING; whoever took
// the work it handed over resumes it with `still_running` (no begin_run).
enum class after_run : std::uint8_t { idle, requeue_now, requeue_back, finished, held };
// A pinned task taken by a worker other than its home is handed on (send_home) and not
// run: `idle` (the worker has nothing to requeue). The look comes after begin_run, like
// the resume's own loads of the header (measured on an H200, twenty-first session), and
// handing on undoes begin_run with end_run_yielded's RMW: nothing can wake the task
// meanwhile, since it is not parked (the invariant in task_header.hpp). A held task
// (still RUNNING) that a full staging area spilled to another warp is handed on the
// same way; its home then resumes it through begin_run like any queued task.
WEFT_HOST_DEVICE inline after_run run_and_settle(task_header* t, bool still_running = false) noexcept {
  if (!still_running) begin_run(t);
  const bool pinned = t->home != no_home;
  if (pinned && t->home != current_worker_index()) {  // also a held task that travelled
    end_run_yielded(t);  // RUNNING -> SCHEDULED again: it is queued (in the inbox) once more
    send_home(t);
    return after_run::idle;
  }
  switch (run_task(t)) {
    case run_result::parked: return end_run_parked(t) ? after_run::requeue_now : after_run::idle;
    case run_result::yielded: end_run_yielded(t); return after_run::requeue_back;
    case run_result::completed:
      if (t->group_child) {
        finish_group_child(t);
        return after_run::finished;
      }
      complete_root(t);
      if (pinned) pinned_root_completed();  // at its home: the check above
      return after_run::finished;
    case run_result::held: return after_run::held;
  }
  return after_run::idle;
}

}  // namespace weft::detail
