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
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <weft/weft.hpp>

#include "bench_support.hpp"

namespace {

using weft_bench::clock_type;

// WEFT_BENCH_WORKERS and WEFT_BENCH_RING override the shared runtime's worker warps and
// ring capacity, WEFT_BENCH_PARK_MAX_NS every runtime's longest nap (for sweeps; unset:
// every warp slot, the default ring, the default nap).
unsigned env_or(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

weft::config bench_config(std::size_t pool, unsigned workers = 0) {
  weft::config c;
  c.kind = weft::backend::cuda;
  c.frame_pool_bytes = pool;
  c.inject_capacity = 1u << 24;
  c.workers = workers;
  c.park_max_ns = env_or("WEFT_BENCH_PARK_MAX_NS", c.park_max_ns);
  return c;
}

// BM_block_on_idle's baselines (measure_host_trips), in microseconds, sorted.
struct host_trip_sample {
  std::vector<double> launch_us;  // launch an empty kernel, cudaStreamSynchronize
  std::vector<double> echo_us;    // pinned_echo's round trip
};

// Device buffers are allocated before any runtime starts and freed after the last one
// stops: cudaFree (and other device-synchronizing calls) would wait for the persistent
// kernel, which only ends at shutdown. Baseline kernels run before the shared runtime
// starts too: it holds every warp slot, so nothing else could become resident.
struct bench_buffers {
  void* pp_slots = nullptr;
  unsigned long long* pp_lat = nullptr;
  unsigned* pp_sm = nullptr;  // ping_pong_pinned: each side's SM
  float4* copy_in = nullptr;
  float4* copy_out = nullptr;
  double baseline_block_one_way_ns = 0;
  float* chain_a = nullptr;  // chained_bulk's two buffers
  float* chain_b = nullptr;
  double chain_stream_us = 0, chain_graph_us = 0;
  bool chain_graph_same = false;
  std::vector<float> chain_reference;  // the stream baseline's result
  unsigned* decision_v = nullptr;
  double decision_host_us = 0;
  unsigned decision_reference = 0;
  host_trip_sample host_trips;
};
bench_buffers g_buf;
constexpr int max_pp_rounds = 10000;
constexpr std::size_t copy_bytes = std::size_t{1} << 30;

weft::runtime& shared_runtime() {
  static weft::runtime rt([] {
    weft::config c = bench_config(std::size_t{4} << 30, env_or("WEFT_BENCH_WORKERS", 0));
    c.local_queue_capacity = env_or("WEFT_BENCH_RING", c.local_queue_capacity);
    return c;
  }());
  return rt;
}

double g_timed_s = 0;  // every seconds_of so far (report_scheduler's nap fraction)

template <class F>
double seconds_of(F&& f) {
  const auto t0 = clock_type::now();
  f();
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  g_timed_s += s;
  return s;
}

// Scheduler counters over one benchmark (differences of two snapshots).
// nap_fraction: the share of the timed worker-warp time spent napping while parked
// (`timed_s`: g_timed_s when `a` was taken).
void report_scheduler(benchmark::State& st, const weft::exec::device_stats& a, const weft::exec::device_stats& b,
                      weft::runtime& rt, double timed_s) {
  const double warp_ns = double(rt.device()->report().workers) * (g_timed_s - timed_s) * 1e9;
  st.counters["nap_fraction"] = warp_ns > 0 ? double(b.napped_ns - a.napped_ns) / warp_ns : 0;
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

// The same tree with each leaf's tasks spawned into a weft::spawn_group and joined with
// one wait (their frames made by the lanes that run them); with `tree_groups`, each
// node's two halves are a group of 2 as well, instead of a spawn and an inline await.
// Children that failed (the frame pool's out_of_memory) are counted apart from the sum,
// so that the host tells a pool that ran dry from a wrong answer.
struct group_sum {
  unsigned sum, failed;
};
WEFT_HOST_DEVICE weft::task<group_sum> group_tree(unsigned lo, unsigned hi, bool tree_groups) {
  if (hi - lo <= 16) {
    weft::spawn_group<unsigned> g(16);
    group_sum r{0, 0};
    for (unsigned i = lo; i < hi; ++i)
      if (!g.spawn([] WEFT_HOST_DEVICE(unsigned k) { return tiny(k); }, i)) ++r.failed;
    r.failed += co_await g.join();
    for (unsigned i = 0; i < g.size(); ++i) r.sum += g.outcome(i).has_value() ? *g.outcome(i) : 0u;
    co_return r;
  }
  const unsigned mid = lo + (hi - lo) / 2;
  auto node = [] WEFT_HOST_DEVICE(unsigned a, unsigned b, bool t) { return group_tree(a, b, t); };
  group_sum left{0, mid - lo};  // all of it failed, unless it ran
  group_sum right{0, 0};
  if (tree_groups) {
    weft::spawn_group<group_sum> halves(1);
    const bool started = halves.spawn(node, lo, mid, tree_groups).has_value();
    right = co_await group_tree(mid, hi, tree_groups);
    co_await halves.join();
    if (started && halves.outcome(0).has_value()) left = *halves.outcome(0);
  } else {
    auto h = weft::spawn(group_tree(lo, mid, tree_groups));
    right = co_await group_tree(mid, hi, tree_groups);
    auto l = co_await weft::try_await(std::move(h));
    if (l.has_value()) left = *l;
  }
  co_return group_sum{left.sum + right.sum, left.failed + right.failed};
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
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    unsigned got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n, int y) { return spawn_tree(0, n, y); }, tasks, yields);
    }));
    if (got != want) st.SkipWithError("wrong sum");
  }
  st.counters["resumes_per_s"] =
      benchmark::Counter(double(tasks) * (yields + 1) * st.iterations(), benchmark::Counter::kIsRate);
  report_scheduler(st, before, rt.device()->stats(), rt, timed_before);
  report_executor(st, rt);
}

