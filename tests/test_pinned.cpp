// Pinned tasks (weft::spawn_pinned) and the worker queries, written once for both
// backends (WEFT_BACKEND picks one; ctest sets host, scripts/gpu-check runs cuda).
// Every check that runs inside a task reports through the root's return value.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "shared_array.hpp"
#include "support.hpp"

namespace {

weft::config pinned_config() {
  weft::config c;  // kind = automatic: WEFT_BACKEND decides
  c.workers = 4;   // host threads; on the GPU, warps: one block (8 under compute-sanitizer, two
  if (std::getenv("WEFT_TEST_SMALL") != nullptr) c.workers = 8;  // blocks, as the other tests use)
  return c;
}

WEFT_HOST_DEVICE weft::task<int> add(int a, int b) { co_return a + b; }

// Sets `ev` after a few yields: wherever the scheduler runs it.
WEFT_HOST_DEVICE weft::task<void> set_later(weft::event& ev, int yields) {
  for (int i = 0; i < yields; ++i) co_await weft::yield();
  ev.set();
}

// Counts the resumption points at which the task found itself off its home worker:
// after its start, yields, an event set by an unpinned task, a join and a sleep.
WEFT_HOST_DEVICE weft::task<int> stays_home(std::uint32_t home, int rounds) {
  int away = weft::this_worker() != home;
  for (int r = 0; r < rounds; ++r) {
    co_await weft::yield();
    away += weft::this_worker() != home;
    weft::event ev;
    auto setter = weft::spawn(set_later(ev, r % 4));
    co_await ev.wait();
    away += weft::this_worker() != home;
    co_await std::move(setter);
    away += weft::this_worker() != home;
    away += co_await add(0, 0);
    if (r % 8 == 0) {
      co_await weft::sleep_for(1000);
      away += weft::this_worker() != home;
    }
  }
  co_return away;
}

WEFT_HOST_DEVICE weft::task<int> yield_twice_at_home(std::uint32_t home) {
  co_await weft::yield();
  co_await weft::yield();
  co_return weft::this_worker() == home ? 1 : 0;
}

// Side 0 sets event 2r+1 and waits on 2r; side 1 the other way round. Returns the number
// of hops it ran away from its home (0 expected) times 1,000,000 plus its rounds.
WEFT_HOST_DEVICE weft::task<int> pinned_pinger(weft::event* evs, int rounds, int side, std::uint32_t home) {
  int away = 0;
  for (int r = 0; r < rounds; ++r) {
    if (side == 1) co_await evs[2 * r + 1].wait();
    away += weft::this_worker() != home;
    evs[2 * r + 1 - side].set();
    if (side == 0) co_await evs[2 * r].wait();
    away += weft::this_worker() != home;
  }
  co_return away * 1000000 + rounds;
}

// Hands a token back and forth with its partner until flag[0] is set (or max_rounds
// pass); returns the rounds it ran, or -1 when it gave up. Side 0 alone reads the flag
// and tells side 1 through flag[1] (written before the set that side 1 waits for).
WEFT_HOST_DEVICE weft::task<int> ping_until(weft::event* evs, int max_rounds, int side, int* flag) {
  for (int r = 0; r < max_rounds; ++r) {
    bool stop = false;
    if (side == 1) {
      co_await evs[2 * r + 1].wait();
      stop = flag[1] != 0;
    } else {
      stop = weft::detail::device_atomic<int>(flag[0]).load(weft::detail::mo_acquire) != 0;
      flag[1] = stop ? 1 : 0;
    }
    evs[2 * r + 1 - side].set();
    if (side == 0) co_await evs[2 * r].wait();
    if (stop) co_return r + 1;
  }
  co_return -1;
}

// The payload test's buffer: sectors of 32 bytes (placed on 32-byte boundaries by
// place_sectors), each 7 payload words the writer rewrites every round and one guard
// word nobody writes after the start.
struct payload_sector {
  int word[7];
  int guard;
};
constexpr int payload_sectors = 8;
static_assert(sizeof(payload_sector) == 32);

// Zeroed sectors at the first 32-byte boundary of `raw` (a frame is not aligned to 32
// bytes on the host, so the test aligns its buffer by hand).
WEFT_HOST_DEVICE inline payload_sector* place_sectors(unsigned char (&raw)[(payload_sectors + 1) * 32]) {
  const auto at = (reinterpret_cast<std::uintptr_t>(raw) + 31) & ~std::uintptr_t{31};
  auto* sectors = reinterpret_cast<payload_sector*>(at);
  for (int s = 0; s < payload_sectors; ++s) ::new (&sectors[s]) payload_sector{};
  return sectors;
}

// On the GPU, waits about `ns` in place (a task that computes for a while); on the host, nothing.
WEFT_HOST_DEVICE inline void busy_for_ns(std::uint64_t ns) {
#if WEFT_DEVICE_PASS
  const std::uint64_t t0 = weft::detail::now_ns();
  while (weft::detail::now_ns() - t0 < ns) {
  }
#else
  (void)ns;
#endif
}

// The SM the calling lane runs on (0 on the host).
WEFT_HOST_DEVICE inline unsigned current_sm() {
#if WEFT_DEVICE_PASS
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
#else
  return 0;
#endif
}

// The writer writes round r's payload with plain stores and sets evs[2r]; the reader
// waits, counts the words that are not round r's and sets evs[2r+1], after which the
// writer writes the next round over the same words, 2 us later in even rounds and 15 us
// in odd ones (by then the reader's SM has last round's words in its L1: l1_keeper). A
// reader waiting in place polls with acquire loads for its first few microseconds and
// with relaxed loads and a fence after the match later on (device_hooks.hpp,
// acquire_poll_rounds): the two gaps reach both forms. Each writes its SM to *sm at the start.
WEFT_HOST_DEVICE weft::task<int> payload_writer(weft::event* evs, payload_sector* buf, int rounds, unsigned* sm) {
  *sm = current_sm();
  for (int r = 0; r < rounds; ++r) {
    if (r != 0) busy_for_ns(r % 2 ? 15000 : 2000);
    for (int s = 0; s < payload_sectors; ++s)
      for (int i = 0; i < 7; ++i) buf[s].word[i] = r * 1000 + s * 7 + i;
    evs[2 * r].set();
    co_await evs[2 * r + 1].wait();
  }
  co_return 0;
}
WEFT_HOST_DEVICE weft::task<int> payload_reader(weft::event* evs, const payload_sector* buf, int rounds, unsigned* sm) {
  *sm = current_sm();
  int wrong = 0;
  for (int r = 0; r < rounds; ++r) {
    co_await evs[2 * r].wait();
    for (int s = 0; s < payload_sectors; ++s)
      for (int i = 0; i < 7; ++i) wrong += buf[s].word[i] != r * 1000 + s * 7 + i;
    evs[2 * r + 1].set();
  }
  co_return wrong;
}

// On the GPU, runs beside the reader, on its SM, until *stop or 2 s have passed: keeps
// the buffer's sectors in the SM's L1 by reading their guard words (plain loads, which
// the L1 caches; no acquire, which would drop the L1). A reader whose wait did not
// acquire would then read last round's words from that L1 (a build whose in-place wait
// polled with relaxed loads failed this test on an H200). It never yields: its worker
// runs nothing else meanwhile, which is why it is pinned to a worker nothing else is.
// On the host there is no L1 to keep, and it returns at once.
WEFT_HOST_DEVICE weft::task<int> l1_keeper(const payload_sector* buf, int* stop, unsigned* sm) {
  *sm = current_sm();
  int sum = 0;
#if WEFT_DEVICE_PASS
  const std::uint64_t t0 = weft::detail::now_ns();
  do {
    asm volatile("" ::: "memory");  // the guards are loaded again each round, not once
    for (int s = 0; s < payload_sectors; ++s) sum += buf[s].guard;
  } while (weft::detail::device_atomic<int>(*stop).load(weft::detail::mo_relaxed) == 0 &&
           weft::detail::now_ns() - t0 < 2000000000ull);
#else
  (void)buf;
  (void)stop;
#endif
  co_return sum;
}

// A frame of over 2 MiB (the array lives across the yield, read at an index known only
// at run time, so the compiler cannot fold it away): more than the 1 MiB frame pool of
// the test below can give.
WEFT_HOST_DEVICE weft::task<int> frame_larger_than_the_pool(unsigned at) {
  unsigned char big[2 << 20];
  for (unsigned i = 0; i < sizeof big; ++i) big[i] = static_cast<unsigned char>(i ^ at);
  co_await weft::yield();
  co_return big[at % sizeof big];
}

WEFT_HOST_DEVICE weft::task<void> yield_forever() {
  for (;;) co_await weft::yield();
}

WEFT_HOST_DEVICE weft::task<int> parked_forever(weft::event& never) {
  co_await never.wait();
  co_return 1;
}

// As parked_forever, after counting itself in *at_home when it runs on worker `home`.
WEFT_HOST_DEVICE weft::task<int> parked_at(weft::event& never, std::uint32_t home, int* at_home) {
  if (weft::this_worker() == home) weft_test::atomic_add(*at_home, 1);
  co_await never.wait();
  co_return 1;
}

}  // namespace

