// weft/executor/device_timers.hpp - sleep_for on the device: one timer heap per executor.
//
// Roles
//   sleeper  a lane whose task awaits sleep_for: pushes (deadline, task) under the lock.
//   poller   lane 0 of any worker warp, every 8th batch and on every nap while parked:
//            reads `next_deadline`; when it has passed, try-locks (never waits: another
//            poller is at it), pops every due entry and wakes those tasks (they go to
//            the poller's staging area, so the first free warp runs them).
// Invariants
//   * Each entry is one registration of a parked task (task_header.hpp): it is popped
//     once and woken once. A full heap refuses the registration (the sleeper sees
//     errc::queue_full), it never drops one.
//   * next_deadline == the root's deadline, or ~0 when empty; written under the lock.
// Memory orders: the spin lock (acquire/release) orders the heap; next_deadline is a
// relaxed hint read without the lock (a stale value only delays or repeats a check).
// Timing: a task wakes at or after its deadline; how much after depends on how often
// warps poll (every 8 batches, or each nap of at most park_max_ns when idle).
#pragma once
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/executor/device_layout.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {

__device__ inline std::uint64_t globaltimer_ns() noexcept {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

class device_timers {
 public:
  __device__ explicit device_timers(device_sched& d) noexcept : d_(d) {}

  // Registers t to be woken at `deadline`; false when the heap is full.
  __device__ bool add(detail::task_header* t, std::uint64_t deadline) noexcept {
    lock();
    if (d_.timer_count == d_.timer_capacity) {
      unlock();
      return false;
    }
    std::uint32_t i = d_.timer_count++;
    while (i > 0 && d_.timers[(i - 1) / 2].deadline > deadline) {  // sift up
      d_.timers[i] = d_.timers[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    d_.timers[i] = timer_entry{deadline, t};
    publish_next();
    unlock();
    return true;
  }

  // Pops up to `max` due tasks into out[]; returns how many. Never waits for the lock.
  __device__ std::uint32_t take_due(detail::task_header** out, std::uint32_t max) noexcept {
    detail::device_atomic<std::uint64_t> next(d_.timer_next);
    const std::uint64_t now = globaltimer_ns();
    if (next.load(detail::mo_relaxed) > now) return 0;
    detail::device_atomic<std::uint32_t> l(d_.timer_lock);
    if (l.exchange(1, detail::mo_acquire) != 0) return 0;
    std::uint32_t n = 0;
    while (n < max && d_.timer_count != 0 && d_.timers[0].deadline <= now) {
      out[n++] = d_.timers[0].task;
      pop_root();
    }
    publish_next();
    unlock();
    return n;
  }

 private:
  __device__ void pop_root() noexcept {
    const timer_entry last = d_.timers[--d_.timer_count];
    std::uint32_t i = 0;
    for (;;) {  // sift `last` down from the root
      std::uint32_t c = 2 * i + 1;
      if (c >= d_.timer_count) break;
      if (c + 1 < d_.timer_count && d_.timers[c + 1].deadline < d_.timers[c].deadline) ++c;
      if (d_.timers[c].deadline >= last.deadline) break;
      d_.timers[i] = d_.timers[c];
      i = c;
    }
    if (d_.timer_count != 0) d_.timers[i] = last;
  }
  __device__ void publish_next() noexcept {
    detail::device_atomic<std::uint64_t>(d_.timer_next)
        .store(d_.timer_count ? d_.timers[0].deadline : ~std::uint64_t{0}, detail::mo_relaxed);
  }
  __device__ void lock() noexcept {
    detail::device_atomic<std::uint32_t> l(d_.timer_lock);
    while (l.load(detail::mo_relaxed) != 0 || l.exchange(1, detail::mo_acquire) != 0) __nanosleep(64);
  }
  __device__ void unlock() noexcept { detail::device_atomic<std::uint32_t>(d_.timer_lock).store(0, detail::mo_release); }

  device_sched& d_;
};

}  // namespace weft::exec
#endif
