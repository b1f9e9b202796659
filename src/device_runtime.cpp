// The cuda backend's host side: see weft/executor/device_runtime.hpp for the design
// and the numbered shutdown steps.
#include "weft/executor/device_runtime.hpp"

#include <string>

#include "gpu_facts.hpp"
#include "weft/runtime.hpp"

namespace weft::exec {

void check_gpu_facts(const gpu_facts& f) {
  std::string lacks;
  auto add = [&](const char* what) { lacks += (lacks.empty() ? "" : ", ") + std::string(what); };
  if (!f.cooperative_launch) add("cooperative launch");
  if (!f.unified_addressing) add("unified addressing");
  if (!f.can_map_host_memory) add("mapped host memory");
  const std::string gpu = "weft: cuda backend: GPU " + std::to_string(f.device);
  if (!lacks.empty()) throw weft::error(errc::backend_unavailable, gpu + " lacks " + lacks);
  if (f.compute_major < 9)
    throw weft::error(errc::backend_unavailable,
                      gpu + " has compute capability " + std::to_string(f.compute_major) + "." +
                          std::to_string(f.compute_minor) +
                          "; weft's device code needs 9.0 or later (sm_90: H100, H200). Use the host backend");
  if (f.kernel_exec_timeout)
    throw weft::error(errc::backend_unavailable,
                      gpu + " limits how long a kernel may run (kernelExecTimeoutEnabled: a display watchdog); "
                            "weft's persistent kernel runs as long as the runtime, and would be killed. Use a GPU "
                            "without a display, or the host backend");
}

bool facts_fit(const gpu_facts& f) noexcept {
  try {
    check_gpu_facts(f);
    return true;
  } catch (...) {  // weft::error, or bad_alloc from its message
    return false;
  }
}

backend automatic_backend(int gpus_present, bool configured_gpu_fits) noexcept {
  return gpus_present > 0 && configured_gpu_fits ? backend::cuda : backend::host;
}

}  // namespace weft::exec

#if WEFT_WITH_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "weft/executor/cuda_device_scope.hpp"
#include "weft/executor/device_queues.hpp"
#include "weft/runtime.hpp"