TEST_CASE("this_worker and worker_count name the worker that runs the task", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    const std::uint32_t me = weft::this_worker();
    co_return (n > 0 && me < n) ? static_cast<int>(n) : -1;
  };
  const int n = rt.block_on(root);
  REQUIRE(n >= 4);
  REQUIRE(weft::this_worker() == weft::no_worker);  // the host's main thread is no worker
}

TEST_CASE("a pinned task resumes only on its worker, whoever wakes it", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE(int rounds) -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    const std::uint32_t homes[4] = {0, n - 1, n / 2, 1 % n};
    weft::join_handle<int> hs[4];
    for (int i = 0; i < 4; ++i) hs[i] = weft::spawn_pinned(homes[i], stays_home(homes[i], rounds));
    int away = 0;
    for (int i = 0; i < 4; ++i) {
      auto r = co_await weft::try_await(std::move(hs[i]));
      away += r ? *r : 1000;
    }
    co_return away;
  };
  REQUIRE(rt.block_on(root, 40) == 0);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
}

TEST_CASE("thousands of tasks pinned to one worker all complete there", "[runtime][pinned][stress]") {
  weft::runtime rt(pinned_config());
  const int tasks = std::getenv("WEFT_TEST_SMALL") != nullptr ? 500 : 5000;
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<int> {
    const std::uint32_t home = weft::worker_count() - 1;
    weft::join_handle<int> hs[5000];
    for (int i = 0; i < n; ++i) hs[i] = weft::spawn_pinned(home, yield_twice_at_home(home));
    int at_home = 0;
    for (int i = 0; i < n; ++i) {
      auto r = co_await weft::try_await(std::move(hs[i]));
      at_home += r ? *r : 0;
    }
    co_return at_home;
  };
  REQUIRE(rt.block_on(root, tasks) == tasks);
}

