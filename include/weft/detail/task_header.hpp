// weft/detail/task_header.hpp - the scheduling header of a task and its state word.
//
// Every weft coroutine frame holds a promise_base, which starts with a task_header.
// The header is meaningful only in *root* frames: frames started by spawn() (or by
// block_on). A chain of child frames awaited one inside another runs under its
// root's header; the scheduler queues, wait lists and join handles all deal in
// task_header pointers, never in child frames.
//
// The trampoline (why there is no symmetric transfer)
// ---------------------------------------------------
// NVPTX has no tail calls: an await_suspend that returns a handle nests a call frame
// on the device stack, so a long await chain overflows it. In weft no await_suspend
// returns a handle. Each weft suspension point instead writes two things into the
// root's header and returns void:
//   current  the frame to resume next (the child it awaits, or the parent it returns to)
//   act      what the driver loop should do next (run_current, yield, park, complete, unwind)
// The driver loop (detail::run_task) resumes `current` again and again until the task
// yields, parks or completes. The stack depth is constant whatever the await depth.
//
// The state word (one 32-bit word per root; every bit documented)
// ----------------------------------------------------------------
//   SCHEDULED    the task sits in a run queue (or is being pushed into one). Set by
//                whoever makes it runnable (spawn, wake, yield); cleared by the worker
//                that takes it to run. Exactly one queue entry exists while it is set
//                without RUNNING.
//   RUNNING      a worker (a host thread, or a GPU lane) owns the task and is resuming
//                it. While RUNNING, only that worker touches `current`, `act` and the
//                frames; that is what makes it safe to read `act` after resume returns.
//   SCHEDULED and RUNNING together: a wake-up arrived while RUNNING (the task registered
//                as a waiter and the event fired before the worker finished suspending
//                it). No queue entry exists yet: the worker sees the bit when the task
//                parks and queues it at once. (One bit for both meanings keeps every
//                transition a single read-modify-write: each is an L2 round trip on the
//                GPU, and a worker's trip round its loop is made of them.)
//   COMPLETED    the root coroutine finished (with a value or an error). Set once; after
//                it the result in the promise is immutable. (Shutdown alone also sets it
//                on roots that never finish, and may clear it again: see DOOMED.)
//   HANDLE       a join_handle (or the host's block_on) still refers to the task. The
//                frame is destroyed by whichever of "complete" and "drop the handle"
//                happens second; a handle whose join resumed owns the finished frame
//                and frees it without clearing the bit (spawn.hpp, await_resume).
//   AWAITER      a task is parked in join and `joiner` names it; completion wakes it.
//   AWAITER_CATCHES  the joiner awaited through try_await: an error is a value for it.
//                Without it, completion with an error makes the joiner unwind.
//   PINNED       set at spawn and never changed: `home` names the only worker that may
//                resume the task. The wake RMW returns it, so a waker learns that it must
//                send the task home without loading the header (see "Pinned tasks").
//   DOOMED       set only by shutdown, on a root it destroys without completing it
//                (host_executor.hpp step 5; device_program.hpp, above weft_teardown_scan).
// (A host thread never waits on a root's state word: runtime::spawn and block_on wrap the
// root in a task that reports to a host-side box or a completion record.)
//
// Invariant that keeps wake-ups exact: a parked task is registered with at most one
// waker (one event, one join), and that waker wakes it exactly once. So a wake-up
// arrives only while the task is parked, or in the short window while it is RUNNING
// on its way to parking (SCHEDULED|RUNNING covers that window), never while it runs
// freely or sits in a queue.
// Transitions, one RMW each: begin_run xor(SCHEDULED|RUNNING); end_run_yielded
// xor(RUNNING|SCHEDULED); end_run_parked and(~RUNNING) (SCHEDULED in the old value:
// requeue); wake or(SCHEDULED) (RUNNING in the old value: its worker requeues it);
// complete xor(RUNNING|COMPLETED).
//
// Pinned tasks (weft::spawn_pinned): `home` names the one worker that may resume the
// task; no_home (every other task) lets any worker run it. It is written before the
// task is first published and never changes, so whoever reads it has already acquired
// the header through the queue that handed the task over. A pinned task still travels
// the ordinary queues (a waker's LIFO slot, a ring thieves take from, the inject
// queue); any worker that takes it there and is not its home hands it on to the home's
// inbox instead of resuming it (run_and_settle, send_home): the task stays SCHEDULED,
// moved from one queue to another. A wake-up (wake) sends it home at once: the PINNED
// bit in the old value its RMW returns says so, and an unpinned task costs the waker
// nothing more. (Into the waker's own queue, a woken partner would make the waker look
// busy to event::wait's in-place wait on the GPU, and both would then park every hop.)
//
// Memory orders: every transition is a read-modify-write on the state word, acq_rel on
// the host (the device relaxes some where a queue's acquire already orders them:
// run.hpp, "Memory orders of the run transitions"), so the writes a task made before it
// parked or completed (its result, the `joiner` pointer, its frames) happen-before
// whatever the next owner does after observing the new state. Plain fields (current, act, failure, joiner) are written
// only by the RUNNING owner or before the RMW that publishes them.
#pragma once
#include <cstdint>
#include <type_traits>

