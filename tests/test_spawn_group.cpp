// weft::spawn_group through the public API, written once for both backends (the
// runtime picks its backend from WEFT_BACKEND, as in test_runtime.cpp).
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "support.hpp"

using weft::errc;

namespace {

weft::config agnostic(std::size_t pool_bytes = 256u << 20) {
  weft::config c;  // kind = automatic: WEFT_BACKEND decides
  c.frame_pool_bytes = pool_bytes;
  if (std::getenv("WEFT_TEST_SMALL") != nullptr) c.workers = 64;  // compute-sanitizer runs
  return c;
}

WEFT_HOST_DEVICE weft::task<unsigned> square(unsigned k) { co_return k * k; }

WEFT_HOST_DEVICE weft::task<unsigned> yield_then_square(unsigned k, int yields) {
  for (int i = 0; i < yields; ++i) co_await weft::yield();
  co_return k * k;
}

// Fails with `e` one frame down, after a yield.
WEFT_HOST_DEVICE weft::task<unsigned> fail_with(errc e) {
  co_await weft::yield();
  co_return co_await weft::join_handle<unsigned>(e);
}

WEFT_HOST_DEVICE weft::task<unsigned> wait_then(weft::event& ev, unsigned v) {
  co_await ev.wait();
  co_return v;
}

WEFT_HOST_DEVICE weft::task<void> count_down(int& pending, weft::event& all_done) {
  co_await weft::yield();
  if (weft::detail::device_atomic<int>(pending).fetch_sub(1) == 1) all_done.set();
}

struct group_report {
  unsigned spawned, joined_failures, sum, in_order;
  int first_error;
};

// A tree of groups: each node splits [lo, hi) in two children of its own group until 16
// or fewer are left, which one group spawns as leaves that each square their index.
WEFT_HOST_DEVICE weft::task<unsigned> group_tree(unsigned lo, unsigned hi, int yields) {
  if (hi - lo <= 16) {
    weft::spawn_group<unsigned> g(16);
    for (unsigned i = lo; i < hi; ++i)
      if (!g.spawn([] WEFT_HOST_DEVICE(unsigned k, int y) { return yield_then_square(k, y); }, i, yields)) co_return 0;
    if (co_await g.join() != 0) co_return 0;
    unsigned sum = 0;
    for (unsigned i = 0; i < g.size(); ++i) sum += *g.outcome(i);
    co_return sum;
  }
  const unsigned mid = lo + (hi - lo) / 2;
  weft::spawn_group<unsigned> halves(2);
  auto node = [] WEFT_HOST_DEVICE(unsigned a, unsigned b, int y) { return group_tree(a, b, y); };
  if (!halves.spawn(node, lo, mid, yields) || !halves.spawn(node, mid, hi, yields)) co_return 0;
  if (co_await halves.join() != 0) co_return 0;
  co_return *halves.outcome(0) + *halves.outcome(1);
}

unsigned square_sum(unsigned n) {
  unsigned s = 0;
  for (unsigned i = 0; i < n; ++i) s += i * i;
  return s;
}

}  // namespace

TEST_CASE("a spawn group runs every child and its join gives each outcome in spawn order", "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE(unsigned n) -> weft::task<group_report> {
    weft::spawn_group<unsigned> g(n);
    group_report r{0, 0, 0, 1, 0};
    for (unsigned i = 0; i < n; ++i) {
      auto idx = i % 3 == 0 ? g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return square(k); }, i)
                            : g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return yield_then_square(k, 3); }, i);
      if (idx && *idx == i) ++r.spawned;
    }
    r.joined_failures = co_await g.join();
    for (unsigned i = 0; i < g.size(); ++i) {
      r.sum += *g.outcome(i);
      if (*g.outcome(i) != i * i) r.in_order = 0;
    }
    co_return r;
  };
  const group_report r = rt.block_on(root, 100u);
  REQUIRE(r.spawned == 100);
  REQUIRE(r.joined_failures == 0);
  REQUIRE(r.in_order == 1);
  REQUIRE(r.sum == square_sum(100));
}

