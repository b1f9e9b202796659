// The synchronisation primitives: semaphore, mutex, when_any, sleep_for, and shutdown
// with tasks parked on any of them (channel: test_sync_channel.cpp).
//
// Backend-agnostic: every test runs its work through runtime::block_on on the backend
// that WEFT_BACKEND picks (ctest sets host), with WEFT_HOST_DEVICE coroutines that
// share state only through their frames and return plain values. Tests whose comment
// starts with "Host" use host-only facilities (one worker, run_inline, shutdown).
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "support.hpp"

using weft::errc;
using weft_test::any_backend_config;
using weft_test::atomic_add;
using weft_test::atomic_load;
using weft_test::atomic_max;
using weft_test::code;
using weft_test::code_of;

namespace {

constexpr std::uint64_t ms = 1'000'000;

// A task that fails with `e` (joining an invalid handle fails the joiner).
WEFT_HOST_DEVICE weft::task<int> fails_with(errc e) { co_return co_await weft::join_handle<int>(e); }

// ---------------------------------------------------------------- semaphore
WEFT_HOST_DEVICE weft::task<void> hold_permit(weft::semaphore& s, int& inside, int& max_inside, int rounds) {
  for (int k = 0; k < rounds; ++k) {
    co_await s.acquire();
    atomic_max(max_inside, atomic_add(inside, 1) + 1);
    co_await weft::yield();  // stay inside while others try to get in
    atomic_add(inside, -1);
    s.release();
  }
}

struct limit_report {
  int max_inside;
  int available_after;
};

WEFT_HOST_DEVICE weft::task<limit_report> semaphore_limit_root(int tasks, int permits, int rounds) {
  weft::semaphore s(static_cast<std::uint32_t>(permits));
  int inside = 0;
  int max_inside = 0;
  weft::join_handle<void> hs[64];
  for (int i = 0; i < tasks; ++i) hs[i] = weft::spawn(hold_permit(s, inside, max_inside, rounds));
  for (int i = 0; i < tasks; ++i) co_await std::move(hs[i]);
  co_return limit_report{max_inside, static_cast<int>(s.available())};
}

WEFT_HOST_DEVICE weft::task<void> acquire_then_count(weft::semaphore& s, int& got) {
  co_await s.acquire();
  atomic_add(got, 1);
}

WEFT_HOST_DEVICE weft::task<int> semaphore_try_root() {
  weft::semaphore s(2);
  int ok = 0;
  ok += s.try_acquire();
  ok += s.try_acquire();
  ok += !s.try_acquire();  // none left
  s.release(2);
  ok += s.available() == 2;
  (void)s.try_acquire();
  (void)s.try_acquire();
  int got = 0;
  weft::join_handle<void> hs[3];
  for (auto& h : hs) h = weft::spawn(acquire_then_count(s, got));
  for (int k = 0; k < 50; ++k) co_await weft::yield();
  ok += atomic_load(got) == 0;  // no permit yet
  s.release(3);
  for (auto& h : hs) co_await std::move(h);
  ok += got == 3 && s.available() == 0;
  co_return ok;
}

// ---------------------------------------------------------------- mutex
WEFT_HOST_DEVICE weft::task<void> add_under_lock(weft::mutex& m, int& counter, int rounds, bool scoped) {
  for (int k = 0; k < rounds; ++k) {
    if (scoped) {
      weft::mutex_guard g = co_await m.scoped_lock();
      const int v = counter;  // a plain read-modify-write: only the lock makes it exact
      if (k % 16 == 0) co_await weft::yield();
      counter = v + 1;
    } else {
      co_await m.lock();
      const int v = counter;
      if (k % 16 == 0) co_await weft::yield();
      counter = v + 1;
      m.unlock();
    }
  }
}

WEFT_HOST_DEVICE weft::task<int> mutex_counter_root(int tasks, int rounds) {
  weft::mutex m;
  int counter = 0;
  weft::join_handle<void> hs[64];
  for (int i = 0; i < tasks; ++i) hs[i] = weft::spawn(add_under_lock(m, counter, rounds, i % 2 == 0));
  for (int i = 0; i < tasks; ++i) co_await std::move(hs[i]);
  co_return m.is_locked() ? -1 : counter;
}

WEFT_HOST_DEVICE weft::task<void> lock_and_record(weft::mutex& m, int* order, int& next, int id) {
  co_await m.lock();
  order[next++] = id;  // plain writes: the lock orders them
  m.unlock();
}

WEFT_HOST_DEVICE weft::task<int> mutex_try_root() {
  weft::mutex m;
  int ok = 0;
  ok += m.try_lock();
  ok += !m.try_lock();
  ok += m.is_locked();
  m.unlock();
  ok += !m.is_locked();
  {
    weft::mutex_guard g = co_await m.scoped_lock();
    ok += g.owns_lock() && !m.try_lock();
  }
  ok += m.try_lock();
  m.unlock();
  co_return ok;
}

WEFT_HOST_DEVICE weft::task<int> mutex_fifo_root() {
  weft::mutex m;
  int order[4] = {};
  int next = 0;
  co_await m.lock();
  weft::join_handle<void> hs[4];
  for (int i = 0; i < 4; ++i) {
    hs[i] = weft::spawn(lock_and_record(m, order, next, i + 1));
    co_await weft::yield();  // the one worker runs it until it parks on the mutex
  }
  m.unlock();
  for (auto& h : hs) co_await std::move(h);
  co_return order[0] * 1000 + order[1] * 100 + order[2] * 10 + order[3];
}

// ---------------------------------------------------------------- when_any
// Waits for `gate`, then signals `finished` (the last use of the caller's objects).
WEFT_HOST_DEVICE weft::task<int> gated(weft::event& gate, weft::semaphore& finished, int v) {
  co_await gate.wait();
  finished.release();
  co_return v;
}
WEFT_HOST_DEVICE weft::task<int> immediate(weft::semaphore& finished, int v) {
  finished.release();
  co_return v;
}
WEFT_HOST_DEVICE weft::task<int> fails_after_signal(weft::semaphore& finished, errc e) {
  finished.release();
  co_return co_await fails_with(e);
}

struct any_report {
  int index;
  int value;
  int error;
};

WEFT_HOST_DEVICE weft::task<any_report> when_any_root(int fail) {
  weft::event gate;
  weft::semaphore finished(0);
  any_report rep{-1, -1, 0};
  if (fail == 0) {
    auto [i, v] = co_await weft::when_any(gated(gate, finished, 10), immediate(finished, 42), gated(gate, finished, 30));
    rep = {static_cast<int>(i), v, 0};
  } else {
    auto r = co_await weft::try_await(
        weft::when_any(gated(gate, finished, 10), fails_after_signal(finished, errc::invalid_argument)));
    rep.error = code_of(r);
  }
  gate.set();  // the others were not cancelled: let them finish, and wait for that
  for (int k = 0; k < (fail == 0 ? 3 : 2); ++k) co_await finished.acquire();
  co_return rep;
}

WEFT_HOST_DEVICE weft::task<void> void_after(weft::event& gate, weft::semaphore& finished) {
  co_await gate.wait();
  finished.release();
}
WEFT_HOST_DEVICE weft::task<void> void_now(weft::semaphore& finished) {
  finished.release();
  co_return;
}

WEFT_HOST_DEVICE weft::task<int> when_any_void_root() {
  weft::event gate;
  weft::semaphore finished(0);
  auto r = co_await weft::when_any(void_after(gate, finished), void_now(finished));
  gate.set();
  co_await finished.acquire();
  co_await finished.acquire();
  co_return static_cast<int>(r.index);
}

// Many rounds of when_any over tasks that all finish at once: every loser completes.
WEFT_HOST_DEVICE weft::task<int> when_any_churn_root(int rounds) {
  weft::semaphore finished(0);
  int valid = 0;
  for (int k = 0; k < rounds; ++k) {
    auto [i, v] = co_await weft::when_any(immediate(finished, 0), immediate(finished, 1), immediate(finished, 2));
    valid += static_cast<int>(i) == v;
  }
  for (int k = 0; k < 3 * rounds; ++k) co_await finished.acquire();
  co_return valid;
}

// ---------------------------------------------------------------- sleep_for
WEFT_HOST_DEVICE weft::task<int> sleep_and_check(std::uint64_t ns) {
  const std::uint64_t t0 = weft::now_ns();
  co_await weft::sleep_for(ns);
  co_return weft::now_ns() - t0 >= ns ? 1 : 0;
}

WEFT_HOST_DEVICE weft::task<int> many_sleepers_root(int n) {
  weft::join_handle<int> hs[256];
  for (int i = 0; i < n; ++i) hs[i] = weft::spawn(sleep_and_check(((i * 37) % 20 + 1) * ms / 4));
  int on_time = 0;
  for (int i = 0; i < n; ++i) on_time += co_await std::move(hs[i]);
  co_return on_time;
}

WEFT_HOST_DEVICE weft::task<int> sleep_then_ticket(std::uint64_t ns, int& next_ticket) {
  co_await weft::sleep_for(ns);
  co_return atomic_add(next_ticket, 1);
}

// Sleepers spawned longest first; returns how many woke in deadline order.
WEFT_HOST_DEVICE weft::task<int> sleep_order_root(int n, int spacing_ms) {
  int next_ticket = 0;
  weft::join_handle<int> hs[16];
  for (int i = n - 1; i >= 0; --i) hs[i] = weft::spawn(sleep_then_ticket((i + 1) * spacing_ms * ms, next_ticket));
  int in_order = 0;
  for (int i = 0; i < n; ++i) in_order += (co_await std::move(hs[i])) == i;
  co_return in_order;
}

WEFT_HOST_DEVICE weft::task<int> try_sleep_code(std::uint64_t ns) {
  weft::result<void> r = co_await weft::try_await(weft::sleep_for(ns));
  co_return code_of(r);
}

#if WEFT_CUDA_COMPILE
// The device pass emits a __host__ __device__ function only when device code uses it,
// and block_on calls the test lambdas from host code. This kernel (never launched)
// makes the device pass compile every root above, and the primitives they use.
__global__ void sync_roots_compile_for_device(int n, std::uint64_t ns) {
  (void)semaphore_limit_root(n, n, n);
  (void)semaphore_try_root();
  (void)mutex_counter_root(n, n);
  (void)mutex_try_root();
  (void)mutex_fifo_root();
  (void)when_any_root(n);
  (void)when_any_void_root();
  (void)when_any_churn_root(n);
  (void)sleep_and_check(ns);
  (void)many_sleepers_root(n);
  (void)sleep_order_root(n, n);
  (void)try_sleep_code(ns);
}
#endif

}  // namespace

