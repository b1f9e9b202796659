// weft/executor/device_hooks.hpp - the device side of weft/detail/backend_hooks.hpp.
//
// Task code running on the GPU reaches the device executor through these functions:
// spawn a root, requeue a woken task, allocate or free a frame. They are the one
// place that reads the hardware ids (threadIdx, blockIdx): everything below them
// (queues, frame pool, worker loop) takes the worker and lane ids as arguments.
//
// g_device_sched names the running executor. Without RDC every CUDA translation unit
// is its own device module with its own copy of this variable; the persistent kernel
// of a runtime is instantiated in the translation unit that submits to it, and its
// launch sets the variable of that module (device_program.hpp). With no executor
// (a kernel that drives tasks by run_inline), g_device_frame_pool may name a plain
// size_class_pool and spawn() reports errc::no_runtime.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

#include "weft/detail/bulk_job.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"
#include "weft/executor/device_frames.hpp"
#include "weft/executor/device_mbar_share.hpp"
#include "weft/executor/device_layout.hpp"
#include "weft/executor/device_queues.hpp"
#include "weft/executor/device_timers.hpp"
#include "weft/executor/frame_pool.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {
__device__ inline size_class_pool* g_device_frame_pool = nullptr;  // run_inline kernels only
// In the constant bank, written by the host before each launch (device_program.hpp):
// a fence with acquire semantics drops the SM's L1, and a request's path has several,
// so these words, read on every request, spawn and frame allocation, would otherwise be
// fetched from L2 each time; the constant cache keeps them.
// Static: each translation unit (each module) has its own copies of these three, and
// their host shadows, which its own launch writes.
static __constant__ device_sched* g_device_sched = nullptr;  // the persistent kernel's
static __constant__ detail::io_link g_device_io{};           // its mailboxes (a copy of g_device_sched->io)
// Words that a task's spawn, frame allocation, free and destruction read: copies of
// g_device_sched's pointers, written at the same time (program_launch), and the teardown
// flag (program_teardown sets it before its kernels). In g_device_sched's own line each
// would be a global load, and under load the SM's L1 seldom keeps it: any acquire of any
// warp there drops the L1. A lane's own chain of such loads is paid in full, since a
// warp's diverged lanes do not overlap their stalls (docs/benchmarks.md, twenty-fourth
// session).
struct worker_consts {
  lane_cache* caches;          // device_sched::caches
  device_worker* workers;      // device_sched::workers
  char* arena;                 // device_sched::arena
  std::uint8_t* block_live;    // device_sched::block_live
  std::uint32_t tearing_down;  // 1 while the teardown kernels run (no lane caches; device_program.hpp)
};
static __constant__ worker_consts g_worker_consts{};

// The calling lane's place in the worker kernel (1-D grid, warps are workers).
struct lane_ids {
  std::uint32_t worker;
  std::uint32_t lane;
  std::uint32_t global_lane;
};
__device__ inline lane_ids current_lane_ids() noexcept {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  return {g / WEFT_WARP_SIZE, g % WEFT_WARP_SIZE, g};
}

// The staging areas of a block's worker warps (see staging_area). Shared memory, so
// a lane's spawn or wake-up costs a shared-memory atomic, not a global one.
static __shared__ staging_area weft_staging[worker_warps_per_block];
__device__ inline staging_area& staging_of_this_warp() noexcept {
  return weft_staging[threadIdx.x / WEFT_WARP_SIZE];
}

__device__ inline inject_ring inject_of(device_sched& d, std::uint32_t i) noexcept {
  return inject_ring(d.inject[i % d.num_inject]);
}

// Pushes each lane's non-null `t` into the first inject shard from `first` on (round the
// shards) with room for all of them (warp-collective); false when every shard was full.
__device__ inline bool warp_inject_push_any(device_sched& d, std::uint32_t first, std::uint32_t lane,
                                            detail::task_header* t) noexcept {
  for (std::uint32_t k = 0; k < d.num_inject; ++k)
    if (warp_inject_push(inject_of(d, first + k), lane, t)) return true;
  return false;
}

// Grants up to k wake tokens when some warps sleep (tokens never exceed sleepers).
// The first look at `sleepers` comes before the fence, so it can miss a warp that is
// registering at that moment while that warp's look at the inject shards misses our
// push (store buffering: register_sleeper's fence alone does not exclude it). No task
// is lost: it waits for a busy warp's look at the shards (this one's included) or for
// the sleeper's look after 1 ms. The fence before the first look closes that window but
// cost yield_many 1M x 64 10-12 % on an H200 (2.32e9 against 2.59-2.60e9 resumes/s,
// three rounds; found by review, thirty-sixth session), so the busy case keeps its
// single relaxed load.
__device__ inline void notify_many(device_sched& d, std::uint32_t k) noexcept {
  detail::device_atomic<std::uint32_t> sleepers(d.sleepers), tokens(d.wake_tokens);
  if (k == 0 || sleepers.load(detail::mo_relaxed) == 0) return;  // the common, busy case: one L2 read
  detail::fence_device_seq_cst();  // our pushes before the re-read (pairs with register_sleeper's)
  const std::uint32_t s = sleepers.load(detail::mo_relaxed);
  std::uint32_t tk = tokens.load(detail::mo_relaxed);
  while (tk < s) {
    const std::uint32_t want = s - tk < k ? s : tk + k;
    if (tokens.compare_exchange_weak(tk, want, detail::mo_relaxed, detail::mo_relaxed)) return;
  }
}
__device__ inline void notify_one(device_sched& d) noexcept { notify_many(d, 1); }

