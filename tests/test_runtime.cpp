// The runtime through the public API, written once for both backends.
//
// These tests pick their backend from WEFT_BACKEND (ctest sets host; scripts/gpu-check
// runs the same binary with cuda on a GPU machine). Everything inside a task is
// WEFT_HOST_DEVICE and reports its findings through the root's return value.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gpu_facts.hpp"
#include "shared_array.hpp"
#include "support.hpp"

namespace {

weft::config agnostic(std::size_t pool_bytes = 256u << 20) {
  weft::config c;  // kind = automatic: WEFT_BACKEND decides
  c.frame_pool_bytes = pool_bytes;
  if (std::getenv("WEFT_TEST_SMALL") != nullptr) c.workers = 64;  // compute-sanitizer runs
  return c;
}

// Full sizes on the GPU; host sizes on the host backend and under compute-sanitizer
// (scripts/gpu-check sets WEFT_TEST_SMALL).
bool on_gpu(weft::runtime& rt) {
  return std::string(rt.backend_name()) == "cuda" && std::getenv("WEFT_TEST_SMALL") == nullptr;
}

WEFT_HOST_DEVICE weft::task<int> add(int a, int b) { co_return a + b; }

WEFT_HOST_DEVICE weft::task<int> chain(int depth) {
  if (depth == 0) co_return 0;
  co_return 1 + co_await chain(depth - 1);
}

// A small integer hash: the same on both backends, so the host can check results.
WEFT_HOST_DEVICE inline unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Divergent work: a data-dependent number of steps, branches and yields.
WEFT_HOST_DEVICE unsigned divergent_reference(unsigned seed) {
  unsigned acc = seed, steps = 1 + mix(seed) % 37;
  for (unsigned i = 0; i < steps; ++i) acc = (mix(acc + i) & 1) ? acc * 3 + i : (acc >> 1) ^ i;
  return acc;
}
WEFT_HOST_DEVICE weft::task<unsigned> divergent_task(unsigned seed) {
  unsigned acc = seed, steps = 1 + mix(seed) % 37;
  for (unsigned i = 0; i < steps; ++i) {
    if (mix(acc + i) & 1) {
      acc = acc * 3 + i;
      co_await weft::yield();
    } else {
      acc = (acc >> 1) ^ i;
      if (i % 3 == 0) acc += co_await add(0, 0);
    }
  }
  co_return acc;
}

WEFT_HOST_DEVICE weft::task<unsigned> yielder(unsigned id, int yields) {
  unsigned acc = id;
  for (int i = 0; i < yields; ++i) {
    acc = acc * 31 + static_cast<unsigned>(i);
    co_await weft::yield();
  }
  co_return acc;
}
WEFT_HOST_DEVICE unsigned yielder_reference(unsigned id, int yields) {
  unsigned acc = id;
  for (int i = 0; i < yields; ++i) acc = acc * 31 + static_cast<unsigned>(i);
  return acc;
}

// Spawns tasks [lo, hi) as a tree (so spawning itself runs in parallel) and sums them.
WEFT_HOST_DEVICE weft::task<unsigned> spawn_tree(unsigned lo, unsigned hi, int yields) {
  if (hi - lo <= 16) {
    weft::join_handle<unsigned> hs[16];
    for (unsigned i = lo; i < hi; ++i) hs[i - lo] = weft::spawn(yielder(i, yields));
    unsigned sum = 0;
    for (unsigned i = lo; i < hi; ++i) sum += co_await std::move(hs[i - lo]);
    co_return sum;
  }
  const unsigned mid = lo + (hi - lo) / 2;
  auto left = weft::spawn(spawn_tree(lo, mid, yields));
  unsigned right = co_await spawn_tree(mid, hi, yields);
  co_return right + co_await std::move(left);
}

WEFT_HOST_DEVICE weft::task<void> wait_and_bump(weft::event& ev, int& out) {
  co_await ev.wait();
  out += 1;
}

// Waits for `go`, marks itself done, and sets `all_done` when it is the last one.
WEFT_HOST_DEVICE weft::task<void> bump_then_count_down(weft::event& go, int& out, int& pending, weft::event& all_done) {
  co_await go.wait();
  out += 1;
  if (weft::detail::device_atomic<int>(pending).fetch_sub(1) == 1) all_done.set();
}

// Spawns `k` tasks of wait_then_count_down's size that finish at once, and waits for them.
WEFT_HOST_DEVICE weft::task<void> spawn_short_tasks(weft::event& go, int& pending, weft::event& all_done, int k) {
  co_await go.wait();
  weft::event now(true), mine_done;
  int mine = 1;
  for (int i = 0; i < k; ++i) {
    weft::detail::device_atomic<int>(mine).fetch_add(1);
    if (!weft::spawn(weft_test::wait_then_count_down(now, mine, mine_done))) weft::detail::device_atomic<int>(mine).fetch_sub(1);
  }
  if (weft::detail::device_atomic<int>(mine).fetch_sub(1) != 1) co_await mine_done.wait();
  if (weft::detail::device_atomic<int>(pending).fetch_sub(1) == 1) all_done.set();
}

// Two tasks hand a token back and forth `rounds` times through a pair of events.
WEFT_HOST_DEVICE weft::task<int> pinger(weft::event* evs, int rounds, int side) {
  int seen = 0;
  for (int r = 0; r < rounds; ++r) {
    weft::event& mine = evs[2 * r + side];
    weft::event& theirs = evs[2 * r + 1 - side];
    if (side == 0) {
      theirs.set();
      co_await mine.wait();
    } else {
      co_await mine.wait();
      theirs.set();
    }
    ++seen;
  }
  co_return seen;
}

// A chain `depth` frames deep whose innermost frame waits on ev.
WEFT_HOST_DEVICE weft::task<int> parked_at_depth(weft::event& ev, int depth) {
  if (depth == 0) {
    co_await ev.wait();
    co_return 0;
  }
  co_return 1 + co_await parked_at_depth(ev, depth - 1);
}

// Fails with `e` three frames down: the error unwinds to the nearest try_await.
WEFT_HOST_DEVICE weft::task<int> fail_here(weft::errc e) { co_return co_await weft::join_handle<int>(e); }
WEFT_HOST_DEVICE weft::task<int> fail_below(weft::errc e, int depth) {
  if (depth == 0) co_return co_await fail_here(e);
  co_return 1 + co_await fail_below(e, depth - 1);
}


// By-value owners (docs/design.md, "By-value owners and clang's NVPTX ABI"): each is
// moved into a callee by value, several at once on different lanes. Before the fix,
// the device pass destroyed the caller's copy too, and two lanes resumed one frame.
WEFT_HOST_DEVICE weft::task<int> one() { co_return 1; }
WEFT_HOST_DEVICE weft::task<int> await_param(weft::task<int> t) { co_return co_await t; }
WEFT_HOST_DEVICE weft::task<int> join_param(weft::join_handle<int> h) { co_return co_await std::move(h); }
WEFT_HOST_DEVICE int unlock_on_return(weft::mutex_guard g) { return g.owns_lock() ? 1 : -1000; }
WEFT_HOST_DEVICE weft::task<int> by_value_owners_root(int rounds) {
  weft::mutex m;
  int sum = 0;
  for (int k = 0; k < rounds; ++k) {
    weft::join_handle<int> hs[4];
    hs[0] = weft::spawn(await_param(one()));
    hs[1] = weft::spawn(await_param(one()));
    hs[2] = weft::spawn(join_param(weft::spawn(one())));
    hs[3] = weft::spawn(join_param(weft::spawn(await_param(one()))));
    for (auto& h : hs) sum += co_await std::move(h);
    sum += unlock_on_return(co_await m.scoped_lock());  // a second unlock would trap
    if (!m.try_lock()) co_return -1;                      // a lost unlock: still locked
    m.unlock();
  }
  co_return sum;
}

// A handle put in a box for a task to take into its own frame: the task then names
// itself, or (two of them) each names the other. Neither ever finishes.
struct handle_box {
  weft::join_handle<int> h;
  weft::event filled, taken;
};
WEFT_HOST_DEVICE weft::task<int> take_handle_and_park(handle_box& box) {
  co_await box.filled.wait();
  weft::join_handle<int> kept = std::move(box.h);
  weft::event never;
  box.taken.set();  // the last touch of box: its owner may go on and free it
  co_await never.wait();
  co_return kept.valid() ? 1 : 0;
}
WEFT_HOST_DEVICE weft::task<int> handle_cycles_root() {
  handle_box self, a, b;
  weft::join_handle<int> hs = weft::spawn(take_handle_and_park(self));
  weft::join_handle<int> ha = weft::spawn(take_handle_and_park(a));
  weft::join_handle<int> hb = weft::spawn(take_handle_and_park(b));
  self.h = std::move(hs);  // names itself
  a.h = std::move(hb);     // a and b name each other
  b.h = std::move(ha);
  for (handle_box* x : {&self, &a, &b}) x->filled.set();
  for (handle_box* x : {&self, &a, &b}) co_await x->taken.wait();
  co_return 3;
}

// Joins n children with co_await std::move(h): odd children have finished when joined
// (the joiner yields first), even ones are usually still queued (the joiner parks).
WEFT_HOST_DEVICE weft::task<int> value_of(int v) { co_return v; }
WEFT_HOST_DEVICE weft::task<int> moved_joins(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    weft::join_handle<int> h = weft::spawn(value_of(i));
    if (i % 2) co_await weft::yield();
    sum += co_await std::move(h);
  }
  co_return sum;
}

