// weft/executor/device_bulk.hpp - how worker warps run the bulk work that tasks await.
//
// A lane's task posts a job (bulk.hpp -> device_submit_bulk) into its warp's staging
// area and parks. After the batch the warp handles its posted jobs (run_posted_bulk):
//   private  a job of at most bulk_private_chunks chunks runs right there, on this warp
//            alone. Its waiter was held RUNNING (action::hold: nobody else can wake it),
//            so the warp resumes it at once, in a batch of such tasks, skipping
//            begin_run and the rest of its loop (at most held_rounds times in a row,
//            then it goes round the loop with the task in its staging area, tagged so
//            that the next run still skips begin_run). No shared word is touched, and a
//            chain of small dependent steps stays on one warp.
//   inline   before any of that, a task that runs alone in its batch (its lane is the
//            batch's only one) runs a job of at most bulk_private_chunks element chunks
//            at once, inside its await, on the batch's 31 idle lanes, which wait in
//            serve_lone_task for it (lane rank r runs indices begin + r, + 31, ...).
//            The task's lane only waits: had it called the job too, from its own place
//            in the code, that call would run as a second, serialised pass. The task
//            does not suspend, so the step costs no trip through the trampoline and the
//            worker loop (a chain of small dependent steps from one task:
//            chained_bulk, dependent_decision). Only
//            when nothing else waits for the warp (its staging area and ring empty;
//            else the job goes the private way, after the batch), only bulk() (a
//            bulk_warps job's collectives want its lanes converged), and at most
//            inline_jobs_per_trip per trip round the loop: then the job goes the private
//            way and its task waits in the staging area for the next trip, so the warp
//            still polls, stops and looks at its queues (that trip makes all of its
//            looks, also those due only every 4th to 16th trip: worker_loop).
//   board    a larger job is copied into a free slot of the bulk board (device memory,
//            bulk_board_slots slots) and sleeping warps get wake tokens. Every warp
//            looks at the board at the top of each trip round its loop (help_bulk) and
//            takes chunks, one fetch_add each, up to bulk_claims_per_trip per trip, so
//            task batches still run in between. A full board: the job runs privately.
//
// Roles and words of a board slot (bulk_slot in device_layout.hpp)
//   busy       0 free; a poster takes it 0 -> 1 (CAS, acquire) and writes the job; the
//              warp that finishes the last chunk stores 0 (release).
//   claim      (chunks << 32) | next. The poster stores (chunks, 0) (release): that is
//              the publication. A claimer does fetch_add(1) (acq_rel) and owns chunk
//              `next` of the returned value if next < chunks; else it got nothing (the
//              extra increments are harmless: next stays far below 2^32). The closer
//              stores 0 before freeing the slot, so a claimer that looked at an old job
//              and adds late gets nothing, or a chunk of the next job that it then
//              legitimately owns: each (job, chunk) is handed out by exactly one RMW.
//   remaining  chunks not finished; fetch_sub(1) (acq_rel) after each chunk. The warp
//              that takes it to 0 closes the slot and wakes the waiter.
//   bulk_active  occupied slots, so that warps skip the board with one load when idle.
//   bulk_published  jobs published so far: each look at the board (help_bulk) records it
//              first (staging_area::bulk_seen), and a parked warp leaves its nap when it
//              moves. Not bulk_active: a job stays active until its last chunk *ends*, so
//              while the last chunks run every parked warp would leave its nap at once,
//              find no open chunk, and park again, in a loop of device-scope RMWs and
//              fences that took bandwidth from those very chunks. A job published before
//              the recorded count was seen by the look that recorded it (the count's
//              release increment, and the look's acquire fence when the count moved:
//              its chunks taken, or none open), and find_work looks once more before it
//              parks.
// The inline protocol (one warp; shared memory, the warp's staging area):
//   lone        lane 0 writes lone_batch_key before a batch of exactly one task while
//               the trip has inline jobs left (and 0 before any other batch), then
//               __syncwarp; the task's lane is the only one in batch_lanes.
//   inline_job  written by the task lane only: &inline_desc, before each barrier (1);
//               null, before its final barrier (R), when its run (run_and_settle) has
//               ended. inline_desc is the lane's copy of the job, and inline_fn of its
//               callable when that is trivially copyable and small (bulk.hpp): the
//               helpers' reads then stay in shared memory (in the frame, the first
//               read of each was an L2 round trip on the step's critical path).
//   barriers    the task lane: (1) (2) per job, then (R). Each helper: one __syncwarp at
//               the top of its loop (pairs with (1) or (R)), then, if inline_job is not
//               null, runs the job's chunks and one more (pairs with (2)). So the counts
//               match and every lane reads inline_job only between (1) and (2), or after
//               (R), when the task lane does not write it. (sm_70 and later let a full-
//               mask __syncwarp meet at different places in the code; this relies on it.)
//   memory      __syncwarp orders memory among the lanes that take part: the copies
//               (and the frame) before (1) for the helpers, their f(i) writes before (2)
//               for the task. Nothing leaves the SM, so no fence, and L1 stays valid.
//   cost        (H200; docs/benchmarks.md, thirteenth session) each full-mask __syncwarp
//               met at two places costs ~200 cycles against ~20 converged; a step is
//               still about half a suspension's cost.
//   f           must not use warp-wide operations (bulk.hpp): one in f would pair with
//               the task lane's (2) and the counts would drift apart.
//   servers     a job of 63 or more indices may instead go to the idle warps of the
//               block (device_mbar_share.hpp): the task lane alone hands it over through
//               two mbarriers and the helpers see no (1) or (2) for it.
// Invariants: the job's descriptor in a slot does not change from publication until
// `remaining` reaches 0, and a chunk is owned only through a successful claim, so every
// reader of the descriptor (after its claim) sees the job it claimed. The callable lives
// in the waiter's frame, which lives until the waiter resumes: after the last chunk.
// Memory orders: a chunk's writes (every lane's) are ordered before its remaining
// decrement by __syncwarp (memory ordering among the warp's lanes) and the acq_rel RMW;
// the last decrement acquires all the others; the wake (acq_rel on the task state)
// carries everything to the waiter. A private job wakes with wake_from_own_warp
// (relaxed): the waiter parked on this warp and every write was this warp's, ordered by
// __syncwarp, so no acquire is needed and the SM's L1 stays valid. Scope: device (the
// board is only seen by the GPU).
#pragma once
#include <cstdint>

