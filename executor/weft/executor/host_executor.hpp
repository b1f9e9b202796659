// weft/executor/host_executor.hpp - the host backend's work-stealing executor.
//
// Workers (one per core by default) run tasks on host threads. The structure follows
// tokio's multi-threaded scheduler (worker.rs) and Go's runtime:
//   * each worker owns a bounded local_queue (FIFO) and a LIFO slot that holds the task
//     it most recently woke, so a waker and its wakee run back to back;
//   * a global inject queue takes submissions from non-worker threads and the overflow
//     of full local queues; every 61st pick checks it first so it cannot starve;
//   * a worker that runs dry steals half of a random victim's queue;
//   * at most half the workers search (steal) at once; the rest park, each on its own
//     condition variable. A wake-up is sent only when nobody is searching, to one parked
//     worker that it names, and the last searcher to find work wakes the next one, so
//     bursts do not wake every thread.
//   * a pinned task (weft::spawn_pinned) runs only on its home worker: any other worker
//     that takes it pushes it onto the home's inbox (send_home), which the home drains
//     after its ring, and every 61st pick first; a parked home is woken for it.
//   * a bulk job of more than one chunk goes on the bulk board (host_bulk.hpp): every
//     worker takes the board's chunks before its next task (as the device's warps take
//     bulk chunks first, tasks await them), and a post wakes parked workers for it. A
//     task's smaller bulk steps run on its own thread, inside the await; after
//     bulk_steps_per_turn of them in one turn (one pick of the task) it yields instead of
//     going on, and the thread's next pick looks at its inbox and the inject queue first,
//     so a long chain of steps keeps neither from its thread, nor the stop (a coop budget,
//     as tokio's, and as the device's inline budget: device_layout.hpp, inline_jobs_per_trip).
//   * every live root task is in a registry so that shutdown can destroy it.
//   * sleep_for: a timer heap (min-heap on deadline, then arrival order) guarded by a
//     mutex and serviced by one timer thread, started on the first sleep. The thread
//     waits on a condition variable until the earliest deadline (never spins), pops
//     every due entry and wakes those tasks outside the lock (wake only queues them).
//     A dedicated thread rather than idle workers: a parked worker would need a second
//     wait source, and a busy worker could delay every timer.
//
// Lost wake-ups are excluded by a Dekker pair of sequentially consistent fences: a
// pusher publishes its task, fences, then reads the sleeper count; a parker bumps the
// sleeper count, fences, then looks at every queue. One of them sees the other.
//
// Shutdown, in order (host_executor::shutdown):
//   1. Mark the executor stopping: submit_root refuses new roots (shutting_down). A
//      submission from a non-worker thread that looked before is finished first
//      (host_submit_m_), so none lands in the registry or the inject queue later.
//   2. Wake every parked worker; each leaves its loop after the task it is resuming
//      reaches its next suspension point.
//   3. Join the worker threads, then stop and join the timer thread and forget its
//      heap (every sleeping task is also in the registry). From here on one thread
//      owns everything.
//   4. Forget the queues and the bulk board: every task in the queues is also in the
//      registry, and every run on the board is in the frame of a parked task that is.
//   5. Destroy every root that has not completed. Teardown first marks each of them
//      COMPLETED (it will never run again), so that a join handle to it, dropped when
//      the frame that holds the handle is destroyed, frees it as for any completed
//      root, rather than touching it after it was freed: (a) mark them all (COMPLETED |
//      DOOMED), and cancel each spawn_group child among them (its outcome
//      shutting_down, its group's count taken, nobody woken: run.hpp); (b) destroy
//      those that no handle names, whose frames drop the handles they hold (freeing
//      the roots those name); (c) the marked roots still alive (a task holding its own
//      handle, a cycle of handles and what hangs off it, or a handle outside any
//      frame, which must not be dropped after shutdown): clear their COMPLETED bit,
//      destroy each once, and keep their freed frames until the last one is destroyed
//      (deferred_frees). A completed root whose last handle goes is destroyed then.
//      Every frame freed in this step is kept until its end (deferred_frees): a frame's
//      destructors may still reach a task destroyed before it (a mutex guard's unlock
//      wakes a waiter; an event set by a destructor), and such a wake of a DOOMED task
//      only marks its word (wake, run.hpp), it queues nothing.
//      The registry, which destroy_root keeps exact, says which marked roots are left.
//      The step allocates nothing (shutdown is noexcept, and may run with the heap
//      exhausted): it lists the roots of (b) and (c) through their `joiner` words, which
//      only a completion reads and no doomed root completes, and links the frames it
//      keeps through their own dead blocks (host_frames.cpp).
//   6. Flush the frame caches into the pool; the pool then counts only frames still
//      held by host-side handles (none after block_on returns).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "weft/detail/mailbox_layout.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"
#include "weft/executor/frame_pool.hpp"
#include "weft/executor/host_bulk.hpp"
#include "weft/executor/local_queue.hpp"
#include "weft/frame_allocator.hpp"

