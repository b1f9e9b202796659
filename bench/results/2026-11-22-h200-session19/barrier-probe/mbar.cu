// Probe: a lone task's small bulk steps run by its own warp's 31 idle lanes (weft's
// inline path: __syncwarp met at two places) against the same steps shared with the
// other three warps of the block through two named hardware barriers (barrier.sync,
// not .aligned, so the task lane and its helpers may arrive from different places).
// One block of 128 threads; warp 0 lane 0 is the "task". Each step's job is called
// through a function pointer read from a descriptor in shared memory, as run_chunk is.
// Jobs: chain (dst[i] = src[i]*0.999 + src[(i+1)%256], 256 indices, src/dst swap each
// step) and decision (256 relaxed device-scope fetch_xor on one word, then the task
// reads it and decides the next p). Reports SM cycles and ns per step over 10,000 steps,
// and checks the chain's result and the decision's final p against a host reference.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda/atomic>
#include <cuda_runtime.h>

struct desc {
  void (*fn)(const desc&, unsigned rank, unsigned stride);
  const float* src;
  float* dst;
  unsigned* v;
  unsigned p;
  unsigned n;
  int quit;
};
__shared__ desc s_desc;

__device__ __noinline__ void chain_fn(const desc& d, unsigned rank, unsigned stride) {
  const float* src = d.src;
  float* dst = d.dst;
  for (unsigned i = rank; i < d.n; i += stride) dst[i] = src[i] * 0.999f + src[(i + 1) % 256];
}
__host__ __device__ inline unsigned hash(unsigned p, unsigned i) {
  unsigned h = p ^ (i * 0x9e3779b9u);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return h;
}
__host__ __device__ inline unsigned decide(unsigned v, int step) {
  return (v & 1u) ? v * 3u + static_cast<unsigned>(step) : (v >> 1) ^ 0x5bd1e995u;
}
__device__ __noinline__ void decision_fn(const desc& d, unsigned rank, unsigned stride) {
  for (unsigned i = rank; i < d.n; i += stride)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*d.v).fetch_xor(hash(d.p, i), cuda::std::memory_order_relaxed);
}

__device__ inline void bar(unsigned id, unsigned n) { asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__shared__ unsigned long long s_go, s_done;
__device__ inline unsigned smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ inline void mb_init(unsigned long long* b, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(count) : "memory");
}
__device__ inline void mb_arrive(unsigned long long* b) {
  unsigned long long st;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(smem(b)) : "memory");
}
__device__ inline void mb_wait(unsigned long long* b, unsigned parity) {
  unsigned ok = 0;
  do {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(ok) : "r"(smem(b)), "r"(parity) : "memory");
  } while (!ok);
}
__device__ __noinline__ void helper_trampoline(unsigned lane, unsigned* pd) {
  if (lane == 1) mb_arrive(&s_go);  // one arrival releases the servers
  mb_wait(&s_done, *pd);            // every server warp reported
  *pd ^= 1u;
}
__device__ inline bool bar_or(unsigned id, unsigned n, bool quit) {
  unsigned any = 0;
  asm volatile("{\n\t.reg .pred q, r;\n\tsetp.ne.u32 q, %1, 0;\n\tbarrier.red.or.pred r, %2, %3, q;\n\tselp.u32 %0, 1, 0, r;\n\t}"
               : "=r"(any) : "r"((unsigned)quit), "r"(id), "r"(n) : "memory");
  return any != 0;
}