// Pushes a task onto worker `home`'s inbox (device_worker::inbox says why the orders
// suffice): a pinned task for its home, or a wake-up that found every queue full, for
// the waker's own warp (enqueue_from_lane). Lane-wise; never fails. The warp finds it at
// its next idle trip, its next 16th busy trip or its next nap while parked (take_inbox,
// park_lane0). `t` may carry the still-running tag (a held task's requeue: run.hpp);
// the stack keeps it, and every `link` is read and written through the untagged header.
__device__ inline void push_inbox(device_sched& d, std::uint32_t home, detail::task_header* t) noexcept {
  detail::device_atomic<std::uint64_t> box(d.workers[home].inbox);
  std::uint64_t old = box.load(detail::mo_relaxed);
  do {
    detail::untag(t)->link = reinterpret_cast<detail::task_header*>(old);
  } while (!box.compare_exchange_weak(old, reinterpret_cast<std::uint64_t>(t), detail::mo_release, detail::mo_relaxed));
}

// Makes a SCHEDULED task runnable from inside a lane: into the warp's staging area
// (run first in the warp's next batch: the LIFO slot), else into an inject shard.
// Returns false only when every place is full and the caller said it may fail.
__device__ inline bool enqueue_from_lane(device_sched& d, const lane_ids& id, detail::task_header* t,
                                         bool may_fail) noexcept {
  staging_area& st = staging_of_this_warp();
  // Block scope: only the lanes of this warp touch the count while it runs a batch.
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> cnt(st.count);
  // A claim that fails gives its index back, so every claim must fail at the same bound:
  // with two bounds a spawn failing at 448 could give back its index after a wake-up
  // took 449, and the count would then cover slot 448, never written in this batch (a
  // stale task run twice), and leave the wake-up's slot outside it (a task lost). So the
  // bound is staging_capacity for all; a spawn (may_fail) first reads the count and keeps
  // out of the last staging_reserve slots, which it leaves to wake-ups and to the yields
  // that a full ring and inject queue send here (push_to_ring). Lanes spawning at once
  // may pass that read together, so spawns can take up to 31 of the reserve's 64 slots.
  const bool staged = !(may_fail && cnt.load(cuda::std::memory_order_relaxed) >= staging_capacity - staging_reserve);
  if (staged) {
    const std::uint32_t i = cnt.fetch_add(1, cuda::std::memory_order_relaxed);
    if (i < staging_capacity) {
      st.slots[i] = t;  // read by the warp after the batch's __syncwarp
      return true;
    }
    cnt.fetch_sub(1, cuda::std::memory_order_relaxed);
  }
  for (unsigned spins = 0;; ++spins) {
    for (std::uint32_t k = 0; k < d.num_inject; ++k) {
      if (inject_of(d, id.worker + k).push(t)) {
        notify_one(d);  // any warp may take it: wake one if some sleep
        return true;
      }
    }
    if (may_fail) return false;
    // A wake-up is never dropped, and never waits for room that only this warp's next
    // batches could make (one worker warp, every shard full): it goes onto this warp's
    // inbox, which has no bound (a stack through the header's `link`) and which the warp
    // stages from within 16 trips, or on its next idle trip (take_inbox). Not a pinned
    // task: run_and_settle runs it wherever it is staged. (A lane outside the worker
    // warps has no inbox of its own, and waits for room as before.)
    if (id.worker < d.num_workers) {
      push_inbox(d, id.worker, t);
      return true;
    }
    __nanosleep(spins < 16 ? 256u : 4096u);
  }
}


// Lane 0 of worker `id`: moves pinned tasks from its inbox into its staging area (they
// run in its next batch) while the area holds fewer than a batch; what is left waits
// in device_worker::inbox_rest for the next look. Returns how many it staged. The
// relaxed load first: an empty inbox, the common case, costs one L2 read and no RMW.
__device__ inline std::uint32_t take_inbox_lane0(device_sched& d, staging_area& st, std::uint32_t id) noexcept {
  detail::task_header* t = d.workers[id].inbox_rest;
  if (t == nullptr) {
    detail::device_atomic<std::uint64_t> box(d.workers[id].inbox);
    if (box.load(detail::mo_relaxed) == 0) return 0;
    t = reinterpret_cast<detail::task_header*>(box.exchange(0, detail::mo_acquire));
  }
  std::uint32_t n = 0;
  while (t != nullptr && st.count < WEFT_WARP_SIZE) {
    st.slots[st.count++] = t;  // tagged as pushed (push_inbox)
    t = detail::untag(t)->link;
    ++n;
  }
  d.workers[id].inbox_rest = t;
  return n;
}