// Counts the destruction of the frame it is a parameter of: a coroutine's parameters live
// in its frame until the frame is destroyed. (trivial_abi in the device pass, as weft's own
// owners: docs/design.md, "By-value owners and clang's NVPTX ABI".)
struct WEFT_DEVICE_OWNER_ABI frame_drop_counter {
  int* freed;
  WEFT_HOST_DEVICE explicit frame_drop_counter(int* f) noexcept : freed(f) {}
  WEFT_HOST_DEVICE frame_drop_counter(frame_drop_counter&& o) noexcept : freed(o.freed) { o.freed = nullptr; }
  frame_drop_counter(const frame_drop_counter&) = delete;
  frame_drop_counter& operator=(const frame_drop_counter&) = delete;
  WEFT_HOST_DEVICE ~frame_drop_counter() {
    if (freed != nullptr) weft_test::atomic_add(*freed, 1);
  }
};
WEFT_HOST_DEVICE weft::task<int> value_with_counted_frame(int v, frame_drop_counter counter) {
  (void)counter;
  co_return v;
}

// After each join the handle says finished and still holds the frame, which goes exactly
// when the handle (or the handle it was moved to) is dropped (spawn.hpp:
// join_awaiter::await_resume): joined at once (the joiner parks unless the task already
// finished), joined after it finished, moved after its join. Then a try_await of a failed
// task. Returns the sum of the values, or a negative number naming the first check that
// failed.
WEFT_HOST_DEVICE weft::task<int> joined_handles_free_their_frames(int n, int* freed) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    const int before = weft_test::atomic_load(*freed);
    {
      weft::join_handle<int> h = weft::spawn(value_with_counted_frame(i, frame_drop_counter(freed)));
      if (i % 2) {  // wait until it finished: the join then takes await_ready's path
        for (int spins = 0; !h.is_finished() && spins < 100000; ++spins) co_await weft::yield();
        if (!h.is_finished()) co_return -1;
      }
      sum += co_await h;  // an lvalue: h stays here, holding the frame
      if (!h.is_finished()) co_return -2;
      if (weft_test::atomic_load(*freed) != before) co_return -3;  // not freed by the join
      if (i % 3 == 0) {
        weft::join_handle<int> moved = std::move(h);  // the frame goes with it
        if (!moved.is_finished() || h.valid()) co_return -4;
      }
      if (i % 3 == 0 && weft_test::atomic_load(*freed) != before + 1) co_return -5;  // freed with `moved`
    }
    if (weft_test::atomic_load(*freed) != before + 1) co_return -6;  // freed once, when its handle went
  }
  weft::join_handle<int> bad = weft::spawn(fail_below(weft::errc::invalid_argument, 2));
  weft::result<int> r = co_await weft::try_await(bad);
  if (r.has_value() || r.error() != weft::errc::invalid_argument || !bad.is_finished()) co_return -7;
  co_return sum;
}

}  // namespace

