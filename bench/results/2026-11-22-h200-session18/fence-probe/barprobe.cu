// Probe: does a CTA barrier (bar.sync on a named barrier) or a block-scope fence wait
// for the thread's global stores in flight? One block of 4 warps; warp 0 lane 0 stores
// `k` global words, then (mode 0) fence.acq_rel.cta, (mode 1) barrier.sync 1,128 with the
// other warps already waiting, (mode 2) __syncwarp, (mode 3) nothing. Cycles from just
// after the stores to just after the sync, averaged over rounds.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void probe(int mode, int k, unsigned* buf, long long* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  long long total = 0;
  for (int r = 0; r < 1000; ++r) {
    __syncthreads();
    if (warp == 0) {
      // every lane stores (a line each), like f(i) writes
      for (int j = 0; j < k; ++j) buf[(r * 64 + j) * 1024 + lane] = r + j;
      long long t0 = clock64();
      if (mode == 0) asm volatile("fence.acq_rel.cta;" ::: "memory");
      if (mode == 1) asm volatile("barrier.sync 1, 128;" ::: "memory");
      if (mode == 2) __syncwarp();
      if (mode == 4) asm volatile("fence.acq_rel.gpu;" ::: "memory");
      long long t1 = clock64();
      total += t1 - t0;
    } else {
      if (mode == 1) asm volatile("barrier.sync 1, 128;" ::: "memory");
    }
  }
  if (threadIdx.x == 0) out[0] = total / 1000;
}
int main() {
  unsigned* buf; long long* out; long long h;
  cudaMalloc(&buf, 1000ull * 64 * 1024 * 4 + 4096 * 1024);
  cudaMalloc(&out, 8);
  const char* names[] = {"fence.acq_rel.cta", "barrier.sync 1,128", "__syncwarp", "nothing", "fence.acq_rel.gpu"};
  for (int k : {0, 1, 4})
    for (int mode = 0; mode < 5; ++mode) {
      probe<<<1, 128>>>(mode, k, buf, out);
      cudaMemcpy(&h, out, 8, cudaMemcpyDeviceToHost);
      printf("stores per lane %d  %-20s %lld cycles\n", k, names[mode], h);
    }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