TEST_CASE("a spawn group's join waits for children that park, and can be joined again after more spawns",
          "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<group_report> {
    weft::event go;
    weft::spawn_group<unsigned> g(40);
    group_report r{0, 0, 0, 1, 0};
    for (unsigned i = 0; i < 20; ++i)
      if (g.spawn([] WEFT_HOST_DEVICE(weft::event* ev, unsigned v) { return wait_then(*ev, v); }, &go, i)) ++r.spawned;
    co_await weft::yield();
    go.set();  // the children are (most likely) parked; the join parks until the last wakes
    r.joined_failures = co_await g.join();
    for (unsigned i = 20; i < 40; ++i)
      if (g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return yield_then_square(k, 2); }, i)) ++r.spawned;
    r.joined_failures += co_await g.join();
    for (unsigned i = 0; i < 20; ++i) r.in_order &= *g.outcome(i) == i ? 1u : 0u;
    for (unsigned i = 20; i < 40; ++i) r.sum += *g.outcome(i);
    co_return r;
  };
  const group_report r = rt.block_on(root);
  REQUIRE(r.spawned == 40);
  REQUIRE(r.joined_failures == 0);
  REQUIRE(r.in_order == 1);
  REQUIRE(r.sum == square_sum(40) - square_sum(20));
}

TEST_CASE("a spawn group reports a failed child's error as its outcome and counts it in the join, and the owner goes on",
          "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<group_report> {
    weft::spawn_group<unsigned> g(8);
    group_report r{0, 0, 0, 1, 0};
    for (unsigned i = 0; i < 8; ++i) {
      const bool ok = i % 2 ? g.spawn([] WEFT_HOST_DEVICE(errc e) { return fail_with(e); }, errc::invalid_argument).has_value()
                            : g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return square(k); }, i).has_value();
      r.spawned += ok ? 1 : 0;
    }
    r.joined_failures = co_await g.join();
    for (unsigned i = 0; i < 8; ++i) {
      const auto& o = g.outcome(i);
      if (i % 2) {
        if (o.has_value()) r.in_order = 0;
        else if (r.first_error == 0) r.first_error = static_cast<int>(o.error());
      } else if (!o.has_value() || *o != i * i) {
        r.in_order = 0;
      }
    }
    co_return r;
  };
  const group_report r = rt.block_on(root);
  REQUIRE(r.spawned == 8);
  REQUIRE(r.joined_failures == 4);
  REQUIRE(r.in_order == 1);
  REQUIRE(r.first_error == static_cast<int>(errc::invalid_argument));
}

TEST_CASE("a spawn group refuses spawns past its capacity with queue_full, and a capacity of 0 with invalid_argument",
          "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<group_report> {
    group_report r{0, 0, 0, 1, 0};
    weft::spawn_group<unsigned> g(3);
    for (unsigned i = 0; i < 5; ++i) {
      auto idx = g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return square(k); }, i);
      if (idx) ++r.spawned;
      else if (idx.error() != errc::queue_full) r.in_order = 0;
    }
    r.joined_failures = co_await g.join();
    r.sum = *g.outcome(0) + *g.outcome(1) + *g.outcome(2);
    weft::spawn_group<unsigned> none(0);
    auto refused = none.spawn([] WEFT_HOST_DEVICE(unsigned k) { return square(k); }, 1u);
    r.first_error = refused ? 0 : static_cast<int>(refused.error());
    if (none.valid() || none.error() != errc::invalid_argument) r.in_order = 0;
    r.joined_failures += co_await none.join();  // nothing to wait for
    co_return r;
  };
  const group_report r = rt.block_on(root);
  REQUIRE(r.spawned == 3);
  REQUIRE(r.joined_failures == 0);
  REQUIRE(r.sum == 0 + 1 + 4);
  REQUIRE(r.in_order == 1);
  REQUIRE(r.first_error == static_cast<int>(errc::invalid_argument));
}

