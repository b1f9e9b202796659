// bench/bench_support.hpp - small helpers shared by weft's benchmarks.
//
//   weft_bench::clock_type              the clock every benchmark times with (steady)
//   weft_bench::now_ns()                that clock in nanoseconds, for stamps kept as integers
//   weft_bench::percentile(v, 0.99)     the element at rank p * (n - 1) of v sorted (no interpolation)
//   WEFT_BENCH_CHECK(cudaCall(...))     prints a CUDA error and goes on (CUDA translation units only)
//
// Header-only and usable from plain C++ and CUDA translation units alike: the CUDA part is
// compiled only where weft/config.hpp says the unit is compiled as CUDA (WEFT_CUDA_COMPILE).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <weft/config.hpp>

#if WEFT_CUDA_COMPILE
#include <cuda_runtime.h>

// A benchmark reports a failed CUDA call and carries on: the check that follows (a result
// compared with the baseline's) is what fails the run, with a clearer message.
#define WEFT_BENCH_CHECK(x)                                                                 \
  do {                                                                                      \
    cudaError_t weft_bench_e_ = (x);                                                        \
    if (weft_bench_e_ != cudaSuccess)                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(weft_bench_e_));              \
  } while (0)
#endif

namespace weft_bench {

using clock_type = std::chrono::steady_clock;

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count());
}

// Nearest rank below (the same definition the existing benchmarks report), so that p99 of
// 100 samples is the 99th smallest, not an interpolation between two.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace weft_bench
