#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda/atomic>
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
using A32 = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
using A64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
constexpr auto rlx = cuda::std::memory_order_relaxed;
constexpr auto ar = cuda::std::memory_order_acq_rel;
constexpr auto acq = cuda::std::memory_order_acquire;
constexpr auto rel = cuda::std::memory_order_release;
__global__ void probe(unsigned long long* dev, double* out, int iters) {
  if (threadIdx.x != 0) return;
  int k = 0; unsigned long long t0; unsigned long long acc = 0;
  unsigned* d32 = reinterpret_cast<unsigned*>(dev + 4096);
#define RUN(expr) { unsigned long long x = 0; t0 = gt(); for (int i = 0; i < iters; ++i) { expr; } out[k++] = double(gt() - t0) / iters; acc += x; }
  RUN({ unsigned e = unsigned(x); A32(d32[0]).compare_exchange_strong(e, e + 1, rlx, rlx); x = e + 1; })
  RUN({ unsigned long long e = x; A64(dev[0]).compare_exchange_strong(e, e + 1, rlx, rlx); x = e + 1; })
  RUN({ unsigned long long e = x + 1000000; A64(dev[16]).compare_exchange_strong(e, e + 1, rlx, rlx); x = e & 1; })  // failing CAS
  RUN({ unsigned long long e = x + dev[32]; A64(dev[32]).compare_exchange_strong(e, e + 1, ar, acq); x = 0; })  // acq_rel CAS
  RUN({ x = A32(d32[64]).fetch_or(1u + unsigned(x & 1), rlx); })
  RUN({ x = A32(d32[96]).fetch_or(1u + unsigned(x & 1), ar); })
  RUN({ x = A32(d32[128]).fetch_and(~2u + unsigned(x & 1), rel); })
  RUN({ x = A64(dev[48]).fetch_add(1 + (x & 1), ar); })
  RUN({ x = A32(d32[160]).exchange(unsigned(x & 1), acq); })
  RUN({ A32(d32[192]).store(unsigned(i), rel); x += A32(d32[192]).load(rlx); })
  RUN({ A64(dev[80]).fetch_add(1, rlx); })  // RED, no result
  RUN({ x = A64(dev[96]).load(acq) + x; })
  RUN({ x = A64(dev[112]).load(rlx) + (x & 1); })
  RUN({ A32(d32[224]).fetch_add(1u, cuda::std::memory_order_seq_cst); })
  out[30] = double(acc);
}
int main() {
  unsigned long long* dev; double* out;
  cudaMalloc(&dev, 1 << 20); cudaMemset(dev, 0, 1 << 20);
  cudaMallocManaged(&out, 32 * sizeof(double));
  const char* names[] = {"CAS32 relaxed ok (dep)", "CAS64 relaxed ok (dep)", "CAS64 relaxed failing", "CAS64 acq_rel after load",
    "fetch_or32 relaxed (dep)", "fetch_or32 acq_rel (dep)", "fetch_and32 release (dep)", "fetch_add64 acq_rel (dep)",
    "exchange32 acquire (dep)", "store release + load", "fetch_add64 relaxed no result", "load acquire (dep)", "load relaxed (dep)", "fetch_add32 seq_cst no result"};
  for (int rep = 0; rep < 2; ++rep) {
    probe<<<1, 32>>>(dev, out, 20000);
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("fail\n"); return 1; }
    for (int i = 0; i < 14; ++i) printf("  %-36s %8.1f ns\n", names[i], out[i]);
  }
}
