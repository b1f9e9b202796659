// GPU benchmarks of the host reactor, each beside its floor or baseline in the same run.
//
//   scripts/gpu-bench   (on a GPU machine; writes JSON under $OUT)
//
//   host_call_roundtrip   one task calling a no-op host function again and again. The
//                         handler stamps the host's steady clock at each call, so one gap
//                         is one whole round trip (answer to the GPU, the drain, the
//                         task's resume, its next request, the reactor's poll). Floor: a
//                         host -> persistent kernel -> host ping-pong through pinned
//                         mapped memory, timed the same way.
//   host_call_throughput  65,536 tasks each making 16 calls; every answer is checked.
//   io_read               a 1 GiB file into device memory in 4 MiB io::reads, beside
//                         host pread + cudaMemcpy of the same chunks (pinned buffer), both
//                         from the page cache (the file is read once before either).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "bench_support.hpp"

namespace {

using weft_bench::clock_type;
using weft_bench::now_ns;
using weft_bench::percentile;

weft::config cuda_config() {
  weft::config c;
  c.kind = weft::backend::cuda;
  c.frame_pool_bytes = 256u << 20;
  return c;
}

// ---------------------------------------------------------------- floor: pinned ping-pong
__global__ void pingpong_kernel(unsigned* to_gpu, unsigned* to_host, unsigned rounds) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> in(*to_gpu), out(*to_host);
  for (unsigned r = 1; r <= rounds; ++r) {
    while (in.load(cuda::std::memory_order_acquire) != r) {
    }
    out.store(r, cuda::std::memory_order_release);
  }
}

std::vector<double> pinned_pingpong_us(unsigned rounds) {
  unsigned* words = nullptr;
  WEFT_BENCH_CHECK(cudaHostAlloc(&words, 256, cudaHostAllocMapped));
  std::memset(words, 0, 256);
  unsigned* to_gpu = words;
  unsigned* to_host = words + 32;  // another cache line
  pingpong_kernel<<<1, 1>>>(to_gpu, to_host, rounds);
  std::vector<double> lat;
  lat.reserve(rounds);
  std::atomic_ref<unsigned> in(*to_host), out(*to_gpu);
  for (unsigned r = 1; r <= rounds; ++r) {
    const auto t0 = clock_type::now();
    out.store(r, std::memory_order_release);
    while (in.load(std::memory_order_acquire) != r) {
    }
    lat.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
  }
  WEFT_BENCH_CHECK(cudaDeviceSynchronize());
  cudaFreeHost(words);
  return lat;
}

// ---------------------------------------------------------------- host_call round trip
WEFT_HOST_DEVICE weft::task<std::uint64_t> call_loop(int n) {
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    auto r = co_await weft::host_call(1, i);
    if (!r) co_return ~std::uint64_t{0};
    sum += *r;
  }
  co_return sum;
}

// Diagnostic: where a round trip's time goes. The task stamps the GPU's %globaltimer
// before each call and after its resume; the handler stamps the host's realtime clock.
// %globaltimer counts real time in ns (its offset to the host clock is estimated as the
// midpoint of the two one-way times), so the split is approximate; the sum is exact.
WEFT_HOST_DEVICE weft::task<std::uint64_t> stamped_loop(int n, std::uint64_t* ts) {
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    ts[2 * i] = weft::now_ns();
    auto r = co_await weft::host_call(1, i);
    ts[2 * i + 1] = weft::now_ns();
    if (!r) co_return ~std::uint64_t{0};
    sum += *r;
  }
  co_return sum;
}

