// GPU benchmarks of the device executor, each beside its baseline in the same run.
//
//   scripts/gpu-bench   (on a GPU machine; writes JSON under $OUT)
//
// Every task is spawned (a real frame from the pool, a real queue entry) and every
// result is checked on the host, so neither heap elision nor dead-code elimination
// can turn a benchmark into an empty loop. Times are host wall-clock around block_on
// (manual time), so they include the submission and the completion round trip (a few
// microseconds against tens of milliseconds).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

#define WEFT_BENCH_CHECK(x)                                                                \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));    \
  } while (0)

weft::config bench_config(std::size_t pool, unsigned workers = 0) {
  weft::config c;
  c.kind = weft::backend::cuda;
  c.frame_pool_bytes = pool;
  c.inject_capacity = 1u << 24;
  c.workers = workers;
  return c;
}

// Device buffers are allocated before any runtime starts and freed after the last one
// stops: cudaFree (and other device-synchronizing calls) would wait for the persistent
// kernel, which only ends at shutdown. Baseline kernels run before the shared runtime
// starts too: it holds every warp slot, so nothing else could become resident.
struct bench_buffers {
  void* pp_slots = nullptr;
  unsigned long long* pp_lat = nullptr;
  float4* copy_in = nullptr;
  float4* copy_out = nullptr;
  double baseline_block_one_way_ns = 0;
};
bench_buffers g_buf;
constexpr int max_pp_rounds = 10000;
constexpr std::size_t copy_bytes = std::size_t{1} << 30;

weft::runtime& shared_runtime() {
  static weft::runtime rt(bench_config(std::size_t{4} << 30));
  return rt;
}

template <class F>
double seconds_of(F&& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Scheduler counters over one benchmark (differences of two snapshots).
void report_scheduler(benchmark::State& st, const weft::exec::device_stats& a, const weft::exec::device_stats& b) {
  const double batches = double(b.batches - a.batches);
  st.counters["lanes_per_batch"] = batches ? double(b.lanes_used - a.lanes_used) / batches : 0;
  st.counters["batches"] = batches;
  st.counters["stolen"] = double(b.stolen - a.stolen);
  st.counters["injected"] = double(b.injected - a.injected);
  st.counters["parks"] = double(b.parks - a.parks);
}

void report_executor(benchmark::State& st, weft::runtime& rt) {
  const auto k = rt.device()->report();
  st.counters["registers"] = k.registers;
  st.counters["local_bytes"] = static_cast<double>(k.local_bytes);
  st.counters["worker_warps"] = k.workers;
  st.counters["blocks_per_sm"] = k.blocks_per_sm;
}

// ------------------------------------------------------------------ tasks
WEFT_HOST_DEVICE weft::task<unsigned> yielder(unsigned id, int yields) {
  unsigned acc = id;
  for (int i = 0; i < yields; ++i) {
    acc = acc * 31 + static_cast<unsigned>(i);
    co_await weft::yield();
  }
  co_return acc;
}
unsigned yielder_reference(unsigned id, int yields) {
  unsigned acc = id;
  for (int i = 0; i < yields; ++i) acc = acc * 31 + static_cast<unsigned>(i);
  return acc;
}

WEFT_HOST_DEVICE weft::task<unsigned> tiny(unsigned i) { co_return i & 1u; }

// Spawns [lo, hi) as a binary tree down to leaves of 16, so spawning is parallel too.
// yields < 0: tiny tasks; else yielders.
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

// ------------------------------------------------------------------ yield_many
void BM_yield_many(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const unsigned tasks = static_cast<unsigned>(st.range(0));
  const int yields = static_cast<int>(st.range(1));  // 0: spawn and join only (the overhead)
  unsigned want = 0;
  for (unsigned i = 0; i < tasks; ++i) want += yielder_reference(i, yields);
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  const auto before = rt.device()->stats();
  for (auto _ : st) {
    unsigned got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n, int y) { return spawn_tree(0, n, y); }, tasks, yields);
    }));
    if (got != want) st.SkipWithError("wrong sum");
  }
  st.counters["resumes_per_s"] =
      benchmark::Counter(double(tasks) * (yields + 1) * st.iterations(), benchmark::Counter::kIsRate);
  report_scheduler(st, before, rt.device()->stats());
  report_executor(st, rt);
}

// ------------------------------------------------------------------ spawn_many
void BM_spawn_many(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const unsigned tasks = static_cast<unsigned>(st.range(0));
  const auto before = rt.device()->stats();
  for (auto _ : st) {
    unsigned got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n) { return spawn_tree(0, n, -1); }, tasks);
    }));
    if (got != tasks / 2) st.SkipWithError("wrong sum");
  }
  report_scheduler(st, before, rt.device()->stats());
  st.counters["tasks_per_s"] = benchmark::Counter(double(tasks) * st.iterations(), benchmark::Counter::kIsRate);
}

