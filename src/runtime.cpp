// weft::runtime: backend selection and the host backend's lifetime.
#include "weft/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "cuda_memory_ops.hpp"
#include "reactor.hpp"

#if WEFT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace weft {

struct runtime::impl {
  backend kind = backend::host;
  std::once_flag shut_down;  // shutdown() runs its steps once; a concurrent caller waits for them
  std::unique_ptr<rt::reactor> io;  // declared first: destroyed after the executors
  std::unique_ptr<exec::host_executor> host;
#if WEFT_WITH_CUDA
  std::unique_ptr<exec::device_runtime> dev;
#endif
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

// True when a CUDA device is usable here (for backend::automatic).
bool cuda_usable(int device) {
#if WEFT_WITH_CUDA
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && device >= 0 && device < count;
#else
  (void)device;
  return false;
#endif
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
  throw error(errc::backend_unavailable, "weft: the cuda backend needs a usable GPU: device " +
                                             std::to_string(device) + " requested, " + std::to_string(count) +
                                             " present");
#else
  (void)device;
  throw error(errc::backend_unavailable,
              "weft: the cuda backend is not available: weft was built without CUDA (WEFT_ENABLE_CUDA=OFF)");
#endif
}

}  // namespace

bool detail::on_runtime_thread() noexcept {
  return detail::host_current_scheduler() != nullptr || rt::current_reactor() != nullptr;
}

runtime::runtime() : runtime(config{}) {}

runtime::runtime(const config& cfg) : impl_(std::make_unique<impl>()) {
  backend kind = cfg.kind == backend::automatic ? backend_from_env() : cfg.kind;
  if (kind == backend::automatic) kind = cuda_usable(cfg.device) ? backend::cuda : backend::host;
  if (kind == backend::cuda && cfg.frame_pool_bytes > exec::max_frame_pool_bytes)  // before the GPU is looked at
    throw error(errc::invalid_argument,
                "weft: config::frame_pool_bytes is 256 GiB or more, past the cuda backend's frame pool limit");
  if (kind == backend::cuda && !cuda_usable(cfg.device)) cuda_unavailable(cfg.device);
  if (cfg.frame_allocator == nullptr && cfg.frame_pool_bytes < exec::size_class_pool::min_block)
    throw error(errc::invalid_argument, "weft: config::frame_pool_bytes is smaller than one frame block");
  impl_->kind = kind;
  rt::reactor_config rc;
  rc.threads = cfg.reactor_threads;
  rc.slots = cfg.mailbox_slots;
  rc.completions = cfg.mailbox_slots;
  rc.spin_ns = cfg.reactor_spin_ns;
  rc.max_sleep_ns = cfg.reactor_max_sleep_ns;
  rc.drain_here = kind == backend::host;  // on the GPU, worker 0 drains
#if WEFT_WITH_CUDA
  if (kind == backend::cuda) {
    impl_->io = std::make_unique<rt::reactor>(rc, rt::make_cuda_memory_ops(cfg.device, std::max(1u, cfg.reactor_threads)));
    exec::device_runtime_config dc;
    dc.device = cfg.device;
    dc.workers = cfg.workers;
    dc.frame_pool_bytes = cfg.frame_pool_bytes;
    dc.local_queue_capacity = cfg.local_queue_capacity;
    dc.inject_capacity = cfg.inject_capacity;
    dc.park_max_ns = cfg.park_max_ns;
    dc.timer_capacity = cfg.timer_capacity;
    dc.mailboxes = impl_->io->shared();
    impl_->dev = std::make_unique<exec::device_runtime>(dc);
    impl_->io->start();
    return;
  }
#endif
  exec::host_executor_config hc;
  hc.workers = cfg.workers;
  hc.local_queue_capacity = cfg.local_queue_capacity;
  hc.frame_pool_bytes = cfg.frame_pool_bytes;
  hc.user_allocator = cfg.frame_allocator;
  impl_->io = std::make_unique<rt::reactor>(rc, rt::make_host_memory_ops());
  impl_->host = std::make_unique<exec::host_executor>(hc);
  impl_->host->set_io(impl_->io->host_link());
  impl_->io->start();
}