namespace weft::exec {
namespace {

constexpr unsigned threads_per_block = worker_warps_per_block * WEFT_WARP_SIZE;
constexpr std::size_t completion_records = 4096;
constexpr std::uint32_t teardown_capacity = 1u << 20;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw weft::error(errc::backend_unavailable, std::string("weft: cuda backend: ") + what + ": " + cudaGetErrorString(e));
}

std::uint32_t round_pow2(std::uint64_t v) {
  std::uint32_t p = 1;
  while (p < v && p < (1u << 30)) p <<= 1;
  return p;
}

// A mailbox's overflow ring (mailbox_layout.hpp): 64 waiting requests per request slot
// (a 1024-slot ring: 64k cells, 1 MiB of device memory), at most 1M cells (16 MiB), so a
// burst of that many posts is published 32 at a time; only beyond it do requests take
// the waiters stack.
constexpr std::uint32_t overflow_per_slot = 64;
constexpr std::uint64_t overflow_max_cells = std::uint64_t{1} << 20;
// An empty inject ring of `cells` cells (a power of two) at `dev_cells` in device memory:
// initialises the cells there and returns the ring's header, for the caller to copy.
inject_shard init_device_ring(inject_cell* dev_cells, std::uint32_t cells) {
  std::vector<inject_cell> cell_init(cells);
  inject_shard shard{};
  inject_ring::init(shard, cell_init.data(), cells);
  shard.cells = dev_cells;
  check(cudaMemcpy(dev_cells, cell_init.data(), cells * sizeof(inject_cell), cudaMemcpyHostToDevice), "cudaMemcpy");
  return shard;
}

template <class Dev>
inject_shard* make_mailbox_overflow(Dev& dev, std::uint32_t req_capacity) {
  const std::uint32_t cells =
      round_pow2(std::min(std::uint64_t{req_capacity} * overflow_per_slot, overflow_max_cells));
  auto* shard = static_cast<inject_shard*>(dev(sizeof(inject_shard)));
  auto* cell_mem = static_cast<inject_cell*>(dev(std::size_t{cells} * sizeof(inject_cell)));
  const inject_shard init = init_device_ring(cell_mem, cells);
  check(cudaMemcpy(shard, &init, sizeof init, cudaMemcpyHostToDevice), "cudaMemcpy");
  return shard;
}

template <class T>
std::atomic_ref<T> host_word(T& w) {
  return std::atomic_ref<T>(w);
}

// Which live runtime runs each program (translation unit) on each device: the program's
// module constants name one executor per device (device_runtime.hpp, "Binding"), and one
// runtime at a time runs a kernel on a device. Taken in start_locked before the launch
// writes them, given up in shutdown after they are cleared. Lock order: a runtime's m_,
// then this table's lock.
struct program_binding {
  const device_program* program;
  int device;
  const device_runtime* owner;
};
std::mutex g_bindings_m;
std::vector<program_binding> g_bindings;

// The runtime that runs a kernel on `device` (any program), or null.
const device_runtime* device_owner_locked(int device) {
  for (const program_binding& b : g_bindings)
    if (b.device == device) return b.owner;
  return nullptr;
}

bool program_free_for(int device, const device_runtime* me) {
  std::lock_guard lk(g_bindings_m);
  const device_runtime* owner = device_owner_locked(device);
  return owner == nullptr || owner == me;
}

// False when another runtime runs a kernel on the device.
bool bind_program(const device_program* program, int device, const device_runtime* me) {
  std::lock_guard lk(g_bindings_m);
  const device_runtime* owner = device_owner_locked(device);
  if (owner == nullptr) g_bindings.push_back({program, device, me});
  return owner == nullptr || owner == me;
}

void unbind_program(const device_program* program, int device, const device_runtime* me) {
  std::lock_guard lk(g_bindings_m);
  std::erase_if(g_bindings, [&](const program_binding& b) {
    return b.program == program && b.device == device && b.owner == me;
  });
}

// (CUDA 13's cudaDeviceProp has no kernelExecTimeoutEnabled: the attribute is asked for.
// One that cannot be read counts as no limit, as before this check.)
gpu_facts facts_of(const cudaDeviceProp& prop, int device) {
  int timeout = 0;
  if (cudaDeviceGetAttribute(&timeout, cudaDevAttrKernelExecTimeout, device) != cudaSuccess) {
    cudaGetLastError();
    timeout = 0;
  }
  gpu_facts f;
  f.device = device;
  f.cooperative_launch = prop.cooperativeLaunch != 0;
  f.unified_addressing = prop.unifiedAddressing != 0;
  f.can_map_host_memory = prop.canMapHostMemory != 0;
  f.kernel_exec_timeout = timeout != 0;
  f.compute_major = prop.major;
  f.compute_minor = prop.minor;
  return f;
}

}  // namespace

bool gpu_fits(int device) noexcept {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave no error for the caller's next CUDA call
    return false;
  }
  return facts_fit(facts_of(prop, device));
}

