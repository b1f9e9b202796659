// src/gpu_facts.hpp - what the cuda backend needs of a GPU, checked when a runtime is made.
//
// Plain facts copied from cudaDeviceProp (device_runtime.cpp), so that the check, and
// its messages, can be tested without a GPU (tests/test_gpu_facts.cpp).
#pragma once
#include <string>

#include "weft/runtime.hpp"

namespace weft::exec {

struct gpu_facts {
  int device = 0;
  bool cooperative_launch = true;  // the worker kernel is launched cooperatively (device_worker.hpp)
  bool unified_addressing = true;  // pinned host memory mapped at the same address
  bool can_map_host_memory = true;  // the mailboxes and the host's control block
  bool kernel_exec_timeout = false;  // a run-time limit on kernels (a display watchdog)
  int compute_major = 9;  // compute capability: the device code needs 9.0 or later (config.hpp)
  int compute_minor = 0;
};

// Throws weft::error(backend_unavailable) naming what the GPU lacks. A GPU below compute
// capability 9.0 is refused here, when the runtime is made, rather than at its first
// submission (no kernel image would load on it), so that backend::automatic runs such a
// GPU's work on the host backend instead of failing every root. A run-time limit on
// kernels is refused too: the persistent kernel runs for as long as the runtime lives, so
// the watchdog would kill it a few seconds in, and every task with it (device_fault).
void check_gpu_facts(const gpu_facts& f);

// Whether check_gpu_facts accepts a GPU with these facts.
bool facts_fit(const gpu_facts& f) noexcept;

// Whether GPU `device` has what the cuda backend needs (facts_fit of its properties):
// backend::automatic picks the host backend for one that has not. False without CUDA, or
// when its properties cannot be read.
bool gpu_fits(int device) noexcept;

// What backend::automatic (with WEFT_BACKEND unset) runs on, given how many GPUs are present
// and whether the configured one fits (gpu_fits): the cuda backend only on a GPU that fits,
// the host backend with no GPU or an unfit one. (A configured device past the GPUs present
// is refused before this is asked: runtime.cpp.)
backend automatic_backend(int gpus_present, bool configured_gpu_fits) noexcept;

}  // namespace weft::exec
