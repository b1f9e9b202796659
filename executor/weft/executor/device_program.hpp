// weft/executor/device_program.hpp - the kernels of the device executor, per translation unit.
//
// Why per translation unit: without relocatable device code, each CUDA translation
// unit is its own device module, and code of one module cannot be called from a
// kernel of another (the callee would read its globals through the caller's constant
// bank). A task's resume functions live in the module of the translation unit that
// defines them, so the persistent kernel that resumes them must live there too. This
// header therefore defines the kernels in an unnamed namespace: every CUDA translation
// unit that includes weft/runtime.hpp gets its own copy, described to the host runtime
// by a device_program. A runtime binds to the program of the first translation unit
// that submits to it (device_runtime.hpp); a submission from another one is refused
// with errc::invalid_argument (build the device code into one translation unit).
//
// Roots created by the host: the host copies (fn, args...) into a submission slot;
// worker 0 calls create_root<T, F, Args...> (whose device address the host looked up
// once per device through the variable template g_create), which spawns
// host_root(fn, args...): a wrapper task that awaits fn(args...) through try_await and
// writes the outcome into the host's completion record (system scope; see
// device_layout.hpp).
#pragma once
#include <atomic>
#include <cstring>
#include <type_traits>

#include "weft/executor/device_runtime.hpp"
#include "weft/executor/device_worker.hpp"
#include "weft/spawn.hpp"

#if WEFT_CUDA_COMPILE
#include "weft/executor/cuda_device_scope.hpp"