device_runtime::device_runtime(const device_runtime_config& cfg) : cfg_(cfg) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (cfg.device < 0 || cfg.device >= count)
    throw weft::error(errc::backend_unavailable, "weft: cuda backend: device " + std::to_string(cfg.device) +
                                                     " requested, " + std::to_string(count) + " present");
  primary_ = std::make_unique<cuda_primary_context>(cfg.device);
  check(primary_->error(), "cudaInitDevice");
  const cuda_device_scope on(*primary_);  // what the caller has current is left as it was
  check(on.error(), "making the device current");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, cfg.device), "cudaGetDeviceProperties");
  check_gpu_facts(facts_of(prop, cfg.device));
  if (cfg.frame_pool_bytes < size_class_pool::min_block)
    throw weft::error(errc::invalid_argument, "weft: config::frame_pool_bytes is smaller than one frame block");
  if (cfg.frame_pool_bytes > max_frame_pool_bytes)  // weft::runtime checks first; this class is public too
    throw weft::error(errc::invalid_argument,
                      "weft: config::frame_pool_bytes is 256 GiB or more, past the cuda backend's frame pool limit");
  if (cfg.timer_capacity == 0 || cfg.timer_capacity > max_timer_capacity)  // weft::runtime checks first too
    throw weft::error(errc::invalid_argument, "weft: config::timer_capacity must be in 1..2^24, got " +
                                                  std::to_string(cfg.timer_capacity));
  report_.sms = prop.multiProcessorCount;
  try {
    make_host_resources();
  } catch (...) {
    free_host_resources();  // a destructor does not run for an object whose constructor threw
    throw;
  }
}

// The constructor's streams and pinned memory; throws weft::error (or bad_alloc) and
// leaves what it made for free_host_resources. Inside the constructor's device scope.
void device_runtime::make_host_resources() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  side_stream_ = s;
  // Into a local first: whether a failed cudaHostAlloc leaves its out-pointer alone is not
  // documented, and free_host_resources frees whatever the members hold.
  void* p = nullptr;
  check(cudaHostAlloc(&p, sizeof(host_control), cudaHostAllocMapped), "cudaHostAlloc");
  control_ = static_cast<host_control*>(p);
  std::memset(control_, 0, sizeof(host_control));
  for (std::uint32_t i = 0; i < submission_ring_size; ++i) control_->ring[i].seq = i;  // slot i free for ticket i
  p = nullptr;
  check(cudaHostAlloc(&p, completion_records * sizeof(host_completion), cudaHostAllocMapped), "cudaHostAlloc");
  records_ = static_cast<host_completion*>(p);
  record_count_ = completion_records;
  free_records_.reserve(completion_records);
  for (std::size_t i = completion_records; i-- > 0;) free_records_.push_back(&records_[i]);
}

// Frees what make_host_resources made (any part of it); the caller has the device's scope.
void device_runtime::free_host_resources() noexcept {
  if (records_ != nullptr) cudaFreeHost(records_);
  if (control_ != nullptr) cudaFreeHost(control_);
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  if (side_stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(side_stream_));
  records_ = nullptr;
  control_ = nullptr;
  stream_ = side_stream_ = nullptr;
  free_records_.clear();
  record_count_ = 0;
}

void* device_runtime::cu_context() const noexcept { return primary_->context(); }

device_runtime::~device_runtime() {
  shutdown();
  const cuda_device_scope on(*primary_);
  free_host_resources();
}

std::string device_runtime::fault_message() const {
  std::lock_guard lk(m_);
  return fault_;
}

// Sizes the grid from the program's occupancy, allocates the executor and launches it.
errc device_runtime::start_locked(const device_program* program) noexcept {
  if (!bind_program(program, cfg_.device, this)) {  // another runtime runs a kernel here
    claimed_ = nullptr;
    return errc::invalid_argument;
  }
  if (errc e = launch_locked(program); e != errc{}) {
    unbind_program(program, cfg_.device, this);
    program_ = nullptr;
    claimed_ = nullptr;  // another translation unit may try next
    const int sms = report_.sms;  // the device's; the rest described a kernel that never ran
    report_ = kernel_report{};
    report_.sms = sms;
    return e;
  }
  return errc{};
}

