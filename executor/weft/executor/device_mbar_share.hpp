// weft/executor/device_mbar_share.hpp - a lone task's larger inline bulk jobs run by the
// idle warps of its block ("servers"), handed over through two mbarriers by the task lane
// alone; its 31 helper lanes stay parked in serve_lone_task's __syncwarp.
//
// Why (docs/benchmarks.md, eighteenth to twentieth sessions): a 256-index step on the
// task's own warp makes each of its 31 lanes run ~9 dependent iterations; on the block's
// other 3 warps (96 lanes) it is ~3. A hand-over through shared-memory words cost ~1,000
// cycles there and back and lost; an mbarrier wakes a waiting warp ~80 cycles after the
// arrival. Servers run each run of same-typed jobs inside one call (serve_server, bulk.hpp):
// one call per job through the descriptor's function pointer cost ~500 cycles a step.
//
// Roles (one block_share per block, shared memory, block-scope atomics only: every party
// is a warp of this block, on this SM, so nothing needs the device scope or a fence that
// would drop the SM's L1):
//   owner   the task lane of a lone batch, at an inline job of at least share_min_items
//           indices: takes `owner` (CAS 0 -> its warp index + 1) if free. While it owns
//           the block and `state` has members, each job goes: CAS state to busy (fails
//           when a server joined or left meanwhile: the job then runs on the task's own
//           warp), write `job`, arrive at `go` (release), arrive at `done` once for each
//           absent server, wait on `done` (acquire), state = next phase, not busy. No
//           warp-wide operation: the helpers never see a shared job.
//   server  an idle blockmate (find_work, or out of its nap; never worker 0, which polls
//           the host) joins while not busy (CAS sets its bit), then waits on `go` for the
//           phase after the one it joined at, runs its share (rank among the busy state's
//           members) and arrives at `done` once per warp, after a __syncwarp orders its
//           lanes' writes. After each failed wait (~4 us) it looks at the reasons to
//           leave, and leaves by CAS (only while not busy) after share_idle_ns without a
//           job or when wanted elsewhere (its staging area, its inject shard, its
//           inbox of pinned tasks, the bulk board, a frame-pool reclaim, the stop
//           flag); the last one out, or one that left for want of jobs, frees `owner`
//           (a CAS: it stays a hint, see below).
// Invariants: a server's bit is in `state` from its join until its leave, and neither
// happens while busy, so the member set of a job is fixed from the owner's CAS to its
// reset. Only a CAS from not-busy to busy publishes, so at most one job is in flight
// even when two warps read themselves as `owner` (a hint: a leaving server may free it
// after another warp published); `done` expects share_max_servers arrivals a phase: the members' and the owner's
// stand-ins for the others. Phases: state >> 8 counts published jobs; `go`'s phase k
// completes at job k, so a server that joined at count P waits for parity P & 1, then
// (P + 1) & 1, ...
// Memory orders: mbarrier.arrive has release and try_wait acquire semantics at CTA scope,
// which carry the job (descriptor and callable, in the owner's staging area) to the
// servers and every server's f(i) writes back to the owner; `state`, `owner` and `job`
// are relaxed block-scope words whose order the barriers and the CAS provide.
#pragma once
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/detail/bulk_job.hpp"
#include "weft/executor/device_layout.hpp"
#include "weft/executor/device_queues.hpp"
#include "weft/executor/device_timers.hpp"