// ------------------------------------------------------------------ ping_pong
WEFT_HOST_DEVICE inline unsigned long long now_ns() {
#if WEFT_DEVICE_PASS
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return 0;
#endif
}

struct pp_slot {
  weft::event ev;
  unsigned long long sent_at;
};

// Side 0 sets slot 2r+1 and waits on 2r; side 1 waits on 2r+1 and sets 2r. Each wait
// records now - sent_at: one-way latency from set() to the waiter running again.
WEFT_HOST_DEVICE weft::task<int> pinger(pp_slot* slots, unsigned long long* lat, int rounds, int side) {
  for (int r = 0; r < rounds; ++r) {
    pp_slot& mine = slots[2 * r + side];
    pp_slot& theirs = slots[2 * r + 1 - side];
    if (side == 1) {
      co_await mine.ev.wait();
      lat[2 * r + side] = now_ns() - mine.sent_at;
    }
    theirs.sent_at = now_ns();
    theirs.ev.set();
    if (side == 0) {
      co_await mine.ev.wait();
      lat[2 * r + side] = now_ns() - mine.sent_at;
    }
  }
  co_return rounds;
}

WEFT_HOST_DEVICE weft::task<int> ping_pong_root(pp_slot* slots, unsigned long long* lat, int rounds) {
  for (int i = 0; i < 2 * rounds; ++i) ::new (&slots[i]) pp_slot{weft::event{}, 0};
  auto a = weft::spawn(pinger(slots, lat, rounds, 0));
  auto b = weft::spawn(pinger(slots, lat, rounds, 1));
  const int x = co_await std::move(a);
  const int y = co_await std::move(b);
  co_return x + y;
}

// The floor: two blocks of one kernel bounce a flag through global memory.
__global__ void block_ping_pong(volatile unsigned* flag, int rounds, unsigned long long* out) {
  if (threadIdx.x != 0) return;
  const unsigned me = blockIdx.x;
  const unsigned long long t0 = now_ns();
  for (int r = 0; r < rounds; ++r) {
    const unsigned want = 2 * r + me;
    while (*flag != want) {
    }
    __threadfence();
    *flag = want + 1;
  }
  if (me == 0) *out = now_ns() - t0;
}

// The floor, measured once before any runtime starts (see bench_buffers).
double measure_block_ping_pong(int rounds) {
  unsigned* flag = nullptr;
  unsigned long long* out = nullptr;
  WEFT_BENCH_CHECK(cudaMalloc(&flag, sizeof(unsigned)));
  WEFT_BENCH_CHECK(cudaMalloc(&out, sizeof(unsigned long long)));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    WEFT_BENCH_CHECK(cudaMemset(flag, 0, sizeof(unsigned)));
    block_ping_pong<<<2, 32>>>(flag, rounds, out);
    unsigned long long total = 0;
    WEFT_BENCH_CHECK(cudaMemcpy(&total, out, sizeof total, cudaMemcpyDeviceToHost));
    best = std::min(best, double(total) / (2.0 * rounds));
  }
  cudaFree(flag);
  cudaFree(out);
  return best;
}

void BM_ping_pong(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const int rounds = static_cast<int>(st.range(0));
  auto* slots = static_cast<pp_slot*>(g_buf.pp_slots);
  unsigned long long* lat = g_buf.pp_lat;
  std::vector<unsigned long long> host(2 * rounds), all;
  auto s = static_cast<cudaStream_t>(rt.device()->side_stream());
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  const auto before = rt.device()->stats();
  for (auto _ : st) {
    int got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(pp_slot* s, unsigned long long* l, int n) { return ping_pong_root(s, l, n); },
                        slots, lat, rounds);
    }));
    if (got != 2 * rounds) st.SkipWithError("wrong count");
    WEFT_BENCH_CHECK(cudaMemcpyAsync(host.data(), lat, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
    WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
    all.insert(all.end(), host.begin() + 2, host.end());  // the first round includes start-up
  }
  std::sort(all.begin(), all.end());
  st.counters["one_way_p50_ns"] = double(all[all.size() / 2]);
  st.counters["one_way_p99_ns"] = double(all[all.size() * 99 / 100]);
  st.counters["baseline_block_one_way_ns"] = g_buf.baseline_block_one_way_ns;
  st.counters["p50_over_baseline"] = double(all[all.size() / 2]) / g_buf.baseline_block_one_way_ns;
  report_scheduler(st, before, rt.device()->stats());
}

// ------------------------------------------------------------------ idle cost
__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = in[i];
}

