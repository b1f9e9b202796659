// Probe: a hand-over between two warps of one block through shared memory, as a lone
// task's publication to a serving warp would be. Warp 0 lane 0 (the "task") optionally
// stores 32 global words, then publishes round r in a shared word (release, block scope);
// warp 1 (the "server") spins on it, acquires, loads 32 words (one per lane), stores 32
// results and reports r in a second shared word (release); the task spins on that.
// Cycles (SM clock64, both warps on one SM): task publish -> server sees it, server sees
// -> its loads returned, task publish -> task sees the report. Data: 0 = the task's own
// words just stored (another warp's stores), 1 = words the server itself stored in the
// previous round, 2 = words nobody wrote since the start (L2-resident).
#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>
__shared__ unsigned s_pub, s_rep;
__shared__ long long s_tpub;
using batom = cuda::atomic_ref<unsigned, cuda::thread_scope_block>;
// flag: 0 = cuda::atomic_ref<block> (release store; relaxed spin + acquire fence),
// 1 = volatile shared word with __threadfence_block() on each side,
// 2 = atom.shared / ld.volatile.shared through the shared window (st.release.cta.shared.u32).
__device__ inline void put(int flag, unsigned* w, unsigned v) {
  if (flag == 0) batom(*w).store(v, cuda::std::memory_order_release);
  else if (flag == 1) { __threadfence_block(); *reinterpret_cast<volatile unsigned*>(w) = v; }
  else asm volatile("st.release.cta.shared.u32 [%0], %1;" :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(w))), "r"(v) : "memory");
}
__device__ inline unsigned get(int flag, unsigned* w) {
  if (flag == 0) return batom(*w).load(cuda::std::memory_order_relaxed);
  if (flag == 1) return *reinterpret_cast<volatile unsigned*>(w);
  unsigned v;
  asm volatile("ld.relaxed.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(w))) : "memory");
  return v;
}
__global__ void probe(int flag, int data, int spin_all, unsigned* buf, long long* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) s_pub = s_rep = 0;
  __syncthreads();
  long long notice = 0, load = 0, round = 0;
  const int rounds = 2000;
  for (int r = 1; r <= rounds; ++r) {
    unsigned* words = data == 0 ? buf + r * 64 : data == 1 ? buf + 1000000 + (r - 1) * 64 : buf + 2000000;
    if (warp == 0 && lane == 0) {
      if (data == 0) for (int j = 0; j < 32; ++j) words[j] = r + j;
      const long long t0 = clock64();
      s_tpub = t0;
      put(flag, &s_pub, r);
      while (get(flag, &s_rep) != (unsigned)r) {}
      cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_block);
      round += clock64() - t0;
    } else if (warp == 1) {
      unsigned seen = 0;
      if (spin_all) {  // every lane polls: no __syncwarp after the spin
        while (get(flag, &s_pub) != (unsigned)r) {}
        cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_block);
      } else {
        if (lane == 0) {
          while (get(flag, &s_pub) != (unsigned)r) {}
          cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_block);
        }
        __syncwarp();
      }
      const long long t1 = clock64();
      const unsigned v = words[lane];
      seen = v + 1;
      buf[1000000 + r * 64 + lane] = seen;  // next round's data for mode 1
      const long long t2 = clock64();
      __syncwarp();
      if (lane == 0) {
        notice += t1 - s_tpub;
        load += t2 - t1;
        put(flag, &s_rep, r);
      }
    }
  }
  if (warp == 1 && lane == 0) { out[0] = notice / rounds; out[1] = load / rounds; }
  if (warp == 0 && lane == 0) out[2] = round / rounds;
}
int main() {
  unsigned* buf; long long* out; long long h[3];
  cudaMalloc(&buf, 3000000 * 4); cudaMemset(buf, 0, 3000000 * 4);
  cudaMalloc(&out, 24);
  const char* names[] = {"data the task just stored", "data the server stored last round", "data nobody wrote (L2)"};
  const char* flags[] = {"atomic_ref<block>", "volatile + threadfence_block", "st.release/ld.relaxed .cta.shared"};
  for (int all = 0; all < 2; ++all)
    for (int f = 0; f < 3; ++f)
      for (int d = 0; d < 3; ++d) {
        probe<<<1, 128>>>(f, d, all, buf, out);
        cudaMemcpy(h, out, 24, cudaMemcpyDeviceToHost);
        printf("%-13s %-34s %-34s notice %lld, load %lld, round trip %lld cycles\n", all ? "all lanes spin" : "lane 0 spins",
               flags[f], names[d], h[0], h[1], h[2]);
      }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