TEST_CASE("a joined handle reports its task finished and frees the frame exactly when it is dropped",
          "[runtime]") {
  weft::runtime rt(agnostic());
  const int n = 200;
  weft_test::shared_array<int> freed(1);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int k, int* f) { return joined_handles_free_their_frames(k, f); }, n,
                      freed.data()) == n * (n - 1) / 2);
  REQUIRE(freed[0] == n);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a failure deep in a chain unwinds to try_await, and an uncaught one fails the root", "[runtime]") {
  weft::runtime rt(agnostic());
  auto caught = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    weft::result<int> r = co_await weft::try_await(fail_below(weft::errc::invalid_argument, 3));
    co_return r.has_value() ? -1 : static_cast<int>(r.error());
  };
  REQUIRE(rt.block_on(caught) == static_cast<int>(weft::errc::invalid_argument));
  auto uncaught = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return co_await fail_below(weft::errc::queue_full, 2); };
  auto r = rt.try_block_on(uncaught);
  REQUIRE(r.error() == weft::errc::queue_full);
  REQUIRE(rt.block_on(caught) == static_cast<int>(weft::errc::invalid_argument));  // the runtime goes on
}

TEST_CASE("block_on runs the README example on the selected backend", "[runtime]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<int> {
    int x = co_await add(1, 2);
    weft::join_handle<int> h = weft::spawn(add(3, n));
    co_await weft::yield();
    int y = co_await std::move(h);
    co_return x + y;
  };
  REQUIRE(rt.block_on(root, 39) == 45);
  const char* env = std::getenv("WEFT_BACKEND");
  if (env != nullptr) REQUIRE(std::string(rt.backend_name()) == env);
}

