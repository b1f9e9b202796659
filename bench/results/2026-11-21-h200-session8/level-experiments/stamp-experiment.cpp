// EXPERIMENT (not committed): phase cycles by worker count.
void BM_stamp_experiment(benchmark::State& state) {
  const int n = 20000;
  for (auto _ : state) {
    for (int rep = 0; rep < 2; ++rep)
      for (unsigned workers : {2u, 4u, 1u, 0u}) {
        std::vector<std::uint64_t> stamps;
        stamps.reserve(n);
        unsigned long long sums[8] = {};
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
          cudaStream_t s;
          cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);  // the persistent kernel runs meanwhile
          unsigned long long before[8] = {}, zero = 0;
          cudaMemcpyToSymbolAsync(weft::exec::g_stamp_last, &zero, sizeof zero, 0, cudaMemcpyHostToDevice, s);
          cudaMemcpyFromSymbolAsync(before, weft::exec::g_stamp_sum, sizeof before, 0, cudaMemcpyDeviceToHost, s);
          cudaStreamSynchronize(s);
          rt.block_on([] WEFT_HOST_DEVICE(int m) { return call_loop(m); }, n);
          cudaMemcpyFromSymbolAsync(sums, weft::exec::g_stamp_sum, sizeof sums, 0, cudaMemcpyDeviceToHost, s);
          cudaStreamSynchronize(s);
          for (int i = 0; i < 8; ++i) sums[i] -= before[i];
          cudaStreamDestroy(s);
        }
        std::vector<double> gaps;
        for (std::size_t i = 1; i < stamps.size(); ++i) gaps.push_back(double(stamps[i] - stamps[i - 1]) / 1000.0);
        const double k = sums[7] ? double(sums[7]) : 1;
        std::printf("workers %4u: p50 %.3f us | between %.0f post %.0f fence %.0f firstread %.0f fence->retire %.0f fence->end %.0f cycles (n %llu)\n",
                    workers, percentile(gaps, 0.5), sums[0] / k, sums[1] / k, sums[2] / k, sums[3] / k, sums[4] / k,
                    sums[5] / k, sums[7]);
      }
    state.SetIterationTime(1e-3);
  }
}
BENCHMARK(BM_stamp_experiment)->UseManualTime()->Iterations(1);

