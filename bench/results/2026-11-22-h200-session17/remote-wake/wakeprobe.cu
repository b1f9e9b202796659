// Probe (not built by the tree): what one hop of a ping-pong between two tasks pinned to
// different SMs would cost if a wake pushed the woken task into its home warp's inbox and
// that warp, idle, polled the inbox. Two warps (blocks 0 and 1, checked to sit on
// different SMs) play the two tasks. A hop from X to Y, with the atomics weft's path has:
//   X: sent_at store; event exchange (acq_rel); the woken task's state fetch_or (acq_rel);
//      inbox store (release)
//   Y: polls its inbox (relaxed load, __nanosleep(nap) between polls), acquire fence,
//      clears the inbox, state fetch_xor (relaxed: begin_run), four dependent loads of
//      the "frame", the event's acquire load, the event reset (CAS acq_rel)
// and then Y plays X for the hop back ("wake"). Two leaner hops: one word carries the
// wake, a release store ("lean") or one acq_rel exchange ("xchg"), and Y's side is the
// poll, an acquire fence and the four loads. Also the bare floor: a flag bounced between the
// two warps (store / spin on a relaxed load). One-way = round trip / 2, from clock64 on
// block 0's SM, converted to ns by the run's globaltimer span.
//   clang++-22 -O3 --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda --no-offload-new-driver \
//     -isystem /usr/local/cuda/include/cccl -std=c++20 wakeprobe.cu -o wakeprobe \
//     /usr/local/cuda/lib/libcudart_static.a -ldl -lrt -lpthread
#include <cuda/atomic>
#include <cstdio>
#include <vector>
#include <algorithm>

using dev_u64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;
using dev_u32 = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

struct side {
  unsigned long long ev;      // the event word each side waits on
  unsigned long long inbox;   // the home warp's inbox (one slot)
  unsigned state;             // the task's state word
  unsigned long long frame[4];  // a chain of pointers: the resume's dependent loads
  unsigned long long sent_at;
  unsigned flag;              // the bare floor's flag
};

__device__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// The leaner hops: one word carries the wake (mode 2: a release store; mode 3: one
// acq_rel exchange), and the receiver's side is the poll, an acquire fence and the
// resume's four dependent loads.
// Two more split the lean hop's cost: mode 4 sends with a relaxed store and receives
// with no fence (the transport, and four loads of the receiver's own frame, which
// nobody else writes, from L1); mode 5 sends relaxed and keeps the receiver's acquire
// fence (which drops the SM's L1, so the four loads go to L2).
__device__ void send_lean(side& to, int mode) {
  to.sent_at = gtimer();
  if (mode == 2) dev_u64(to.inbox).store(reinterpret_cast<unsigned long long>(&to), cuda::std::memory_order_release);
  else if (mode == 3) dev_u64(to.inbox).exchange(reinterpret_cast<unsigned long long>(&to), cuda::std::memory_order_acq_rel);
  else dev_u64(to.inbox).store(reinterpret_cast<unsigned long long>(&to), cuda::std::memory_order_relaxed);
}
__device__ unsigned long long receive_lean(side& me, unsigned nap, int mode) {
  while (dev_u64(me.inbox).load(cuda::std::memory_order_relaxed) == 0)
    if (nap) __nanosleep(nap);
  if (mode != 4) cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
  dev_u64(me.inbox).store(0, cuda::std::memory_order_relaxed);
  unsigned long long p = me.frame[0];
  for (int i = 0; i < 3; ++i) p = reinterpret_cast<unsigned long long*>(p)[0];
  return p;
}

__device__ void send(side& to) {
  to.sent_at = gtimer();
  dev_u64(to.ev).exchange(1, cuda::std::memory_order_acq_rel);
  dev_u32(to.state).fetch_or(1u, cuda::std::memory_order_acq_rel);
  dev_u64(to.inbox).store(reinterpret_cast<unsigned long long>(&to), cuda::std::memory_order_release);
}

__device__ unsigned long long receive(side& me, unsigned nap) {
  while (dev_u64(me.inbox).load(cuda::std::memory_order_relaxed) == 0)
    if (nap) __nanosleep(nap);
  cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
  dev_u64(me.inbox).store(0, cuda::std::memory_order_relaxed);
  dev_u32(me.state).fetch_xor(1u, cuda::std::memory_order_relaxed);
  unsigned long long p = me.frame[0];
  for (int i = 0; i < 3; ++i) p = reinterpret_cast<unsigned long long*>(p)[0];
  if (dev_u64(me.ev).load(cuda::std::memory_order_acquire) != 1) __trap();
  unsigned long long one = 1;
  dev_u64(me.ev).compare_exchange_strong(one, 0, cuda::std::memory_order_acq_rel, cuda::std::memory_order_relaxed);
  return p;
}