TEST_CASE("tasks spawned as a tree all run, yield and join with the right values", "[runtime][stress]") {
  weft::runtime rt(agnostic(1u << 30));
  const unsigned n = on_gpu(rt) ? 1000000u : 20000u;
  const int yields = 8;
  const unsigned got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n, int y) { return spawn_tree(0, n, y); }, n, yields);
  unsigned want = 0;
  for (unsigned i = 0; i < n; ++i) want += yielder_reference(i, yields);
  REQUIRE(got == want);
}

TEST_CASE("random divergence inside tasks gives the host reference's answers", "[runtime][stress]") {
  weft::runtime rt(agnostic());
  const unsigned n = on_gpu(rt) ? 100000u : 5000u;
  auto root = [] WEFT_HOST_DEVICE(unsigned n) -> weft::task<unsigned> {
    unsigned wrong = 0;
    for (unsigned base = 0; base < n; base += 256) {
      weft::join_handle<unsigned> hs[256];
      const unsigned k = n - base < 256 ? n - base : 256;
      for (unsigned i = 0; i < k; ++i) hs[i] = weft::spawn(divergent_task(base + i));
      for (unsigned i = 0; i < k; ++i) wrong += (co_await std::move(hs[i])) != divergent_reference(base + i);
    }
    co_return wrong;
  };
  REQUIRE(rt.block_on(root, n) == 0u);
}

TEST_CASE("deep await chains complete in many concurrent tasks", "[runtime][stress]") {
  weft::runtime rt(agnostic(1u << 30));
  const int depth = 10000, tasks = on_gpu(rt) ? 64 : 8;
  auto root = [] WEFT_HOST_DEVICE(int depth, int tasks) -> weft::task<long long> {
    weft::join_handle<int> hs[256];
    for (int i = 0; i < tasks; ++i) hs[i] = weft::spawn(chain(depth + i));
    long long sum = 0;
    for (int i = 0; i < tasks; ++i) sum += co_await std::move(hs[i]);
    co_return sum;
  };
  long long want = 0;
  for (int i = 0; i < tasks; ++i) want += depth + i;
  REQUIRE(rt.block_on(root, depth, tasks) == want);
}

TEST_CASE("every task blocks on an event and is woken exactly once", "[runtime][stress]") {
  weft::runtime rt(agnostic());
  const int waiters = on_gpu(rt) ? 4096 : 256;
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<int> {
    weft::event ev;
    int bumps[4096] = {};
    weft::join_handle<void> hs[4096];
    for (int i = 0; i < n; ++i) hs[i] = weft::spawn(wait_and_bump(ev, bumps[i]));
    co_await weft::yield();
    ev.set();
    for (int i = 0; i < n; ++i) co_await std::move(hs[i]);
    int total = 0;
    for (int i = 0; i < n; ++i) total += bumps[i] == 1;
    co_return total;
  };
  REQUIRE(rt.block_on(root, waiters) == waiters);
}