// The calling lane, in its task: whether its warp has nothing else to run (its only
// task, nothing staged, an empty ring), so that the lane may wait in place for a word
// another warp writes rather than park (device_io.hpp: an answer from the host;
// event::wait). Shared-memory words: a busy warp pays nothing for the look.
__device__ inline bool alone_in_warp(const lane_ids& id) noexcept {
  const staging_area& st = staging_of_this_warp();
  return st.batch_lanes == 1u << id.lane && st.count == 0 && st.ring_empty;
}

// What says whether a warp waiting in place has work besides the waiter: relaxed loads,
// issued together with the waiter's own poll and looked at after it (busy()). A relaxed
// poll does not wait for them; an acquire poll (event::wait's) seems to: see word_polls.
struct other_work_probe {
  std::uint32_t stop, bulk, reclaim;
  std::uint64_t timer, queued, pinned;
  const detail::task_header* pinned_rest;  // plain: only this warp's lane 0 writes it, between batches
  __device__ other_work_probe(device_sched& d, const inject_ring& home, std::uint32_t worker) noexcept
      : stop(detail::device_atomic<std::uint32_t>(d.stop).load(detail::mo_relaxed)),
        bulk(detail::device_atomic<std::uint32_t>(d.bulk_active).load(detail::mo_relaxed)),
        reclaim(detail::device_atomic<std::uint32_t>(d.reclaim_epoch).load(detail::mo_relaxed)),
        timer(detail::device_atomic<std::uint64_t>(d.timer_next).load(detail::mo_relaxed)),
        queued(home.size_approx()),
        pinned(detail::device_atomic<std::uint64_t>(d.workers[worker].inbox).load(detail::mo_relaxed)),
        pinned_rest(d.workers[worker].inbox_rest) {}
  __device__ bool busy(const staging_area& st) const noexcept {
    // reclaim: a lane found the frame pool dry and asks every warp to flush its lanes'
    // caches (flush_caches_if_asked, between batches), within reclaim_wait_ns.
    return stop != 0 || bulk != 0 || queued != 0 || pinned != 0 || pinned_rest != nullptr || st.count != 0 ||
           reclaim != st.reclaim_seen ||
           (timer != ~std::uint64_t{0} && timer <= globaltimer_ns());
  }
};

