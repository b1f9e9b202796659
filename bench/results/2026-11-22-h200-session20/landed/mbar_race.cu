// Does compute-sanitizer racecheck model an mbarrier parity hand-over? Warp 0 lane 0
// writes shared data, arrives at `go` (release.cta); warps 1..3 wait on go with
// try_wait.parity (acquire.cta), read the data, arrive at `done`; lane 0 waits on done,
// then writes the next round. Correct by the PTX memory model; any hazard racecheck
// reports here is the tool's.
#include <cstdio>
#include <cuda_runtime.h>
__shared__ unsigned long long s_go, s_done;
__shared__ unsigned s_data[32];
__device__ unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ void arrive(unsigned long long* b) {
  unsigned long long t;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(t) : "r"(smem(b)) : "memory");
}
__device__ void wait_parity(unsigned long long* b, unsigned par) {
  unsigned ok = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok) : "r"(smem(b)), "r"(par) : "memory");
  } while (!ok);
}
__global__ void k(unsigned* out, int rounds) {
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&s_go)), "r"(1) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(&s_done)), "r"(3) : "memory");
  }
  __syncthreads();
  unsigned sum = 0;
  for (int r = 0; r < rounds; ++r) {
    if (warp == 0) {
      if (lane == 0) {
        for (int i = 0; i < 32; ++i) s_data[i] = r * 32 + i;
        arrive(&s_go);
        wait_parity(&s_done, r & 1);
      }
    } else {
      wait_parity(&s_go, r & 1);
      sum += s_data[lane];
      __syncwarp();
      if (lane == 0) arrive(&s_done);
    }
  }
  if (warp != 0) atomicAdd(out, sum);
}
int main() {
  unsigned* out;
  cudaMalloc(&out, 4);
  cudaMemset(out, 0, 4);
  const int rounds = 100;
  k<<<1, 128>>>(out, rounds);
  unsigned h = 0;
  cudaError_t e = cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost);
  unsigned long long want = 0;
  for (int r = 0; r < rounds; ++r) for (int i = 0; i < 32; ++i) want += 3ull * (r * 32 + i);
  std::printf("sum %u want %llu %s (%s)\n", h, want, h == (unsigned)want ? "ok" : "WRONG", cudaGetErrorString(e));
  return 0;
}
