// weft/detail/backend_hooks.hpp - the few operations that differ between backends.
//
// Task code is compiled for both backends; where it needs the executor (spawn a root,
// requeue a woken task, allocate a frame) it calls these dispatchers. The host pass
// calls functions of the host executor (defined in executor/*.cpp); the device pass
// calls the device executor's inline functions (executor/weft/executor/device_*.hpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/config.hpp"
#include "weft/detail/mailbox_layout.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"

namespace weft::detail {

// ---- host backend (executor/host_executor.cpp, executor/frame_alloc.cpp) ----
void* host_current_scheduler() noexcept;
errc host_submit_root(void* sched, task_header* t) noexcept;
void host_schedule(task_header* t) noexcept;
void host_destroy_root(task_header* t) noexcept;
void* host_frame_allocate(std::size_t n) noexcept;
void host_frame_deallocate(void* p, std::size_t n) noexcept;
void host_destroy_frame(void* frame) noexcept;
std::uint64_t host_now_ns() noexcept;
errc host_schedule_at(task_header* t, std::uint64_t deadline_ns) noexcept;
io_link* host_current_io() noexcept;
std::uint32_t host_worker_index() noexcept;  // no_home outside a worker thread
std::uint32_t host_worker_count(void* sched) noexcept;
void host_send_home(task_header* t) noexcept;
// Counts one bulk step of the calling worker thread's task; true at the
// exec::bulk_steps_per_turn-th step of its turn: the task then yields (bulk.hpp).
bool host_bulk_budget_spent() noexcept;
// Bulk work on the host's worker threads (executor/host_bulk.cpp). host_bulk_plan cuts
// the job into chunks for the board and returns true when it is worth spreading (more
// than one chunk, more than one worker, called from a worker thread); false leaves the
// job untouched, for the calling thread to run whole. host_post_bulk puts a planned job,
// whose waiter is set and about to park, on the board: errc{} or shutting_down.
struct bulk_job;
struct host_bulk_run;
bool host_bulk_plan(bulk_job& j) noexcept;
errc host_post_bulk(host_bulk_run* r, bulk_job* j) noexcept;

}  // namespace weft::detail

#if WEFT_CUDA_COMPILE
#include "weft/executor/device_hooks.hpp"
#endif

