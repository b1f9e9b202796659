// Documented edges of the waiting primitives that test_sync.cpp does not reach:
// when_all's failure path (every task waited for, the first failure in argument order,
// a task that could not be allocated counting as failed) and sleeps whose deadline
// would overflow (weft::sleep_for and io::sleep_for saturate: they wait, for good).
//
// Backend-agnostic, like test_sync.cpp: the roots are WEFT_HOST_DEVICE coroutines run
// through the runtime on the backend that WEFT_BACKEND picks (ctest sets host).
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "support.hpp"

using weft::errc;
using weft_test::any_backend_config;
using weft_test::atomic_load;
using weft_test::atomic_store;
using weft_test::code;
using weft_test::code_of;

namespace {

constexpr std::uint64_t ms = 1'000'000;

// Fails with `e` (joining an invalid handle fails the joiner) after `yields` yields.
WEFT_HOST_DEVICE weft::task<int> fails_after(int yields, errc e) {
  for (int i = 0; i < yields; ++i) co_await weft::yield();
  co_return co_await weft::join_handle<int>(e);
}

WEFT_HOST_DEVICE weft::task<int> value_of(int v) { co_return v; }

// Returns v once `gate` is set, marking *done first.
WEFT_HOST_DEVICE weft::task<int> gated_value(weft::event& gate, int* done, int v) {
  co_await gate.wait();
  atomic_store(*done, 1);
  co_return v;
}

// Sets `gate` after a 20 ms sleep: long after every other task of the test has failed.
WEFT_HOST_DEVICE weft::task<void> open_later(weft::event& gate) {
  co_await weft::sleep_for(20 * ms);
  gate.set();
}

// A frame larger than the frame pool's largest block (1 MiB): it cannot be allocated,
// and the call yields a failed task (out_of_memory) instead.
WEFT_HOST_DEVICE weft::task<int> too_big_a_frame(int at) {
  volatile unsigned char big[std::size_t{2} << 20];
  big[at] = 1;
  co_await weft::yield();  // `big` lives across a suspension: it is in the frame
  co_return big[at];
}

struct all_report {
  int error;           // what try_await(when_all(...)) gave
  int slow_done;       // the slow task had finished when when_all returned (1)
  int oom_error;       // the same, with a task that could not be allocated
  int oom_slow_done;
};

// when_all(first, second, slow): `first` fails late (after 50 yields) with
// invalid_argument, `second` fails at once with queue_full, and `slow` finishes only
// once another task opens its gate 20 ms later. when_all must wait for `slow`, then
// report invalid_argument, the first failure in argument order, not the first in time.
WEFT_HOST_DEVICE weft::task<all_report> when_all_failure_root() {
  all_report rep{};
  {
    weft::event gate;
    int done = 0;
    weft::join_handle<void> opener = weft::spawn(open_later(gate));
    auto r = co_await weft::try_await(weft::when_all(fails_after(50, errc::invalid_argument),
                                                     fails_after(0, errc::queue_full), gated_value(gate, &done, 3)));
    rep.error = code_of(r);
    rep.slow_done = atomic_load(done);
    co_await std::move(opener);
  }
  {
    weft::event gate;
    int done = 0;
    weft::join_handle<void> opener = weft::spawn(open_later(gate));
    auto r = co_await weft::try_await(weft::when_all(value_of(1), too_big_a_frame(0), gated_value(gate, &done, 3)));
    rep.oom_error = code_of(r);
    rep.oom_slow_done = atomic_load(done);
    co_await std::move(opener);
  }
  co_return rep;
}

// Awaited without try_await, a failed when_all fails its awaiting task (here the root).
WEFT_HOST_DEVICE weft::task<int> when_all_uncaught_root() {
  auto [a, b] = co_await weft::when_all(value_of(1), fails_after(3, errc::queue_full));
  co_return a + b;
}

WEFT_HOST_DEVICE weft::task<int> sleeps_for(std::uint64_t ns) {
  co_await weft::sleep_for(ns);
  co_return 1;
}

WEFT_HOST_DEVICE weft::task<int> host_sleeps_for(std::uint64_t ns) {
  co_return code_of(co_await weft::io::sleep_for(ns));
}

#if WEFT_CUDA_COMPILE
// Makes the device pass compile the roots (see test_sync.cpp's kernel for why).
__global__ void edge_roots_compile_for_device(std::uint64_t ns) {
  (void)when_all_failure_root();
  (void)when_all_uncaught_root();
  (void)sleeps_for(ns);
  (void)host_sleeps_for(ns);
}
#endif

}  // namespace

TEST_CASE("when_all waits for every task after a failure, then reports the first failure in argument order, a task "
          "that could not be allocated included",
          "[sync][when_all]") {
  weft::runtime rt(any_backend_config());
  const all_report r = rt.block_on([] WEFT_HOST_DEVICE() { return when_all_failure_root(); });
  CHECK(r.error == code(errc::invalid_argument));
  CHECK(r.slow_done == 1);
  CHECK(r.oom_error == code(errc::out_of_memory));
  CHECK(r.oom_slow_done == 1);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);  // no task outlived its when_all
}

TEST_CASE("a when_all failure that nobody catches fails the awaiting task", "[sync][when_all]") {
  weft::runtime rt(any_backend_config());
  const weft::result<int> r = rt.try_block_on([] WEFT_HOST_DEVICE() { return when_all_uncaught_root(); });
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == errc::queue_full);
}

TEST_CASE("sleep_for and io::sleep_for with a duration whose deadline would overflow wait instead of waking at once",
          "[sync][io]") {
  // now + ns would wrap around to a deadline in the past for each of these: saturated,
  // it is the end of time, so the sleepers are still asleep when the runtime shuts down.
  const std::uint64_t huge[] = {~std::uint64_t{0}, ~std::uint64_t{0} - 1000 * ms};
  weft::runtime rt(any_backend_config());
  std::vector<weft::host_handle<int>> timers, host_timers;
  for (std::uint64_t ns : huge) {
    timers.push_back(rt.spawn([] WEFT_HOST_DEVICE(std::uint64_t n) { return sleeps_for(n); }, ns));
    host_timers.push_back(rt.spawn([] WEFT_HOST_DEVICE(std::uint64_t n) { return host_sleeps_for(n); }, ns));
  }
  // A short sleep beside them still wakes: the timers serve on.
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t n) { return sleeps_for(n); }, 1 * ms) == 1);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t n) { return host_sleeps_for(n); }, 1 * ms) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (auto& h : timers) CHECK(!h.is_ready());
  for (auto& h : host_timers) CHECK(!h.is_ready());
  rt.shutdown();
  for (auto& h : timers) {  // destroyed by the shutdown, still asleep
    auto r = h.try_get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::shutting_down);
  }
  for (auto& h : host_timers) {  // the reactor answered their sleeps with shutting_down
    auto r = h.try_get();
    REQUIRE(r.has_value());
    CHECK(*r == code(errc::shutting_down));
  }
}