// The offset of %globaltimer to the host's realtime clock: a pinned ping-pong where the
// GPU stamps the moment it sees each ping; offset = gpu stamp - host midpoint (median).
__global__ void stamp_pingpong(unsigned* to_gpu, unsigned* to_host, std::uint64_t* stamps, unsigned rounds) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> in(*to_gpu), out(*to_host);
  for (unsigned r = 1; r <= rounds; ++r) {
    while (in.load(cuda::std::memory_order_acquire) != r) {
    }
    stamps[r - 1] = weft::now_ns();
    out.store(r, cuda::std::memory_order_release);
  }
}
double globaltimer_offset_ns() {
  const unsigned rounds = 200;
  unsigned* words = nullptr;
  std::uint64_t* stamps = nullptr;
  WEFT_BENCH_CHECK(cudaHostAlloc(&words, 256, cudaHostAllocMapped));
  WEFT_BENCH_CHECK(cudaMallocManaged(&stamps, rounds * sizeof(std::uint64_t)));
  std::memset(words, 0, 256);
  stamp_pingpong<<<1, 1>>>(words, words + 32, stamps, rounds);
  std::atomic_ref<unsigned> in(words[32]), out(words[0]);
  std::vector<double> mid(rounds);
  auto real_ns = [] {
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  };
  for (unsigned r = 1; r <= rounds; ++r) {
    const double t0 = real_ns();
    out.store(r, std::memory_order_release);
    while (in.load(std::memory_order_acquire) != r) {
    }
    mid[r - 1] = (t0 + real_ns()) / 2;
  }
  WEFT_BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<double> off(rounds);
  for (unsigned i = 0; i < rounds; ++i) off[i] = double(stamps[i]) - mid[i];
  cudaFreeHost(words);
  cudaFree(stamps);
  return percentile(off, 0.5);
}

void BM_host_call_split(benchmark::State& state) {
  const int n = 2000;
  std::uint64_t* ts = nullptr;
  WEFT_BENCH_CHECK(cudaMallocManaged(&ts, sizeof(std::uint64_t) * 2 * n));
  for (auto _ : state) {
    const double offset = globaltimer_offset_ns();  // gpu - host
    std::vector<std::uint64_t> host(n);
    int k = 0;
    {
      weft::config c = cuda_config();
      c.reactor_threads = 1;
      c.reactor_spin_ns = 1000000000;
      weft::runtime rt(c);
      rt.register_host_fn(1, [&](std::span<const std::uint64_t> a) {
        host[k++] = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count());
        return a[0] + 1;
      });
      rt.block_on([] WEFT_HOST_DEVICE(int m, std::uint64_t* t) { return stamped_loop(m, t); }, n, ts);
    }
    std::vector<double> rtt, to_host, to_gpu;
    for (int i = 0; i < n; ++i) {
      rtt.push_back(double(ts[2 * i + 1] - ts[2 * i]) / 1000.0);
      to_host.push_back((double(host[i]) + offset - double(ts[2 * i])) / 1000.0);
      to_gpu.push_back((double(ts[2 * i + 1]) - double(host[i]) - offset) / 1000.0);
    }
    state.SetIterationTime(1e-3);
    state.counters["gpu_rtt_p50_us"] = percentile(rtt, 0.5);
    state.counters["clock_offset_us"] = offset / 1000.0;
    state.counters["post_to_handler_p50_us"] = percentile(to_host, 0.5);
    state.counters["handler_to_resume_p50_us"] = percentile(to_gpu, 0.5);
  }
  cudaFree(ts);
}
BENCHMARK(BM_host_call_split)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_host_call_roundtrip(benchmark::State& state) {
  const int n = 20000;
  for (auto _ : state) {
    const std::vector<double> floor = pinned_pingpong_us(n);
    std::vector<std::uint64_t> stamps;
    stamps.reserve(n);
    double ms = 0;
    std::uint64_t sum = 0;
    {
      weft::config c = cuda_config();
      c.reactor_spin_ns = static_cast<std::uint32_t>(state.range(0));
      c.workers = static_cast<unsigned>(state.range(1));
      c.reactor_threads = 1;
      weft::runtime rt(c);
      rt.register_host_fn(1, [&stamps](std::span<const std::uint64_t> a) {
        stamps.push_back(now_ns());
        return a[0] + 1;
      });
      rt.block_on([] WEFT_HOST_DEVICE(int k) { return call_loop(k); }, 10);  // warm-up
      stamps.clear();
      const auto t0 = clock_type::now();
      sum = rt.block_on([] WEFT_HOST_DEVICE(int k) { return call_loop(k); }, n);
      ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    }
    std::vector<double> gaps;
    for (std::size_t i = 1; i < stamps.size(); ++i) gaps.push_back(double(stamps[i] - stamps[i - 1]) / 1000.0);
    const std::uint64_t want = std::uint64_t(n) * (n + 1) / 2;
    if (sum != want) state.SkipWithError("host_call_roundtrip: wrong answers");
    state.SetIterationTime(ms / 1000.0);
    state.counters["weft_p50_us"] = percentile(gaps, 0.5);
    state.counters["weft_p99_us"] = percentile(gaps, 0.99);
    state.counters["floor_p50_us"] = percentile(floor, 0.5);
    state.counters["floor_p99_us"] = percentile(floor, 0.99);
    state.counters["p50_over_floor"] = percentile(gaps, 0.5) / percentile(floor, 0.5);
    state.counters["calls"] = double(n);
  }
}
// Args: the reactor's spin time (ns), worker warps (0: all).
BENCHMARK(BM_host_call_roundtrip)->Args({50000, 0})->Args({1000000000, 0})->Args({1000000000, 4})->Args({1000000000, 1})->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------- host_call throughput
struct tp_state {
  int done = 0;
  int wrong = 0;
  weft::event all_done;
};
WEFT_HOST_DEVICE weft::task<void> tp_caller(int i, int calls, tp_state* s, int total) {
  for (int k = 0; k < calls; ++k) {
    const std::uint64_t x = std::uint64_t(i) * 64 + std::uint64_t(k);
    auto r = co_await weft::host_call(2, x);
    if (!r || *r != x + 1) weft::detail::device_atomic<int>(s->wrong).fetch_add(1, weft::detail::mo_relaxed);
  }
  if (weft::detail::device_atomic<int>(s->done).fetch_add(1, weft::detail::mo_acq_rel) + 1 == total) s->all_done.set();
}
// Spawns callers [first, first + n): a spawn costs a lane a few microseconds, so the
// 65,536 callers come from 256 spawners in parallel, not from one lane in a row (that
// took ~0.5 s and the benchmark measured it instead of the calls).
// k callers that could not be spawned: counted wrong, and done (so the root still ends).
WEFT_HOST_DEVICE void tp_fail(tp_state* s, int k, int total) {
  weft::detail::device_atomic<int>(s->wrong).fetch_add(k, weft::detail::mo_relaxed);
  if (weft::detail::device_atomic<int>(s->done).fetch_add(k, weft::detail::mo_acq_rel) + k == total) s->all_done.set();
}
WEFT_HOST_DEVICE weft::task<void> tp_spawner(int first, int n, int calls, tp_state* s, int total) {
  for (int i = first; i < first + n; ++i)
    if (!weft::spawn(tp_caller(i, calls, s, total))) tp_fail(s, 1, total);
  co_return;
}
WEFT_HOST_DEVICE weft::task<int> tp_root(int n, int calls) {
  tp_state s;
  const int per = 256;
  for (int first = 0; first < n; first += per) {
    const int k = n - first < per ? n - first : per;
    if (!weft::spawn(tp_spawner(first, k, calls, &s, n))) tp_fail(&s, k, n);
  }
  co_await s.all_done.wait();
  co_return s.wrong;
}

