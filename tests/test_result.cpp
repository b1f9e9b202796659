#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <type_traits>

#include <weft/result.hpp>

TEST_CASE("a result holds either a value or an error", "[result]") {
  weft::result<int> ok = 7;
  REQUIRE(ok.has_value());
  REQUIRE(static_cast<bool>(ok));
  REQUIRE(*ok == 7);
  REQUIRE(ok.value() == 7);

  weft::result<int> bad = weft::unexpected(weft::errc::out_of_memory);
  REQUIRE_FALSE(bad.has_value());
  REQUIRE_FALSE(static_cast<bool>(bad));
  REQUIRE(bad.error() == weft::errc::out_of_memory);
  REQUIRE(bad.value_or(3) == 3);
}

TEST_CASE("a result of a non-trivial type copies, moves and destroys its value", "[result]") {
  weft::result<std::string> a = std::string(100, 'x');
  weft::result<std::string> b = a;
  REQUIRE(*b == std::string(100, 'x'));
  weft::result<std::string> c = std::move(a);
  REQUIRE(c->size() == 100);
  c = weft::result<std::string>(weft::unexpected(weft::errc::queue_full));
  REQUIRE(c.error() == weft::errc::queue_full);
  c = b;
  REQUIRE(*c == *b);
}

TEST_CASE("result<void> reports success or an error", "[result]") {
  weft::result<void> ok;
  REQUIRE(ok.has_value());
  weft::result<void> bad = weft::unexpected(weft::errc::shutting_down);
  REQUIRE_FALSE(bad);
  REQUIRE(bad.error() == weft::errc::shutting_down);
}

TEST_CASE("every error code has a distinct message", "[result]") {
  using weft::errc;
  const errc all[] = {errc::out_of_memory,       errc::queue_full,       errc::shutting_down,
                      errc::no_runtime,          errc::backend_unavailable, errc::invalid_argument,
                      errc::already_taken,       errc::would_block,
                      errc::closed,             errc::device_fault};
  for (errc a : all) {
    REQUIRE(std::string(weft::to_string(a)) != "unknown weft error");
    for (errc b : all)
      if (a != b) REQUIRE(std::string(weft::to_string(a)) != weft::to_string(b));
  }
}

TEST_CASE("a result of a move-only type moves but does not copy, and value_or takes its value from an rvalue",
          "[result]") {
  static_assert(!std::is_copy_constructible_v<weft::result<std::unique_ptr<int>>>);
  static_assert(!std::is_copy_assignable_v<weft::result<std::unique_ptr<int>>>);
  static_assert(std::is_move_constructible_v<weft::result<std::unique_ptr<int>>>);
  static_assert(std::is_copy_constructible_v<weft::result<std::string>>);
  weft::result<std::unique_ptr<int>> r(std::make_unique<int>(4));
  std::unique_ptr<int> p = std::move(r).value_or(nullptr);
  REQUIRE(p != nullptr);
  REQUIRE(*p == 4);
  weft::result<std::unique_ptr<int>> e{weft::unexpected(weft::errc::closed)};
  REQUIRE(std::move(e).value_or(nullptr) == nullptr);
}
