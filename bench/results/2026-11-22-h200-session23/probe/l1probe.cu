// Does a global store leave its line in L1 for the same thread's next load? (sm_90)
#include <cstdio>
#include <cstdint>
__device__ __forceinline__ unsigned ld_ca(const unsigned* p) { unsigned v; asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_def(const unsigned* p) { unsigned v; asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_cg(const unsigned* p) { unsigned v; asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_def(unsigned* p, unsigned v) { asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_last(unsigned* p, unsigned v) { asm volatile("st.global.L1::evict_last.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_wt(unsigned* p, unsigned v) { asm volatile("st.global.wt.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_generic(unsigned* p, unsigned v) { asm volatile("st.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ unsigned ld_generic(const unsigned* p) { unsigned v; asm volatile("ld.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

constexpr int iters = 1000;
// buf[0..31] is one 128-byte line, all zeros. Each mode runs a dependent chain: the next
// address is base + v (v is always 0), so each load waits for the one before.
__global__ void probe(unsigned* buf, unsigned* other, long long* out, int mode) {
  if (threadIdx.x != 0) return;
  unsigned* p = buf;
  unsigned v = ld_ca(p); v += ld_ca(p + 1); // warm the line
  v = ld_ca(p);
  __syncwarp();
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    unsigned* q = p + v;
    switch (mode) {
      case 0: v = ld_def(q); break;                         // load only (L1 hit)
      case 1: v = ld_cg(q); break;                          // L2
      case 2: st_def(q + 1, v); v = ld_def(q); break;       // store to the same line (other word), then load
      case 3: st_def(q, v); v = ld_def(q); break;           // store the same word, then load it
      case 4: st_last(q + 1, v); v = ld_def(q); break;      // evict_last hint on the store
      case 5: st_def(other + 64, v); v = ld_def(q); break;  // store to another line
      case 6: st_wt(q + 1, v); v = ld_def(q); break;
      case 7: st_generic(q + 1, v); v = ld_generic(q); break;  // generic addressing, as frames use
      case 8: v = ld_generic(q); break;
      case 9: st_def(q + 1, v); __syncwarp(); v = ld_def(q); break;
    }
  }
  long long t1 = clock64();
  out[0] = (t1 - t0) / iters;
  out[1] = v;
}
int main() {
  unsigned *buf, *other; long long* out;
  cudaMalloc(&buf, 4096); cudaMalloc(&other, 4096); cudaMallocManaged(&out, 16);
  cudaMemset(buf, 0, 4096); cudaMemset(other, 0, 4096);
  const char* names[] = {"load only (L1 hit)", "ld.cg (L2)", "st same line other word, ld", "st same word, ld",
                         "st.L1::evict_last same line, ld", "st other line, ld", "st.wt same line, ld",
                         "generic st same line, generic ld", "generic ld only", "st same line, __syncwarp, ld"};
  for (int rep = 0; rep < 2; ++rep)
    for (int m = 0; m < 10; ++m) {
      probe<<<1, 32>>>(buf, other, out, m);
      cudaError_t e = cudaDeviceSynchronize();
      if (e) { printf("mode %d: %s\n", m, cudaGetErrorString(e)); return 1; }
      printf("rep %d mode %d %-36s %lld cycles/iter\n", rep, m, names[m], out[0]);
    }
  return 0;
}