void BM_host_call_throughput(benchmark::State& state) {
  const int tasks = 65536, calls = 16;
  for (auto _ : state) {
    weft::config c = cuda_config();
    c.reactor_threads = static_cast<unsigned>(state.range(0));
    c.mailbox_slots = 8192;
    weft::runtime rt(c);
    rt.register_host_fn(2, [](std::span<const std::uint64_t> a) { return a[0] + 1; });
    rt.block_on([] WEFT_HOST_DEVICE(int n, int k) { return tp_root(n, k); }, 1024, 1);  // warm-up
    const auto t0 = clock_type::now();
    const int wrong = rt.block_on([] WEFT_HOST_DEVICE(int n, int k) { return tp_root(n, k); }, tasks, calls);
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    if (wrong != 0) state.SkipWithError("host_call_throughput: wrong answers or failed spawns");
    state.SetIterationTime(s);
    state.counters["calls_per_s"] = double(tasks) * calls / s;
    state.counters["reactor_threads"] = double(c.reactor_threads);
  }
}
BENCHMARK(BM_host_call_throughput)->Arg(1)->Arg(2)->Arg(4)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------- io::read
constexpr std::size_t file_bytes = std::size_t{1} << 30;
constexpr std::size_t chunk_bytes = std::size_t{4} << 20;

