// weft/config.hpp - compilation-mode macros shared by every weft header.
//
// weft sources compile in three ways:
//   * clang in CUDA mode, host pass    (__CUDACC__ defined, __CUDA_ARCH__ not)
//   * clang in CUDA mode, device pass  (__CUDACC__ and __CUDA_ARCH__ defined)
//   * plain C++ (g++ or clang)         (neither defined): the host-only build used by CI
// Code that differs between the host and the device branches on WEFT_DEVICE_PASS.
#pragma once

#if defined(__CUDACC__)
#define WEFT_HOST_DEVICE __host__ __device__
#define WEFT_DEVICE __device__
#define WEFT_CUDA_COMPILE 1
#else
#define WEFT_HOST_DEVICE
#define WEFT_DEVICE
#define WEFT_CUDA_COMPILE 0
#endif

#if defined(__CUDA_ARCH__)
#define WEFT_DEVICE_PASS 1
#else
#define WEFT_DEVICE_PASS 0
#endif

// The device code needs sm_90 or later: mbarrier.try_wait (a lone task's jobs shared with
// its block's idle warps), and independent thread scheduling (sm_70+), on which diverged
// lanes of one warp spinning on a lock another lane holds rely (the timer heap, the
// mailbox overflow ring's take). Said here rather than by ptxas, or by a hang.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "weft's device code needs sm_90 or later (WEFT_CUDA_ARCHS): mbarrier.try_wait, independent thread scheduling"
#endif

// WEFT_DEVICE_OWNER_ABI marks weft's move-only owners (task, join_handle) in the device
// pass. clang's NVPTX ABI passes an argument of non-trivial class type *by value* as a
// bitwise `byval` copy, and the caller still destroys its own temporary afterwards. A
// callee that moves out of its parameter (every coroutine does: parameters move into the
// frame) empties the copy, not the temporary, so the caller's destructor destroys the
// frame that the callee now owns: a use-after-free (docs/design.md, "Device pitfalls").
// [[clang::trivial_abi]] makes the callee own and destroy the copy it was given, and the
// caller destroy nothing: one owner, as C++ intends. Host passes keep the normal ABI.
#if WEFT_DEVICE_PASS
#define WEFT_DEVICE_OWNER_ABI [[clang::trivial_abi]]
#else
#define WEFT_DEVICE_OWNER_ABI
#endif

// Size of an emulated or real warp. Fixed: weft's batching assumes 32 lanes.
#define WEFT_WARP_SIZE 32

namespace weft::detail {

// Reports a broken precondition (a programming error, not a runtime error) and stops.
// Runtime errors travel as weft::result values; this is only for contract violations
// such as reading the value of a result that holds an error.
[[noreturn]] WEFT_HOST_DEVICE void contract_violation(const char* what) noexcept;

}  // namespace weft::detail

#if WEFT_DEVICE_PASS
WEFT_HOST_DEVICE inline void weft::detail::contract_violation(const char* what) noexcept {
  printf("weft: contract violation: %s\n", what);
  __trap();
  __builtin_unreachable();
}
#else
#include <cstdio>
#include <cstdlib>
WEFT_HOST_DEVICE inline void weft::detail::contract_violation(const char* what) noexcept {
  std::fprintf(stderr, "weft: contract violation: %s\n", what);
  std::abort();
}
#endif