TEST_CASE("two tasks hand a token back and forth through events", "[runtime]") {
  weft::runtime rt(agnostic());
  const int rounds = 2000;
  auto root = [] WEFT_HOST_DEVICE(int rounds) -> weft::task<int> {
    weft::event evs[2 * 2000];
    auto a = weft::spawn(pinger(evs, rounds, 0));
    auto b = weft::spawn(pinger(evs, rounds, 1));
    const int x = co_await std::move(a);
    const int y = co_await std::move(b);
    co_return x + y;
  };
  REQUIRE(rt.block_on(root, rounds) == 2 * rounds);
}

TEST_CASE("the host keeps submitting roots while the runtime runs", "[runtime]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE(int i) -> weft::task<int> {
    co_await weft::yield();
    co_return co_await add(i, i);
  };
  std::vector<weft::host_handle<int>> hs;
  for (int i = 0; i < 200; ++i) hs.push_back(rt.spawn(root, i));
  long long sum = 0;
  for (auto& h : hs) sum += h.get();
  REQUIRE(sum == 2LL * (199 * 200 / 2));
  auto again = rt.spawn(root, 5);
  REQUIRE(again.get() == 10);
  REQUIRE(again.try_get().error() == weft::errc::already_taken);
}

TEST_CASE("a spawn storm on a tiny frame pool gives out_of_memory to the spawner, and the rest completes",
          "[runtime][stress]") {
  weft::runtime rt(agnostic(1u << 20));  // 1 MiB of frames: a few thousand tasks
  struct outcome {
    int started, refused, other, finished;
  };
  auto root = [] WEFT_HOST_DEVICE(int n) -> weft::task<outcome> {
    weft::event go, all_done;
    int done[20000] = {};
    int pending = 1;  // the root's own count, dropped after the loop
    outcome o{0, 0, 0, 0};
    for (int i = 0; i < n; ++i) {
      weft::detail::device_atomic<int>(pending).fetch_add(1);
      weft::join_handle<void> h = weft::spawn(bump_then_count_down(go, done[i], pending, all_done));
      if (h) ++o.started;
      else {
        weft::detail::device_atomic<int>(pending).fetch_sub(1);
        if (h.error() == weft::errc::out_of_memory) ++o.refused;
        else ++o.other;
      }
      // dropping h detaches the task; it waits for `go`
    }
    go.set();
    if (weft::detail::device_atomic<int>(pending).fetch_sub(1) != 1) co_await all_done.wait();
    for (int i = 0; i < n; ++i) o.finished += done[i];
    co_return o;
  };
  const outcome o = rt.block_on(root, 20000);
  REQUIRE(o.refused > 0);
  REQUIRE(o.other == 0);
  REQUIRE(o.started + o.refused == 20000);
  REQUIRE(o.finished == o.started);
}

