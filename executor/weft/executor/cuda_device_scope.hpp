// weft/executor/cuda_device_scope.hpp - runs a scope with a given GPU current, and
// gives the calling thread its own current device back after it.
//
// The CUDA runtime keeps one current device per host thread, and most of its calls act
// on that device (cudaMalloc, kernel launches, cudaMemcpyFromSymbol's module look-up).
// A runtime may be driven from any host thread, and a program may hold runtimes on
// several GPUs at once, so every host-side entry of the cuda backend that calls CUDA
// opens one of these on the runtime's device instead of trusting (or changing for
// good) whatever the caller had current.
#pragma once
#include <cuda_runtime_api.h>

namespace weft::exec {

class cuda_device_scope {
 public:
  explicit cuda_device_scope(int device) noexcept {
    error_ = cudaGetDevice(&previous_);
    if (error_ == cudaSuccess && previous_ != device) {
      error_ = cudaSetDevice(device);
      switched_ = error_ == cudaSuccess;
    }
  }
  ~cuda_device_scope() {
    if (switched_) cudaSetDevice(previous_);
  }
  cuda_device_scope(const cuda_device_scope&) = delete;
  cuda_device_scope& operator=(const cuda_device_scope&) = delete;

  // cudaSuccess when the device is current for the scope.
  cudaError_t error() const noexcept { return error_; }

 private:
  int previous_ = 0;
  bool switched_ = false;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace weft::exec
