// src/cuda_memory_ops.cpp - how the reactor reaches GPU buffers on the cuda backend.
//
// The rings live in pinned, mapped host memory (cudaHostAllocMapped; with unified
// addressing the GPU uses the same pointer). A task's buffer the host cannot touch
// (cudaMalloc memory) is copied through a per-thread pinned staging buffer on a
// per-thread non-blocking stream: never the legacy default stream, which would wait
// for the persistent kernel and so never run.
#include "cuda_memory_ops.hpp"

#if WEFT_WITH_CUDA
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "weft/executor/cuda_device_scope.hpp"
#include "weft/runtime.hpp"

namespace weft::rt {
namespace {

class cuda_memory_ops final : public memory_ops {
 public:
  cuda_memory_ops(int device, unsigned threads) : primary_(device), per_thread_(threads) {
    if (primary_.error() != cudaSuccess)  // (a scope then would set the caller's device)
      throw error(errc::backend_unavailable,
                  std::string("weft: reactor: cudaInitDevice: ") + cudaGetErrorString(primary_.error()));
    const exec::cuda_device_scope on(primary_);
    if (on.error() != cudaSuccess)
      throw error(errc::backend_unavailable, "weft: reactor: the runtime's device cannot be made current");
  }
  ~cuda_memory_ops() override {
    const exec::cuda_device_scope on(primary_);
    for (auto& t : per_thread_) {
      if (t.stream) cudaStreamDestroy(t.stream);
      if (t.staging) cudaFreeHost(t.staging);
    }
  }

  // A reactor thread is weft's own: the runtime's device stays current on it (a lookup of
  // a pointer, or a stream, made with no device chosen would wake GPU 0's context).
  void bind_thread(unsigned thread) noexcept override {
    if (thread < per_thread_.size()) per_thread_[thread].bound = cudaSetDevice(primary_.device()) == cudaSuccess;
  }
  // Called on the runtime's constructing thread: mapped for the runtime's device.
  void* alloc_shared(std::size_t bytes) override {
    const exec::cuda_device_scope on(primary_);
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped);
    if (e != cudaSuccess)
      throw error(errc::backend_unavailable, std::string("weft: reactor: cudaHostAlloc: ") + cudaGetErrorString(e));
    std::memset(p, 0, bytes);
    return p;
  }
  void free_shared(void* p) noexcept override {
    const exec::cuda_device_scope on(primary_);
    cudaFreeHost(p);
  }

  bool host_accessible(const void* p) noexcept override {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();  // clear the non-sticky error: an unknown pointer is host memory
      return true;
    }
    return a.type != cudaMemoryTypeDevice;
  }

  errc to_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    if (const errc e = to_task_async(thread, dst, src, n); e != errc{}) return e;
    return wait(thread);
  }
  errc from_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    per_thread* t = mine(thread);
    if (t == nullptr) return no_entry(thread);
    if (cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, t->stream) != cudaSuccess) return fault();
    return wait(thread);
  }
  void* staging(unsigned thread, std::size_t bytes) noexcept override {
    per_thread* t = mine(thread);
    if (t == nullptr) return nullptr;
    if (t->staging_bytes < bytes) {
      if (t->staging) cudaFreeHost(t->staging);
      t->staging = nullptr;
      t->staging_bytes = 0;
      if (cudaHostAlloc(&t->staging, bytes, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
      }
      t->staging_bytes = bytes;
    }
    return t->staging;
  }
  errc to_task_async(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    per_thread* t = mine(thread);
    if (t == nullptr) return no_entry(thread);
    if (cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, t->stream) != cudaSuccess) return fault();
    return errc{};
  }
  errc from_task_async(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    per_thread* t = mine(thread);
    if (t == nullptr) return no_entry(thread);
    if (cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, t->stream) != cudaSuccess) return fault();
    return errc{};
  }
  errc wait(unsigned thread) noexcept override {
    per_thread* t = mine(thread);
    if (t == nullptr) return no_entry(thread);
    return cudaStreamSynchronize(t->stream) == cudaSuccess ? errc{} : fault();
  }

 private:
  struct per_thread {
    cudaStream_t stream = nullptr;
    void* staging = nullptr;
    std::size_t staging_bytes = 0;
    bool bound = false;  // bind_thread made the device current on this thread
  };
  // Each reactor thread's own entry, made on its first use (on that thread, which
  // then binds the runtime's device).
  per_thread* mine(unsigned thread) noexcept {
    if (thread >= per_thread_.size()) return nullptr;
    per_thread& t = per_thread_[thread];
    if (!t.bound) return nullptr;  // the device could not be made current: no copies
    if (t.stream == nullptr) {
      if (cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking) != cudaSuccess) {
        t.stream = nullptr;
        return nullptr;
      }
    }
    return &t;
  }
  // Why mine() gave nothing: the device was not current on this thread, or no stream.
  errc no_entry(unsigned thread) const noexcept {
    return thread < per_thread_.size() && !per_thread_[thread].bound ? errc::backend_unavailable : errc::out_of_memory;
  }
  // A failed copy: a bad address, or the context is gone (a kernel fault).
  static errc fault() noexcept {
    const cudaError_t e = cudaGetLastError();
    return e == cudaErrorInvalidValue ? errc::invalid_argument : errc::device_fault;
  }

  exec::cuda_primary_context primary_;  // held while the reactor lives (cuda_device_scope.hpp)
  std::vector<per_thread> per_thread_;  // sized once; entry i is touched only by reactor thread i
};

}  // namespace

std::unique_ptr<memory_ops> make_cuda_memory_ops(int device, unsigned threads) {
  return std::make_unique<cuda_memory_ops>(device, threads);
}

}  // namespace weft::rt
#endif