// On the cuda backend a freed frame stays in the cache of the lane that freed it (up to
// 64 per size class); without the reclaim (device_frames.hpp) the second count would
// lack every block that the first count's tasks and the churn left in other lanes'
// caches. A carved block keeps its size class and the first count carves all that is
// left, so every frame the test needs afterwards is carved before it: the root does it
// all in its own frame (no child frame), and the first churn keeps twice as many
// spawners alive at once as the second. The sleeps outlast reclaim_quiet_ns, during
// which a dry class fails at once. Rounds: churn and count; sleep and churn; sleep and
// count.
TEST_CASE("frames cached by the lanes that freed them come back before a spawn is refused for want of memory",
          "[runtime][stress]") {
  weft::runtime rt(agnostic(4u << 20));  // 4 MiB of frames: some tens of thousands of small tasks
  struct counts {
    int count[2];
    bool churned;       // every spawn of the first churn started (the pool still had room)
    int second_failed;  // spawns the second churn could not start (may be some on the host)
  };
  auto root = [] WEFT_HOST_DEVICE(int limit, int leaves) -> weft::task<counts> {
    counts c{{0, 0}, true, 0};
    for (int round = 0; round < 3; ++round) {
      if (round != 0) co_await weft::sleep_for(2'000'000);
      // A churn: `tasks` short-lived spawners, all alive before any runs (so that many of
      // their frames at once), each spawning 16 tasks that finish at once: frames freed
      // by lanes all over the workers. Round 0's is twice round 1's.
      const int tasks = round == 0 ? 2 * leaves : leaves;
      if (round < 2) {
        weft::event go, all_done;
        int pending = 1;
        for (int i = 0; i < tasks; ++i) {
          weft::detail::device_atomic<int>(pending).fetch_add(1);
          if (!weft::spawn(spawn_short_tasks(go, pending, all_done, 16))) {
            weft::detail::device_atomic<int>(pending).fetch_sub(1);
            if (round == 0) c.churned = false;
            else ++c.second_failed;
          }
        }
        go.set();
        if (weft::detail::device_atomic<int>(pending).fetch_sub(1) != 1) co_await all_done.wait();
      }
      if (round == 1) continue;
      weft::event go, all_done;
      int pending = 1;  // ours, dropped after the loop
      int started = 0;
      weft::errc refused{};
      for (; started < limit; ++started) {
        weft::detail::device_atomic<int>(pending).fetch_add(1);
        weft::join_handle<void> h = weft::spawn(weft_test::wait_then_count_down(go, pending, all_done));
        if (!h) {
          weft::detail::device_atomic<int>(pending).fetch_sub(1);
          refused = h.error();
          break;
        }
      }
      go.set();
      if (weft::detail::device_atomic<int>(pending).fetch_sub(1) != 1) co_await all_done.wait();
      c.count[round / 2] = refused == weft::errc::out_of_memory ? started : -1;
    }
    co_return c;
  };
  const counts c = rt.block_on(root, 1 << 20, 256);
  INFO("first count: " << c.count[0] << ", second count: " << c.count[1] << ", second churn's failed spawns: "
                        << c.second_failed);
  REQUIRE(c.churned);
  REQUIRE(c.count[0] > 1000);
  // The spawner's own warp keeps its caches (at most 31 * 64 blocks of the class); a
  // tenth of the first count more for the rest (host worker caches, the churn's timing).
  REQUIRE(c.count[1] >= c.count[0] - 31 * 64 - c.count[0] / 10);
}

// [cross_tu]: scripts/gpu-check runs it apart with a time limit (see the note there).
TEST_CASE("a cuda runtime refuses device code from a second translation unit, and goes on", "[runtime][cross_tu]") {
  weft::runtime rt(agnostic());
  auto one = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 1; };
  REQUIRE(rt.block_on(one) == 1);  // the cuda backend binds to this translation unit's kernels
  const int other = weft_test::block_on_from_another_translation_unit(rt);
  if (std::string(rt.backend_name()) == "cuda") REQUIRE(other == -static_cast<int>(weft::errc::invalid_argument));
  else REQUIRE(other == 7);  // the host backend has no per-module code
  REQUIRE(rt.block_on(one) == 1);
  rt.shutdown();  // then every translation unit hears why: shutting_down, as for this one
  REQUIRE(weft_test::block_on_from_another_translation_unit(rt) == -static_cast<int>(weft::errc::shutting_down));
  REQUIRE(rt.try_block_on(one).error() == weft::errc::shutting_down);
}

// [apart]: scripts/gpu-check runs it in a process of its own, with a time limit (two
// runtimes on one GPU). Keep it out of the main suite: without the binding, the second
// runtime's start would wait in cudaDeviceSynchronize behind the first one's kernel.
TEST_CASE("a second runtime is refused device code that a live runtime runs, and gets it once that one shut down",
          "[runtime][apart]") {
  auto one = [] WEFT_HOST_DEVICE(int v) -> weft::task<int> { co_return v; };
  // Both made before any kernel runs: creating a runtime allocates pinned memory, which
  // may wait for a running kernel (docs/design.md, pitfalls).
  weft::runtime first(agnostic());
  weft::runtime second(agnostic());
  REQUIRE(first.block_on(one, 1) == 1);  // binds this translation unit's kernels (cuda)
  auto refused = second.try_block_on(one, 2);
  if (std::string(first.backend_name()) == "cuda") {
    // One executor per module and device: the second would overwrite the first's.
    REQUIRE_FALSE(refused.has_value());
    REQUIRE(refused.error() == weft::errc::invalid_argument);
  } else {
    REQUIRE(refused.value() == 2);  // the host backend has no per-module state
  }
  REQUIRE(first.block_on(one, 3) == 3);  // the first runs on, untouched
  first.shutdown();
  REQUIRE(second.block_on(one, 4) == 4);  // and the code is free for the second
  REQUIRE(first.try_block_on(one, 5).error() == weft::errc::shutting_down);
  // Another translation unit asking the stopped runtime while the second's kernel runs: told
  // at once, before its module is touched (a lazy load could wait behind that kernel).
  REQUIRE(weft_test::block_on_from_another_translation_unit(first) == -static_cast<int>(weft::errc::shutting_down));
}