#if WEFT_CUDA_COMPILE
// mbarrier.try_wait and an arrival with a count need sm_90: below it nothing is shared
// (share_mates_of gives 0) and these functions are never reached.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define WEFT_BLOCK_SHARE 0
#else
#define WEFT_BLOCK_SHARE 1
#endif
namespace weft::exec {

template <class T>
using blk_atomic = cuda::atomic_ref<T, cuda::thread_scope_block>;
inline constexpr std::uint32_t share_busy = 0x80, share_members = (1u << worker_warps_per_block) - 1;
static_assert(share_members < share_busy, "one member bit per warp of the block, below the busy bit");
inline constexpr std::uint32_t share_max_servers = worker_warps_per_block - 1;
inline constexpr std::uint64_t share_idle_ns = 20000;
// Smaller jobs stay on the task's own warp: a job of at most 2 x 31 indices takes its
// lanes two iterations or fewer, less than the hand-over (bulk(1) was 25-30 % slower
// handed over, nineteenth session).
inline constexpr std::uint64_t share_min_items = 2 * (WEFT_WARP_SIZE - 1) + 1;

static __shared__ block_share weft_block_share;

__device__ inline std::uint32_t smem_addr(const void* p) noexcept {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// Copies Bytes from shared memory at src into dst, in words of Word bytes. Each load is an
// asm volatile statement, so the compiler issues it where it stands (a plain load was sunk
// past the branch that waits on the descriptor). It must not rise above the try_wait that
// acquired the job: clang models a volatile asm as touching any memory (a barrier to its
// scheduler), though the language does not promise it, and src depends on the job pointer
// read after that wait.
template <std::size_t Word, std::size_t Bytes>
__device__ __forceinline__ void load_shared_words(void* dst, const void* src) noexcept {
  static_assert(Bytes % Word == 0 && (Word == 4 || Word == 8));
  const std::uint32_t a = smem_addr(src);
#pragma unroll
  for (std::size_t i = 0; i < Bytes / Word; ++i) {
    if constexpr (Word == 8) {
      std::uint64_t w;
      asm volatile("ld.shared.b64 %0, [%1];" : "=l"(w) : "r"(a + static_cast<std::uint32_t>(i * 8)));
      __builtin_memcpy(static_cast<unsigned char*>(dst) + i * 8, &w, 8);
    } else {
      std::uint32_t w;
      asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w) : "r"(a + static_cast<std::uint32_t>(i * 4)));
      __builtin_memcpy(static_cast<unsigned char*>(dst) + i * 4, &w, 4);
    }
  }
}

#if WEFT_BLOCK_SHARE
__device__ inline void mbar_init(unsigned long long* b, std::uint32_t count) noexcept {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count) : "memory");
}
__device__ inline void mbar_arrive(unsigned long long* b) noexcept {  // release, cta
  unsigned long long token;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(token) : "r"(smem_addr(b)) : "memory");
}
__device__ inline void mbar_arrive(unsigned long long* b, std::uint32_t count) noexcept {  // count arrivals at once
  unsigned long long token;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(token) : "r"(smem_addr(b)), "r"(count) : "memory");
}
// Acquire, cta. A wait that fails has suspended the lane ~4 us first (H200, twentieth
// session's review), unless the phase completed meanwhile: then it returns ~80 cycles
// after the arrival.
__device__ inline bool mbar_try_wait(unsigned long long* b, std::uint32_t parity) noexcept {
  std::uint32_t ok = 0;
  asm volatile(
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(ok)
      : "r"(smem_addr(b)), "r"(parity)
      : "memory");
  return ok != 0;
}
#else
__device__ inline void mbar_init(unsigned long long*, std::uint32_t) noexcept {}
__device__ inline void mbar_arrive(unsigned long long*, std::uint32_t = 1) noexcept {}
__device__ inline bool mbar_try_wait(unsigned long long*, std::uint32_t) noexcept { return true; }
#endif

// Thread 0 of each block, at kernel start (a __syncthreads follows).
__device__ inline void init_block_share() noexcept {
  block_share& b = weft_block_share;
  mbar_init(&b.go, 1);
  mbar_init(&b.done, share_max_servers);
  b.owner = 0;
  b.state = 0;
  b.job = nullptr;
}

// The blockmates that may serve worker `id` (bit w: the block's warp w): not itself, not
// worker 0, and only workers that run (config::workers need not fill the last block).
__device__ inline std::uint32_t share_mates_of(std::uint32_t id, std::uint32_t num_workers) noexcept {
  if (!WEFT_BLOCK_SHARE) return 0;
  const std::uint32_t base = id - id % worker_warps_per_block;
  std::uint32_t m = 0;
  for (std::uint32_t w = 0; w < worker_warps_per_block; ++w)
    if (base + w != id && base + w != 0 && base + w < num_workers) m |= 1u << w;
  return m;
}

