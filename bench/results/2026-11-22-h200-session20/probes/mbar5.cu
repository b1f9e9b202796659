// Probe (twentieth session): why a server warp's 256-index chained job costs ~1,490 cycles in
// the runtime (mbar-runtime stamps) when the whole step takes 1,195 in mbar.cu's mode 6.
// One block of 128 threads; warp 0 lane 0 is the task, warps 1..3 serve through two mbarriers.
// Modes: 0 warp only (31 helpers, __syncwarp x2)
//        6 mbar.cu's mode 6 (servers wait per lane; done counts 3 arrivals)
//        7 the runtime's shape: servers wait with __all_sync(try_wait); the last to finish
//          (block-scope acq_rel fetch_add on `finished`) arrives once at done (count 1);
//          the job called as run_element_chunk: a functor in shared memory, 64-bit loop
//        8 as 7, and the task lane runs a device-scope acquire fence every step
//        9 as 7, and the task lane runs a device-scope acquire RMW on a global word every step
// Stamps per server warp (lane 0): wake -> call, the call (slowest lane), summed over steps.
#include <cstdio>
#include <cmath>
#include <vector>
#include <cuda/atomic>
#include <cuda_runtime.h>

struct job_t;
using chunk_fn = void (*)(const job_t&, unsigned c, unsigned rank, unsigned stride);
struct job_t { chunk_fn run; const void* fn; unsigned long long n; unsigned chunk_items, chunks; };
struct chain_f { const float* src; float* dst;
  __device__ void operator()(unsigned long long i) const { dst[i] = src[i] * 0.999f + src[(i + 1) % 256]; } };
template <class F>
__device__ __noinline__ void run_element_chunk(const job_t& j, unsigned c, unsigned lane, unsigned lanes) {
  const F& f = *static_cast<const F*>(j.fn);
  const unsigned long long begin = (unsigned long long)c * j.chunk_items;
  const unsigned long long end = j.n - begin < j.chunk_items ? j.n : begin + j.chunk_items;
  for (unsigned long long i = begin + lane; i < end; i += lanes) f(i);
}
__shared__ job_t s_job;
__shared__ chain_f s_fn;
__shared__ int s_quit;
__shared__ unsigned long long s_go, s_done;
__shared__ unsigned s_finished;
__device__ inline unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ inline void mb_init(unsigned long long* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(count) : "memory");
}
__device__ inline void mb_arrive(unsigned long long* b) {
  unsigned long long st;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(smem(b)) : "memory");
}
__device__ inline bool mb_try(unsigned long long* b, unsigned parity) {
  unsigned ok = 0;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(ok) : "r"(smem(b)), "r"(parity) : "memory");
  return ok != 0;
}
__device__ inline void mb_wait(unsigned long long* b, unsigned parity) { while (!mb_try(b, parity)) {} }

__global__ void probe(int mode, int steps, float* a, float* b, unsigned* g, long long* out) {
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (tid == 0) { mb_init(&s_go, 1); mb_init(&s_done, mode == 6 ? 3 : 1); s_quit = 0; s_finished = 0; }
  __syncthreads();
  if (mode == 0 && warp != 0) return;
  if (tid == 0) {
    const long long c0 = clock64();
    unsigned pd = 0;
    for (int s = 0; s < steps; ++s) {
      if (mode >= 8) {
        if (mode == 8) cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
        else cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*g).fetch_add(1, cuda::std::memory_order_acq_rel);
      }
      s_fn.src = s % 2 ? b : a;
      s_fn.dst = s % 2 ? a : b;
      s_job.run = run_element_chunk<chain_f>;
      s_job.fn = &s_fn;
      s_job.n = 256;
      s_job.chunk_items = 1024;
      s_job.chunks = 1;
      if (mode == 0) { __syncwarp(); __syncwarp(); continue; }
      if (mode >= 7) cuda::atomic_ref<unsigned, cuda::thread_scope_block>(s_finished).store(0, cuda::std::memory_order_relaxed);
      mb_arrive(&s_go);
      mb_wait(&s_done, pd);
      pd ^= 1u;
    }
    out[0] = (clock64() - c0) / steps;
    s_quit = 1;
    if (mode == 0) __syncwarp(); else mb_arrive(&s_go);
    return;
  }
  if (warp == 0) {  // helpers
    if (mode != 0) { __syncwarp(); return; }
    for (;;) {
      __syncwarp();
      if (s_quit) return;
      s_job.run(s_job, 0, lane - 1, 31);
      __syncwarp();
    }
  }
  const unsigned rank = tid - 32;
  unsigned pg = 0;
  long long to_call = 0, call = 0, n = 0, probe_lat = 0;
  for (;;) {
    if (mode == 6) mb_wait(&s_go, pg);
    else while (!__all_sync(0xffffffffu, mb_try(&s_go, pg))) {}
    const long long tw = clock64();
    pg ^= 1u;
    if (s_quit) break;
    long long p0 = clock64();
    float pv;
    asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(pv) : "l"(s_fn.src) : "memory");
    long long p1 = clock64() + (pv == 12345.f ? 1 : 0);
    probe_lat += p1 - p0;
    const long long ta = clock64();
    s_job.run(s_job, 0, rank, 96);
    const long long tb = clock64();
    __syncwarp();
    const unsigned d = static_cast<unsigned>(tb - ta), dmax = __reduce_max_sync(0xffffffffu, d);
    to_call += ta - tw;
    call += dmax;
    ++n;
    if (mode == 6) { if (lane == 0) mb_arrive(&s_done); }
    else if (lane == 0 && cuda::atomic_ref<unsigned, cuda::thread_scope_block>(s_finished).fetch_add(1, cuda::std::memory_order_acq_rel) == 2u)
      mb_arrive(&s_done);
  }
  if (lane == 0) { out[7] = n ? probe_lat / n : 0; out[1 + 2 * (warp - 1)] = n ? to_call / n : 0; out[2 + 2 * (warp - 1)] = n ? call / n : 0; }
}

int main() {
  float *a, *b; unsigned* g; long long* out;
  cudaMalloc(&a, 1024); cudaMalloc(&b, 1024); cudaMalloc(&g, 4); cudaMalloc(&out, 64);
  const int steps = 10000;
  std::vector<float> init(256), ref(256), tmp(256);
  for (int i = 0; i < 256; ++i) init[i] = float(i % 7) * 0.25f;
  ref = init;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 256; ++i) tmp[i] = std::fma(ref[i], 0.999f, ref[(i + 1) % 256]);
    ref.swap(tmp);
  }
  for (int rep = 0; rep < 2; ++rep)
    for (int mode : {0, 6, 7, 8, 9}) {
      cudaMemcpy(a, init.data(), 1024, cudaMemcpyHostToDevice);
      cudaMemset(out, 0, 64);
      probe<<<1, 128>>>(mode, steps, a, b, g, out);
      long long h[8] = {};
      cudaError_t e = cudaMemcpy(h, out, 64, cudaMemcpyDeviceToHost);
      std::vector<float> got(256);
      cudaMemcpy(got.data(), steps % 2 ? b : a, 1024, cudaMemcpyDeviceToHost);
      std::printf("src load %lld  mode %d  %5lld cycles/step  servers wake->call %lld %lld %lld  call(slowest lane) %lld %lld %lld  %s %s\n",
                  h[7], mode, h[0], h[1], h[3], h[5], h[2], h[4], h[6], got == ref ? "result ok" : "RESULT WRONG",
                  cudaGetErrorString(e));
      std::fflush(stdout);
    }
  return 0;
}
