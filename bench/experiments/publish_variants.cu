// bench/experiments/publish_variants.cu - how a GPU lane should publish a small request
// to a host thread through pinned mapped memory: a standalone experiment (not part of
// the build), kept with its results under bench/results/.
//
// One lane and one host thread ping-pong `rounds` times. Each round the lane publishes a
// 64-byte request (8 words that depend on the round), the host reads and checks it and
// answers with one word, and the lane waits for that word. Variants of the publication:
//   flag     no payload: one release store (the issue's floor, as bench/io_bench.cpp)
//   fence    8 plain stores, fence.acq_rel.sys, relaxed flag store (weft at 7369ea5)
//   release  8 plain stores, st.release.sys of the flag
//   ll       16 LL words (4 payload bytes + a 4-byte flag each), relaxed, no fence
//   ll_fence fence.acq_rel.sys first, then the 16 LL words (a release for what came
//            before the request, paid before the request's own stores)
//   ll_gpu   fence.acq_rel.gpu first, then the 16 LL words
// Printed per variant: the round trip p50/p10/p90 in us (host clock, one detection to
// the next), and the lane's cycles from the start of a publication to its answer.
// Also the flag variant pinned to a few SMs (is the floor the same from every SM?).
//
// Build: clang++-22 -std=c++20 -O3 -x cuda --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda
//   -Wno-unknown-cuda-version -I/usr/local/cuda/include/cccl publish_variants.cu
//   -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -pthread -o publish_variants
#include <cuda/atomic>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <immintrin.h>

enum variant : int { v_flag, v_fence, v_release, v_ll, v_ll_fence, v_ll_gpu, v_count };
const char* const names[] = {"flag", "fence", "release", "ll", "ll_fence", "ll_gpu"};

struct alignas(128) shared_block {
  std::uint64_t words[16];      // the request: plain payload words 0-7 + flag word 8, or 16 LL words
  alignas(128) std::uint64_t reply[8];  // the host's answer: one word, or 6 LL words
  alignas(128) unsigned claimed;
};

using sys_u64 = cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>;
using sys_u32 = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;

__device__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

__device__ void publish(int v, shared_block* b, unsigned r) {
  std::uint64_t* w = b->words;
  switch (v) {
    case v_flag:
      sys_u64(w[8]).store(r, cuda::std::memory_order_release);
      break;
    case v_fence:
      for (int i = 0; i < 8; ++i) w[i] = std::uint64_t(r) * 8 + i;
      cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_system);
      sys_u64(w[8]).store(r, cuda::std::memory_order_relaxed);
      break;
    case v_release:
      for (int i = 0; i < 8; ++i) w[i] = std::uint64_t(r) * 8 + i;
      sys_u64(w[8]).store(r, cuda::std::memory_order_release);
      break;
    case v_ll_fence:
      cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_system);
      [[fallthrough]];
    case v_ll:
      for (int i = 0; i < 16; ++i) sys_u64(w[i]).store(std::uint64_t(r) << 32 | (r * 16 + i), cuda::std::memory_order_relaxed);
      break;
    case v_ll_gpu:
      cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
      for (int i = 0; i < 16; ++i) sys_u64(w[i]).store(std::uint64_t(r) << 32 | (r * 16 + i), cuda::std::memory_order_relaxed);
      break;
  }
}

// How the lane waits for the answer: one word with acquire or relaxed loads, or six LL
// words (weft's completion header) read as weft's drainer does (five relaxed, word 0 last
// with acquire) or all relaxed.
// ll6_fwd: the host stores the six words first to last (as weft's reactor does);
// ll6_nt: the host streams a whole 64-byte line (eight LL words) with non-temporal
// stores, so the line reaches memory in one write; ll6_late: the lane waits 2 us before
// its first poll; ll6_w0: the lane polls word 0 alone, then reads the other five.
enum reply_kind : int { r_acq, r_relaxed, r_ll6, r_ll6_relaxed, r_ll6_fwd, r_ll6_nt, r_ll6_late, r_ll6_w0, r_count };
const char* const reply_names[] = {"acq", "relaxed", "ll6", "ll6_relaxed", "ll6_fwd", "ll6_nt", "ll6_late", "ll6_w0"};

