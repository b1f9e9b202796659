// The task type and the trampoline, driven without threads by run_inline.
#include <catch2/catch.hpp>

#include <string>

#include "support.hpp"

using weft_test::counted;

namespace {

weft::task<int> leaf(int x) { co_return x + 1; }
weft::task<int> parent(int x) {
  int a = co_await leaf(x);
  int b = co_await leaf(a);
  co_return a + b;
}

int g_side_effects = 0;
weft::task<void> bump(int by) {
  g_side_effects += by;
  co_return;
}
weft::task<int> void_user() {
  co_await bump(2);
  co_await bump(3);
  co_return g_side_effects;
}

weft::task<int> chain(int depth) {
  if (depth == 0) co_return 0;
  co_return 1 + co_await chain(depth - 1);
}

// Fails allocations once `budget` frames have been handed out.
class budget_allocator final : public weft::frame_allocator {
 public:
  explicit budget_allocator(int budget) : budget_(budget) {}
  void* allocate(std::size_t n) noexcept override {
    if (budget_ <= 0) return nullptr;
    --budget_;
    ++live;
    return std::malloc(n);
  }
  void deallocate(void* p, std::size_t) noexcept override {
    --live;
    std::free(p);
  }
  int live = 0;

 private:
  int budget_;
};

weft::task<int> holds_counted_then_awaits(int depth) {
  counted c;
  int v = co_await chain(depth);  // fails deep inside when the budget runs out
  co_return v;
}
weft::task<weft::result<int>> catcher(int depth) {
  counted c;
  weft::result<int> r = co_await weft::try_await(holds_counted_then_awaits(depth));
  co_return r;
}

// Destruction order: each marker appends its id to g_order when destroyed, and says
// whether the frame that awaits its own (the parent's marker) was still alive then.
std::string g_order;
struct order_mark {
  char id;
  const bool* parent_alive;
  bool alive = true;
  ~order_mark() {
    g_order += id;
    if (parent_alive != nullptr && !*parent_alive) g_order += '!';  // outlived its parent's locals
    alive = false;
  }
};
weft::task<int> failing_leaf(const bool* parent_alive) {
  order_mark m{'L', parent_alive};
  co_return co_await weft::task<int>{};  // an invalid task: the await fails (invalid_argument)
}
weft::task<int> failing_mid(const bool* parent_alive) {
  order_mark m{'M', parent_alive};
  co_return co_await failing_leaf(&m.alive);
}
weft::task<weft::result<int>> catching_top() {
  order_mark m{'T', nullptr};
  weft::result<int> r = co_await weft::try_await(failing_mid(&m.alive));
  g_order += '|';  // the catcher resumed
  co_return r;
}
weft::task<int> uncaught_top() {
  order_mark m{'T', nullptr};
  co_return co_await failing_mid(&m.alive);
}

weft::task<int> add(int a, int b) { co_return a + b; }
weft::task<int> fails() { co_return co_await weft::task<int>{}; }
weft::task<int> reawaits() {
  weft::task<int> t = add(1, 2);
  const int v = co_await t;
  auto again = co_await weft::try_await(t);  // t ran: it must not run again
  weft::task<int> f = fails();
  auto first = co_await weft::try_await(f);
  auto second = co_await weft::try_await(f);  // suspended at its failed await: never resumed
  co_return v * 1000 + (again ? 1 : static_cast<int>(again.error())) * 100 +
      (first ? 1 : static_cast<int>(first.error())) * 10 + (second ? 1 : static_cast<int>(second.error()));
}

}  // namespace

TEST_CASE("a failed await chain is destroyed innermost first, before the parent frames it may refer to", "[task]") {
  SECTION("caught by try_await") {
    g_order.clear();
    auto r = weft::run_inline(catching_top());
    REQUIRE(r);
    REQUIRE_FALSE(r->has_value());
    REQUIRE(r->error() == weft::errc::invalid_argument);
    // The leaf goes as the failure passes it; the caught frame when the catcher's
    // temporary ends, after the catcher resumed; the catcher last.
    REQUIRE(g_order == "LM|T");
  }
  SECTION("not caught: the root fails") {
    g_order.clear();
    auto r = weft::run_inline(uncaught_top());
    REQUIRE_FALSE(r);
    REQUIRE(r.error() == weft::errc::invalid_argument);
    REQUIRE(g_order == "LMT");
  }
}

TEST_CASE("a task awaited again after it finished or failed gives already_taken and does not run again", "[task]") {
  auto r = weft::run_inline(reawaits());
  REQUIRE(r);
  const int taken = static_cast<int>(weft::errc::already_taken);
  const int invalid = static_cast<int>(weft::errc::invalid_argument);
  REQUIRE(*r == 3 * 1000 + taken * 100 + invalid * 10 + taken);
}

