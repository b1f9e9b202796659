// The synchronisation primitives: semaphore, mutex, channel, when_any, sleep_for.
//
// Backend-agnostic: every test runs its work through runtime::block_on on the backend
// that WEFT_BACKEND picks (ctest sets host), with WEFT_HOST_DEVICE coroutines that
// share state only through their frames and return plain values. Tests tagged "host"
// in their comment use host-only facilities (shutdown, counted, run_inline on host).
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "support.hpp"

using weft::errc;
using weft_test::any_backend_config;
using weft_test::atomic_add;
using weft_test::atomic_load;
using weft_test::atomic_max;

namespace {

constexpr std::uint64_t ms = 1'000'000;

// Encodes an error (or success) of a result as an int the host can check.
template <class R>
WEFT_HOST_DEVICE int code_of(const R& r) {
  return r ? 0 : static_cast<int>(r.error());
}
WEFT_HOST_DEVICE constexpr int code(errc e) { return static_cast<int>(e); }

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

// ---------------------------------------------------------------- channel
WEFT_HOST_DEVICE weft::task<void> send_range(weft::channel<int>& ch, int from, int to) {
  for (int v = from; v < to; ++v) (void)co_await ch.send(v);
}

WEFT_HOST_DEVICE weft::task<int> spsc_root(int n, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  weft::join_handle<void> p = weft::spawn(send_range(ch, 0, n));
  int in_order = 0;
  for (int i = 0; i < n; ++i) {
    weft::result<int> r = co_await ch.recv();
    if (r && *r == i) ++in_order;
  }
  co_await std::move(p);
  co_return in_order;
}

WEFT_HOST_DEVICE weft::task<void> drain_counting(weft::channel<int>& ch, int* seen) {
  for (;;) {
    weft::result<int> r = co_await ch.recv();
    if (!r) co_return;  // closed and drained
    atomic_add(seen[*r], 1);
  }
}

constexpr int mpmc_max_items = 8000;

// Producers send disjoint ranges; consumers mark each item seen; returns how many items
// were seen exactly once (all of them, or something was lost or duplicated).
WEFT_HOST_DEVICE weft::task<int> mpmc_root(int producers, int consumers, int per_producer, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  int seen[mpmc_max_items] = {};
  weft::join_handle<void> ps[16];
  weft::join_handle<void> cs[16];
  for (int i = 0; i < consumers; ++i) cs[i] = weft::spawn(drain_counting(ch, seen));
  for (int i = 0; i < producers; ++i) ps[i] = weft::spawn(send_range(ch, i * per_producer, (i + 1) * per_producer));
  for (int i = 0; i < producers; ++i) co_await std::move(ps[i]);
  ch.close();
  for (int i = 0; i < consumers; ++i) co_await std::move(cs[i]);
  int exactly_once = 0;
  for (int v = 0; v < producers * per_producer; ++v) exactly_once += seen[v] == 1;
  co_return exactly_once;
}

WEFT_HOST_DEVICE weft::task<int> send_and_report(weft::channel<int>& ch, int v, int& finished) {
  weft::result<void> r = co_await ch.send(v);
  atomic_add(finished, 1);
  co_return code_of(r);
}

struct full_channel_report {
  int finished_before_reading;  // sends that completed with no reader: at most the capacity
  int received;
  int received_mask;            // bit v set for each value v received
  int failed_sends;
  int left_after;               // try_recv after the drain: would_block
};

WEFT_HOST_DEVICE weft::task<full_channel_report> full_channel_root(int senders, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  int finished = 0;
  weft::join_handle<int> hs[16];
  for (int i = 0; i < senders; ++i) hs[i] = weft::spawn(send_and_report(ch, i + 1, finished));
  for (int k = 0; k < 200; ++k) co_await weft::yield();  // let every sender reach the full channel
  full_channel_report rep{atomic_load(finished), 0, 0, 0, 0};
  for (int i = 0; i < senders; ++i) {
    weft::result<int> r = co_await ch.recv();
    if (!r) break;
    ++rep.received;
    rep.received_mask |= 1 << *r;
  }
  for (int i = 0; i < senders; ++i) rep.failed_sends += (co_await std::move(hs[i])) != 0;
  rep.left_after = code_of(ch.try_recv());
  co_return rep;
}

WEFT_HOST_DEVICE weft::task<int> recv_code(weft::channel<int>& ch) { co_return code_of(co_await ch.recv()); }

struct close_report {
  int waiting_receivers_closed;  // receivers parked at close() that got errc::closed
  int drained_in_order;          // items buffered before close() received afterwards, in order
  int recv_after_drain;          // then errc::closed
  int send_after_close;          // errc::closed
  int try_send_after_close;      // errc::closed
  int try_recv_after_close;      // errc::closed
  int waiting_sender;            // a sender parked on a full channel at close(): errc::closed
};

WEFT_HOST_DEVICE weft::task<close_report> close_root() {
  close_report rep{};
  {
    weft::channel<int> empty(4);
    weft::join_handle<int> rs[3];
    for (auto& r : rs) r = weft::spawn(recv_code(empty));
    for (int k = 0; k < 100; ++k) co_await weft::yield();
    empty.close();
    for (auto& r : rs) rep.waiting_receivers_closed += (co_await std::move(r)) == code(errc::closed);
  }
  weft::channel<int> ch(3);
  for (int v = 1; v <= 3; ++v) (void)co_await ch.send(v);
  int finished = 0;
  weft::join_handle<int> blocked = weft::spawn(send_and_report(ch, 4, finished));
  for (int k = 0; k < 100; ++k) co_await weft::yield();
  ch.close();
  rep.waiting_sender = co_await std::move(blocked);
  for (int v = 1; v <= 3; ++v) {
    weft::result<int> r = co_await ch.recv();
    rep.drained_in_order += (r && *r == v);
  }
  rep.recv_after_drain = code_of(co_await ch.recv());
  rep.send_after_close = code_of(co_await ch.send(9));
  rep.try_send_after_close = code_of(ch.try_send(9));
  rep.try_recv_after_close = code_of(ch.try_recv());
  co_return rep;
}

WEFT_HOST_DEVICE weft::task<int> channel_try_root() {
  weft::channel<int> ch(2);
  int ok = 0;
  ok += code_of(ch.try_recv()) == code(errc::would_block);
  ok += code_of(ch.try_send(1)) == 0;
  const int two = 2;
  ok += code_of(ch.try_send(two)) == 0;
  ok += code_of(ch.try_send(3)) == code(errc::queue_full);
  ok += ch.size() == 2 && ch.capacity() == 2;
  weft::result<int> a = ch.try_recv();
  weft::result<int> b = co_await ch.recv();
  ok += a && *a == 1 && b && *b == 2;
  ok += code_of(ch.try_recv()) == code(errc::would_block);
  co_return ok;
}

WEFT_HOST_DEVICE weft::task<int> channel_zero_root() {
  weft::channel<int> ch(0);
  const int bad = code(errc::invalid_argument);
  int ok = 0;
  ok += code(ch.error()) == bad;
  ok += code_of(ch.try_send(1)) == bad;
  ok += code_of(ch.try_recv()) == bad;
  ok += code_of(co_await ch.send(1)) == bad;  // does not wait
  ok += code_of(co_await ch.recv()) == bad;   // does not wait
  ch.close();
  ok += code_of(co_await ch.recv()) == bad;
  co_return ok;
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
  (void)spsc_root(n, n);
  (void)mpmc_root(n, n, n, n);
  (void)full_channel_root(n, n);
  (void)close_root();
  (void)channel_try_root();
  (void)channel_zero_root();
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

// Host backend, one worker: the waiters queue up in a known order.
TEST_CASE("a mutex hands the lock to its waiters in arrival order", "[sync]") {
  weft::runtime rt(weft_test::host_config(1));
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return mutex_fifo_root(); });
  REQUIRE(r == 1234);
}

