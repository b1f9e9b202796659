// weft/executor/device_hooks.hpp - the device side of weft/detail/backend_hooks.hpp.
//
// Device code allocates frames from a size_class_pool in device memory, named by
// g_device_frame_pool (installed by whoever launches device tasks: the device smoke
// path today, the persistent kernel of the device executor later). With no pool
// installed, allocation returns nullptr, which tasks see as errc::out_of_memory.
//
// The device executor (persistent kernel, warp-level queues) is separate work. Until
// it is installed, g_device_scheduler is null: spawn() in device code then returns a
// handle holding errc::no_runtime, and device tasks are driven directly by
// detail::run_inline (await chains and yields; no wake-ups).
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"
#include "weft/executor/frame_pool.hpp"

#if WEFT_CUDA_COMPILE
namespace weft::exec {
__device__ inline size_class_pool* g_device_frame_pool = nullptr;
__device__ inline void* g_device_scheduler = nullptr;
}  // namespace weft::exec

namespace weft::detail {

__device__ inline void* device_current_scheduler() noexcept { return exec::g_device_scheduler; }

// Reached only with a non-null scheduler, which nothing installs yet (see above).
__device__ inline errc device_submit_root(void*, task_header*) noexcept { return errc::backend_unavailable; }
__device__ inline void device_schedule(task_header*) noexcept {
  contract_violation("device wake-up without a device executor");
}
__device__ inline void device_destroy_root(task_header* t) noexcept { coro_handle{frame_of(t)}.destroy(); }
__device__ inline void device_notify_host_waiters(void*) noexcept {
  contract_violation("host waiter on the device without a device executor");
}

// The GPU's global nanosecond timer (%globaltimer; its resolution is about 1 us on
// recent GPUs, coarser on some older ones).
__device__ inline std::uint64_t device_now_ns() noexcept {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// No device timer yet: sleep_for sees false and fails the sleeping task with
// errc::backend_unavailable instead of parking it. The device executor replaces this.
__device__ inline bool device_schedule_at(task_header*, std::uint64_t) noexcept { return false; }

__device__ inline void* device_frame_allocate(std::size_t n) noexcept {
  exec::size_class_pool* p = exec::g_device_frame_pool;
  return p ? p->allocate(n) : nullptr;
}
__device__ inline void device_frame_deallocate(void* f, std::size_t n) noexcept {
  exec::g_device_frame_pool->deallocate(f, n);
}

}  // namespace weft::detail
#endif