// ------------------------------------------------------------------ spawn_many
void BM_spawn_many(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const unsigned tasks = static_cast<unsigned>(st.range(0));
  const auto before = rt.device()->stats();
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    unsigned got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n) { return spawn_tree(0, n, -1); }, tasks);
    }));
    if (got != tasks / 2) st.SkipWithError("wrong sum");
  }
  report_scheduler(st, before, rt.device()->stats(), rt, timed_before);
  st.counters["tasks_per_s"] = benchmark::Counter(double(tasks) * st.iterations(), benchmark::Counter::kIsRate);
}

// spawn_many through spawn_group: the same 10M tiny tasks, each a coroutine with its own
// frame, spawned and joined; arg 1: the tree's halves as groups too.
void BM_spawn_many_group(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const unsigned tasks = static_cast<unsigned>(st.range(0));
  const bool tree_groups = st.range(1) != 0;
  const auto before = rt.device()->stats();
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    group_sum got{0, 0};
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned n, bool t) { return group_tree(0, n, t); }, tasks, tree_groups);
    }));
    if (got.failed != 0) {
      std::fprintf(stderr, "spawn_many_group: %u of %u children failed (the frame pool ran dry)\n", got.failed, tasks);
      st.SkipWithError("children failed: out of memory");
      break;
    }
    if (got.sum != tasks / 2) st.SkipWithError("wrong sum");
  }
  report_scheduler(st, before, rt.device()->stats(), rt, timed_before);
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
// The scheduler puts a woken task in its waker's warp, so both pingers end up as two
// lanes of one warp, where they usually run on in one batch: a wait finds its event set
// and does not suspend (batches_per_hop ~ 0). What this measures is that hand-over, not
// a hop between SMs (docs/benchmarks.md, eleventh session).
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

// ping_pong as the issue sets it: the two tasks on different SMs. Each pinger is pinned
// (weft::spawn_pinned) to a worker warp in a different block, so every hop crosses
// warps, and `away` counts the hops it ran off its home (0 expected). Each side writes
// its SM (%smid) to sm[side] at the end, for the bench to check they differ.
WEFT_HOST_DEVICE inline unsigned current_sm() {
#if WEFT_DEVICE_PASS
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
#else
  return 0;
#endif
}
// gap_ns > 0 (pinned_parked_wake): side 0 sleeps that long before each set.
WEFT_HOST_DEVICE weft::task<int> pinned_pinger(pp_slot* slots, unsigned long long* lat, int rounds, int side,
                                               unsigned* sm, unsigned long long gap_ns) {
  const std::uint32_t home = weft::this_worker();
  int away = 0;
  for (int r = 0; r < rounds; ++r) {
    pp_slot& mine = slots[2 * r + side];
    pp_slot& theirs = slots[2 * r + 1 - side];
    if (side == 1) {
      co_await mine.ev.wait();
      lat[2 * r + side] = now_ns() - mine.sent_at;
    } else if (gap_ns != 0) {
      co_await weft::sleep_for(gap_ns);
    }
    theirs.sent_at = now_ns();
    theirs.ev.set();
    if (side == 0) {
      co_await mine.ev.wait();
      lat[2 * r + side] = now_ns() - mine.sent_at;
    }
    away += weft::this_worker() != home;
  }
  sm[side] = current_sm();
  co_return away * 1000000 + rounds;
}

