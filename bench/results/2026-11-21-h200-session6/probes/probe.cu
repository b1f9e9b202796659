// Scratch probe (not committed): latency of the primitives on the answer path.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda/atomic>
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned long long ld_sys(const unsigned long long* p){unsigned long long v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;}
__device__ __forceinline__ unsigned long long ld_acq_sys(const unsigned long long* p){unsigned long long v; asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;}
__device__ __forceinline__ void st_sys(unsigned long long* p, unsigned long long v){asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");}
__device__ __forceinline__ void st_rel_sys(unsigned long long* p, unsigned long long v){asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");}
__device__ __forceinline__ void st_rel_gpu(unsigned long long* p, unsigned long long v){asm volatile("st.release.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");}
__device__ __forceinline__ unsigned long long ld_gpu(const unsigned long long* p){unsigned long long v; asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;}
__device__ __forceinline__ unsigned long long ld_acq_gpu(const unsigned long long* p){unsigned long long v; asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;}

__global__ void probe(unsigned long long* dev, unsigned long long* pin, double* out, int iters) {
  const int lane = threadIdx.x;
  int k = 0;
  unsigned long long t0, acc = 0;
  // 0: dependent device L2 relaxed.gpu load chase
  if (lane == 0) {
    for (int i = 0; i < 64; ++i) dev[i * 16] = ((i + 1) % 64) * 16;
    __threadfence();
    unsigned long long idx = 0; t0 = gt();
    for (int i = 0; i < iters; ++i) idx = ld_gpu(dev + idx);
    out[k++] = double(gt() - t0) / iters; acc += idx;
    // 1: dependent CAS device scope
    idx = 0; t0 = gt();
    for (int i = 0; i < iters; ++i) idx = atomicCAS(dev + 2048, idx, idx + 1);
    out[k++] = double(gt() - t0) / iters; acc += idx;
    // 2: dependent fetch_add relaxed (value used)
    idx = 0; t0 = gt();
    for (int i = 0; i < iters; ++i) idx = atomicAdd(dev + 2048 + 16 * (idx & 1), 1ull);
    out[k++] = double(gt() - t0) / iters; acc += idx;
    // 3: dependent ld.relaxed.sys from pinned
    idx = 0; t0 = gt();
    for (int i = 0; i < iters / 10; ++i) idx = ld_sys(pin + (idx & 7));
    out[k++] = double(gt() - t0) / (iters / 10); acc += idx;
    // 4: 9 plain stores to pinned + st.release.sys
    t0 = gt();
    for (int i = 0; i < iters / 10; ++i) { for (int j = 0; j < 9; ++j) pin[64 + j] = i + j; st_rel_sys(pin + 80, i); }
    out[k++] = double(gt() - t0) / (iters / 10);
    // 5: 10 relaxed.sys stores to pinned, no fence
    t0 = gt();
    for (int i = 0; i < iters / 10; ++i) { for (int j = 0; j < 10; ++j) st_sys(pin + 64 + j, i + j); }
    out[k++] = double(gt() - t0) / (iters / 10);
    // 6: fence.acq_rel.gpu alone
    t0 = gt();
    for (int i = 0; i < iters; ++i) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    out[k++] = double(gt() - t0) / iters;
    // 7: fence.sc.gpu alone
    t0 = gt();
    for (int i = 0; i < iters; ++i) asm volatile("fence.sc.gpu;" ::: "memory");
    out[k++] = double(gt() - t0) / iters;
    // 8: fence.acq_rel.sys with no pending writes
    t0 = gt();
    for (int i = 0; i < iters / 10; ++i) asm volatile("fence.acq_rel.sys;" ::: "memory");
    out[k++] = double(gt() - t0) / (iters / 10);
    // 9: device store + st.release.gpu
    t0 = gt();
    for (int i = 0; i < iters; ++i) { dev[4096] = i; st_rel_gpu(dev + 4112, i); }
    out[k++] = double(gt() - t0) / iters;
    // 10: ld.acquire.sys from pinned, dependent
    idx = 0; t0 = gt();
    for (int i = 0; i < iters / 10; ++i) idx = ld_acq_sys(pin + (idx & 7));
    out[k++] = double(gt() - t0) / (iters / 10); acc += idx;
    // 11: ld.acquire.gpu dependent chase
    idx = 0; t0 = gt();
    for (int i = 0; i < iters; ++i) idx = ld_acq_gpu(dev + idx);
    out[k++] = double(gt() - t0) / iters; acc += idx;
    // 12: exchange (dependent)
    idx = 0; t0 = gt();
    for (int i = 0; i < iters; ++i) idx = atomicExch(dev + 2048 + (idx & 1) * 16, idx + 1);
    out[k++] = double(gt() - t0) / iters; acc += idx;
  }
  __syncwarp();
  // 13: warp: 6 independent ld.relaxed.sys per lane, SoA window (lane i word j at pin[256 + j*32 + i]), dependent rounds
  {
    unsigned long long x = 0; t0 = gt();
    for (int i = 0; i < iters / 10; ++i) {
      unsigned long long s = 0;
      for (int j = 0; j < 6; ++j) s += ld_sys(pin + 256 + j * 64 + lane + (x & 1));
      x = __shfl_sync(~0u, s, 0);
    }
    if (lane == 0) { out[k] = double(gt() - t0) / (iters / 10); }
    ++k; acc += x;
  }
  // 14: lanes 0..5 each one ld.relaxed.sys on distinct lines
  {
    unsigned long long x = 0; t0 = gt();
    for (int i = 0; i < iters / 10; ++i) {
      unsigned long long s = lane < 6 ? ld_sys(pin + 256 + lane * 64 + (x & 1)) : 0;
      x = __shfl_sync(~0u, s, 0);
    }
    if (lane == 0) { out[k] = double(gt() - t0) / (iters / 10); }
    ++k; acc += x;
  }
  if (lane == 0) out[31] = double(acc);
}

int main() {
  unsigned long long *dev, *pin; double* out;
  cudaMalloc(&dev, 1 << 20); cudaMemset(dev, 0, 1 << 20);
  cudaHostAlloc(&pin, 1 << 16, cudaHostAllocMapped); for (int i = 0; i < 8192; ++i) pin[i] = 0;
  cudaMallocManaged(&out, 32 * sizeof(double));
  const char* names[] = {"L2 load chase (relaxed.gpu)", "CAS dependent (gpu)", "fetch_add dependent", "ld.relaxed.sys pinned (dependent)",
    "9 stores pinned + st.release.sys", "10 st.relaxed.sys pinned", "fence.acq_rel.gpu", "fence.sc.gpu", "fence.acq_rel.sys (idle)",
    "dev store + st.release.gpu", "ld.acquire.sys pinned (dependent)", "ld.acquire.gpu chase", "atomicExch dependent",
    "warp 6x32 ld.relaxed.sys (SoA window)", "lanes0-5 ld.relaxed.sys distinct lines"};
  for (int rep = 0; rep < 3; ++rep) {
    probe<<<1, 32>>>(dev, pin, out, 20000);
    if (cudaDeviceSynchronize() != cudaSuccess) { printf("fail\n"); return 1; }
    printf("rep %d\n", rep);
    for (int i = 0; i < 15; ++i) printf("  %-45s %8.1f ns\n", names[i], out[i]);
  }
  return 0;
}
