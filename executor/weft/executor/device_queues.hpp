// weft/executor/device_queues.hpp - the device executor's queues.
//
// Two structures, both at device scope (shared by every warp of the GPU):
//
// inject_ring (one shard of the global inject queue; host-testable)
//   Roles: any lane may push (overflow of a full ring, a spawn or wake-up that found
//   its warp's staging area full); any warp may pop a batch.
//   Protocol: Dmitry Vyukov's bounded MPMC queue with a sequence number per cell,
//   extended to batches. Cell i starts with seq = i.
//     produce ticket p: claim [p, p+n) by CAS on tail (only when it leaves head + capacity
//       unpassed), then per cell wait until seq == p (its previous consumer is done),
//       write the task, store seq = p + 1 (RELEASE: the task and its frame are
//       published to the consumer's ACQUIRE load of seq).
//     consume ticket p: claim [p, p+n) by CAS on head (n <= tail - head), then per cell
//       wait until seq == p + 1 (its producer is done), read, store seq = p + capacity
//       (RELEASE: the read happens before the next producer's write).
//   The waits are short: they cover only the gap between another lane's claim and its
//   write of one cell. head/tail CASes are relaxed: they only hand out tickets; the
//   data is ordered by the per-cell seq words.
//   Full: push returns false (the caller decides: a spawn reports errc::queue_full, a
//   wake-up naps and retries, so it is never lost).
//
// warp_ring (a worker's local_queue driven by a whole warp)
//   The ring's protocol is local_queue's (see local_queue.hpp), with weaker orders on
//   the owner's side (warp_ring's top says why they suffice); here its steps are
//   spread over 32 lanes: lane 0 owns head/tail, lane i reads or writes slot base + i.
//   Lanes hand their slot accesses to lane 0 through __syncwarp, which orders memory
//   among the warp's lanes (CUDA guide, "Warp Synchronization Functions"); lane 0's
//   RELEASE store/CAS is cumulative, so slot writes made by any lane before the
//   __syncwarp are visible to whoever ACQUIREs the new tail, and slot reads made
//   before it happen before the owner reuses those slots.
//   All functions are warp-collective: every lane of the warp calls them, converged.
#pragma once
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/executor/device_layout.hpp"
#if !WEFT_DEVICE_PASS
#include <thread>  // inject_ring::nap on the host
#endif

namespace weft::exec {

// T: what the cells point at (the inject queue: task_header; a mailbox's overflow:
// host_op, weft/detail/host_request.hpp).
template <class T>
class basic_inject_ring {
 public:
  WEFT_HOST_DEVICE explicit basic_inject_ring(inject_shard& s) noexcept : s_(s) {}

  // Host-side set-up: `cells` holds `capacity` (a power of two) cells.
  WEFT_HOST_DEVICE static void init(inject_shard& s, inject_cell* cells, std::uint64_t capacity) noexcept {
    s.head = s.tail = 0;
    s.cells = cells;
    s.mask = capacity - 1;
    for (std::uint64_t i = 0; i < capacity; ++i) {
      cells[i].seq = i;
      cells[i].item = nullptr;
    }
  }

  // Claims n tickets for a producer; returns the first, or ~0 when there is no room.
  WEFT_HOST_DEVICE std::uint64_t claim_push(std::uint64_t n) noexcept {
    detail::device_atomic<std::uint64_t> tail(s_.tail), head(s_.head);
    std::uint64_t t = tail.load(detail::mo_relaxed);
    for (;;) {
      const std::uint64_t h = head.load(detail::mo_relaxed);
      if (h > t) {  // our tail is older than the head: consumers moved on; reload
        t = tail.load(detail::mo_relaxed);
        continue;
      }
      if (t + n - h > s_.mask + 1) return ~std::uint64_t{0};
      if (tail.compare_exchange_weak(t, t + n, detail::mo_relaxed, detail::mo_relaxed)) return t;
    }
  }
  // Fills the claimed cell for ticket p.
  WEFT_HOST_DEVICE void put(std::uint64_t p, T* t) noexcept {
    inject_cell& c = s_.cells[p & s_.mask];
    detail::device_atomic<std::uint64_t> seq(c.seq);
    while (seq.load(detail::mo_acquire) != p) nap();
    c.item = t;
    seq.store(p + 1, detail::mo_release);
  }
  WEFT_HOST_DEVICE bool push(T* t) noexcept {
    const std::uint64_t p = claim_push(1);
    if (p == ~std::uint64_t{0}) return false;
    put(p, t);
    return true;
  }