// Worker 1 (block 0; worker 0 also polls the host) and the second warp of the block in
// the middle of the grid.
WEFT_HOST_DEVICE weft::task<int> pinned_ping_pong_root(pp_slot* slots, unsigned long long* lat, int rounds,
                                                       unsigned* sm, unsigned long long gap_ns) {
  for (int i = 0; i < 2 * rounds; ++i) ::new (&slots[i]) pp_slot{weft::event{}, 0};
  const std::uint32_t n = weft::worker_count();
  const std::uint32_t far = n / 2 / 4 * 4 + 1;
  auto a = weft::spawn_pinned(1, pinned_pinger(slots, lat, rounds, 0, sm, gap_ns));
  auto b = weft::spawn_pinned(far < n ? far : n - 1, pinned_pinger(slots, lat, rounds, 1, sm, gap_ns));
  const int x = co_await std::move(a);
  const int y = co_await std::move(b);
  co_return x + y;
}

// pinned_first_wake: every 2 ms of an idle runtime (its warps' naps grown to
// park_max_ns), a task is pinned to a warp that holds no pinned task, in another block
// each round; lat[r]: from just before the spawn to the task's first instruction. A
// warp napping when its first pinned task arrives sees it when that nap ends.
// lat[rounds + r]: from the sleep's deadline to the spawn; lat[2 rounds + r]: from the
// deadline to the task's first instruction. (The warps' naps grow in step, so the warp
// whose nap wakes the spawner and the pinned task's warp wake at nearly the same
// moments: a spawner that reaches its spawn sooner after a nap's end waits longer for
// the next one, and the first row alone can read worse for a faster spawner.)
WEFT_HOST_DEVICE weft::task<int> stamp_start(unsigned long long* at) {
  *at = now_ns();
  co_return 1;
}
WEFT_HOST_DEVICE weft::task<int> first_wake_root(unsigned long long* lat, int rounds) {
  const std::uint32_t n = weft::worker_count();
  int started = 0;
  for (int r = 0; r < rounds; ++r) {
    const unsigned long long due = now_ns() + 2000000;
    co_await weft::sleep_for(2000000);
    unsigned long long at = 0;
    const std::uint32_t home = (n / 2 / 4 * 4 + 1 + 4 * static_cast<std::uint32_t>(r)) % n;
    const unsigned long long t0 = now_ns();
    started += co_await weft::spawn_pinned(home == 0 ? 1 : home, stamp_start(&at));
    lat[r] = at - t0;
    lat[rounds + r] = t0 - due;
    lat[2 * rounds + r] = at - due;
  }
  co_return started;
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

// Baselines of BM_block_on_idle: the host's round trip to the GPU and back for a trivial
// piece of work, each after host_idle_gap of idle, as block_on's is. Measured once before
// any runtime starts (it holds every warp slot, so no other kernel could run beside it).
constexpr auto host_idle_gap = std::chrono::milliseconds(2);
constexpr int host_trip_samples = 60;

__global__ void empty_kernel() {}

// The floor: a persistent one-thread kernel that spins on a word in pinned host memory
// and echoes each request; the host spins on the echo. (No nap: no persistent design that
// lets its GPU idle can answer sooner.)
__global__ void pinned_echo(unsigned* req, unsigned* ack, int rounds) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> in(*req), out(*ack);
  for (int r = 1; r <= rounds; ++r) {
    while (in.load(cuda::std::memory_order_acquire) != static_cast<unsigned>(r)) {
    }
    out.store(static_cast<unsigned>(r), cuda::std::memory_order_release);
  }
}

host_trip_sample measure_host_trips() {
  host_trip_sample out;
  cudaStream_t s;
  WEFT_BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  empty_kernel<<<1, 32, 0, s>>>();  // the module loaded, the first launch's costs paid
  WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < host_trip_samples; ++i) {
    std::this_thread::sleep_for(host_idle_gap);
    out.launch_us.push_back(1e6 * seconds_of([&] {
      empty_kernel<<<1, 32, 0, s>>>();
      WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
    }));
  }
  unsigned* words = nullptr;  // [0] request, [1] echo
  WEFT_BENCH_CHECK(cudaHostAlloc(&words, 2 * sizeof(unsigned), cudaHostAllocMapped));
  words[0] = words[1] = 0;
  unsigned* dev_words = nullptr;
  WEFT_BENCH_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_words), words, 0));
  pinned_echo<<<1, 1, 0, s>>>(dev_words, dev_words + 1, host_trip_samples);
  WEFT_BENCH_CHECK(cudaGetLastError());
  std::atomic_ref<unsigned> req(words[0]), ack(words[1]);
  for (int r = 1; r <= host_trip_samples; ++r) {
    std::this_thread::sleep_for(host_idle_gap);
    const auto give_up = clock_type::now() + std::chrono::seconds(5);
    out.echo_us.push_back(1e6 * seconds_of([&] {
      req.store(static_cast<unsigned>(r), std::memory_order_release);
      while (ack.load(std::memory_order_acquire) != static_cast<unsigned>(r)) {
        if (clock_type::now() > give_up) {  // the kernel did not start, or died: never hang the run
          std::fprintf(stderr, "pinned_echo: no echo for request %d within 5 s (its stream: %s)\n", r,
                       cudaGetErrorString(cudaStreamQuery(s)));
          std::exit(1);
        }
      }
    }));
  }
  WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
  WEFT_BENCH_CHECK(cudaFreeHost(words));
  WEFT_BENCH_CHECK(cudaStreamDestroy(s));
  std::sort(out.launch_us.begin(), out.launch_us.end());
  std::sort(out.echo_us.begin(), out.echo_us.end());
  return out;
}

