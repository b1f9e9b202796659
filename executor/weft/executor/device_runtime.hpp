// weft/executor/device_runtime.hpp - the host side of the cuda backend.
//
// device_runtime owns everything the persistent kernel works on (device_layout.hpp),
// launches the kernel of the first device_program that submits to it, feeds it host
// submissions, waits for completions and tears it all down.
//
// Launch: one block of 128 threads (4 worker warps) per slot that the occupancy API
// reports, on every SM, launched cooperatively so that every warp is resident (the
// forward-progress argument is in device_worker.hpp). config::workers, when non-zero,
// caps the number of worker warps: that is how a runtime leaves room on the GPU for
// other kernels.
//
// Binding: the launch writes the executor's address into the program's module
// constants (g_device_sched, g_device_io: device_hooks.hpp), which every task hook of
// that translation unit reads. A module has one copy of them per device, so one program
// runs under at most one live runtime per device; and one runtime at a time may run its
// kernel on a device at all: a second one's start (its memory set-up synchronizes the
// device, and its module's lazy load may wait for the running kernel) would wait for
// the first kernel to end. So a runtime that submits while another runtime's kernel
// runs on its device, whatever the translation unit, is refused with
// errc::invalid_argument until that one has shut down (a process-wide table in
// device_runtime.cpp). Shutdown clears them. The first translation unit whose
// submission passes refusal() claims the runtime (claimed_): another unit's first
// submission racing it is refused before it touches its own module.
//
// Devices: the runtime runs on cfg.device. The CUDA runtime's current device belongs to
// the calling host thread, so every entry here that calls CUDA opens cuda_device_scope
// on cfg.device, which pushes the device's primary context (held by the runtime) and pops
// it after (cuda_device_scope.hpp): runtimes on several GPUs can be driven from one
// thread, and a runtime never changes what its caller has current.
//
// Shutdown, in order (device_runtime::shutdown):
//   1. Mark the runtime stopping: new submissions get errc::shutting_down.
//   2. Raise the stop flag in pinned memory. Worker 0 mirrors it into device memory;
//      every warp leaves its loop after its current batch (parked warps at their next
//      nap, so within park_max_ns).
//   3. Wait for the worker kernel to end (a fault ends it too; see below).
//   4. On the GPU (device_program::teardown, with lists allocated when the kernel was
//      launched, so a GPU filled since cannot stop it): find every live root that has not
//      completed by scanning the frame pool's side tables, mark each completed and
//      destroy those no join handle names (a handle dropped on the way frees the root it
//      names), until none is left; then clear the mark on the named ones still alive and
//      destroy them (nested destructions deferred, so any chain depth is fine; a
//      spawn_group's child is cancelled first); then free the spawn_group blocks still
//      alive, whose last children never started (the three phases are described above
//      weft_teardown_scan in device_program.hpp); then return
//      the lane caches to the pool, and clear the program's constants (device_program::
//      unbind), so that a run_inline kernel launched later in that translation unit
//      finds no executor instead of a freed one. (Not after a fault: the context is
//      dead, and no kernel of the process runs again.)
//   5. Fail every completion the host still waits for with errc::shutting_down.
//   6. Count the frames still live (0 unless something leaked), free device memory,
//      and give the program's binding up (another runtime may run it). The pinned
//      control words and completion records stay until ~device_runtime: host handles
//      that outlive the runtime still read their completion.
// Faults: a task that traps or faults ends the kernel with a sticky CUDA error. Every
// host wait polls the kernel's stream; on an error the runtime records it, every
// pending and later operation reports errc::device_fault (with the CUDA message), and
// shutdown skips the GPU teardown (the context is unusable) but never hangs.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/errc.hpp"
#include "weft/executor/device_layout.hpp"

namespace weft::exec {

struct kernel_report {
  int registers = 0;
  std::size_t local_bytes = 0;  // per-thread local memory (stack, spills)
  int max_threads = 0;
  int blocks_per_sm = 0;
  int sms = 0;
  unsigned blocks = 0;
  unsigned threads_per_block = 0;
  unsigned workers = 0;  // warps
};

struct teardown_scratch {
  detail::task_header** roots = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t* count = nullptr;
  unsigned scan_blocks = 0;
};

// The kernels of one CUDA translation unit (device_program.hpp). Functions return a
// cudaError_t as int so this header needs no CUDA headers.
struct device_program {
  int (*launch)(device_sched* d, const device_sched& host_view, unsigned blocks, unsigned threads, void* stream);
  int (*occupancy)(unsigned threads, int* blocks_per_sm);
  int (*attributes)(kernel_report* r);
  int (*teardown)(device_sched* d, const teardown_scratch& s, void* stream);
  // Clears the module's executor constants (g_device_sched, g_device_io), so that a
  // kernel launched later in that translation unit (run_inline) finds no executor.
  int (*unbind)(void* stream);
};

struct device_runtime_config {
  int device = 0;
  unsigned workers = 0;                     // worker warps; 0: full residency
  std::size_t frame_pool_bytes = 256u << 20;
  std::uint32_t local_queue_capacity = 256;
  std::uint32_t inject_capacity = 1u << 20; // all shards together
  std::uint32_t park_max_ns = 10000;        // config::park_max_ns
  std::uint32_t timer_capacity = 1u << 16;  // sleeping tasks at once (1..max_timer_capacity)
  // The host reactor's mailboxes (pinned, mapped); the device's halves are made here.
  std::vector<detail::mailbox_shared*> mailboxes;
};

struct device_stats {
  std::uint64_t resumed = 0, batches = 0, lanes_used = 0, stolen = 0, injected = 0, parks = 0, napped_ns = 0;
  std::uint64_t inline_bulk = 0;  // bulk jobs lone tasks ran inline (device_bulk.hpp)
  std::uint64_t inline_shared = 0;       // of those, jobs the blockmates ran (device_mbar_share.hpp)
  std::uint64_t inline_jobs_served = 0;  // jobs served, counted once per serving warp
  std::int64_t live_roots = 0;
  std::uint64_t pinned_live = 0;  // pinned roots not completed yet (device_worker::pinned_live)
};

class cuda_primary_context;  // cuda_device_scope.hpp

class device_runtime {
 public:
  explicit device_runtime(const device_runtime_config& cfg);  // throws weft::error
  ~device_runtime();
  device_runtime(const device_runtime&) = delete;
  device_runtime& operator=(const device_runtime&) = delete;

