// weft/semaphore.hpp - weft::semaphore, a counting semaphore awaitable from tasks.
//
//   weft::semaphore s(4);            // four permits
//   co_await s.acquire();            // take one; parks while none is free
//   ...  s.release();                // give one back (release(n) gives n)
//   if (s.try_acquire()) { ... }     // take one only if free now
//
// Fairness: permits are handed off in FIFO order. release() gives each permit directly
// to the longest-waiting task (it wakes holding it), so a waiter cannot be overtaken by
// a later acquire, and no waiter starves while permits keep being released. A semaphore
// may live in a task's frame and be shared by reference with tasks its owner outlives.
// release() may also be called from host code outside any task (host backend).
// Tasks still waiting when their runtime shuts down are destroyed by the shutdown, but
// the waiter list still names them: after that shutdown the semaphore (or mutex) may
// only be destroyed, not released (docs/design.md, Known limits).
//
// Design (permit_pool, shared with weft::mutex)
//   count_    free permits, an atomic word: acquire's fast path takes one with a CAS
//             and no lock.
//   waiters_  parked tasks in arrival order (through task_header::link), guarded by
//             lock_ (see detail/wait_list.hpp for the lock protocol).
// Invariant: waiters_ non-empty => count_ == 0. count_ grows only under lock_ and only
// when no task waits (give() hands permits to waiters first); the lock-free fast path
// only decrements. So a waiter that finds count_ == 0 under the lock may enqueue: no
// permit can appear until the lock is released, and whoever releases one next sees it.
// Lifetime: a task may destroy the semaphore as soon as its acquire() returns, even
// when the release() that satisfied it has not returned yet (the "completion signal"
// pattern). give() touches the semaphore last when it releases lock_ (it wakes from
// locals), and the destructor takes lock_ once, so it waits for that.
// Memory orders: a permit's taker synchronises with its giver, so what the giver wrote
// before release() is visible after acquire(): the fast path's CAS is ACQUIRE against
// give()'s RELEASE add; a handed-off permit travels through the wake (acq_rel RMWs on the
// task state word).
#pragma once
#include <cstdint>

#include "weft/detail/wait_list.hpp"

namespace weft {

namespace detail {

class permit_pool {
 public:
  WEFT_HOST_DEVICE explicit permit_pool(std::uint32_t initial) noexcept : count_(initial) {}
  permit_pool(const permit_pool&) = delete;
  permit_pool& operator=(const permit_pool&) = delete;
  // Waits for a give() still inside its critical section: the permit it added may
  // already have let a task in, finish and destroy the pool (see "Lifetime" above).
  WEFT_HOST_DEVICE ~permit_pool() {
    lock_.lock();
    lock_.unlock();
  }

  // Takes a free permit without waiting.
  WEFT_HOST_DEVICE bool try_take() noexcept {
    auto c = count();
    std::uint32_t v = c.load(mo_relaxed);
    while (v != 0)
      if (c.compare_exchange_weak(v, v - 1, mo_acquire, mo_relaxed)) return true;
    return false;
  }

  // Takes a permit (true), or appends `me` to the waiters (false): it will be woken
  // holding one.
  WEFT_HOST_DEVICE bool take_or_enqueue(task_header* me) noexcept {
    lock_.lock();
    const bool taken = try_take();
    if (!taken) waiters_.push_back(me);
    lock_.unlock();
    return taken;
  }

  // Gives n permits: one to each waiter, oldest first, the rest to count_. More than
  // `max_free` free permits is a contract violation (an unlock of an unlocked mutex).
  WEFT_HOST_DEVICE void give(std::uint32_t n, std::uint32_t max_free, const char* misuse) noexcept {
    task_fifo woken;
    lock_.lock();
    while (n != 0 && !waiters_.empty()) {
      woken.push_back(waiters_.pop_front());
      --n;
    }
    if (n != 0) {
      if (n > max_free || count().load(mo_relaxed) > max_free - n) {
        lock_.unlock();
        contract_violation(misuse);
      }
      count().fetch_add(n, mo_release);
    }
    lock_.unlock();
    wake_all(woken.head);
  }

  // Free permits now (a snapshot).
  WEFT_HOST_DEVICE std::uint32_t available() const noexcept {
    return device_atomic<std::uint32_t>(const_cast<std::uint32_t&>(count_)).load(mo_relaxed);
  }

 private:
  WEFT_HOST_DEVICE device_atomic<std::uint32_t> count() noexcept { return device_atomic<std::uint32_t>(count_); }
  std::uint32_t count_;
  exec::spin_lock lock_;
  task_fifo waiters_;
};

// Awaiter of a permit: ready at once when the fast path gets one, else parks in FIFO
// order until give() hands it one.
struct permit_awaiter {
  using weft_awaitable = void;
  permit_pool* pool;
  WEFT_HOST_DEVICE bool await_ready() const noexcept { return pool->try_take(); }
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) const noexcept {
    task_header* me = root_of(h);
    if (parks_nowhere(me)) {  // run_inline: no waiting (task_header.hpp)
      if (pool->try_take()) return false;
      return fail_current(h, errc::would_block), true;
    }
    if (pool->take_or_enqueue(me)) return false;
    me->act = action::park;  // still RUNNING: a wake that came already set SCHEDULED beside RUNNING
    return true;
  }
  WEFT_HOST_DEVICE void await_resume() const noexcept {}
};

}  // namespace detail

class semaphore {
 public:
  // The largest number of free permits; releasing beyond it is a contract violation.
  static constexpr std::uint32_t max_permits = 0xffffffffu;

  WEFT_HOST_DEVICE explicit semaphore(std::uint32_t initial) noexcept : pool_(initial) {}
  semaphore(const semaphore&) = delete;
  semaphore& operator=(const semaphore&) = delete;

  // Waits for a permit and takes it.
  WEFT_HOST_DEVICE detail::permit_awaiter acquire() noexcept { return {&pool_}; }
  // Takes a permit if one is free now; never waits.
  WEFT_HOST_DEVICE bool try_acquire() noexcept { return pool_.try_take(); }
  // Gives back n permits, waking up to n waiters (oldest first).
  WEFT_HOST_DEVICE void release(std::uint32_t n = 1) noexcept {
    pool_.give(n, max_permits, "semaphore::release overflows the permit count");
  }
  // Free permits now (a snapshot; 0 while tasks wait).
  WEFT_HOST_DEVICE std::uint32_t available() const noexcept { return pool_.available(); }

 private:
  detail::permit_pool pool_;
};

}  // namespace weft