// The latencies a run wrote to the device buffer `lat`, into `host` (its size says how
// many), on the runtime's side stream s.
void fetch_latencies(cudaStream_t s, const unsigned long long* lat, std::vector<unsigned long long>& host) {
  WEFT_BENCH_CHECK(cudaMemcpyAsync(host.data(), lat, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
  WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
}

// The value at fraction num/den of a sorted sample (num/den = 1/2: the median).
template <class T>
double at_fraction(const std::vector<T>& sorted, std::size_t num, std::size_t den) {
  return double(sorted[sorted.size() * num / den]);
}

// The tail of a sorted latency sample (ns): its mean, the fraction of hops over 4 us (a
// hop that went through a park and a wake-up rather than a poll) and their median.
void report_tail(benchmark::State& st, const std::vector<unsigned long long>& sorted) {
  double sum = 0;
  std::vector<unsigned long long> slow;
  for (unsigned long long v : sorted) {
    sum += double(v);
    if (v > 4000) slow.push_back(v);
  }
  st.counters["one_way_mean_ns"] = sum / double(sorted.size());
  st.counters["slow_hop_fraction"] = double(slow.size()) / double(sorted.size());
  st.counters["slow_hop_p50_ns"] = slow.empty() ? 0.0 : at_fraction(slow, 1, 2);
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
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    int got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(pp_slot* s, unsigned long long* l, int n) { return ping_pong_root(s, l, n); },
                        slots, lat, rounds);
    }));
    if (got != 2 * rounds) st.SkipWithError("wrong count");
    fetch_latencies(s, lat, host);
    all.insert(all.end(), host.begin() + 2, host.end());  // the first round includes start-up
  }
  std::sort(all.begin(), all.end());
  st.counters["one_way_p50_ns"] = at_fraction(all, 1, 2);
  st.counters["one_way_p99_ns"] = at_fraction(all, 99, 100);
  report_tail(st, all);
  st.counters["baseline_block_one_way_ns"] = g_buf.baseline_block_one_way_ns;
  st.counters["p50_over_baseline"] = at_fraction(all, 1, 2) / g_buf.baseline_block_one_way_ns;
  const auto after = rt.device()->stats();
  report_scheduler(st, before, after, rt, timed_before);
  // ~0: the two tasks sat in one batch, on two lanes of one warp, and each found its event
  // already set (no hop went through a queue); ~1: every hop suspended and was requeued.
  st.counters["batches_per_hop"] = double(after.batches - before.batches) / (2.0 * rounds * st.iterations());
}

void BM_ping_pong_pinned(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const int rounds = static_cast<int>(st.range(0));
  auto* slots = static_cast<pp_slot*>(g_buf.pp_slots);
  unsigned long long* lat = g_buf.pp_lat;
  std::vector<unsigned long long> host(2 * rounds), all;
  unsigned sms[2] = {0, 0};
  auto s = static_cast<cudaStream_t>(rt.device()->side_stream());
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  const auto before = rt.device()->stats();
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    int got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(pp_slot* s, unsigned long long* l, int n,
                                            unsigned* sm) { return pinned_ping_pong_root(s, l, n, sm, 0); },
                        slots, lat, rounds, g_buf.pp_sm);
    }));
    if (got != 2 * rounds) st.SkipWithError("a hop ran off its pinned worker, or a wrong count");
    WEFT_BENCH_CHECK(cudaMemcpyAsync(sms, g_buf.pp_sm, sizeof sms, cudaMemcpyDeviceToHost, s));
    fetch_latencies(s, lat, host);  // its synchronize covers the copy above
    if (sms[0] == sms[1]) st.SkipWithError("the two pingers ran on one SM");
    all.insert(all.end(), host.begin() + 2, host.end());  // the first round includes start-up
  }
  std::sort(all.begin(), all.end());
  st.counters["one_way_p50_ns"] = at_fraction(all, 1, 2);
  st.counters["one_way_p99_ns"] = at_fraction(all, 99, 100);
  report_tail(st, all);
  st.counters["baseline_block_one_way_ns"] = g_buf.baseline_block_one_way_ns;
  st.counters["p50_over_baseline"] = at_fraction(all, 1, 2) / g_buf.baseline_block_one_way_ns;
  st.counters["sm_a"] = sms[0];
  st.counters["sm_b"] = sms[1];
  const auto after = rt.device()->stats();
  report_scheduler(st, before, after, rt, timed_before);
  // ~0: each wait found its event set while it polled in place (no batch per hop); ~1:
  // every hop parked the waiter and woke it through its warp's inbox.
  st.counters["batches_per_hop"] = double(after.batches - before.batches) / (2.0 * rounds * st.iterations());
}

