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
//   drainer    one warp at a time per mailbox: whoever sets the held bit of its drain
//              word (a try-lock; nobody waits for it; the word's other bits say
//              where the last holder stopped). Worker 0 tries after every 4th batch
//              while it has other work, and with nothing to run and requests in
//              flight it holds the duty and polls back to back (await_answers) instead
//              of parking; every warp that finds no work tries too, so a long task on
//              worker 0 does not hold the answers back. The drainer delivers answers
//              32 at a time (lane i reads completion next + i: its LL words carry
//              their own flag, so one PCIe round trip reads 32 answers, and nothing
//              else is read first), runs the tasks of the first 32 in its own lanes at
//              once when it polled from find_work (drain_answers' run_here), queues
//              the others (queue_woken), hands each slot back, and publishes waiting
//              requests: the waiters stack's first (serially: it is the rare last
//              resort, and the oldest), then the overflow ring's, 32 at a time
//              (publish_overflow).
// Invariants
//   * One drainer per mailbox at a time (the drain word's held bit), so the next
//     completion, the backlog and the overflow ring's consumer side have a single owner.
//     The next completion travels in the drain word itself; the rest passes with the
//     take's acquire and the give-back's release (an in-place waiter, which touches
//     neither, takes relaxed and gives back relaxed when it took its answer:
//     await_in_place).
//   * A delivered completion wakes its task exactly once (wake_needs_queue's RMW); the
//     task is queued, or run in the drainer's lane, exactly when that RMW says it was
//     idle (then the drainer holds its only queue entry).
//   * inflight counts requests posted and not yet delivered, so "inflight == 0" means
//     there is nothing to deliver and nothing waiting to be published: one L2 load
//     skips a mailbox. The one exception is the request an in-place waiter waits for
//     (its own drain duty delivers it; it is counted when the waiter gives up): other
//     warps neither take the duty from under the next call nor keep worker 0 awake.
// Scopes: mailbox words shared with the host are system scope (mailbox.hpp); the drain
// word, inflight, the overflow ring and the inject queue are device scope.
#pragma once
#include <cstdint>

#include "weft/detail/mailbox.hpp"
#include "weft/detail/run.hpp"
#include "weft/executor/device_hooks.hpp"
#include "weft/executor/device_queues.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {

// Requests to the host reactor not yet answered (lane 0's view; device-memory loads).
// No branch between the boxes' loads (the loop once tested each before loading the
// next), so they can be in flight together; a parked worker 0 looks on each nap.
__device__ inline bool io_inflight(const device_sched& d) noexcept {
  std::uint32_t any = 0;
  for (std::uint32_t b = 0; b < d.io.count; ++b)
    any |= detail::device_atomic<std::uint32_t>(d.io.boxes[b].inflight).load(detail::mo_relaxed);
  return any != 0;
}

