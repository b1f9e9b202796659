// Probe: latency of a shared-memory atomic through a generic address (what
// cuda::atomic_ref<T, thread_scope_block> emits: inline asm on a generic pointer) against
// one through a shared address (atomicAdd on a __shared__ variable: atom.shared.add).
// Lane 0 of one warp runs 1000 dependent atomics (each adds the previous result's low bit).
#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>
__shared__ unsigned s_word;
__global__ void probe(int mode, long long* out, unsigned* sink) {
  if (threadIdx.x == 0) s_word = 0;
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned v = 1, acc = 0;
  unsigned* volatile gp = &s_word;  // hide the address space
  unsigned* p = mode >= 2 ? gp : &s_word;
  long long t0 = clock64();
  for (int i = 0; i < 1000; ++i) {
    unsigned r;
    if (mode == 0) r = atomicAdd(&s_word, v);                                     // shared address
    else if (mode == 1) r = cuda::atomic_ref<unsigned, cuda::thread_scope_block>(s_word).fetch_add(v, cuda::std::memory_order_relaxed);
    else if (mode == 2) r = cuda::atomic_ref<unsigned, cuda::thread_scope_block>(*p).fetch_add(v, cuda::std::memory_order_relaxed);
    else if (mode == 3) r = cuda::atomic_ref<unsigned, cuda::thread_scope_block>(*p).load(cuda::std::memory_order_relaxed);
    else r = *reinterpret_cast<volatile unsigned*>(p);
    v = (r & 1u) + 1u;
    acc += r;
  }
  long long t1 = clock64();
  out[0] = (t1 - t0) / 1000;
  sink[0] = acc;
}
int main() {
  long long* out; long long h; unsigned* sink;
  cudaMalloc(&out, 8); cudaMalloc(&sink, 4);
  const char* names[] = {"atomicAdd(__shared__)", "atomic_ref<block> fetch_add, direct", "atomic_ref<block> fetch_add, generic ptr",
                         "atomic_ref<block> load, generic ptr", "volatile load, generic ptr"};
  for (int mode = 0; mode < 5; ++mode) {
    probe<<<1, 32>>>(mode, out, sink);
    cudaMemcpy(&h, out, 8, cudaMemcpyDeviceToHost);
    printf("%-45s %lld cycles per dependent op\n", names[mode], h);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
