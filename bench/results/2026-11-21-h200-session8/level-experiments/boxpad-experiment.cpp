// EXPERIMENT (not committed): the round trip by the mailbox's device address (padding before it).
void BM_boxpad_experiment(benchmark::State& state) {
  const int n = 20000;
  for (auto _ : state) {
    for (unsigned workers : {2u, 4u})
      for (int pad : {0, 256, 512, 1024, 2048, 4096, 8192, 65536, 1 << 20, 0}) {
        setenv("WEFT_EXP_BOX_PAD", std::to_string(pad).c_str(), 1);
        std::vector<std::uint64_t> stamps;
        stamps.reserve(n);
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
          rt.block_on([] WEFT_HOST_DEVICE(int m) { return call_loop(m); }, 10);
          stamps.clear();
          rt.block_on([] WEFT_HOST_DEVICE(int m) { return call_loop(m); }, n);
        }
        std::vector<double> gaps;
        for (std::size_t i = 1; i < stamps.size(); ++i) gaps.push_back(double(stamps[i] - stamps[i - 1]) / 1000.0);
        std::printf("workers %u box pad %7d: p50 %.3f us\n", workers, pad, percentile(gaps, 0.5));
      }
    unsetenv("WEFT_EXP_BOX_PAD");
    state.SetIterationTime(1e-3);
  }
}
BENCHMARK(BM_boxpad_experiment)->UseManualTime()->Iterations(1);

// With, in src/device_runtime.cpp allocate_memory(), just before the boxes' allocation:
//   if (const char* e = std::getenv("WEFT_EXP_BOX_PAD"); e && std::atoi(e) > 0) (void)dev(std::size_t(std::atoi(e)));
