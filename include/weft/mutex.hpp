// weft/mutex.hpp - weft::mutex, an asynchronous mutex for tasks.
//
//   weft::mutex m;
//   co_await m.lock();   ...   m.unlock();
//   if (m.try_lock()) { ...; m.unlock(); }
//   { weft::mutex_guard g = co_await m.scoped_lock();  ... }   // unlocks at scope end
//
// A task that finds the mutex locked parks (its worker runs other tasks); unlock()
// hands the lock directly to the longest-waiting task, which wakes owning it (FIFO,
// no barging, no starvation). The lock is not tied to a thread: a task may migrate
// between workers while holding it, and any task may unlock it (the usual rule still
// applies: unlock only what you locked). unlock() of an unlocked mutex is a contract
// violation. A mutex may live in a task's frame and be shared by reference with tasks
// its owner outlives. A mutex that had tasks waiting when their runtime shut down may
// only be destroyed afterwards (see semaphore.hpp).
//
// Design: a semaphore with one permit (detail::permit_pool, see semaphore.hpp for the
// invariants and memory orders): free permit = unlocked. lock()'s fast path is one CAS;
// unlock() with waiters hands its permit to the oldest and wakes it, else frees it.
// What the holder wrote before unlock() is visible to the next holder after its lock()
// (release/acquire on the permit count, or through the wake).
#pragma once
#include "weft/semaphore.hpp"

namespace weft {

class mutex;

// Owns a locked mutex and unlocks it on destruction (move-only, like std::unique_lock).
class [[nodiscard]] WEFT_DEVICE_OWNER_ABI mutex_guard {
 public:
  WEFT_HOST_DEVICE mutex_guard() noexcept : m_(nullptr) {}
  WEFT_HOST_DEVICE explicit mutex_guard(mutex* m) noexcept : m_(m) {}
  WEFT_HOST_DEVICE mutex_guard(mutex_guard&& o) noexcept : m_(o.m_) { o.m_ = nullptr; }
  WEFT_HOST_DEVICE mutex_guard& operator=(mutex_guard&& o) noexcept {
    if (this != &o) {
      unlock();
      m_ = o.m_;
      o.m_ = nullptr;
    }
    return *this;
  }
  mutex_guard(const mutex_guard&) = delete;
  mutex_guard& operator=(const mutex_guard&) = delete;
  WEFT_HOST_DEVICE ~mutex_guard() { unlock(); }

  WEFT_HOST_DEVICE bool owns_lock() const noexcept { return m_ != nullptr; }
  // Unlocks now (no effect if it owns nothing).
  WEFT_HOST_DEVICE inline void unlock() noexcept;

 private:
  mutex* m_;
};

class mutex {
 public:
  WEFT_HOST_DEVICE mutex() noexcept : pool_(1) {}
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  struct scoped_lock_awaiter : detail::permit_awaiter {
    mutex* m;
    WEFT_HOST_DEVICE mutex_guard await_resume() const noexcept { return mutex_guard(m); }
  };

  // Waits until the mutex is free and locks it.
  WEFT_HOST_DEVICE detail::permit_awaiter lock() noexcept { return {&pool_}; }
  // As lock(), returning a guard that unlocks it.
  WEFT_HOST_DEVICE scoped_lock_awaiter scoped_lock() noexcept { return {{&pool_}, this}; }
  // Locks the mutex if it is free now; never waits.
  WEFT_HOST_DEVICE bool try_lock() noexcept { return pool_.try_take(); }
  // Unlocks; the oldest waiting task (if any) wakes owning the lock.
  WEFT_HOST_DEVICE void unlock() noexcept { pool_.give(1, 1, "mutex::unlock of a mutex that is not locked"); }
  // True while locked (a snapshot).
  WEFT_HOST_DEVICE bool is_locked() const noexcept { return pool_.available() == 0; }

 private:
  detail::permit_pool pool_;
};

WEFT_HOST_DEVICE inline void mutex_guard::unlock() noexcept {
  if (m_ != nullptr) m_->unlock();
  m_ = nullptr;
}

}  // namespace weft
