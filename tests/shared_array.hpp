// weft_test::shared_array<T>: a zeroed array that tasks on either backend can use.
//
// In a CUDA build with a usable GPU it is CUDA managed memory (the GPU and the host
// both read and write it), else plain host memory. Create it before the runtime and
// let it die after: cudaFree waits for the persistent kernel to end.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <weft/config.hpp>

namespace weft_test {

template <class T>
class shared_array {
 public:
  explicit shared_array(std::size_t n) : n_(n) {
#if WEFT_CUDA_COMPILE
    if (cudaMallocManaged(&p_, n * sizeof(T)) == cudaSuccess) {
      managed_ = true;
    } else {
      cudaGetLastError();
      p_ = nullptr;
    }
#endif
    if (p_ == nullptr) p_ = static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
    if (p_ == nullptr) throw std::bad_alloc();
    std::memset(static_cast<void*>(p_), 0, n * sizeof(T));
  }
  shared_array(const shared_array&) = delete;
  shared_array& operator=(const shared_array&) = delete;
  ~shared_array() {
#if WEFT_CUDA_COMPILE
    if (managed_) {
      cudaFree(p_);
      return;
    }
#endif
    std::free(p_);
  }
  T* data() const noexcept { return p_; }
  std::size_t size() const noexcept { return n_; }
  T& operator[](std::size_t i) const noexcept { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_;
  bool managed_ = false;
};

}  // namespace weft_test
