// Helpers shared by the tests.
#pragma once
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <string>

#include <weft/weft.hpp>

namespace weft_test {

// Counts live instances, as cppcoro's tests do, to prove frames are destroyed.
struct counted {
  static inline std::atomic<int> live{0};
  counted() { live.fetch_add(1); }
  counted(const counted&) noexcept { live.fetch_add(1); }
  ~counted() { live.fetch_sub(1); }
};

// Sets an environment variable for one scope, then restores it.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) { had_ = true; old_ = old; }
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~scoped_env() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// A chain `depth` frames deep (each holding a counted) whose innermost frame waits on ev.
inline weft::task<int> wait_at_depth(weft::event& ev, int depth) {
  if (depth == 0) {
    co_await ev.wait();
    co_return 0;
  }
  counted c;
  co_return co_await wait_at_depth(ev, depth - 1);
}

// Reads `read()` every millisecond until it returns `want` or `limit` passed; returns the
// last value read. (Counts that tasks change after block_on returns, read from the GPU
// on the cuda backend: polled with a time bound, not an iteration count.)
template <class Read, class T>
inline T wait_for_value(Read read, T want, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  T n = read();
  while (n != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = read();
  }
  return n;
}

// Waits up to `limit` for the runtime's live root count to reach zero; returns it.
// (Detached tasks finish after block_on returns.)
inline std::size_t wait_for_no_live_tasks(weft::runtime& rt, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  return wait_for_value([&] { return rt.live_tasks(); }, std::size_t{0}, limit);
}

// Host backend: counts its start, then keeps its worker thread until *release is set.
inline weft::task<int> hold_worker(std::atomic<int>* started, std::atomic<bool>* release) {
  started->fetch_add(1);
  while (!release->load()) std::this_thread::yield();
  co_return 1;
}

inline weft::config host_config(unsigned workers = 2) {
  weft::config c;
  c.kind = weft::backend::host;
  c.workers = workers;
  return c;
}

// A configuration for backend-agnostic tests: WEFT_BACKEND picks the backend (ctest
// sets host); `workers` applies to the host backend.
// WEFT_TEST_WORKERS overrides the worker count (host threads, or warps on the GPU).
inline weft::config any_backend_config(unsigned workers = 4) {
  weft::config c;
  c.kind = weft::backend::automatic;
  c.workers = workers;
  if (const char* w = std::getenv("WEFT_TEST_WORKERS")) c.workers = static_cast<unsigned>(std::atoi(w));
  return c;
}

// Atomic access to plain ints that tasks share (a task's frame outlives its children);
// usable on both backends, unlike std::atomic.
WEFT_HOST_DEVICE inline int atomic_add(int& x, int v) noexcept {
  return weft::detail::device_atomic<int>(x).fetch_add(v, weft::detail::mo_acq_rel);
}
WEFT_HOST_DEVICE inline int atomic_load(int& x) noexcept {
  return weft::detail::device_atomic<int>(x).load(weft::detail::mo_acquire);
}
WEFT_HOST_DEVICE inline void atomic_store(int& x, int v) noexcept {
  weft::detail::device_atomic<int>(x).store(v, weft::detail::mo_release);
}
// A task that sets *flag to 1 (release): run where a test wants to see it run.
WEFT_HOST_DEVICE inline weft::task<void> raise_flag(int* flag) {
  atomic_store(*flag, 1);
  co_return;
}
// What a batch of spawns (or sleeps) came to.
struct tally {
  int ok;
  int full;   // queue_full
  int other;  // any other outcome
};

WEFT_HOST_DEVICE inline weft::task<void> check_in(weft::semaphore& done) {
  done.release();
  co_return;
}

// n spawns in one go (pinned to the spawner's own worker when pinned_to_self), without
// letting the children run: counts what spawn refused, then waits for every accepted child.
WEFT_HOST_DEVICE inline weft::task<tally> spawn_storm(int n, bool pinned_to_self) {
  weft::semaphore done(0);
  tally t{0, 0, 0};
  const std::uint32_t self = weft::this_worker();
  for (int i = 0; i < n; ++i) {
    weft::join_handle<void> h = pinned_to_self ? weft::spawn_pinned(self, check_in(done)) : weft::spawn(check_in(done));
    if (h.valid()) ++t.ok;
    else if (h.error() == weft::errc::queue_full) ++t.full;
    else ++t.other;
  }  // dropping the handles detaches the children
  for (int i = 0; i < t.ok; ++i) co_await done.acquire();
  co_return t;
}

// Holds its frame until `go` is set, then counts itself down; the last one sets all_done.
WEFT_HOST_DEVICE inline weft::task<void> wait_then_count_down(weft::event& go, int& pending, weft::event& all_done) {
  co_await go.wait();
  if (weft::detail::device_atomic<int>(pending).fetch_sub(1) == 1) all_done.set();
}

WEFT_HOST_DEVICE inline void atomic_max(int& x, int v) noexcept {
  weft::detail::device_atomic<int> a(x);
  int cur = a.load(weft::detail::mo_relaxed);
  while (cur < v && !a.compare_exchange_weak(cur, v, weft::detail::mo_acq_rel, weft::detail::mo_relaxed)) {
  }
}

// An error (or success, 0) of a result as an int that a task can return to the host.
template <class R>
WEFT_HOST_DEVICE int code_of(const R& r) {
  return r ? 0 : static_cast<int>(r.error());
}
WEFT_HOST_DEVICE constexpr int code(weft::errc e) { return static_cast<int>(e); }

// Defined in test_sync_channel.cpp, another CUDA translation unit than the caller:
// block_on of a task returning 7 from there; returns 7, or minus the error code.
int block_on_from_another_translation_unit(weft::runtime& rt);

}  // namespace weft_test
