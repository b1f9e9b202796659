// The cuda backend's start and shutdown when a step of the device program fails: the
// kernel's launch (its symbol copies or the cooperative launch), the teardown kernels at
// shutdown (device_program::teardown), and the clearing of the module's constants at
// shutdown (device_program::unbind). A CUDA call cannot be made to fail on demand, so
// these tests submit through a device_program whose launch, teardown or unbind reports a
// CUDA error, built from this translation unit's real one (exec::this_tu_program); the
// runtime sees the same return codes as from a failed call.
// On the host backend there is no device program: the tests check nothing there.
// The fake programs are bound (device_runtime.cpp's table) under their own addresses, not
// this unit's: harmless in this sequential suite, but no other runtime may run this
// unit's code on the GPU while they do.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

weft::config launch_config() {
  weft::config c;  // kind = automatic: WEFT_BACKEND decides
  c.frame_pool_bytes = 64u << 20;
  if (std::getenv("WEFT_TEST_SMALL") != nullptr) c.workers = 64;  // compute-sanitizer runs
  return c;
}

#if WEFT_CUDA_COMPILE
namespace exec = weft::exec;

constexpr auto echo = [] WEFT_HOST_DEVICE(int v) -> weft::task<int> { co_return v; };
using echo_fn = std::remove_cv_t<decltype(echo)>;

int g_unbinds = 0;                        // calls of unbind_then_report
cudaError_t g_unbind_error = cudaSuccess;  // what it reports after the real unbind

int launch_refused(exec::device_sched*, const exec::device_sched&, unsigned, unsigned, void*) {
  return cudaErrorLaunchOutOfResources;  // as a refused cooperative launch would
}
int unbind_then_report(void* stream) {
  ++g_unbinds;
  const int e = exec::this_tu_program.unbind(stream);  // the constants are cleared for real
  return e != cudaSuccess ? e : g_unbind_error;
}

// A root that parks for good on an event in its own frame: only the teardown destroys it.
constexpr auto parked = [] WEFT_HOST_DEVICE(int v) -> weft::task<int> {
  weft::event never;
  co_await never.wait();
  co_return v;
};
using parked_fn = std::remove_cv_t<decltype(parked)>;

int g_teardowns = 0;                         // calls of teardown_then_report
cudaError_t g_teardown_error = cudaSuccess;  // what it reports after the real teardown
int teardown_then_report(exec::device_sched* d, const exec::teardown_scratch& s, void* stream) {
  ++g_teardowns;
  const int e = exec::this_tu_program.teardown(d, s, stream);  // the frames are destroyed for real
  return e != cudaSuccess ? e : g_teardown_error;
}

// Submits fn(v) for `program`, as runtime::spawn does for this translation unit's.
template <class Fn>
weft::errc submit_root(exec::device_runtime& dev, const exec::device_program& program, Fn fn, int v,
                       exec::host_completion** rec) {
  const exec::packed<Fn, int> payload{fn, {v}};
  const exec::root_create_fn create =
      exec::create_fn_address<int, Fn, int>(dev.cu_context(), dev.ordinal(), dev.side_stream());
  return dev.submit(&program, create, &payload, sizeof payload, weft::detail::no_home, rec);
}
weft::errc submit_echo(exec::device_runtime& dev, const exec::device_program& program, int v,
                       exec::host_completion** rec) {
  return submit_root<echo_fn>(dev, program, echo, v, rec);
}

// Submits a `parked` root for `program`, drops its handle, and waits until the worker
// kernel has created it (worker 0 polls the host within its nap): one root that only
// shutdown's teardown destroys.
void park_one_root(exec::device_runtime& dev, const exec::device_program& program) {
  exec::host_completion* stuck = nullptr;
  REQUIRE(submit_root<parked_fn>(dev, program, parked, 6, &stuck) == weft::errc{});
  dev.release(stuck);
  REQUIRE(weft_test::wait_for_value([&] { return dev.stats().live_roots; }, std::int64_t{1},
                                    std::chrono::seconds(10)) == 1);
}
#endif

}  // namespace