#include "weft/detail/run.hpp"
#include "weft/executor/device_hooks.hpp"

#if WEFT_CUDA_COMPILE
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "weft's device executor needs sm_70 or later: inline bulk jobs meet __syncwarp at different places"
#endif
namespace weft::exec {

inline constexpr std::uint32_t bulk_claims_per_trip = 16;

__device__ inline detail::device_atomic<std::uint64_t> claim_of(bulk_slot& s) noexcept {
  return detail::device_atomic<std::uint64_t>(s.claim);
}

// Lane 0: copies j into a free slot and publishes it; -1 when every slot is taken.
__device__ inline int publish_bulk_lane0(device_sched& d, const detail::bulk_job& j, std::uint32_t start) noexcept {
  for (std::uint32_t k = 0; k < bulk_board_slots; ++k) {
    const std::uint32_t i = (start + k) % bulk_board_slots;
    bulk_slot& s = d.bulk_board[i];
    detail::device_atomic<std::uint32_t> busy(s.busy);
    std::uint32_t expected = 0;
    if (busy.load(detail::mo_relaxed) != 0 ||
        !busy.compare_exchange_strong(expected, 1, detail::mo_acquire, detail::mo_relaxed))
      continue;
    // Read before the publication: once it is out the job may run to its end, and its
    // task resume and free the frame that holds j.
    const std::uint32_t chunks = j.chunks;
    s.job = j;
    detail::device_atomic<std::uint32_t>(s.remaining).store(chunks, detail::mo_relaxed);
    claim_of(s).store(std::uint64_t{chunks} << 32, detail::mo_release);  // publication
    detail::device_atomic<std::uint32_t>(d.bulk_active).fetch_add(1, detail::mo_relaxed);
    // Release: a warp that reads this count, and fences (help_bulk), sees the claim word
    // and bulk_active written above.
    detail::device_atomic<std::uint32_t>(d.bulk_published).fetch_add(1, detail::mo_release);
    notify_many(d, chunks - 1 < 64 ? chunks - 1 : 64);
    return static_cast<int>(i);
  }
  return -1;
}

// Lane 0, after the warp finished one chunk of slot s: the last one closes the slot
// and wakes the waiter.
__device__ inline void finish_chunk_lane0(device_sched& d, bulk_slot& s) noexcept {
  if (detail::device_atomic<std::uint32_t>(s.remaining).fetch_sub(1, detail::mo_acq_rel) != 1) return;
  detail::task_header* waiter = s.job.waiter;
  claim_of(s).store(0, detail::mo_relaxed);  // closed: a late claimer gets nothing
  detail::device_atomic<std::uint32_t>(s.busy).store(0, detail::mo_release);
  detail::device_atomic<std::uint32_t>(d.bulk_active).fetch_sub(1, detail::mo_relaxed);
  detail::wake(waiter);
}

__device__ inline bool slot_open(device_sched& d, std::uint32_t i) noexcept {
  const std::uint64_t w = claim_of(d.bulk_board[i]).load(detail::mo_relaxed);
  return static_cast<std::uint32_t>(w) < static_cast<std::uint32_t>(w >> 32);
}

// Warp-collective: takes and runs chunks from the board, up to bulk_claims_per_trip.
// Returns true when it ran any. Records bulk_published first (st.bulk_seen: see above).
__device__ inline bool help_bulk(device_sched& d, staging_area& st, std::uint32_t id, std::uint32_t lane) noexcept {
  std::uint32_t active = 0, moved = 0;
  if (lane == 0) {  // the two loads go out together
    const std::uint32_t published = detail::device_atomic<std::uint32_t>(d.bulk_published).load(detail::mo_relaxed);
    active = detail::device_atomic<std::uint32_t>(d.bulk_active).load(detail::mo_relaxed);
    moved = published != st.bulk_seen;
    st.bulk_seen = published;
  }
  // A count that moved since the last look: every lane acquires (with the publisher's
  // release), so that this look sees those jobs' claim words and bulk_active, and a nap
  // may then wait for the count to move again. Unmoved (the busy case), no fence and no
  // L1 flush.
  if (__shfl_sync(full_mask, moved, 0) != 0) {
    detail::fence_device_acquire();
    if (lane == 0) active = detail::device_atomic<std::uint32_t>(d.bulk_active).load(detail::mo_relaxed);
  }
  if (__shfl_sync(full_mask, active, 0) == 0) return false;
  static_assert(bulk_board_slots == 2 * WEFT_WARP_SIZE, "help_bulk looks at two slots per lane");
  bool ran = false;
  for (std::uint32_t round = 0; round < bulk_claims_per_trip; ++round) {
    const std::uint32_t lo = __ballot_sync(full_mask, slot_open(d, lane));
    const std::uint32_t hi = __ballot_sync(full_mask, slot_open(d, lane + WEFT_WARP_SIZE));
    if ((lo | hi) == 0) break;
    const std::uint32_t mask = lo ? lo : hi, rot = id % WEFT_WARP_SIZE;  // spread warps over jobs
    const std::uint32_t turned = rot ? (mask >> rot) | (mask << (WEFT_WARP_SIZE - rot)) : mask;
    const std::uint32_t i = ((__ffs(turned) - 1 + rot) % WEFT_WARP_SIZE) + (lo ? 0 : WEFT_WARP_SIZE);
    bulk_slot& s = d.bulk_board[i];
    std::uint64_t old = 0;
    if (lane == 0) old = claim_of(s).fetch_add(1, detail::mo_acq_rel);
    old = __shfl_sync(full_mask, old, 0);
    const std::uint32_t c = static_cast<std::uint32_t>(old);
    if (c >= static_cast<std::uint32_t>(old >> 32)) continue;  // raced to the end: look again
    __syncwarp();  // every lane reads the descriptor after lane 0's claim (acquire)
    const detail::bulk_job j = s.job;
    j.run_chunk(j, c, lane, WEFT_WARP_SIZE);
    __syncwarp();  // all lanes' writes before lane 0's release below
    if (lane == 0) finish_chunk_lane0(d, s);
    ran = true;
  }
  return ran;
}

// The idle lanes of a lone batch (every lane but the task's): run the task's inline
// jobs, ranked 0..30 among themselves, until its run ends (the protocol above).
__device__ inline void serve_lone_task(staging_area& st, std::uint32_t lane) noexcept {
  const std::uint32_t rank = lane - (lanes_below(lane) & st.batch_lanes ? 1u : 0u);
  for (;;) {
    __syncwarp();  // pairs with the task lane's (1) or (R)
    const detail::bulk_job* j = st.inline_job;
    if (j == nullptr) return;
    for (std::uint32_t c = 0; c < j->chunks; ++c) j->run_chunk(*j, c, rank, WEFT_WARP_SIZE - 1);
    __syncwarp();  // (2): our calls' writes before the task goes on
  }
}

// The task lane of a lone batch, after its run: lets the helpers go (R).
__device__ inline void release_lone_helpers(staging_area& st) noexcept {
  st.inline_job = nullptr;
  __syncwarp();
}

// Warp-collective, after a batch: runs or publishes the jobs this warp's lanes posted.
// Returns, in lane k, the k-th held task whose job ran here (null in the other lanes):
// the caller resumes them at once, as a batch, without going round its loop.
__device__ inline detail::task_header* run_posted_bulk(device_sched& d, staging_area& st, std::uint32_t id,
                                                       std::uint32_t lane) noexcept {
  __syncwarp();  // the lanes' posts of this batch
  const std::uint32_t n = st.bulk_count;
  if (n == 0) return nullptr;
  detail::task_header* resume = nullptr;
  std::uint32_t held = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    detail::bulk_job* j = st.bulk_jobs[k];
    int slot = -1;
    if (lane == 0 && !j->held) slot = publish_bulk_lane0(d, *j, id);
    if (__shfl_sync(full_mask, slot, 0) >= 0) continue;  // the board has it now
    for (std::uint32_t c = 0; c < j->chunks; ++c) j->run_chunk(*j, c, lane, WEFT_WARP_SIZE);
    detail::task_header* w = j->waiter;  // j lives in the waiter's frame: read before it resumes
    const bool was_held = j->held;
    __syncwarp();  // every lane is done with *j and its writes are ordered before the hand-back
    if (was_held) {
      if (lane == held) resume = w;  // still RUNNING: this lane resumes it next
      ++held;
    } else if (lane == 0) {
      detail::wake_from_own_warp(w);  // the board was full
    }
  }
  __syncwarp();
  if (lane == 0) st.bulk_count = 0;
  __syncwarp();
  return resume;
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
