// PROFILING EXPERIMENT (not for main; session 16's prof_spawn.cpp with repetitions and a worker count):
// spawn_many (or yield_many) roots under ncu. Run with WEFT_PROF_DEFER=1 so that the worker kernel starts
// after the root is queued and stops when it completes. The root runs the tree `reps` times, so that all
// but the first run find a warm frame pool.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <weft/weft.hpp>

WEFT_HOST_DEVICE weft::task<unsigned> yielder(unsigned id, int yields) {
  unsigned acc = id;
  for (int i = 0; i < yields; ++i) {
    acc = acc * 31 + static_cast<unsigned>(i);
    co_await weft::yield();
  }
  co_return acc;
}
WEFT_HOST_DEVICE weft::task<unsigned> tiny(unsigned i) { co_return i & 1u; }
WEFT_HOST_DEVICE weft::task<unsigned> spawn_tree(unsigned lo, unsigned hi, int yields) {
  if (hi - lo <= 16) {
    weft::join_handle<unsigned> hs[16];
    for (unsigned i = lo; i < hi; ++i) hs[i - lo] = weft::spawn(yields < 0 ? tiny(i) : yielder(i, yields));
    unsigned sum = 0;
    for (unsigned i = lo; i < hi; ++i) sum += co_await std::move(hs[i - lo]);
    co_return sum;
  }
  const unsigned mid = lo + (hi - lo) / 2;
  auto left = weft::spawn(spawn_tree(lo, mid, yields));
  unsigned right = co_await spawn_tree(mid, hi, yields);
  co_return right + co_await std::move(left);
}
WEFT_HOST_DEVICE weft::task<unsigned> repeat_tree(unsigned n, int yields, int reps) {
  unsigned last = 0;
  for (int r = 0; r < reps; ++r) last = co_await spawn_tree(0, n, yields);
  co_return last;
}

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 10000000u;
  const int yields = argc > 2 ? std::atoi(argv[2]) : -1;
  const unsigned workers = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 0u;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 4;
  weft::config c;  // as the bench's shared runtime (device_bench.cpp, bench_config)
  c.kind = weft::backend::cuda;
  c.frame_pool_bytes = std::size_t{4} << 30;
  c.inject_capacity = 1u << 24;
  c.workers = workers;
  weft::runtime rt(c);
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned got = rt.block_on(
      [] WEFT_HOST_DEVICE(unsigned k, int y, int r) { return repeat_tree(k, y, r); }, n, yields, reps);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("n=%u yields=%d workers=%u reps=%d sum=%u (spawn: want %u) %.3f ms incl. launch, %.3g tasks/s\n", n,
              yields, workers, reps, got, n / 2, 1e3 * s, double(n) * reps / s);
  rt.shutdown();
  return 0;
}