namespace weft::exec {

// A trivially copyable bundle of the callable and its arguments.
template <class... Ts>
struct packed {};
template <class T, class... Ts>
struct packed<T, Ts...> {
  T head;
  packed<Ts...> rest;
};

template <class F, class P, class... Done>
WEFT_HOST_DEVICE auto call_packed(F& f, const P& p, const Done&... done) {
  if constexpr (std::is_same_v<P, packed<>>) return f(done...);
  else return call_packed(f, p.rest, done..., p.head);
}

template <class T>
__device__ void write_completion(host_completion* c, result<T>& r) {
  if (r.has_value()) {
    if constexpr (!std::is_void_v<T>) std::memcpy(c->value, &*r, sizeof(T));
    c->error = 0;
  } else {
    c->error = static_cast<std::uint32_t>(r.error());
  }
  // RELEASE at system scope: the value bytes above reach the host before `done`.
  detail::system_atomic<std::uint32_t>(c->state).store(completion_state::done, detail::mo_release);
}

template <class T, class F, class... Args>
__device__ task<void> host_root(host_completion* c, F f, Args... args) {
  result<T> r = co_await try_await(f(args...));  // f and args live in this frame
  write_completion<T>(c, r);
}

template <class T, class F, class... Args>
__device__ void create_root(device_sched* d, const void* payload, host_completion* c, std::uint32_t home) {
  const auto& p = *static_cast<const packed<F, Args...>*>(payload);
  F f = p.head;
  auto make = [c](const F& fn, const Args&... as) { return host_root<T, F, Args...>(c, fn, as...); };
  task<void> t = call_packed(make, p.rest, f);
  join_handle<void> h = detail::spawn_on(d, std::move(t), home);  // home: checked by device_runtime::submit
  if (!h) {
    result<T> r = unexpected(h.error());
    write_completion<T>(c, r);
  }
  h.detach();
}

namespace {  // one copy per translation unit (see the top of this file)

template <class T, class F, class... Args>
__device__ root_create_fn g_create = &create_root<T, F, Args...>;

#ifndef WEFT_WORKER_MIN_BLOCKS
#define WEFT_WORKER_MIN_BLOCKS 3
#endif
__global__ void __launch_bounds__(worker_warps_per_block * WEFT_WARP_SIZE, WEFT_WORKER_MIN_BLOCKS) weft_worker_kernel(device_sched* d) {
  if (threadIdx.x % WEFT_WARP_SIZE == 0) {
    staging_of_this_warp().count = 0;
    staging_of_this_warp().ring_empty = 0;  // unknown: look
    staging_of_this_warp().bulk_count = 0;
    staging_of_this_warp().batch_lanes = 0;
    staging_of_this_warp().lone = 0;
    staging_of_this_warp().inline_left = 0;
    staging_of_this_warp().inline_job = nullptr;
    staging_of_this_warp().claim_box = nullptr;
    staging_of_this_warp().in_place_delay = 0;
    staging_of_this_warp().share_mates =
        d->block_share_off ? 0u : share_mates_of(current_lane_ids().worker, d->num_workers);
  }
  if (threadIdx.x == 0) init_block_share();
  __syncthreads();
  const lane_ids id = current_lane_ids();
  if (id.worker >= d->num_workers) return;  // config::workers is not a multiple of the block's warps
  worker_loop(*d, id.worker, id.lane);
}

// Shutdown step 4 (device_runtime.hpp) in two phases. A root being destroyed may be
// named by a join handle in another root's frame, and that handle is dropped when that
// frame is destroyed; the handle must not find its root already freed.
//   Phase 1, in batches until no incomplete root is left: list the roots that have not
//     completed (teardown_list::incomplete), mark each COMPLETED | DOOMED (it never runs again),
//     and destroy those that no handle names. Their frames drop the handles they hold,
//     and a dropped handle frees the (now completed) root it names, as for any root. A
//     named root whose holder comes in a later batch is freed the same way then.
//   Phase 2, for the DOOMED roots still alive (named by a handle in another such root,
//     a cycle, or outside any frame): clear their COMPLETED bit first, all at once
//     (teardown_list::disown), so that no dropped handle frees one; then destroy them in
//     batches. A handle to one already destroyed then writes one word of a free pool
//     block: the state word, at offset 64, past the 64 bytes a free block may hold for
//     its magazine. That stays harmless as long as no destructor run by the teardown
//     allocates a frame (none in weft does), and the arena is freed after it.
//   A spawn_group's child is cancelled before its frame goes (cancel_group_child: its
//     outcome shutting_down, its count taken from the group, nobody woken).
//   Phase 3, once no root is left: free every spawn_group block still alive
//     (teardown_list::groups). Each was dropped by its owner, whose frame is gone, and
//     waits for children that never started: their queue entries died with the kernel.
enum class teardown_list : int { incomplete, doomed_alive, disown, groups };

// Whether granule g starts a block that holds a live `mark` (device_frames::live_*).
__device__ inline bool block_holds(const device_sched* d, std::uint64_t g, std::uint8_t mark) noexcept {
  return d->block_class[g] != 0 && d->block_live[g] == mark;
}

__device__ inline detail::promise_base* root_at_granule(device_sched* d, std::uint64_t g) noexcept {
  if (!block_holds(d, g, device_frames::live_frame)) return nullptr;
  detail::promise_base& p = detail::promise_of(d->arena + g * device_frames::granule);
  return p.root == &p ? &p : nullptr;
}

// One thread per 64-byte granule: lists the roots `what` asks for (or, for disown,
// clears COMPLETED on every DOOMED root still alive).
__global__ void weft_teardown_scan(device_sched* d, detail::task_header** out, std::uint32_t cap,
                                   std::uint32_t* count, teardown_list what) {
  const std::uint64_t granules = (d->carved < d->arena_bytes ? d->carved : d->arena_bytes) / device_frames::granule;
  for (std::uint64_t g = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; g < granules;
       g += std::uint64_t{gridDim.x} * blockDim.x) {
    if (what == teardown_list::groups) {
      if (block_holds(d, g, device_frames::live_group)) {
        const std::uint32_t i = atomicAdd(count, 1u);
        if (i < cap) out[i] = reinterpret_cast<detail::task_header*>(d->arena + g * device_frames::granule);
      }
      continue;
    }
    detail::promise_base* p = root_at_granule(d, g);
    if (p == nullptr) continue;
    const std::uint32_t s = p->state;
    if (what == teardown_list::disown) {
      if (s & detail::task_state::doomed) p->state = s & ~detail::task_state::completed;
      continue;
    }
    const bool wanted = what == teardown_list::incomplete ? !(s & detail::task_state::completed)
                                                          : (s & detail::task_state::doomed) != 0;
    if (!wanted) continue;
    const std::uint32_t i = atomicAdd(count, 1u);
    if (i < cap) out[i] = p;
  }
}

// One thread. Phase 1 (mark = true): mark every listed root COMPLETED | DOOMED before
// any is destroyed (a handle dropped below may name any of them), then destroy those no
// handle names; a named one is freed when its handle goes, or in phase 2. Phase 2 (mark =
// false): destroy them all. Destructions they cause are deferred and drained by
// device_destroy_frame (device_hooks.hpp), in constant stack.
__global__ void weft_teardown_destroy(device_sched* d, detail::task_header** roots, const std::uint32_t* count,
                                      std::uint32_t cap, bool mark) {
  const std::uint32_t n = *count < cap ? *count : cap;
  if (mark) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t s = detail::state_of(roots[i]).fetch_or(
          detail::task_state::completed | detail::task_state::doomed, detail::mo_acq_rel);
      if (s & detail::task_state::handle) roots[i] = nullptr;  // named: not destroyed here
    }
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (roots[i] == nullptr) continue;
    detail::cancel_group_child(roots[i]);
    detail::device_destroy_frame(detail::frame_of(roots[i]));
  }
}