__device__ void await_reply(int k, shared_block* b, unsigned r) {
  if (k == r_acq || k == r_relaxed) {
    sys_u64 w(b->reply[0]);
    const auto mo = k == r_acq ? cuda::std::memory_order_acquire : cuda::std::memory_order_relaxed;
    while (w.load(mo) != r) {
    }
    return;
  }
  if (k == r_ll6_late) __nanosleep(2000);
  if (k == r_ll6_w0) {
    sys_u64 w0(b->reply[0]);
    while ((w0.load(cuda::std::memory_order_acquire) >> 32) != r) {
    }
  }
  for (;;) {
    std::uint64_t x[6];
    for (int j = 1; j < 6; ++j) x[j] = sys_u64(b->reply[j]).load(cuda::std::memory_order_relaxed);
    x[0] = sys_u64(b->reply[0]).load(k == r_ll6_relaxed ? cuda::std::memory_order_relaxed : cuda::std::memory_order_acquire);
    bool ok = true;
    for (int j = 0; j < 6; ++j) ok = ok && (x[j] >> 32) == r;
    if (ok) return;
  }
}

__global__ void lane(int v, int k, shared_block* b, unsigned rounds, int target_sm, long long* cycles) {
  if (threadIdx.x != 0) return;
  if (target_sm >= 0) {
    if (smid() != unsigned(target_sm)) return;
    if (atomicCAS(&b->claimed, 0u, 1u) != 0u) return;  // one block on that SM plays
  }
  for (unsigned r = 1; r <= rounds; ++r) {
    const long long t0 = clock64();
    publish(v, b, r);
    await_reply(k, b, r);
    cycles[r - 1] = clock64() - t0;
  }
}

// The host's side of round r: waits for the request, checks it; false on a bad payload.
bool take(int v, shared_block* b, unsigned r) {
  std::uint64_t* w = b->words;
  if (v == v_flag || v == v_fence || v == v_release) {
    std::atomic_ref<std::uint64_t> flag(w[8]);
    while (flag.load(std::memory_order_acquire) != r) {
    }
    if (v == v_flag) return true;
    for (int i = 0; i < 8; ++i)
      if (w[i] != std::uint64_t(r) * 8 + i) return false;
    return true;
  }
  for (int i = 0; i < 16; ++i) {
    std::atomic_ref<std::uint64_t> word(w[i]);
    std::uint64_t x = word.load(std::memory_order_acquire);
    while ((x >> 32) != r) x = word.load(std::memory_order_acquire);
    if ((x & 0xffffffffu) != ((r * 16 + i) & 0xffffffffu)) return false;
  }
  return true;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::size_t(p * double(v.size() - 1))];
}

