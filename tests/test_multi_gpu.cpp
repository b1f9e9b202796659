// Runtimes on several GPUs of one process, driven from one host thread and from several.
//
// The CUDA runtime keeps one current context per host thread; weft's host side pushes
// its runtime's primary context around every CUDA call it makes on a caller's thread
// (exec::cuda_device_scope) and looks up device code per device, so neither what the
// caller has current nor which runtime was made last decides where a task runs. Needs two GPUs: hidden ([.]; every other
// filter of scripts/gpu-check excludes [multi_gpu], since Catch2 selects a hidden test
// that a filter matches), and gpu-check runs it on its own where two GPUs are.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "shared_array.hpp"
#include "support.hpp"

#if WEFT_CUDA_COMPILE
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace {

constexpr int items = 4096;

// Writes base + i into p[i] for every i < n from the GPU, through a bulk job.
WEFT_HOST_DEVICE weft::task<int> fill(int* p, int n, int base) {
  co_await weft::bulk(static_cast<std::size_t>(n), [=] WEFT_HOST_DEVICE(std::size_t i) { p[i] = base + static_cast<int>(i); });
  co_return n;
}

// Reads the first n ints of the file at path into dst (device memory: the reactor copies
// them in on the runtime's device); the byte count, or minus the error code.
WEFT_HOST_DEVICE weft::task<int> read_into(const char* path, int* dst, int n) {
  auto f = co_await weft::io::open(path, O_RDONLY);
  if (!f) co_return -static_cast<int>(f.error());
  auto r = co_await weft::io::read(*f, dst, static_cast<std::size_t>(n) * sizeof(int), 0);
  (void)co_await weft::io::close(*f);
  co_return r ? static_cast<int>(*r) : -static_cast<int>(r.error());
}

// True when the calling thread has no CUDA context current (the driver's cuCtxGetCurrent,
// reached through cudart as weft does).
bool current_context_is_none() {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return false;
  CUcontext c = nullptr;
  return reinterpret_cast<CUresult (*)(CUcontext*)>(p)(&c) == CUDA_SUCCESS && c == nullptr;
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
  int* b1 = device_buffer(1);  // (device 1 current from here)
  // A file of ints 700, 701, ... that a task on GPU 1 reads into b1. Its path is in
  // managed memory made before the runtimes (memcheck does not see allocations made
  // while a persistent kernel runs) and while GPU 1, whose task reads it, is current.
  std::vector<int> want(items);
  for (int i = 0; i < items; ++i) want[i] = 700 + i;
  char tmpl[] = "/tmp/weft-multi-gpu-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, want.data(), items * sizeof(int)) == static_cast<ssize_t>(items * sizeof(int)));
  ::close(fd);
  weft_test::shared_array<char> path(sizeof tmpl);
  std::memcpy(path.data(), tmpl, sizeof tmpl);
  // One root type for both runtimes: its device address is looked up per device.
  auto fill_root = [] WEFT_HOST_DEVICE(int* p, int n, int b) { return fill(p, n, b); };
  REQUIRE(cudaSetDevice(1) == cudaSuccess);
  {
    weft::runtime r1(on_device(1));
    weft::runtime r0(on_device(0));  // made last, while device 1 is current
    REQUIRE(current_device() == 1);  // neither constructor changed it
    // Each runtime's first root launches its kernel: on its own device, whatever is current.
    REQUIRE(r0.block_on(fill_root, b0, items, 100) == items);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(r1.block_on(fill_root, b1, items, 200) == items);
    REQUIRE(current_device() == 0);
    REQUIRE(holds(b0, 100));
    REQUIRE(holds(b1, 200));
    // Both kernels at once, each root submitted while the other device is current.
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    auto h0 = r0.spawn(fill_root, b0, items, 300);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    auto h1 = r1.spawn(fill_root, b1, items, 400);
    REQUIRE(h0.try_get().value() == items);
    REQUIRE(h1.try_get().value() == items);
    REQUIRE(holds(b0, 300));
    REQUIRE(holds(b1, 400));
    // Two host threads, one per runtime, each with no device chosen by itself. Each also
    // reads its runtime's counters, which copies from the GPU on the calling thread. After
    // that neither thread has a context current: none was made for it (a scope that set
    // the device and set the caller's ordinal back, or a copy made outside a scope, would
    // have left a context there), and the runtime API still reports its default, device 0.
    int ok0 = 0, ok1 = 0, after0 = -1, after1 = -1;
    bool bare0 = false, bare1 = false;
    auto drive = [&](weft::runtime& rt, int* buf, int base, int* ok, int* after, bool* bare) {
      for (int k = 0; k < 50; ++k) *ok += rt.try_block_on(fill_root, buf, items, base + k).value_or(-1) == items;
      (void)rt.device()->stats();
      *bare = current_context_is_none();
      if (cudaGetDevice(after) != cudaSuccess) *after = -2;
    };
    std::thread t0(drive, std::ref(r0), b0, 1000, &ok0, &after0, &bare0);
    std::thread t1(drive, std::ref(r1), b1, 2000, &ok1, &after1, &bare1);
    t0.join();
    t1.join();
    REQUIRE(ok0 == 50);
    REQUIRE(ok1 == 50);
    REQUIRE(bare0);
    REQUIRE(bare1);
    REQUIRE(after0 == 0);
    REQUIRE(after1 == 0);
    REQUIRE(holds(b0, 1049));
    REQUIRE(holds(b1, 2049));
    // The reactor of the runtime on GPU 1 copies a file's bytes into GPU 1's memory.
    const int got = r1.block_on([] WEFT_HOST_DEVICE(const char* p, int* d, int n) { return read_into(p, d, n); },
                                path.data(), b1, items);
    ::unlink(tmpl);
    REQUIRE(got == static_cast<int>(items * sizeof(int)));
    REQUIRE(holds(b1, 700));
    REQUIRE(weft_test::wait_for_no_live_tasks(r0) == 0);
    REQUIRE(weft_test::wait_for_no_live_tasks(r1) == 0);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    r0.shutdown();  // its teardown kernels run on device 0 with device 1 current
    REQUIRE(current_device() == 1);
    REQUIRE(r0.live_frame_blocks() == 0);
    REQUIRE(r1.block_on(fill_root, b1, items, 500) == items);
    REQUIRE(holds(b1, 500));
    r1.shutdown();
    REQUIRE(r1.live_frame_blocks() == 0);
  }
  REQUIRE(current_device() == 1);
  cudaFree(b0);
  cudaFree(b1);
}
#endif  // WEFT_CUDA_COMPILE