// A wake-up of a pinned task whose home warp has parked: arg 0 is the setter's gap in us.
// It runs pinned_ping_pong_root with that gap: side 0 sleeps gap_ns before each set,
// longer than an in-place wait lasts (20 us), so side 1 has parked and its home warp naps
// when the wake-up comes; the wake goes to that warp's inbox, which it reads once per
// nap. Side 1 answers at once. lat[2r + 1]: set() to side 1 running again (what the
// home's nap adds to a wake-up).
void BM_pinned_parked_wake(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const int rounds = 100;
  const unsigned long long gap_ns = static_cast<unsigned long long>(st.range(0)) * 1000;
  auto* slots = static_cast<pp_slot*>(g_buf.pp_slots);
  unsigned long long* lat = g_buf.pp_lat;
  std::vector<unsigned long long> host(2 * rounds), woken, answers;
  auto s = static_cast<cudaStream_t>(rt.device()->side_stream());
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  const auto before = rt.device()->stats();
  const double timed_before = g_timed_s;
  for (auto _ : st) {
    int got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(pp_slot* s, unsigned long long* l, int n, unsigned* sm,
                                            unsigned long long gap) { return pinned_ping_pong_root(s, l, n, sm, gap); },
                        slots, lat, rounds, g_buf.pp_sm, gap_ns);
    }));
    if (got != 2 * rounds) st.SkipWithError("a hop ran off its pinned worker, or a wrong count");
    fetch_latencies(s, lat, host);
    for (int r = 1; r < rounds; ++r) {  // round 0 includes start-up
      woken.push_back(host[2 * r + 1]);
      answers.push_back(host[2 * r]);
    }
  }
  std::sort(woken.begin(), woken.end());
  std::sort(answers.begin(), answers.end());
  st.counters["parked_wake_p50_ns"] = at_fraction(woken, 1, 2);
  st.counters["parked_wake_p99_ns"] = at_fraction(woken, 99, 100);
  st.counters["parked_wake_max_ns"] = double(woken.back());
  st.counters["answer_p50_ns"] = at_fraction(answers, 1, 2);
  report_scheduler(st, before, rt.device()->stats(), rt, timed_before);
}

// The first wake-up of a warp that was napping with no pinned task: see first_wake_root.
void BM_pinned_first_wake(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const int rounds = 20;
  unsigned long long* lat = g_buf.pp_lat;
  std::vector<unsigned long long> host(3 * rounds), all, late, whole;
  auto s = static_cast<cudaStream_t>(rt.device()->side_stream());
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  for (auto _ : st) {
    int got = 0;
    st.SetIterationTime(seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned long long* l, int n) { return first_wake_root(l, n); }, lat,
                        rounds);
    }));
    if (got != rounds) st.SkipWithError("wrong count");
    fetch_latencies(s, lat, host);
    all.insert(all.end(), host.begin(), host.begin() + rounds);
    late.insert(late.end(), host.begin() + rounds, host.begin() + 2 * rounds);
    whole.insert(whole.end(), host.begin() + 2 * rounds, host.end());
  }
  std::sort(all.begin(), all.end());
  std::sort(late.begin(), late.end());
  std::sort(whole.begin(), whole.end());
  st.counters["first_wake_p50_ns"] = at_fraction(all, 1, 2);
  st.counters["first_wake_p90_ns"] = at_fraction(all, 9, 10);
  st.counters["first_wake_max_ns"] = double(all.back());
  st.counters["spawner_after_deadline_p50_ns"] = at_fraction(late, 1, 2);
  st.counters["started_after_deadline_p50_ns"] = at_fraction(whole, 1, 2);
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

