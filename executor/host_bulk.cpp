// The host backend's bulk board: see weft/executor/host_bulk.hpp for the design.
#include "weft/executor/host_bulk.hpp"

#include "weft/detail/run.hpp"

namespace weft::exec {

using detail::bulk_job;
using detail::host_bulk_run;

bool plan_host_bulk(bulk_job& j, unsigned workers) noexcept {
  if (workers < 2) return false;
  if (j.warps) {  // one warp job a chunk (check_bulk keeps n under 2^30)
    if (j.n < 2) return false;
    j.chunk_items = 1;
    j.chunks = static_cast<std::uint32_t>(j.n);
    return true;
  }
  if (j.n <= host_bulk_min_chunk) return false;
  const std::uint64_t parts = std::uint64_t{workers} * host_bulk_chunks_per_worker;
  std::uint64_t per = (j.n + parts - 1) / parts;
  if (per < host_bulk_min_chunk) per = host_bulk_min_chunk;
  if (per > 0x40000000u) per = 0x40000000u;  // chunk_items < 2^31; check_bulk keeps chunks <= 2^30
  j.chunk_items = static_cast<std::uint32_t>(per);
  j.chunks = static_cast<std::uint32_t>((j.n + per - 1) / per);
  return true;
}

void bulk_board::post(host_bulk_run* r, bulk_job* j) noexcept {
  r->job = j;
  r->next = nullptr;
  r->claimed = 0;
  r->finished = 0;
  std::lock_guard lk(m_);
  if (tail_) tail_->next = r;
  else head_ = r;
  tail_ = r;
  open_.fetch_add(1, std::memory_order_seq_cst);  // park()'s Dekker pair (the header)
}

bool bulk_board::claim(host_bulk_run** r, std::uint32_t* chunk) noexcept {
  std::lock_guard lk(m_);
  host_bulk_run* run = head_;
  if (run == nullptr) return false;
  *r = run;
  *chunk = run->claimed++;
  if (run->claimed == run->job->chunks) {  // its last chunk: off the board
    head_ = run->next;
    if (head_ == nullptr) tail_ = nullptr;
    open_.fetch_sub(1, std::memory_order_relaxed);
  }
  return true;
}

void bulk_board::forget() noexcept {
  std::lock_guard lk(m_);
  head_ = tail_ = nullptr;
  open_.store(0, std::memory_order_relaxed);
}

void run_claimed_chunk(host_bulk_run* r, std::uint32_t chunk) noexcept {
  const bulk_job& j = *r->job;
  j.run_chunk(j, chunk, 0, 1);  // lane 0 of 1: the chunk's every index, or its whole warp job
  // Read before the count: once every chunk is counted, the waiter may resume and free
  // the frame that holds the run.
  detail::task_header* waiter = j.waiter;
  const std::uint32_t chunks = j.chunks;
  if (std::atomic_ref<std::uint32_t>(r->finished).fetch_add(1, std::memory_order_acq_rel) + 1 == chunks)
    detail::wake(waiter);
}

}  // namespace weft::exec
