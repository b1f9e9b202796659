// its_overlap.cu - do the diverged lanes of one warp overlap their memory stalls?
//
// The question behind it (forty-fourth session): in spawn_many a warp's batch waits for its
// slowest lanes (a leaf spawning and joining ~10 tasks one after another, ~3 lanes), while the
// rest of its lanes finished their tiny tasks long ago. Giving those lanes more tasks during
// the batch ("lane refill") only helps if the hardware runs the diverged groups' L2 round trips
// at the same time; if it runs one group until it reaches a convergence point and only then the
// other, the refill tasks' time adds to the batch's.
//
// Each lane walks its own random cycle through a table (dependent loads, L2-resident), `steps`
// times. Modes (one warp per block; 1, 4 and 12 blocks per SM in turn):
//   0  all 32 lanes walk, converged (one code path)
//   1  lanes 0-15 walk, the others idle
//   2  lanes 0-15 walk through walk_a, lanes 16-31 through walk_b: one indirect call, two targets
//   3  four targets, 8 lanes each
//   4  32 targets, 1 lane each
//   5  two targets, but target b's lanes walk steps/8, eight times over (a loop round the call:
//      the "refill" shape: short tasks repeated while the long one runs)
// If diverged groups overlap, modes 2-5 take about mode 0's time; if they serialize, mode k's
// time is (number of groups) x mode 1's.
// Build: clang++-22 -O3 -std=c++20 -x cuda --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda --no-offload-new-driver
//        its_overlap.cu -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -pthread -o its_overlap
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>

using walk_fn = unsigned (*)(const unsigned*, unsigned, unsigned);

__device__ __noinline__ unsigned walk_a(const unsigned* t, unsigned p, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p = t[p];
  return p;
}
__device__ __noinline__ unsigned walk_b(const unsigned* t, unsigned p, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p = t[p] ^ 0u, p += 0u * i;
  return p + 0u;
}
template <int K>
__device__ __noinline__ unsigned walk_k(const unsigned* t, unsigned p, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p = t[p] + (K & 0);
  return p;
}

__device__ walk_fn table32[32];
template <int... K>
__global__ void fill_table(std::integer_sequence<int, K...>) {
  walk_fn fs[] = {walk_k<K>...};
  for (int i = 0; i < 32; ++i) table32[i] = fs[i];
}

__global__ void run(const unsigned* t, unsigned size, unsigned steps, int mode, unsigned* sink,
                    unsigned long long* cycles) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned p = (gid * 2654435761u) % size;
  const long long t0 = clock64();
  if (mode == 0) {
    p = walk_a(t, p, steps);
  } else if (mode == 1) {
    if (lane < 16) p = walk_a(t, p, steps);
  } else if (mode == 2 || mode == 5) {
    volatile walk_fn pick[2] = {walk_a, walk_b};
    walk_fn f = pick[lane >= 16];
    if (mode == 2 || lane < 16) p = f(t, p, steps);
    else for (int r = 0; r < 8; ++r) p = f(t, p, steps / 8);
  } else if (mode == 3) {
    p = table32[(lane / 8) * 8](t, p, steps);
  } else {
    p = table32[lane](t, p, steps);
  }
  __syncwarp();
  const long long t1 = clock64();
  sink[gid] = p;
  if (lane == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);
}

int main(int argc, char** argv) {
  const unsigned size = 1u << 22;  // 16 MiB of u32: L2-resident on an H100 (50 MB)
  const unsigned steps = argc > 1 ? std::atoi(argv[1]) : 4096;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  // One random cycle over the table (Sattolo), so every walk keeps missing L1.
  std::vector<unsigned> h(size);
  for (unsigned i = 0; i < size; ++i) h[i] = i;
  std::uint64_t s = 88172645463325252ull;
  for (unsigned i = size - 1; i > 0; --i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const unsigned j = s % i;
    std::swap(h[i], h[j]);
  }
  unsigned *t, *sink;
  unsigned long long* cyc;
  cudaMalloc(&t, size * 4);
  cudaMemcpy(t, h.data(), size * 4, cudaMemcpyHostToDevice);
  fill_table<<<1, 1>>>(std::make_integer_sequence<int, 32>{});
  const char* names[] = {"converged 32", "16 lanes", "2 targets x16", "4 targets x8", "32 targets x1",
                         "2 targets, b 8 x steps/8"};
  for (int wps : {1, 4, 12}) {
    const unsigned blocks = sms * wps;
    cudaMalloc(&sink, blocks * 32 * 4);
    cudaMalloc(&cyc, blocks * 8);
    std::vector<unsigned long long> hc(blocks);
    for (int mode = 0; mode < 6; ++mode) {
      run<<<blocks, 32>>>(t, size, steps, mode, sink, cyc);  // warm
      cudaEvent_t a, b;
      cudaEventCreate(&a), cudaEventCreate(&b);
      cudaEventRecord(a);
      run<<<blocks, 32>>>(t, size, steps, mode, sink, cyc);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      cudaEventDestroy(a), cudaEventDestroy(b);
      cudaMemcpy(hc.data(), cyc, blocks * 8, cudaMemcpyDeviceToHost);
      double avg = 0;
      for (auto c : hc) avg += double(c);
      avg /= blocks;
      std::printf("warps/SM %2d  mode %d %-26s  %8.3f ms  %9.0f cycles/warp  %6.1f cycles/step\n", wps, mode,
                  names[mode], ms, avg, avg / steps);
    }
    cudaFree(sink), cudaFree(cyc);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
