// Shutdown on the host backend and the tasks its last answers wake (runtime.cpp, step 1;
// reactor::close). Host-only code (spinning on std::chrono, std::atomic flags): plain C++
// always, run on the host backend.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "support.hpp"

namespace {

std::atomic<bool> g_go{false}, g_posted{false};
std::atomic<int> g_seen{-1};

void spin_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Posts one request ~300 us after the host starts shutdown: after close's first look
// found nothing in flight, and answered (refused) before its second, 1 ms later.
weft::task<void> late_poster() {
  while (!g_go.load()) co_await weft::yield();
  spin_for(std::chrono::microseconds(300));
  g_posted.store(true);
  auto r = co_await weft::io::sleep_for(10'000'000'000ull);  // refused at once: shutting_down
  g_seen.store(r ? 0 : static_cast<int>(r.error()));
}

// Keeps the only worker busy while the refusal arrives, so its woken task stays queued.
weft::task<void> hog() {
  while (!g_posted.load()) co_await weft::yield();
  spin_for(std::chrono::milliseconds(20));
}

struct late_post_run {
  bool valid;  // the request was posted during close and answered: the case to check
  int seen;
};

late_post_run run_late_post() {
  g_go = false;
  g_posted = false;
  g_seen = -1;
  weft::config c;
  c.kind = weft::backend::host;
  c.workers = 1;
  c.reactor_threads = 1;
  weft::runtime rt(c);
  auto a = rt.spawn([] { return late_poster(); });
  auto b = rt.spawn([] { return hog(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  g_go = true;
  rt.shutdown();
  return {g_posted.load() && rt.reactor_stats().completions == 1, g_seen.load()};
}

}  // namespace

// Found by a review (fortieth session): close only waited for the woken tasks to run when
// one of its looks, 1 ms apart, caught a request in flight; a request posted and answered
// between two looks woke a task that shutdown then destroyed unrun (g_seen stayed -1, in
// 12 of 12 runs). A run where the poster did not post in time (a loaded machine) proves
// nothing either way and is run again.
TEST_CASE("a task whose request shutdown refuses between two of its looks runs and sees shutting_down before it is "
          "destroyed",
          "[runtime][io][executor]") {
  int valid = 0;
  for (int attempt = 0; attempt < 10 && valid < 3; ++attempt) {
    const late_post_run r = run_late_post();
    if (!r.valid) continue;
    ++valid;
    INFO("attempt " << attempt);
    REQUIRE(r.seen == static_cast<int>(weft::errc::shutting_down));
  }
  REQUIRE(valid >= 1);
}