  // Queues a root for `program`, pinned to worker `home` (detail::no_home: any worker; a
  // home at or past the worker count, known once the kernel runs, is invalid_argument,
  // after the fault and shutdown checks); on success *out is the record to wait on. A
  // null fn (its device address was not found) is backend_unavailable, after the fault
  // and shutdown checks.
  errc submit(const device_program* program, root_create_fn fn, const void* payload, std::size_t bytes,
              std::uint32_t home, host_completion** out) noexcept;
  // Blocks until the record is done; returns its error (errc{} on success).
  errc wait(host_completion* c) noexcept;
  bool ready(const host_completion* c) const noexcept;
  // Why a submission from `program` would be refused, or errc{}: device_fault or
  // shutting_down once the runtime faulted or stopped (whichever translation unit asks);
  // invalid_argument when the kernel already runs another translation unit's program, or
  // when another live runtime runs `program` on this device (a module's constants name
  // one executor). Asked before anything touches `program`'s module: with CUDA's lazy
  // module loading, the first use of a module while a persistent kernel runs (this
  // runtime's, or another's on the same device) can wait for that kernel.
  errc refusal(const device_program* program) const noexcept;
  // Gives a record back (also when it is not done: it is reclaimed once it is).
  void release(host_completion* c) noexcept;

  void shutdown() noexcept;
  // The CUDA error that ended the kernel, or that shutdown met clearing the module's
  // constants (the runtime then counts as faulted too), or "" when none.
  std::string fault_message() const;

  void* side_stream() const noexcept { return side_stream_; }
  int ordinal() const noexcept { return cfg_.device; }  // the CUDA device it runs on
  // The device's primary context, held while the runtime lives, for cuda_device_scope
  // (a CUcontext; null where the driver's entry points are missing).
  void* cu_context() const noexcept;
  kernel_report report() const noexcept {
    std::lock_guard lk(m_);  // the first submission writes it, maybe on another thread
    return report_;
  }
  device_stats stats() const noexcept;  // while running: a snapshot
  // While running: the mailboxes' requests posted and not yet delivered (a snapshot,
  // read on the side stream; 0 when the kernel is not running or faulted).
  std::uint64_t io_inflight() const noexcept;
  std::int64_t live_frame_blocks() const noexcept;
  // Under the lock: the first submission may be launching the kernel on another thread.
  unsigned worker_count() const noexcept {
    std::lock_guard lk(m_);
    return report_.workers;
  }

 private:
  errc start_locked(const device_program* program) noexcept;
  errc launch_locked(const device_program* program) noexcept;
  errc check_kernel_locked() noexcept;
  host_completion* take_record_locked() noexcept;
  void allocate_memory();
  void free_memory() noexcept;
  void make_host_resources();
  void free_host_resources() noexcept;

  device_runtime_config cfg_;
  std::unique_ptr<cuda_primary_context> primary_;  // the device's primary context, held
  mutable std::mutex m_;
  const device_program* program_ = nullptr;
  // The translation unit that refusal() let through first, before any start; cleared
  // when its start, or its look-up, fails (submit).
  mutable const device_program* claimed_ = nullptr;
  bool running_ = false;
  bool stopping_ = false;
  bool faulted_ = false;
  std::string fault_;
  void* stream_ = nullptr;       // the worker kernel's stream (non-blocking)
  void* side_stream_ = nullptr;  // copies and look-ups while the kernel runs
  kernel_report report_{};

  device_sched host_{};          // what was written to d_
  device_sched* d_ = nullptr;
  std::vector<void*> device_allocs_;
  teardown_scratch teardown_{};  // step 4's lists, allocated with the rest: a GPU that is
                                 // full by shutdown must not leave the roots undestroyed
  host_control* control_ = nullptr;
  std::uint64_t next_ticket_ = 0;

  std::vector<host_completion*> free_records_;
  std::vector<host_completion*> abandoned_;
  host_completion* records_ = nullptr;
  std::size_t record_count_ = 0;
  std::int64_t final_live_blocks_ = -1;
};

}  // namespace weft::exec