// A bandwidth-bound kernel on another stream beside an idle runtime of range(0) warps per
// SM. pin_every_worker: each worker warp is first made home to a pinned root that parks on
// an event nobody sets, so every warp naps at most home_park_max_ns (2 us; worker 0 1 us)
// instead of park_max_ns: the idle cost of long-lived pinned servers on every warp.
void idle_cost(benchmark::State& st, bool pin_every_worker) {
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
    if (pin_every_worker) {
      auto parks = [] WEFT_HOST_DEVICE() -> weft::task<int> {
        weft::event never;
        co_await never.wait();  // destroyed by the runtime's shutdown
        co_return 0;
      };
      for (std::uint32_t w = 0; w < rt.workers(); ++w) (void)rt.spawn_pinned(w, parks);  // handles dropped
      std::uint64_t live = 0;
      for (int i = 0; i < 2000 && live < rt.workers(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        live = rt.device()->stats().pinned_live;
      }
      if (live != rt.workers()) st.SkipWithError("not every worker holds a pinned task");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past their in-place waits: parked
      st.counters["pinned_live"] = double(live);
    }
    beside = copy_ms(in, out, copy_bytes, s, 20);  // the runtime is up, idle, parked
    st.SetIterationTime(beside / 1e3);
    st.counters["worker_warps"] = rt.workers();
  }
  st.counters["solo_GBps"] = 2.0 * double(copy_bytes) / (solo * 1e6);
  st.counters["beside_idle_runtime_GBps"] = 2.0 * double(copy_bytes) / (beside * 1e6);
  st.counters["kept_fraction"] = solo / beside;
  cudaStreamDestroy(s);
}
void BM_idle_cost(benchmark::State& st) { idle_cost(st, false); }
void BM_idle_cost_pinned_homes(benchmark::State& st) { idle_cost(st, true); }

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

// ------------------------------------------------------------------ chained_bulk
// One block's worth per step (256 elements), each step reading the previous step's
// output: dst[i] = src[i] * 0.999 + src[(i + 1) % 256]. weft: one task awaits `steps`
// bulk() calls. Baselines (measured in main before the runtime starts): the same kernel
// launched `steps` times in one stream, and as CUDA graphs of 1000 launches.
constexpr int chain_n = 256;
constexpr int chain_steps = 10000;

WEFT_HOST_DEVICE inline void chain_step(const float* src, float* dst, std::size_t i) {
  dst[i] = src[i] * 0.999f + src[(i + 1) % chain_n];
}
__global__ void chain_kernel(const float* src, float* dst) { chain_step(src, dst, threadIdx.x); }

WEFT_HOST_DEVICE weft::task<int> chained_bulk_root(float* a, float* b, int steps) {
  for (int s = 0; s < steps; ++s) {
    const float* src = s % 2 ? b : a;
    float* dst = s % 2 ? a : b;
    co_await weft::bulk(chain_n, [=] WEFT_HOST_DEVICE(std::size_t i) { chain_step(src, dst, i); });
  }
  co_return steps;
}

void chain_reset(float* a) {
  std::vector<float> init(chain_n);
  for (int i = 0; i < chain_n; ++i) init[i] = float(i % 7) * 0.25f;
  WEFT_BENCH_CHECK(cudaMemcpy(a, init.data(), sizeof(float) * chain_n, cudaMemcpyHostToDevice));
}
std::vector<float> chain_result(const float* a) {
  std::vector<float> r(chain_n);
  WEFT_BENCH_CHECK(cudaMemcpy(r.data(), a, sizeof(float) * chain_n, cudaMemcpyDeviceToHost));
  return r;
}