namespace weft::exec {

// Bulk steps a task may run in one turn on its worker thread before it yields
// (host_bulk_budget_spent): the device's inline_jobs_per_trip.
inline constexpr std::uint32_t bulk_steps_per_turn = 1024;

struct host_executor_config {
  unsigned workers = 0;                          // 0: one per hardware thread
  std::uint32_t local_queue_capacity = 256;      // rounded up to a power of two
  std::size_t frame_pool_bytes = 256u << 20;     // arena of the size-class pool
  weft::frame_allocator* user_allocator = nullptr;  // replaces the pool when set
};

// The size-class pool as a weft::frame_allocator (thread-safe; no cache).
class pool_frame_allocator final : public weft::frame_allocator {
 public:
  explicit pool_frame_allocator(std::size_t bytes);
  ~pool_frame_allocator() override;
  void* allocate(std::size_t n) noexcept override { return pool_.allocate(n); }
  void deallocate(void* p, std::size_t n) noexcept override { pool_.deallocate(p, n); }
  size_class_pool& pool() noexcept { return pool_; }

 private:
  void* arena_;
  size_class_pool pool_;
};

// Intrusive FIFO of task headers (through `link`), guarded by a mutex.
class inject_queue {
 public:
  void push(detail::task_header* t);
  void push_batch(detail::task_header* const* ts, std::uint32_t n);
  detail::task_header* pop();
  bool empty() const noexcept { return len_.load(std::memory_order_acquire) == 0; }

 private:
  std::mutex m_;
  detail::task_header* head_ = nullptr;
  detail::task_header* tail_ = nullptr;
  std::atomic<std::size_t> len_{0};
};

// Every live root, for shutdown. Sharded to keep spawn-heavy loads off one lock.
class root_registry {
 public:
  void add(detail::task_header* t);
  void remove(detail::task_header* t);
  // Calls f(t) for every registered root, under the shard locks (shutdown only).
  template <class F>
  void for_each(F&& f) {
    for (shard& s : shards_) {
      std::lock_guard lk(s.m);
      for (detail::task_header* t = s.head; t; t = t->reg_next) f(t);
    }
  }
  std::size_t size() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  static constexpr unsigned shards = 16;
  struct shard {
    std::mutex m;
    detail::task_header* head = nullptr;
  };
  shard& shard_of(detail::task_header* t) noexcept;
  static void unlink(shard& s, detail::task_header* t) noexcept;
  shard shards_[shards];
  std::atomic<std::size_t> count_{0};
};

class host_executor {
 public:
  // Throws std::system_error when a worker thread cannot start (the threads that did are
  // joined first), std::bad_alloc when the workers cannot be allocated.
  explicit host_executor(const host_executor_config& cfg);
  ~host_executor();
  host_executor(const host_executor&) = delete;
  host_executor& operator=(const host_executor&) = delete;

  void shutdown() noexcept;  // idempotent; see the numbered steps above
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

