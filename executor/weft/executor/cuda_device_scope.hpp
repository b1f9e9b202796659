// weft/executor/cuda_device_scope.hpp - runs a scope on a runtime's GPU without
// changing what the calling thread has current.
//
// The CUDA runtime keeps one current context per host thread, and most of its calls act
// on it (cudaMalloc, kernel launches, cudaMemcpyFromSymbol's module look-up). A runtime
// may be driven from any host thread, and a program may hold runtimes on several GPUs
// at once, so every host-side entry of the cuda backend that calls CUDA from a caller's
// thread opens a cuda_device_scope on the runtime's device.
//
// How: the owner (the runtime, the reactor's memory ops) holds the device's primary
// context for its lifetime (cuda_primary_context: cudaInitDevice, so that the CUDA
// runtime holds it too, then a retain of our own); a scope pushes that context on the
// thread's context stack and pops it at the end. The caller's own state is not touched:
// not its context, not the runtime API's current device (cudaSetDevice would change
// that, and setting it back would create GPU 0's context on a thread that never chose a
// device). The driver's functions are reached through cudart
// (cudaGetDriverEntryPointByVersion), so weft does not link libcuda. Without them the
// scope falls back to cudaSetDevice, and sets the caller's device back by ordinal.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace weft::exec {

namespace cuda_driver {
// CUDAAPI: the driver's calling convention (empty on Linux; __stdcall on Windows, which
// only 32-bit x86 honours).
struct fns {
  CUresult(CUDAAPI* device_get)(CUdevice*, int) = nullptr;
  CUresult(CUDAAPI* retain)(CUcontext*, CUdevice) = nullptr;
  CUresult(CUDAAPI* release)(CUdevice) = nullptr;
  CUresult(CUDAAPI* push)(CUcontext) = nullptr;
  CUresult(CUDAAPI* pop)(CUcontext*) = nullptr;
};
template <class F>
bool find(const char* name, F* out) noexcept {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || p == nullptr)
    return false;
  *out = reinterpret_cast<F>(p);
  return true;
}
// Looked up once per process (a function-local static: thread-safe initialisation);
// all null when any is missing.
inline const fns& get() noexcept {
  static const fns f = [] {
    fns r;
    const bool all = find("cuDeviceGet", &r.device_get) && find("cuDevicePrimaryCtxRetain", &r.retain) &&
                     find("cuDevicePrimaryCtxRelease", &r.release) && find("cuCtxPushCurrent", &r.push) &&
                     find("cuCtxPopCurrent", &r.pop);
    if (!all) cudaGetLastError();  // a failed look-up leaves nothing pending for the caller
    return all ? r : fns{};
  }();
  return f;
}
}  // namespace cuda_driver

// A device's primary context, held while this object lives. context() is null when the
// driver's functions are missing or the device cannot be initialised; error() says why
// in the second case.
class cuda_primary_context {
 public:
  explicit cuda_primary_context(int device) noexcept : device_(device) {
    error_ = cudaInitDevice(device, 0, 0);  // the runtime API's own hold; nothing made current
    const cuda_driver::fns& api = cuda_driver::get();
    if (error_ != cudaSuccess || api.device_get == nullptr) return;
    if (api.device_get(&dev_, device) != CUDA_SUCCESS || api.retain(&ctx_, dev_) != CUDA_SUCCESS) ctx_ = nullptr;
  }
  ~cuda_primary_context() {
    if (ctx_ != nullptr) cuda_driver::get().release(dev_);
  }
  cuda_primary_context(const cuda_primary_context&) = delete;
  cuda_primary_context& operator=(const cuda_primary_context&) = delete;

  void* context() const noexcept { return ctx_; }
  int device() const noexcept { return device_; }
  cudaError_t error() const noexcept { return error_; }

 private:
  int device_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  cudaError_t error_ = cudaSuccess;
};

class cuda_device_scope {
 public:
  // `context`: the primary context of `device` that the owner holds (null: fall back).
  cuda_device_scope(void* context, int device) noexcept {
    if (context != nullptr) {
      pushed_ = cuda_driver::get().push(static_cast<CUcontext>(context)) == CUDA_SUCCESS;
      if (!pushed_) error_ = cudaErrorDeviceUninitialized;  // "invalid device context"
      return;
    }
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ == device) return;
    error_ = cudaSetDevice(device);
    switched_ = error_ == cudaSuccess;
  }
  explicit cuda_device_scope(const cuda_primary_context& c) noexcept : cuda_device_scope(c.context(), c.device()) {}
  ~cuda_device_scope() {
    if (pushed_) {
      CUcontext popped = nullptr;
      cuda_driver::get().pop(&popped);
    } else if (switched_ && previous_ >= 0) {
      cudaSetDevice(previous_);
    }
  }
  cuda_device_scope(const cuda_device_scope&) = delete;
  cuda_device_scope& operator=(const cuda_device_scope&) = delete;

  // cudaSuccess when the device is current for the scope.
  cudaError_t error() const noexcept { return error_; }

 private:
  bool pushed_ = false;
  int previous_ = -1;
  bool switched_ = false;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace weft::exec
