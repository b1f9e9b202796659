// weft::runtime: backend selection and the host backend's lifetime.
#include "weft/runtime.hpp"

#include <cstdlib>
#include <string>

#if WEFT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace weft {

struct runtime::impl {
  backend kind = backend::host;
  std::unique_ptr<exec::host_executor> host;
};

namespace {

backend backend_from_env() {
  const char* v = std::getenv("WEFT_BACKEND");
  if (v == nullptr || *v == '\0') return backend::automatic;
  const std::string s(v);
  if (s == "host") return backend::host;
  if (s == "cuda") return backend::cuda;
  throw error(errc::invalid_argument, "weft: WEFT_BACKEND must be 'host' or 'cuda', got '" + s + "'");
}

// Throws with the reason the cuda backend cannot run here.
[[noreturn]] void cuda_unavailable(int device) {
#if WEFT_WITH_CUDA
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    throw error(errc::backend_unavailable,
                std::string("weft: the cuda backend needs a usable GPU: cudaGetDeviceCount failed: ") +
                    cudaGetErrorString(e));
  if (device < 0 || device >= count)
    throw error(errc::backend_unavailable, "weft: the cuda backend needs a usable GPU: device " +
                                               std::to_string(device) + " requested, " + std::to_string(count) +
                                               " present");
  throw error(errc::backend_unavailable,
              "weft: the cuda backend's device executor is not built yet; use WEFT_BACKEND=host");
#else
  (void)device;
  throw error(errc::backend_unavailable,
              "weft: the cuda backend is not available: weft was built without CUDA (WEFT_ENABLE_CUDA=OFF)");
#endif
}

}  // namespace

runtime::runtime() : runtime(config{}) {}

runtime::runtime(const config& cfg) : impl_(std::make_unique<impl>()) {
  backend kind = cfg.kind == backend::automatic ? backend_from_env() : cfg.kind;
  if (kind == backend::cuda) cuda_unavailable(cfg.device);
  if (cfg.frame_allocator == nullptr && cfg.frame_pool_bytes < exec::size_class_pool::min_block)
    throw error(errc::invalid_argument, "weft: config::frame_pool_bytes is smaller than one frame block");
  impl_->kind = backend::host;
  exec::host_executor_config hc;
  hc.workers = cfg.workers;
  hc.local_queue_capacity = cfg.local_queue_capacity;
  hc.frame_pool_bytes = cfg.frame_pool_bytes;
  hc.user_allocator = cfg.frame_allocator;
  impl_->host = std::make_unique<exec::host_executor>(hc);
}

runtime::~runtime() { shutdown(); }

const char* runtime::backend_name() const noexcept { return impl_->kind == backend::cuda ? "cuda" : "host"; }

void runtime::shutdown() noexcept {
  if (impl_->host) impl_->host->shutdown();
}

exec::host_executor* runtime::host_executor_() noexcept {
  return impl_->host.get();  // a stopping executor refuses the root with shutting_down
}

unsigned runtime::workers() const noexcept { return impl_->host ? impl_->host->worker_count() : 0; }
std::size_t runtime::live_tasks() const noexcept { return impl_->host ? impl_->host->live_roots() : 0; }
std::int64_t runtime::live_frame_blocks() const noexcept {
  return impl_->host ? impl_->host->live_frame_blocks() : 0;
}

}  // namespace weft