TEST_CASE("spawn_pinned to a worker that does not exist fails the handle with invalid_argument", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    auto past_end = weft::spawn_pinned(n, add(1, 2));
    auto none = weft::spawn_pinned(weft::no_worker, add(1, 2));
    int bad = 0;
    bad += !past_end.valid() && past_end.error() == weft::errc::invalid_argument;
    auto r = co_await weft::try_await(std::move(none));
    bad += !r && r.error() == weft::errc::invalid_argument;
    // The runtime goes on: a good spawn_pinned still runs.
    const int three = co_await weft::spawn_pinned(n - 1, add(1, 2));
    co_return bad * 10 + three;
  };
  REQUIRE(rt.block_on(root) == 23);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
}

TEST_CASE("roots the host pins with runtime::spawn_pinned resume only on their worker", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto one = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 1; };
  REQUIRE(rt.block_on(one) == 1);  // on the cuda backend the worker count is known once the kernel runs
  const std::uint32_t n = rt.workers();
  REQUIRE(n >= 4);
  const std::uint32_t homes[4] = {0, n - 1, n / 2, 1};
  auto root = [] WEFT_HOST_DEVICE(std::uint32_t home, int rounds) { return stays_home(home, rounds); };
  std::vector<weft::host_handle<int>> hs;
  for (std::uint32_t home : homes) hs.push_back(rt.spawn_pinned(home, root, home, 20));
  for (auto& h : hs) REQUIRE(h.get() == 0);  // 0: no resumption off its home
  // Where the root starts is its home too: the first thing it reads.
  auto where = [] WEFT_HOST_DEVICE() -> weft::task<std::uint32_t> { co_return weft::this_worker(); };
  for (std::uint32_t home : homes) REQUIRE(rt.spawn_pinned(home, where).get() == home);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
}

