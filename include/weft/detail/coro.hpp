// weft/detail/coro.hpp - a coroutine handle usable in device code.
//
// libstdc++'s std::coroutine_handle members (resume, destroy, done, promise,
// from_promise) are host-only functions, so device code cannot call them. The
// compiler itself only needs std::coroutine_handle<P>::from_address (constexpr, so
// callable on the device) to pass the handle to await_suspend. Everything weft does
// with a frame goes through this type instead, over the compiler builtins that both
// clang and g++ provide.
//
// Frame layout assumption: clang and g++ both place the promise at
// round_up(2 * sizeof(void*), alignof(Promise)) from the frame address. weft
// requires alignof(Promise) <= 16, so every weft promise sits at offset 16 and a
// promise_base can be found from a type-erased frame address.
#pragma once
#include <coroutine>

#include "weft/config.hpp"

namespace weft::detail {

inline constexpr unsigned max_promise_align = 16;

struct coro_handle {
  void* frame = nullptr;

  WEFT_HOST_DEVICE static coro_handle from_address(void* a) noexcept { return coro_handle{a}; }
  template <class P>
  WEFT_HOST_DEVICE static coro_handle from_std(std::coroutine_handle<P> h) noexcept {
    return coro_handle{h.address()};
  }
  template <class P>
  WEFT_HOST_DEVICE static coro_handle from_promise(P& p) noexcept {
    static_assert(alignof(P) <= max_promise_align, "weft promises must be at most 16-byte aligned");
    return coro_handle{__builtin_coro_promise(static_cast<void*>(&p), alignof(P), true)};
  }

  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return frame != nullptr; }
  WEFT_HOST_DEVICE void resume() const { __builtin_coro_resume(frame); }
  WEFT_HOST_DEVICE void destroy() const { __builtin_coro_destroy(frame); }
  WEFT_HOST_DEVICE bool done() const { return __builtin_coro_done(frame); }

  template <class P>
  WEFT_HOST_DEVICE P& promise() const noexcept {
    static_assert(alignof(P) <= max_promise_align, "weft promises must be at most 16-byte aligned");
    return *static_cast<P*>(__builtin_coro_promise(frame, alignof(P), false));
  }
};

// A frame's promise base, found through the fixed offset (see above).
template <class Base>
WEFT_HOST_DEVICE inline Base& promise_base_of(void* frame) noexcept {
  return *static_cast<Base*>(__builtin_coro_promise(frame, alignof(Base), false));
}

}  // namespace weft::detail
