// Full queues and tables: each is an error that the task or the host sees, and nothing
// else is lost. Backend-agnostic: the limits exist on the cuda backend (a timer heap, a
// staging area plus inject queue, completion records); the host backend's queues grow,
// so there the same programs simply succeed, which the tests also check.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "support.hpp"

using weft::errc;
using weft_test::code;
using weft_test::code_of;
using weft_test::tally;

namespace {

constexpr std::uint64_t ms = 1'000'000;

bool is_cuda(weft::runtime& rt) { return std::string(rt.backend_name()) == "cuda"; }

WEFT_HOST_DEVICE weft::task<int> sleep_code(std::uint64_t ns) {
  co_return code_of(co_await weft::try_await(weft::sleep_for(ns)));
}

// n sleepers at once; each reports how its sleep_for went.
WEFT_HOST_DEVICE weft::task<tally> sleepers(int n, std::uint64_t ns) {
  weft::join_handle<int> hs[256];
  for (int i = 0; i < n; ++i) hs[i] = weft::spawn(sleep_code(ns));
  tally t{0, 0, 0};
  for (int i = 0; i < n; ++i) {
    const int c = co_await std::move(hs[i]);
    if (c == 0) ++t.ok;
    else if (c == code(errc::queue_full)) ++t.full;
    else ++t.other;
  }
  co_return t;
}

WEFT_HOST_DEVICE weft::task<void> yield_then_check_in(weft::semaphore& done, int yields) {
  for (int i = 0; i < yields; ++i) co_await weft::yield();
  done.release();
}

// Like spawn_storm, but the children yield: their requeues meet a full ring and inject queue.
WEFT_HOST_DEVICE weft::task<tally> yielding_storm(int n, int yields) {
  weft::semaphore done(0);
  tally t{0, 0, 0};
  for (int i = 0; i < n; ++i) {
    weft::join_handle<void> h = weft::spawn(yield_then_check_in(done, yields));
    if (h.valid()) ++t.ok;
    else if (h.error() == errc::queue_full) ++t.full;
    else ++t.other;
  }
  for (int i = 0; i < t.ok; ++i) co_await done.acquire();
  co_return t;
}

WEFT_HOST_DEVICE weft::task<int> one_after(std::uint64_t ns) {
  co_await weft::sleep_for(ns);
  co_return 1;
}

}  // namespace

TEST_CASE("sleepers beyond the device timer heap get queue_full from sleep_for, and the rest wake", "[runtime]") {
  weft::config c = weft_test::any_backend_config();
  c.timer_capacity = 64;
  weft::runtime rt(c);
  const tally t = rt.block_on([] WEFT_HOST_DEVICE(int n, std::uint64_t ns) { return sleepers(n, ns); }, 200, 100 * ms);
  REQUIRE(t.other == 0);
  REQUIRE(t.ok + t.full == 200);
  if (is_cuda(rt)) {
    REQUIRE(t.full > 0);   // at most 64 sleep at once
    REQUIRE(t.ok >= 64);
  } else {
    REQUIRE(t.ok == 200);  // the host's timer heap grows
  }
}

TEST_CASE("a spawn storm past the device's queues gives the spawner queue_full and runs every accepted task", "[runtime]") {
  weft::config c = weft_test::any_backend_config();
  c.workers = 1;            // nobody drains the queues while the spawner runs
  c.inject_capacity = 64;   // a tiny inject queue
  weft::runtime rt(c);
  const tally t = rt.block_on([] WEFT_HOST_DEVICE(int n) { return weft_test::spawn_storm(n, false); }, 5000);
  REQUIRE(t.other == 0);
  REQUIRE(t.ok + t.full == 5000);
  if (is_cuda(rt)) REQUIRE(t.full > 0);
  else REQUIRE(t.full == 0);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return weft_test::spawn_storm(n, false); }, 10).ok == 10);  // and goes on
}

TEST_CASE("tasks that yield while one worker's ring and inject queue are full all complete, with no hang", "[runtime]") {
  weft::config c = weft_test::any_backend_config();
  c.workers = 1;                 // only this warp makes room in its queues
  c.inject_capacity = 64;
  c.local_queue_capacity = 64;   // a small ring: the requeues of 32 yielders overflow it
  weft::runtime rt(c);
  const tally t = rt.block_on([] WEFT_HOST_DEVICE(int n, int y) { return yielding_storm(n, y); }, 3000, 20);
  REQUIRE(t.other == 0);
  REQUIRE(t.ok + t.full == 3000);
  REQUIRE(t.ok > 0);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
}

TEST_CASE("host submissions beyond the completion records report queue_full, and records come back", "[runtime]") {
  weft::runtime rt(weft_test::any_backend_config());
  std::vector<weft::host_handle<int>> hs;
  const int n = 4200;  // the cuda backend has 4096 completion records
  for (int i = 0; i < n; ++i) hs.push_back(rt.spawn([] WEFT_HOST_DEVICE(std::uint64_t ns) { return one_after(ns); }, 200 * ms));
  int ok = 0, full = 0, other = 0;
  for (auto& h : hs) {
    weft::result<int> r = h.try_get();
    if (r && *r == 1) ++ok;
    else if (!r && r.error() == errc::queue_full) ++full;
    else ++other;
  }
  REQUIRE(other == 0);
  REQUIRE(ok + full == n);
  if (is_cuda(rt)) REQUIRE(full >= n - 4096);
  else REQUIRE(full == 0);
  hs.clear();
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t ns) { return one_after(ns); }, std::uint64_t{0}) == 1);
}
