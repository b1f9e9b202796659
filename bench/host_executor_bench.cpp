// Host-backend microbenchmarks (CPU timings; the GPU ones are in device_bench.cpp).
// Each checks its result so the work cannot be elided. Plain C++: host-only lambdas.
#include <benchmark/benchmark.h>

#include <vector>

#include <weft/weft.hpp>

namespace {

weft::config host_only() {
  weft::config c;
  c.kind = weft::backend::host;
  return c;
}

weft::task<int> tiny(int i) { co_return i & 1; }

weft::task<long long> spawn_join(int n) {
  std::vector<weft::join_handle<int>> hs;
  hs.reserve(n);
  for (int i = 0; i < n; ++i) hs.push_back(weft::spawn(tiny(i)));
  long long s = 0;
  for (auto& h : hs) s += co_await std::move(h);
  co_return s;
}

weft::task<int> yielder(int k) {
  for (int i = 0; i < k; ++i) co_await weft::yield();
  co_return k;
}

weft::task<long long> yield_many(int tasks, int k) {
  std::vector<weft::join_handle<int>> hs;
  for (int i = 0; i < tasks; ++i) hs.push_back(weft::spawn(yielder(k)));
  long long s = 0;
  for (auto& h : hs) s += co_await std::move(h);
  co_return s;
}

weft::task<int> chain(int d) {
  if (d == 0) co_return 0;
  co_return 1 + co_await chain(d - 1);
}

void BM_host_spawn_join(benchmark::State& st) {
  weft::runtime rt(host_only());
  const int n = static_cast<int>(st.range(0));
  for (auto _ : st) {
    long long s = rt.block_on([](int k) { return spawn_join(k); }, n);
    if (s != n / 2) st.SkipWithError("wrong sum");
  }
  st.counters["tasks_per_s"] = benchmark::Counter(static_cast<double>(n) * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_host_spawn_join)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_host_yield_many(benchmark::State& st) {
  weft::runtime rt(host_only());
  const int tasks = static_cast<int>(st.range(0)), k = 64;
  for (auto _ : st) {
    long long s = rt.block_on([](int t, int kk) { return yield_many(t, kk); }, tasks, k);
    if (s != static_cast<long long>(tasks) * k) st.SkipWithError("wrong sum");
  }
  st.counters["resumes_per_s"] =
      benchmark::Counter(static_cast<double>(tasks) * k * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_host_yield_many)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_host_await_chain(benchmark::State& st) {
  weft::runtime rt(host_only());
  const int d = static_cast<int>(st.range(0));
  for (auto _ : st) {
    int r = rt.block_on([](int dd) { return chain(dd); }, d);
    if (r != d) st.SkipWithError("wrong depth");
  }
  st.counters["awaits_per_s"] = benchmark::Counter(static_cast<double>(d) * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_host_await_chain)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Two tasks pinned to workers 0 and 1 hand a token back and forth through events, while
// the runtime's other workers stay parked: each hop wakes a parked home. What a hop costs
// with that many idle threads beside it (until the thirtieth session every hop woke them
// all: send_home's notify_all).
weft::task<int> pinned_pinger(weft::event* evs, int rounds, int side) {
  for (int r = 0; r < rounds; ++r) {
    if (side == 1) co_await evs[2 * r + 1].wait();
    evs[2 * r + 1 - side].set();
    if (side == 0) co_await evs[2 * r].wait();
  }
  co_return rounds;
}

weft::task<int> pinned_ping_pong(int rounds) {
  std::vector<weft::event> evs(2 * static_cast<std::size_t>(rounds));
  auto a = weft::spawn_pinned(0, pinned_pinger(evs.data(), rounds, 0));
  auto b = weft::spawn_pinned(1, pinned_pinger(evs.data(), rounds, 1));
  const int x = co_await std::move(a);
  co_return x + co_await std::move(b);
}

void BM_host_pinned_hop(benchmark::State& st) {
  weft::config c = host_only();
  c.workers = static_cast<unsigned>(st.range(0));
  weft::runtime rt(c);
  const int rounds = 2000;
  for (auto _ : st) {
    const int r = rt.block_on([](int n) { return pinned_ping_pong(n); }, rounds);
    if (r != 2 * rounds) st.SkipWithError("wrong rounds");
  }
  st.counters["hops_per_s"] =
      benchmark::Counter(2.0 * rounds * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_host_pinned_hop)->Arg(2)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
