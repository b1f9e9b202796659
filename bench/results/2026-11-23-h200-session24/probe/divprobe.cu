// Probe (twenty-fourth session): do diverged lanes of one warp overlap their memory
// stalls? One warp; each active lane walks its own chain of dependent L2 loads
// (ld.global.cg: no L1). Lanes either run the same code (converged) or each its own
// function (diverged: a switch on the lane, or an indirect call through a table, as a
// coroutine resume is). If diverged paths run one after another, time grows with the
// number of paths; if the warp switches paths on a stall, it stays near one chain's.
// Not part of the build. Build and run:
//   clang++-22 -O3 --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda --no-offload-new-driver \
//     -Wno-unknown-cuda-version -std=c++20 divprobe.cu -o divprobe -L/usr/local/cuda/lib64 -lcudart
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned kSteps = 2000;
constexpr unsigned kSlots = 1u << 24;  // 128 MiB of 8-byte slots: chains far apart

__device__ __forceinline__ unsigned long long ld_cg(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

template <int K>
__device__ __noinline__ unsigned long long chase(const unsigned long long* a, unsigned long long i) {
  for (unsigned s = 0; s < kSteps; ++s) i = ld_cg(a + i) + K;  // +K: each body differs
  return i - kSteps * K;
}

using chase_fn = unsigned long long (*)(const unsigned long long*, unsigned long long);
__device__ chase_fn g_table[8] = {chase<0>, chase<1>, chase<2>, chase<3>, chase<4>, chase<5>, chase<6>, chase<7>};

// mode 0: converged (all active lanes call chase<0>); 1: switch on lane % paths;
// 2: indirect call through g_table[lane % paths].
__global__ void probe(const unsigned long long* a, int mode, int active, int paths, unsigned long long* out,
                      long long* cycles) {
  const unsigned lane = threadIdx.x;
  unsigned long long start = (unsigned long long)lane * 1000003ull % kSlots;
  unsigned long long r = 0;
  __syncwarp();
  const long long t0 = clock64();
  if ((int)lane < active) {
    const int p = (int)lane % paths;
    if (mode == 0) r = chase<0>(a, start);
    else if (mode == 1) {
      switch (p) {
        case 0: r = chase<0>(a, start); break;
        case 1: r = chase<1>(a, start); break;
        case 2: r = chase<2>(a, start); break;
        case 3: r = chase<3>(a, start); break;
        case 4: r = chase<4>(a, start); break;
        case 5: r = chase<5>(a, start); break;
        case 6: r = chase<6>(a, start); break;
        default: r = chase<7>(a, start); break;
      }
    } else {
      r = g_table[p](a, start);
    }
  }
  __syncwarp();
  const long long t1 = clock64();
  out[lane] = r;
  if (lane == 0) *cycles = t1 - t0;
}

__global__ void fill(unsigned long long* a) {
  // a[i] = a pseudo-random next slot: a chain that jumps far each step
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < kSlots; i += gridDim.x * blockDim.x)
    a[i] = (i * 2654435761ull + 12345) % kSlots;
}

int main() {
  unsigned long long *a, *out;
  long long* cyc;
  cudaMalloc(&a, sizeof(unsigned long long) * kSlots);
  cudaMalloc(&out, 32 * sizeof(unsigned long long));
  cudaMalloc(&cyc, sizeof(long long));
  fill<<<1024, 256>>>(a);
  cudaDeviceSynchronize();
  struct { int mode, active, paths; const char* what; } cases[] = {
      {0, 1, 1, "one lane"},
      {0, 2, 1, "2 lanes, same code"},
      {0, 32, 1, "32 lanes, same code"},
      {1, 2, 2, "2 lanes, 2 paths (switch)"},
      {1, 4, 4, "4 lanes, 4 paths (switch)"},
      {1, 8, 8, "8 lanes, 8 paths (switch)"},
      {1, 32, 8, "32 lanes, 8 paths (switch)"},
      {2, 2, 2, "2 lanes, 2 paths (indirect)"},
      {2, 4, 4, "4 lanes, 4 paths (indirect)"},
      {2, 8, 8, "8 lanes, 8 paths (indirect)"},
      {2, 32, 8, "32 lanes, 8 paths (indirect)"},
  };
  printf("%-32s %12s %14s\n", "case", "cycles", "per step");
  for (auto& c : cases) {
    long long best = -1;
    for (int rep = 0; rep < 5; ++rep) {
      probe<<<1, 32>>>(a, c.mode, c.active, c.paths, out, cyc);
      long long h = 0;
      cudaMemcpy(&h, cyc, sizeof h, cudaMemcpyDeviceToHost);
      if (best < 0 || h < best) best = h;
    }
    printf("%-32s %12lld %14.1f\n", c.what, best, double(best) / kSteps);
  }
  const cudaError_t e = cudaGetLastError();
  printf("status: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
