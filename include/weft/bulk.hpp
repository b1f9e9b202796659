// weft/bulk.hpp - data-parallel work from a task: bulk(n, f) and bulk_warps(k, f).
//
//   co_await weft::bulk(n, [=] WEFT_HOST_DEVICE (std::size_t i) { y[i] = a * x[i] + y[i]; });
//   co_await weft::bulk_warps(k, [=] WEFT_HOST_DEVICE (weft::warp_ctx& w) { ... w.reduce_add(v) ... });
//   weft::result<void> r = co_await weft::try_await(weft::bulk(n, f));
//
// bulk(n, f) calls f(i) once for every i < n; bulk_warps(k, f) calls f(w) on each of k
// warp jobs, with all 32 lanes of a warp (weft/warp.hpp). The awaiting task resumes when
// the last call has returned, and sees every write the calls made. The calls run
// concurrently and in no particular order; f must not wait for another call.
//
// On the GPU the work runs on the executor's worker warps, between their task batches;
// no kernel is launched (design: executor/weft/executor/device_bulk.hpp):
//   * bulk cuts [0, n) into chunks of 1024 or more consecutive indices; lane l of a warp
//     runs indices begin + l, begin + l + 32, ... so a warp's accesses coalesce;
//   * a job of one or two chunks runs on the warp whose lane posted it, right after its
//     batch: no other warp is involved, which is what keeps a chain of small steps fast;
//     a task that runs alone in its warp's batch (bulk(), not bulk_warps) has such a job
//     run inside the await by the warp's 31 idle lanes, and does not suspend;
//   * a larger job goes on the bulk board, where idle warps are woken to take chunks.
// On the host backend each warp job runs as 32 Boost.Context fibers (executor/host_warp.cpp).
// A job of more than one chunk (bulk: more than 4,096 indices; bulk_warps: two warp jobs
// or more) on a runtime of two or more worker threads goes on the host's bulk board,
// where the worker threads take its chunks before their next task, the awaiting task's
// own thread first, and the task resumes after the last chunk
// (executor/weft/executor/host_bulk.hpp). A smaller job runs on the awaiting task's
// thread before it goes on, and after 1,024 such steps in one turn on its thread the
// task yields once (a coop budget: executor/weft/executor/host_executor.hpp), as the
// GPU's inline steps go round the warp's loop once per 1,024.
//
// f is copied into the awaiting task's frame and called through a const reference from
// many lanes at once; on the GPU some lanes may call further copies of it (in shared
// memory), so nothing may rely on its address. Which lane runs which index is
// unspecified, and f of bulk() must not use warp-wide operations (__syncwarp, shuffles,
// votes): use bulk_warps for that.
// Errors: bulk_warps with more than 2^30 warp jobs, or either one
// with more than 2^30 chunks, is invalid_argument; bulk_warps in a kernel with no
// executor (run_inline) is backend_unavailable. As for any await, the error fails the
// awaiting task, or is returned by try_await(bulk(...)). n == 0 completes at once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/detail/bulk_job.hpp"
#include "weft/detail/run.hpp"
#include "weft/result.hpp"
#include "weft/warp.hpp"