// mode 0: warp only (31 helpers, __syncwarp); 1: block, helpers + servers (127 lanes);
// 2: block, servers only (96 lanes); 3: block, helpers + servers, but barrier A as
// bar.arrive by the task (it then waits at B only).
__global__ void probe(int mode, int job, int steps, float* a, float* b, unsigned* v, long long* out, unsigned* pout) {
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (mode == 5 || mode == 6) {
    if (tid == 0) { mb_init(&s_go, 1); mb_init(&s_done, 3); s_desc.quit = 0; }
    __syncthreads();
  }
  const bool block = mode != 0 && mode != 5 && mode != 6;
  if (!block && mode != 5 && mode != 6 && warp != 0) return;
  const unsigned lanes = mode == 0 ? 31 : mode == 2 ? 96 : 127;
  if (tid == 0) {
    long long c0 = clock64();
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    unsigned p = 1, pd6 = 0;
    for (int s = 0; s < steps; ++s) {
      if (job == 0) {
        s_desc.fn = chain_fn;
        s_desc.src = s % 2 ? b : a;
        s_desc.dst = s % 2 ? a : b;
      } else {
        *v = 0;
        s_desc.fn = decision_fn;
        s_desc.v = v;
        s_desc.p = p;
      }
      s_desc.n = 256;
      s_desc.quit = 0;
      if (mode == 6) {  // the task lane alone: release the servers, wait for them
        mb_arrive(&s_go);
        mb_wait(&s_done, pd6);
        pd6 ^= 1u;
      } else if (!block) {
        __syncwarp();
        __syncwarp();
      } else if (mode == 3) {
        asm volatile("barrier.arrive 1, 128;" ::: "memory");
        bar(2, 128);
      } else if (mode == 4) {
        bar_or(1, 128, false);
        bar(2, 128);
      } else {
        bar(1, 128);
        bar(2, 128);
      }
      if (job == 1) p = decide(*v, s);
    }
    s_desc.quit = 1;
    if (mode == 6) mb_arrive(&s_go);
    if (!block) __syncwarp();
    else if (mode == 3) asm volatile("barrier.arrive 1, 128;" ::: "memory");
    else if (mode == 4) bar_or(1, 128, true);
    else bar(1, 128);
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = (clock64() - c0) / steps;
    out[1] = (t1 - t0) / steps;
    *pout = p;
    return;
  }
  // helpers (warp 0, lanes 1..31) and servers (warps 1..3)
  if (mode == 6 && warp == 0) {  // helpers: idle at the loop top's __syncwarp until the quit
    __syncwarp();
    return;
  }
  if (mode == 5 || mode == 6) {  // the runtime's warp path for the task; helpers hand the job to the servers by mbarrier
    if (warp == 0 && mode == 5) {
      unsigned pd = 0;
      for (;;) {
        __syncwarp();  // (1)
        if (s_desc.quit) { if (lane == 1) mb_arrive(&s_go); return; }
        helper_trampoline(lane, &pd);
        __syncwarp();  // (2)
      }
    }
    unsigned pg = 0;
    const unsigned r5 = tid - 32;
    for (;;) {
      mb_wait(&s_go, pg);
      pg ^= 1u;
      if (s_desc.quit) return;
      s_desc.fn(s_desc, r5, 96);
      __syncwarp();
      if (lane == 0) mb_arrive(&s_done);
    }
  }
  if (mode == 4) {  // quit travels in barrier A (barrier.red.or); helpers idle
    const unsigned r4 = tid - 32;
    for (;;) {
      if (bar_or(1, 128, false)) return;
      if (warp != 0) s_desc.fn(s_desc, r4, 96);
      bar(2, 128);
    }
  }
  if (warp == 0 && mode == 2) {  // helpers idle in the barriers only
    for (;;) {
      bar(1, 128);
      if (s_desc.quit) return;
      bar(2, 128);
    }
  }
  const unsigned rank = warp == 0 ? lane - 1 : (mode == 2 ? tid - 32 : 31 + tid - 32);
  for (;;) {
    if (!block) __syncwarp();
    else bar(1, 128);
    const desc* d = &s_desc;
    if (d->quit) return;
    d->fn(*d, rank, lanes);
    if (!block) __syncwarp();
    else bar(2, 128);
  }
}

int main() {
  float *a, *b;
  unsigned *v, *pout;
  long long* out;
  cudaMalloc(&a, 1024);
  cudaMalloc(&b, 1024);
  cudaMalloc(&v, 4);
  cudaMalloc(&pout, 4);
  cudaMalloc(&out, 16);
  const int steps = 10000;
  std::vector<float> init(256), ref(256), tmp(256);
  for (int i = 0; i < 256; ++i) init[i] = float(i % 7) * 0.25f;
  // host reference of the chain (float ops in the same order)
  ref = init;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 256; ++i) tmp[i] = std::fma(ref[i], 0.999f, ref[(i + 1) % 256]);
    ref.swap(tmp);
  }
  unsigned pref = 1;
  for (int s = 0; s < steps; ++s) {
    unsigned x = 0;
    for (unsigned i = 0; i < 256; ++i) x ^= hash(pref, i);
    pref = decide(x, s);
  }
  const char* modes[] = {"one warp, 31 helper lanes, __syncwarp x2         ",
                         "block, 31 helpers + 96 server lanes, barrier x2  ",
                         "block, 96 server lanes only, barrier x2          ",
                         "block, 127 lanes, task arrives A, syncs B        ",
                         "block, 96 servers, A = barrier.red.or (quit)     ",
                         "warp path + helpers hand over by mbarrier, 96 srv",
                         "task lane alone hands over by mbarrier, 96 srv   "};
  for (int rep = 0; rep < 2; ++rep)
    for (int job = 0; job < 2; ++job)
      for (int mode : {0, 2, 5, 6}) {
        cudaMemcpy(a, init.data(), 1024, cudaMemcpyHostToDevice);
        probe<<<1, 128>>>(mode, job, steps, a, b, v, out, pout);
        long long h[2];
        unsigned p = 0;
        cudaError_t e = cudaMemcpy(h, out, 16, cudaMemcpyDeviceToHost);
        cudaMemcpy(&p, pout, 4, cudaMemcpyDeviceToHost);
        std::vector<float> got(256);
        cudaMemcpy(got.data(), steps % 2 ? b : a, 1024, cudaMemcpyDeviceToHost);
        const bool ok = job == 0 ? got == ref : p == pref;
        std::printf("%s %s  %5lld cycles  %5lld ns per step  %s  %s\n", job == 0 ? "chain   " : "decision", modes[mode],
                    h[0], h[1], ok ? "result ok" : "RESULT WRONG", cudaGetErrorString(e));
        std::fflush(stdout);
      }
  return 0;
}
