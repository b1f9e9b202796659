// weft/executor/device_io.hpp - the GPU side of the reactor's mailboxes: the drain duty.
//
// The protocol of a mailbox (rings, slots, words and their orders) is in
// weft/detail/mailbox.hpp and docs/mailbox.md; this file is who does the task side's
// share of it on the GPU, and how. All functions here are warp-collective.
//
// Roles
//   posters    any lane, in any warp (weft/detail/host_request.hpp: device_post). A
//              group of lanes posting together claims ring slots with one CAS; lanes
//              that find the ring full wait in the mailbox's overflow ring (device
//              memory, one claim for the group), or when that is full too on the
//              waiters stack. Either way the task stays parked: no lane spins.
//   drainer    one warp at a time per mailbox: whoever takes its drain_lock (a
//              try-lock; nobody waits for it). Worker 0 tries after every 4th batch
//              and never parks while requests are in flight; every warp that finds no
//              work tries too, so a long task on worker 0 does not hold the answers
//              back. The drainer delivers completions 32 at a time (lane i reads slot
//              i), queues the woken tasks (queue_woken), hands the slots back, and
//              publishes waiting requests: the waiters stack's first (serially: it is
//              the rare last resort, and the oldest), then the overflow ring's, 32 at a
//              time (publish_overflow).
// Invariants
//   * One drainer per mailbox at a time (the lock), so comp_next, the backlog and the
//     overflow ring's consumer side have a single owner; the lock's acquire (take) and
//     release (give back) hand them from one holder to the next.
//   * A delivered completion wakes its task exactly once (wake_needs_queue's RMW); the
//     task is queued by the drainer exactly when that RMW says it was idle.
//   * inflight counts requests posted and not yet delivered, so "inflight == 0" means
//     there is nothing to deliver and nothing waiting to be published: one L2 load
//     skips a mailbox.
// Scopes: mailbox words shared with the host are system scope (mailbox.hpp); the lock,
// inflight, the overflow ring and the inject queue are device scope.
#pragma once
#include <cstdint>

#include "weft/detail/mailbox.hpp"
#include "weft/detail/run.hpp"
#include "weft/executor/device_hooks.hpp"
#include "weft/executor/device_queues.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {

// Requests to the host reactor not yet answered (lane 0's view; device-memory loads).
__device__ inline bool io_inflight(const device_sched& d) noexcept {
  for (std::uint32_t b = 0; b < d.io.count; ++b)
    if (detail::device_atomic<std::uint32_t>(d.io.boxes[b].inflight).load(detail::mo_relaxed) != 0) return true;
  return false;
}

// The LIFO slot's size: staged tasks kept for the warp's next batch (flush_staging).
inline constexpr std::uint32_t lifo_keep = 8;

// The drainer, all lanes: queues the tasks its deliveries woke (each lane's non-null t).
// Up to lifo_keep stay in this warp's staging area (the next batch: one answer's
// latency stays on this warp); the rest go to an inject shard with one claim per 32,
// turning round the shards, and that many sleepers are woken. Keeping them all here
// made the drainer run them, and the completion rings waited for its next poll.
__device__ inline void queue_woken(device_sched& d, std::uint32_t lane, detail::task_header* t) noexcept {
  const std::uint32_t woken = __ballot_sync(full_mask, t != nullptr);
  if (woken == 0) return;
  staging_area& st = staging_of_this_warp();
  __syncwarp();  // earlier staging writes before the count is read
  const std::uint32_t staged = st.count;
  const std::uint32_t keep = staged < lifo_keep ? lifo_keep - staged : 0;
  const bool mine = t != nullptr && __popc(woken & lanes_below(lane)) < keep;
  if (mine) enqueue_from_lane(d, current_lane_ids(), t, /*may_fail=*/false);
  detail::task_header* out = mine ? nullptr : t;
  const std::uint32_t spread = __popc(__ballot_sync(full_mask, out != nullptr));
  if (spread == 0) return;
  std::uint32_t shard = 0;
  if (lane == 0) shard = st.stats.batches + st.stats.resumed;  // any value that moves on
  shard = __shfl_sync(full_mask, shard, 0);
  for (std::uint32_t k = 0; k < d.num_inject; ++k)
    if (warp_inject_push(inject_of(d, shard + k), lane, out)) {
      if (lane == 0) notify_many(d, spread);
      return;
    }
  if (out != nullptr) enqueue_from_lane(d, current_lane_ids(), out, /*may_fail=*/false);  // all full: wait
}