// ============================================================================ channel
TEST_CASE("a channel delivers one producer's items to one consumer in order", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int c) { return spsc_root(n, c); }, 2000, 4) == 2000);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int c) { return spsc_root(n, c); }, 500, 1) == 500);
}

TEST_CASE("a channel with many producers and consumers delivers every item exactly once", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int p, int c, int k, int cap) { return mpmc_root(p, c, k, cap); }, 4, 4,
                      500, 8) == 2000);
}

TEST_CASE("a small channel under heavy many-to-many traffic loses and duplicates nothing", "[sync][stress]") {
  weft::runtime rt(any_backend_config());
  for (int cap : {1, 3, 64}) {
    INFO("capacity " << cap);
    REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int p, int c, int k, int c2) { return mpmc_root(p, c, k, c2); }, 8, 6,
                        1000, cap) == 8000);
  }
}

TEST_CASE("senders wait on a full channel with no reader and none of their items is lost", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int s, int c) { return full_channel_root(s, c); }, 8, 2);
  REQUIRE(r.finished_before_reading <= 2);
  REQUIRE(r.received == 8);
  REQUIRE(r.received_mask == 0x1fe);  // values 1..8, each once
  REQUIRE(r.failed_sends == 0);
  REQUIRE(r.left_after == code(errc::would_block));
}