// ============================================================================ semaphore
TEST_CASE("a semaphore never lets more tasks in than it has permits", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int t, int p, int k) { return semaphore_limit_root(t, p, k); },
                             16, 3, 50);
  REQUIRE(r.max_inside >= 1);
  REQUIRE(r.max_inside <= 3);
  REQUIRE(r.available_after == 3);
}

TEST_CASE("try_acquire takes only free permits and release(n) wakes n waiters", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return semaphore_try_root(); });
  REQUIRE(r == 6);
}

TEST_CASE("a semaphore under heavy contention keeps its limit and its permits", "[sync][stress]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int t, int p, int k) { return semaphore_limit_root(t, p, k); },
                             64, 5, 4000);
  REQUIRE(r.max_inside <= 5);
  REQUIRE(r.available_after == 5);
}

// ============================================================================ mutex
TEST_CASE("a mutex makes non-atomic increments from many tasks exact", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int t, int k) { return mutex_counter_root(t, k); }, 8, 1000) == 8000);
}

TEST_CASE("a mutex under heavy contention loses no increment", "[sync][stress]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int t, int k) { return mutex_counter_root(t, k); }, 64, 20000) == 1280000);
}

TEST_CASE("try_lock fails on a locked mutex and a guard unlocks at scope end", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return mutex_try_root(); });
  REQUIRE(r == 6);
}