namespace weft {

namespace detail {

template <class F>
WEFT_HOST_DEVICE void run_element_chunk(const bulk_job& j, std::uint32_t c, std::uint32_t lane, std::uint32_t lanes) {
  const F& f = *static_cast<const F*>(j.fn);
  const std::uint64_t begin = std::uint64_t{c} * j.chunk_items;
  const std::uint64_t end = j.n - begin < j.chunk_items ? j.n : begin + j.chunk_items;
  for (std::uint64_t i = begin + lane; i < end; i += lanes) f(static_cast<std::size_t>(i));
}

// Whether a lone task's inline job carries a copy of F in its warp's staging area
// (bulk_awaiter::run_inline_if_lone) rather than a pointer into the frame.
template <class F>
inline constexpr bool bulk_fn_copied = std::is_trivially_copyable_v<F> && sizeof(F) <= bulk_inline_fn_bytes &&
                                       alignof(F) <= bulk_inline_fn_align;

#if WEFT_DEVICE_PASS
// bulk_server_fn for element jobs: a server warp's side (device_mbar_share.hpp). Each turn
// runs its share of the job inline, then server_next reports it and waits for the next.
// The server's context is copied into registers for the run (read through the pointer,
// it came from the caller's local memory on every job), each descriptor is read once, and
// a copied callable is read at once beside it (twenty-third session, docs/benchmarks.md).
template <class F>
__device__ const bulk_job* serve_server_jobs(const bulk_job* j, void* server) {
  exec::server_ctx& caller = *static_cast<exec::server_ctx*>(server);
  exec::server_ctx c = caller;
  for (;;) {
    const bulk_job d = *j;
    if constexpr (bulk_fn_copied<F>) {
      // The callable's words are read now, beside the descriptor, from their fixed place
      // next to it (asm: not moved after the loop's bounds test, which waits on d).
      // Whole words, so F's size rounded up (a captureless lambda is 1 byte): the slot is
      // bulk_inline_fn_bytes long and aligned to bulk_inline_fn_align, so the tail is in it.
      constexpr std::size_t word = alignof(F) >= 8 ? 8 : 4, bytes = (sizeof(F) + word - 1) / word * word;
      static_assert(bytes <= bulk_inline_fn_bytes && word <= bulk_inline_fn_align);
      alignas(F) alignas(word) unsigned char buf[bytes];
      exec::load_shared_words<word, bytes>(buf, device_bulk_inline_fn_of(j));
      const F& f = *std::launder(reinterpret_cast<const F*>(buf));
      std::uint32_t k = 0;
      // The loop is run_element_chunk's, written out: calling a shared helper instead
      // reordered this function's code, and the one run of that build measured
      // dependent_decision at 1.30-1.33 us against 1.17-1.27 (twenty-third session; not A/B'd).
      do {  // a shared job has share_min_items indices or more: one chunk at least
        const std::uint64_t begin = std::uint64_t{k} * d.chunk_items;
        const std::uint64_t end = d.n - begin < d.chunk_items ? d.n : begin + d.chunk_items;
        for (std::uint64_t i = begin + c.rank; i < end; i += c.lanes) f(static_cast<std::size_t>(i));
      } while (++k < d.chunks);
    } else {
      for (std::uint32_t k = 0; k < d.chunks; ++k) run_element_chunk<F>(d, k, c.rank, c.lanes);
    }
    j = exec::server_next(c);
    if (j == nullptr || j->serve_server != &serve_server_jobs<F>) {
      caller = c;  // its phase, job count and idle clock, for the caller's next job
      return j;
    }
  }
}
#endif

template <class F>
struct warp_body_arg {
  const F* f;
  std::uint64_t warp;
  std::uint64_t warps;
};

template <class F>
WEFT_HOST_DEVICE void run_warp_chunk(const bulk_job& j, std::uint32_t c, std::uint32_t lane, std::uint32_t /*lanes: 32*/) {
  const F& f = *static_cast<const F*>(j.fn);
#if WEFT_DEVICE_PASS
  warp_ctx w(lane, c, j.n);
  f(w);
#else
  (void)lane;
  warp_body_arg<F> a{&f, c, j.n};
  host_run_warp(
      [](void* p, std::uint32_t l, warp_emu* e) {
        auto* arg = static_cast<warp_body_arg<F>*>(p);
        warp_ctx w(l, arg->warp, arg->warps, e);
        (*arg->f)(w);
      },
      &a);
#endif
}

// Why a job cannot run, before it is handed to the executor (errc{} when it can).
WEFT_HOST_DEVICE inline errc check_bulk(std::uint64_t n, bool warps) noexcept {
  if (warps && n > bulk_max_chunks) return errc::invalid_argument;
  if (!warps && n > bulk_max_chunks * 0x80000000ull) return errc::invalid_argument;  // chunk_items < 2^31
  return errc{};
}

#if !WEFT_DEVICE_PASS
// The host backend, for a job not worth spreading: every chunk on the calling thread, in order.
inline void run_bulk_on_host(bulk_job& j) {
  j.chunk_items = j.warps ? 1u : 0x40000000u;
  const std::uint64_t chunks = (j.n + j.chunk_items - 1) / j.chunk_items;
  for (std::uint64_t c = 0; c < chunks; ++c) j.run_chunk(j, static_cast<std::uint32_t>(c), 0, 1);
}
#endif

template <class F, bool Warps, bool Catches>
struct bulk_awaiter {
  using weft_awaitable = void;
  F f;
  std::uint64_t n;
  errc failed{};
#if !WEFT_DEVICE_PASS
  bool budget_yield = false;  // await_ready ran the job and the turn's budget is spent
  host_bulk_run run;          // the bulk board's record of a spread job
#endif
  // The descriptor is built (make_job) only when the job is submitted or run on the host:
  // a lone task's inline step stores into the frame only the awaiter's f, n and failed.
  // Built on every step, its stores sat just before the hand-over to other warps, which
  // is a release; without them a chained step took 0.14 us less (docs/benchmarks.md,
  // twenty-third session).
  union job_slot {
    WEFT_HOST_DEVICE job_slot() {}  // no initialisation: make_job constructs it
    bulk_job job;
  } slot;

  WEFT_HOST_DEVICE bulk_job& make_job() {
    bulk_job& j = *new (&slot.job) bulk_job;
    if constexpr (Warps) j.run_chunk = &run_warp_chunk<F>;
    else j.run_chunk = &run_element_chunk<F>;
    j.fn = &f;
    j.n = n;
    j.warps = Warps;
    return j;
  }