TEST_CASE("run_inline refuses a task that already ran, and the task keeps its frame", "[task]") {
  weft::task<int> t = add(2, 3);
  weft::task<int>* p = &t;
  auto outer = weft::run_inline([](weft::task<int>* in) -> weft::task<int> { co_return co_await *in; }(p));
  REQUIRE(*outer == 5);
  REQUIRE(t.started());
  REQUIRE(t.valid());
  auto again = weft::run_inline(std::move(t));
  REQUIRE(again.error() == weft::errc::already_taken);
  REQUIRE(t.valid());  // still its owner: freed when t goes
}

TEST_CASE("a task that ran is still started after a move: its new owner's await or run gives already_taken", "[task]") {
  weft::task<int> t = add(2, 3);
  auto first = weft::run_inline([](weft::task<int>* in) -> weft::task<int> { co_return co_await *in; }(&t));
  REQUIRE(*first == 5);
  weft::task<int> moved = std::move(t);
  REQUIRE(moved.started());
  REQUIRE_FALSE(t.started());
  auto awaited = weft::run_inline([](weft::task<int>* in) -> weft::task<int> {
    auto r = co_await weft::try_await(*in);
    co_return r ? -1 : static_cast<int>(r.error());
  }(&moved));
  REQUIRE(*awaited == static_cast<int>(weft::errc::already_taken));
  weft::task<int> again;
  again = std::move(moved);  // the move assignment carries it too
  REQUIRE(again.started());
  REQUIRE(weft::run_inline(std::move(again)).error() == weft::errc::already_taken);
  REQUIRE(again.valid());  // refused: it keeps its frame
}

TEST_CASE("awaiting a child task returns its value", "[task]") {
  auto r = weft::run_inline(parent(1));
  REQUIRE(r);
  REQUIRE(*r == 2 + 3);
}

TEST_CASE("void tasks run their side effects when awaited", "[task]") {
  g_side_effects = 0;
  auto r = weft::run_inline(void_user());
  REQUIRE(*r == 5);
  auto v = weft::run_inline(bump(10));
  REQUIRE(v.has_value());
  REQUIRE(g_side_effects == 15);
}

TEST_CASE("a task is lazy and a dropped task frees its frame without running", "[task]") {
  g_side_effects = 0;
  {
    weft::task<void> t = bump(1);
    REQUIRE(t.valid());
  }
  REQUIRE(g_side_effects == 0);
}

TEST_CASE("a chain of a million nested awaits runs in constant stack", "[task][stress]") {
  auto r = weft::run_inline(chain(1'000'000));
  REQUIRE(r);
  REQUIRE(*r == 1'000'000);
}

TEST_CASE("a failed frame allocation fails the awaiting chain up to try_await", "[task]") {
  budget_allocator alloc(6);  // catcher + holder + 4 chain frames, then exhaustion
  {
    weft::exec::frame_scope scope(&alloc, nullptr);
    auto r = weft::run_inline(catcher(10));
    REQUIRE(r);                    // the catcher itself completed...
    REQUIRE_FALSE(r->has_value()); // ...holding the error as a value
    REQUIRE(r->error() == weft::errc::out_of_memory);
  }
  REQUIRE(counted::live == 0);  // every frame passed over was destroyed
  REQUIRE(alloc.live == 0);
}

TEST_CASE("a failure nobody catches fails the root", "[task]") {
  budget_allocator alloc(3);
  {
    weft::exec::frame_scope scope(&alloc, nullptr);
    auto r = weft::run_inline(holds_counted_then_awaits(10));
    REQUIRE_FALSE(r);
    REQUIRE(r.error() == weft::errc::out_of_memory);
  }
  REQUIRE(counted::live == 0);
  REQUIRE(alloc.live == 0);
}

TEST_CASE("a task whose own frame cannot be allocated reports out_of_memory", "[task]") {
  budget_allocator alloc(0);
  weft::exec::frame_scope scope(&alloc, nullptr);
  weft::task<int> t = leaf(1);
  REQUIRE_FALSE(t.valid());
  REQUIRE(t.error() == weft::errc::out_of_memory);
  auto r = weft::run_inline(std::move(t));
  REQUIRE(r.error() == weft::errc::out_of_memory);
}

TEST_CASE("a task that would wait with no scheduler unwinds its deep chain, frees every frame and reports would_block",
          "[task][stress]") {
  weft::event never;
  auto r = weft::run_inline(weft_test::wait_at_depth(never, 200'000));
  REQUIRE_FALSE(r);
  REQUIRE(r.error() == weft::errc::would_block);
  REQUIRE(counted::live == 0);
}