namespace {

// The cuda backend's count of live pinned roots (device_worker::pinned_live, summed),
// once it equals `want` or `limit` passed; -1 on the host backend, which counts nothing.
long long pinned_live_once(weft::runtime& rt, long long want, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  if (rt.device() == nullptr) return -1;
  return weft_test::wait_for_value([&] { return static_cast<long long>(rt.device()->stats().pinned_live); }, want,
                                   limit);
}

}  // namespace

TEST_CASE("a worker counts the pinned tasks it is home to until each completes, for its parked naps",
          "[runtime][pinned]") {
  // On the GPU a parked warp that is home to pinned tasks naps at most home_park_max_ns,
  // so that a wake-up sent to its inbox does not wait for a long nap (device_worker.hpp).
  weft_test::shared_array<int> at_home(1);  // the parked tasks that run on their homes
  weft::runtime rt(pinned_config());
  auto joined = [] WEFT_HOST_DEVICE(int k) -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    weft::join_handle<int> hs[16];
    for (int i = 0; i < k; ++i) hs[i] = weft::spawn_pinned(static_cast<std::uint32_t>(i) % n, add(i, 1));
    int sum = 0;
    for (int i = 0; i < k; ++i) sum += co_await std::move(hs[i]);
    co_return sum;
  };
  // The count exists on the cuda backend only (the host backend has no naps to shorten):
  // there it is checked exactly; the host checks what it can of the same tasks, that the
  // parked ones are parked at their homes.
  REQUIRE(rt.block_on(joined, 16) == 136);
  const bool counts = rt.device() != nullptr;
  const std::uint32_t n = rt.workers();
  auto where = [] WEFT_HOST_DEVICE() -> weft::task<std::uint32_t> { co_return weft::this_worker(); };
  for (std::uint32_t home = 0; home < n; ++home) REQUIRE(rt.spawn_pinned(home, where).get() == home);
  if (counts) CHECK(pinned_live_once(rt, 0) == 0);  // every completion took its count off again

  // Parked pinned tasks stay counted: 5 on their homes, plus the root the host pinned.
  auto parks = [] WEFT_HOST_DEVICE(int* at) -> weft::task<int> {
    weft::event never;
    const std::uint32_t n = weft::worker_count();
    for (std::uint32_t i = 0; i < 5; ++i) weft::spawn_pinned((i * 3) % n, parked_at(never, (i * 3) % n, at)).detach();
    co_return co_await parked_at(never, n - 1, at);
  };
  auto h = rt.spawn_pinned(n - 1, parks, at_home.data());
  CHECK(weft_test::wait_for_value([&] { return weft_test::atomic_load(at_home[0]); }, 6, std::chrono::seconds(5)) ==
        6);
  if (counts) CHECK(pinned_live_once(rt, 6) == 6);
  rt.shutdown();  // destroys the parked tasks
  auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a pinned spawn refused with queue_full leaves its worker's count of pinned tasks as it was",
          "[runtime][pinned]") {
  // The count is raised before the task is published and lowered when it completes; a
  // refused spawn must lower it at once, or its home would nap short forever after.
  weft::config c = pinned_config();
  c.workers = 1;           // the spawner's own warp is the home, and nobody drains its queues
  c.inject_capacity = 64;  // a tiny inject queue: pinned-to-self spawns overflow into it
  weft::runtime rt(c);
  const weft_test::tally t = rt.block_on([] WEFT_HOST_DEVICE(int n) { return weft_test::spawn_storm(n, true); }, 5000);
  REQUIRE(t.other == 0);
  REQUIRE(t.ok + t.full == 5000);
  const long long live = pinned_live_once(rt, 0);
  if (rt.device() != nullptr) {
    REQUIRE(t.full > 0);  // the queues did fill
    REQUIRE(live == 0);   // every accepted task completed, every refused one was taken off
  } else {
    REQUIRE(t.full == 0);  // the host's queues grow
    REQUIRE(live == -1);
  }
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return weft_test::spawn_storm(n, true); }, 10).ok == 10);  // and goes on
}