// One thread: phase 3's frees (the listed blocks are group_base's, not roots).
__global__ void weft_teardown_free_groups(const std::uint32_t* count, detail::task_header** blocks, std::uint32_t cap) {
  const std::uint32_t n = *count < cap ? *count : cap;
  for (std::uint32_t i = 0; i < n; ++i) detail::group_free(reinterpret_cast<detail::group_base*>(blocks[i]));
}

// Returns every lane cache to the shards, so the live-block count is exact.
__global__ void weft_flush_caches(device_sched* d) {
  const std::uint64_t lanes = std::uint64_t{d->num_workers} * WEFT_WARP_SIZE;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < lanes;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    device_frames(*d).flush(d->caches[i], static_cast<unsigned>(i / WEFT_WARP_SIZE));
}

// Sets this module's constants (device_hooks.hpp: g_device_sched, g_device_io,
// g_worker_consts), in stream order before the launch, and launches the workers.
int program_launch(device_sched* d, const device_sched& host_view, unsigned blocks, unsigned threads, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_device_sched, &d, sizeof d, 0, cudaMemcpyHostToDevice, s); e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_device_io, &host_view.io, sizeof host_view.io, 0, cudaMemcpyHostToDevice, s);
      e != cudaSuccess)
    return e;
  const worker_consts k{host_view.caches, host_view.workers, host_view.arena, host_view.block_live, 0};
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_worker_consts, &k, sizeof k, 0, cudaMemcpyHostToDevice, s); e != cudaSuccess)
    return e;
  void* args[] = {&d};
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&weft_worker_kernel), dim3(blocks), dim3(threads),
                                     args, 0, static_cast<cudaStream_t>(stream));
}

// Clears this module's constants (after the workers ended, or after a failed launch):
// the hooks then take their run_inline paths, as before any runtime ran here.
int program_unbind(void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  device_sched* none = nullptr;
  const detail::io_link no_io{};
  const worker_consts no_consts{};
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_device_sched, &none, sizeof none, 0, cudaMemcpyHostToDevice, s);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_worker_consts, &no_consts, sizeof no_consts, 0, cudaMemcpyHostToDevice, s);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_device_io, &no_io, sizeof no_io, 0, cudaMemcpyHostToDevice, s);
      e != cudaSuccess)
    return e;
  return cudaStreamSynchronize(s);
}

int program_occupancy(unsigned threads, int* blocks_per_sm) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, weft_worker_kernel, static_cast<int>(threads), 0);
}

int program_attributes(kernel_report* r) {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, weft_worker_kernel);
  r->registers = a.numRegs;
  r->local_bytes = a.localSizeBytes;
  r->max_threads = a.maxThreadsPerBlock;
  return e;
}

