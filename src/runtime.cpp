// weft::runtime: backend selection and the host backend's lifetime.
#include "weft/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>

#include "cuda_memory_ops.hpp"
#include "gpu_facts.hpp"
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
  std::shared_ptr<exec::device_runtime> dev;  // shared with host handles that outlive the runtime
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

// CUDA devices present (0 without CUDA, or when the count fails).
int gpus_present() {
#if WEFT_WITH_CUDA
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
#else
  return 0;
#endif
}

// True when a CUDA device is usable here (for backend::automatic).
bool cuda_usable(int device) { return device >= 0 && device < gpus_present(); }

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

// Rejects a configuration no backend can run as asked, before anything is made, with
// the field named. (The reactor checks its own fields; the bounds here are documented in
// runtime.hpp, config.)
// (The host's worker bound is checked once the backend is known: runtime's constructor.)
void validate(const config& c) {
  auto bad = [](const std::string& what) { throw error(errc::invalid_argument, "weft: config::" + what); };
  if (c.device < 0) bad("device must be a CUDA device ordinal >= 0, got " + std::to_string(c.device));
  if (c.frame_pool_bytes > exec::max_frame_pool_bytes) bad("frame_pool_bytes must be under 256 GiB");
  if (c.frame_allocator == nullptr && c.frame_pool_bytes < exec::size_class_pool::min_block)
    bad("frame_pool_bytes is smaller than one frame block");
  if (!std::has_single_bit(c.local_queue_capacity) || c.local_queue_capacity < 2 || c.local_queue_capacity > 8192)
    bad("local_queue_capacity must be a power of two in 2..8192, got " + std::to_string(c.local_queue_capacity));
  if (c.inject_capacity == 0 || c.inject_capacity > (1u << 30))
    bad("inject_capacity must be in 1..2^30, got " + std::to_string(c.inject_capacity));
  if (c.park_max_ns < min_park_max_ns || c.park_max_ns > max_park_max_ns)
    bad("park_max_ns must be in 256..1000000 (a worker's first nap is 256 ns), got " + std::to_string(c.park_max_ns));
  if (c.timer_capacity == 0 || c.timer_capacity > max_timer_capacity)  // 0: every sleep_for would be queue_full
    bad("timer_capacity must be in 1..2^24, got " + std::to_string(c.timer_capacity));
}

// Starts the reactor's threads; a thread that cannot start is backend_unavailable, as
// for the host workers (the reactor's destructor, run as the constructor unwinds, joins
// those that did start, after the executor has stopped).
void start_reactor(rt::reactor& io, const config& cfg) {
  try {
    io.start();
  } catch (const std::system_error& e) {
    throw error(errc::backend_unavailable, "weft: the host reactor could not start its threads (config::reactor_threads = " +
                                               std::to_string(cfg.reactor_threads) + "): " + e.what());
  }
}

}  // namespace

bool detail::on_runtime_thread() noexcept {
  return detail::host_current_scheduler() != nullptr || rt::current_reactor() != nullptr;
}

runtime::runtime() : runtime(config{}) {}

runtime::runtime(const config& cfg) : impl_(std::make_unique<impl>()) {
  backend kind = cfg.kind == backend::automatic ? backend_from_env() : cfg.kind;
  validate(cfg);  // before the GPU is looked at
  if (kind == backend::automatic) {
    const int gpus = gpus_present();
    if (gpus > 0 && cfg.device >= gpus) cuda_unavailable(cfg.device);  // a GPU asked for that is not there
    // A GPU without what the backend needs (gpu_facts.hpp: a display watchdog, no
    // cooperative launch) is no usable GPU: the host backend runs instead.
    kind = exec::automatic_backend(gpus, gpus > 0 && exec::gpu_fits(cfg.device));  // (device >= 0: validate)
  }
  if (kind == backend::host && cfg.workers > max_host_workers)
    throw error(errc::invalid_argument, "weft: config::workers must be at most " + std::to_string(max_host_workers) +
                                            " host threads, got " + std::to_string(cfg.workers));
  if (kind == backend::cuda && !cuda_usable(cfg.device)) cuda_unavailable(cfg.device);
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
    impl_->dev = std::make_shared<exec::device_runtime>(dc);
    start_reactor(*impl_->io, cfg);
    return;
  }