errc device_runtime::launch_locked(const device_program* program) noexcept {
  int bps = 0;
  if (program->occupancy(threads_per_block, &bps) != cudaSuccess || bps == 0) return errc::backend_unavailable;
  unsigned blocks = static_cast<unsigned>(bps * report_.sms);
  const unsigned warps_per_block = threads_per_block / WEFT_WARP_SIZE;
  if (cfg_.workers != 0)  // 64-bit: a workers count near 2^32 ("as many as fit") must not wrap to 0 blocks
    blocks = static_cast<unsigned>(
        std::min<std::uint64_t>(blocks, (std::uint64_t{cfg_.workers} + warps_per_block - 1) / warps_per_block));
  report_.blocks_per_sm = bps;
  report_.blocks = blocks;
  report_.threads_per_block = threads_per_block;
  // config::workers is exact: the warps of the last block beyond it leave at once.
  report_.workers = blocks * warps_per_block;
  if (cfg_.workers != 0 && cfg_.workers < report_.workers) report_.workers = cfg_.workers;
  program->attributes(&report_);
  program_ = program;
  try {
    allocate_memory();
  } catch (...) {  // weft::error from CUDA, or std::bad_alloc from a host vector sized by config
    cudaGetLastError();  // the failed allocation's error is reported here, not left to the caller's thread
    free_memory();
    return errc::out_of_memory;
  }
  if (program->launch(d_, host_, blocks, threads_per_block, stream_) != cudaSuccess) {
    cudaGetLastError();
    program->unbind(stream_);  // the constants may name d_ already
    free_memory();
    return errc::backend_unavailable;
  }
  running_ = true;
  return errc{};
}