TEST_CASE("spawn groups on an exhausted frame pool report out_of_memory, at the spawn or as the child's outcome, and "
          "the rest complete",
          "[runtime][group][stress]") {
  weft::runtime rt(agnostic(1u << 20));  // 1 MiB of frames
  struct storm {
    unsigned accepted, refused_oom, values, out_of_memory, other;
  };
  // Every child waits for `go`, so the frames stay taken while more groups spawn.
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<storm> {
    constexpr unsigned groups = 320, per = 64;
    weft::event go;
    storm s{0, 0, 0, 0, 0};
    weft::spawn_group<unsigned> gs[groups];
    for (unsigned k = 0; k < groups; ++k) {
      gs[k] = weft::spawn_group<unsigned>(per);
      for (unsigned i = 0; i < per; ++i) {
        auto idx = gs[k].spawn([] WEFT_HOST_DEVICE(weft::event* ev, unsigned v) { return wait_then(*ev, v); }, &go, i);
        if (idx) ++s.accepted;
        else if (idx.error() == errc::out_of_memory) ++s.refused_oom;  // the group's own block
        else ++s.other;
      }
    }
    co_await weft::yield();
    go.set();
    for (unsigned k = 0; k < groups; ++k) {
      co_await gs[k].join();
      for (unsigned i = 0; i < gs[k].size(); ++i) {
        const auto& o = gs[k].outcome(i);
        if (o.has_value()) s.values += *o == i ? 1 : 0;
        else if (o.error() == errc::out_of_memory) ++s.out_of_memory;
        else ++s.other;
      }
    }
    co_return s;
  };
  const storm s = rt.block_on(root);
  REQUIRE(s.accepted + s.refused_oom == 320 * 64);
  REQUIRE(s.other == 0);
  REQUIRE(s.refused_oom + s.out_of_memory > 0);       // the pool ran out
  REQUIRE(s.values + s.out_of_memory == s.accepted);  // every accepted child has its outcome
  REQUIRE(s.values > 0);
}

TEST_CASE("a dropped spawn group's children run to completion, and the last one frees the group", "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<int> {
    weft::event all_done;
    int pending = n;
    {
      weft::spawn_group<void> g(static_cast<std::uint32_t>(n));
      for (int i = 0; i < n; ++i)
        if (!g.spawn([] WEFT_HOST_DEVICE(int* p, weft::event* ev) { return count_down(*p, *ev); }, &pending, &all_done))
          weft::detail::device_atomic<int>(pending).fetch_sub(1);
    }  // dropped before its children finish (they yield first)
    co_await all_done.wait();
    co_return weft::detail::device_atomic<int>(pending).load();
  };
  REQUIRE(rt.block_on(root, 64) == 0);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a tree of spawn groups runs every child once with the right sum", "[runtime][group][stress]") {
  weft::runtime rt(agnostic());
  const unsigned n = 100000;
  auto root = [] WEFT_HOST_DEVICE(unsigned n, int y) { return group_tree(0, n, y); };
  REQUIRE(rt.block_on(root, n, 0) == square_sum(n));
  REQUIRE(rt.block_on(root, n / 4, 2) == square_sum(n / 4));
}

TEST_CASE("destroying the runtime with spawn group children parked, and an owner parked in join, destroys every frame "
          "and group block, without a hang",
          "[runtime][group]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<int> {
    weft::event never;
    weft::spawn_group<unsigned> dropped(16);  // dropped with its children parked: moved into a
    for (unsigned i = 0; i < 16; ++i)         // scope that ends before the join below
      (void)dropped.spawn([] WEFT_HOST_DEVICE(weft::event* ev, unsigned v) { return wait_then(*ev, v); }, &never, i);
    { weft::spawn_group<unsigned> gone(std::move(dropped)); }
    weft::spawn_group<unsigned> g(static_cast<std::uint32_t>(n));
    for (int i = 0; i < n; ++i)
      (void)g.spawn([] WEFT_HOST_DEVICE(weft::event* ev, unsigned v) { return wait_then(*ev, v); }, &never,
                    static_cast<unsigned>(i));
    co_return static_cast<int>(co_await g.join());  // never: the children wait for ever
  };
  auto h = rt.spawn(root, 64);
  for (int i = 0; i < 400 && rt.live_tasks() < 81; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rt.live_tasks() >= 81);
  REQUIRE_FALSE(h.is_ready());
  rt.shutdown();
  auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}