TEST_CASE("runtime::spawn_pinned to a worker that does not exist reports invalid_argument and creates no root",
          "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto one = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 1; };
  // Before the first root, too: the cuda backend starts its kernel, then checks.
  auto early = rt.spawn_pinned(1u << 30, one).try_get();
  REQUIRE_FALSE(early.has_value());
  REQUIRE(early.error() == weft::errc::invalid_argument);
  const std::uint32_t n = rt.workers();
  REQUIRE(n >= 4);
  for (std::uint32_t bad : {n, n + 7, weft::no_worker}) {
    auto h = rt.spawn_pinned(bad, one);
    REQUIRE_FALSE(h.valid());
    const auto r = h.try_get();
    REQUIRE_FALSE(r.has_value());
    REQUIRE(r.error() == weft::errc::invalid_argument);
  }
  REQUIRE(rt.live_tasks() == 0);
  REQUIRE(rt.spawn_pinned(n - 1, one).get() == 1);  // the runtime goes on
}

TEST_CASE("runtime::spawn_pinned after shutdown reports shutting_down, whatever the worker", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto one = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 1; };
  REQUIRE(rt.spawn_pinned(0, one).get() == 1);  // the kernel runs: the cuda backend knows its workers
  const std::uint32_t n = rt.workers();
  rt.shutdown();
  for (std::uint32_t w : {0u, n - 1, n, n + 7}) {
    INFO("worker " << w << " of " << n);
    const auto r = rt.spawn_pinned(w, one).try_get();
    REQUIRE_FALSE(r.has_value());
    REQUIRE(r.error() == weft::errc::shutting_down);
  }
  const auto any = rt.spawn(one).try_get();
  REQUIRE(any.error() == weft::errc::shutting_down);
  REQUIRE(rt.live_tasks() == 0);
}

TEST_CASE("spawn_pinned of a task whose frame could not be allocated reports out_of_memory, whatever the worker",
          "[runtime][pinned]") {
  weft::config c = pinned_config();
  c.frame_pool_bytes = 1u << 20;
  weft::runtime rt(c);
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    auto here = weft::spawn_pinned(n - 1, frame_larger_than_the_pool(n));
    auto nowhere = weft::spawn_pinned(n, frame_larger_than_the_pool(n));  // the task's own error comes first
    int refused = 0;
    refused += !here.valid() && here.error() == weft::errc::out_of_memory;
    refused += !nowhere.valid() && nowhere.error() == weft::errc::out_of_memory;
    const int three = co_await weft::spawn_pinned(n - 1, add(1, 2));  // and the runtime goes on
    co_return refused * 10 + three;
  };
  REQUIRE(rt.block_on(root) == 23);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
}

TEST_CASE("two tasks pinned to different workers hand a token back and forth through events", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE(int rounds) -> weft::task<int> {
    weft::event evs[2 * 1000];
    const std::uint32_t n = weft::worker_count();
    const std::uint32_t a_home = 1 % n, b_home = n - 1;
    auto a = weft::spawn_pinned(a_home, pinned_pinger(evs, rounds, 0, a_home));
    auto b = weft::spawn_pinned(b_home, pinned_pinger(evs, rounds, 1, b_home));
    const int x = co_await std::move(a);
    const int y = co_await std::move(b);
    co_return x + y;
  };
  REQUIRE(rt.block_on(root, 1000) == 2000);  // no hop ran away from home
}