  // Claims up to `max` tickets for a consumer; *first gets the first. Returns how many.
  WEFT_HOST_DEVICE std::uint32_t claim_pop(std::uint32_t max, std::uint64_t* first) noexcept {
    detail::device_atomic<std::uint64_t> tail(s_.tail), head(s_.head);
    std::uint64_t h = head.load(detail::mo_relaxed);
    for (;;) {
      const std::uint64_t t = tail.load(detail::mo_relaxed);
      if (t <= h) return 0;
      const std::uint64_t n = t - h < max ? t - h : max;
      if (head.compare_exchange_weak(h, h + n, detail::mo_relaxed, detail::mo_relaxed)) {
        *first = h;
        return static_cast<std::uint32_t>(n);
      }
    }
  }
  // Empties the claimed cell for ticket p.
  WEFT_HOST_DEVICE T* take(std::uint64_t p) noexcept {
    inject_cell& c = s_.cells[p & s_.mask];
    detail::device_atomic<std::uint64_t> seq(c.seq);
    while (seq.load(detail::mo_acquire) != p + 1) nap();
    T* t = static_cast<T*>(c.item);
    seq.store(p + s_.mask + 1, detail::mo_release);
    return t;
  }
  WEFT_HOST_DEVICE T* pop() noexcept {
    std::uint64_t p;
    return claim_pop(1, &p) ? take(p) : nullptr;
  }

  WEFT_HOST_DEVICE std::uint64_t size_approx() const noexcept {
    auto& s = const_cast<inject_shard&>(s_);
    const std::uint64_t t = detail::device_atomic<std::uint64_t>(s.tail).load(detail::mo_relaxed);
    const std::uint64_t h = detail::device_atomic<std::uint64_t>(s.head).load(detail::mo_relaxed);
    return t > h ? t - h : 0;
  }

 private:
  // The wait for another claimant's cell write. On the host (tests) it yields: the
  // claimant may be a descheduled thread, and a spin would burn the slice it needs.
  WEFT_HOST_DEVICE static void nap() noexcept {
#if WEFT_DEVICE_PASS
    __nanosleep(20);
#else
    std::this_thread::yield();
#endif
  }
  inject_shard& s_;
};
using inject_ring = basic_inject_ring<detail::task_header>;

#if WEFT_CUDA_COMPILE

inline constexpr unsigned full_mask = 0xffffffffu;

__device__ inline std::uint32_t lanes_below(unsigned lane) noexcept { return (1u << lane) - 1u; }

struct warp_ring {
  using item = detail::task_header*;

  // Memory orders on the owner's side (the GPU's costs decide them: an acquire at device
  // scope drops the SM's whole L1, stack lines included, so every later load of the
  // batch, a spilled register or the next task's frame, then waits on L2):
  //   pop     relaxed head load and relaxed CAS. The owner only consumes slots it wrote
  //           itself (program order, __syncwarp), holding tasks this warp acquired when
  //           they arrived (steal_half's acquires, an inject pop, a wake-up's RMW, a
  //           mailbox answer's drain, a bulk job's last chunk, end_run_parked's fence:
  //           run.hpp lists them); thieves never write our slots, and the CAS decides,
  //           by value, who took which.
  //   push    the slots it fills last held entries below `head_seen`, a head value this
  //           warp loaded with ACQUIRE earlier (the thieves that took those entries read
  //           them before their release CAS, so before our reuse). Only when head_seen
  //           leaves too little room is head loaded again (acquire): about once per
  //           `capacity` pushes. head_seen lives in the warp's staging area (shared
  //           memory) and only grows; head_seen <= head always holds. Our own relaxed
  //           pop CASes are RMWs, so they continue the thieves' release sequences: the
  //           acquire reload synchronizes with every thief below the value it reads.
  //           steal_half, which also writes our slots, reloads head_seen first.
  //   length_hint  relaxed loads: a hint for decisions (look at the ring, wake a warp,
  //           how much room); every queue operation that follows does its own ordering.

  // The head, loaded with acquire: the owner's first head_seen.
  __device__ static std::uint32_t head_acquired(local_queue& q) noexcept { return q.head().load(detail::mo_acquire); }

  // Tail - head from relaxed loads (lane 0's view only; callers broadcast it).
  __device__ static std::uint32_t length_hint(local_queue& q) noexcept {
    return q.tail().load(detail::mo_relaxed) - q.head().load(detail::mo_relaxed);
  }

  // Lane 0 reads head and tail, and every lane gets lane 0's values: the lanes must
  // agree, since what follows is warp-collective.
  __device__ static void snapshot(local_queue& q, unsigned lane, detail::memory_order head_mo,
                                  detail::memory_order tail_mo, std::uint32_t& h, std::uint32_t& t) noexcept {
    h = t = 0;
    if (lane == 0) {
      h = q.head().load(head_mo);
      t = q.tail().load(tail_mo);
    }
    h = __shfl_sync(full_mask, h, 0);
    t = __shfl_sync(full_mask, t, 0);
  }

  // Owner: pops up to `max` (<= 32) of the oldest tasks: lane i < *n gets one.
  __device__ static item pop(local_queue& q, unsigned lane, std::uint32_t max, std::uint32_t* n_out) noexcept {
    for (;;) {
      std::uint32_t h, t;
      snapshot(q, lane, detail::mo_relaxed, detail::mo_relaxed, h, t);
      std::uint32_t n = t - h;
      if (n > max) n = max;
      *n_out = n;
      if (n == 0) return nullptr;
      const item it = lane < n ? q.slot(h + lane).load(detail::mo_relaxed) : nullptr;
      int ok = 0;
      if (lane == 0) ok = q.head().compare_exchange_strong(h, h + n, detail::mo_relaxed, detail::mo_relaxed);
      if (__shfl_sync(full_mask, ok, 0)) return it;
    }
  }

