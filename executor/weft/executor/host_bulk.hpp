// weft/executor/host_bulk.hpp - the host backend's bulk board: co_await bulk(n, f) and
// bulk_warps(k, f) spread over the worker threads.
//
// The device spreads a large job over its worker warps through a board of open jobs
// (device_bulk.hpp); this is the host's counterpart, so that bulk work uses every worker
// thread of the host backend as it uses every warp of the GPU.
//
// Roles
//   poster    the awaiting task's thread, inside bulk_awaiter::await_suspend. It sets the
//             job's waiter and the task's act = park, then host_post_bulk appends the
//             run to the board and wakes parked workers for it (up to chunks - 1 of them).
//   helper    any worker thread, before its next task (host_executor::worker_main): it
//             claims one chunk of the oldest run under the board's mutex, runs it
//             outside the mutex, and counts it finished. The poster's own thread is one:
//             its task parks, and its next look is the board.
//   finisher  the helper whose count reaches the run's chunk count: it wakes the waiter.
//
// Invariants
//   * A run is on the board exactly while it has chunks nobody claimed: the claim that
//     takes its last chunk unlinks it, under the same mutex, so `claimed`, the FIFO and
//     `open_` change together.
//   * The run and the job live in the awaiting frame, which lives until the waiter
//     resumes, which is after the finisher's wake-up. A helper touches a run only from
//     its claim (the run was on the board, so a chunk of it was unclaimed and the run
//     cannot have finished) to its own finish count; it reads the waiter before that
//     count, and after it only the finisher (which alone may wake) uses that copy.
//   * Every chunk is claimed once (claims are serialised by the mutex) and counted
//     finished once, so the waiter is woken exactly once, after every call of f.
//
// Memory orders
//   * The board's FIFO and `claimed` are guarded by the mutex; the post happens-before
//     every claim of the run (the poster's writes to the job, and to the frame before the
//     await, reach every helper).
//   * Each helper's finish count is an acq_rel fetch_add on `finished`: the finisher's
//     RMW reads the last value of a release sequence that holds every helper's count, so
//     every call of f happens-before the finisher's wake(), whose acq_rel RMW on the
//     task's state passes them on to whoever resumes the task (run.hpp).
//   * `open_` counts the runs on the board. It is read without the mutex by workers
//     deciding whether to look (a stale zero costs a pick's delay, never a chunk: the
//     poster's own thread always looks, after its task parks), and with seq_cst by
//     park()'s Dekker pair (host_executor.hpp): the poster raises it, fences, then reads
//     the sleepers; a parker registers, fences, then reads it.
//
// Shutdown: a helper looks at the stop between chunks, never inside one (f cannot be
// interrupted). Chunks nobody claimed never run: their waiter stays parked and shutdown
// destroys it with its frame (host_executor.hpp, step 5), after forgetting the board
// (step 4), which no thread reads once the workers are joined (step 3).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>

#include "weft/detail/bulk_job.hpp"

namespace weft::exec {

// Chunk sizes of spread element jobs: at least host_bulk_min_chunk indices, and about
// host_bulk_chunks_per_worker chunks per worker thread, so that threads that come late or
// run slower still get a share.
inline constexpr std::uint64_t host_bulk_min_chunk = 4096;
inline constexpr std::uint64_t host_bulk_chunks_per_worker = 4;

// Cuts `j` for `workers` threads (sets chunk_items and chunks); false when it is one
// chunk or there is one worker: then the caller runs it whole.
bool plan_host_bulk(detail::bulk_job& j, unsigned workers) noexcept;

class bulk_board {
 public:
  // Appends a run whose job is planned and whose waiter is set.
  void post(detail::host_bulk_run* r, detail::bulk_job* j) noexcept;
  // Claims the next chunk of the oldest run; false when the board is empty.
  bool claim(detail::host_bulk_run** r, std::uint32_t* chunk) noexcept;
  // Whether runs wait for helpers (relaxed: a hint; see the memory orders above).
  bool has_runs() const noexcept { return open_.load(std::memory_order_relaxed) != 0; }
  bool has_runs_seq_cst() const noexcept { return open_.load(std::memory_order_seq_cst) != 0; }
  // Shutdown step 4: drops every run (their frames are destroyed with their waiters).
  void forget() noexcept;

 private:
  std::mutex m_;
  detail::host_bulk_run* head_ = nullptr;
  detail::host_bulk_run* tail_ = nullptr;
  std::atomic<std::uint32_t> open_{0};
};

// Runs chunk `chunk` of a claimed run and counts it finished; the finisher wakes the
// waiter. The run may be gone when this returns.
void run_claimed_chunk(detail::host_bulk_run* r, std::uint32_t chunk) noexcept;

}  // namespace weft::exec
