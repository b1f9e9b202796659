#include <cstdio>
#include <cuda_runtime.h>
// Does a full-mask __syncwarp inside ONE noinline function, called from two different
// places by two groups of a warp (lane 0 from its loop, lanes 1-31 from theirs),
// reconverge the warp so that an indirect call after it runs in one pass?
struct job;
typedef void (*chunk_t)(const job&, unsigned, unsigned, unsigned);
struct job { chunk_t run; const void* fn; unsigned long long n; unsigned chunk_items, chunks; };
struct lam { int* sink; int s; };
__device__ void __noinline__ run_el(const job& j, unsigned c, unsigned lane, unsigned lanes) {
  const lam& f = *static_cast<const lam*>(j.fn);
  const unsigned long long begin = (unsigned long long)c * j.chunk_items;
  const unsigned long long end = j.n - begin < j.chunk_items ? j.n : begin + j.chunk_items;
  for (unsigned long long i = begin + lane; i < end; i += lanes) f.sink[i] = f.s;
}
__device__ chunk_t g_run = run_el;
__shared__ const job* sh_job;
__shared__ unsigned sh_mask[4];
struct frame { job j; lam f; };
// Shared meeting point. Returns false when released (no job).
__device__ bool __noinline__ meet(unsigned lane, unsigned* seen) {
  __syncwarp();
  *seen = __activemask();
  const job* j = sh_job;
  if (j == nullptr) return false;
  for (unsigned c = 0; c < j->chunks; ++c) j->run(*j, c, lane, 32);
  __syncwarp();
  return true;
}
// Variant: task lane 0 does not run chunks (helpers rank lane-1 of 31), still one function.
__device__ bool __noinline__ meet31(unsigned lane, unsigned* seen) {
  __syncwarp();
  *seen = __activemask();
  const job* j = sh_job;
  if (j == nullptr) return false;
  if (lane != 0) for (unsigned c = 0; c < j->chunks; ++c) j->run(*j, c, lane - 1, 31);
  __syncwarp();
  return true;
}
template <bool All>
__device__ __forceinline__ bool do_meet(unsigned lane, unsigned* seen) { return All ? meet(lane, seen) : meet31(lane, seen); }

template <bool All>
__device__ void body(int steps, int* sink, int n, unsigned* seen) {
  const unsigned lane = threadIdx.x;
  frame* fr = reinterpret_cast<frame*>(sink + 4096);
  if (lane == 0) {
    for (int s = 0; s < steps; ++s) {
      fr->f.sink = sink; fr->f.s = s;
      fr->j.run = g_run; fr->j.fn = &fr->f; fr->j.n = n; fr->j.chunk_items = 1024; fr->j.chunks = 1;
      sh_job = &fr->j;
      do_meet<All>(lane, seen);
    }
    sh_job = nullptr;
    do_meet<All>(lane, seen);
  } else {
    while (do_meet<All>(lane, seen)) {}
  }
}
__global__ void k(int mode, int steps, int n, long long* out, int* sink) {
  const unsigned lane = threadIdx.x;
  unsigned seen = 0;
  long long t0 = clock64();
  if (mode == 0) body<true>(steps, sink, n, &seen);
  else if (mode == 1) body<false>(steps, sink, n, &seen);
  else if (mode == 2) {  // the old way: different places, helpers only
    frame* fr = reinterpret_cast<frame*>(sink + 4096);
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) {
        fr->f.sink = sink; fr->f.s = s;
        fr->j.run = g_run; fr->j.fn = &fr->f; fr->j.n = n; fr->j.chunk_items = 1024; fr->j.chunks = 1;
        sh_job = &fr->j;
        __syncwarp(); __syncwarp();
      }
    } else {
      for (int s = 0; s < steps; ++s) {
        __syncwarp();
        const job* j = sh_job;
        for (unsigned c = 0; c < j->chunks; ++c) j->run(*j, c, lane - 1, 31);
        __syncwarp();
      }
    }
    seen = 0;
  }
  long long t1 = clock64();
  if (lane == 0) out[mode] = t1 - t0;
  if (lane == 5) out[8 + mode] = seen;
}
int main() {
  long long* out; int* sink;
  cudaMalloc(&out, 256); cudaMalloc(&sink, 1 << 20);
  const char* names[] = {"shared meet(), all 32 run the job", "shared meet(), 31 helpers run it", "old: two places, 31 helpers"};
  const int ns[] = {1, 256};
  for (int rep = 0; rep < 2; ++rep)
    for (int n : ns)
      for (int m = 0; m < 3; ++m) {
        cudaMemset(out, 0, 256);
        k<<<1, 32>>>(m, 10000, n, out, sink);
        long long r[16]; cudaMemcpy(r, out, 128, cudaMemcpyDeviceToHost);
        cudaError_t e = cudaGetLastError();
        printf("n=%4d %-36s %8.1f cycles/step  activemask seen by lane 5: %08llx %s\n", n, names[m], r[m] / 10000.0, (unsigned long long)r[8 + m], cudaGetErrorString(e));
      }
  return 0;
}