// Baselines: per-step microseconds of stream launches and of graph launches.
void measure_chain_baselines() {
  cudaStream_t s;
  WEFT_BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *a = g_buf.chain_a, *b = g_buf.chain_b;
  auto launch_all = [&](int steps) {
    for (int k = 0; k < steps; ++k) chain_kernel<<<1, chain_n, 0, s>>>(k % 2 ? b : a, k % 2 ? a : b);
  };
  chain_reset(a);
  launch_all(1000);  // warm-up
  WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
  chain_reset(a);
  g_buf.chain_stream_us = 1e6 * seconds_of([&] {
                            launch_all(chain_steps);
                            WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
                          }) / chain_steps;
  g_buf.chain_reference = chain_result(a);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  WEFT_BENCH_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  launch_all(1000);
  WEFT_BENCH_CHECK(cudaStreamEndCapture(s, &graph));
  WEFT_BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  WEFT_BENCH_CHECK(cudaGraphLaunch(exec, s));  // warm-up
  WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
  chain_reset(a);
  g_buf.chain_graph_us = 1e6 * seconds_of([&] {
                           for (int k = 0; k < chain_steps / 1000; ++k) WEFT_BENCH_CHECK(cudaGraphLaunch(exec, s));
                           WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
                         }) / chain_steps;
  g_buf.chain_graph_same = chain_result(a) == g_buf.chain_reference;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

void BM_chained_bulk(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  auto s = static_cast<cudaStream_t>(rt.device()->side_stream());
  std::vector<float> got(chain_n), init(chain_n);
  for (int i = 0; i < chain_n; ++i) init[i] = float(i % 7) * 0.25f;
  const auto before = rt.device()->stats();
  double total = 0;
  for (auto _ : st) {
    WEFT_BENCH_CHECK(cudaMemcpyAsync(g_buf.chain_a, init.data(), sizeof(float) * chain_n, cudaMemcpyHostToDevice, s));
    WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
    const double t = seconds_of([&] {
      rt.block_on([] WEFT_HOST_DEVICE(float* a, float* b, int n) { return chained_bulk_root(a, b, n); }, g_buf.chain_a,
                  g_buf.chain_b, chain_steps);
    });
    st.SetIterationTime(t);
    total += t;
    WEFT_BENCH_CHECK(cudaMemcpyAsync(got.data(), g_buf.chain_a, sizeof(float) * chain_n, cudaMemcpyDeviceToHost, s));
    WEFT_BENCH_CHECK(cudaStreamSynchronize(s));
    if (got != g_buf.chain_reference) st.SkipWithError("weft's result differs from the stream baseline's");
  }
  const double us = 1e6 * total / st.iterations() / chain_steps;
  st.counters["us_per_step"] = us;
  st.counters["stream_us_per_step"] = g_buf.chain_stream_us;
  st.counters["graph_us_per_step"] = g_buf.chain_graph_us;
  st.counters["stream_over_weft"] = g_buf.chain_stream_us / us;
  st.counters["graph_over_weft"] = g_buf.chain_graph_us / us;
  st.counters["graph_result_same"] = g_buf.chain_graph_same;
  // Steps run inline by the lone task's warp (device_bulk.hpp), not through a suspension.
  // Approximate: warps publish their counts when idle, so the last steps may be missed.
  const auto after = rt.device()->stats();
  st.counters["inline_fraction"] = double(after.inline_bulk - before.inline_bulk) / (double(chain_steps) * st.iterations());
  st.counters["shared_fraction"] = double(after.inline_shared - before.inline_shared) / (double(chain_steps) * st.iterations());
}

// ------------------------------------------------------------------ dependent_decision
// Each step hashes (p, i) over one block's worth of lanes and XORs the hashes into v;
// the next step's p is decided from v. weft decides on the GPU inside the task; the
// baseline launches the step, copies v back, decides on the host and launches again.
constexpr int decision_steps = 2000;

WEFT_HOST_DEVICE inline unsigned decision_hash(unsigned p, unsigned i) {
  unsigned h = p ^ (i * 0x9e3779b9u);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return h;
}
WEFT_HOST_DEVICE inline unsigned decide(unsigned v, int step) {
  return (v & 1u) ? v * 3u + static_cast<unsigned>(step) : (v >> 1) ^ 0x5bd1e995u;
}
__global__ void decision_kernel(unsigned p, unsigned* v) { atomicXor(v, decision_hash(p, threadIdx.x)); }

WEFT_HOST_DEVICE weft::task<unsigned> dependent_decision_root(unsigned* v, int steps) {
  unsigned p = 1;
  for (int s = 0; s < steps; ++s) {
    *v = 0;
    co_await weft::bulk(chain_n, [=] WEFT_HOST_DEVICE(std::size_t i) {
      weft::detail::device_atomic<unsigned>(*v).fetch_xor(decision_hash(p, static_cast<unsigned>(i)),
                                                          weft::detail::mo_relaxed);
    });
    p = decide(*v, s);
  }
  co_return p;
}

void measure_decision_baseline() {
  unsigned p = 1;
  const double t = seconds_of([&] {
    for (int s = 0; s < decision_steps; ++s) {
      WEFT_BENCH_CHECK(cudaMemset(g_buf.decision_v, 0, sizeof(unsigned)));
      decision_kernel<<<1, chain_n>>>(p, g_buf.decision_v);
      unsigned v = 0;
      WEFT_BENCH_CHECK(cudaMemcpy(&v, g_buf.decision_v, sizeof v, cudaMemcpyDeviceToHost));
      p = decide(v, s);
    }
  });
  g_buf.decision_host_us = 1e6 * t / decision_steps;
  g_buf.decision_reference = p;
}

void BM_dependent_decision(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  const auto before = rt.device()->stats();
  double total = 0;
  for (auto _ : st) {
    unsigned got = 0;
    const double t = seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(unsigned* v, int n) { return dependent_decision_root(v, n); },
                        g_buf.decision_v, decision_steps);
    });
    st.SetIterationTime(t);
    total += t;
    if (got != g_buf.decision_reference) st.SkipWithError("weft decided differently from the host loop");
  }
  const double us = 1e6 * total / st.iterations() / decision_steps;
  st.counters["us_per_step"] = us;
  st.counters["host_loop_us_per_step"] = g_buf.decision_host_us;
  st.counters["host_loop_over_weft"] = g_buf.decision_host_us / us;
  const auto after = rt.device()->stats();
  st.counters["inline_fraction"] =
      double(after.inline_bulk - before.inline_bulk) / (double(decision_steps) * st.iterations());
  st.counters["shared_fraction"] =
      double(after.inline_shared - before.inline_shared) / (double(decision_steps) * st.iterations());
}

