// Shutdown with tasks parked on every sync primitive, the primitives driven from host
// threads (event::reset included), and the contract violations of mutex and semaphore
// (in a forked child): host backend only (host-only code in the tasks: counted
// instances), so this file is plain C++ in every build.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "support.hpp"

using weft_test::counted;

namespace {

constexpr std::uint64_t ms = 1'000'000;

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

// Host: shutdown and counted are host-side.
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

// Host: shutdown and a worker held by a task.
TEST_CASE("shutdown frees a when_any whose other runner never started", "[sync]") {
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  weft::runtime rt(weft_test::host_config(1));  // one worker: the runner that starts holds it
  auto h = rt.spawn([](std::atomic<int>* s, std::atomic<bool>* r) -> weft::task<int> {
    auto [index, value] = co_await weft::when_any(weft_test::hold_worker(s, r), weft_test::hold_worker(s, r));
    co_return static_cast<int>(index) + value;
  }, &started, &release);
  REQUIRE(weft_test::wait_for_value([&] { return started.load(); }, 1, std::chrono::seconds(10)) == 1);
  // Shutdown stops the worker after the held task; the other runner is destroyed unstarted.
  std::thread stopper([&] { rt.shutdown(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // shutdown is stopping the executor by now
  release.store(true);
  stopper.join();
  INFO("runners started: " << started.load());
  CHECK(rt.live_tasks() == 0);
  CHECK(rt.live_frame_blocks() == 0);  // the when_any state included
  (void)h;
}

namespace {
// Holds a mutex through a guard in its frame while `n` tasks wait on it, then waits for ever.
weft::task<void> guard_owner(int n) {
  counted c;
  weft::mutex m;
  weft::event never;
  auto g = co_await m.scoped_lock();
  for (int i = 0; i < n; ++i) weft::spawn(park_on_mutex(m)).detach();
  co_await never.wait();
}
}  // namespace

// Host: shutdown, counted; under ASan this found the step-5 use after free.
TEST_CASE("shutdown destroys a task holding a mutex guard and the tasks waiting on that mutex, in any order, "
          "touching no freed frame",
          "[sync]") {
  for (int round = 0; round < 10; ++round) {
    {
      weft::runtime rt(weft_test::host_config());
      rt.block_on([](int k) -> weft::task<int> {
        weft::spawn(guard_owner(k)).detach();
        co_return 0;
      }, 8);
      for (int i = 0; i < 5000 && rt.live_tasks() < 9; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      REQUIRE(rt.live_tasks() == 9);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the waiters park
      rt.shutdown();  // the guard's unlock, run while the owner is destroyed, wakes waiters destroyed or not
      CHECK(rt.live_tasks() == 0);
      CHECK(rt.live_frame_blocks() == 0);
    }
    REQUIRE(counted::live == 0);
  }
}

namespace {
// Copies throw when `boom` is set; moves never do (a channel's items must move nothrow).
struct throws_on_copy {
  int v = 0;
  bool boom = false;
  throws_on_copy() = default;
  throws_on_copy(int x, bool b) : v(x), boom(b) {}
  throws_on_copy(const throws_on_copy& o) : v(o.v), boom(o.boom) {
    if (boom) throw std::runtime_error("copy");
  }
  throws_on_copy(throws_on_copy&&) noexcept = default;
  throws_on_copy& operator=(const throws_on_copy&) = default;
};

weft::task<int> receive_value(weft::channel<throws_on_copy>& ch) {
  auto r = co_await ch.recv();
  co_return r ? r->v : -1;
}
}  // namespace

// Host: exceptions from an item's copy reach host code only.
TEST_CASE("a try_send whose copy of the item throws leaves the channel usable and its waiting receiver still waiting",
          "[sync]") {
  weft::channel<throws_on_copy> ch(2);
  weft::runtime rt(weft_test::host_config(1));
  auto h = rt.spawn([](weft::channel<throws_on_copy>* c) { return receive_value(*c); }, &ch);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the receiver parks on the empty channel
  const throws_on_copy bad(1, true);
  REQUIRE_THROWS_AS(ch.try_send(bad), std::runtime_error);
  CHECK(ch.size() == 0);  // the lock is free again: size() returns
  CHECK(!h.is_ready());   // the receiver was not taken off its list for the failed send
  const throws_on_copy good(7, false);
  REQUIRE(ch.try_send(good).has_value());
  CHECK(h.get() == 7);  // the waiting receiver got the next item
  REQUIRE(ch.try_send(throws_on_copy(8, true)).has_value());  // a moved item does not copy
  auto r = ch.try_recv();
  REQUIRE(r.has_value());
  CHECK(r->v == 8);
}

namespace {
weft::task<int> wait_then(weft::event& ev) {
  co_await ev.wait();
  co_return 1;
}
weft::task<int> acquire_then(weft::semaphore& s, std::atomic<int>* order, int me) {
  co_await s.acquire();
  order->store(order->load() * 10 + me);  // one worker: no two of these run at once
  co_return me;
}
weft::task<int> recv_code(weft::channel<int>& ch) {
  auto r = co_await ch.recv();
  co_return r ? 0 : static_cast<int>(r.error());
}
}  // namespace

// Host: set(), release() and close() called by host code outside any task.
TEST_CASE("set, release and close called from a host thread wake the tasks parked on an event, a semaphore and a "
          "channel",
          "[sync]") {
  weft::event ev;
  weft::semaphore s(0);
  weft::channel<int> ch(1);
  std::atomic<int> order{0};
  weft::runtime rt(weft_test::host_config(2));
  auto a = rt.spawn([](weft::event* e) { return wait_then(*e); }, &ev);
  auto b = rt.spawn([](weft::semaphore* p, std::atomic<int>* o) { return acquire_then(*p, o, 7); }, &s, &order);
  auto c = rt.spawn([](weft::channel<int>* q) { return recv_code(*q); }, &ch);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all three park
  CHECK(!a.is_ready());
  CHECK(!b.is_ready());
  CHECK(!c.is_ready());
  std::thread host([&] {
    ev.set();
    s.release();
    ch.close();
  });
  host.join();
  CHECK(a.get() == 1);
  CHECK(b.get() == 7);
  CHECK(c.get() == static_cast<int>(weft::errc::closed));
  CHECK(s.available() == 0);  // the permit went to the waiter, not back to the pool
}

// Host: one worker, so the waiters park in the order they were spawned.
TEST_CASE("a semaphore hands released permits to its waiters oldest first", "[sync]") {
  weft::semaphore s(0);
  std::atomic<int> order{0};
  weft::runtime rt(weft_test::host_config(1));
  std::vector<weft::host_handle<int>> hs;
  for (int i = 1; i <= 4; ++i) {
    hs.push_back(rt.spawn([](weft::semaphore* p, std::atomic<int>* o, int me) { return acquire_then(*p, o, me); }, &s,
                          &order, i));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // task i parks before i + 1 starts
  }
  s.release(2);
  CHECK(hs[0].get() == 1);
  CHECK(hs[1].get() == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(!hs[2].is_ready());  // the two oldest took the two permits
  CHECK(!hs[3].is_ready());
  s.release(2);
  CHECK(hs[2].get() == 3);
  CHECK(hs[3].get() == 4);
  const int o = order.load();  // the first two and the last two in either order within each pair
  CHECK((o == 1234 || o == 2134 || o == 1243 || o == 2143));
}

// Host: the event is set and reset by host code; the waiters are tasks on two workers.
TEST_CASE("event::reset clears a set event so that later waits park until the next set, and on an unset event "
          "leaves its waiters registered",
          "[sync]") {
  weft::event ev;
  weft::runtime rt(weft_test::host_config(2));
  ev.set();
  CHECK(ev.is_set());
  CHECK(rt.spawn([](weft::event* e) { return wait_then(*e); }, &ev).get() == 1);  // a set event: no wait
  ev.reset();
  CHECK_FALSE(ev.is_set());
  ev.reset();  // a second reset changes nothing
  CHECK_FALSE(ev.is_set());

  // Waiters that come after the reset park; a reset while they wait (the event unset)
  // must not drop them from its list: the next set wakes every one.
  std::vector<weft::host_handle<int>> hs;
  for (int i = 0; i < 3; ++i) hs.push_back(rt.spawn([](weft::event* e) { return wait_then(*e); }, &ev));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all three park
  for (auto& h : hs) CHECK(!h.is_ready());
  ev.reset();
  CHECK_FALSE(ev.is_set());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (auto& h : hs) CHECK(!h.is_ready());  // the reset woke nobody
  ev.set();
  for (auto& h : hs) {
    const bool woke = weft_test::wait_for_value([&] { return h.is_ready(); }, true, std::chrono::seconds(5));
    CHECK(woke);
    if (woke) CHECK(h.get() == 1);
  }
  CHECK(ev.is_set());  // set stays set until a reset
}

// Host: the contract violations stop the process (abort, after a line on stderr); each
// runs in a forked child, beside a child that uses the same object within the contract.
TEST_CASE("unlock of an unlocked mutex and a release past the semaphore's permit limit stop the process with a "
          "contract violation",
          "[sync][fork]") {
  const auto stopped_with = [](const std::pair<int, std::string>& r, const char* what) {
    INFO(r.second);
    CHECK(WIFSIGNALED(r.first));
    CHECK((WIFSIGNALED(r.first) && WTERMSIG(r.first) == SIGABRT));
    CHECK(r.second.find(std::string("weft: contract violation: ") + what) != std::string::npos);
  };
  const auto exited_cleanly = [](const std::pair<int, std::string>& r) {
    INFO(r.second);
    CHECK((WIFEXITED(r.first) && WEXITSTATUS(r.first) == 0));
  };
  const char* mutex_misuse = "mutex::unlock of a mutex that is not locked";
  const char* semaphore_misuse = "semaphore::release overflows the permit count";

  stopped_with(weft_test::run_in_child([] {
                 weft::mutex m;
                 m.unlock();  // never locked
               }),
               mutex_misuse);
  stopped_with(weft_test::run_in_child([] {
                 weft::mutex m;
                 if (m.try_lock()) m.unlock();
                 m.unlock();  // unlocked twice
               }),
               mutex_misuse);
  exited_cleanly(weft_test::run_in_child([] {
    weft::mutex m;
    if (m.try_lock()) m.unlock();
  }));

  stopped_with(weft_test::run_in_child([] {
                 weft::semaphore s(weft::semaphore::max_permits);
                 s.release();  // one past the limit
               }),
               semaphore_misuse);
  stopped_with(weft_test::run_in_child([] {
                 weft::semaphore s(5);
                 s.release(weft::semaphore::max_permits - 4);  // 5 + that overflows
               }),
               semaphore_misuse);
  exited_cleanly(weft_test::run_in_child([] {
    weft::semaphore s(5);
    s.release(weft::semaphore::max_permits - 5);  // exactly the limit
    if (s.available() != weft::semaphore::max_permits) ::_exit(3);
  }));
}