// The task lane of worker `id` at an inline job (device_bulk_inline_run): true when the
// servers ran it.
__device__ __forceinline__ bool hand_to_blockmates(staging_area& st, const detail::bulk_job* copy,
                                                   std::uint32_t id) noexcept {
  if (!WEFT_BLOCK_SHARE || copy->n < share_min_items) return false;  // below sm_90: never shared
  block_share& b = weft_block_share;
  blk_atomic<std::uint32_t> owner(b.owner), state(b.state);
  const std::uint32_t me = id % worker_warps_per_block + 1;
  // The three words are read before any is tested: one shared-memory round trip.
  const std::uint32_t mates = st.share_mates;
  std::uint32_t o = owner.load(cuda::std::memory_order_relaxed);
  std::uint32_t w = state.load(cuda::std::memory_order_relaxed);
  if (mates == 0) return false;  // no blockmate may serve this warp
  if (o != me) {
    if (o == 0) owner.compare_exchange_strong(o, me, cuda::std::memory_order_relaxed);
    return false;  // taken now (servers join from here on), or another warp's
  }
  const std::uint32_t m = w & share_members;
  // Not busy: `owner` is a hint (a leaving server frees it while another warp may
  // already have joined and this one published), so two warps may both read themselves
  // as owner; the busy bit lets only one publish at a time.
  if (m == 0 || (w & share_busy) != 0 ||
      !state.compare_exchange_strong(w, w | share_busy, cuda::std::memory_order_relaxed))
    return false;
  blk_atomic<const detail::bulk_job*>(b.job).store(copy, cuda::std::memory_order_relaxed);
  mbar_arrive(&b.go);  // release: the job, its descriptor and the callable
  const std::uint32_t absent = share_max_servers - static_cast<std::uint32_t>(__popc(m));
  if (absent != 0) mbar_arrive(&b.done, absent);  // stand-ins for the blockmates not serving
  --st.inline_left;  // while the servers run the job: off the step's critical path
  ++st.stats.inline_bulk;
  ++st.stats.inline_shared;
  const std::uint32_t phase = w >> 8;
  while (!mbar_try_wait(&b.done, phase & 1)) {
  }  // acquire: every server's f(i) writes
  state.store(((phase + 1) << 8) | m, cuda::std::memory_order_relaxed);
  return true;
}

// Lane 0 of a server: whether it should go back to its own loop.
__device__ inline bool share_wanted_elsewhere(device_sched& d, const staging_area& st, std::uint32_t id) noexcept {
  inject_shard& home = d.inject[id % d.num_inject];
  const std::uint64_t tail = detail::device_atomic<std::uint64_t>(home.tail).load(detail::mo_relaxed);
  const std::uint64_t head = detail::device_atomic<std::uint64_t>(home.head).load(detail::mo_relaxed);
  const std::uint64_t pinned = detail::device_atomic<std::uint64_t>(d.workers[id].inbox).load(detail::mo_relaxed);
  return pinned != 0 || detail::device_atomic<std::uint32_t>(d.stop).load(detail::mo_relaxed) != 0 ||
         detail::device_atomic<std::uint32_t>(d.bulk_published).load(detail::mo_relaxed) != st.bulk_seen ||
         detail::device_atomic<std::uint32_t>(d.reclaim_epoch).load(detail::mo_relaxed) != st.reclaim_seen ||
         st.count != 0 || tail > head;
}

// Lane 0 of an idle warp (find_work, park_lane0): whether an owner waits for servers.
__device__ inline bool share_calls(std::uint32_t id) noexcept {
  if (id == 0) return false;
  block_share& b = weft_block_share;
  const std::uint32_t o = blk_atomic<std::uint32_t>(b.owner).load(cuda::std::memory_order_relaxed);
  const std::uint32_t w = blk_atomic<std::uint32_t>(b.state).load(cuda::std::memory_order_relaxed);
  return o != 0 && o != id % worker_warps_per_block + 1 && (w & (1u << (id % worker_warps_per_block))) == 0;
}

