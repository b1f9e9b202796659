#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
// One lane chases pointers through lines of 128 B. Modes:
// 0 warm: chase only (every line loaded once before)
// 1 self-store: after each load, store the same value back to the line just read (same thread)
// 2 store-then-load: store a[j].pad then load a[j].next (the line was just written)
// 3 shared memory chase
// 4 other-lane store: lane 1 writes the line, syncwarp, lane 0 loads it
struct alignas(128) node { node* next; long long pad[15]; };
__global__ void k(node* a, int steps, int mode, long long* out) {
  __shared__ node sh[32];
  const int lane = threadIdx.x;
  if (mode == 3) { if (lane == 0) for (int i = 0; i < 32; ++i) sh[i].next = &sh[(i + 1) % 32]; __syncwarp(); }
  node* p = mode == 3 ? &sh[0] : &a[0];
  for (int w = 0; w < 64; ++w) if (lane == 0) p = p->next;  // warm
  __syncwarp();
  long long t0 = clock64();
  for (int s = 0; s < steps; ++s) {
    if (mode == 0 || mode == 3) { if (lane == 0) p = p->next; }
    else if (mode == 1) { if (lane == 0) { node* q = p->next; p->next = q; p = q; } }
    else if (mode == 2) { if (lane == 0) { p->pad[0] = s; p = p->next; } }
    else if (mode == 4) {
      unsigned long long pp = __shfl_sync(~0u, (unsigned long long)p, 0);
      if (lane == 1) ((node*)pp)->pad[1] = s;
      __syncwarp();
      if (lane == 0) p = p->next;
    }
  }
  long long t1 = clock64();
  if (lane == 0) { out[0] = t1 - t0; out[1] = (long long)p; }
}
int main() {
  node* a; long long* out;
  cudaMalloc(&a, sizeof(node) * 32); cudaMalloc(&out, 16);
  node h[32];
  for (int i = 0; i < 32; ++i) h[i].next = (node*)((char*)a + sizeof(node) * ((i + 1) % 32));
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  const char* names[] = {"warm L1 chase", "load then store back same line", "store then load same line", "shared chase", "other lane stores, then load"};
  for (int rep = 0; rep < 2; ++rep)
  for (int m = 0; m < 5; ++m) {
    k<<<1, 32>>>(a, 10000, m, out);
    long long r[2]; cudaMemcpy(r, out, 16, cudaMemcpyDeviceToHost);
    printf("%-40s %8.1f cycles/step\n", names[m], r[0] / 10000.0);
  }
  return 0;
}
