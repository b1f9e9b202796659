// A lone task's long chain of bulk steps and its worker's other duties. On the GPU the
// task runs up to inline_jobs_per_trip (1,024) steps per trip round its warp's loop, and
// the trip after a spent budget makes every look the loop otherwise makes only every 4th
// to 16th trip (device_worker.hpp, worker_loop). On the host the steps run inside the
// await on the task's thread, and after 1,024 of them the task yields and the thread's
// next pick looks at its inbox and the inject queue first (host_executor.hpp). These
// tests check, on both backends, that a task pinned to that worker runs within a few
// budgets of steps, that the host's stop ends the chain (on the GPU within a few budgets;
// on the host, where shutdown() takes thousands of steps' time to reach the executor,
// long before the chain's own end), and that the steps awaited through try_await come
// through the budget's yields.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "shared_array.hpp"
#include "support.hpp"

using weft_test::any_backend_config;
using weft_test::shared_array;

namespace {

constexpr std::size_t chain_n = 256;  // shared with the block's idle warps on the GPU

// Bulk steps over buf until *stop is set or max_steps ran; publishes its count of steps
// in *progress after each. Returns the steps it ran.
WEFT_HOST_DEVICE weft::task<int> chain_until(unsigned* buf, int* stop, int* progress, int max_steps) {
  int s = 0;
  while (s < max_steps && weft_test::atomic_load(*stop) == 0) {
    co_await weft::bulk(chain_n, [=] WEFT_HOST_DEVICE(std::size_t i) { buf[i] += 1; });
    weft_test::atomic_store(*progress, ++s);
  }
  co_return s;
}

}  // namespace

TEST_CASE("a task pinned to the warp of a lone task's long chain of bulk steps runs during the chain",
          "[bulk][pinned]") {
  shared_array<unsigned> buf(chain_n);
  shared_array<int> words(3);  // stop, progress, the progress read just after the pinned spawn
  weft::runtime rt(any_backend_config());
  // On the GPU a look at the inbox only every 16th trip takes 16,384 steps. On the host a
  // step takes ~0.1 us, so the root, on another thread, may come late by many of them;
  // there the limit only has to be far away (odd, so that no budget ends on it).
  const bool gpu = rt.device() != nullptr;
  const int max_steps = gpu ? 5000 : (1 << 24) + 1;
  auto root = [] WEFT_HOST_DEVICE(unsigned* b, int* w, int max) -> weft::task<int> {
    const std::uint32_t home = 1 % weft::worker_count();
    auto chain = weft::spawn_pinned(home, chain_until(b, &w[0], &w[1], max));
    for (int p = 0; p < 200 && p < max; p = weft_test::atomic_load(w[1])) co_await weft::yield();
    auto flag = weft::spawn_pinned(home, weft_test::raise_flag(&w[0]));
    weft_test::atomic_store(w[2], weft_test::atomic_load(w[1]));
    co_await std::move(flag);
    co_return co_await std::move(chain);
  };
  const int ran = rt.block_on(root, buf.data(), words.data(), max_steps);
  const int spawned_at = words[2];
  INFO("the chain ran " << ran << " steps; the pinned task was spawned at step " << spawned_at << " or before");
  REQUIRE(words[0] == 1);
  for (std::size_t i = 0; i < chain_n; ++i) REQUIRE(buf[i] == static_cast<unsigned>(ran));
  REQUIRE(ran >= 200);
  REQUIRE(ran < max_steps);  // the pinned task ran before the chain's end: the worker went round
  // Within a few budgets of its spawn: the next trip (GPU) or pick (host) after a spent
  // budget looks at the inbox; one budget more if the chain itself sat in the inbox first.
  REQUIRE(ran - spawned_at < 3 * 1024);
  // On the host the pinned task runs while the chain is yielded at the end of a budget,
  // so the chain sees the flag at its next step (on the GPU, one step into a new budget).
  if (!gpu) REQUIRE(ran % 1024 == 0);
}

TEST_CASE("shutdown stops a runtime whose worker runs a lone task's long chain of bulk steps, and frees its frames",
          "[bulk][runtime]") {
  shared_array<unsigned> buf(chain_n);
  shared_array<int> words(2);  // stop (never set), progress
  weft::runtime rt(any_backend_config());
  // Far more than the test waits for (on the host ~0.1 us a step: a few seconds).
  const int max_steps = rt.device() != nullptr ? 2000000 : 1 << 25;
  auto h = rt.spawn([] WEFT_HOST_DEVICE(unsigned* b, int* w, int max) { return chain_until(b, &w[0], &w[1], max); },
                    buf.data(), words.data(), max_steps);
  // Up to 30 s: a kernel start and 300 steps under compute-sanitizer's racecheck are slow.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (weft_test::atomic_load(words[1]) < 300 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int at_stop = weft_test::atomic_load(words[1]);  // the chain stores it through an atomic_ref
  REQUIRE(at_stop >= 300);
  rt.shutdown();
  const auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  INFO("steps after the stop: " << words[1] - at_stop);
  if (rt.device() != nullptr) {
    REQUIRE(words[1] - at_stop < 8 * 1024);  // a look at the stop flag only every 16th trip: up to 16,384
  } else {
    // ~0.1 us a step: the time shutdown() takes to reach the executor is thousands of
    // steps there. A chain that never yields would have run to its end and completed.
    REQUIRE(words[1] < max_steps);
  }
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a chain of bulk steps awaited through try_await, longer than a budget, runs every step", "[bulk]") {
  const int steps = 3000;  // crosses two budgets: the host's yields and the GPU's trips
  shared_array<unsigned> buf(chain_n);
  weft::runtime rt(any_backend_config());
  auto root = [] WEFT_HOST_DEVICE(unsigned* b, int n) -> weft::task<int> {
    int ok = 0;
    for (int s = 0; s < n; ++s) {
      const weft::result<void> r =
          co_await weft::try_await(weft::bulk(chain_n, [=] WEFT_HOST_DEVICE(std::size_t i) { b[i] += 1; }));
      if (!r) co_return -1 - s;  // which step failed
      ++ok;
    }
    co_return ok;
  };
  REQUIRE(rt.block_on(root, buf.data(), steps) == steps);
  for (std::size_t i = 0; i < chain_n; ++i) REQUIRE(buf[i] == static_cast<unsigned>(steps));
}