// Host backend with one worker: the waiters queue up in a known order.
TEST_CASE("a mutex hands the lock to its waiters in arrival order", "[sync]") {
  weft::runtime rt(weft_test::host_config(1));
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return mutex_fifo_root(); });
  REQUIRE(r == 1234);
}

// ============================================================================ when_any
TEST_CASE("when_any returns the first finisher's index and value, and the others still complete", "[sync][when_any]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int f) { return when_any_root(f); }, 0);
  REQUIRE(r.index == 1);
  REQUIRE(r.value == 42);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return when_any_void_root(); }) == 1);
  // The losers ran detached; once they are gone, nothing is left behind.
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("when_any whose first finisher failed reports that error", "[sync][when_any]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int f) { return when_any_root(f); }, 1);
  REQUIRE(r.error == code(errc::invalid_argument));
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("thousands of when_any rounds leave every loser completed and no frame behind", "[sync][stress][when_any]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return when_any_churn_root(n); }, 3000) == 3000);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

// ============================================================================ sleep_for
TEST_CASE("sleep_for waits at least the requested time", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t ns) { return sleep_and_check(ns); }, 30 * ms) == 1);
  REQUIRE(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(30));
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t ns) { return sleep_and_check(ns); }, std::uint64_t{0}) == 1);
}