#include "weft/config.hpp"
#include "weft/detail/atomic.hpp"
#include "weft/detail/coro.hpp"
#include "weft/errc.hpp"

namespace weft::detail {

enum class action : std::uint8_t {
  none = 0,     // nothing recorded: a suspension weft does not know about (a bug)
  run_current,  // resume `current` again at once (a child was entered or finished)
  yield,        // requeue behind the other ready tasks
  park,         // wait for a wake-up; the waker requeues it
  complete,     // the root frame reached its final suspend point
  unwind,       // `failure` must propagate up the await chain (see run_task)
  hold,         // stay RUNNING: the worker itself resumes the task once the work it
                // handed over is done (the device's private bulk jobs); nobody else may
                // wake it, so no state transition is needed on either side
};

// task_header::home of a task that any worker may run.
inline constexpr std::uint32_t no_home = ~0u;

namespace task_state {
inline constexpr std::uint32_t scheduled = 1u << 0;
inline constexpr std::uint32_t running = 1u << 1;
inline constexpr std::uint32_t doomed = 1u << 2;  // shutdown marked it (was NOTIFIED once)
inline constexpr std::uint32_t completed = 1u << 3;
inline constexpr std::uint32_t handle = 1u << 4;
inline constexpr std::uint32_t awaiter = 1u << 5;
inline constexpr std::uint32_t awaiter_catches = 1u << 6;
inline constexpr std::uint32_t pinned = 1u << 7;  // constant: home != no_home (see "Pinned tasks")
}  // namespace task_state

// Layout: `home` went into the padding at the end (the header stays one 64-byte
// granule). A layout that moved `home` and `failure` next to `current`, so that a
// worker's look at `home` would share the resume's first sector, made yield_many 16 %
// and spawn_many 17 % slower on an H200, for a reason not found (docs/benchmarks.md,
// twenty-first session); this one measured yield_many 6 % faster than before pinning.
struct task_header {
  void* current = nullptr;          // innermost frame of the chain: resumed next
  union {
    task_header* link = nullptr;    // a root: intrusive link (inject queue, wait list, ready stack)
    void** owner_slot;              // a child frame (never a root, so `link` is free): the
                                    // frame pointer of the task object that owns it (enter_child)
  };
  void* sched = nullptr;            // the executor the task was spawned on (backend-specific)
  task_header* joiner = nullptr;    // valid while AWAITER is set
  task_header* reg_prev = nullptr;  // host registry of live roots (shutdown destroys them)
  task_header* reg_next = nullptr;
  std::uint32_t state = 0;          // see the table above; accessed with device_atomic
  errc failure{};                   // a pending error: set, the driver unwinds before resuming
  std::uint32_t home = no_home;     // the only worker that may resume it (pinned), or no_home
  action act = action::none;        // written by the suspending awaiter, read by the driver
  std::uint8_t group_child = 0;     // 1: a spawn_group's child; `joiner` names its slot
                                    // (group_core.hpp), and completion delivers there
};
static_assert(sizeof(task_header) == 64, "a root's header is one 64-byte granule");

struct promise_base : task_header {
  void* continuation = nullptr;  // the frame awaiting this one; null for a root
  task_header* root = nullptr;   // the header the chain runs under
  errc error{};                  // this frame failed: unwinding passed through it
  bool parent_catches = false;   // the parent awaits through try_await