__global__ void hop_kernel(side* s, int rounds, unsigned nap, int mode, long long* rtt, unsigned* sms,
                           unsigned long long* span, unsigned long long* sink) {
  if (threadIdx.x != 0) return;
  const int me = blockIdx.x;
  const bool bare = mode == 0;
  sms[me] = smid();
  unsigned long long acc = 0;
  const unsigned long long g0 = gtimer();
  const long long c0 = clock64();
  for (int r = 0; r < rounds; ++r) {
    if (me == 0) {
      const long long t = clock64();
      if (bare) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s[1].flag).store(r + 1, cuda::std::memory_order_relaxed);
        while (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s[0].flag).load(cuda::std::memory_order_relaxed) != unsigned(r + 1))
          if (nap) __nanosleep(nap);
      } else if (mode == 1) {
        send(s[1]);
        acc += receive(s[0], nap);
      } else {
        send_lean(s[1], mode);
        acc += receive_lean(s[0], nap, mode);
      }
      rtt[r] = clock64() - t;
    } else {
      if (bare) {
        while (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s[1].flag).load(cuda::std::memory_order_relaxed) != unsigned(r + 1))
          if (nap) __nanosleep(nap);
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(s[0].flag).store(r + 1, cuda::std::memory_order_relaxed);
      } else if (mode == 1) {
        acc += receive(s[1], nap);
        send(s[0]);
      } else {
        acc += receive_lean(s[1], nap, mode);
        send_lean(s[0], mode);
      }
    }
  }
  if (me == 0) {
    span[0] = gtimer() - g0;
    span[1] = static_cast<unsigned long long>(clock64() - c0);
  }
  sink[me] = acc;
}

int main() {
  const int rounds = 20000;
  side* s;
  long long* rtt;
  unsigned* sms;
  unsigned long long *span, *sink;
  cudaMalloc(&s, 2 * sizeof(side));
  cudaMalloc(&rtt, rounds * sizeof(long long));
  cudaMallocManaged(&sms, 2 * sizeof(unsigned));
  cudaMallocManaged(&span, 2 * sizeof(unsigned long long));
  cudaMallocManaged(&sink, 2 * sizeof(unsigned long long));
  std::printf("%-6s %-6s %8s %10s %10s %10s  sms\n", "what", "nap_ns", "rounds", "p50_ns", "p99_ns", "mean_ns");
  const char* names[] = {"bare", "wake", "lean", "xchg", "nofen", "acqonl"};
  for (int mode = 0; mode < 6; ++mode) {
    for (unsigned nap : {0u, 32u, 128u, 256u, 512u}) {
      if (mode >= 4 && nap != 0 && nap != 128) continue;
      std::vector<side> init(2);
      for (auto& x : init) x = side{};
      cudaMemcpy(s, init.data(), 2 * sizeof(side), cudaMemcpyHostToDevice);
      // frame[i] points at frame[i + 1]'s address chain: four dependent loads
      for (int k = 0; k < 2; ++k) {
        unsigned long long f[4];
        for (int i = 0; i < 3; ++i) f[i] = reinterpret_cast<unsigned long long>(&s[k].frame[i + 1]);
        f[3] = 0;
        cudaMemcpy(&s[k].frame, f, sizeof f, cudaMemcpyHostToDevice);
      }
      void* args[] = {&s, (void*)&rounds, &nap, &mode, &rtt, &sms, &span, &sink};
      if (cudaLaunchCooperativeKernel((void*)hop_kernel, 2, 32, args, 0, 0) != cudaSuccess ||
          cudaDeviceSynchronize() != cudaSuccess) {
        std::printf("launch or run failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
      }
      std::vector<long long> v(rounds);
      cudaMemcpy(v.data(), rtt, rounds * sizeof(long long), cudaMemcpyDeviceToHost);
      const double ns_per_cycle = double(span[0]) / double(span[1]);
      std::sort(v.begin(), v.end());
      const double p50 = v[rounds / 2] * ns_per_cycle / 2, p99 = v[rounds * 99 / 100] * ns_per_cycle / 2;
      const double mean = double(span[0]) / rounds / 2;
      std::printf("%-6s %-6u %8d %10.0f %10.0f %10.0f  %u %u\n", names[mode], nap, rounds, p50, p99, mean,
                  sms[0], sms[1]);
    }
  }
  return 0;
}