// The teardown steps that run on the GPU (device_runtime.cpp calls this after the
// worker kernel ended): phases 1, 2 and 3 (above weft_teardown_scan), then flush the
// lane caches.
int program_teardown(device_sched* d, const teardown_scratch& s, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  // From here the hooks use no lane cache (device_hooks.hpp, worker_consts), in stream
  // order before the kernels below.
  const std::uint32_t one = 1;
  if (cudaError_t e = cudaMemcpyToSymbolAsync(g_worker_consts, &one, sizeof one, offsetof(worker_consts, tearing_down),
                                              cudaMemcpyHostToDevice, stream);
      e != cudaSuccess)
    return e;
  // Each launch's own error is read at once (cudaGetLastError): a kernel that never
  // launched leaves no error for the stream's synchronization, and a scan that did not
  // run reads as "none left" (a destroy that did not run, as the same roots for ever).
  // Lists the roots `what` asks for and destroys them, a batch at a time, until none is listed.
  auto drain = [&](teardown_list what, bool mark) -> int {  // mark: phase 1; groups: phase 3
    for (;;) {
      // Both enqueues are checked: one refused would leave n at 0, read as none left.
      if (cudaError_t e = cudaMemsetAsync(s.count, 0, sizeof(std::uint32_t), stream); e != cudaSuccess) return e;
      weft_teardown_scan<<<s.scan_blocks, 256, 0, stream>>>(d, s.roots, s.capacity, s.count, what);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      std::uint32_t n = 0;
      if (cudaError_t e = cudaMemcpyAsync(&n, s.count, sizeof n, cudaMemcpyDeviceToHost, stream); e != cudaSuccess)
        return e;
      if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return e;
      if (n == 0) return cudaSuccess;
      if (what == teardown_list::groups) weft_teardown_free_groups<<<1, 1, 0, stream>>>(s.count, s.roots, s.capacity);
      else weft_teardown_destroy<<<1, 1, 0, stream>>>(d, s.roots, s.count, s.capacity, mark);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
  };
  if (const int e = drain(teardown_list::incomplete, true); e != cudaSuccess) return e;  // phase 1
  weft_teardown_scan<<<s.scan_blocks, 256, 0, stream>>>(d, s.roots, s.capacity, s.count, teardown_list::disown);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (const int e = drain(teardown_list::doomed_alive, false); e != cudaSuccess) return e;  // phase 2
  if (const int e = drain(teardown_list::groups, false); e != cudaSuccess) return e;         // phase 3
  weft_flush_caches<<<s.scan_blocks, 256, 0, stream>>>(d);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return cudaStreamSynchronize(stream);
}

// The device address of create_root<T, F, Args...> in this module on `device` (null when
// the look-up failed: device_runtime::submit reports why), looked up once per
// device: each GPU loads the module apart, so an address is only good on the device it
// was read from. Host threads may ask at once; the cache words are atomics, relaxed: each
// holds a value, not a pointer to data that must be published. Devices beyond the cache
// are looked up every time.
inline constexpr int create_fn_cached_devices = 64;
template <class T, class F, class... Args>
root_create_fn create_fn_address(void* context, int device, void* stream) {
  static std::atomic<root_create_fn> cache[create_fn_cached_devices];
  std::atomic<root_create_fn>* slot = device >= 0 && device < create_fn_cached_devices ? &cache[device] : nullptr;
  if (slot != nullptr)
    if (root_create_fn fn = slot->load(std::memory_order_relaxed)) return fn;
  const cuda_device_scope on(context, device);  // the symbol is found in the current context's module
  if (on.error() != cudaSuccess) return nullptr;
  root_create_fn v = nullptr;
  if (cudaMemcpyFromSymbolAsync(&v, g_create<T, F, Args...>, sizeof v, 0, cudaMemcpyDeviceToHost,
                                static_cast<cudaStream_t>(stream)) != cudaSuccess ||
      cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess) {
    cudaGetLastError();  // (a sticky fault stays: the runtime's own checks report it)
    return nullptr;
  }
  if (slot != nullptr) slot->store(v, std::memory_order_relaxed);
  return v;
}

const device_program this_tu_program = {&program_launch, &program_occupancy, &program_attributes, &program_teardown,
                                        &program_unbind};

}  // namespace
}  // namespace weft::exec
#endif  // WEFT_CUDA_COMPILE