// The drainer, all lanes: publishes requests that wait in the mailbox's overflow ring,
// 32 per round while the request ring has room: lane 0 claims k ring tickets and pops k
// ops (one claim each), lane i publishes op i. The drain duty's holder is the ring's
// only consumer, so the k it saw waiting are there to pop (tail only grows; a cell not
// yet written is waited for in take(): its producer is between its claim and its write).
inline constexpr std::uint32_t overflow_rounds = 32;
__device__ inline void publish_overflow(detail::mailbox& m, std::uint32_t lane) noexcept {
  basic_inject_ring<detail::host_op> q(*m.overflow);
  for (std::uint32_t round = 0; round < overflow_rounds; ++round) {
    unsigned long long ticket = 0, first = 0;
    std::uint32_t n = 0;
    if (lane == 0) {
      const std::uint64_t waiting = q.size_approx();
      std::uint64_t t = 0, f = 0;
      if (waiting != 0) n = detail::mailbox_claim(m, waiting < WEFT_WARP_SIZE ? std::uint32_t(waiting) : WEFT_WARP_SIZE, &t);
      if (n != 0) q.claim_pop(n, &f);  // == n: see above
      ticket = t;
      first = f;
    }
    n = __shfl_sync(full_mask, n, 0);
    if (n == 0) return;
    ticket = __shfl_sync(full_mask, ticket, 0);
    first = __shfl_sync(full_mask, first, 0);
    if (lane < n) detail::mailbox_publish(m, ticket + lane, *q.take(first + lane));
  }
}

// The drain duty of one mailbox (weft/detail/mailbox.hpp), by whichever warp holds its
// drain_lock (all lanes call this). Lane 0 acquires comp_tail (one PCIe read), then
// lane i delivers completion first + i of each group of 32, so 32 answers cost one more
// round trip, not 32. Then lane 0 hands the slots back and the warp publishes requests
// that waited for ring space. (Handing the slots back one drain later, to keep the
// release's system-scope fence off an answer's path, measured 2-4 us slower per
// host_call round trip on an H200: the next poll paid for it instead, and came sooner.)
__device__ inline void drain_mailbox(device_sched& d, detail::mailbox& m, std::uint32_t lane) noexcept {
  unsigned long long first = 0, end = 0;
  if (lane == 0) {
    std::uint64_t f = 0;
    end = detail::mailbox_completions(m, &f);
    first = f;
  }
  first = __shfl_sync(full_mask, first, 0);
  end = __shfl_sync(full_mask, end, 0);
  if (first != end) {
    detail::fence_system_acquire();  // lane 0's acquire of comp_tail, for this lane's slot reads
    for (unsigned long long c = first; c < end; c += WEFT_WARP_SIZE) {
      detail::task_header* t = nullptr;
      if (c + lane < end) t = detail::mailbox_deliver_result(m.comps[(c + lane) & (m.comp_capacity - 1)]);
      queue_woken(d, lane, t);
    }
    __syncwarp();  // every lane's slot reads are done before lane 0 frees the slots
    if (lane == 0) detail::mailbox_retire(m, end, end - first);
  }
  // The waiters stack's requests first: they found the overflow ring full, so they are
  // the oldest; publishing the overflow ring first could starve them under overload.
  if (lane == 0 && (m.backlog_head != nullptr ||
                    detail::device_atomic<std::uint64_t>(m.waiters).load(detail::mo_relaxed) != 0))
    detail::mailbox_publish_waiters(m);
  publish_overflow(m, lane);
}

// Any warp, all lanes: drains each mailbox that has requests in flight and whose drain
// duty is free. The duty is a try-lock, so no warp waits for it, and a warp busy with a
// long task (worker 0 runs the host's root tasks) does not hold the answers back: idle
// warps poll here too (find_work). Acquire on taking it, release on giving it back: the
// drainer's own words (comp_next, the backlog) pass from one holder to the next.
// Skipped with one L2 load while nothing is in flight. Returns (in every lane) whether
// any mailbox had requests in flight when it looked.
__device__ inline bool poll_mailboxes(device_sched& d, std::uint32_t lane) noexcept {
  int any = 0;
  for (std::uint32_t b = 0; b < d.io.count; ++b) {
    detail::mailbox& m = d.io.boxes[b];
    int mine = 0;
    if (lane == 0 && detail::device_atomic<std::uint32_t>(m.inflight).load(detail::mo_relaxed) != 0) {
      any = 1;
      detail::device_atomic<std::uint32_t> lock(m.drain_lock);
      mine = lock.load(detail::mo_relaxed) == 0 && lock.exchange(1, detail::mo_acquire) == 0;
    }
    if (!__shfl_sync(full_mask, mine, 0)) continue;
    drain_mailbox(d, m, lane);
    __syncwarp();  // every lane's part of the duty is done before lane 0 gives it back
    if (lane == 0) detail::device_atomic<std::uint32_t>(m.drain_lock).store(0, detail::mo_release);
  }
  return __shfl_sync(full_mask, any, 0) != 0;
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