void device_runtime::allocate_memory() {
  const std::uint32_t workers = report_.workers;
  const std::uint32_t cap = round_pow2(std::max<std::uint32_t>(cfg_.local_queue_capacity, 64));
  // One inject shard per SM, at most 1024 (pop_other_shards looks at 32 per lane).
  const std::uint32_t shards = std::min(std::max(1, report_.sms), 1024);
  const std::uint32_t cells =  // 64-bit sum: a capacity near 2^32 must not wrap to one-cell shards
      round_pow2(static_cast<std::uint32_t>((std::uint64_t{cfg_.inject_capacity} + shards - 1) / shards));
  const std::uint64_t arena = (cfg_.frame_pool_bytes + 63) & ~std::uint64_t{63};
  auto dev = [this](std::size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    device_allocs_.push_back(p);
    check(cudaMemset(p, 0, bytes), "cudaMemset");
    return p;
  };
  device_sched& h = host_;
  h = device_sched{};
  h.workers = static_cast<device_worker*>(dev(workers * sizeof(device_worker)));
  h.caches = static_cast<lane_cache*>(dev(std::size_t{workers} * WEFT_WARP_SIZE * sizeof(lane_cache)));
  h.num_workers = workers;
  h.max_searchers = std::max(1u, workers / 2);
  h.inject = static_cast<inject_shard*>(dev(shards * sizeof(inject_shard)));
  h.num_inject = shards;
  h.park_max_ns = cfg_.park_max_ns;
  // WEFT_BLOCK_SHARE=0 keeps a lone task's inline bulk jobs on its own warp: compute-sanitizer's
  // racecheck does not follow the mbarrier hand-over to blockmates and reports its shared
  // memory as racing (docs/benchmarks.md, twentieth session), so scripts/gpu-check runs it so.
  const char* share = std::getenv("WEFT_BLOCK_SHARE");
  h.block_share_off = share != nullptr && std::strcmp(share, "0") == 0 ? 1u : 0u;
  h.arena = static_cast<char*>(dev(arena));
  h.arena_bytes = arena;
  h.num_shards = 128;
  h.shards = static_cast<frame_shard*>(dev(h.num_shards * sizeof(frame_shard)));
  h.block_class = static_cast<std::uint8_t*>(dev(arena / 64));
  h.block_live = static_cast<std::uint8_t*>(dev(arena / 64));
  h.timers = static_cast<timer_entry*>(dev(std::size_t{cfg_.timer_capacity} * sizeof(timer_entry)));
  h.timer_capacity = cfg_.timer_capacity;
  h.timer_next = ~std::uint64_t{0};
  h.bulk_board = static_cast<bulk_slot*>(dev(bulk_board_slots * sizeof(bulk_slot)));  // zero: closed, free
  h.control = control_;  // unified addressing: the mapped pointer is the same on the device
  if (!cfg_.mailboxes.empty()) {  // the task side of each reactor mailbox, in device memory
    const std::size_t n = cfg_.mailboxes.size();
    auto* boxes = static_cast<detail::mailbox*>(dev(n * sizeof(detail::mailbox)));
    std::vector<detail::mailbox> init(n);
    for (std::size_t i = 0; i < n; ++i) {
      init[i] = detail::make_mailbox(cfg_.mailboxes[i]);  // mapped: the same addresses on the device
      init[i].overflow = make_mailbox_overflow(dev, init[i].req_capacity);
    }
    check(cudaMemcpy(boxes, init.data(), n * sizeof(detail::mailbox), cudaMemcpyHostToDevice), "cudaMemcpy");
    h.io = detail::io_link{boxes, static_cast<std::uint32_t>(n)};
  }

  auto* slots = static_cast<detail::task_header**>(dev(std::size_t{workers} * cap * sizeof(void*)));
  std::vector<device_worker> ws(workers);
  for (std::uint32_t i = 0; i < workers; ++i) {
    std::memset(&ws[i], 0, sizeof(device_worker));
    ws[i].ring.init(slots + std::size_t{i} * cap, cap);
    ws[i].rng = 0x9e3779b9u ^ (i * 0x85ebca6bu) ^ 1u;
  }
  check(cudaMemcpy(h.workers, ws.data(), workers * sizeof(device_worker), cudaMemcpyHostToDevice), "cudaMemcpy");

  auto* cell_mem = static_cast<inject_cell*>(dev(std::size_t{shards} * cells * sizeof(inject_cell)));
  std::vector<inject_shard> shard_init(shards);
  for (std::uint32_t s = 0; s < shards; ++s) shard_init[s] = init_device_ring(cell_mem + std::size_t{s} * cells, cells);
  check(cudaMemcpy(h.inject, shard_init.data(), shards * sizeof(inject_shard), cudaMemcpyHostToDevice), "cudaMemcpy");
  d_ = static_cast<device_sched*>(dev(sizeof(device_sched)));
  check(cudaMemcpy(d_, &h, sizeof h, cudaMemcpyHostToDevice), "cudaMemcpy");
  teardown_.capacity = teardown_capacity;  // shutdown's step 4 (8 MiB): made now, not when the GPU may be full
  teardown_.scan_blocks = static_cast<unsigned>(report_.sms * 8);
  teardown_.roots = static_cast<detail::task_header**>(dev(std::size_t{teardown_capacity} * sizeof(void*)));
  teardown_.count = static_cast<std::uint32_t*>(dev(sizeof(std::uint32_t)));
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void device_runtime::free_memory() noexcept {
  for (void* p : device_allocs_) cudaFree(p);
  device_allocs_.clear();
  d_ = nullptr;
  teardown_ = teardown_scratch{};
}

// Looks at the worker kernel without blocking. errc{} while it runs.
errc device_runtime::check_kernel_locked() noexcept {
  if (faulted_) return errc::device_fault;
  if (!running_) return errc::shutting_down;
  const cuda_device_scope on(*primary_);
  if (on.error() != cudaSuccess) return errc::backend_unavailable;  // not a verdict on the kernel
  const cudaError_t q = cudaStreamQuery(static_cast<cudaStream_t>(stream_));
  if (q == cudaErrorNotReady) return errc{};
  if (q == cudaSuccess) return stopping_ ? errc::shutting_down : errc::device_fault;
  faulted_ = true;
  fault_ = cudaGetErrorString(q);
  return errc::device_fault;
}

host_completion* device_runtime::take_record_locked() noexcept {
  if (free_records_.empty()) {  // reclaim records whose handles were dropped early
    auto done = [](host_completion* c) {
      return host_word(c->state).load(std::memory_order_acquire) == completion_state::done;
    };
    auto it = std::partition(abandoned_.begin(), abandoned_.end(), [&](host_completion* c) { return !done(c); });
    free_records_.insert(free_records_.end(), it, abandoned_.end());
    abandoned_.erase(it, abandoned_.end());
  }
  if (free_records_.empty()) return nullptr;
  host_completion* c = free_records_.back();
  free_records_.pop_back();
  return c;
}

errc device_runtime::submit(const device_program* program, root_create_fn fn, const void* payload, std::size_t bytes,
                            std::uint32_t home, host_completion** out) noexcept {
  std::unique_lock lk(m_);
  if (faulted_) return errc::device_fault;
  if (stopping_) return errc::shutting_down;
  if (bytes > submission_payload_bytes) return errc::invalid_argument;
  if (fn == nullptr) {  // the root's device address was not found: a fault, or no such code
    if (running_) {
      if (const errc e = check_kernel_locked(); e == errc::device_fault) return e;
    } else if (claimed_ == program) {
      claimed_ = nullptr;  // its unit cannot start the runtime: another may
    }
    return errc::backend_unavailable;
  }
  if (!running_ && claimed_ != nullptr && claimed_ != program)
    return errc::invalid_argument;  // another translation unit claimed the runtime first (refusal)
  if (!running_) {
    const cuda_device_scope on(*primary_);  // the first submission allocates and launches there
    if (on.error() != cudaSuccess) return errc::backend_unavailable;
    if (errc e = start_locked(program); e != errc{}) return e;
  } else if (program != program_) {
    return errc::invalid_argument;  // device code from a second translation unit (device_program.hpp)
  }
  if (home != detail::no_home && home >= report_.workers) return errc::invalid_argument;  // known once launched
  host_completion* c = take_record_locked();
  if (c == nullptr) return errc::queue_full;
  const std::uint64_t t = next_ticket_;
  submission& s = control_->ring[t % submission_ring_size];
  for (unsigned spins = 0; host_word(s.seq).load(std::memory_order_acquire) != t; ++spins) {
    if (spins % 256 == 255) {  // the ring is full: the device is behind; never wait on a dead kernel
      if (errc e = check_kernel_locked(); e != errc{}) {
        free_records_.push_back(c);
        return e;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  c->error = 0;
  host_word(c->state).store(completion_state::pending, std::memory_order_relaxed);
  s.create = fn;
  s.completion = c;
  s.home = home;
  std::memcpy(s.payload, payload, bytes);
  host_word(s.seq).store(t + 1, std::memory_order_release);  // publishes the slot (system scope on x86)
  next_ticket_ = t + 1;
  *out = c;
  return errc{};
}

errc device_runtime::refusal(const device_program* program) const noexcept {
  std::lock_guard lk(m_);
  // A stopped or faulted runtime says so to every translation unit, in submit's order,
  // before the caller touches the unit's module (another runtime's kernel may run on
  // this device and hold up a lazy module load).
  if (faulted_) return errc::device_fault;
  if (stopping_) return errc::shutting_down;
  if (program_ != nullptr) return program_ == program ? errc{} : errc::invalid_argument;
  if (claimed_ != nullptr) return claimed_ == program ? errc{} : errc::invalid_argument;
  if (!program_free_for(cfg_.device, this)) return errc::invalid_argument;  // another runtime's kernel runs here
  claimed_ = program;  // before its module is touched (device_runtime.hpp, Binding)
  return errc{};
}

bool device_runtime::ready(const host_completion* c) const noexcept {
  return host_word(const_cast<host_completion*>(c)->state).load(std::memory_order_acquire) == completion_state::done;
}

// The host's wait for a root's record: spin (reading the record in pinned memory) for
// wait_spin, then sleep in steps, checking the kernel's health once a millisecond. A
// sleep costs far more than it asks for: on Linux sleep_for(2 us) took ~55 us (the timer
// slack), which made block_on of a trivial root on an idle runtime take ~63 us on an H100
// when the answer came ~15 us after the submission (docs/benchmarks.md, thirty-first
// session). So the wait spins through the answer times an idle runtime gives (16-17 us on
// an H200 since the thirty-fifth session's host_poll_max_ns and poll_host; 22-29 us
// before) before it gives the core away.
constexpr auto wait_spin = std::chrono::microseconds(200);

errc device_runtime::wait(host_completion* c) noexcept {
  const auto start = std::chrono::steady_clock::now();
  auto last_check = start;
  for (;;) {
    if (ready(c)) return static_cast<errc>(c->error);
    const auto now = std::chrono::steady_clock::now();
    if (now - start < wait_spin) continue;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (now - last_check < std::chrono::milliseconds(1)) continue;
    last_check = now;
    std::lock_guard lk(m_);
    const errc e = check_kernel_locked();
    // backend_unavailable: the context could not be made current here, no verdict on the
    // kernel; the root may still finish, so the wait goes on.
    if (e != errc{} && e != errc::backend_unavailable && !ready(c)) return e;
  }
}

void device_runtime::release(host_completion* c) noexcept {
  if (c == nullptr) return;
  std::lock_guard lk(m_);
  if (ready(c)) free_records_.push_back(c);
  else abandoned_.push_back(c);
}

device_stats device_runtime::stats() const noexcept {
  device_stats st;
  std::lock_guard lk(m_);
  if (d_ == nullptr || faulted_) return st;
  const cuda_device_scope on(*primary_);
  if (on.error() != cudaSuccess) return st;
  std::vector<device_worker> ws(report_.workers);
  auto s = static_cast<cudaStream_t>(side_stream_);
  cudaMemcpyAsync(ws.data(), host_.workers, ws.size() * sizeof(device_worker), cudaMemcpyDeviceToHost, s);
  if (cudaStreamSynchronize(s) != cudaSuccess) return st;
  for (const device_worker& w : ws) {
    st.resumed += w.stats.resumed;
    st.batches += w.stats.batches;
    st.lanes_used += w.stats.lanes_used;
    st.stolen += w.stats.stolen;
    st.injected += w.stats.injected;
    st.parks += w.stats.parks;
    st.napped_ns += w.stats.napped_ns;
    st.inline_bulk += w.stats.inline_bulk;
    st.inline_shared += w.stats.inline_shared;
    st.inline_jobs_served += w.stats.inline_jobs_served;
    st.live_roots += static_cast<std::int64_t>(w.stats.spawned) - static_cast<std::int64_t>(w.stats.destroyed);
    st.pinned_live += w.pinned_live;
  }
  return st;
}

std::uint64_t device_runtime::io_inflight() const noexcept {
  std::lock_guard lk(m_);
  if (d_ == nullptr || faulted_ || host_.io.count == 0) return 0;
  const cuda_device_scope on(*primary_);
  if (on.error() != cudaSuccess) return 0;
  std::vector<detail::mailbox> boxes(host_.io.count);
  auto s = static_cast<cudaStream_t>(side_stream_);
  cudaMemcpyAsync(boxes.data(), host_.io.boxes, boxes.size() * sizeof(detail::mailbox), cudaMemcpyDeviceToHost, s);
  if (cudaStreamSynchronize(s) != cudaSuccess) return 0;
  std::uint64_t n = 0;
  for (const detail::mailbox& m : boxes) n += m.inflight;
  return n;
}

std::int64_t device_runtime::live_frame_blocks() const noexcept {
  std::lock_guard lk(m_);
  return final_live_blocks_;
}

namespace {
// The frame blocks marked live in the pool's side table (one byte per 64-byte block), or
// -1 when it cannot be read. Copied through a fixed buffer: the table of a large pool
// (4 GiB for 256 GiB) is no allocation for a noexcept shutdown to make.
std::int64_t count_live_blocks(const std::uint8_t* block_live, std::size_t blocks) noexcept {
  static constexpr std::size_t chunk = 64u << 10;
  std::uint8_t buf[chunk];
  std::int64_t live = 0;
  for (std::size_t at = 0; at < blocks; at += chunk) {
    const std::size_t n = std::min(chunk, blocks - at);
    if (cudaMemcpy(buf, block_live + at, n, cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
    live += static_cast<std::int64_t>(n - static_cast<std::size_t>(std::count(buf, buf + n, std::uint8_t{0})));
  }
  return live;
}
}  // namespace

void device_runtime::shutdown() noexcept {
  std::unique_lock lk(m_);
  if (stopping_) return;
  const cuda_device_scope on(*primary_);  // the teardown's allocations and kernels run there
  if (on.error() != cudaSuccess && !faulted_) {  // the device is unusable: no GPU teardown
    faulted_ = true;
    fault_ = std::string("making the device current: ") + cudaGetErrorString(on.error());
  }
  stopping_ = true;                                                     // step 1
  if (running_) {
    host_word(control_->stop).store(1, std::memory_order_release);      // step 2
    cudaError_t q;
    while ((q = cudaStreamQuery(static_cast<cudaStream_t>(stream_))) == cudaErrorNotReady)  // step 3
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (q != cudaSuccess && !faulted_) {
      faulted_ = true;
      fault_ = cudaGetErrorString(q);
    }
    if (!faulted_) {                                                    // step 4
      const int e = program_->teardown(d_, teardown_, side_stream_);
      if (e != cudaSuccess) {  // no roots destroyed (or not all): reported, not skipped in silence
        faulted_ = true;
        fault_ = std::string("shutdown's teardown on the GPU: ") + cudaGetErrorString(static_cast<cudaError_t>(e));
      }
      if (const int e = program_->unbind(side_stream_); e != cudaSuccess && !faulted_) {
        faulted_ = true;
        fault_ = cudaGetErrorString(static_cast<cudaError_t>(e));
      }
    }
    running_ = false;
  }
  const errc why = faulted_ ? errc::device_fault : errc::shutting_down;  // step 5
  for (std::size_t i = 0; i < record_count_; ++i) {
    host_completion& c = records_[i];
    if (host_word(c.state).load(std::memory_order_acquire) == completion_state::done) continue;
    c.error = static_cast<std::uint32_t>(why);
    host_word(c.state).store(completion_state::done, std::memory_order_release);
  }
  if (d_ != nullptr && !faulted_) {                                     // step 6
    final_live_blocks_ = count_live_blocks(host_.block_live, host_.arena_bytes / 64);
  } else if (d_ == nullptr) {
    final_live_blocks_ = 0;
  }
  free_memory();
  if (program_ != nullptr) unbind_program(program_, cfg_.device, this);  // (a faulted context runs nothing more)
}

}  // namespace weft::exec

#else  // !WEFT_WITH_CUDA: weft was built without the cuda backend; nothing creates one.

#include "weft/runtime.hpp"

namespace weft::exec {
bool gpu_fits(int) noexcept { return false; }
class cuda_primary_context {};  // nothing to hold without CUDA
device_runtime::device_runtime(const device_runtime_config&) {
  throw weft::error(errc::backend_unavailable, "weft: built without the cuda backend");
}
device_runtime::~device_runtime() = default;
errc device_runtime::submit(const device_program*, root_create_fn, const void*, std::size_t, std::uint32_t,
                            host_completion**) noexcept {
  return errc::backend_unavailable;
}
errc device_runtime::wait(host_completion*) noexcept { return errc::backend_unavailable; }
bool device_runtime::ready(const host_completion*) const noexcept { return true; }
errc device_runtime::refusal(const device_program*) const noexcept { return errc::backend_unavailable; }
void device_runtime::release(host_completion*) noexcept {}
void device_runtime::shutdown() noexcept {}
std::string device_runtime::fault_message() const { return {}; }
device_stats device_runtime::stats() const noexcept { return {}; }
std::uint64_t device_runtime::io_inflight() const noexcept { return 0; }
std::int64_t device_runtime::live_frame_blocks() const noexcept { return 0; }
void* device_runtime::cu_context() const noexcept { return nullptr; }
}  // namespace weft::exec
#endif
