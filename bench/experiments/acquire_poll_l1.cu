// bench/experiments/acquire_poll_l1.cu - what a warp that polls with acquire loads costs
// the other warps of its SM: a standalone experiment (not part of the build), kept with
// its results under bench/results/.
//
// weft's in-place waits (event::wait of a task alone in its warp, device_hooks.hpp; the
// IO wait in place, device_io.hpp) poll a word with ld.acquire.gpu, and on sm_90 every
// acquire at device scope is followed by CCTL.IVALL: the SM's whole L1 is dropped, so
// the SM's other warps lose their cached lines once per poll (about one L2 round trip)
// for as long as the wait lasts (up to 20 us). docs/design.md left that cost unmeasured.
//
// Here every block has `warps` warps on a grid of `blocks_per_sm` blocks per SM. Warps
// 1.. run a pointer chase through an L1-resident table of their own (4 KiB per warp, a
// random cycle; each lane starts elsewhere), `steps` dependent loads per lane. Warp 0
// of some blocks polls (lane 0) until every worker warp of the grid is done:
//   none      no poller (warp 0 of every block naps in __nanosleep until done)
//   relaxed   warp 0 of every block polls with ld.relaxed.gpu (the poll's own traffic)
//   acquire   warp 0 of every block polls with ld.acquire.gpu (blocks_per_sm per SM)
//   acq_one   warp 0 of every blocks_per_sm-th block polls with acquire (about one per
//             SM, as one waiter in place per SM), the rest nap
// Printed per variant: the kernel's time (median of `reps`), ns per dependent load of a
// lane, and the ratio to `none`. The chase's sums are checked against each other.
//
// Build: clang++-22 -std=c++20 -O3 -x cuda --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda --no-offload-new-driver
//   -Wno-unknown-cuda-version -I/usr/local/cuda/include/cccl acquire_poll_l1.cu
//   -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -pthread -o acquire_poll_l1
// Run: ./acquire_poll_l1 [steps] [reps]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define PROBE_CHECK(x)                                                                  \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

enum variant : int { v_none, v_relaxed, v_acquire, v_acq_one, v_count };
const char* const names[] = {"none", "relaxed", "acquire", "acq_one"};

constexpr unsigned table_words = 1024;  // 4 KiB per worker warp
constexpr unsigned threads = 128;       // 4 warps per block, as weft's worker blocks

__device__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__global__ void probe(const unsigned* tables, unsigned steps, unsigned* done, unsigned workers, int v,
                      unsigned blocks_per_sm, unsigned* sums) {
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned warps = blockDim.x / 32;
  if (warp == 0) {  // the poller, or a napper
    const bool polls = v == v_relaxed || v == v_acquire || (v == v_acq_one && blockIdx.x % blocks_per_sm == 0);
    if (lane != 0) return;
    if (!polls) {
      while (load_relaxed(done) < workers) __nanosleep(2000);
      return;
    }
    if (v == v_relaxed) {
      while (load_relaxed(done) < workers) {
      }
    } else {
      while (load_acquire(done) < workers) {
      }
    }
    return;
  }
  const unsigned w = blockIdx.x * (warps - 1) + (warp - 1);  // this worker warp's table
  const unsigned* t = tables + std::size_t{w} * table_words;
  unsigned i = (lane * 37u) % table_words, sum = 0;
  for (unsigned s = 0; s < steps; ++s) {
    i = t[i];
    sum += i;
  }
  sums[w * 32 + lane] = sum;
  __syncwarp();
  if (lane == 0) atomicAdd(done, 1u);
}

int main(int argc, char** argv) {
  const unsigned steps = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 20000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  cudaDeviceProp prop{};
  PROBE_CHECK(cudaGetDeviceProperties(&prop, 0));
  int bps = 0;
  PROBE_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, probe, threads, 0));
  const unsigned blocks_per_sm = std::min(bps, 3);  // weft runs 3 blocks of 4 warps per SM
  const unsigned blocks = blocks_per_sm * prop.multiProcessorCount;
  const unsigned workers = blocks * (threads / 32 - 1);
  std::printf("%s: %d SMs, %u blocks of %u threads (%u per SM), %u worker warps, %u steps\n", prop.name,
              prop.multiProcessorCount, blocks, threads, blocks_per_sm, workers, steps);

  // One random cycle through each warp's table, so every load depends on the one before.
  std::vector<unsigned> host(std::size_t{workers} * table_words);
  std::mt19937 rng(12345);
  std::vector<unsigned> order(table_words);
  for (unsigned w = 0; w < workers; ++w) {
    for (unsigned k = 0; k < table_words; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (unsigned k = 0; k < table_words; ++k) host[std::size_t{w} * table_words + order[k]] = order[(k + 1) % table_words];
  }
  unsigned *tables, *done, *sums;
  PROBE_CHECK(cudaMalloc(&tables, host.size() * sizeof(unsigned)));
  PROBE_CHECK(cudaMemcpy(tables, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMalloc(&done, sizeof(unsigned)));
  PROBE_CHECK(cudaMalloc(&sums, std::size_t{workers} * 32 * sizeof(unsigned)));
  cudaEvent_t a, b;
  PROBE_CHECK(cudaEventCreate(&a));
  PROBE_CHECK(cudaEventCreate(&b));

  std::vector<unsigned> first_sums, got(std::size_t{workers} * 32);
  double base_ms = 0;
  for (int v = 0; v < v_count; ++v) {
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      PROBE_CHECK(cudaMemset(done, 0, sizeof(unsigned)));
      PROBE_CHECK(cudaEventRecord(a));
      probe<<<blocks, threads>>>(tables, steps, done, workers, v, blocks_per_sm, sums);
      PROBE_CHECK(cudaEventRecord(b));
      PROBE_CHECK(cudaEventSynchronize(b));
      PROBE_CHECK(cudaGetLastError());
      float t = 0;
      PROBE_CHECK(cudaEventElapsedTime(&t, a, b));
      ms.push_back(t);
    }
    PROBE_CHECK(cudaMemcpy(got.data(), sums, got.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    if (first_sums.empty()) first_sums = got;
    const bool same = got == first_sums;
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    if (v == v_none) base_ms = med;
    std::printf("%-8s kernel %8.3f ms (min %8.3f, max %8.3f)  %6.2f ns per dependent load  x%.3f of none  sums %s\n",
                names[v], med, ms.front(), ms.back(), med * 1e6 / steps, med / base_ms, same ? "same" : "DIFFER");
  }
  return 0;
}