// An event wait in place (event::wait): a task alone in its warp that would park on an
// event polls the event's word instead, for up to word_wait_in_place_ns and only while
// nothing else wants the warp (other_work_probe), then parks as usual. A hop between
// two tasks on different warps then costs a store seen by a poll, not a wake-up, a
// queue and a batch on the waiter's warp (docs/design.md). The waiter never registers
// while it polls, so the setter has nobody to wake. The bound is the in-place IO
// wait's (~20 us: the longest a warp is kept from other work).
// Fairness: a wait that ends in place does not go back to the worker loop, so two tasks
// that keep waking each other this way keep their warps from it. Each round of polls
// loads a probe of what the loop would find (other_work_probe: the stop flag, the bulk
// board, the warp's inject shard, inbox, staging area and timers, a frame-pool reclaim)
// and looks at it after the round (a wait of word_polls polls or more); every
// look_every-th wait of a trip also looks after the first poll of each acquire round and
// at its match, since a ping-pong's waits match within a few polls and never reach the
// round's end. Any of those seen spends the trip's budget: a look after a poll ends the
// wait (give_warp_back) and the task parks or yields in await_suspend; a look at the
// match lets the task go on (matched) and its next wait does. Either way the warp goes
// round its loop once with every duty due: a task whose await_suspend finds its event
// set while its warp owes that trip yields instead of going on (device_owes_trip,
// event.hpp; one whose await_ready already finds it set still goes on). Ending the wait
// alone did not give the warp back: the word had usually turned set by the time
// await_suspend would register, and the task went on in place (thirty-fourth session).
// Besides, like tokio's coop budget, each in-place wait spends word_wait_cost of the
// trip's inline budget (staging_area::inline_left, reset at the top of each trip and
// shared with inline bulk jobs); after 1,024 in one trip the task parks or yields. The
// budget is that large because a parked hop costs ~18 us against ~1 us in place: at 16
// waits a trip (before the thirty-third session) every 17th hop of a ping-pong parked,
// its p99 was 17-20 us and its mean twice its p50. So a task pinned to a warp whose task
// keeps hopping in place (or a due timer, open bulk chunks, a queued task, a reclaim)
// waits about look_every of that task's waits (a ping-pong's rounds, two hops each) for
// the warp to come round, not the budget's 1,024 (~2 ms, until the thirty-fourth session).
// Worker 0, which polls the host, never waits in place.
inline constexpr std::uint64_t word_wait_in_place_ns = 20000;
// look_every: the in-place waits per early look (above). A look on every wait cost
// ping_pong_pinned's p50 64-96 ns on an H200 (960 -> 1,024-1,056 ns, thirty-fourth
// session), most of it the look after the first unmatched poll, which delays the next
// poll; one wait in 16 pays it, and a pinned task waits ~16 rounds of a ping-pong (32
// hops, ~30-65 us) at most. The wait that looks is picked by the budget left
// (inline_left % look_every): that counts waits only while each costs one unit.
inline constexpr std::uint32_t look_every = 16;
// word_polls: the polls between two looks at the other work. A look's loads seem to
// delay the acquire poll they overlap (as far as a probe's timings tell), so fewer looks
// make the hop shorter: 8 rather than 4 took ~40 ns off ping_pong_pinned's p50 on an
// H200, and leaves the other work waiting at most 8 round trips (~3 us) longer
// (docs/benchmarks.md, twenty-second session).
inline constexpr std::uint32_t word_polls = 8;
// acquire_poll_rounds: the rounds of word_polls polls that acquire. After them (about
// 5 us: two rounds of 8 L2 round trips of ~0.3 us) the polls are relaxed and an acquire fence
// follows the match. An acquire poll drops the SM's whole L1 once per round trip, which
// made the L1-resident loads of the SM's other warps 6x slower on an H100
// (bench/experiments/acquire_poll_l1.cu); a relaxed poll leaves the L1 alone, but the
// fence after its match adds to the hop (0.83-0.90 against 0.58-0.64 us in a two-SM
// probe on an H200, twenty-second session). A hop that comes within the first rounds
// (a ping-pong's, ~1 us) keeps the short form; a long wait, whose hop is long anyway,
// pays the fence once and stops invalidating its blockmates' L1 after the first rounds.
// Measured on an H100 (thirty-first session, pinned_parked_wake's answer_p50_ns): a hop
// that came after ~8 us of waiting took 1.25 us with the fence against 0.85 us with
// acquire polls throughout; ping_pong_pinned's p50 hops did not move.
inline constexpr std::uint32_t acquire_poll_rounds = 2;
inline constexpr std::uint32_t word_wait_cost = inline_jobs_per_trip / 1024;
static_assert(word_wait_cost == 1, "look_every picks a wait by the budget left: one unit a wait (see look_every)");
// The trip's budget as Fairness (above) reads and spends it: spent when too little is
// left for another in-place wait; then the task's next wait is not in place, a wait that
// finds its event set yields (device_owes_trip), and the warp's next trip makes every
// look of its loop (worker_loop's beat 0).
__device__ inline bool trip_budget_spent(const staging_area& st) noexcept { return st.inline_left < word_wait_cost; }
__device__ inline void spend_trip_budget(staging_area& st) noexcept { st.inline_left = 0; }
// A look after a poll saw other work for the warp (see Fairness above): the trip's budget
// is spent and the wait ends, so this wait parks, or yields in await_suspend.
__device__ inline bool give_warp_back(staging_area& budget) noexcept {
  spend_trip_budget(budget);
  return false;
}
// A matched wait: the task goes on at once; when it is a looking wait (look) and the
// probe saw other work, the trip's budget is spent, so that the task's next wait parks or yields.
__device__ inline bool matched(staging_area& budget, const other_work_probe& probe, bool look) noexcept {
  if (look && probe.busy(budget)) spend_trip_budget(budget);
  return true;
}
__device__ inline bool await_word_in_place(device_sched& d, const lane_ids& id, std::uint64_t& word,
                                           std::uint64_t want) noexcept {
  if (id.worker == 0 || !alone_in_warp(id)) return false;
  staging_area& budget = staging_of_this_warp();
  if (trip_budget_spent(budget)) return false;
  budget.inline_left -= word_wait_cost;  // only this lane runs in the warp's batch (alone_in_warp)
  const bool look = budget.inline_left % look_every == 0;  // a looking wait (Fairness)
  const inject_ring home = inject_of(d, id.worker);
  const staging_area& st = staging_of_this_warp();
  detail::device_atomic<std::uint64_t> w(word);
  const std::uint64_t start = globaltimer_ns();
  for (std::uint32_t round = 0;; ++round) {
    // The probe's loads go out first and are looked at after word_polls polls, so that
    // only the round's first poll waits for them (an acquire's L1 drop waits for the
    // loads in flight, as far as the probe's timings tell).
    const other_work_probe probe(d, home, id.worker);
    if (round < acquire_poll_rounds) {
      // Acquire: the setter's writes before its store, for the task, with no fence after
      // the match (see acquire_poll_rounds).
      for (std::uint32_t k = 0; k < word_polls; ++k) {
        if (w.load(detail::mo_acquire) == want) return matched(budget, probe, look);
        if (look && k == 0 && probe.busy(st)) return give_warp_back(budget);
      }
    } else {
      // Relaxed: this SM's L1 stays valid while the wait goes on. The fence after the
      // match makes the setter's writes before its store visible (a fence-based acquire).
      for (std::uint32_t k = 0; k < word_polls; ++k) {
        if (w.load(detail::mo_relaxed) == want) {
          detail::fence_device_acquire();
          return matched(budget, probe, look);
        }
      }
    }
    if (probe.busy(st)) return give_warp_back(budget);
    if (globaltimer_ns() - start > word_wait_in_place_ns) return false;
  }
}

