// weft/detail/bulk_job.hpp - the descriptor of one co_await bulk(...) / bulk_warps(...).
//
// A bulk job is n items cut into `chunks` chunks. A chunk is the unit a warp takes at
// once: `chunk_items` consecutive elements for bulk() (lane l runs items begin + l,
// begin + l + 32, ... so a warp's accesses coalesce), or one warp job for bulk_warps().
// The descriptor lives in the awaiting task's frame (inside the awaiter) until the job
// is handed to the executor; the callable it points to stays there until the task
// resumes, which is after the last chunk finished.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/config.hpp"
#include "weft/detail/task_header.hpp"

namespace weft::detail {

struct bulk_job;

// Runs chunk `c` of the job. Device: called by `lanes` lanes of a warp, each with its
// rank `lane` < `lanes`: all 32 (lane ids, converged), or for a lone task's inline
// element job the 31 lanes other than the task's (device_bulk.hpp); a warp job is
// always given 32. Host: called once per chunk with lane 0 of 1 (it runs the whole warp).
using bulk_chunk_fn = void (*)(const bulk_job& job, std::uint32_t c, std::uint32_t lane, std::uint32_t lanes);

// Device, a warp of the block serving a lone task's larger inline element jobs
// (executor/weft/executor/device_mbar_share.hpp): runs this job's share and every later
// job of the same callable type inside one call, and returns the first job of another
// type, or null when the warp stopped serving. `server` is its server_ctx. One call per
// run of same-typed jobs: one call per job through run_chunk cost ~0.25-0.27 us a step
// there (docs/benchmarks.md, twentieth session).
using bulk_server_fn = const bulk_job* (*)(const bulk_job* job, void* server);

struct bulk_job {
  bulk_chunk_fn run_chunk = nullptr;
  const void* fn = nullptr;        // the user's callable, in the awaiting frame
  std::uint64_t n = 0;             // elements (bulk) or warp jobs (bulk_warps)
  std::uint32_t chunk_items = 1;   // elements per chunk (1 for warp jobs)
  std::uint32_t chunks = 0;        // number of chunks
  bool warps = false;              // bulk_warps: each chunk is one warp job
  bool held = false;               // the waiter is held RUNNING (action::hold): the
                                   // posting warp resumes it directly when done
  union {
    task_header* waiter = nullptr;  // the root to wake when the last chunk finished
    bulk_server_fn serve_server;    // a lone task's inline job instead (its copy in the
                                    // staging area has no waiter): how servers run it.
                                    // In a union, not a field: two more words in every
                                    // descriptor made a chained step 0.12 us slower
                                    // (docs/benchmarks.md, twentieth session)
  };
};

// The largest number of chunks (and of warp jobs) one job may have.
inline constexpr std::uint64_t bulk_max_chunks = std::uint64_t{1} << 30;

// The device executor's cut of a job (device_hooks.hpp, device_submit_bulk; here so that
// host tests check its arithmetic). bulk(): about 4 chunks per worker warp, of at least
// 1024 indices and a multiple of 32 (whole warp strides), at most 2^31: with check_bulk's
// n <= 2^61 that leaves at most 2^30 chunks. (Unclamped until the thirty-seventh session:
// on a few warps, n past 2^34 per warp made a chunk 2^32 indices or more, and the
// truncated chunk_items skipped indices or divided by zero; found by review.)
// bulk_warps(): one chunk per warp job.
inline constexpr std::uint32_t bulk_min_chunk_items = 1024;
inline constexpr std::uint64_t bulk_max_chunk_items = std::uint64_t{1} << 31;
WEFT_HOST_DEVICE inline void cut_device_bulk(bulk_job& j, std::uint32_t workers) noexcept {
  if (j.warps) {
    j.chunk_items = 1;
  } else {
    const std::uint64_t target = std::uint64_t{workers} * 4;
    std::uint64_t per = (j.n + target - 1) / target;
    per = per <= bulk_min_chunk_items ? bulk_min_chunk_items : (per + WEFT_WARP_SIZE - 1) / WEFT_WARP_SIZE * WEFT_WARP_SIZE;
    if (per > bulk_max_chunk_items) per = bulk_max_chunk_items;
    j.chunk_items = static_cast<std::uint32_t>(per);
  }
  j.chunks = static_cast<std::uint32_t>((j.n + j.chunk_items - 1) / j.chunk_items);
}

// A lone task's inline bulk() job (device executor) hands its callable to the helper
// lanes in shared memory when it is trivially copyable and fits in this many bytes
// (aligned to at most bulk_inline_fn_align); else they call it in the frame.
inline constexpr std::size_t bulk_inline_fn_bytes = 64;
inline constexpr std::size_t bulk_inline_fn_align = 16;

// Declared in both passes: the host executor's headers name it in declarations that the
// device pass of a CUDA translation unit reads too (a file that includes weft/runtime.hpp
// first failed to compile as CUDA without this).
struct host_bulk_run;

#if !WEFT_DEVICE_PASS
// The host backend's record of a job spread over its worker threads (the bulk board:
// executor/weft/executor/host_bulk.hpp). It lives in the awaiter, beside the descriptor,
// so in the awaiting frame, and the device never sees it.
struct host_bulk_run {
  bulk_job* job = nullptr;
  host_bulk_run* next = nullptr;  // the board's FIFO of runs with chunks left to claim
  std::uint32_t claimed = 0;      // chunks handed out (under the board's mutex)
  std::uint32_t finished = 0;     // chunks run to the end (std::atomic_ref, acq_rel)
};
#endif

}  // namespace weft::detail