// [apart], as above: two runtimes on one GPU, here running different translation units'
// code. One runtime at a time runs a kernel on a device: the second one's start would wait
// (its memory set-up synchronizes the device, and its module's lazy load may wait) for the
// first kernel to end, so it is refused at once instead (found by review, thirty-seventh
// session; before, this test's second block_on hung until the first runtime shut down).
TEST_CASE("a second runtime on the same GPU is refused another translation unit's code while the first runs, and "
          "gets it once that one shut down",
          "[runtime][apart]") {
  auto one = [] WEFT_HOST_DEVICE(int v) -> weft::task<int> { co_return v; };
  weft::runtime first(agnostic());
  weft::runtime second(agnostic());
  REQUIRE(first.block_on(one, 1) == 1);  // this translation unit's kernel runs on the GPU (cuda)
  const int refused = weft_test::block_on_from_another_translation_unit(second);
  if (std::string(first.backend_name()) == "cuda") REQUIRE(refused == -static_cast<int>(weft::errc::invalid_argument));
  else REQUIRE(refused == 7);
  REQUIRE(first.block_on(one, 3) == 3);  // the first runs on, untouched
  first.shutdown();
  REQUIRE(weft_test::block_on_from_another_translation_unit(second) == 7);  // the GPU is free for the second
  const auto mine = second.try_block_on(one, 4);  // the second now runs the other unit's code
  if (std::string(second.backend_name()) == "cuda") REQUIRE(mine.error() == weft::errc::invalid_argument);
  else REQUIRE(mine.value() == 4);
}

// [api_error]: its cudaMalloc fails on purpose, which compute-sanitizer reports as an API
// error; scripts/gpu-check runs it under memcheck apart, with API errors not reported.
TEST_CASE("a cuda runtime whose kernel cannot start reports out_of_memory at each submission, and no workers",
          "[runtime][api_error]") {
  const char* backend = std::getenv("WEFT_BACKEND");
  if (backend == nullptr || std::string(backend) != "cuda") {
    SUCCEED("the host backend allocates its pool when the runtime is made (a throw, tested in [executor])");
    return;
  }
  // More than the GPU's memory, under the 256 GiB limit: allocated at the first submission.
  const std::size_t pool = std::size_t{200} << 30;
#if WEFT_CUDA_COMPILE
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess || total_bytes >= pool) {
    cudaGetLastError();
    SUCCEED("this GPU could hold the pool: nothing to refuse");
    return;
  }
#endif
  weft::runtime rt(agnostic(pool));
  auto one = [] WEFT_HOST_DEVICE(int v) -> weft::task<int> { co_return v; };
  for (int attempt = 0; attempt < 2; ++attempt) {  // each submission tries to start it again
    auto r = rt.try_block_on(one, attempt);
    REQUIRE_FALSE(r.has_value());
    REQUIRE(r.error() == weft::errc::out_of_memory);
    REQUIRE(rt.workers() == 0);  // no kernel runs: no worker may be named (spawn_pinned)
    auto pinned = rt.spawn_pinned(0, one, attempt);
    REQUIRE(pinned.try_get().error() == weft::errc::out_of_memory);
  }
  rt.shutdown();
  REQUIRE(rt.try_block_on(one, 3).error() == weft::errc::shutting_down);
  weft::runtime next(agnostic());  // nothing of the failed start stays bound or allocated
  REQUIRE(next.block_on(one, 4) == 4);
  REQUIRE(next.workers() > 0);
}

TEST_CASE("block_on on a runtime that is shutting down reports shutting_down", "[runtime]") {
  weft::runtime rt(agnostic());
  auto root = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 1; };
  REQUIRE(rt.block_on(root) == 1);
  rt.shutdown();
  auto r = rt.try_block_on(root);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  REQUIRE_THROWS_AS(rt.block_on(root), weft::error);
}