namespace weft::detail {

// The scheduler that spawn() submits to: the executor running the calling task.
WEFT_HOST_DEVICE inline void* current_scheduler() noexcept {
#if WEFT_DEVICE_PASS
  return device_current_scheduler();
#else
  return host_current_scheduler();
#endif
}

// Registers a new root task (state SCHEDULED|HANDLE) with `sched` and queues it.
// Returns errc{} on success, or why the task was not accepted (it is then untouched).
WEFT_HOST_DEVICE inline errc submit_root(void* sched, task_header* t) noexcept {
#if WEFT_DEVICE_PASS
  return device_submit_root(sched, t);
#else
  return host_submit_root(sched, t);
#endif
}

// Queues a task whose SCHEDULED bit the caller has just set (a wake-up or a yield).
WEFT_HOST_DEVICE inline void schedule(task_header* t) noexcept {
#if WEFT_DEVICE_PASS
  device_schedule(t);
#else
  host_schedule(t);
#endif
}

// The index of the worker running the caller (a GPU warp, or a host worker thread), or
// no_home outside a runtime's workers.
WEFT_HOST_DEVICE inline std::uint32_t current_worker_index() noexcept {
#if WEFT_DEVICE_PASS
  return device_worker_index();
#else
  return host_worker_index();
#endif
}

// How many workers `sched` has (0 for no scheduler).
WEFT_HOST_DEVICE inline std::uint32_t worker_count_of(void* sched) noexcept {
  if (sched == nullptr) return 0;
#if WEFT_DEVICE_PASS
  return device_worker_count(sched);
#else
  return host_worker_count(sched);
#endif
}

// Hands a SCHEDULED pinned task to its home worker's inbox (task_header.hpp, "Pinned
// tasks"). Never fails: the inbox is an intrusive list through `link`.
WEFT_HOST_DEVICE inline void send_home(task_header* t) noexcept {
#if WEFT_DEVICE_PASS
  device_send_home(t);
#else
  host_send_home(t);
#endif
}

// A pinned root completed on its home worker (the caller). The device counts each
// home's live pinned roots to bound its parked warp's naps (device_worker::pinned_live);
// the host wakes a parked home through its condition variable and counts nothing.
WEFT_HOST_DEVICE inline void pinned_root_completed() noexcept {
#if WEFT_DEVICE_PASS
  device_pinned_root_completed();
#endif
}

// Destroys a completed (or abandoned) root frame and everything it owns.
WEFT_HOST_DEVICE inline void destroy_root(task_header* t) noexcept {
#if WEFT_DEVICE_PASS
  device_destroy_root(t);
#else
  host_destroy_root(t);
#endif
}

// Destroys a frame that may own suspended child frames. On the host this runs in
// constant stack space whatever the depth (exec::destroy_frame_tree). On the device
// the executor's teardown defers nested destructions the same way; outside it (a
// finished or never-started frame) a plain destroy has no depth to recurse into.
WEFT_HOST_DEVICE inline void destroy_frame(void* frame) noexcept {
#if WEFT_DEVICE_PASS
  device_destroy_frame(frame);
#else
  host_destroy_frame(frame);
#endif
}

// The backend's monotonic clock in nanoseconds (host: steady_clock; device:
// %globaltimer). Deadlines given to schedule_at are on this clock.
WEFT_HOST_DEVICE inline std::uint64_t now_ns() noexcept {
#if WEFT_DEVICE_PASS
  return device_now_ns();
#else
  return host_now_ns();
#endif
}

// Wakes `t` (detail::wake, exactly once) at or after `deadline_ns`. The caller is the
// task itself, RUNNING on its way to parking: it has set act = park before the call,
// so the wake may come at once (SCHEDULED|RUNNING covers that). Returns why the timer refused
// the task (it must then not park: sleep_for fails it instead), errc{} on success:
// backend_unavailable without a scheduler (run_inline), queue_full when the device's
// timer heap is full.
WEFT_HOST_DEVICE inline errc schedule_at(task_header* t, std::uint64_t deadline_ns) noexcept {
#if WEFT_DEVICE_PASS
  return device_schedule_at(t, deadline_ns);
#else
  return host_schedule_at(t, deadline_ns);
#endif
}

// The mailbox to the host reactor that a request with opcode `op` from the caller goes
// to (mailbox_for: net requests to mailbox 0, the others spread by worker), or nullptr
// outside a runtime or in a run_inline kernel.
WEFT_HOST_DEVICE inline mailbox* current_mailbox(opcode op) noexcept {
#if WEFT_DEVICE_PASS
  return device_mailbox_for(op);
#else
  io_link* io = host_current_io();
  // host_current_io is non-null on a worker thread only, so the index is a worker's.
  return io != nullptr ? &io->boxes[mailbox_for(*io, op, host_worker_index())] : nullptr;
#endif
}

WEFT_HOST_DEVICE inline void* frame_allocate(std::size_t n) noexcept {
#if WEFT_DEVICE_PASS
  return device_frame_allocate(n);
#else
  return host_frame_allocate(n);
#endif
}

// A block from the frame pool for an object that is not a coroutine frame (a channel's
// buffer, when_any's state): the device's shutdown scan must not take it for a frame.
WEFT_HOST_DEVICE inline void* object_allocate(std::size_t n) noexcept {
#if WEFT_DEVICE_PASS
  return device_frame_allocate(n, exec::device_frames::live_object);
#else
  return host_frame_allocate(n);
#endif
}

WEFT_HOST_DEVICE inline void frame_deallocate(void* p, std::size_t n) noexcept {
#if WEFT_DEVICE_PASS
  device_frame_deallocate(p, n);
#else
  host_frame_deallocate(p, n);
#endif
}

// A spawn_group's block (group_core.hpp): on the GPU marked as a group's, so that
// shutdown frees those whose last children never ran (device_program.hpp, phase 3).
WEFT_HOST_DEVICE inline void* group_allocate(std::size_t n) noexcept {
#if WEFT_DEVICE_PASS
  return device_frame_allocate(n, exec::device_frames::live_group);
#else
  return host_frame_allocate(n);
#endif
}

// Frees a block from object_allocate.
WEFT_HOST_DEVICE inline void object_deallocate(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }

}  // namespace weft::detail