// Lane 0 of a server: leaves unless a job is being published. The last one out, or one
// that left for want of jobs (the owner's task has likely finished or gone round its
// loop), frees `owner` if it still names the warp read before: else idle blockmates
// would rejoin a finished owner on every idle trip instead of parking or stealing.
__device__ inline bool share_leave(block_share& b, std::uint32_t bit, bool idle) noexcept {
  blk_atomic<std::uint32_t> state(b.state), owner(b.owner);
  std::uint32_t o = owner.load(cuda::std::memory_order_relaxed);
  std::uint32_t w = state.load(cuda::std::memory_order_relaxed);
  if ((w & share_busy) != 0 || !state.compare_exchange_strong(w, w & ~bit, cuda::std::memory_order_relaxed))
    return false;
  if (idle || (w & share_members & ~bit) == 0) owner.compare_exchange_strong(o, 0, cuda::std::memory_order_relaxed);
  return true;
}

// A joined server warp's view, passed to the job's serve_server (bulk.hpp) as void*.
struct server_ctx {
  device_sched* d;
  staging_area* st;
  std::uint32_t id, lane, bit;
  std::uint32_t phase;  // the job it waits for next
  std::uint32_t rank, lanes;  // of the current job: its lane's rank among the members' lanes
  std::uint32_t jobs;
  std::uint64_t since;  // lane 0: when its last job ended (or it joined)
};

// Warp-collective: waits for the next job (null: the server left), and sets its rank.
__device__ __forceinline__ const detail::bulk_job* server_wait(server_ctx& c) noexcept {
  block_share& b = weft_block_share;
  for (;;) {
    if (__all_sync(full_mask, mbar_try_wait(&b.go, c.phase & 1))) break;
    // A failed wait took ~4 us: look at the reasons to leave after each one.
    int leave = 0;
    if (c.lane == 0) {
      const bool idle = globaltimer_ns() - c.since > share_idle_ns;
      if (idle || share_wanted_elsewhere(*c.d, *c.st, c.id)) leave = share_leave(b, c.bit, idle);
    }
    if (__shfl_sync(full_mask, leave, 0) != 0) return nullptr;
  }
  // Job `phase` is published: every lane saw go's phase complete (acquire).
  const std::uint32_t m = blk_atomic<std::uint32_t>(b.state).load(cuda::std::memory_order_relaxed) & share_members;
  c.lanes = WEFT_WARP_SIZE * static_cast<std::uint32_t>(__popc(m));
  c.rank = WEFT_WARP_SIZE * static_cast<std::uint32_t>(__popc(m & (c.bit - 1))) + c.lane;
  return blk_atomic<const detail::bulk_job*>(b.job).load(cuda::std::memory_order_relaxed);
}

// Warp-collective, after its share of a job: reports it, then waits for the next.
__device__ __forceinline__ const detail::bulk_job* server_next(server_ctx& c) noexcept {
  __syncwarp();  // every lane's f(i) writes before lane 0's arrival carries them
  if (c.lane == 0) {
    mbar_arrive(&weft_block_share.done);
    c.since = globaltimer_ns();
  }
  ++c.phase;
  ++c.jobs;
  return server_wait(c);
}

// Warp-collective, an idle warp: serves an owner of its block until idle. True: it joined.
__device__ __noinline__ inline bool serve_blockmate(device_sched& d, staging_area& st, std::uint32_t id,
                                                    std::uint32_t lane) noexcept {
  if (id == 0) return false;
  block_share& b = weft_block_share;
  const std::uint32_t bit = 1u << (id % worker_warps_per_block);
  std::uint32_t joined = ~0u;  // the phase it joined at
  if (lane == 0 && share_calls(id) && !share_wanted_elsewhere(d, st, id)) {
    blk_atomic<std::uint32_t> state(b.state);
    std::uint32_t w = state.load(cuda::std::memory_order_relaxed);
    if ((w & (share_busy | bit)) == 0 && state.compare_exchange_strong(w, w | bit, cuda::std::memory_order_relaxed))
      joined = w >> 8;
  }
  joined = __shfl_sync(full_mask, joined, 0);
  if (joined == ~0u) return false;
  server_ctx c{&d, &st, id, lane, bit, joined, 0, 0, 0, lane == 0 ? globaltimer_ns() : 0};
  const detail::bulk_job* j = server_wait(c);
  while (j != nullptr) j = j->serve_server(j, &c);  // one call per run of same-typed jobs
  if (lane == 0) st.stats.inline_jobs_served += c.jobs;
  return true;
}

}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
