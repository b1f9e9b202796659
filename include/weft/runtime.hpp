// weft/runtime.hpp - weft::runtime: picks a backend and runs root tasks on it.
//
//   weft::runtime rt;                        // backend from WEFT_BACKEND, else automatic
//   int r = rt.block_on([] WEFT_HOST_DEVICE (int n) { return root(n); }, 39);
//
// Backend selection (config::kind, then the environment):
//   * config::kind = host or cuda forces that backend;
//   * with backend::automatic, WEFT_BACKEND=host|cuda forces one; any other value is an
//     error (errc::invalid_argument) naming the value;
//   * otherwise the host backend. (The cuda backend becomes the automatic choice when a
//     GPU is usable once the device executor lands.)
//   * asking for cuda throws weft::error(errc::backend_unavailable) with the reason: no
//     usable GPU (with the CUDA runtime's message), weft built without CUDA, or the
//     device executor not built yet.
// Host-side API errors are C++ exceptions (weft::error); inside tasks errors are values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "weft/executor/host_executor.hpp"
#include "weft/executor/host_frames.hpp"
#include "weft/frame_allocator.hpp"
#include "weft/spawn.hpp"

namespace weft {

enum class backend { automatic, host, cuda };

struct config {
  backend kind = backend::automatic;
  int device = 0;                            // CUDA device ordinal (cuda backend)
  unsigned workers = 0;                      // 0: one per hardware thread (host)
  std::size_t frame_pool_bytes = 256u << 20; // size-class pool arena
  std::uint32_t local_queue_capacity = 256;  // per-worker ring (power of two, <= 8192)
  weft::frame_allocator* frame_allocator = nullptr;  // replaces the pool when set (host)
};

// A host-side failure: a bad configuration, an unavailable backend, a failed root.
class error : public std::runtime_error {
 public:
  error(errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  errc code() const noexcept { return code_; }

 private:
  errc code_;
};

namespace detail {
template <class X>
inline constexpr bool is_task_v = false;
template <class T>
inline constexpr bool is_task_v<task<T>> = true;

template <class T>
WEFT_HOST_DEVICE result<T> take_finished(join_handle<T>& h) {
  return outcome_of<T>(promise_base_of<task_promise<T>>(frame_of(h.native())));
}
}  // namespace detail

class runtime {
 public:
  runtime();
  explicit runtime(const config& cfg);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // "cuda" or "host".
  const char* backend_name() const noexcept;

  // Creates fn(args...) on the backend, runs it to completion and returns its value.
  // fn is a WEFT_HOST_DEVICE callable returning task<T>; args and T are trivially
  // copyable. Throws weft::error when the root fails (out_of_memory, shutting_down...).
  template <class F, class... Args>
  auto block_on(F&& fn, Args... args) {
    auto r = try_block_on(static_cast<F&&>(fn), args...);
    if (!r) throw error(r.error(), std::string("weft: block_on: ") + to_string(r.error()));
    if constexpr (!std::is_void_v<typename decltype(r)::value_type>) return std::move(*r);
  }

  // As block_on, with the root's failure as a value instead of an exception.
  template <class F, class... Args>
  auto try_block_on(F&& fn, Args... args) -> result<typename std::invoke_result_t<F&, Args&...>::value_type>;

  // Stops the workers and destroys every task still alive (see host_executor.hpp's
  // numbered steps). Idempotent; the destructor calls it. block_on afterwards returns
  // errc::shutting_down.
  void shutdown() noexcept;

  unsigned workers() const noexcept;
  // Root tasks alive (running, queued or suspended).
  std::size_t live_tasks() const noexcept;
  // Frame-pool blocks in use or cached; after shutdown(), the frames still alive (0).
  std::int64_t live_frame_blocks() const noexcept;

 private:
  exec::host_executor* host_executor_() noexcept;
  struct impl;
  std::unique_ptr<impl> impl_;
};

template <class F, class... Args>
auto runtime::try_block_on(F&& fn, Args... args) -> result<typename std::invoke_result_t<F&, Args&...>::value_type> {
  using task_t = std::invoke_result_t<F&, Args&...>;
  static_assert(detail::is_task_v<task_t>, "block_on: fn(args...) must return weft::task<T>");
  using T = typename task_t::value_type;
  static_assert(std::is_void_v<T> || std::is_trivially_copyable_v<T>,
                "block_on: the root task's value must be trivially copyable (it crosses to the host)");
  static_assert((std::is_trivially_copyable_v<Args> && ...), "block_on: arguments must be trivially copyable");
  exec::host_executor* ex = host_executor_();
  if (ex == nullptr) return unexpected(errc::backend_unavailable);
  join_handle<T> h;
  {
    exec::frame_scope frames(ex->frame_allocator(), nullptr);  // the root frame comes from the pool
    h = detail::spawn_on(ex, fn(args...));
  }
  if (!h) return unexpected(h.error());
  if (!ex->wait_completed(h.native())) {
    h.abandon();  // shutdown destroyed the root; the handle must not touch it
    return unexpected(errc::shutting_down);
  }
  result<T> r = detail::take_finished(h);
  h.detach();
  return r;
}

}  // namespace weft
