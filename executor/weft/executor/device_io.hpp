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
//              while it has other work, and with nothing to run and requests in
//              flight it holds the duty and polls back to back (await_answers) instead
//              of parking; every warp that finds no work tries too, so a long task on
//              worker 0 does not hold the answers back. The drainer delivers answers
//              32 at a time (lane i reads completion comp_next + i: its LL words carry
//              their own flag, so one PCIe round trip reads 32 answers, and nothing
//              else is read first), runs the tasks of the first 32 in its own lanes at
//              once when it polled from find_work (drain_answers' run_here), queues
//              the others (queue_woken), hands the slots back, and publishes waiting
//              requests: the waiters stack's first (serially: it is the rare last
//              resort, and the oldest), then the overflow ring's, 32 at a time
//              (publish_overflow).
// Invariants
//   * One drainer per mailbox at a time (the lock), so comp_next, the backlog and the
//     overflow ring's consumer side have a single owner; the lock's acquire (take) and
//     release (give back) hand them from one holder to the next.
//   * A delivered completion wakes its task exactly once (wake_needs_queue's RMW); the
//     task is queued, or run in the drainer's lane, exactly when that RMW says it was
//     idle (then the drainer holds its only queue entry).
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

// The drainer, all lanes: delivers the answers that are there, 32 per round (lane i
// reads completion comp_next + i: six independent loads of LL words, one PCIe round
// trip for the 32, no index word to read first; mailbox_layout.hpp), then hands their
// slots back. The tasks of the first round stay in their lanes when `run_here` (the
// caller runs them at once, as a batch: the shortest way from an answer to its task);
// the others are queued (queue_woken). Returns this lane's task to run (or null).
__device__ inline detail::task_header* drain_answers(device_sched& d, detail::mailbox& m, std::uint32_t lane,
                                                     bool run_here) noexcept {
  unsigned long long first = 0;
  if (lane == 0) first = m.comp_next;  // the lock holder's word (the lock's acquire)
  first = __shfl_sync(full_mask, first, 0);
  detail::task_header* mine = nullptr;
  unsigned long long next = first;
  bool read_inline = false;
  for (;;) {
    detail::completion_view v;
    const bool there = detail::mailbox_read_completion(m, next + lane, &v);
    const unsigned ready = __ballot_sync(full_mask, there);
    const std::uint32_t n = ready == full_mask ? WEFT_WARP_SIZE : static_cast<std::uint32_t>(__ffs(~ready) - 1);
    if (n == 0) break;  // answers are delivered in index order: the first gap ends the drain
    detail::task_header* t = lane < n ? detail::mailbox_deliver_result(m, next + lane, v) : nullptr;
    read_inline = read_inline || __any_sync(full_mask, lane < n && v.inline_bytes != 0);
    if (run_here && next == first) mine = t;
    else queue_woken(d, lane, t);
    next += n;
    if (n < WEFT_WARP_SIZE) break;
  }
  if (next != first) {
    __syncwarp();  // every lane's reads of its slots are done before lane 0 frees them
    if (lane == 0) detail::mailbox_retire(m, next, next - first, read_inline);
  }
  return mine;
}

// The drainer, all lanes: publishes requests that wait for ring space. The waiters
// stack's first: they found the overflow ring full, so they are the oldest; publishing
// the overflow ring first could starve them under overload. Lane 0 loads the three
// words before it looks at any (one L2 latency, not three).
__device__ inline void publish_waiting(detail::mailbox& m, std::uint32_t lane) noexcept {
  int ring = 0;
  if (lane == 0) {
    const std::uint64_t stack = detail::device_atomic<std::uint64_t>(m.waiters).load(detail::mo_relaxed);
    const std::uint64_t queued = basic_inject_ring<detail::host_op>(*m.overflow).size_approx();
    if (stack != 0 || m.backlog_head != nullptr) detail::mailbox_publish_waiters(m);
    ring = queued != 0;
  }
  if (__shfl_sync(full_mask, ring, 0)) publish_overflow(m, lane);
}