std::string bench_file() {
  const char* dir = std::getenv("WEFT_BENCH_DIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/weft-bench-1g.bin";
  if (::access(path.c_str(), R_OK) != 0) {
    FILE* f = std::fopen(path.c_str(), "wb");
    std::vector<unsigned> block(chunk_bytes / sizeof(unsigned));
    for (std::size_t c = 0; f && c < file_bytes / chunk_bytes; ++c) {
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<unsigned>(c * 2654435761u + i);
      std::fwrite(block.data(), 1, chunk_bytes, f);
    }
    if (f) std::fclose(f);
  }
  return path;
}

WEFT_HOST_DEVICE weft::task<std::uint64_t> read_file_root(const char* path, char* dst) {
  auto f = co_await weft::io::open(path, O_RDONLY);
  if (!f) co_return 0;
  std::uint64_t total = 0;
  for (std::uint64_t off = 0; off < file_bytes; off += chunk_bytes) {
    auto n = co_await weft::io::read(*f, dst + off, chunk_bytes, off);
    if (!n || *n == 0) break;
    total += *n;
  }
  (void)co_await weft::io::close(*f);
  co_return total;
}

void BM_io_read(benchmark::State& state) {
  const std::string path = bench_file();
  char *dev_a = nullptr, *dev_b = nullptr, *path_dev = nullptr, *pinned = nullptr;
  WEFT_BENCH_CHECK(cudaMalloc(&dev_a, file_bytes));
  WEFT_BENCH_CHECK(cudaMalloc(&dev_b, file_bytes));
  WEFT_BENCH_CHECK(cudaMallocManaged(&path_dev, path.size() + 1));
  std::memcpy(path_dev, path.c_str(), path.size() + 1);
  WEFT_BENCH_CHECK(cudaHostAlloc(&pinned, chunk_bytes, cudaHostAllocDefault));
  for (auto _ : state) {
    // Warm the page cache, then the baseline: pread into a pinned buffer, cudaMemcpy.
    const int fd = ::open(path.c_str(), O_RDONLY);
    for (std::size_t off = 0; off < file_bytes; off += chunk_bytes)
      if (::pread(fd, pinned, chunk_bytes, static_cast<off_t>(off)) < 0) state.SkipWithError("pread");
    const auto b0 = clock_type::now();
    for (std::size_t off = 0; off < file_bytes; off += chunk_bytes) {
      if (::pread(fd, pinned, chunk_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(chunk_bytes))
        state.SkipWithError("pread");
      WEFT_BENCH_CHECK(cudaMemcpy(dev_b + off, pinned, chunk_bytes, cudaMemcpyHostToDevice));
    }
    const double base_s = std::chrono::duration<double>(clock_type::now() - b0).count();
    ::close(fd);
    double weft_s = 0;
    std::uint64_t got = 0;
    {
      weft::runtime rt(cuda_config());
      const auto t0 = clock_type::now();
      got = rt.block_on([] WEFT_HOST_DEVICE(const char* p, char* d) { return read_file_root(p, d); }, path_dev, dev_a);
      weft_s = std::chrono::duration<double>(clock_type::now() - t0).count();
    }
    if (got != file_bytes) state.SkipWithError("io_read: short");
    // Both copies must hold the file: compare 64 sampled 64 KiB blocks.
    std::vector<char> x(1 << 16), y(1 << 16);
    for (int s = 0; s < 64; ++s) {
      const std::size_t off = (file_bytes / 64) * s + 4096 * s;
      WEFT_BENCH_CHECK(cudaMemcpy(x.data(), dev_a + off, x.size(), cudaMemcpyDeviceToHost));
      WEFT_BENCH_CHECK(cudaMemcpy(y.data(), dev_b + off, y.size(), cudaMemcpyDeviceToHost));
      if (x != y) state.SkipWithError("io_read: data differs from the baseline's");
    }
    state.SetIterationTime(weft_s);
    state.counters["weft_GBps"] = double(file_bytes) / weft_s / 1e9;
    state.counters["baseline_GBps"] = double(file_bytes) / base_s / 1e9;
    state.counters["weft_over_baseline"] = base_s / weft_s;
  }
  cudaFree(dev_a);
  cudaFree(dev_b);
  cudaFree(path_dev);
  cudaFreeHost(pinned);
}
BENCHMARK(BM_io_read)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

#if WEFT_CUDA_COMPILE
__global__ void io_bench_roots_compile_for_device(const char* p, char* d, int n) {
  (void)call_loop(n);
  (void)stamped_loop(n, nullptr);
  (void)tp_root(n, n);
  (void)read_file_root(p, d);
}
#endif

}  // namespace

BENCHMARK_MAIN();
