// weft/executor/spin_lock.hpp - a test-and-test-and-set lock usable on both backends.
//
// Held only around a few pointer moves (a batch of free-list pops or pushes), so a
// spin with backoff beats parking. Acquire on lock / release on unlock order the
// protected plain fields. On the host a waiter yields its thread after a short spin;
// on the device it naps with __nanosleep (Volta+ independent thread scheduling lets
// the holder progress even when it shares a warp with the waiter).
#pragma once
#include <cstdint>

#include "weft/detail/atomic.hpp"
#if !WEFT_DEVICE_PASS
#include <thread>
#endif

namespace weft::exec {

class spin_lock {
 public:
  WEFT_HOST_DEVICE void lock() noexcept {
    detail::device_atomic<std::uint32_t> w(word_);
    for (unsigned spins = 0;; ++spins) {
      if (w.load(detail::mo_relaxed) == 0 && w.exchange(1, detail::mo_acquire) == 0) return;
      backoff(spins);
    }
  }
  WEFT_HOST_DEVICE void unlock() noexcept { detail::device_atomic<std::uint32_t>(word_).store(0, detail::mo_release); }

 private:
  WEFT_HOST_DEVICE static void backoff(unsigned spins) noexcept {
#if WEFT_DEVICE_PASS
    __nanosleep(spins < 8 ? 32u : 256u);
#else
    if (spins > 64) std::this_thread::yield();
#endif
  }
  std::uint32_t word_ = 0;
};

}  // namespace weft::exec