TEST_CASE("destroying the runtime with tasks still suspended destroys every frame, without a hang", "[runtime]") {
  weft::runtime rt(agnostic());
  // The root parks forever on an event nobody sets, with children parked deep inside
  // chains and detached tasks parked beside them.
  auto root = [] WEFT_HOST_DEVICE(int depth) -> weft::task<int> {
    weft::event never;
    for (int i = 0; i < 64; ++i) weft::spawn(parked_at_depth(never, i)).detach();
    co_return co_await parked_at_depth(never, depth);
  };
  auto h = rt.spawn(root, 5000);
  for (int i = 0; i < 200 && rt.live_tasks() < 65; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE_FALSE(h.is_ready());
  rt.shutdown();
  auto r = h.try_get();
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}

#if WEFT_CUDA_COMPILE
// Faults poison the CUDA context of the whole process, so these are hidden ([.]) and
// scripts/gpu-check runs each in a process of its own.
namespace {
weft::config cuda_only() {
  weft::config c;
  c.kind = weft::backend::cuda;
  return c;
}
WEFT_HOST_DEVICE weft::task<int> fault_after_yield(int how) {
  co_await weft::yield();
#if WEFT_DEVICE_PASS
  if (how == 0) __trap();
  if (how == 1) *reinterpret_cast<volatile int*>(static_cast<unsigned long long>(how) * 8) = 1;
#endif
  co_return how;
}
void expect_device_fault(int how) {
  weft::runtime rt(cuda_only());
  auto root = [] WEFT_HOST_DEVICE(int how) -> weft::task<int> { co_return co_await fault_after_yield(how); };
  try {
    rt.block_on(root, how);
    FAIL("block_on returned after the device faulted");
  } catch (const weft::error& e) {
    REQUIRE(e.code() == weft::errc::device_fault);
    INFO(e.what());
    REQUIRE(std::string(e.what()).find("faulted") != std::string::npos);
  }
  auto again = rt.try_block_on(root, 5);
  REQUIRE(again.error() == weft::errc::device_fault);
}
}  // namespace

TEST_CASE("a task that traps reports device_fault to the host and does not hang", "[runtime][fault][.]") {
  expect_device_fault(0);
}

TEST_CASE("a task that writes to an illegal address reports device_fault and does not hang", "[runtime][fault][.]") {
  expect_device_fault(1);
}
#endif

TEST_CASE("a joined task is freed once, also when the join unwinds or never resumes", "[runtime]") {
  weft::runtime rt(agnostic());
  const int n = 300;
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int k) { return moved_joins(k); }, n) == n * (n - 1) / 2);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  // A child that fails and a joiner that does not catch: the join unwinds its task.
  auto failing = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    weft::join_handle<int> c = weft::spawn(fail_below(weft::errc::invalid_argument, 3));
    co_return co_await std::move(c);
  };
  auto r = rt.try_block_on(failing);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::invalid_argument);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  // A joiner parked on a child that never finishes: both are destroyed at shutdown.
  auto parked = [] WEFT_HOST_DEVICE() -> weft::task<int> {
    weft::event never;
    weft::join_handle<int> c = weft::spawn(parked_at_depth(never, 3));
    co_return co_await std::move(c);
  };
  auto h = rt.spawn(parked);
  for (int i = 0; i < 200 && rt.live_tasks() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rt.live_tasks() == 2);
  rt.shutdown();
  REQUIRE(h.try_get().error() == weft::errc::shutting_down);
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("shutdown destroys a task that holds its own join handle, and two that hold each other's", "[runtime]") {
  weft::runtime rt(agnostic());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return handle_cycles_root(); }) == 3);
  for (int i = 0; i < 200 && rt.live_tasks() != 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(rt.live_tasks() == 3);
  rt.shutdown();  // before the fix: a double destroy (host) or a write to a freed root
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("tasks, join handles and lock guards passed by value are owned exactly once", "[runtime]") {
  weft::runtime rt(agnostic());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return by_value_owners_root(n); }, 500) == 5 * 500);
  REQUIRE(weft_test::wait_for_no_live_tasks(rt) == 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
}

TEST_CASE("a runtime made with no configuration and no WEFT_BACKEND runs on the GPU when one fits, else on the host",
          "[runtime]") {
  weft_test::scoped_env unset("WEFT_BACKEND", nullptr);  // ctest and gpu-check set it: the default path here
  weft::runtime rt;
  const std::string want = weft::exec::gpu_fits(0) ? "cuda" : "host";  // false without CUDA or a GPU
  CHECK(std::string(rt.backend_name()) == want);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int x) -> weft::task<int> { co_return x + 1; }, 41) == 42);
}
