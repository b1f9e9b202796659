// weft/when_all.hpp - run several tasks concurrently and wait for all of them.
//
//   auto [a, b, c] = co_await weft::when_all(f(), g(), h());   // tuple; void -> weft::unit
//
// Each task is spawned (so they run in parallel on the workers), then joined in
// order. when_all always waits for every task, even after one failed, so no task
// outlives the call; then, if any failed, the first failure (in argument order)
// fails the awaiting task, or is returned as the error by try_await(when_all(...)).
// A task that could not be allocated counts as a failed task.
#pragma once
#include <tuple>
#include <utility>

#include "weft/spawn.hpp"

namespace weft {

namespace detail {

template <class T>
WEFT_HOST_DEVICE result<unit_if_void_t<T>> as_unit_result(result<T>&& r) {
  if constexpr (std::is_void_v<T>) {
    if (!r) return unexpected(r.error());
    return unit{};
  } else {
    return std::move(r);
  }
}

// Awaiting this fails the awaiting task with `e` (a weft-internal "raise").
struct fail_awaiter {
  using weft_awaitable = void;
  errc e;
  WEFT_HOST_DEVICE bool await_ready() const noexcept { return false; }
  template <class P>
  WEFT_HOST_DEVICE void await_suspend(std::coroutine_handle<P> h) const noexcept {
    fail_current(h, e);
  }
  WEFT_HOST_DEVICE void await_resume() const noexcept {}
};

template <class... R>
WEFT_HOST_DEVICE errc first_error(const R&... rs) noexcept {
  errc e{};
  ((e == errc{} && !rs.has_value() ? (e = rs.error(), 0) : 0), ...);
  return e;
}

template <class... Ts, std::size_t... I>
WEFT_HOST_DEVICE task<std::tuple<unit_if_void_t<Ts>...>> when_all_impl(std::index_sequence<I...>, task<Ts>... ts) {
  std::tuple<join_handle<Ts>...> handles{spawn(std::move(ts))...};
  // Braced initialisation evaluates left to right: joins happen in argument order.
  std::tuple<result<unit_if_void_t<Ts>>...> outcomes{
      as_unit_result<Ts>(co_await try_await(std::get<I>(handles)))...};
  const errc e = first_error(std::get<I>(outcomes)...);
  if (e != errc{}) co_await fail_awaiter{e};
  co_return std::tuple<unit_if_void_t<Ts>...>{std::move(*std::get<I>(outcomes))...};
}

}  // namespace detail

// Runs every task concurrently; completes when all have completed.
template <class... Ts>
WEFT_HOST_DEVICE task<std::tuple<detail::unit_if_void_t<Ts>...>> when_all(task<Ts>... ts) {
  return detail::when_all_impl(std::index_sequence_for<Ts...>{}, std::move(ts)...);
}

}  // namespace weft