TEST_CASE("many sleepers all wake, none before its deadline", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return many_sleepers_root(n); }, 256) == 256);
}

TEST_CASE("sleepers wake in deadline order", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int spacing) { return sleep_order_root(n, spacing); }, 6, 40) == 6);
}

// run_inline has no scheduler to wake a sleeper (on either backend): sleep_for fails.
TEST_CASE("sleep_for without a timer fails the task with backend_unavailable, or try_await reports it",
          "[sync]") {
  auto caught = weft::run_inline(try_sleep_code(ms));
  REQUIRE(caught);
  REQUIRE(*caught == code(errc::backend_unavailable));
  auto failed = weft::run_inline(sleep_and_check(ms));
  REQUIRE_FALSE(failed);
  REQUIRE(failed.error() == errc::backend_unavailable);
}

// ---------------------------------------------------------------- small when_any cases
// The smallest shapes of when_any: they hung or summed wrongly on the device while the
// device ABI destroyed by-value tasks twice (docs/design.md, "By-value owners").
namespace {
WEFT_HOST_DEVICE weft::task<int> value_of(int v) { co_return v; }
WEFT_HOST_DEVICE weft::task<int> when_any_values_root(int rounds) {
  int sum = 0;
  for (int k = 0; k < rounds; ++k) {
    auto r = co_await weft::when_any(value_of(1), value_of(2));
    sum += r.value;
  }
  co_return sum;
}
WEFT_HOST_DEVICE weft::task<int> when_any_one_failure_root() {
  auto r = co_await weft::try_await(weft::when_any(fails_with(errc::invalid_argument)));
  co_return r.has_value() ? -1 : code_of(r);
}
}  // namespace

TEST_CASE("when_any of two plain values returns one of them", "[sync][when_any]") {
  weft::runtime rt(any_backend_config());
  const int s = rt.block_on([] WEFT_HOST_DEVICE(int n) { return when_any_values_root(n); }, 1);
  REQUIRE((s == 1 || s == 2));
}

TEST_CASE("when_any of two plain values, many rounds", "[sync][when_any]") {
  weft::runtime rt(any_backend_config());
  const int s = rt.block_on([] WEFT_HOST_DEVICE(int n) { return when_any_values_root(n); }, 100);
  REQUIRE(s >= 100);
  REQUIRE(s <= 200);
}

TEST_CASE("when_any of one failing task reports its error", "[sync][when_any]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return when_any_one_failure_root(); }) == code(errc::invalid_argument));
}