// Lane 0: takes mailbox m's drain duty if requests are in flight there and nobody holds
// it (a try-lock: nobody waits for it). Acquire: the drainer's own words (comp_next,
// the backlog) pass from one holder to the next with it.
__device__ inline bool try_take_drain(detail::mailbox& m, bool* inflight) noexcept {
  if (detail::device_atomic<std::uint32_t>(m.inflight).load(detail::mo_relaxed) == 0) return false;
  *inflight = true;
  detail::device_atomic<std::uint32_t> lock(m.drain_lock);
  return lock.load(detail::mo_relaxed) == 0 && lock.exchange(1, detail::mo_acquire) == 0;
}
// All lanes: gives the duty back (release: see try_take_drain).
__device__ inline void give_back_drain(detail::mailbox& m, std::uint32_t lane) noexcept {
  __syncwarp();  // every lane's part of the duty is done before lane 0 gives it back
  if (lane == 0) detail::device_atomic<std::uint32_t>(m.drain_lock).store(0, detail::mo_release);
}

// Any warp, all lanes: drains each mailbox that has requests in flight and whose drain
// duty is free. The duty is a try-lock, so no warp waits for it, and a warp busy with a
// long task (worker 0 runs the host's root tasks) does not hold the answers back: idle
// warps poll here too (find_work). Skipped with one L2 load while nothing is in flight.
// *inflight (every lane): whether any mailbox had requests in flight when it looked.
// Returns this lane's task to run when `run_here` (see drain_answers).
__device__ inline detail::task_header* poll_mailboxes(device_sched& d, std::uint32_t lane, bool run_here,
                                                      bool* inflight) noexcept {
  int any = 0;
  detail::task_header* mine = nullptr;
  for (std::uint32_t b = 0; b < d.io.count; ++b) {
    detail::mailbox& m = d.io.boxes[b];
    int took = 0;
    if (lane == 0) {
      bool in = false;
      took = try_take_drain(m, &in);
      any |= in;
    }
    if (!__shfl_sync(full_mask, took, 0)) continue;
    detail::task_header* t = drain_answers(d, m, lane, run_here);
    if (t != nullptr) mine = t;
    run_here = run_here && !__any_sync(full_mask, mine != nullptr);  // one batch per poll
    publish_waiting(m, lane);
    give_back_drain(m, lane);
  }
  *inflight = __shfl_sync(full_mask, any, 0) != 0;
  return mine;
}

// Worker 0 with nothing to run and requests in flight: takes the drain duty of every
// mailbox with requests in flight (that nobody else holds) and polls their answers up
// to `polls` times back to back (one PCIe round trip each, ~1.1 us on an H200), with no
// lock traffic between polls, until one delivers. Returns this lane's task to run;
// *inflight: whether any requests were in flight.
__device__ inline detail::task_header* await_answers(device_sched& d, std::uint32_t lane, std::uint32_t polls,
                                                     bool* inflight) noexcept {
  std::uint32_t held = 0;  // bit b: this warp holds mailbox b's duty
  int any = 0;
  if (lane == 0) {
    bool in = false;
    for (std::uint32_t b = 0; b < d.io.count && b < 32; ++b)
      if (try_take_drain(d.io.boxes[b], &in)) held |= 1u << b;
    any = in;
  }
  held = __shfl_sync(full_mask, held, 0);
  *inflight = __shfl_sync(full_mask, any, 0) != 0;
  detail::task_header* mine = nullptr;
  for (std::uint32_t round = 0; round < polls && held != 0; ++round) {
    bool woke = false;
    for (std::uint32_t bits = held; bits != 0; bits &= bits - 1) {
      detail::mailbox& m = d.io.boxes[__ffs(bits) - 1];
      detail::task_header* t = drain_answers(d, m, lane, !woke);
      if (t != nullptr) mine = t;
      woke = __any_sync(full_mask, mine != nullptr);
    }
    if (woke) break;
  }
  for (std::uint32_t bits = held; bits != 0; bits &= bits - 1) {
    detail::mailbox& m = d.io.boxes[__ffs(bits) - 1];
    publish_waiting(m, lane);
    give_back_drain(m, lane);
  }
  return mine;
}

