#include <cstdio>
#include <cuda_runtime.h>
__device__ void __noinline__ work(int* p, int i) { p[i & 31] = i; }
typedef void (*fn_t)(int*, int);
__device__ fn_t g_fn = work;
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
__global__ void k(int mode, int steps, long long* out, int* sink) {
  const int lane = threadIdx.x;
  long long t0 = clock64();
  if (mode == 0) {  // converged: all lanes syncwarp twice per step
    for (int s = 0; s < steps; ++s) { __syncwarp(); if (lane == 0) sink[0] = s; __syncwarp(); }
  } else if (mode == 1) {  // divergent PCs: lane 0 in one loop, others in another
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) { sink[0] = s; __syncwarp(); __syncwarp(); }
    } else {
      for (int s = 0; s < steps; ++s) { __syncwarp(); __syncwarp(); }
    }
  } else if (mode == 2) {  // divergent + indirect call by every lane between
    fn_t f = g_fn;
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) { __syncwarp(); f(sink, s); __syncwarp(); }
    } else {
      for (int s = 0; s < steps; ++s) { __syncwarp(); f(sink, s + lane); __syncwarp(); }
    }
  } else if (mode == 3) {  // converged indirect call
    fn_t f = g_fn;
    for (int s = 0; s < steps; ++s) { __syncwarp(); f(sink, s + lane); __syncwarp(); }
  } else if (mode == 5) {  // helpers call, lane 0 waits
    fn_t f = g_fn;
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) { sink[0] = s; __syncwarp(); __syncwarp(); }
    } else {
      for (int s = 0; s < steps; ++s) { __syncwarp(); f(sink, s + lane); __syncwarp(); }
    }
  } else if (mode == 6) {  // lane 0 calls, helpers wait
    fn_t f = g_fn;
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) { __syncwarp(); f(sink, s); __syncwarp(); }
    } else {
      for (int s = 0; s < steps; ++s) { __syncwarp(); __syncwarp(); }
    }
  } else if (mode == 7) {  // frame-like job in global memory, written by lane 0 each step
    struct frame { job j; lam f; };
    frame* fr = reinterpret_cast<frame*>(sink + 1024);
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) {
        fr->f.sink = sink; fr->f.s = s;
        fr->j.run = g_run; fr->j.fn = &fr->f; fr->j.n = 1; fr->j.chunk_items = 1024; fr->j.chunks = 1;
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
  } else if (mode == 4) {  // lone lane loop alone, others exited to a syncwarp at the end
    if (lane == 0) for (int s = 0; s < steps; ++s) { sink[0] = s; }
    __syncwarp();
  }
  long long t1 = clock64();
  if (lane == 0) out[mode] = t1 - t0;
}
int main() {
  long long* out; int* sink;
  cudaMalloc(&out, 64); cudaMalloc(&sink, 65536);
  const char* names[] = {"converged 2x syncwarp", "divergent PCs 2x syncwarp", "divergent + indirect call", "converged + indirect call", "lone lane store loop", "helpers call, lane 0 waits", "lane 0 calls, helpers wait", "frame-like job, helpers call"};
  for (int rep = 0; rep < 2; ++rep)
  for (int m = 0; m < 8; ++m) {
    k<<<1, 32>>>(m, 10000, out, sink);
    long long r[8]; cudaMemcpy(r, out, 64, cudaMemcpyDeviceToHost);
    printf("%-32s %8.1f cycles/step\n", names[m], r[m] / 10000.0);
  }
  return 0;
}
