// weft/detail/atomic.hpp - scoped atomic references for every concurrent word in weft.
//
// weft uses libcu++'s cuda::atomic_ref with an explicit thread scope:
//   device_atomic<T>  queues, task state words, frame pools: shared by the GPU's
//                     threads (and, on the host backend, by host threads).
//   system_atomic<T>  mailbox words in pinned memory shared by the GPU and the host.
// A host-only build (and any build without libcu++) uses std::atomic_ref for both, which
// on the host gives the same guarantees: host threads are all "system scope" there. The
// build says which (WEFT_USE_LIBCUDACXX, a public definition of the weft target), so
// that every file of a program compiles the same atomics; without it, libcu++ is used
// when it can be included.
#pragma once
#include "weft/config.hpp"

#if defined(WEFT_USE_LIBCUDACXX)
#define WEFT_HAS_LIBCUDACXX WEFT_USE_LIBCUDACXX
#elif __has_include(<cuda/atomic>)
#define WEFT_HAS_LIBCUDACXX 1
#else
#define WEFT_HAS_LIBCUDACXX 0
#endif
#if WEFT_HAS_LIBCUDACXX
#include <cuda/atomic>
#else
#include <atomic>
#endif

namespace weft::detail {

#if WEFT_HAS_LIBCUDACXX
template <class T>
using device_atomic = cuda::atomic_ref<T, cuda::thread_scope_device>;
template <class T>
using system_atomic = cuda::atomic_ref<T, cuda::thread_scope_system>;
using memory_order = cuda::std::memory_order;
inline constexpr memory_order mo_relaxed = cuda::std::memory_order_relaxed;
inline constexpr memory_order mo_acquire = cuda::std::memory_order_acquire;
inline constexpr memory_order mo_release = cuda::std::memory_order_release;
inline constexpr memory_order mo_acq_rel = cuda::std::memory_order_acq_rel;
inline constexpr memory_order mo_seq_cst = cuda::std::memory_order_seq_cst;
// A sequentially consistent fence among the threads that share device memory.
WEFT_HOST_DEVICE inline void fence_device_seq_cst() noexcept {
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_device);
}
// An acquire fence among the threads that share device memory (after a relaxed RMW that
// read a release: the pair synchronises).
WEFT_HOST_DEVICE inline void fence_device_acquire() noexcept {
  cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_device);
}
// An acquire-release fence at system scope: the release of a GPU request's publication
// (mailbox_publish), before the slot's words.
WEFT_HOST_DEVICE inline void fence_system_acq_rel() noexcept {
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_system);
}
#else
template <class T>
using device_atomic = std::atomic_ref<T>;
template <class T>
using system_atomic = std::atomic_ref<T>;
using memory_order = std::memory_order;
inline constexpr memory_order mo_relaxed = std::memory_order_relaxed;
inline constexpr memory_order mo_acquire = std::memory_order_acquire;
inline constexpr memory_order mo_release = std::memory_order_release;
inline constexpr memory_order mo_acq_rel = std::memory_order_acq_rel;
inline constexpr memory_order mo_seq_cst = std::memory_order_seq_cst;
inline void fence_device_seq_cst() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void fence_device_acquire() noexcept { std::atomic_thread_fence(std::memory_order_acquire); }
inline void fence_system_acq_rel() noexcept { std::atomic_thread_fence(std::memory_order_acq_rel); }
#endif

}  // namespace weft::detail
