// weft/executor/device_worker.hpp - the loop every worker warp of the persistent kernel runs.
//
// One warp = one worker. Each trip round the loop (all functions here are
// warp-collective: the 32 lanes call them converged):
//   1. gather  up to 32 ready tasks in one queue operation per source, in this order:
//              the warp's staging area (tasks its lanes woke or spawned during the last
//              batch: tokio's LIFO slot, widened to a warp; at most 24 of them when the
//              ring also has work, so the ring cannot starve), then every 31st trip (and
//              every trip after a spent inline budget: `beat` in worker_loop; while the
//              staging area holds tasks, only when that trip is also a 4th one) the
//              inject queue, then the warp's own ring (one CAS on its head for the whole
//              batch), then the warp's home shard of the inject queue.
//   2. run     lane i resumes task i through the trampoline (detail::run_and_settle)
//              until it yields, parks or completes. Lanes diverge freely inside tasks.
//   3. settle  yielded tasks (and tasks woken while they ran) go back into the ring in
//              one warp-aggregated push (ballot + popc, one release of the tail). A full
//              ring first moves its 32 oldest tasks to the inject queue. Staged tasks
//              beyond the newest 8 move to the ring too, where other warps can steal them,
//              or to the inject queue when the ring is full (flush_staging; what fits
//              nowhere stays staged, up to 512: a warp never waits for room here).
//              A batch with nothing to requeue, no more than 8 staged and an empty ring
//              skips this step (needs_settle): a chain of small bulk steps, or tasks that
//              wake each other on this warp.
//   4. if the batch was empty (find_work): the reactor's answers (their tasks run at
//              once, in the lanes that delivered them), the other inject shards, then
//              search (steal) or park, below.
// Bulk work (device_bulk.hpp): before step 1 the warp takes chunks of jobs on the bulk
// board; after step 3 it runs (or publishes) the bulk jobs its lanes posted, and resumes
// the tasks held for the small ones at once (run_held_rounds), skipping steps 1 and 4.
//
// Searching and parking (tokio's worker.rs, adapted)
//   * At most max_searchers warps search at once (`searching`, device scope; relaxed:
//     a bound that publishes nothing, try_begin_search). A searcher looks at 128 rings
//     from a random start, 32 per step (lane i checks one), steals half of the first one
//     holding steal_min or more, and checks inject shards 0-31 (every shard is looked at
//     by pop_other_shards and register_sleeper before a warp parks).
//     The look round after a nap that ended without a token (steal(c, 32) in find_work)
//     is not counted in `searching`: warps that parked together may look round together.
//   * A warp that finds nothing parks: lane 0 adds itself to `sleepers` (seq_cst) and
//     re-checks the inject queue (the Dekker pair with notify's fence), then naps with
//     __nanosleep, doubling from 256 ns to park_max_ns (home_park_max_ns while it is home
//     to pinned tasks not yet completed), until it takes a wake token, the
//     executor stops, or 1 ms passes (then it looks round once, cheaply, and naps again).
//     A parked warp reads about seven L2-resident words per nap (tokens, stop, timers,
//     bulk_published, inbox, reclaim epoch; worker 0 also the host's ring over PCIe):
//     idle costs almost no bandwidth.
//   * notify: when a batch leaves four or more tasks in a ring (more than its warp needs
//     soon), when a steal took four or more, and on every push into the inject queue,
//     lane 0 grants one wake token if some warp sleeps (never more tokens than
//     sleepers). Each woken warp steals half and may wake the next, so work fans out
//     in a doubling wave. A missed token costs latency (<= 1 ms), never a task: a ring
//     is always drained by its owner.
//   * A warp that finds nothing, before it searches, serves a blockmate's lone task if
//     that task hands out inline bulk jobs (device_mbar_share.hpp); a parked warp leaves
//     its nap for it. It serves until ~20 us without a job or until it is wanted elsewhere.
//   * Frame-pool reclaim (device_frames.hpp): when a lane found the pool dry, each warp
//     flushes its lanes' frame caches at its next idle trip or 16th busy trip (or the
//     trip after a spent inline budget, as for every "Nth trip" here); a parked
//     warp leaves its nap for it.
//   * Pinned tasks (weft::spawn_pinned): another warp that takes one hands it to its
//     home's inbox (device_worker::inbox). A warp stages its inbox's tasks at the top of
//     find_work, every 16th busy trip, and leaves its nap for them.
//   * Worker 0 also polls the host: the stop flag and the submission ring (pinned
//     memory, system scope), every 16th trip (and the trip after a lone task spent its
//     inline budget: at most inline_jobs_per_trip steps of a chain) and on every nap while parked.
//   * The reactor's completion rings (device_io.hpp): worker 0 after every 4th batch,
//     and any warp that finds nothing to run; worker 0 does not park while requests
//     are in flight, so someone always polls.
//
// Termination: the host's stop flag is mirrored into `stop` (device scope); each warp
// leaves the loop at the end of its current batch, or at its next nap. Tasks still
// queued or parked are destroyed afterwards by the teardown kernels (device_program.hpp).
//
// Forward progress needs every worker warp resident at once: a task parked in one warp
// may only be woken by a task queued in another warp's staging area, which only that
// warp runs. The kernel is therefore launched cooperatively (the launch fails rather
// than leaving a block waiting for a slot).
#pragma once
#include <cstdint>