runtime::~runtime() { shutdown(); }

const char* runtime::backend_name() const noexcept { return impl_->kind == backend::cuda ? "cuda" : "host"; }

// Shutdown: 1. the reactor fails every pending and new request with shutting_down and
// waits (up to 1 s) until the tasks have taken those answers and no request is left
// waiting for ring space on the task side (on the GPU it reads the device mailboxes'
// inflight counts), so waiting tasks see the error and can finish; 2. its threads
// stop: nothing is delivered afterwards; 3. the
// executor's own numbered steps (host_executor.hpp, device_runtime.hpp) destroy what is
// left; 4. the rings are freed with the reactor, after the executor (impl's order).
void runtime::shutdown() noexcept {
  const bool own_worker = impl_->host && detail::host_current_scheduler() == impl_->host.get();
  if (own_worker || (impl_->io && rt::current_reactor() == impl_->io.get()))
    detail::contract_violation(
        "runtime::shutdown (or ~runtime) called on one of the runtime's own threads (a task, or a host "
        "function): it would wait for that thread to end");
  // Once: a second call (the destructor after an explicit shutdown) would wait up to 1 s
  // again in the reactor's close for answers nobody takes any more. A call from another
  // thread while the first runs waits for it (call_once), so that every caller returns
  // to a runtime that has shut down.
  std::call_once(impl_->shut_down, [this] { shutdown_steps(); });
}

void runtime::shutdown_steps() noexcept {
  if (impl_->io) {
#if WEFT_WITH_CUDA
    exec::device_runtime* d = device();
    impl_->io->close(1000, [d]() -> std::uint64_t { return d ? d->io_inflight() : 0; });
#else
    impl_->io->close(1000);
#endif
    impl_->io->stop();
  }
  if (impl_->host) impl_->host->shutdown();
  if (exec::device_runtime* d = device()) d->shutdown();
}

exec::host_executor* runtime::host_executor_() noexcept {
  return impl_->host.get();  // a stopping executor refuses the root with shutting_down
}

exec::device_runtime* runtime::device() noexcept {
#if WEFT_WITH_CUDA
  return impl_->dev.get();
#else
  return nullptr;
#endif
}

std::string runtime::fault_suffix() const {
#if WEFT_WITH_CUDA
  if (impl_->dev) {
    const std::string m = impl_->dev->fault_message();
    if (!m.empty()) return " (" + m + ")";
  }
#endif
  return {};
}

void runtime::register_host_fn(std::uint32_t id, host_fn fn) { impl_->io->register_fn(id, std::move(fn)); }

io_stats runtime::reactor_stats() const noexcept {
  const rt::reactor_stats r = impl_->io->stats();
  return io_stats{r.requests, r.completions, r.deferred, r.max_queued_completions, r.handler_errors};
}

void runtime::stop_reactor_thread(unsigned i) noexcept { impl_->io->stop_thread(i); }

unsigned runtime::workers() const noexcept {
#if WEFT_WITH_CUDA
  if (impl_->dev) return impl_->dev->worker_count();
#endif
  return impl_->host ? impl_->host->worker_count() : 0;
}

std::size_t runtime::live_tasks() const noexcept {
#if WEFT_WITH_CUDA
  if (impl_->dev) return static_cast<std::size_t>(std::max<std::int64_t>(0, impl_->dev->stats().live_roots));
#endif
  return impl_->host ? impl_->host->live_roots() : 0;
}

std::int64_t runtime::live_frame_blocks() const noexcept {
#if WEFT_WITH_CUDA
  if (impl_->dev) return impl_->dev->live_frame_blocks();
#endif
  return impl_->host ? impl_->host->live_frame_blocks() : 0;
}

}  // namespace weft