int run(int v, unsigned rounds, int target_sm, int k = r_acq) {
  shared_block* b = nullptr;
  long long* cycles = nullptr;
  if (cudaHostAlloc(&b, sizeof(shared_block), cudaHostAllocMapped) != cudaSuccess) return 1;
  if (cudaMalloc(&cycles, rounds * sizeof(long long)) != cudaSuccess) return 1;
  std::memset(b, 0, sizeof(shared_block));
  const int blocks = target_sm >= 0 ? 1056 : 1;  // 8 per SM: one lands on the target
  lane<<<blocks, 32>>>(v, k, b, rounds, target_sm, cycles);
  std::vector<double> rt;
  rt.reserve(rounds);
  bool ok = true;
  auto last = std::chrono::steady_clock::now();
  for (unsigned r = 1; r <= rounds; ++r) {
    ok = take(v, b, r) && ok;
    const auto now = std::chrono::steady_clock::now();
    if (r > 1) rt.push_back(std::chrono::duration<double, std::micro>(now - last).count());
    last = now;
    if (k == r_acq || k == r_relaxed) {
      std::atomic_ref<std::uint64_t>(b->reply[0]).store(r, std::memory_order_release);
    } else if (k == r_ll6_fwd) {
      for (int j = 0; j < 6; ++j) std::atomic_ref<std::uint64_t>(b->reply[j]).store(std::uint64_t(r) << 32 | j, std::memory_order_relaxed);
    } else if (k == r_ll6_nt) {
      for (int j = 0; j < 8; ++j) _mm_stream_si64(reinterpret_cast<long long*>(&b->reply[j]), (long long)(std::uint64_t(r) << 32 | j));
      _mm_sfence();
    } else {
      for (int j = 5; j >= 0; --j) std::atomic_ref<std::uint64_t>(b->reply[j]).store(std::uint64_t(r) << 32 | j, std::memory_order_release);
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::vector<long long> c(rounds);
  cudaMemcpy(c.data(), cycles, rounds * sizeof(long long), cudaMemcpyDeviceToHost);
  std::vector<double> cd(c.begin() + 1, c.end());
  std::printf("%-9s %-11s sm %4d  rtt p50 %.3f p10 %.3f p90 %.3f us  lane cycles p50 %.0f  payload %s\n", names[v], reply_names[k], target_sm,
              pct(rt, 0.5), pct(rt, 0.1), pct(rt, 0.9), pct(cd, 0.5), ok ? "ok" : "BAD");
  cudaFreeHost(b);
  cudaFree(cycles);
  return ok ? 0 : 2;
}

// Is the floor a property of the pinned allocation or of the moment? Six blocks, each
// measured four times over (flag variant, `rounds` each), printed as a matrix: rows are
// allocations, columns are passes.
int placement(unsigned rounds) {
  const int blocks = 6, passes = 4;
  shared_block* b[blocks];
  long long* cycles = nullptr;
  if (cudaMalloc(&cycles, rounds * sizeof(long long)) != cudaSuccess) return 1;
  for (auto& p : b) {
    if (cudaHostAlloc(&p, sizeof(shared_block), cudaHostAllocMapped) != cudaSuccess) return 1;
  }
  double p50[blocks][passes];
  for (int pass = 0; pass < passes; ++pass)
    for (int i = 0; i < blocks; ++i) {
      std::memset(b[i], 0, sizeof(shared_block));
      lane<<<1, 32>>>(v_flag, r_acq, b[i], rounds, -1, cycles);
      std::vector<double> rt;
      auto last = std::chrono::steady_clock::now();
      for (unsigned r = 1; r <= rounds; ++r) {
        take(v_flag, b[i], r);
        const auto now = std::chrono::steady_clock::now();
        if (r > 1) rt.push_back(std::chrono::duration<double, std::micro>(now - last).count());
        last = now;
        std::atomic_ref<std::uint64_t>(b[i]->reply[0]).store(r, std::memory_order_release);
      }
      if (cudaDeviceSynchronize() != cudaSuccess) return 1;
      p50[i][pass] = pct(rt, 0.5);
    }
  for (int i = 0; i < blocks; ++i) {
    std::printf("allocation %d (%p, page offset %5lu):", i, static_cast<void*>(b[i]),
                static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(b[i]) & 0x1fffff));
    for (int pass = 0; pass < passes; ++pass) std::printf(" %.3f", p50[i][pass]);
    std::printf(" us\n");
  }
  for (auto& p : b) cudaFreeHost(p);
  cudaFree(cycles);
  return 0;
}

int main(int argc, char** argv) {
  const unsigned rounds = argc > 1 ? unsigned(std::atoi(argv[1])) : 20000;
  if (argc > 2 && std::strcmp(argv[2], "placement") == 0) return placement(rounds);
  int rc = 0;
  for (int rep = 0; rep < 2; ++rep)
    for (int v = 0; v < v_count; ++v) rc |= run(v, rounds, -1);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int rep = 0; rep < 2; ++rep)
    for (int v : {v_fence, v_ll})
      for (int k = 0; k < r_count; ++k) rc |= run(v, rounds, -1, k);
  if (argc > 2) return rc;
  for (int sm : {0, 1, 17, 33, 50, 66, 83, 100, 116, sms - 1}) rc |= run(v_flag, rounds / 4, sm);
  for (int sm : {0, 66, sms - 1}) rc |= run(v_fence, rounds / 4, sm);
  return rc;
}