// Median time of `reps` copies of `bytes` on stream s (events).
double copy_ms(const float4* in, float4* out, std::size_t bytes, cudaStream_t s, int reps) {
  std::vector<float> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a, s);
    copy_kernel<<<sms * 6, 256, 0, s>>>(in, out, bytes / sizeof(float4));  // fits beside the runtime
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void BM_idle_cost(benchmark::State& st) {
  float4* in = g_buf.copy_in;
  float4* out = g_buf.copy_out;
  cudaStream_t s;
  WEFT_BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const unsigned workers = static_cast<unsigned>(st.range(0)) * sms;  // worker warps per SM x SMs
  double solo = 0, beside = 0;
  for (auto _ : st) {
    solo = copy_ms(in, out, copy_bytes, s, 20);
    weft::runtime rt(bench_config(std::size_t{64} << 20, workers));
    if (rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 7; }) != 7) st.SkipWithError("runtime");
    beside = copy_ms(in, out, copy_bytes, s, 20);  // the runtime is up, idle, parked
    st.SetIterationTime(beside / 1e3);
    st.counters["worker_warps"] = rt.workers();
  }
  st.counters["solo_GBps"] = 2.0 * double(copy_bytes) / (solo * 1e6);
  st.counters["beside_idle_runtime_GBps"] = 2.0 * double(copy_bytes) / (beside * 1e6);
  st.counters["kept_fraction"] = solo / beside;
  cudaStreamDestroy(s);
}

// ------------------------------------------------------------------ capacity
WEFT_HOST_DEVICE weft::task<void> parked_until(weft::event& go, unsigned& pending, weft::event& all_done) {
  co_await go.wait();
  if (weft::detail::device_atomic<unsigned>(pending).fetch_sub(1) == 1) all_done.set();
}

struct fill_state {
  weft::event go;
  unsigned started = 0;
  unsigned reported = 0;  // fillers that hit the dry pool
};

// Spawns parked tasks until the pool runs dry, then waits for `go` and releases them.
// Each filler has its own event and count, so no word is shared by millions of tasks.
WEFT_HOST_DEVICE weft::task<void> filler(fill_state& s) {
  weft::event mine, all_done;
  unsigned pending = 1, started = 0;
  for (;;) {
    weft::detail::device_atomic<unsigned>(pending).fetch_add(1);
    weft::join_handle<void> h = weft::spawn(parked_until(mine, pending, all_done));
    if (!h) {
      weft::detail::device_atomic<unsigned>(pending).fetch_sub(1);
      break;
    }
    ++started;
  }
  weft::detail::device_atomic<unsigned>(s.started).fetch_add(started);
  weft::detail::device_atomic<unsigned>(s.reported).fetch_add(1);
  co_await s.go.wait();
  mine.set();
  if (weft::detail::device_atomic<unsigned>(pending).fetch_sub(1) != 1) co_await all_done.wait();
}

// 1024 fillers at once; returns how many tasks were suspended together at the peak.
WEFT_HOST_DEVICE weft::task<unsigned> fill_pool() {
  fill_state s;
  weft::join_handle<void> fs[1024];
  unsigned fillers = 0;
  for (int i = 0; i < 1024; ++i) {
    fs[i] = weft::spawn(filler(s));
    fillers += fs[i].valid();
  }
  // Every filler has hit the dry pool: this is the peak. Then release them all.
  while (weft::detail::device_atomic<unsigned>(s.reported).load() < fillers) co_await weft::yield();
  s.go.set();
  for (int i = 0; i < 1024; ++i) (void)co_await weft::try_await(std::move(fs[i]));
  co_return s.started;
}

void BM_suspended_per_GiB(benchmark::State& st) {
  unsigned got = 0;
  for (auto _ : st) {
    weft::runtime rt(bench_config(std::size_t{1} << 30));
    st.SetIterationTime(seconds_of([&] { got = rt.block_on([] WEFT_HOST_DEVICE() { return fill_pool(); }); }));
  }
  st.counters["suspended_tasks_in_1GiB"] = got;
}

// Registration order is run order: the two that make their own runtimes first,
// before the shared runtime (which holds every warp slot) starts.
BENCHMARK(BM_idle_cost)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_suspended_per_GiB)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_yield_many)->Args({1 << 20, 64})->Args({1 << 20, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_spawn_many)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ping_pong)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.pp_slots, sizeof(pp_slot) * 2 * max_pp_rounds));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.pp_lat, sizeof(unsigned long long) * 2 * max_pp_rounds));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.copy_in, copy_bytes));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.copy_out, copy_bytes));
  WEFT_BENCH_CHECK(cudaMemset(g_buf.copy_in, 1, copy_bytes));
  g_buf.baseline_block_one_way_ns = measure_block_ping_pong(max_pp_rounds);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  shared_runtime().shutdown();
  cudaFree(g_buf.pp_slots);
  cudaFree(g_buf.pp_lat);
  cudaFree(g_buf.copy_in);
  cudaFree(g_buf.copy_out);
  return 0;
}