// ---------------------------------------------------------------- answers awaited in place
// A task that posts a request while its warp has nothing else to run waits for the
// answer in its own lane instead of parking. It takes the mailbox's drain duty before
// the post (so no other drainer can deliver its answer), polls the completion ring
// (one PCIe round trip per poll) and takes its answer as it lands: no wake, no queue,
// no trip round the worker loop. Parking cost the round trip about 9 us on an H200
// after the answer had landed (the suspend, the loop back to the poll, the drain's
// lock, the wake and the resume: docs/benchmarks.md, sixth session); docs/mailbox.md
// has the whole sequence.
// "Nothing else to run": the task is the only one in its warp's batch, and the warp's
// staging area and ring are empty (shared-memory words: no cost to a busy warp). The
// wait gives up, and the task parks as usual, after in_place_polls polls (~20 us: the
// longest a warp is kept from other work), or at the first poll that sees other work
// for this warp: a task queued here (the answers it delivers for other tasks are
// queued here), its inject shard, open bulk chunks, a due timer, the stop flag. Those
// are L2 loads issued beside the PCIe read, so they add no latency. While the wait
// runs, worker 0's host polls (when it is the waiter) wait too: at most the bound.
// A poll delivers at most in_place_batch answers (one lane reads them one at a time,
// a PCIe round trip each): a burst is the warp-wide drainers' work (32 per round trip).
inline constexpr std::uint32_t in_place_polls = 16;
inline constexpr std::uint32_t in_place_batch = 2;

// The calling lane, in its task, before it posts: whether its warp has nothing else to
// run (above). Shared-memory words: a busy warp pays nothing for the look.
__device__ inline bool alone_in_warp(const lane_ids& id) noexcept {
  const staging_area& st = staging_of_this_warp();
  return st.batch_lanes == 1u << id.lane && st.count == 0 && st.ring_empty;
}

// The lane alone in its warp, before its post to m: tries to take m's drain duty, and
// returns the lock word it found (0: the duty is this lane's; then it must call
// await_in_place after the post). Taken before the post, the duty makes the answer the
// lane's own: no other drainer can deliver it. A relaxed exchange with no load first: its
// round trip overlaps the post's claim instead of coming before it, and its acquire is
// the fence at the top of await_in_place, before the waiter reads any drainer word. No
// load first: a lane alone rarely meets a holder.
__device__ inline std::uint32_t begin_take_drain(detail::mailbox& m) noexcept {
  return detail::device_atomic<std::uint32_t>(m.drain_lock).exchange(1, detail::mo_relaxed);
}

// What says whether this warp has work besides the waiter: relaxed loads, issued
// before a poll's PCIe read and looked at after it (busy()), so they cost no latency.
struct other_work_probe {
  std::uint32_t stop, bulk;
  std::uint64_t timer, queued;
  __device__ other_work_probe(device_sched& d, const inject_ring& home) noexcept
      : stop(detail::device_atomic<std::uint32_t>(d.stop).load(detail::mo_relaxed)),
        bulk(detail::device_atomic<std::uint32_t>(d.bulk_active).load(detail::mo_relaxed)),
        timer(detail::device_atomic<std::uint64_t>(d.timer_next).load(detail::mo_relaxed)),
        queued(home.size_approx()) {}
  __device__ bool busy(const staging_area& st) const noexcept {
    return stop != 0 || bulk != 0 || queued != 0 || st.count != 0 ||
           (timer != ~std::uint64_t{0} && timer <= globaltimer_ns());
  }
};