// The LIFO slot's size: staged tasks always kept for the warp's next batch (flush_staging
// keeps more when the ring and the inject queue are full).
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
  if (warp_inject_push_any(d, shard, lane, out)) {
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

// The drainer, all lanes: delivers the answers that are there from completion `first`
// on (the drain word's, from the take), 32 per round (lane i reads completion first + i:
// six independent loads of LL words, one PCIe round trip for the 32, no index word to
// read first; mailbox_layout.hpp); each lane hands its slot back as soon as it has
// delivered it. The tasks of the first round stay in their lanes when `run_here` (the
// caller runs them at once, as a batch: the shortest way from an answer to its task); the
// others are queued (queue_woken). Returns this lane's task to run (or null); *next_out
// (every lane): the completion after the last delivered.
__device__ inline detail::task_header* drain_answers(device_sched& d, detail::mailbox& m, std::uint32_t lane,
                                                     bool run_here, std::uint64_t first, std::uint64_t* next_out) noexcept {
  detail::task_header* mine = nullptr;
  std::uint64_t next = first;
  for (;;) {
    detail::completion_view v;
    const bool there = detail::mailbox_read_completion(m, next + lane, &v);
    const unsigned ready = __ballot_sync(full_mask, there);
    const std::uint32_t n = ready == full_mask ? WEFT_WARP_SIZE : static_cast<std::uint32_t>(__ffs(~ready) - 1);
    if (n == 0) break;  // answers are delivered in index order: the first gap ends the drain
    detail::task_header* t = nullptr;
    if (lane < n) {
      t = detail::mailbox_deliver_result(m, next + lane, v);
      detail::mailbox_hand_back(m, next + lane, v.inline_bytes != 0);
    }
    if (run_here && next == first) mine = t;
    else queue_woken(d, lane, t);
    next += n;
    if (n < WEFT_WARP_SIZE) break;
  }
  if (next != first && lane == 0)
    detail::device_atomic<std::uint32_t>(m.inflight).fetch_sub(static_cast<std::uint32_t>(next - first), detail::mo_relaxed);
  *next_out = next;
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
// it (a try-lock: nobody waits for it); *first: the next completion to deliver, from the
// same RMW. Acquire: the drainer's own words (the backlog, the overflow ring's consumer
// side) pass from one holder to the next with it (an in-place waiter gives the duty
// back with a relaxed RMW: it does not touch them, and an RMW keeps the last release's
// release sequence going).
__device__ inline bool try_take_drain(detail::mailbox& m, bool* inflight, std::uint64_t* first) noexcept {
  if (detail::device_atomic<std::uint32_t>(m.inflight).load(detail::mo_relaxed) == 0) return false;
  *inflight = true;
  detail::device_atomic<std::uint64_t> drain(m.drain);
  if ((drain.load(detail::mo_relaxed) & detail::drain_held) != 0) return false;
  const std::uint64_t was = drain.fetch_or(detail::drain_held, detail::mo_acquire);
  *first = detail::drain_next(was);
  return (was & detail::drain_held) == 0;
}
// All lanes: gives the duty back with `next`, the completion after the last delivered
// (release: see try_take_drain).
__device__ inline void give_back_drain(detail::mailbox& m, std::uint32_t lane, std::uint64_t next) noexcept {
  __syncwarp();  // every lane's part of the duty is done before lane 0 gives it back
  if (lane == 0) detail::device_atomic<std::uint64_t>(m.drain).store(detail::drain_word(next), detail::mo_release);
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
    unsigned long long first = 0;
    if (lane == 0) {
      bool in = false;
      std::uint64_t f = 0;
      took = try_take_drain(m, &in, &f);
      first = f;
      any |= in;
    }
    if (!__shfl_sync(full_mask, took, 0)) continue;
    std::uint64_t next = 0;
    detail::task_header* t = drain_answers(d, m, lane, run_here, __shfl_sync(full_mask, first, 0), &next);
    if (t != nullptr) mine = t;
    run_here = run_here && !__any_sync(full_mask, mine != nullptr);  // one batch per poll
    publish_waiting(m, lane);
    give_back_drain(m, lane, next);
  }
  *inflight = __shfl_sync(full_mask, any, 0) != 0;
  return mine;
}

// Worker 0 with nothing to run and requests in flight: takes the drain duty of every
// mailbox with requests in flight (that nobody else holds; the first await_boxes of
// them: the others are polled from poll_mailboxes) and polls their answers up to `polls`
// times back to back (one PCIe round trip each, ~1.1 us on an H200), with no lock
// traffic between polls, until one delivers. Returns this lane's task to run;
// *inflight: whether any mailbox (all of them) had requests in flight.
inline constexpr std::uint32_t await_boxes = 8;
__device__ inline detail::task_header* await_answers(device_sched& d, std::uint32_t lane, std::uint32_t polls,
                                                     bool* inflight) noexcept {
  std::uint32_t held = 0;  // bit b: this warp holds mailbox b's duty
  std::uint64_t next[await_boxes] = {};  // lane 0 fills them; every lane's after the broadcast
  int any = 0;
  if (lane == 0) {
    bool in = false;
    for (std::uint32_t b = 0; b < d.io.count; ++b) {
      if (b >= await_boxes) in = in || detail::device_atomic<std::uint32_t>(d.io.boxes[b].inflight).load(detail::mo_relaxed) != 0;
      else if (try_take_drain(d.io.boxes[b], &in, &next[b])) held |= 1u << b;
    }
    any = in;
  }
  held = __shfl_sync(full_mask, held, 0);
  for (std::uint32_t bits = held; bits != 0; bits &= bits - 1) {
    const std::uint32_t b = __ffs(bits) - 1;
    next[b] = __shfl_sync(full_mask, static_cast<unsigned long long>(next[b]), 0);
  }
  *inflight = __shfl_sync(full_mask, any, 0) != 0;
  detail::task_header* mine = nullptr;
  for (std::uint32_t round = 0; round < polls && held != 0; ++round) {
    bool woke = false;
    for (std::uint32_t bits = held; bits != 0; bits &= bits - 1) {
      const std::uint32_t b = __ffs(bits) - 1;
      detail::task_header* t = drain_answers(d, d.io.boxes[b], lane, !woke, next[b], &next[b]);
      if (t != nullptr) mine = t;
      woke = __any_sync(full_mask, mine != nullptr);
    }
    if (woke) break;
  }
  for (std::uint32_t bits = held; bits != 0; bits &= bits - 1) {
    const std::uint32_t b = __ffs(bits) - 1;
    publish_waiting(d.io.boxes[b], lane);
    give_back_drain(d.io.boxes[b], lane, next[b]);
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
// queued here), its inject shard or inbox, open bulk chunks, a due timer, the stop
// flag, a frame-pool reclaim (other_work_probe, device_hooks.hpp). Those
// are L2 loads issued beside the PCIe read, so they add no latency. While the wait
// runs, worker 0's host polls (when it is the waiter) wait too: at most the bound.
// A poll delivers at most in_place_batch answers (one lane reads them one at a time,
// a PCIe round trip each): a burst is the warp-wide drainers' work (32 per round trip).
inline constexpr std::uint32_t in_place_polls = 16;
inline constexpr std::uint32_t in_place_batch = 2;

// alone_in_warp and other_work_probe, which decide whether a lane may wait in place,
// are in device_hooks.hpp (event::wait uses them too).

// The lane alone in its warp, before its post to m: tries to take m's drain duty, and
// returns the drain word it found (drain_held clear: the duty is this lane's, and the
// rest of the word is the next completion to deliver; then it must call await_in_place
// after the post). Taken before the post, the duty makes the answer the lane's own: no
// other drainer can deliver it. A relaxed RMW with no load first (a lane alone rarely
// meets a holder, and setting a set bit changes nothing): its round trip overlaps the
// post's claim instead of coming before it. Relaxed, because the in-place waiter reads
// no word a previous holder wrote but the drain word itself (it leaves the backlog and
// the overflow ring to the warp-wide drainers); when it delivers another task's answer
// it fences first (mailbox_deliver_to_waiter).
__device__ inline std::uint64_t begin_take_drain(detail::mailbox& m) noexcept {
  return detail::device_atomic<std::uint64_t>(m.drain).fetch_or(detail::drain_held, detail::mo_relaxed);
}

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

// The waiter, after its post (holding the duty: begin_take_drain, which said the next
// completion to deliver is `first`): polls until its answer is in `own` (true: the task
// goes on without parking) or it gives up (false: the task parks; a later drainer
// delivers the answer). A request that found the ring full (not `published`) is not
// waited for. Either way it hands back the completions it delivered and the duty; it
// leaves waiting requests to the next drainer (worker 0 polls while any request is in
// flight).
// The duty goes back with an RMW that writes the next completion into the drain word:
//   * relaxed when the answer was taken: the next holder needs nothing this waiter wrote
//     but the word itself (its hand-backs are for the reactor, the tasks it woke are
//     synchronized by their own wake), and an RMW, unlike a plain store, keeps the
//     release sequence of the last release going for the holder after it;
//   * release when the waiter gives up: its request may have gone out without a release
//     (device_post), and whoever delivers its answer acquires the op's writes from this.
// No fence on the way in or out: on an H200 the acquire fence after the post and the
// release fence before the give-back cost the round trip 0.2-0.7 us (docs/mailbox.md).
__device__ inline bool await_in_place(device_sched& d, detail::mailbox& m, detail::host_op* own, const lane_ids& id,
                                      bool published, std::uint64_t first) noexcept {
  staging_area& st = staging_of_this_warp();
  std::uint64_t next = first;
  bool done = false, read_inline = false;
  if (published) {
    const inject_ring home = inject_of(d, id.worker);
    const auto queue = [&](detail::task_header* t) { enqueue_from_lane(d, id, t, /*may_fail=*/false); };
    wait_cycles(st.in_place_delay);  // see in_place_delay_step
    bool first_read_empty = false;  // the first read came back before any answer
    for (std::uint32_t poll = 0; poll < in_place_polls && !done; ++poll) {
      const other_work_probe probe(d, home, id.worker);
      const std::uint32_t got = detail::mailbox_drain_until_own(m, &next, own, in_place_batch, &done, &read_inline, queue);
      if (poll == 0) first_read_empty = got == 0;
      if (poll == 0 && done)  // the first read found it: a little earlier next time
        st.in_place_delay = st.in_place_delay > in_place_delay_down ? st.in_place_delay - in_place_delay_down : 0;
      if (poll == 1 && done && first_read_empty)  // just missed: a phase to move, not a slow request
        st.in_place_delay = min(st.in_place_delay + in_place_delay_step, in_place_delay_max);
      if (!done && probe.busy(st)) break;
    }
    detail::mailbox_hand_back_range(m, first, next, read_inline);
    // inflight: minus the other tasks' answers delivered; plus its own request when it
    // gives up (device_post left it out), before the duty's release, so that drainers
    // come for it.
    const auto others = static_cast<std::uint32_t>(next - first) - (done ? 1u : 0u);
    const std::uint32_t own_pending = done ? 0u : 1u;
    if (others != own_pending)
      detail::device_atomic<std::uint32_t>(m.inflight).fetch_add(own_pending - others, detail::mo_relaxed);  // wraps: a subtraction
  }
  detail::device_atomic<std::uint64_t>(m.drain).exchange(detail::drain_word(next),
                                                         done ? detail::mo_relaxed : detail::mo_release);
  return done;
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