TEST_CASE("close wakes waiting receivers and senders with closed, and receivers drain what is left first",
          "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE() { return close_root(); });
  REQUIRE(r.waiting_receivers_closed == 3);
  REQUIRE(r.waiting_sender == code(errc::closed));
  REQUIRE(r.drained_in_order == 3);
  REQUIRE(r.recv_after_drain == code(errc::closed));
  REQUIRE(r.send_after_close == code(errc::closed));
  REQUIRE(r.try_send_after_close == code(errc::closed));
  REQUIRE(r.try_recv_after_close == code(errc::closed));
}

TEST_CASE("try_send reports queue_full and try_recv would_block instead of waiting", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return channel_try_root(); });
  REQUIRE(r == 7);
}

TEST_CASE("a channel of capacity 0 is invalid and every operation reports invalid_argument", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return channel_zero_root(); });
  REQUIRE(r == 6);
}

// ============================================================================ when_any
TEST_CASE("when_any returns the first finisher's index and value, and the others still complete", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int f) { return when_any_root(f); }, 0);
  REQUIRE(r.index == 1);
  REQUIRE(r.value == 42);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return when_any_void_root(); }) == 1);
  // The losers ran detached; once they are gone, nothing is left behind.
  for (int i = 0; i < 5000 && rt.live_tasks() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(rt.live_tasks() == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("when_any whose first finisher failed reports that error", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int f) { return when_any_root(f); }, 1);
  REQUIRE(r.error == code(errc::invalid_argument));
  for (int i = 0; i < 5000 && rt.live_tasks() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("thousands of when_any rounds leave every loser completed and no frame behind", "[sync][stress]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return when_any_churn_root(n); }, 3000) == 3000);
  for (int i = 0; i < 5000 && rt.live_tasks() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(rt.live_tasks() == 0);
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
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int spacing) { return sleep_order_root(n, spacing); }, 6, 25) == 6);
}

// Host: run_inline has no scheduler, as the device has no timer yet: sleep_for fails.
TEST_CASE("sleep_for without a timer fails the task with backend_unavailable, or try_await reports it",
          "[sync]") {
  auto caught = weft::run_inline(try_sleep_code(ms));
  REQUIRE(caught);
  REQUIRE(*caught == code(errc::backend_unavailable));
  auto failed = weft::run_inline(sleep_and_check(ms));
  REQUIRE_FALSE(failed);
  REQUIRE(failed.error() == errc::backend_unavailable);
}

// ============================================================================ shutdown (host)
namespace {

using weft_test::counted;

weft::task<void> park_on_semaphore(weft::semaphore& s) {
  counted c;
  co_await s.acquire();
}
weft::task<void> park_on_mutex(weft::mutex& m) {
  counted c;
  co_await m.lock();
  m.unlock();
}
weft::task<void> park_sending(weft::channel<counted>& ch) {
  counted c;
  (void)co_await ch.send(counted{});
}
weft::task<void> park_receiving(weft::channel<int>& ch) {
  counted c;
  (void)co_await ch.recv();
}
weft::task<void> park_sleeping() {
  counted c;
  co_await weft::sleep_for(3600 * 1000 * ms);
}
weft::task<int> park_on_event(weft::event& ev) {
  counted c;
  co_await ev.wait();
  co_return 0;
}

// Owns one of each primitive (in its frame, which outlives the waiters until shutdown)
// and parks `n` tasks on each, plus a when_any whose tasks never finish.
weft::task<void> owner_of_parked_tasks(int n) {
  counted c;
  weft::semaphore s(0);
  weft::mutex m;
  weft::channel<counted> full(1);
  weft::channel<int> empty(1);
  weft::event never;
  co_await m.lock();
  (void)full.try_send(counted{});
  for (int i = 0; i < n; ++i) {
    weft::spawn(park_on_semaphore(s)).detach();
    weft::spawn(park_on_mutex(m)).detach();
    weft::spawn(park_sending(full)).detach();
    weft::spawn(park_receiving(empty)).detach();
    weft::spawn(park_sleeping()).detach();
  }
  weft::spawn(weft::when_any(park_on_event(never), park_on_event(never))).detach();
  co_await never.wait();
}

}  // namespace

TEST_CASE("shutdown destroys tasks parked on a semaphore, mutex, channel, sleep or when_any without leaks",
          "[sync]") {
  const int n = 20;
  {
    weft::runtime rt(weft_test::host_config());
    rt.block_on([](int k) -> weft::task<int> {
      weft::spawn(owner_of_parked_tasks(k)).detach();
      co_return 0;
    }, n);
    const std::size_t expected = 1 + 5 * n + 3;  // owner, the waiters, when_any and its two runners
    for (int i = 0; i < 5000 && rt.live_tasks() < expected; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(rt.live_tasks() == expected);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the last ones park
    const auto t0 = std::chrono::steady_clock::now();
    rt.shutdown();
    REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    REQUIRE(rt.live_tasks() == 0);
    REQUIRE(rt.live_frame_blocks() == 0);
  }
  REQUIRE(counted::live == 0);
}