  errc submit_root(detail::task_header* t) noexcept;
  void schedule(detail::task_header* t) noexcept;
  // Pushes a SCHEDULED pinned task onto its home worker's inbox and wakes the home if it
  // is parked (park() says why nothing is lost).
  void send_home(detail::task_header* t) noexcept;
  // Puts a bulk job on the board (host_bulk.hpp) and wakes parked workers for it.
  // shutting_down once the executor stops (the job is then not posted).
  errc post_bulk(detail::host_bulk_run* r, detail::bulk_job* j) noexcept;
  void destroy_root(detail::task_header* t) noexcept;
  void destroy_incomplete_roots() noexcept;  // shutdown step 5
  // Wakes `t` (parked, or RUNNING on its way to parking) at or after `deadline_ns`
  // (steady_clock). Always true; once stopping, the task is left for shutdown to destroy.
  void schedule_at(detail::task_header* t, std::uint64_t deadline_ns) noexcept;

  weft::frame_allocator* frame_allocator() noexcept { return allocator_; }
  // The mailboxes to the host reactor (set by the runtime before any task runs; the
  // reactor outlives the workers). Tasks reach them through detail::current_mailbox().
  void set_io(detail::io_link l) noexcept { io_ = l; }
  detail::io_link* io() noexcept { return io_.count != 0 ? &io_ : nullptr; }
  unsigned worker_count() const noexcept { return static_cast<unsigned>(workers_.size()); }
  // True when, at the moment of the look, no worker runs a task and none is queued: every
  // worker is parked and no queue, LIFO slot, inbox or bulk run holds work. The runtime's
  // shutdown waits for it after the reactor's last answers (rt::reactor::close), so that
  // the tasks those answers woke run before step 5 would destroy them.
  bool idle() const noexcept;
  std::size_t live_roots() const noexcept { return registry_.size(); }
  // Frame-pool blocks still in use (exact when no worker runs; -1 with a user allocator).
  std::int64_t live_frame_blocks() const noexcept;

  struct worker;
  struct timer_entry {
    std::uint64_t deadline;
    std::uint64_t seq;  // arrival order: equal deadlines wake first-come first-served
    detail::task_header* task;
  };

 private:
  void worker_main(worker& w);
  detail::task_header* find_work(worker& w);
  detail::task_header* find_local_work(worker& w);
  detail::task_header* take_pinned(worker& w) noexcept;
  detail::task_header* search(worker& w);
  void run_one(worker& w, detail::task_header* t);
  bool help_bulk(worker& w) noexcept;
  void wake_bulk_helpers(std::uint32_t want) noexcept;
  void push_local(worker& w, detail::task_header* t);
  void push_lifo(worker& w, detail::task_header* t);
  void park(worker& w);
  void leave_park_locked(worker& w) noexcept;
  bool any_work_visible() const noexcept;
  void notify_one_if_needed() noexcept;
  void wake_parked(std::uint32_t want) noexcept;
  bool try_begin_search() noexcept;
  void end_search(bool found) noexcept;
  worker* current_worker() const noexcept;
  void timer_main();
  void stop_timer() noexcept;

  std::unique_ptr<pool_frame_allocator> pool_;
  weft::frame_allocator* allocator_;
  std::vector<std::unique_ptr<worker>> workers_;
  inject_queue inject_;
  bulk_board bulk_;
  root_registry registry_;

  std::atomic<bool> stopping_{false};
  // A submission from a thread that is not a worker holds it shared from its look at
  // stopping_ to its push; shutdown's step 1 sets stopping_ holding it exclusively. So
  // no such submission lands after step 1 (workers' own are over by step 3).
  std::shared_mutex host_submit_m_;
  std::atomic<bool> shut_down_{false};
  std::atomic<int> searching_{0};
  std::atomic<int> sleepers_{0};
  std::mutex park_m_;  // guards idle_ and every worker's permit (park())
  // The parked workers that hold no permit, the most recently parked last; sleepers_
  // counts them and the parked ones that hold a permit.
  std::vector<worker*> idle_;


  detail::io_link io_{};

  std::mutex timer_m_;  // guards the fields below
  std::condition_variable timer_cv_;
  std::vector<timer_entry> timers_;  // a min-heap (std::push_heap with a greater-than)
  std::uint64_t timer_seq_ = 0;
  bool timer_stop_ = false;
  std::thread timer_thread_;  // started by the first schedule_at
};

}  // namespace weft::exec