// The first read's timing. A read goes out at once after the post and is served behind
// the post's own writes; when the reactor has not answered by then, the answer costs a
// second read, a whole PCIe round trip (~1.6 us on an H200) more. A task calling the host
// in a loop falls into one of the two steadily (its calls keep the same phase): on one
// GPU machine runs of the same binary gave 4.7 or 6.3 us per round trip, by process. So
// each warp keeps a delay before its first read (staging_area::in_place_delay, cycles):
// up by in_place_delay_step when that read came too early and the next one found the
// answer (a request that takes longer is slow, not out of phase, and moves nothing),
// down by in_place_delay_down when it found the answer, so it settles just past the
// reactor's answer and misses about once per step/down calls.
inline constexpr std::uint32_t in_place_delay_step = 256, in_place_delay_down = 8, in_place_delay_max = 4096;
__device__ inline void wait_cycles(std::uint32_t n) noexcept {
  const long long until = clock64() + n;
  while (n != 0 && clock64() < until) {
  }
}

// The waiter, after its post (holding the duty: begin_take_drain): polls until its
// answer is in `own` (true: the task goes on without parking) or it gives up (false:
// the task parks; a later drainer delivers the answer). A request that found the ring
// full (not `published`) is not waited for. Either way it hands back the completions
// it delivered and the duty; it leaves waiting requests to the next drainer (worker 0
// polls while any request is in flight).
// The first poll reads the completion where this warp's last wait on m ended
// (staging_area::in_place_next) beside its load of comp_next, not after it: in a task
// that calls the host again and again nobody else has drained m since, and the guess
// saves the L2 round trip before the PCIe read. A wrong guess is dropped (the flags
// tie the words read to that index; only comp_next says it is the next to deliver).
__device__ inline bool await_in_place(device_sched& d, detail::mailbox& m, detail::host_op* own, const lane_ids& id,
                                      bool published) noexcept {
  // The acquire of the duty's relaxed exchange (begin_take_drain): the last holder's
  // words (comp_next, the completions it delivered) before this waiter's reads of them.
  // Device scope, after the publication: it waits while the request is on its way to
  // the host, which the first read's delay waits for anyway.
  detail::fence_device_acquire();
  staging_area& st = staging_of_this_warp();
  std::uint64_t next = 0, first = 0;
  bool done = false, read_inline = false;
  if (published) {
    const inject_ring home = inject_of(d, id.worker);
    const auto queue = [&](detail::task_header* t) { enqueue_from_lane(d, id, t, /*may_fail=*/false); };
    const std::uint64_t guess = st.in_place_box == &m ? st.in_place_next : ~std::uint64_t{0};
    first = next = m.comp_next;  // the duty holder's word (after the fence above)
    detail::completion_view v;
    bool early = false;  // the first read came back before the answer
    if (guess != ~std::uint64_t{0}) {
      wait_cycles(st.in_place_delay);  // see in_place_delay_step
      const bool there = detail::mailbox_read_completion(m, guess, &v);
      if (guess == first && there) {
        detail::mailbox_deliver_to_waiter(m, next++, v, own, &done, &read_inline, queue);
        st.in_place_delay = st.in_place_delay > in_place_delay_down ? st.in_place_delay - in_place_delay_down : 0;
      } else {
        early = guess == first;
      }
    }
    for (std::uint32_t poll = 0; poll < in_place_polls && !done; ++poll) {
      const other_work_probe probe(d, home);
      detail::mailbox_drain_until_own(m, &next, own, in_place_batch, &done, &read_inline, queue);
      if (done && early && poll == 0)  // just missed: a phase to move, not a slow request
        st.in_place_delay = min(st.in_place_delay + in_place_delay_step, in_place_delay_max);
      if (!done && probe.busy(st)) break;
    }
    if (next != first) detail::mailbox_retire(m, next, next - first, read_inline);
    st.in_place_box = &m;
    st.in_place_next = next;
  }
  detail::device_atomic<std::uint32_t>(m.drain_lock).store(0, detail::mo_release);  // see give_back_drain
  return done;
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
