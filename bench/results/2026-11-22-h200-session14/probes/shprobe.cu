#include <cstdio>
#include <cuda/atomic>
#include <cuda_runtime.h>
// An inline bulk step, one warp: lane 0 (the task) posts a job of n elements, lanes 1-31
// run it, lane 0 goes on when they are done. Where the job lives, and how the lanes meet.
struct job;
typedef void (*chunk_t)(const job&, unsigned, unsigned, unsigned);
struct job { chunk_t run; const void* fn; unsigned long long n; unsigned chunk_items, chunks; };
struct lam { const float* src; float* dst; };
__device__ void __noinline__ run_el(const job& j, unsigned c, unsigned lane, unsigned lanes) {
  const lam& f = *static_cast<const lam*>(j.fn);
  const unsigned long long begin = (unsigned long long)c * j.chunk_items;
  const unsigned long long end = j.n - begin < j.chunk_items ? j.n : begin + j.chunk_items;
  for (unsigned long long i = begin + lane; i < end; i += lanes) f.dst[i] = f.src[i] * 0.999f + f.src[(i + 1) % 256];
}
__device__ chunk_t g_run = run_el;
struct frame { job j; lam f; };
__shared__ const job* sh_jobp;
__shared__ job sh_job;
__shared__ lam sh_lam;
__shared__ unsigned sh_seq, sh_done;
__global__ void k(int mode, int steps, int n, long long* out, float* buf) {
  const unsigned lane = threadIdx.x;
  frame* fr = reinterpret_cast<frame*>(buf + 4096);
  float* a = buf;
  float* b = buf + 1024;
  if (lane == 0) { sh_seq = 0; sh_done = 0; }
  __syncwarp();
  long long t0 = clock64();
  if (mode == 0) {  // job and callable in the frame (global), two __syncwarp at two places
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) {
        fr->f.src = s & 1 ? b : a; fr->f.dst = s & 1 ? a : b;
        fr->j.run = g_run; fr->j.fn = &fr->f; fr->j.n = n; fr->j.chunk_items = 1024; fr->j.chunks = 1;
        sh_jobp = &fr->j;
        __syncwarp(); __syncwarp();
      }
      sh_jobp = nullptr; __syncwarp();
    } else {
      for (;;) {
        __syncwarp();
        const job* j = sh_jobp;
        if (!j) break;
        for (unsigned c = 0; c < j->chunks; ++c) j->run(*j, c, lane - 1, 31);
        __syncwarp();
      }
    }
  } else if (mode == 1) {  // descriptor and callable copied to shared memory, same barriers
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) {
        sh_lam.src = s & 1 ? b : a; sh_lam.dst = s & 1 ? a : b;
        sh_job.run = g_run; sh_job.fn = &sh_lam; sh_job.n = n; sh_job.chunk_items = 1024; sh_job.chunks = 1;
        sh_jobp = &sh_job;
        __syncwarp(); __syncwarp();
      }
      sh_jobp = nullptr; __syncwarp();
    } else {
      for (;;) {
        __syncwarp();
        const job* j = sh_jobp;
        if (!j) break;
        const job jj = *j;
        for (unsigned c = 0; c < jj.chunks; ++c) jj.run(jj, c, lane - 1, 31);
        __syncwarp();
      }
    }
  } else if (mode == 2 || mode == 3) {  // shared descriptor, spin on block-scope flags instead of barriers
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> seq(sh_seq), done(sh_done);
    if (lane == 0) {
      for (int s = 0; s < steps; ++s) {
        sh_lam.src = s & 1 ? b : a; sh_lam.dst = s & 1 ? a : b;
        sh_job.run = g_run; sh_job.fn = &sh_lam; sh_job.n = n; sh_job.chunk_items = 1024; sh_job.chunks = 1;
        seq.store(2 * s + 2, cuda::std::memory_order_release);
        while (done.load(cuda::std::memory_order_acquire) != 31u * (s + 1)) if (mode == 3) __nanosleep(32);
      }
      seq.store(1, cuda::std::memory_order_release);
    } else {
      unsigned want = 2;
      for (;;) {
        unsigned v;
        while ((v = seq.load(cuda::std::memory_order_acquire)) != want && v != 1) if (mode == 3) __nanosleep(32);
        if (v == 1) break;
        const job jj = sh_job;
        for (unsigned c = 0; c < jj.chunks; ++c) jj.run(jj, c, lane - 1, 31);
        done.fetch_add(1, cuda::std::memory_order_release);
        want += 2;
      }
    }
    __syncwarp();
  }
  long long t1 = clock64();
  if (lane == 0) out[mode] = t1 - t0;
}
int main() {
  long long* out; float* buf;
  cudaMalloc(&out, 256); cudaMalloc(&buf, 1 << 20); cudaMemset(buf, 0, 1 << 20);
  const char* names[] = {"frame job, 2 barriers (today)", "shared job+callable, 2 barriers", "shared job, spin flags", "shared job, spin flags + nanosleep"};
  const int ns[] = {1, 256};
  for (int rep = 0; rep < 2; ++rep)
    for (int n : ns)
      for (int m = 0; m < 4; ++m) {
        k<<<1, 32>>>(m, 10000, n, out, buf);
        long long r[8]; cudaMemcpy(r, out, 64, cudaMemcpyDeviceToHost);
        printf("n=%4d %-38s %8.1f cycles/step %s\n", n, names[m], r[m] / 10000.0, cudaGetErrorString(cudaGetLastError()));
      }
  return 0;
}