#endif
  exec::host_executor_config hc;
  hc.workers = cfg.workers;
  hc.local_queue_capacity = cfg.local_queue_capacity;
  hc.frame_pool_bytes = cfg.frame_pool_bytes;
  hc.user_allocator = cfg.frame_allocator;
  impl_->io = std::make_unique<rt::reactor>(rc, rt::make_host_memory_ops());
  try {  // (the executor joins the threads it started before this sees its failure)
    impl_->host = std::make_unique<exec::host_executor>(hc);
  } catch (const std::system_error& e) {
    throw error(errc::backend_unavailable,
                std::string("weft: the host backend could not start its worker threads: ") + e.what());
  } catch (const std::bad_alloc&) {
    throw error(errc::out_of_memory, "weft: the host backend could not allocate its frame pool (config::frame_pool_bytes = " +
                                         std::to_string(cfg.frame_pool_bytes) + ") or its workers");
  }
  impl_->host->set_io(impl_->io->host_link());
  start_reactor(*impl_->io, cfg);
}

runtime::~runtime() { shutdown(); }

const char* runtime::backend_name() const noexcept { return impl_->kind == backend::cuda ? "cuda" : "host"; }

// Shutdown: 1. the reactor fails every pending and new request with shutting_down and
// waits (up to 1 s) until the tasks have taken those answers and no request is left
// waiting for ring space on the task side (on the GPU it reads the device mailboxes'
// inflight counts), and, on the host backend, until the workers are idle once the
// answers are in: the tasks woken by them have run (on the GPU: no warp ran a batch
// between two looks), so waiting tasks see the error and can finish; 2. its threads
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
    std::function<std::uint64_t()> inflight;  // the GPU's mailboxes, in device memory
    if (exec::device_runtime* d = device()) inflight = [d] { return d->io_inflight(); };
    std::function<bool()> idle;  // the workers: the woken tasks have run
    if (exec::host_executor* h = impl_->host.get()) {
      idle = [h] { return h->idle(); };
    } else if (exec::device_runtime* d = device()) {
      // The GPU's warps: none ran a batch since the last look. A warp publishes its count
      // each time it runs dry (before it parks), and every 16th trip while busy
      // (device_worker.hpp), so a look 1 ms after a warp ran the tasks the answers woke
      // sees the count moved, and two looks in a row without a move (reactor::close) mean
      // those tasks have run. The first look only records the count. (All warps parked at
      // once is no sign: each leaves its nap for a look round at least every millisecond.)
      // A warp whose trips take over ~60 us can show no move across a look: tasks queued behind it then read as idle, as
      // does a task queued and not taken for over a millisecond (a wake-up token missed:
      // notify_many), or one woken by a task that runs for over a millisecond without
      // suspending (docs/mailbox.md).
      idle = [d, last = ~std::uint64_t{0}]() mutable {
        const std::uint64_t now = d->stats().batches;
        const bool still = now == last;
        last = now;
        return still;
      };
    }
    impl_->io->close(1000, inflight, idle);
    impl_->io->stop();
    impl_->io->await_late_answers(idle);  // answers after close's last look (within close's 1 s)
  }
  if (impl_->host) impl_->host->shutdown();
  if (exec::device_runtime* d = device()) d->shutdown();
}

exec::host_executor* runtime::host_executor_() noexcept {
  return impl_->host.get();  // a stopping executor refuses the root with shutting_down
}

std::shared_ptr<exec::device_runtime> runtime::device_shared() noexcept {
#if WEFT_WITH_CUDA
  return impl_->dev;
#else
  return nullptr;
#endif
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