  WEFT_HOST_DEVICE bool await_ready() {
    if (n == 0) return true;
    failed = check_bulk(n, Warps);
    if (failed != errc{}) return false;  // await_suspend reports it
#if WEFT_DEVICE_PASS
    if (device_has_executor()) {
      if (run_inline_if_lone()) return true;
      make_job();  // await_suspend submits it
      return false;
    }
    if constexpr (Warps) {
      failed = errc::backend_unavailable;  // run_inline: one lane cannot be a warp
      return false;
    } else {
      for (std::uint64_t i = 0; i < n; ++i) f(static_cast<std::size_t>(i));  // run_inline: this lane alone
      return true;
    }
#else
    bulk_job& j = make_job();
    if (host_bulk_plan(j)) return false;  // spread over the worker threads: await_suspend posts it
    run_bulk_on_host(j);
    // After bulk_steps_per_turn steps in one turn the task yields here (the job has run):
    // a chain of steps lets its thread look at its queues and the stop.
    budget_yield = host_bulk_budget_spent();
    return !budget_yield;
#endif
  }
#if WEFT_DEVICE_PASS
  // Copies a trivially copyable T word by word (words of its alignment, at most 8 bytes)
  // into dst (aligned to bulk_inline_fn_align): each word is a scalar load, which the
  // compiler forwards from the store that just wrote it into the frame; a block copy of
  // the object was read back from memory, an L2 round trip (PTX of chained_bulk_root).
  template <class T>
  __device__ static void copy_words(void* dst, const void* src) {
    using word = std::conditional_t<alignof(T) >= 8, std::uint64_t,
                                    std::conditional_t<alignof(T) >= 4, std::uint32_t,
                                                       std::conditional_t<alignof(T) >= 2, std::uint16_t, std::uint8_t>>>;
    static_assert(sizeof(T) % sizeof(word) == 0);
#pragma unroll
    for (std::size_t i = 0; i < sizeof(T) / sizeof(word); ++i) {
      word w;
      __builtin_memcpy(&w, static_cast<const char*>(src) + i * sizeof(word), sizeof(word));
      __builtin_memcpy(static_cast<char*>(__builtin_assume_aligned(dst, bulk_inline_fn_align)) + i * sizeof(word), &w,
                       sizeof(word));
    }
  }
  // A lone task's small bulk() job runs inside the await, on its warp's idle lanes
  // (device_bulk.hpp, "inline jobs"); false: submit it. The helpers get the callable in
  // shared memory when it is trivially copyable and small: in the frame, their first
  // read of it is an L2 round trip on every step's critical path.
  __device__ bool run_inline_if_lone() {
    if constexpr (Warps) {
      return false;
    } else {
      const std::uint32_t chunks = device_bulk_inline_chunks(n);
      if (chunks == 0) return false;
      const void* fn = &f;
      if constexpr (bulk_fn_copied<F>) {
        void* copy_at = device_bulk_inline_fn_slot();
        copy_words<F>(copy_at, &f);
        fn = copy_at;
      }
      device_bulk_inline_run(&run_element_chunk<F>, &serve_server_jobs<F>, fn, n, chunks);
      return true;
    }
  }
#endif
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
    task_header* me = promise_of(h.address()).root;
#if !WEFT_DEVICE_PASS
    if (budget_yield) {  // the job ran in await_ready: only the yield is left
      me->act = action::yield;
      return true;
    }
    if (failed == errc{} && me->sched == nullptr) {
      // Cut up for the board, but no executor runs this task (run_inline called on a
      // worker thread): nobody would resume it, and run_inline would free the frame the
      // board's run lives in. It runs here, whole, and the task goes on.
      run_bulk_on_host(slot.job);
      return false;
    }
#endif
    if (failed == errc{}) {  // make_job has run
      bulk_job& job = slot.job;
      job.waiter = me;
      me->act = action::park;  // before the job can finish: it wakes us (SCHEDULED|RUNNING covers a race)
      // Device (device_hooks.hpp): the posting warp runs or publishes the job after its
      // batch. Host: the bulk board takes the job host_bulk_plan cut up (one it did not
      // cut up ran in await_ready), with its record `run`.
#if WEFT_DEVICE_PASS
      failed = device_submit_bulk(&job);
#else
      failed = host_post_bulk(&run, &job);
#endif
      if (failed == errc{}) {
        if (job.held) me->act = action::hold;  // a private job: our own warp resumes us
        return true;
      }
    }
    me->act = action::none;
    if constexpr (Catches) return false;
    fail_current(h, failed);
    return true;
  }
  WEFT_HOST_DEVICE auto await_resume() const noexcept {
    if constexpr (Catches) return failed == errc{} ? result<void>{} : result<void>(unexpected(failed));
  }
  // try_await(bulk(...)): the error as a result<void> instead of failing the task.
  WEFT_HOST_DEVICE bulk_awaiter<F, Warps, true> as_result() { return {std::move(f), n}; }
};

}  // namespace detail

// Calls f(i) for every i < n, spread over the worker warps; resumes when all returned.
template <class F>
WEFT_HOST_DEVICE detail::bulk_awaiter<F, false, false> bulk(std::size_t n, F f) {
  return {std::move(f), n};
}

// Runs f(w) on k warp jobs of 32 lanes each (weft::warp_ctx); resumes when all returned.
template <class F>
WEFT_HOST_DEVICE detail::bulk_awaiter<F, true, false> bulk_warps(std::size_t k, F f) {
  return {std::move(f), k};
}

}  // namespace weft