#include "weft/detail/mailbox.hpp"
#include "weft/detail/run.hpp"
#include "weft/executor/device_bulk.hpp"
#include "weft/executor/device_mbar_share.hpp"
#include "weft/executor/device_hooks.hpp"
#include "weft/executor/device_io.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {

struct worker_ctx {
  device_sched& d;
  device_worker& w;
  staging_area& st;  // this warp's, in shared memory
  std::uint32_t id;
  std::uint32_t lane;
};

__device__ inline std::uint32_t next_random(std::uint32_t& s) noexcept {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

// Moves lanes [0, n) of `src` to lanes [at, at + n) of `dst`.
__device__ inline detail::task_header* place(detail::task_header* dst, detail::task_header* src, std::uint32_t at,
                                             std::uint32_t n, std::uint32_t lane) noexcept {
  auto* moved = reinterpret_cast<detail::task_header*>(
      __shfl_sync(full_mask, reinterpret_cast<unsigned long long>(src), (lane - at) & 31u));
  return (lane >= at && lane < at + n) ? moved : dst;
}

// Worker 0, lane 0: mirror the host's stop flag, create the roots the host submitted.
// Every word here is in pinned host memory, a PCIe round trip (~1.5 us on an H200) per
// dependent read, so the reads go out in as few rounds as the protocol allows: the stop
// flag beside the next slot's seq (acquire: it publishes the slot); then the slot's
// fields (and, inside `create`, its payload); and the seq of the slot after it is read
// before the root is created (relaxed: a hint that it is there too), not after it. A
// poll that finds one submission then waits for three rounds of reads where it waited
// for five (the stop flag, the seq, the fields, the payload, the next seq, each after
// the last), and an empty poll for one where it waited for two. A hint that
// says "not there yet" ends the poll: a submission that lands meanwhile is created at the
// next poll (worker 0's next nap, or within 16 trips while it is busy).
// (A copy of the slot read in one round, fields and payload together, measured slower:
// its 224 bytes took the worker kernel's stack frame from 208 to 496 bytes, and
// yield_many fell 44 %, thirty-fifth session.)
__device__ inline void poll_host(device_sched& d) noexcept {
  host_control* hc = d.control;
  const std::uint32_t stop = detail::system_atomic<std::uint32_t>(hc->stop).load(detail::mo_relaxed);
  std::uint64_t t = d.submissions_seen;
  std::uint64_t seq = detail::system_atomic<std::uint64_t>(hc->ring[t % submission_ring_size].seq).load(detail::mo_acquire);
  if (stop) detail::device_atomic<std::uint32_t>(d.stop).store(1, detail::mo_relaxed);
  while (seq == t + 1) {
    submission& s = hc->ring[t % submission_ring_size];
    const std::uint64_t next_hint =
        detail::system_atomic<std::uint64_t>(hc->ring[(t + 1) % submission_ring_size].seq).load(detail::mo_relaxed);
    s.create(&d, s.payload, s.completion, s.home);  // reads the payload before the slot is freed
    detail::system_atomic<std::uint64_t>(s.seq).store(t + submission_ring_size, detail::mo_release);
    d.submissions_seen = ++t;
    if (next_hint != t + 1) return;
    seq = detail::system_atomic<std::uint64_t>(hc->ring[t % submission_ring_size].seq).load(detail::mo_acquire);
  }
}

// Lane 0: wakes the sleepers whose deadlines passed (into this warp's staging area).
// Out of line: rarely taken, and its locals would cost the kernel registers.
__device__ inline __attribute__((noinline)) void poll_timers_slow(device_sched& d) noexcept {
  detail::task_header* due[8];
  const std::uint32_t n = device_timers(d).take_due(due, 8);
  for (std::uint32_t i = 0; i < n; ++i) detail::wake(due[i]);
}
__device__ inline void poll_timers(device_sched& d) noexcept {
  const std::uint64_t next = detail::device_atomic<std::uint64_t>(d.timer_next).load(detail::mo_relaxed);
  if (next != ~std::uint64_t{0} && next <= globaltimer_ns()) poll_timers_slow(d);  // no clock read when idle
}

// Lane i's view of inject shards first + i + 32 r, r < rounds (indices wrap round the
// shards; a shard past `count` reads as empty): bit r set when that shard has tasks.
// Every load is issued before any length is looked at, 8 rounds at a time, so the
// sweep waits for about one memory latency per 256 shards (a serial look by one lane
// cost one latency per shard: ~100 us per idle trip for 131 shards on an H200).
inline constexpr std::uint32_t sweep_group = 8;
__device__ inline std::uint32_t busy_shards(const device_sched& d, std::uint32_t first, std::uint32_t count,
                                            std::uint32_t lane) noexcept {
  const std::uint32_t num = d.num_inject;
  const std::uint32_t rounds = (count + WEFT_WARP_SIZE - 1) / WEFT_WARP_SIZE;  // <= 32
  std::uint32_t busy = 0;
  for (std::uint32_t r0 = 0; r0 < rounds; r0 += sweep_group) {
    std::uint64_t head[sweep_group], tail[sweep_group];
#pragma unroll
    for (std::uint32_t k = 0; k < sweep_group; ++k) {
      const std::uint32_t at = min(lane + WEFT_WARP_SIZE * (r0 + k), count - 1);  // in range: loaded, masked below
      inject_shard& sh = d.inject[(first + at) % num];
      tail[k] = detail::device_atomic<std::uint64_t>(sh.tail).load(detail::mo_relaxed);
      head[k] = detail::device_atomic<std::uint64_t>(sh.head).load(detail::mo_relaxed);
    }
#pragma unroll
    for (std::uint32_t k = 0; k < sweep_group; ++k)
      if (lane + WEFT_WARP_SIZE * (r0 + k) < count && tail[k] > head[k]) busy |= 1u << (r0 + k);
  }
  return busy;
}

// Nothing local: looks at every other inject shard at once (busy_shards) and pops from
// the nearest (in the order id + 1, id + 2, ...) that has tasks.
__device__ inline detail::task_header* pop_other_shards(worker_ctx& c, std::uint32_t* n_out) noexcept {
  const std::uint32_t others = c.d.num_inject - 1;  // < 32 * 32 (device_runtime.cpp)
  const std::uint32_t rounds = (others + WEFT_WARP_SIZE - 1) / WEFT_WARP_SIZE;
  const std::uint32_t busy = busy_shards(c.d, c.id + 1, others, c.lane);  // bit r: shard id + 1 + lane + 32 r
  for (std::uint32_t r = 0; r < rounds; ++r) {
    for (std::uint32_t lanes = __ballot_sync(full_mask, (busy >> r) & 1u); lanes != 0; lanes &= lanes - 1) {
      const std::uint32_t s = 1 + static_cast<std::uint32_t>(__ffs(lanes) - 1) + WEFT_WARP_SIZE * r;
      detail::task_header* it = warp_inject_pop(inject_of(c.d, c.id + s), c.lane, WEFT_WARP_SIZE, n_out);
      if (*n_out != 0) return it;  // another warp may have emptied it since: try the next
    }
  }
  *n_out = 0;
  return nullptr;
}

// Step 1. Returns this lane's task (or null); *n is the batch size. The ring's and the
// home inject shard's lengths are read together (independent loads, one latency), so
// the sources that are empty cost nothing more.
__device__ inline detail::task_header* gather(worker_ctx& c, std::uint32_t trip, std::uint32_t* n_out) noexcept {
  __syncwarp();  // staging writes of the last batch are visible to every lane
  detail::task_header* mine = nullptr;
  const std::uint32_t staged = c.st.count;
  const inject_ring home = inject_of(c.d, c.id);
  // Every decision below must be the same in all 32 lanes (the queue operations are
  // warp-collective), so the lengths are lane 0's loads, broadcast.
  std::uint32_t ring_len = 0, inject_len = 0;
  const bool look_inject = staged == 0 || trip % 4 == 0;  // keep the LIFO hop short
  if (c.lane == 0) {
    ring_len = c.st.ring_empty ? 0 : warp_ring::length_hint(c.w.ring);
    inject_len = look_inject && home.size_approx() != 0;
  }
  const bool saw_empty_ring = ring_len == 0;  // lane 0's view; recorded below
  ring_len = __shfl_sync(full_mask, ring_len, 0);
  inject_len = __shfl_sync(full_mask, inject_len, 0);
  const std::uint32_t take_staged = min(staged, ring_len ? 24u : 32u);
  if (c.lane < take_staged) mine = c.st.slots[staged - 1 - c.lane];
  __syncwarp();  // every lane has read the staging words above before lane 0 writes them
  if (c.lane == 0) c.st.count = staged - take_staged;
  if (c.lane == 0 && saw_empty_ring) c.st.ring_empty = 1;  // stays empty until our next push
  std::uint32_t n = take_staged, k = 0;
  if (n < 32 && inject_len != 0 && trip % 31 == 0) {  // fairness: the inject queue first
    detail::task_header* it = warp_inject_pop(home, c.lane, 32 - n, &k);
    mine = place(mine, it, n, k, c.lane);
    n += k;
    if (c.lane == 0) c.st.stats.injected += k;
  }
  if (n < 32 && ring_len != 0) {
    const std::uint32_t want = 32 - n;
    detail::task_header* it = warp_ring::pop(c.w.ring, c.lane, want, &k);
    mine = place(mine, it, n, k, c.lane);
    n += k;
    if (c.lane == 0 && k < want) c.st.ring_empty = 1;  // drained (thieves only take more)
  }
  if (n < 32 && inject_len != 0) {  // fill the batch: the inject queue balances load
    detail::task_header* it = warp_inject_pop(home, c.lane, 32 - n, &k);
    mine = place(mine, it, n, k, c.lane);
    n += k;
    if (c.lane == 0) c.st.stats.injected += k;
  }
  *n_out = n;
  return mine;
}

// Puts each lane's non-null `it` into the staging area when all of them fit (warp-
// collective); false, and nothing staged, when they do not.
__device__ inline bool stage_all(worker_ctx& c, detail::task_header* it, std::uint32_t mask) noexcept {
  __syncwarp();  // every lane reads the same count
  const std::uint32_t staged = c.st.count;
  if (staged + __popc(mask) > staging_capacity) return false;
  if (it != nullptr) c.st.slots[staged + __popc(mask & lanes_below(c.lane))] = it;
  __syncwarp();  // every lane has read the count before lane 0 moves it
  if (c.lane == 0) c.st.count = staged + __popc(mask);
  __syncwarp();
  return true;
}

// Pushes each lane's non-null `it` into the warp's ring. A full ring first moves its 32
// oldest tasks to an inject shard (where every warp can take them). When every shard is
// full too, those go back into the ring and `it` goes to the staging area (this warp runs
// it soon), or, when that is full as well, onto the warp's inbox (no bound; staged again
// within 16 trips): the warp never waits for room that only its own next batches might
// make (one worker warp; until the thirty-sixth session it napped and retried here).
// (Spawns leave staging_reserve slots free for this: enqueue_from_lane.)
__device__ inline void push_to_ring(worker_ctx& c, detail::task_header* it) noexcept {
  const std::uint32_t mask = __ballot_sync(full_mask, it != nullptr);
  if (mask == 0) return;
  if (c.lane == 0) c.st.ring_empty = 0;
  for (unsigned spins = 0; !warp_ring::push(c.w.ring, c.lane, it, c.st.ring_head_seen); ++spins) {
    std::uint32_t k = 0;
    detail::task_header* old = warp_ring::pop(c.w.ring, c.lane, 32, &k);
    if (warp_inject_push_any(c.d, c.id + spins, c.lane, old)) {  // each shard tried once
      if (c.lane == 0) notify_one(c.d);
      continue;
    }
    warp_ring::push(c.w.ring, c.lane, old, c.st.ring_head_seen);  // room: these k just left it, and only this warp pushes
    if (stage_all(c, it, mask)) return;
    if (it != nullptr) push_inbox(c.d, c.id, it);
    return;
  }
}

// Keeps the newest `lifo_keep` staged tasks for the next batch (the LIFO slot) and
// moves the older ones where other warps can take them: a task that spawns many
// children must not keep them all to its own warp. First into the ring, as far as it
// has room (thieves steal from there); then, 32 at a time, into the warp's inject shard
// while that has room. What fits in neither stays staged, oldest first, and leaves in
// later batches: never wait for room here, since with one worker, or every queue
// full, only this warp's next batches make room (a spawn storm must not hang the warp).
__device__ inline void flush_staging(worker_ctx& c) noexcept {
  __syncwarp();  // the lanes' staging writes of this batch
  const std::uint32_t staged = c.st.count;
  if (staged <= lifo_keep) return;
  const std::uint32_t excess = staged - lifo_keep;
  std::uint32_t room = 0;
  if (c.lane == 0) room = c.w.ring.capacity() - warp_ring::length_hint(c.w.ring);  // a lower bound: thieves only free room
  room = __shfl_sync(full_mask, room, 0);
  const std::uint32_t to_ring = min(excess, room);
  for (std::uint32_t base = 0; base < to_ring; base += 32)  // fits: no overflow path is taken
    push_to_ring(c, base + c.lane < to_ring ? c.st.slots[base + c.lane] : nullptr);
  std::uint32_t moved = to_ring;
  while (moved < excess) {
    const std::uint32_t n = min(32u, excess - moved);
    if (!warp_inject_push(inject_of(c.d, c.id), c.lane, c.lane < n ? c.st.slots[moved + c.lane] : nullptr)) break;
    if (c.lane == 0) notify_one(c.d);
    moved += n;
  }
  // Slide the rest down to slot 0 (read a chunk, then write it: the write range of a
  // chunk lies below its read range or overlaps only its own).
  const std::uint32_t left = staged - moved;
  for (std::uint32_t base = 0; base < left; base += 32) {
    detail::task_header* t = base + c.lane < left ? c.st.slots[moved + base + c.lane] : nullptr;
    __syncwarp();
    if (base + c.lane < left) c.st.slots[base + c.lane] = t;
    __syncwarp();
  }
  if (c.lane == 0) c.st.count = left;
  __syncwarp();
}

// Whether the task that ran asked to go back into a queue (a yield, or a wake-up that
// came while it ran).
__device__ inline bool requeues(detail::after_run r) noexcept {
  return r == detail::after_run::requeue_back || r == detail::after_run::requeue_now;
}

// The fewest tasks a ring must hold to be stolen from, and to wake a sleeper for (settle):
// a ring holds what its warp's staging area spilled, and its owner's next batch (32 lanes)
// takes a few at once, so a thief taking one to three of them spreads the work over more
// warps in smaller batches. With thieves taking from any non-empty ring, yield_many 1M x 0
// (spawn and join) ran ~6 % slower (forty-third session, docs/benchmarks.md). What thieves
// leave is never lost: the owner's next trip takes it. It waits for that trip, though: behind
// a batch that runs long (a task computing without suspending, an in-place wait of up to
// 20 us), up to steal_min - 1 ring tasks wait too, where a thief would have taken them.
inline constexpr std::uint32_t steal_min = 4;

// Step 3: requeue what this lane's task asked for, aggregated over the warp, then
// spill the staging area beyond the LIFO slot into the ring or the inject queue.
__device__ inline void settle(worker_ctx& c, detail::task_header* t, detail::after_run r) noexcept {
  push_to_ring(c, requeues(r) ? t : nullptr);
  flush_staging(c);
  // Enough to share? Only worth a look when this batch put something in the ring.
  if (c.lane == 0 && !c.st.ring_empty && warp_ring::length_hint(c.w.ring) >= steal_min) notify_one(c.d);
}

// Whether settle has anything to do after a batch: a lane's task asked to be requeued,
// the staging area holds more than the LIFO slot keeps, or the ring may hold tasks (then
// settle's notify check runs, as it did after every batch). A chain of small bulk steps,
// or tasks that wake each other on this warp (at most lifo_keep staged), with an empty
// ring, skips it.
__device__ inline bool needs_settle(worker_ctx& c, detail::after_run r) noexcept {
  __syncwarp();  // the lanes' staging writes of this batch
  return __any_sync(full_mask, requeues(r)) || c.st.count > lifo_keep || !c.st.ring_empty;
}

// `searching` only bounds how many warps search at once: nothing is published through it
// (the steals and the wake tokens order their own data), so its RMWs are relaxed, and a
// warp that finds the bound reached gives up at once. An add that overshoots is undone,
// so at most max_searchers warps hold a claim. (Until the forty-third session this was
// an acq_rel CAS loop: each retry a device-scope fence, the CAS and an L1 invalidation
// for the whole SM, and at full occupancy a call retried ~155 times on average in
// spawn_many, 49.5M retries per 40M tasks: docs/benchmarks.md.)
__device__ inline bool try_begin_search(worker_ctx& c) noexcept {
  int ok = 0;
  if (c.lane == 0) {
    detail::device_atomic<std::uint32_t> s(c.d.searching);
    if (s.load(detail::mo_relaxed) < c.d.max_searchers) {
      ok = s.fetch_add(1, detail::mo_relaxed) < c.d.max_searchers;
      if (!ok) s.fetch_sub(1, detail::mo_relaxed);
    }
  }
  return __shfl_sync(full_mask, ok, 0);
}

__device__ inline void end_search(worker_ctx& c, bool found) noexcept {
  if (c.lane != 0) return;
  const std::uint32_t before = detail::device_atomic<std::uint32_t>(c.d.searching).fetch_sub(1, detail::mo_relaxed);
  if (found && before == 1) notify_one(c.d);  // the last searcher found work: wake the next
}

// Steals from up to `victims` rings (32 per step) and the inject queue. True: work found.
__device__ inline bool steal(worker_ctx& c, std::uint32_t victims) noexcept {
  const std::uint32_t n = c.d.num_workers;
  std::uint32_t start = 0;
  if (c.lane == 0) start = next_random(c.w.rng) % n;
  start = __shfl_sync(full_mask, start, 0);
  for (std::uint32_t base = 0; base < victims && base < n; base += 32) {
    const std::uint32_t v = (start + base + c.lane) % n;
    const bool has = v != c.id && base + c.lane < n && warp_ring::length_hint(c.d.workers[v].ring) >= steal_min;
    const std::uint32_t mask = __ballot_sync(full_mask, has);
    if (mask == 0) continue;
    const std::uint32_t victim = __shfl_sync(full_mask, v, __ffs(mask) - 1);
    const std::uint32_t got = warp_ring::steal_half(c.w.ring, c.d.workers[victim].ring, c.lane, c.st.ring_head_seen);
    if (got != 0) {
      if (c.lane == 0) {
        c.st.ring_empty = 0;
        c.st.stats.stolen += got;
        if (got >= 4) notify_one(c.d);  // more than one batch's share: fan out further
      }
      return true;
    }
  }
  return __any_sync(full_mask, c.lane < c.d.num_inject && inject_of(c.d, c.lane).size_approx() != 0);
}

// Registers this warp as a sleeper, then looks at every inject shard (busy_shards: all
// lanes, every load issued before any is looked at). `true` when
// one has tasks. The look comes after the registration (lane 0's seq_cst RMW, ordered
// before every lane's loads by __syncwarp and each lane's fence): a pusher that missed
// us in `sleepers` at its look after its fence has its push seen here. (Its first,
// unfenced look may miss us without that: notify_many says why that stays.)
__device__ inline bool register_sleeper(worker_ctx& c) noexcept {
  if (c.lane == 0) detail::device_atomic<std::uint32_t>(c.d.sleepers).fetch_add(1, detail::mo_seq_cst);
  __syncwarp();
  detail::fence_device_seq_cst();  // pairs with notify_one's fence: one of us sees the other
  return __any_sync(full_mask, busy_shards(c.d, 0, c.d.num_inject, c.lane) != 0);
}

// The longest nap of a warp that is home to pinned tasks not yet completed
// (device_worker::pinned_live). A wake-up of such a task goes to the home's inbox, which
// the parked home reads once per nap; no wake token can reach it sooner (a token wakes
// any sleeper, not the home). With park_max_ns (100 us by default then) as the bound, a
// pinned server whose warp had parked answered up to 100 us late. 2 us costs such a warp
// about seven L2-resident loads per 2 us while it is idle: a pinned task parked on every
// warp cost a copy kernel beside the runtime nothing measurable (idle_cost_pinned_homes).
// Worker 0 keeps its own cap, host_poll_max_ns below.
inline constexpr std::uint32_t home_park_max_ns = 2000;

// Worker 0's longest nap (or park_max_ns when that is shorter). Each of its naps polls
// the host's submission ring (poll_host, over PCIe), so a root the host submits to an
// idle runtime (block_on, rt.spawn) waits for the rest of a nap before it is created.
// Until the thirty-fifth session the cap was min(20 us, park_max_ns), 10 us by default,
// and block_on of a trivial root on an idle H200 took 22-29 us; with 1 us and
// poll_host's fewer rounds of reads it takes 16-17 us (the cap alone: 18-20 us). Worker 0's naps, with their looks, then come ~5.6 us apart (measured: the
// looks' memory and PCIe latency is most of it), and a copy kernel beside an idle
// runtime kept the same share of its solo speed (idle_cost). Other warps still nap up
// to park_max_ns.
inline constexpr std::uint32_t host_poll_max_ns = 1000;

// Lane 0 naps until woken (after register_sleeper); `true` when a wake token (not a
// timeout) ended the nap, or `woke` was already true. The nap ends within about 1 ms by
// %globaltimer (then find_work looks round once): a count of the naps asked for would
// miss sleeps that run long, and the looks between them (worker 0's, ~5 us each).
__device__ inline bool park_lane0(worker_ctx& c, bool woke) noexcept {
  device_sched& d = c.d;
  detail::device_atomic<std::uint32_t> sleepers(d.sleepers), tokens(d.wake_tokens), stop(d.stop);
  // Read once per park: a pinned spawn to this warp while it naps pushes to its inbox,
  // which ends the nap (below), and the next park reads the new count.
  const bool home = detail::device_atomic<std::uint32_t>(c.w.pinned_live).load(detail::mo_relaxed) != 0;
  // Worker 0 polls the host on each nap (host_poll_max_ns); park_max_ns bounds every nap.
  const std::uint32_t cap = min(c.id == 0 ? host_poll_max_ns : home ? home_park_max_ns : d.park_max_ns, d.park_max_ns);
  std::uint32_t ns = 256;
  const std::uint64_t start = globaltimer_ns();
  std::uint64_t slept = 0;
  while (!woke && !stop.load(detail::mo_relaxed) && slept < 1000000) {
    std::uint32_t tk = tokens.load(detail::mo_relaxed);
    if (tk != 0 && tokens.compare_exchange_strong(tk, tk - 1, detail::mo_acq_rel, detail::mo_relaxed)) woke = true;
    if (woke) break;
    if (c.id == 0) poll_host(d);
    poll_timers(d);
    if (c.st.count != 0) break;  // the poller created a root or woke a sleeper here
    if (c.id == 0 && io_inflight(d)) break;  // a request was posted: worker 0 drains, not naps
    if (detail::device_atomic<std::uint32_t>(d.bulk_published).load(detail::mo_relaxed) != c.st.bulk_seen)
      break;  // a bulk job published since the last look at the board: chunks to take
    if (share_calls(c.id)) break;  // a blockmate's lone task hands out its inline jobs
    if (detail::device_atomic<std::uint64_t>(c.w.inbox).load(detail::mo_relaxed) != 0) break;  // pinned here
    if (detail::device_atomic<std::uint32_t>(d.reclaim_epoch).load(detail::mo_relaxed) != c.st.reclaim_seen)
      break;  // a lane found the frame pool dry: flush the caches (worker_loop)
    __nanosleep(ns);
    slept = globaltimer_ns() - start;
    ns = ns * 2 > cap ? cap : ns * 2;
  }
  sleepers.fetch_sub(1, detail::mo_relaxed);
  ++c.st.stats.parks;
  c.st.stats.napped_ns += slept;
  return woke;
}

// Stages pinned tasks from this warp's inbox (take_inbox_lane0); true, in every lane,
// when it staged any.
__device__ inline bool take_inbox(worker_ctx& c) noexcept {
  __syncwarp();  // the lanes' staging writes of the last batch before lane 0 reads the count
  std::uint32_t n = 0;
  if (c.lane == 0) n = take_inbox_lane0(c.d, c.st, c.id);
  n = __shfl_sync(full_mask, n, 0);
  __syncwarp();  // lane 0's staging writes before any lane reads them
  return n != 0;
}

// Whether the warp's staging area holds tasks (lane 0's count, broadcast). The __syncwarp
// orders the lanes' staging writes (lane 0's polls, deliveries) before lane 0's read.
__device__ inline bool has_staged(worker_ctx& c) noexcept {
  __syncwarp();
  return __shfl_sync(full_mask, c.st.count, 0) != 0;
}

// Whether the warp's staging area or ring holds tasks (lane 0's view, broadcast).
__device__ inline bool has_local_work(worker_ctx& c) noexcept {
  __syncwarp();  // the lanes' staging writes of this batch
  int any = 0;
  if (c.lane == 0) any = c.st.count != 0 || !c.st.ring_empty;
  return __shfl_sync(full_mask, any, 0) != 0;
}

__device__ inline bool stopping(worker_ctx& c) noexcept {
  std::uint32_t s = 0;
  if (c.lane == 0) s = detail::device_atomic<std::uint32_t>(c.d.stop).load(detail::mo_relaxed);
  return __shfl_sync(full_mask, s, 0) != 0;
}

// Worker 0 with nothing to run and requests in flight polls their answers up to
// answer_polls times back to back (await_answers: one PCIe read each, ~1.1 us on an
// H200) before it looks at the host and its timers, and it never parks: the answers'
// latency is what the reactor's users wait on, and a parked warp naps up to park_max_ns.
// Other warps search and steal meanwhile.
inline constexpr std::uint32_t answer_polls = 8;

// The number of lanes with a task (the batch size), in every lane.
__device__ inline std::uint32_t batch_size(detail::task_header* t) noexcept {
  return static_cast<std::uint32_t>(__popc(__ballot_sync(full_mask, t != nullptr)));
}

// Step 4: nothing gathered. Returns a batch to run at once (*n its size: the tasks that
// answers from the host woke, or tasks from another warp's inject shard) or nothing
// (*n = 0: the loop gathers again). The mailboxes come first: an answer's latency is a
// task's, and another warp can take an inject shard's tasks too. Else search if
// allowed, else park. A search looks at 128 random rings: with thousands of warps a
// full scan would take longer than a park.
inline constexpr std::uint32_t search_victims = 128;
__device__ inline detail::task_header* find_work(worker_ctx& c, std::uint32_t* n) noexcept {
  if (take_inbox(c)) return nullptr;  // pinned tasks only this warp may run: the next gather
  // The mailboxes first: an answer's task runs in this warp at once.
  bool inflight = false;
  detail::task_header* t = poll_mailboxes(c.d, c.lane, /*run_here=*/true, &inflight);
  if ((*n = batch_size(t)) != 0) return t;
  if (c.d.num_inject > 1) {  // then the other warps' inject shards
    t = pop_other_shards(c, n);
    if (c.lane == 0) c.st.stats.injected += *n;
    if (*n != 0) return t;
  }
  if (c.id == 0 && inflight) {
    t = await_answers(c.d, c.lane, answer_polls, &inflight);
    if ((*n = batch_size(t)) != 0) return t;
  }
  if (has_staged(c)) return nullptr;  // the deliveries staged tasks
  if (c.lane == 0) {
    if (c.id == 0) poll_host(c.d);
    poll_timers(c.d);
  }
  if (has_staged(c)) return nullptr;  // lane 0's polls staged tasks
  if (c.id == 0 && inflight) return nullptr;  // back round the loop: the answers are near
  if (serve_blockmate(c.d, c.st, c.id, c.lane)) return nullptr;  // a blockmate's lone task's jobs
  if (try_begin_search(c)) {
    const bool found = steal(c, search_victims);
    end_search(c, found);
    if (found) return nullptr;
  }
  // A last look at the bulk board, which also records what the nap compares with
  // (bulk_published, device_bulk.hpp): one load when no job is active.
  if (help_bulk(c.d, c.st, c.id, c.lane)) return nullptr;
  const bool seen = register_sleeper(c);
  int woke = 0;
  if (c.lane == 0) woke = park_lane0(c, seen);
  woke = __shfl_sync(full_mask, woke, 0);
  // A pinned wake-up ended the nap: stage it now, so the next gather runs it (rather than
  // a look round first and a trip more to find the inbox).
  if (take_inbox(c)) return nullptr;
  // The nap ended on tasks staged here (a root the host submitted, a timer's sleeper):
  // the next gather runs them, without the look round. (After the inbox, so that a nap
  // that ended with tasks both staged and in the inbox takes the pinned ones now too.)
  if (has_staged(c)) return nullptr;
  if (!woke && !stopping(c)) steal(c, 32);  // a timeout: one cheap look round
  return nullptr;
}

// Lane 0 copies its running counts to the worker's stats (read by the host).
__device__ inline void publish_stats(worker_ctx& c) noexcept {
  if (c.lane != 0) return;
  worker_stats& g = c.w.stats;
  g.resumed = c.st.stats.resumed;
  g.batches = c.st.stats.batches;
  g.lanes_used = c.st.stats.lanes_used;
  g.stolen = c.st.stats.stolen;
  g.injected = c.st.stats.injected;
  g.parks = c.st.stats.parks;
  g.napped_ns = c.st.stats.napped_ns;
  g.inline_bulk = c.st.stats.inline_bulk;
  g.inline_shared = c.st.stats.inline_shared;
  g.inline_jobs_served = c.st.stats.inline_jobs_served;
}

__device__ inline void count_batch(worker_ctx& c, std::uint32_t n) noexcept {
  if (c.lane != 0) return;
  c.st.stats.resumed += n;
  c.st.stats.batches += 1;
  c.st.stats.lanes_used += n;
}

// The inline bulk jobs this warp may still run in this trip (lane 0's read, broadcast:
// lane 0 rewrites the count at the top of each trip with no __syncwarp before it, so
// no other lane may read the word here).
__device__ inline std::uint32_t inline_jobs_left(worker_ctx& c) noexcept {
  std::uint32_t left = 0;
  if (c.lane == 0) left = c.st.inline_left;
  return __shfl_sync(full_mask, left, 0);
}

// Before a batch runs: records which lanes run a task in it, for a task's in-place
// wait (device_io.hpp: alone_in_warp reads it from inside the task), and whether the
// batch is lone (one task, inline jobs left this trip: device_bulk.hpp), in every lane.
__device__ inline bool mark_batch(worker_ctx& c, detail::task_header* t) noexcept {
  const std::uint32_t lanes = __ballot_sync(full_mask, t != nullptr);
  const bool lone = __popc(lanes) == 1 && inline_jobs_left(c) != 0;
  if (c.lane == 0) {
    c.st.batch_lanes = lanes;
    c.st.lone = lone ? lone_batch_key : 0;
  }
  __syncwarp();  // lane 0's stores before any lane's task reads them
  return lone;
}

// Runs this lane's task of a marked batch, if it has one. In a lone batch the other
// lanes serve the task's inline bulk jobs meanwhile, until it lets them go.
__device__ inline detail::after_run run_batch(worker_ctx& c, detail::task_header* t, bool still_running,
                                              bool lone) noexcept {
  if (t == nullptr) {
    if (lone) serve_lone_task(c.st, c.lane);
    return detail::after_run::idle;
  }
  const detail::after_run r = detail::run_and_settle(t, still_running);
  if (lone) release_lone_helpers(c.st);
  return r;
}

// After a batch: run the bulk jobs its lanes posted, and resume the tasks that were held
// for them right away, as a batch of their own, up to held_rounds times; what is still
// held after that goes into the staging area (tagged) and waits for the next trip.
inline constexpr std::uint32_t held_rounds = 16;
__device__ inline void run_held_rounds(worker_ctx& c, std::uint32_t n) noexcept {
  count_batch(c, n);
  for (std::uint32_t round = 0;; ++round) {
    detail::task_header* t = run_posted_bulk(c.d, c.st, c.id, c.lane);
    const std::uint32_t held = __popc(__ballot_sync(full_mask, t != nullptr));
    if (held == 0) return;
    // Fairness: let the loop look at its queues and polls (also once a lone task has
    // run its trip's inline jobs: it is the only one here, so it would go on at once).
    if (round == held_rounds || inline_jobs_left(c) == 0) {
      if (t != nullptr) enqueue_from_lane(c.d, current_lane_ids(), detail::tag_still_running(t), /*may_fail=*/false);
      return;
    }
    const bool lone = mark_batch(c, t);
    const detail::after_run r = run_batch(c, t, /*still_running=*/true, lone);
    if (needs_settle(c, r)) settle(c, t, r);
    count_batch(c, held);
  }
}

// A spawn_group child's queue entry (group_core.hpp): its frame is made here, by the lane
// that runs it (the slot's `create`: the ramp, the frame from this lane's cache), and it runs
// in this batch, RUNNING from birth (so without begin_run, as a held task). Null when its
// frame could not be made (the child's outcome says so; it counts as a root destroyed, so
// that live_tasks, spawned less destroyed, comes back to 0). The slot came to this lane
// through the queue that handed the entry over, as a task's header does.
__device__ inline detail::task_header* start_group_child(worker_ctx& c, detail::task_header* entry) noexcept {
  detail::group_slot* s = detail::group_slot_of(entry);
  detail::task_header* t = s->ops->create(s);
  if (t != nullptr) t->state = detail::task_state::running;
  else cuda::atomic_ref<std::uint64_t, cuda::thread_scope_block>(c.w.stats.destroyed).fetch_add(1, cuda::std::memory_order_relaxed);
  return t;
}

__device__ inline void worker_loop(device_sched& d, std::uint32_t id, std::uint32_t lane) noexcept {
  worker_ctx c{d, d.workers[id], staging_of_this_warp(), id, lane};
  if (lane == 0) {
    c.st.stats = c.w.stats;
    c.st.ring_head_seen = warp_ring::head_acquired(c.w.ring);
    c.st.reclaim_seen = detail::device_atomic<std::uint32_t>(d.reclaim_epoch).load(detail::mo_relaxed);
  }
  bool idle_last = true;
  for (std::uint32_t trip = 1;; ++trip) {
    // A trip after a spent inline budget (a lone task's inline_jobs_per_trip inline bulk
    // steps, 1,024 in-place waits, or a mix that left too little for another wait, since
    // the last trip; also the first trip) is every cadence's turn (beat 0): such a warp
    // comes round rarely, so it polls, stops, takes its pinned tasks and looks at the
    // board and its inject shard on each of those trips, and a chain of inline steps
    // keeps the warp from them no longer than one budget.
    std::uint32_t spent = 0;
    if (lane == 0) {
      spent = trip_budget_spent(c.st);
      c.st.inline_left = inline_jobs_per_trip;  // read after gather's __syncwarp
    }
    const std::uint32_t beat = __shfl_sync(full_mask, spent, 0) != 0 ? 0 : trip;
    if ((beat & 7) == 0 && lane == 0) poll_timers(d);
    if ((beat & 15) == 0) {
      if (id == 0 && lane == 0) poll_host(d);
      if ((beat & 255) == 0) publish_stats(c);
      // The batch count alone every 16th trip: the host's shutdown reads it to see the
      // warps idle (runtime.cpp), and a warp of slow trips (~60 us) must show it moved
      // within the 1 ms between two of its looks. One store of lane 0.
      else if (lane == 0) c.w.stats.batches = c.st.stats.batches;
      flush_caches_if_asked(d, c.st, id, lane);  // a busy warp within 16 batches, too
      if (stopping(c)) break;  // a busy warp still stops within 16 batches
      take_inbox(c);           // and runs its pinned tasks within 16 batches
    }
    // Bulk chunks first (tasks await them): every 4th trip while busy (the board word
    // is one more L2 load per batch), every trip after an empty one.
    const bool helped = ((beat & 3) == 0 || idle_last) && help_bulk(d, c.st, id, lane);
    std::uint32_t n = 0;
    detail::task_header* t = gather(c, beat, &n);
    if (n == 0) {
      idle_last = true;
      if (helped) continue;  // more chunks may be open: look again before parking
      publish_stats(c);
      flush_caches_if_asked(d, c.st, id, lane);
      if (stopping(c)) break;
      t = find_work(c, &n);
      if (n == 0) continue;
    }
    bool held = detail::is_still_running(t);  // back from a private bulk job
    if (detail::is_group_entry(t)) {
      t = start_group_child(c, t);
      held = true;  // RUNNING from birth
    } else {
      t = detail::untag(t);
    }
    const bool lone = mark_batch(c, t);
    const detail::after_run r = run_batch(c, t, held, lone);
    if (needs_settle(c, r)) settle(c, t, r);
    run_held_rounds(c, n);
    // A busy worker 0 drains every 4th batch, after it: a task its last drain woke
    // (in the staging area) runs first. A warp with nothing left drains in find_work,
    // next, and runs what the answers wake at once.
    if (id == 0 && (beat & 3) == 0 && has_local_work(c)) {
      bool inflight = false;
      poll_mailboxes(d, lane, /*run_here=*/false, &inflight);
    }
    idle_last = false;
  }
  publish_stats(c);
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
