// EXPERIMENT (not committed): the round trip by worker count, with scheduler counters.
WEFT_HOST_DEVICE weft::task<std::uint64_t> sm_loop(int n) {
  std::uint64_t sm = 0;
#if defined(__CUDA_ARCH__)
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  sm = r;
#endif
  (void)co_await weft::host_call(2, sm);
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    auto r = co_await weft::host_call(1, i);
    if (!r) co_return 0;
    sum += *r;
  }
  co_return sum;
}
void BM_sm_experiment(benchmark::State& state) {
  const int n = 20000;
  for (auto _ : state) {
    for (int rep = 0; rep < 2; ++rep)
      for (unsigned workers : {0u, 1u, 2u, 4u, 32u}) {
        std::vector<std::uint64_t> stamps;
        stamps.reserve(n);
        std::uint64_t sm = 999;
        weft::exec::device_stats a{}, b{};
        {
          weft::config c = cuda_config();
          c.reactor_spin_ns = 1000000000;
          c.reactor_threads = 1;
          c.workers = workers;
          weft::runtime rt(c);
          rt.register_host_fn(1, [&stamps](std::span<const std::uint64_t> x) {
            stamps.push_back(now_ns());
            return x[0] + 1;
          });
          rt.register_host_fn(2, [&sm](std::span<const std::uint64_t> x) {
            sm = x[0];
            return std::uint64_t{0};
          });
          rt.block_on([] WEFT_HOST_DEVICE(int m) { return sm_loop(m); }, 10);
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          a = rt.device()->stats();
          stamps.clear();
          rt.block_on([] WEFT_HOST_DEVICE(int m) { return sm_loop(m); }, n);
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          b = rt.device()->stats();
        }
        std::vector<double> gaps;
        for (std::size_t i = 1; i < stamps.size(); ++i) gaps.push_back(double(stamps[i] - stamps[i - 1]) / 1000.0);
        std::printf("workers %4u: sm %3llu: p50 %.3f p90 %.3f us  resumed %llu parks %llu\n", workers,
                    (unsigned long long)sm, percentile(gaps, 0.5), percentile(gaps, 0.9),
                    (unsigned long long)(b.resumed - a.resumed), (unsigned long long)(b.parks - a.parks));
      }
    state.SetIterationTime(1e-3);
  }
}
BENCHMARK(BM_sm_experiment)->UseManualTime()->Iterations(1);