  // Only weft awaitables may be awaited inside a weft task: they all follow the
  // trampoline protocol above. A foreign awaitable would suspend without telling the
  // driver what to do next, so it is rejected at compile time.
  template <class A>
  WEFT_HOST_DEVICE A&& await_transform(A&& a) noexcept {
    static_assert(requires { typename std::remove_cvref_t<A>::weft_awaitable; },
                  "only weft awaitables (tasks, join handles, weft::yield, events, ...) may be "
                  "co_awaited inside a weft::task");
    return static_cast<A&&>(a);
  }
};

WEFT_HOST_DEVICE inline promise_base& promise_of(void* frame) noexcept {
  return promise_base_of<promise_base>(frame);
}

// Destruction order of an await chain. C++ destroys a frame's awaited child (a task
// object in the frame) before the frame's own locals, which the child may refer to (a
// mutex it holds a guard of, a buffer). weft destroys nested frames from a list, in
// constant stack (exec::destroy_frame_tree, device_destroy_frame), which would reverse
// that for a chain: the parent first, then the child it held. So the frames a chain still
// holds are taken from their owners and destroyed innermost first, before the frame that
// holds them: a failed chain's frames as the failure passes them (unwind_chain), and a
// started root's whole chain, whose innermost frame is the root's `current`, when the root
// is destroyed (destroy_frame_and_chain). Other task objects in a frame (one never
// awaited, or one whose await has ended) hold no chain below them.

// Takes a child frame from the task object that owns it (which then owns nothing, so the
// parent's destruction does not destroy the child again); returns the child's parent.
WEFT_HOST_DEVICE inline void* take_from_owner(void* child) noexcept {
  promise_base& p = promise_of(child);
  *p.owner_slot = nullptr;
  return p.continuation;
}

// The frames a root's chain holds below it (its `current` up to, not including, the
// root), innermost first. Only shutdown destroys a root mid-chain.
WEFT_HOST_DEVICE inline void destroy_chain_below(void* root_frame) noexcept {
  for (void* g = promise_of(root_frame).current; g != root_frame;) {
    void* parent = take_from_owner(g);
    coro_handle{g}.destroy();
    g = parent;
  }
}

// Destroys `frame`; when it is a root stopped mid-chain, first the frames its chain
// still holds below it, innermost first (above). The caller is the backend's destroy
// loop: a destruction nested in these goes onto its list, as before.
// One look, at `current`, which shares its 32-byte sector with the destroy pointer that
// destroy() reads anyway: a root's `current` is the innermost frame of its chain (itself
// once it finished, failed to the top or never ran); a frame that is not a root never
// has its own `current` set (enter_child sets the root's), so it stays null. (Looking at
// `root` instead, and walking on the common path, cost the device's spawn and yield rates
// 1.5-3 % more: docs/benchmarks.md, fortieth session.)
WEFT_HOST_DEVICE inline void destroy_frame_and_chain(void* frame) noexcept {
  void* const innermost = promise_of(frame).current;
  if (innermost != nullptr && innermost != frame) [[unlikely]] destroy_chain_below(frame);
  coro_handle{frame}.destroy();
}
WEFT_HOST_DEVICE inline void* frame_of(task_header* root) noexcept {
  return coro_handle::from_promise(*static_cast<promise_base*>(root)).frame;
}
WEFT_HOST_DEVICE inline device_atomic<std::uint32_t> state_of(task_header* t) noexcept {
  return device_atomic<std::uint32_t>(t->state);
}

// A task that run_inline drives has no scheduler. Once woken it would be queued by
// nobody, and run_inline frees the frame of a task that parks while a waker may still
// hold it (a join's joiner, an event's or a mutex's waiter list, a channel's node, a
// host request): so every awaiter that would register such a task with a waker refuses
// instead, with errc::would_block, and leaves nothing registered. What completes without
// waiting (a set event, a free permit, a finished join) goes on as usual.
WEFT_HOST_DEVICE inline bool parks_nowhere(const task_header* me) noexcept { return me->sched == nullptr; }

// Queue entries of held tasks carry this tag in the pointer's low bit (headers are
// 8-byte aligned), so the worker that takes one skips begin_run (run.hpp). Bit 1 marks a
// spawn_group's slot (group_core.hpp: is_group_entry); untag clears both.
WEFT_HOST_DEVICE inline task_header* tag_still_running(task_header* t) noexcept {
  return reinterpret_cast<task_header*>(reinterpret_cast<std::uintptr_t>(t) | 1u);
}
WEFT_HOST_DEVICE inline bool is_still_running(const task_header* t) noexcept {
  return (reinterpret_cast<std::uintptr_t>(t) & 1u) != 0;
}
WEFT_HOST_DEVICE inline task_header* untag(task_header* t) noexcept {
  return reinterpret_cast<task_header*>(reinterpret_cast<std::uintptr_t>(t) & ~std::uintptr_t{3});
}

}  // namespace weft::detail