TEST_CASE("a kernel launch that fails reports backend_unavailable, unbinds the module and leaves the GPU to the next start",
          "[runtime]") {
  weft::runtime rt(launch_config());
#if WEFT_CUDA_COMPILE
  exec::device_runtime* dev = rt.device();
  if (dev == nullptr) {
    SUCCEED("the host backend launches no kernel");
    return;
  }
  exec::device_program refused = exec::this_tu_program;
  refused.launch = &launch_refused;
  refused.unbind = &unbind_then_report;
  g_unbinds = 0;
  g_unbind_error = cudaSuccess;
  for (int attempt = 1; attempt <= 2; ++attempt) {  // each submission tries the start again
    exec::host_completion* rec = nullptr;
    REQUIRE(submit_echo(*dev, refused, attempt, &rec) == weft::errc::backend_unavailable);
    REQUIRE(rec == nullptr);
    REQUIRE(g_unbinds == attempt);  // the constants a partial launch may have written are cleared
    REQUIRE(rt.workers() == 0);
  }
  REQUIRE(rt.block_on(echo, 7) == 7);  // this module's real program starts: nothing stayed bound
  REQUIRE(rt.workers() > 0);
  rt.shutdown();
  REQUIRE(rt.live_frame_blocks() == 0);
#else
  SUCCEED("compiled without CUDA: " << rt.backend_name() << " launches no kernel");
#endif
}

TEST_CASE("a runtime whose module constants cannot be cleared at shutdown reports device_fault from then on",
          "[runtime]") {
  weft::runtime rt(launch_config());
#if WEFT_CUDA_COMPILE
  exec::device_runtime* dev = rt.device();
  if (dev == nullptr) {
    SUCCEED("the host backend has no module constants");
    return;
  }
  exec::device_program unclearable = exec::this_tu_program;
  unclearable.unbind = &unbind_then_report;
  g_unbinds = 0;
  g_unbind_error = cudaErrorInvalidValue;
  exec::host_completion* rec = nullptr;
  REQUIRE(submit_echo(*dev, unclearable, 5, &rec) == weft::errc{});
  REQUIRE(dev->wait(rec) == weft::errc{});
  dev->release(rec);
  REQUIRE(g_unbinds == 0);
  rt.shutdown();  // step 4's unbind reports the error: the runtime records it as a fault
  g_unbind_error = cudaSuccess;
  REQUIRE(g_unbinds == 1);
  REQUIRE(dev->fault_message() == cudaGetErrorString(cudaErrorInvalidValue));
  exec::host_completion* after = nullptr;
  REQUIRE(submit_echo(*dev, unclearable, 6, &after) == weft::errc::device_fault);
  auto r = rt.try_block_on(echo, 6);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::device_fault);
#else
  SUCCEED("compiled without CUDA: " << rt.backend_name() << " has no module constants");
#endif
}

TEST_CASE("a runtime whose teardown on the GPU fails at shutdown reports device_fault, and still clears its module "
          "constants",
          "[runtime]") {
  weft::runtime rt(launch_config());
#if WEFT_CUDA_COMPILE
  exec::device_runtime* dev = rt.device();
  if (dev == nullptr) {
    SUCCEED("the host backend has no teardown kernels");
    return;
  }
  exec::device_program failing = exec::this_tu_program;
  failing.teardown = &teardown_then_report;
  failing.unbind = &unbind_then_report;
  g_teardowns = 0;
  g_teardown_error = cudaErrorLaunchFailure;  // as a teardown kernel whose launch failed
  g_unbinds = 0;
  g_unbind_error = cudaSuccess;
  exec::host_completion* done = nullptr;
  REQUIRE(submit_echo(*dev, failing, 5, &done) == weft::errc{});
  REQUIRE(dev->wait(done) == weft::errc{});
  dev->release(done);
  park_one_root(*dev, failing);  // a root still parked at shutdown, created before it is asked for
  rt.shutdown();
  g_teardown_error = cudaSuccess;
  REQUIRE(g_teardowns == 1);
  REQUIRE(g_unbinds == 1);  // step 4 goes on to clear the constants after the failed teardown
  REQUIRE(dev->fault_message() ==
          std::string("shutdown's teardown on the GPU: ") + cudaGetErrorString(cudaErrorLaunchFailure));
  exec::host_completion* after = nullptr;
  REQUIRE(submit_echo(*dev, failing, 7, &after) == weft::errc::device_fault);
  REQUIRE(after == nullptr);
  auto r = rt.try_block_on(echo, 7);
  REQUIRE_FALSE(r.has_value());
  REQUIRE(r.error() == weft::errc::device_fault);
#else
  SUCCEED("compiled without CUDA: " << rt.backend_name() << " has no teardown kernels");
#endif
}

