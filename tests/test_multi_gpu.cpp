// Runtimes on several GPUs of one process, driven from one host thread.
//
// The CUDA runtime keeps one current device per host thread; weft's host side opens
// its runtime's device around every CUDA call (exec::cuda_device_scope) and looks up
// device code per device, so neither what the caller has current nor which runtime
// was made last decides where a task runs. Needs two GPUs: hidden ([.]), and
// scripts/gpu-check runs it in a process of its own on a machine that has them.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "support.hpp"

#if WEFT_CUDA_COMPILE
#include <cuda_runtime_api.h>

namespace {

constexpr int items = 4096;

// Writes base + i into p[i] for every i < n from the GPU, through a bulk job.
WEFT_HOST_DEVICE weft::task<int> fill(int* p, int n, int base) {
  co_await weft::bulk(static_cast<std::size_t>(n), [=] WEFT_HOST_DEVICE(std::size_t i) { p[i] = base + static_cast<int>(i); });
  co_return n;
}

int current_device() {
  int d = -1;
  REQUIRE(cudaGetDevice(&d) == cudaSuccess);
  return d;
}

int* device_buffer(int device) {
  REQUIRE(cudaSetDevice(device) == cudaSuccess);
  int* p = nullptr;
  REQUIRE(cudaMalloc(&p, items * sizeof(int)) == cudaSuccess);
  return p;
}

// True when p[i] == base + i for every i.
bool holds(const int* p, int base) {
  std::vector<int> v(items);
  REQUIRE(cudaMemcpy(v.data(), p, items * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int i = 0; i < items; ++i)
    if (v[i] != base + i) return false;
  return true;
}

weft::config on_device(int device) {
  weft::config c;
  c.kind = weft::backend::cuda;
  c.device = device;
  c.workers = 256;  // the test needs few warps
  return c;
}

}  // namespace

TEST_CASE("runtimes on two GPUs run their own tasks from one host thread, and leave its current device alone",
          "[runtime][multi_gpu][.]") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  REQUIRE(count >= 2);  // run only where two GPUs are (scripts/gpu-check)
  // Peer access is off (the default), so a kernel on one GPU that wrote the other's
  // buffer would fault: each runtime must run on its own device.
  int* b0 = device_buffer(0);
  int* b1 = device_buffer(1);
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  {
    weft::runtime r0(on_device(0));  // made while device 1 is current
    weft::runtime r1(on_device(1));
    REQUIRE(current_device() == 1);  // neither constructor changed it
    // Each runtime's first root launches its kernel: on its own device, whatever is current.
    REQUIRE(r0.block_on([] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); }, b0, items, 100) == items);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(r1.block_on([] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); }, b1, items, 200) == items);
    REQUIRE(current_device() == 0);
    REQUIRE(holds(b0, 100));
    REQUIRE(holds(b1, 200));
    // Both kernels at once, each root submitted while the other device is current.
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    auto h0 = r0.spawn([] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); }, b0, items, 300);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    auto h1 = r1.spawn([] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); }, b1, items, 400);
    REQUIRE(h0.try_get().value() == items);
    REQUIRE(h1.try_get().value() == items);
    REQUIRE(holds(b0, 300));
    REQUIRE(holds(b1, 400));
    REQUIRE(weft_test::wait_for_no_live_tasks(r0) == 0);
    REQUIRE(weft_test::wait_for_no_live_tasks(r1) == 0);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    r0.shutdown();  // its teardown kernels run on device 0 with device 1 current
    REQUIRE(current_device() == 1);
    REQUIRE(r0.live_frame_blocks() == 0);
    REQUIRE(r1.block_on([] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); }, b1, items, 500) == items);
    REQUIRE(holds(b1, 500));
    r1.shutdown();
    REQUIRE(r1.live_frame_blocks() == 0);
  }
  REQUIRE(current_device() == 1);
  cudaFree(b0);
  cudaFree(b1);
}
#endif  // WEFT_CUDA_COMPILE