// The frame pool's reclaim (device_frames.hpp): how long a lane that found the pool dry
// waits for the other warps to flush their lanes' caches (at least; a parked warp naps
// up to park_max_ns before it sees the request, so the wait also covers two naps), how
// often it retries meanwhile, and how long a dry class then fails at once.
inline constexpr std::uint64_t reclaim_wait_ns = 400000;
inline constexpr std::uint32_t reclaim_retry_ns = 16000;
inline constexpr std::uint64_t reclaim_quiet_ns = 1000000;

// Lane-wise: the pool had no block of this size for a worker lane. Only the cached classes
// can come back from lane caches (larger blocks are never cached): unless a reclaim of
// this class failed within reclaim_quiet_ns, flushes this lane's cache, asks every warp to
// flush theirs and retries until a block comes back or the wait above passed. nullptr:
// the pool is exhausted for this size (the caller reports out_of_memory).
__device__ inline __attribute__((noinline)) void* reclaim_then_allocate(device_sched& d, std::size_t n, lane_cache& c,
                                                                         std::uint32_t worker, std::uint8_t mark) noexcept {
  const int cls = size_class_pool::class_of(n);
  if (cls < 0 || static_cast<unsigned>(cls) >= lane_cache_classes) return nullptr;
  detail::device_atomic<std::uint64_t> quiet(d.reclaim_quiet_until[cls]);
  const std::uint64_t start = globaltimer_ns();
  if (start < quiet.load(detail::mo_relaxed)) return nullptr;
  device_frames frames(d);
  frames.flush(c, worker);
  detail::device_atomic<std::uint32_t>(d.reclaim_epoch).fetch_add(1, detail::mo_relaxed);
  const std::uint64_t naps = 2 * std::uint64_t{d.park_max_ns} + 100000;
  const std::uint64_t wait = naps > reclaim_wait_ns ? naps : reclaim_wait_ns;
  for (;;) {
    if (void* p = frames.allocate(n, &c, worker, mark)) return p;
    if (globaltimer_ns() - start >= wait) break;
    __nanosleep(reclaim_retry_ns);
  }
  quiet.store(globaltimer_ns() + reclaim_quiet_ns, detail::mo_relaxed);
  return nullptr;
}

// Warp-collective, between batches: when some lane asked for a reclaim since this warp
// last looked, every lane returns its frame cache to the warp's shard.
__device__ inline void flush_caches_if_asked(device_sched& d, staging_area& st, std::uint32_t worker,
                                             std::uint32_t lane) noexcept {
  int asked = 0;
  if (lane == 0) {  // only lane 0 touches reclaim_seen
    const std::uint32_t epoch = detail::device_atomic<std::uint32_t>(d.reclaim_epoch).load(detail::mo_relaxed);
    asked = epoch != st.reclaim_seen;
    st.reclaim_seen = epoch;
  }
  if (!__shfl_sync(full_mask, asked, 0)) return;
  device_frames(d).flush(d.caches[worker * WEFT_WARP_SIZE + lane], worker);
}

}  // namespace weft::exec

