// weft/executor/local_queue.hpp - a worker's bounded run queue, stealable by others.
//
// The design follows Go's runtime run queue (runq/runqget/runqgrab) and tokio's
// local queue: one owner, many thieves, a power-of-two ring of task pointers.
//
// Roles
//   owner   pushes at `tail` (the only writer of tail) and pops at `head` (FIFO, so a
//           yielded task goes behind the others).
//   thief   another worker; takes the older half of the queue from `head`.
// Invariants
//   * 0 <= tail - head <= capacity (unsigned, wrapping arithmetic on 32-bit counters).
//   * Slots [head, tail) hold queued tasks; the owner writes slot `tail` only while
//     tail - head < capacity, i.e. never a slot that is still queued.
//   * head only moves forward, and only by a successful CAS; so a thief that read
//     slots [h, h+n) and then moves head from h to h+n by CAS knows the owner had not
//     reused any of them: reuse needs head > h, which would have failed the CAS.
// Memory orders (device scope: the queue is shared by the GPU's threads; on the host
// backend by host threads, where device scope is all of them)
//   * owner push: slot store relaxed, then tail store RELEASE: a thief or popper that
//     loads tail with ACQUIRE sees the slot and the task's contents written before.
//   * pop / steal: head load ACQUIRE, then CAS head ACQ_REL. The release half orders the
//     thief's slot reads before the owner's reuse (owner loads head with ACQUIRE
//     before writing a slot), so a slot is never overwritten while being read. (The
//     device's warp_ring reuses an earlier acquired head instead: device_queues.hpp.)
//   * Slots are accessed through atomic refs (relaxed) only so that the read of a slot
//     that is then rejected by a failed CAS is not a data race.
#pragma once
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/detail/task_header.hpp"

namespace weft::exec {

class local_queue {
 public:
  // The warp-level operations of the device executor (device_queues.hpp) work on the
  // same words with the same protocol, spread over the lanes of the owning warp, with
  // weaker orders on the owner's side (warp_ring's top says why they suffice).
  friend struct warp_ring;

  using item = detail::task_header*;

  // `slots` has `capacity` entries, a power of two; it outlives the queue.
  WEFT_HOST_DEVICE void init(item* slots, std::uint32_t capacity) noexcept {
    slots_ = slots;
    mask_ = capacity - 1;
    head_ = 0;
    tail_ = 0;
  }
  WEFT_HOST_DEVICE std::uint32_t capacity() const noexcept { return mask_ + 1; }

  // Owner: appends t; false when the queue is full (the caller then moves half of it
  // to the shared inject queue with take_half_for_overflow and retries).
  WEFT_HOST_DEVICE bool push(item t) noexcept {
    const std::uint32_t h = head().load(detail::mo_acquire);
    const std::uint32_t tl = tail().load(detail::mo_relaxed);
    if (tl - h > mask_) return false;
    slot(tl).store(t, detail::mo_relaxed);
    tail().store(tl + 1, detail::mo_release);
    return true;
  }

  // Owner: removes the oldest task, or returns nullptr when empty.
  WEFT_HOST_DEVICE item pop() noexcept {
    std::uint32_t h = head().load(detail::mo_acquire);
    for (;;) {
      const std::uint32_t tl = tail().load(detail::mo_relaxed);
      if (h == tl) return nullptr;
      item t = slot(h).load(detail::mo_relaxed);
      if (head().compare_exchange_weak(h, h + 1, detail::mo_acq_rel, detail::mo_acquire)) return t;
    }
  }

  // Owner, when push failed: claims the older half into out[] (capacity/2 entries).
  // Returns how many were claimed; 0 when thieves emptied the queue meanwhile.
  WEFT_HOST_DEVICE std::uint32_t take_half_for_overflow(item* out) noexcept {
    return grab([out](std::uint32_t i, item t) { out[i] = t; }, /*from_owner=*/true, capacity());
  }

  // Thief: moves the older half of `victim` into this queue, which must be empty and
  // owned by the caller, and returns one of the stolen tasks to run at once (nullptr
  // when there was nothing). The stolen entries are written straight into our free
  // slots [tl, tl+n): nobody reads past our tail, so a retry may overwrite them.
  WEFT_HOST_DEVICE item steal_half_from(local_queue& victim) noexcept {
    const std::uint32_t tl = tail().load(detail::mo_relaxed);
    const std::uint32_t n = victim.grab([this, tl](std::uint32_t i, item t) { slot(tl + i).store(t, detail::mo_relaxed); },
                                        /*from_owner=*/false, capacity() / 2);
    if (n == 0) return nullptr;
    item first = slot(tl + n - 1).load(detail::mo_relaxed);
    if (n > 1) tail().store(tl + n - 1, detail::mo_release);
    return first;
  }

  // Approximate length; exact only when nobody is pushing or popping.
  WEFT_HOST_DEVICE std::uint32_t size_approx() const noexcept {
    auto* self = const_cast<local_queue*>(this);
    return self->tail().load(detail::mo_acquire) - self->head().load(detail::mo_acquire);
  }
  WEFT_HOST_DEVICE bool empty_approx() const noexcept { return size_approx() == 0; }

 private:
  // Claims the older half of [head, tail) (at most `limit`), handing each entry to
  // put(i, t) before the CAS that commits the claim; a failed CAS retries from scratch.
  template <class Put>
  WEFT_HOST_DEVICE std::uint32_t grab(Put&& put, bool from_owner, std::uint32_t limit) noexcept {
    std::uint32_t h = head().load(detail::mo_acquire);
    for (;;) {
      const std::uint32_t tl = tail().load(from_owner ? detail::mo_relaxed : detail::mo_acquire);
      std::uint32_t n = tl - h;
      if (n > capacity()) {  // a stale head against a newer tail: reload both
        h = head().load(detail::mo_acquire);
        continue;
      }
      n = n - n / 2;  // the older half, rounded up
      if (n > limit) n = limit;
      if (n == 0) return 0;
      for (std::uint32_t i = 0; i < n; ++i) put(i, slot(h + i).load(detail::mo_relaxed));
      if (head().compare_exchange_weak(h, h + n, detail::mo_acq_rel, detail::mo_acquire)) return n;
    }
  }

  WEFT_HOST_DEVICE detail::device_atomic<std::uint32_t> head() noexcept { return detail::device_atomic<std::uint32_t>(head_); }
  WEFT_HOST_DEVICE detail::device_atomic<std::uint32_t> tail() noexcept { return detail::device_atomic<std::uint32_t>(tail_); }
  WEFT_HOST_DEVICE detail::device_atomic<item> slot(std::uint32_t i) noexcept {
    return detail::device_atomic<item>(slots_[i & mask_]);
  }

  item* slots_ = nullptr;
  std::uint32_t mask_ = 0;
  std::uint32_t head_ = 0;
  std::uint32_t tail_ = 0;
};

}  // namespace weft::exec