  // Owner: appends each lane's non-null `it`. False (nothing written) when they do not
  // fit; the caller makes room with pop() + the inject queue and calls again.
  // `head_seen`: the owner's acquired head (see the top of this struct).
  __device__ static bool push(local_queue& q, unsigned lane, item it, std::uint32_t& head_seen) noexcept {
    const std::uint32_t mask = __ballot_sync(full_mask, it != nullptr);
    if (mask == 0) return true;
    const std::uint32_t cnt = __popc(mask);
    std::uint32_t t = 0, h = 0;
    if (lane == 0) {
      t = q.tail().load(detail::mo_relaxed);  // ours
      h = head_seen;
      if (t - h + cnt > q.capacity()) head_seen = h = q.head().load(detail::mo_acquire);
    }
    h = __shfl_sync(full_mask, h, 0);
    t = __shfl_sync(full_mask, t, 0);
    if (t - h + cnt > q.capacity()) return false;
    if (it != nullptr) q.slot(t + __popc(mask & lanes_below(lane))).store(it, detail::mo_relaxed);
    __syncwarp();  // every lane's slot write before lane 0's release of the new tail
    if (lane == 0) q.tail().store(t + cnt, detail::mo_release);
    return true;
  }

  // Thief: moves the older half of `victim` (at most half our capacity) into `own`,
  // which must be empty. Returns how many were moved (0: nothing to take).
  // `head_seen` (own's, see the top): the stolen entries go into own's slots, so as for a
  // push, the thieves that emptied them must have read them first. Own's head is loaded
  // with acquire here, before any slot is written, and becomes head_seen; that also keeps
  // tail - head_seen small (a warp that only steals never pushes, and a stale head_seen
  // would let the 32-bit room check in push wrap after 2^32 stolen entries).
  __device__ static std::uint32_t steal_half(local_queue& own, local_queue& victim, unsigned lane,
                                             std::uint32_t& head_seen) noexcept {
    const std::uint32_t my_tail = own.tail().load(detail::mo_relaxed);
    if (lane == 0) head_seen = own.head().load(detail::mo_acquire);
    for (;;) {
      std::uint32_t h, t;
      snapshot(victim, lane, detail::mo_acquire, detail::mo_acquire, h, t);
      // Lane 0's acquires to every lane before they read the victim's slots: a shuffle
      // carries the values but is not documented to order memory; __syncwarp is.
      __syncwarp();
      std::uint32_t n = t - h;
      if (n > victim.capacity()) continue;  // a stale head against a newer tail
      n -= n / 2;
      if (n > own.capacity() / 2) n = own.capacity() / 2;
      if (n == 0) return 0;
      for (std::uint32_t i = lane; i < n; i += 32)
        own.slot(my_tail + i).store(victim.slot(h + i).load(detail::mo_relaxed), detail::mo_relaxed);
      __syncwarp();  // the slot reads/writes of every lane before lane 0's CAS (see top)
      int ok = 0;
      if (lane == 0) {
        ok = victim.head().compare_exchange_strong(h, h + n, detail::mo_acq_rel, detail::mo_acquire);
        if (ok) own.tail().store(my_tail + n, detail::mo_release);
      }
      if (__shfl_sync(full_mask, ok, 0)) return n;
    }
  }
};

// Pushes each lane's non-null `it` into `r` (warp-collective). False when it has no
// room for all of them (nothing pushed).
template <class T>
__device__ inline bool warp_inject_push(basic_inject_ring<T> r, unsigned lane, T* it) noexcept {
  const std::uint32_t mask = __ballot_sync(full_mask, it != nullptr);
  if (mask == 0) return true;
  unsigned long long p = 0;
  if (lane == 0) p = r.claim_push(__popc(mask));
  p = __shfl_sync(full_mask, p, 0);
  if (p == ~0ull) return false;
  if (it != nullptr) r.put(p + __popc(mask & lanes_below(lane)), it);
  return true;
}

// Pops up to `max` (<= 32) tasks from `r`: lane i < *n gets one (warp-collective).
template <class T>
__device__ inline T* warp_inject_pop(basic_inject_ring<T> r, unsigned lane, std::uint32_t max,
                                                       std::uint32_t* n_out) noexcept {
  unsigned long long p = 0;
  std::uint32_t n = 0;
  if (lane == 0) n = r.claim_pop(max, reinterpret_cast<std::uint64_t*>(&p));
  n = __shfl_sync(full_mask, n, 0);
  p = __shfl_sync(full_mask, p, 0);
  *n_out = n;
  return lane < n ? r.take(p + lane) : nullptr;
}

#endif  // WEFT_CUDA_COMPILE

}  // namespace weft::exec