namespace weft::detail {

__device__ inline void* device_current_scheduler() noexcept { return exec::g_device_sched; }

__device__ inline std::uint32_t device_worker_index() noexcept {
  if (exec::g_device_sched == nullptr) return no_home;  // a run_inline kernel
  return exec::current_lane_ids().worker;
}
__device__ inline std::uint32_t device_worker_count(void* sched) noexcept {
  return static_cast<exec::device_sched*>(sched)->num_workers;
}
// Out of line: rare, and kept out of the resume path's registers (run_and_settle).
__device__ inline __attribute__((noinline)) void device_send_home(task_header* t) noexcept {
  auto* d = static_cast<exec::device_sched*>(t->sched);
  exec::push_inbox(*d, t->home, t);
}

// event::wait's in-place wait (exec::await_word_in_place); false outside the worker kernel.
// Called from the awaiter's await_ready, before the suspend point (event.hpp says why).
__device__ inline bool device_await_word_in_place(std::uint64_t& word, std::uint64_t want) noexcept {
  exec::device_sched* d = exec::g_device_sched;
  return d != nullptr && exec::await_word_in_place(*d, exec::current_lane_ids(), word, want);
}

// event::wait's await_suspend, on finding the event set after all: whether
// the calling task, alone in its warp, should yield rather than go on, because a look at
// the other work or the in-place waits spent its warp's trip budget (Fairness above).
__device__ inline bool device_owes_trip() noexcept {
  if (exec::g_device_sched == nullptr) return false;
  const exec::lane_ids id = exec::current_lane_ids();
  return exec::trip_budget_spent(exec::staging_of_this_warp()) && exec::alone_in_warp(id);
}

// Queues a spawn's entry: a new root's header (pinned to `home`, or no_home), or a
// spawn_group child's tagged slot (run.hpp, submit_group_child: never pinned; no frame
// exists yet, and the lane that takes it makes one: device_worker.hpp, start_group_child).
__device__ inline errc device_submit_entry(void* sched, task_header* t, std::uint32_t home) noexcept {
  auto* d = static_cast<exec::device_sched*>(sched);
  const exec::lane_ids id = exec::current_lane_ids();
  if (device_atomic<std::uint32_t>(d->stop).load(mo_relaxed)) return errc::shutting_down;
  if (home != no_home) {
    // Counted before the task is published, so that its completion (at home) never takes
    // the count below zero. Rare: only pinned spawns pay this RMW.
    device_atomic<std::uint32_t>(d->workers[home].pinned_live).fetch_add(1, mo_relaxed);
    if (home != id.worker) {
      exec::push_inbox(*d, home, t);  // pinned elsewhere: never full
    } else if (!exec::enqueue_from_lane(*d, id, t, /*may_fail=*/true)) {
      device_atomic<std::uint32_t>(d->workers[home].pinned_live).fetch_sub(1, mo_relaxed);
      return errc::queue_full;
    }
  } else if (!exec::enqueue_from_lane(*d, id, t, /*may_fail=*/true)) {
    return errc::queue_full;
  }
  cuda::atomic_ref<std::uint64_t, cuda::thread_scope_block>(exec::g_worker_consts.workers[id.worker].stats.spawned)
      .fetch_add(1, cuda::std::memory_order_relaxed);
  return errc{};
}
__device__ inline errc device_submit_root(void* sched, task_header* t) noexcept {
  return device_submit_entry(sched, t, t->home);  // `home` before the stop's load: spawn_on's store, forwarded
}

// A pinned root completed: the calling lane is its home's (run_and_settle runs pinned
// tasks only there), so this warp counts one fewer (device_worker::pinned_live).
__device__ inline void device_pinned_root_completed() noexcept {
  exec::device_sched* d = exec::g_device_sched;
  if (d == nullptr) return;
  device_atomic<std::uint32_t>(d->workers[exec::current_lane_ids().worker].pinned_live).fetch_sub(1, mo_relaxed);
}

__device__ inline void device_schedule(task_header* t) noexcept {
  auto* d = static_cast<exec::device_sched*>(t->sched);
  exec::enqueue_from_lane(*d, exec::current_lane_ids(), t, /*may_fail=*/false);
}

// Destroying a suspended frame destroys the task objects in it, which destroy their
// child frames, and so on: recursion as deep as the chain, and the device stack is
// 1 KiB. So a lane that is already destroying defers nested destructions onto its own
// list and drains it in a loop (the host does the same with a thread-local list). A
// root's own chain is destroyed innermost first before it (destroy_frame_and_chain,
// task_header.hpp), so that no child outlives the parent frame it may refer to.
__device__ inline void device_destroy_frame(void* frame) noexcept {
  exec::device_sched* d = exec::g_device_sched;
  if (d == nullptr) return destroy_frame_and_chain(frame);  // run_inline kernels: shallow chains
  const exec::worker_consts& k = exec::g_worker_consts;
  exec::lane_cache& lc = k.caches[k.tearing_down ? 0 : exec::current_lane_ids().global_lane];
  if (lc.destroying) {
    promise_of(frame).continuation = lc.destroy_head;
    lc.destroy_head = frame;
    return;
  }
  lc.destroying = 1;
  destroy_frame_and_chain(frame);
  while (void* f = lc.destroy_head) {
    lc.destroy_head = promise_of(f).continuation;
    destroy_frame_and_chain(f);
  }
  lc.destroying = 0;
}

// (t->sched need not be loaded: only this module's kernels, the workers and the
// teardown, run or destroy its roots, and their constants name that same runtime.)
__device__ inline void device_destroy_root(task_header* t) noexcept {
  const exec::worker_consts& k = exec::g_worker_consts;
  if (!k.tearing_down)
    cuda::atomic_ref<std::uint64_t, cuda::thread_scope_block>(k.workers[exec::current_lane_ids().worker].stats.destroyed)
        .fetch_add(1, cuda::std::memory_order_relaxed);
  device_destroy_frame(frame_of(t));
}

// Jobs of at most this many chunks run on the posting warp alone (device_bulk.hpp).
inline constexpr std::uint32_t bulk_private_chunks = 2;

__device__ inline bool device_has_executor() noexcept { return exec::g_device_sched != nullptr; }

// Leaves a bulk job for the posting warp, which runs it or puts it on the bulk board
// after its batch (device_bulk.hpp).
__device__ inline errc device_submit_bulk(bulk_job* j) noexcept {
  exec::device_sched* d = exec::g_device_sched;
  cut_device_bulk(*j, d->num_workers);
  j->held = j->chunks <= bulk_private_chunks;  // always run by this warp: hold the task
  exec::staging_area& st = exec::staging_of_this_warp();
  // Block scope: only this warp's lanes post here, during the batch.
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> cnt(st.bulk_count);
  const std::uint32_t i = cnt.fetch_add(1, cuda::std::memory_order_relaxed);
  if (i >= WEFT_WARP_SIZE) {  // cannot happen: a lane posts at most once per batch (it parks)
    cnt.fetch_sub(1, cuda::std::memory_order_relaxed);
    return errc::queue_full;
  }
  st.bulk_jobs[i] = j;  // read by the warp after the batch's __syncwarp
  return errc{};
}

// Whether the calling task may run a small bulk() job at once, without suspending: it is
// the only one in its batch and nothing else waits for its warp, so the other 31 lanes
// wait in serve_lone_task to run it (device_bulk.hpp, "inline jobs"). For a bulk() job
// of n indices: its number of chunks (of bulk_min_chunk_items), and the caller runs it
// next with device_bulk_inline_run; 0: submit it. Shared-memory reads only, and no
// division by a run-time value: a job of at most
// bulk_private_chunks * 1024 indices has 1024-index chunks whatever the worker count
// (cut_bulk), so a busy warp pays next to nothing for the look.
__device__ inline std::uint32_t device_bulk_inline_chunks(std::uint64_t n) noexcept {
  exec::staging_area& st = exec::staging_of_this_warp();
  if (n > bulk_private_chunks * bulk_min_chunk_items) return 0;
  // The key and this lane's bit: the lone batch's task, in the worker kernel (a stray
  // key in another kernel's shared memory would need this lane's bit beside it too).
  const std::uint32_t me = 1u << (threadIdx.x % WEFT_WARP_SIZE);
  // Every word is read before any is tested (`&`, not `&&`): one shared-memory round trip
  // on a lone task's step instead of one per test, each waited on before its branch.
  const bool lone = (st.lone == exec::lone_batch_key) & (st.batch_lanes == me) & (st.inline_left != 0);
  const bool idle = (st.count == 0) & (st.ring_empty != 0);  // else tasks queued here: let them run
  if (!(lone & idle)) return 0;
  return static_cast<std::uint32_t>((n + bulk_min_chunk_items - 1) / bulk_min_chunk_items);
}

// Where the task copies its callable for the helpers (when it is trivially copyable and
// at most bulk_inline_fn_bytes), before device_bulk_inline_run.
__device__ inline void* device_bulk_inline_fn_slot() noexcept { return exec::staging_of_this_warp().inline_fn; }

// That slot, found from the descriptor a server was handed: always some warp's
// inline_desc (device_bulk_inline_run publishes nothing else), beside its inline_fn.
__device__ inline const void* device_bulk_inline_fn_of(const bulk_job* desc) noexcept {
  constexpr std::size_t gap = offsetof(exec::staging_area, inline_fn) - offsetof(exec::staging_area, inline_desc);
  return reinterpret_cast<const unsigned char*>(desc) + gap;
}

// Runs the job (device_bulk_inline_chunks gave its chunks; its run_chunk and n) on the
// helper lanes, with `fn` as its callable (the frame's, or the copy in the slot above),
// and returns when every f(i) has returned and its writes are visible here. The helpers
// read the descriptor from the staging area: in the frame, each of their first reads
// would be an L2 round trip on the step's critical path (docs/benchmarks.md, fifteenth
// session).
__device__ inline void device_bulk_inline_run(bulk_chunk_fn run_chunk, bulk_server_fn server, const void* fn,
                                              std::uint64_t n, std::uint32_t chunks) noexcept {
  exec::staging_area& st = exec::staging_of_this_warp();
  bulk_job* copy = new (st.inline_desc) bulk_job;  // field by field, from registers
  copy->run_chunk = run_chunk;
  copy->serve_server = server;
  copy->fn = fn;
  copy->n = n;
  copy->chunk_items = bulk_min_chunk_items;
  copy->chunks = chunks;
  if (exec::hand_to_blockmates(st, copy, exec::current_lane_ids().worker)) return;  // they ran it
  st.inline_job = copy;
  __syncwarp();  // (1) the descriptor, the callable and inline_job before the helpers read them
  --st.inline_left;  // (the helpers never read these two: off their critical path)
  ++st.stats.inline_bulk;
  __syncwarp();  // (2) every helper's calls have returned; their writes are ordered before ours
}

// The GPU's global nanosecond timer (%globaltimer; its resolution is about 1 us on
// recent GPUs, coarser on some older ones).
__device__ inline std::uint64_t device_now_ns() noexcept { return exec::globaltimer_ns(); }

// Registers a parked task with the executor's timer heap (device_timers.hpp).
__device__ inline errc device_schedule_at(task_header* t, std::uint64_t deadline) noexcept {
  auto* d = static_cast<exec::device_sched*>(t->sched);
  if (d == nullptr || exec::g_device_sched == nullptr) return errc::backend_unavailable;  // run_inline
  return exec::device_timers(*d).add(t, deadline) ? errc{} : errc::queue_full;
}

// The mailbox a request with opcode `op` from the calling lane goes to (mailbox_for),
// or null with no reactor. Read from the constant bank: no L2 round trip on the path.
__device__ inline mailbox* device_mailbox_for(opcode op) noexcept {
  const io_link io = exec::g_device_io;
  if (exec::g_device_sched == nullptr || io.count == 0) return nullptr;
  return &io.boxes[mailbox_for(io, op, exec::current_lane_ids().worker)];
}


// The calling lane's frame cache; none in the teardown kernels, whose lanes are not the
// workers' (program_teardown flushes the caches after them: device_program.hpp).
__device__ inline exec::lane_cache* device_lane_cache(exec::device_sched& d, const exec::lane_ids& id) noexcept {
  return exec::g_worker_consts.tearing_down ? nullptr : &d.caches[id.global_lane];
}

// The pool's out-of-line paths: a lane cache that is empty or full, the teardown kernels
// (no lane caches), blocks larger than the cached classes.
__device__ inline __attribute__((noinline)) void* device_frame_allocate_slow(exec::device_sched& d, std::size_t n,
                                                                             std::uint8_t mark) noexcept {
  const exec::lane_ids id = exec::current_lane_ids();
  exec::lane_cache* c = device_lane_cache(d, id);
  void* p = exec::device_frames(d).allocate(n, c, id.worker, mark);
  if (p == nullptr && c != nullptr) p = exec::reclaim_then_allocate(d, n, *c, id.worker, mark);
  return p;
}
__device__ inline __attribute__((noinline)) void device_frame_deallocate_slow(exec::device_sched& d, void* f,
                                                                               std::size_t n) noexcept {
  const exec::lane_ids id = exec::current_lane_ids();
  exec::lane_cache* c = device_lane_cache(d, id);
  exec::device_frames(d).deallocate(f, n, c, id.worker);
}

// A worker lane's cached size class of an n-byte frame, or -1 (not cached, or teardown).
__device__ inline int device_cached_class(std::size_t n) noexcept {
  const int c = exec::size_class_pool::class_of(n);  // folds where n is a frame's constant size
  return c >= 0 && static_cast<unsigned>(c) < exec::lane_cache_classes && !exec::g_worker_consts.tearing_down ? c : -1;
}

// Inline: the lane's own cache, with the pool's addresses from the constant bank (a
// dependent load of the cache's count, then of its slot; nothing else waited on).
__device__ inline void* device_frame_allocate(std::size_t n, std::uint8_t mark = exec::device_frames::live_frame) noexcept {
  if (exec::device_sched* d = exec::g_device_sched) {
    const exec::worker_consts& k = exec::g_worker_consts;
    std::uint32_t g = 0;
    if (const int c = device_cached_class(n);
        c >= 0 && exec::device_frames::take_cached(k.caches[exec::current_lane_ids().global_lane], c, &g)) {
      exec::device_frames::mark_block(k.block_live, g, mark);
      return exec::device_frames::block_in(k.arena, g);
    }
    return device_frame_allocate_slow(*d, n, mark);
  }
  exec::size_class_pool* p = exec::g_device_frame_pool;
  return p ? p->allocate(n) : nullptr;
}

__device__ inline void device_frame_deallocate(void* f, std::size_t n) noexcept {
  if (exec::device_sched* d = exec::g_device_sched) {
    const exec::worker_consts& k = exec::g_worker_consts;
    const std::uint32_t g = exec::device_frames::granule_in(k.arena, f);
    if (const int c = device_cached_class(n); c >= 0) {
      if (exec::device_frames::give_cached(k.caches[exec::current_lane_ids().global_lane], c, g)) {
        exec::device_frames::mark_block(k.block_live, g, 0);
        return;
      }
    }
    return device_frame_deallocate_slow(*d, f, n);
  }
  exec::g_device_frame_pool->deallocate(f, n);
}

}  // namespace weft::detail
#endif