TEST_CASE("an exec::device_runtime made directly refuses a frame pool of 256 GiB or more, or under one block, and a "
          "timer capacity of 0 or past 2^24, with invalid_argument",
          "[runtime]") {
  weft::runtime rt(launch_config());
#if WEFT_CUDA_COMPILE
  exec::device_runtime* dev = rt.device();
  if (dev == nullptr) {
    SUCCEED("the host backend has no exec::device_runtime");
    return;
  }
  // weft::runtime checks the same bounds first; a program may make this class itself.
  for (std::size_t bytes : {std::size_t{exec::max_frame_pool_bytes} + 1, std::size_t{1} << 40,
                            exec::size_class_pool::min_block - 1}) {
    exec::device_runtime_config c;
    c.device = dev->ordinal();
    c.frame_pool_bytes = bytes;
    INFO("frame_pool_bytes " << bytes);
    try {
      exec::device_runtime bad(c);
      FAIL("constructed");
    } catch (const weft::error& e) {
      CHECK(e.code() == weft::errc::invalid_argument);
    }
  }
  for (std::uint32_t timers : {0u, weft::max_timer_capacity + 1}) {
    exec::device_runtime_config c;
    c.device = dev->ordinal();
    c.timer_capacity = timers;
    INFO("timer_capacity " << timers);
    try {
      exec::device_runtime bad(c);
      FAIL("constructed");
    } catch (const weft::error& e) {
      CHECK(e.code() == weft::errc::invalid_argument);
      CHECK(std::string(e.what()).find("timer_capacity") != std::string::npos);
    }
  }
  REQUIRE(rt.block_on(echo, 3) == 3);  // the runtime beside it is untouched
#else
  SUCCEED("compiled without CUDA: " << rt.backend_name() << " has no exec::device_runtime");
#endif
}

// [api_error]: the cudaMalloc calls that fill the GPU end in a failure on purpose
// (scripts/gpu-check runs it under memcheck apart, with API errors not reported); [apart]:
// a process of its own, so that nothing else runs while the GPU is full.
TEST_CASE("a runtime shuts down on a GPU filled since its start: the parked roots are destroyed, with no fault",
          "[runtime][api_error][apart]") {
  weft::runtime rt(launch_config());
#if WEFT_CUDA_COMPILE
  exec::device_runtime* dev = rt.device();
  if (dev == nullptr) {
    SUCCEED("the host backend has no teardown kernels");
    return;
  }
  REQUIRE(rt.block_on(echo, 1) == 1);  // the kernel runs (its memory allocated)
  park_one_root(*dev, exec::this_tu_program);
  // Fill the GPU to the last MiB (halving the request as they fail). Before the fix,
  // shutdown allocated its 8 MiB of teardown lists now, failed, and left the root.
  std::vector<void*> fill;
  for (std::size_t chunk = std::size_t{1} << 30; chunk >= (std::size_t{1} << 20);) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess) fill.push_back(p);
    else chunk /= 2;
  }
  cudaGetLastError();
  std::size_t free_bytes = 0, total_bytes = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
  INFO("free after filling: " << free_bytes << " bytes in " << fill.size() << " allocations");
  CHECK(free_bytes < (std::size_t{8} << 20));
  rt.shutdown();
  for (void* p : fill) cudaFree(p);
  REQUIRE(dev->fault_message().empty());
  REQUIRE(rt.live_frame_blocks() == 0);
#else
  SUCCEED("compiled without CUDA: " << rt.backend_name() << " has no teardown kernels");
#endif
}