TEST_CASE("a task woken by an event on another SM reads every word its setter wrote before set()", "[runtime][pinned]") {
  weft::config c = pinned_config();
  c.workers = 8;  // on the GPU two blocks of 4 warps: the writer in one, the reader and the keeper in the other
  weft::runtime rt(c);
  auto root = [] WEFT_HOST_DEVICE(int rounds) -> weft::task<int> {
    weft::event evs[2 * 400];
    unsigned char raw[(payload_sectors + 1) * 32];
    payload_sector* buf = place_sectors(raw);
    int stop = 0;
    unsigned sm[3] = {0, 0, 0};  // writer, reader, keeper
    const std::uint32_t n = weft::worker_count();
    auto keeper = weft::spawn_pinned(n - 2, l1_keeper(buf, &stop, &sm[2]));  // the reader's blockmate
    auto w = weft::spawn_pinned(1, payload_writer(evs, buf, rounds, &sm[0]));
    auto r = weft::spawn_pinned(n - 1, payload_reader(evs, buf, rounds, &sm[1]));
    const bool both = w && r;
    if (!both)
      for (auto& e : evs) e.set();  // one side did not start: the other runs through alone
    const weft::result<int> wrote = co_await weft::try_await(std::move(w));
    const weft::result<int> wrong = co_await weft::try_await(std::move(r));
    weft::detail::device_atomic<int>(stop).store(1, weft::detail::mo_relaxed);
    (void)co_await weft::try_await(std::move(keeper));  // every task is done before the frame goes
    // On the GPU: the reader and the keeper on one SM, the writer on another.
    const bool placed = !WEFT_DEVICE_PASS || (sm[1] == sm[2] && sm[0] != sm[1]);
    co_return !both || !wrote || !wrong ? -1 : !placed ? -2 : *wrong;
  };
  REQUIRE(rt.block_on(root, 400) == 0);  // no stale word in 400 rounds of 56 (-1: a task failed; -2: misplaced)
}

TEST_CASE("destroying the runtime with pinned tasks suspended destroys their frames", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    weft::event never;
    const std::uint32_t n = weft::worker_count();
    for (std::uint32_t i = 0; i < 32; ++i) weft::spawn_pinned(i % n, parked_forever(never)).detach();
    co_return co_await parked_forever(never);
  };
  auto h = rt.spawn(root);
  for (int i = 0; i < 200 && rt.live_tasks() < 33; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rt.live_tasks() >= 33);
  rt.shutdown();
  auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a task pinned to a warp whose tasks keep waking each other in place still runs", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE(int max_rounds) -> weft::task<int> {
    weft::event evs[2 * 4000];
    int flag[2] = {0, 0};
    const std::uint32_t n = weft::worker_count();
    const std::uint32_t a_home = 1 % n, b_home = n - 1;
    auto a = weft::spawn_pinned(a_home, ping_until(evs, max_rounds, 0, flag));
    auto b = weft::spawn_pinned(b_home, ping_until(evs, max_rounds, 1, flag));
    co_await weft::yield();
    // Pinned to a's warp: it runs only when that warp goes round its loop.
    co_await weft::spawn_pinned(a_home, weft_test::raise_flag(&flag[0]));
    const int x = co_await std::move(a);
    const int y = co_await std::move(b);
    co_return (x > 0 && y > 0) ? 1 : 0;
  };
  REQUIRE(rt.block_on(root, 4000) == 1);
}

TEST_CASE("shutdown destroys pinned tasks still queued for their workers", "[runtime][pinned]") {
  weft::runtime rt(pinned_config());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    const std::uint32_t n = weft::worker_count();
    for (std::uint32_t i = 0; i < 64; ++i) weft::spawn_pinned(i % n, yield_forever()).detach();
    for (;;) co_await weft::yield();
    co_return 0;
  };
  auto h = rt.spawn(root);
  for (int i = 0; i < 200 && rt.live_tasks() < 65; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rt.live_tasks() >= 65);
  rt.shutdown();
  REQUIRE(h.try_get().error() == weft::errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("outside a runtime there are no workers, and spawn_pinned reports no_runtime", "[runtime][pinned]") {
  REQUIRE(weft::worker_count() == 0);
  REQUIRE(weft::this_worker() == weft::no_worker);
  auto h = weft::spawn_pinned(0, add(1, 2));
  REQUIRE_FALSE(h.valid());
  REQUIRE(h.error() == weft::errc::no_runtime);
}
