// The task type and the trampoline, driven without threads by run_inline.
#include <catch2/catch.hpp>

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

}  // namespace

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
