// The host backend's bulk board (executor/weft/executor/host_bulk.hpp): large bulk jobs
// spread over the worker threads. Host-only code (threads, std::mutex), so plain C++.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <weft/executor/host_bulk.hpp>

#include "support.hpp"

using weft_test::host_config;

namespace {

// The threads that ran calls of a job. A call at a chunk-sized stride waits (up to 5 s)
// until two threads have run calls, so a job that stays on one thread is seen.
struct thread_log {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> distinct{0};
  void arrive_and_wait_for(int want) {
    {
      std::lock_guard lk(m);
      if (ids.insert(std::this_thread::get_id()).second) distinct.fetch_add(1);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (distinct.load() < want && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
};

// Runs bulk(n) with every call counted, then checks, after the await, that every call
// happened once (the task must resume after the last one, and see its write).
weft::task<long long> count_spread(int* counts, std::size_t n, thread_log* log) {
  co_await weft::bulk(n, [=](std::size_t i) {
    if (i % 1024 == 0) log->arrive_and_wait_for(2);
    counts[i] += 1;
  });
  long long wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += counts[i] != 1;
  co_return wrong;
}

weft::task<long long> warps_spread(unsigned* sums, std::size_t k, thread_log* log) {
  co_await weft::bulk_warps(k, [=](weft::warp_ctx& w) {
    if (w.lane() == 0) log->arrive_and_wait_for(2);
    const unsigned total = w.reduce_add(w.lane() + 1u);  // 1 + ... + 32 = 528 in every lane
    if (w.lane() == 0) sums[w.warp()] = total;
  });
  long long wrong = 0;
  for (std::size_t i = 0; i < k; ++i) wrong += sums[i] != 528u;
  co_return wrong;
}

weft::task<int> yield_times(int k) {
  for (int y = 0; y < k; ++y) co_await weft::yield();
  co_return k;
}

// Several bulk jobs, with yields and a spawned task between them.
weft::task<int> bulk_and_yield(int* counts, std::size_t per, int jobs) {
  for (int j = 0; j < jobs; ++j) {
    auto side = weft::spawn(yield_times(j % 3));
    co_await weft::bulk(per, [=](std::size_t i) { counts[i] += 1; });
    co_await weft::yield();
    co_await std::move(side);
  }
  co_return 0;
}

weft::task<int> many_bulk_tasks(int* counts, int tasks, std::size_t per, int jobs) {
  std::vector<weft::join_handle<int>> hs;
  for (int t = 0; t < tasks; ++t) hs.push_back(weft::spawn(bulk_and_yield(counts + t * per, per, jobs)));
  for (auto& h : hs) co_await std::move(h);
  co_return 0;
}

// A bulk job whose chunks take ~40 ms each (a 5 ms sleep every 4,096 calls).
weft::task<int> slow_bulk(std::atomic<int>* done, std::size_t n) {
  co_await weft::bulk(n, [done](std::size_t i) {
    if (i % 4096 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    done->fetch_add(1, std::memory_order_relaxed);
  });
  co_return 1;
}

weft::task<int> count_all(int* counts, std::size_t n) {
  co_await weft::bulk(n, [=](std::size_t i) { counts[i] += 1; });
  co_return 7;
}

// run_inline from inside a task, on a worker thread: the inner task has no executor.
weft::task<long long> inline_bulk_on_worker(int* counts, std::size_t n) {
  const weft::result<int> r = weft::run_inline(count_all(counts, n));
  if (!r) co_return -1;
  long long wrong = *r == 7 ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) wrong += counts[i] != 1;
  co_return wrong;
}

}  // namespace

TEST_CASE("a large bulk job on the host backend runs on several worker threads, and the task resumes after its last call",
          "[bulk][executor]") {
  weft::runtime rt(host_config(4));
  const std::size_t n = std::size_t{1} << 18;
  std::vector<int> counts(n, 0);
  thread_log log;
  REQUIRE(rt.block_on([](int* c, std::size_t m, thread_log* l) { return count_spread(c, m, l); }, counts.data(), n, &log) ==
          0);
  INFO("threads that ran calls: " << log.distinct.load());
  REQUIRE(log.distinct.load() >= 2);
}

TEST_CASE("bulk_warps jobs on the host backend spread over worker threads, each warp's collectives intact",
          "[bulk][executor]") {
  weft::runtime rt(host_config(4));
  const std::size_t k = 16;
  std::vector<unsigned> sums(k, 0);
  thread_log log;
  REQUIRE(rt.block_on([](unsigned* s, std::size_t m, thread_log* l) { return warps_spread(s, m, l); }, sums.data(), k,
                      &log) == 0);
  REQUIRE(log.distinct.load() >= 2);
}

TEST_CASE("a large bulk job awaited under run_inline on a worker thread runs whole there and its task completes",
          "[bulk][executor]") {
  // The board would hold a run in a frame that run_inline frees when its task parks.
  weft::runtime rt(host_config(4));
  const std::size_t n = 100000;
  std::vector<int> counts(n, 0);
  REQUIRE(rt.block_on([](int* c, std::size_t m) { return inline_bulk_on_worker(c, m); }, counts.data(), n) == 0);
}

TEST_CASE("small bulk jobs, and any job on one worker, are not cut up for the board", "[bulk][executor]") {
  weft::detail::bulk_job j;
  j.n = 4096;
  CHECK_FALSE(weft::exec::plan_host_bulk(j, 8));  // one chunk's worth
  j.n = 1u << 20;
  CHECK_FALSE(weft::exec::plan_host_bulk(j, 1));  // nobody to share with
  j.warps = true;
  j.n = 1;
  CHECK_FALSE(weft::exec::plan_host_bulk(j, 8));  // one warp job
  j.n = 5;
  REQUIRE(weft::exec::plan_host_bulk(j, 8));
  CHECK(j.chunks == 5);
  CHECK(j.chunk_items == 1);
  // Element jobs: chunks of at least 4,096 indices, about 4 per worker, covering [0, n).
  j.warps = false;
  for (std::uint64_t n : {std::uint64_t{4097}, std::uint64_t{100000}, std::uint64_t{1} << 24,
                          std::uint64_t{1} << 40, (std::uint64_t{1} << 61) - 1}) {
    j.n = n;
    REQUIRE(weft::exec::plan_host_bulk(j, 3));
    INFO("n = " << n << ": " << j.chunks << " chunks of " << j.chunk_items);
    CHECK(j.chunk_items >= weft::exec::host_bulk_min_chunk);
    CHECK(j.chunk_items <= 0x40000000u);
    CHECK(std::uint64_t{j.chunks} * j.chunk_items >= n);
    CHECK(std::uint64_t{j.chunks - 1} * j.chunk_items < n);
    CHECK(j.chunks >= 2);
  }
}

TEST_CASE("shutdown while a spread bulk job runs stops its helpers between chunks, frees every frame and reports shutting_down",
          "[bulk][executor]") {
  weft::runtime rt(host_config(2));
  const std::size_t n = std::size_t{1} << 18;  // 8 chunks of 32,768 on 2 workers
  std::atomic<int> ran{0};
  std::atomic<int>* done = &ran;
  auto h = rt.spawn([](std::atomic<int>* d, std::size_t m) { return slow_bulk(d, m); }, done, n);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done->load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(done->load() > 0);
  const auto t0 = std::chrono::steady_clock::now();
  rt.shutdown();
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  INFO("calls run: " << done->load() << " of " << n << "; shutdown took " << took_s << " s");
  REQUIRE(done->load() < static_cast<int>(n));  // the chunks nobody had claimed never ran
  REQUIRE(took_s < 5.0);                          // each helper finished its chunk (~40 ms) and left
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("tasks awaiting spread bulk jobs beside yields and spawns on two workers with 2-slot queues all finish, every call once",
          "[bulk][executor][stress]") {
  weft::config c = host_config(2);
  c.local_queue_capacity = 2;
  const int tasks = 24, jobs = 6;
  const std::size_t per = 9000;  // three chunks of 4,096 or fewer each on 2 workers
  for (int round = 0; round < 40; ++round) {
    weft::runtime rt(c);
    std::vector<int> counts(tasks * per, 0);
    REQUIRE(rt.block_on([](int* ct, int t, std::size_t p, int j) { return many_bulk_tasks(ct, t, p, j); }, counts.data(),
                        tasks, per, jobs) == 0);
    std::size_t wrong = 0;
    for (int v : counts) wrong += v != jobs;
    INFO("round " << round);
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("a bulk board's chunks are each claimed once across racing threads, and the waiter is woken after the last",
          "[bulk][executor][stress]") {
  // The board alone, with jobs of a few chunks and a fake waiter: RUNNING is set, so the
  // finisher's wake only sets SCHEDULED (run.hpp), which no chunk may see before it ends.
  struct fake_job {
    weft::detail::bulk_job job;
    weft::detail::host_bulk_run run;
    weft::detail::task_header waiter;
    std::atomic<int> calls[8];
  };
  constexpr int jobs = 2000, threads = 4;
  std::vector<std::unique_ptr<fake_job>> fakes;
  weft::exec::bulk_board board;
  for (int k = 0; k < jobs; ++k) {
    auto f = std::make_unique<fake_job>();
    f->job.chunks = 1 + k % 8;
    f->job.fn = f.get();
    f->job.run_chunk = [](const weft::detail::bulk_job& j, std::uint32_t c, std::uint32_t, std::uint32_t) {
      auto* self = static_cast<fake_job*>(const_cast<void*>(j.fn));
      if (weft::detail::state_of(&self->waiter).load(weft::detail::mo_acquire) & weft::detail::task_state::scheduled)
        self->calls[c].fetch_add(1000);  // woken early: counted as a failure below
      self->calls[c].fetch_add(1);
    };
    f->waiter.state = weft::detail::task_state::running;
    f->job.waiter = &f->waiter;
    for (auto& c : f->calls) c = 0;
    fakes.push_back(std::move(f));
  }
  std::atomic<int> posted{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (;;) {
        if (t == 0 && posted.load() < jobs) {  // one poster among the helpers
          const int k = posted.load();
          board.post(&fakes[k]->run, &fakes[k]->job);
          posted.store(k + 1);
        }
        weft::detail::host_bulk_run* r;
        std::uint32_t c;
        if (board.claim(&r, &c)) weft::exec::run_claimed_chunk(r, c);
        else if (posted.load() == jobs) return;
      }
    });
  for (auto& t : ts) t.join();
  REQUIRE_FALSE(board.has_runs());
  int bad = 0;
  for (auto& f : fakes) {
    for (std::uint32_t c = 0; c < 8; ++c) bad += f->calls[c].load() != (c < f->job.chunks ? 1 : 0);
    bad += (f->waiter.state & weft::detail::task_state::scheduled) == 0;  // never woken
  }
  REQUIRE(bad == 0);
}

TEST_CASE("the device's cut of a bulk job covers it in at most 2^30 chunks of whole warp strides, up to 2^61 indices "
          "on 1 to 4,224 workers",
          "[bulk]") {
  namespace d = weft::detail;
  const std::uint64_t limit = d::bulk_max_chunks * 0x80000000ull;  // check_bulk's largest n for bulk()
  REQUIRE(d::check_bulk(limit, false) == weft::errc{});
  REQUIRE(d::check_bulk(limit + 1, false) == weft::errc::invalid_argument);
  for (std::uint32_t workers : {1u, 3u, 528u, 4224u}) {
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{1025}, std::uint64_t{1} << 24, std::uint64_t{1} << 34,
                            (std::uint64_t{1} << 35) * workers, std::uint64_t{1} << 40, limit - 1, limit}) {
      d::bulk_job j;
      j.n = n;
      d::cut_device_bulk(j, workers);
      INFO(workers << " workers, n = " << n << ": " << j.chunks << " chunks of " << j.chunk_items);
      CHECK(j.chunk_items >= d::bulk_min_chunk_items);
      CHECK(j.chunk_items % WEFT_WARP_SIZE == 0);
      CHECK(j.chunk_items <= d::bulk_max_chunk_items);
      CHECK(j.chunks >= 1);
      CHECK(j.chunks <= d::bulk_max_chunks);
      CHECK(std::uint64_t{j.chunks} * j.chunk_items >= n);       // every index in a chunk
      CHECK(std::uint64_t{j.chunks - 1} * j.chunk_items < n);    // no chunk wholly past n
    }
  }
}