// ------------------------------------------------------------------ block_on_idle
// The host's round trip of block_on for a trivial root after the runtime has been idle for
// 2 ms: worker 0, which polls the host's submission ring, naps meanwhile, so the root waits
// for that nap to end before the kernel sees it.
void BM_block_on_idle(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  auto seven = [] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 7; };
  rt.block_on(seven);  // start the kernel
  std::vector<double> us;
  for (auto _ : st) {
    double total = 0;
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(host_idle_gap);
      int got = 0;
      const double s = seconds_of([&] { got = rt.block_on(seven); });
      if (got != 7) st.SkipWithError("wrong result");
      us.push_back(s * 1e6);
      total += s;
    }
    st.SetIterationTime(total);
  }
  std::sort(us.begin(), us.end());
  st.counters["round_trip_p50_us"] = at_fraction(us, 1, 2);
  st.counters["round_trip_p90_us"] = at_fraction(us, 9, 10);
  // The same round trip without weft, measured before the runtime started (main).
  const host_trip_sample& b = g_buf.host_trips;
  st.counters["launch_sync_p50_us"] = at_fraction(b.launch_us, 1, 2);
  st.counters["launch_sync_p90_us"] = at_fraction(b.launch_us, 9, 10);
  st.counters["pinned_echo_p50_us"] = at_fraction(b.echo_us, 1, 2);
  st.counters["p50_over_launch_sync"] = at_fraction(us, 1, 2) / at_fraction(b.launch_us, 1, 2);
}

// ------------------------------------------------------------------ one_task_trip
// One task alone: `steps` yields, or `steps` bulk(1) awaits. The time per step is what one
// worker warp's trip round its loop costs when nothing else runs.
WEFT_HOST_DEVICE weft::task<int> lone_steps(int steps, int mode, int* sink) {
  for (int s = 0; s < steps; ++s) {
    if (mode == 0) co_await weft::yield();
    else co_await weft::bulk(1, [=] WEFT_HOST_DEVICE(std::size_t i) { sink[i] = s; });
  }
  co_return steps;
}
void BM_one_task_trip(benchmark::State& st) {
  weft::runtime& rt = shared_runtime();
  const int mode = static_cast<int>(st.range(0));
  const int steps = 20000;
  rt.block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 0; });  // start the kernel
  double total = 0;
  for (auto _ : st) {
    int got = 0;
    const double t = seconds_of([&] {
      got = rt.block_on([] WEFT_HOST_DEVICE(int n, int m, int* k) { return lone_steps(n, m, k); }, steps, mode,
                        reinterpret_cast<int*>(g_buf.decision_v));
    });
    st.SetIterationTime(t);
    total += t;
    if (got != steps) st.SkipWithError("wrong count");
  }
  st.counters["us_per_step"] = 1e6 * total / st.iterations() / steps;
}

// Registration order is run order: the two that make their own runtimes first,
// before the shared runtime (which holds every warp slot) starts.
BENCHMARK(BM_idle_cost)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_idle_cost_pinned_homes)->Arg(4)->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_suspended_per_GiB)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_yield_many)->Args({1 << 20, 64})->Args({1 << 20, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_spawn_many)->Arg(10000000)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_spawn_many_group)->Args({10000000, 0})->Args({10000000, 1})->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ping_pong)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_ping_pong_pinned)->Arg(1000)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_pinned_parked_wake)->Arg(60)->Arg(400)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_pinned_first_wake)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_block_on_idle)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_one_task_trip)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_chained_bulk)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_dependent_decision)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.pp_slots, sizeof(pp_slot) * 2 * max_pp_rounds));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.pp_lat, sizeof(unsigned long long) * 2 * max_pp_rounds));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.pp_sm, 2 * sizeof(unsigned)));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.copy_in, copy_bytes));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.copy_out, copy_bytes));
  WEFT_BENCH_CHECK(cudaMemset(g_buf.copy_in, 1, copy_bytes));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.chain_a, sizeof(float) * chain_n));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.chain_b, sizeof(float) * chain_n));
  WEFT_BENCH_CHECK(cudaMalloc(&g_buf.decision_v, sizeof(unsigned)));
  g_buf.baseline_block_one_way_ns = measure_block_ping_pong(max_pp_rounds);
  measure_chain_baselines();
  measure_decision_baseline();
  g_buf.host_trips = measure_host_trips();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  shared_runtime().shutdown();
  cudaFree(g_buf.pp_slots);
  cudaFree(g_buf.pp_lat);
  cudaFree(g_buf.pp_sm);
  cudaFree(g_buf.copy_in);
  cudaFree(g_buf.copy_out);
  cudaFree(g_buf.chain_a);
  cudaFree(g_buf.chain_b);
  cudaFree(g_buf.decision_v);
  return 0;
}
