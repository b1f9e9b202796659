// Device smoke test: task<int> chains created in device code and driven to completion
// lane by lane through the trampoline (weft::run_inline), frames from a device pool,
// after a runtime in this translation unit has run and shut down.
// Run on a GPU machine; exits non-zero on any mismatch or CUDA error.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <weft/weft.hpp>

#define SMOKE_CHECK(call)                                                                  \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

WEFT_HOST_DEVICE weft::task<int> leaf(int x) { co_return x * 2 + 1; }

// A chain of `depth` nested awaits; every level adds 1.
WEFT_HOST_DEVICE weft::task<int> chain(int depth) {
  if (depth == 0) co_return 0;
  int below = co_await chain(depth - 1);
  co_return below + 1;
}

// Divergent work: lanes take different paths, await children and yield.
WEFT_HOST_DEVICE weft::task<int> divergent(int lane) {
  int acc = 0;
  for (int i = 0; i < (lane % 7) + 1; ++i) {
    if ((lane + i) % 3 == 0) co_await weft::yield();
    acc += co_await leaf(lane + i);
  }
  co_return acc;
}

WEFT_HOST_DEVICE weft::task<void> void_child(int* out) {
  *out += 5;
  co_return;
}

WEFT_HOST_DEVICE weft::task<int> with_void(int v) {
  int x = v;
  co_await void_child(&x);
  co_return x;
}

int host_divergent(int lane) {
  int acc = 0;
  for (int i = 0; i < (lane % 7) + 1; ++i) acc += (lane + i) * 2 + 1;
  return acc;
}

__global__ void install_pool(weft::exec::size_class_pool* pool, void* arena, std::size_t bytes) {
  pool->init(arena, bytes);
  weft::exec::g_device_frame_pool = pool;
}

__global__ void run_lanes(int* out, int* err, int n) {
  const int lane = blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= n) return;
  weft::result<int> a = weft::run_inline(divergent(lane));
  weft::result<int> b = weft::run_inline(chain(lane % 64));
  weft::result<int> c = weft::run_inline(with_void(lane));
  if (!a || !b || !c) { err[lane] = 1; return; }
  out[lane] = *a + 1000 * *b + 100000 * (*c - lane);
}

__global__ void run_deep(int depth, int* out, int* err) {
  weft::result<int> r = weft::run_inline(chain(depth));
  if (r) *out = *r;
  else *err = static_cast<int>(r.error());
}

// With no pool installed, allocation fails cleanly: out_of_memory, no fault.
__global__ void run_without_pool(int* err) {
  weft::exec::size_class_pool* saved = weft::exec::g_device_frame_pool;
  weft::exec::g_device_frame_pool = nullptr;
  weft::result<int> r = weft::run_inline(chain(3));
  weft::exec::g_device_frame_pool = saved;
  *err = r ? 0 : static_cast<int>(r.error());
}

// Bulk work with no executor (a kernel that drives tasks by run_inline): bulk runs in
// the calling lane, bulk_warps reports backend_unavailable (one lane is not a warp).
WEFT_HOST_DEVICE weft::task<int> inline_bulk() {
  int calls = 0;
  co_await weft::bulk(40, [&calls] WEFT_HOST_DEVICE(std::size_t) { ++calls; });
  weft::result<void> w = co_await weft::try_await(weft::bulk_warps(1, [] WEFT_HOST_DEVICE(weft::warp_ctx&) {}));
  co_return calls * 100 + (w ? 0 : static_cast<int>(w.error()));
}

__global__ void run_inline_bulk(int* out) {
  weft::result<int> r = weft::run_inline(inline_bulk());
  *out = r ? *r : -1;
}

// A root for a runtime in this translation unit: a spawned child, a bulk job and a
// chain of awaits, so that the executor's frame and bulk paths all ran here.
WEFT_HOST_DEVICE weft::task<int> runtime_root(int n, int* sink) {
  weft::join_handle<int> h = weft::spawn(leaf(n));
  co_await weft::bulk(64, [sink] WEFT_HOST_DEVICE(std::size_t i) { sink[i] = static_cast<int>(i); });
  const int below = co_await chain(10);
  co_return co_await std::move(h) + below + sink[63];
}

// Runs runtime_root on a cuda runtime and shuts it down. The runtime's launch wrote its
// executor's address into this module's constants; shutdown must clear them, or the
// run_inline kernels launched after it take the executor's paths on freed memory.
// Returns the number of failures. workers: 0 for every warp slot.
int run_and_shut_down_a_runtime(unsigned workers) {
  int* sink = nullptr;
  SMOKE_CHECK(cudaMalloc(&sink, 64 * sizeof(int)));
  weft::config c;
  c.kind = weft::backend::cuda;
  c.frame_pool_bytes = std::size_t{64} << 20;
  c.workers = workers;
  int got = -1;
  try {
    weft::runtime rt(c);
    got = rt.block_on([] WEFT_HOST_DEVICE(int n, int* s) { return runtime_root(n, s); }, 20, sink);
    rt.shutdown();
  } catch (const weft::error& e) {
    std::fprintf(stderr, "runtime: %s\n", e.what());
  }
  SMOKE_CHECK(cudaFree(sink));
  const int want = (20 * 2 + 1) + 10 + 63;
  std::printf("runtime in this translation unit, then shut down: %d (want %d)\n", got, want);
  return got == want ? 0 : 1;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("device smoke: no usable GPU here; skipped\n");
    return 77;
  }
  // WEFT_SMOKE_SMALL=1 (used under compute-sanitizer) shrinks the run.
  const bool small = std::getenv("WEFT_SMOKE_SMALL") != nullptr;
  // First a runtime, gone before the kernels below run (they drive tasks with run_inline).
  int bad = run_and_shut_down_a_runtime(small ? 8 : 0);
  constexpr std::size_t arena_bytes = std::size_t{512} << 20;
  const int lanes = small ? 4096 : 132 * 256;
  const int deep = small ? 10000 : 1000000;
  weft::exec::size_class_pool* pool;
  void* arena;
  int *out, *err, *deep_out, *deep_err;
  SMOKE_CHECK(cudaMalloc(&pool, sizeof(weft::exec::size_class_pool)));
  SMOKE_CHECK(cudaMalloc(&arena, arena_bytes));
  SMOKE_CHECK(cudaMalloc(&out, lanes * sizeof(int)));
  SMOKE_CHECK(cudaMalloc(&err, lanes * sizeof(int)));
  SMOKE_CHECK(cudaMalloc(&deep_out, sizeof(int)));
  SMOKE_CHECK(cudaMalloc(&deep_err, sizeof(int)));
  SMOKE_CHECK(cudaMemset(out, 0xff, lanes * sizeof(int)));  // poison: every lane must write
  SMOKE_CHECK(cudaMemset(err, 0, lanes * sizeof(int)));
  SMOKE_CHECK(cudaMemset(deep_out, 0xff, sizeof(int)));
  SMOKE_CHECK(cudaMemset(deep_err, 0, sizeof(int)));

  install_pool<<<1, 1>>>(pool, arena, arena_bytes);
  SMOKE_CHECK(cudaGetLastError());
  run_lanes<<<(lanes + 255) / 256, 256>>>(out, err, lanes);
  SMOKE_CHECK(cudaGetLastError());
  SMOKE_CHECK(cudaDeviceSynchronize());

  std::vector<int> h_out(lanes), h_err(lanes);
  SMOKE_CHECK(cudaMemcpy(h_out.data(), out, lanes * sizeof(int), cudaMemcpyDeviceToHost));
  SMOKE_CHECK(cudaMemcpy(h_err.data(), err, lanes * sizeof(int), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < lanes; ++i) {
    const int want = host_divergent(i) + 1000 * (i % 64) + 100000 * 5;
    if (h_err[i] || h_out[i] != want) {
      if (wrong++ < 5) std::fprintf(stderr, "lane %d: got %d (err %d), want %d\n", i, h_out[i], h_err[i], want);
    }
  }
  std::printf("lanes: %d checked, %d wrong\n", lanes, wrong);
  bad += wrong;

  // The deep chain: 1e6 nested awaits in one lane, constant device stack.
  run_deep<<<1, 1>>>(deep, deep_out, deep_err);
  SMOKE_CHECK(cudaGetLastError());
  SMOKE_CHECK(cudaDeviceSynchronize());
  int h_deep = 0, h_deep_err = 0;
  SMOKE_CHECK(cudaMemcpy(&h_deep, deep_out, sizeof(int), cudaMemcpyDeviceToHost));
  SMOKE_CHECK(cudaMemcpy(&h_deep_err, deep_err, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("deep chain: depth %d -> %d (err %d)\n", deep, h_deep, h_deep_err);
  if (h_deep != deep || h_deep_err != 0) ++bad;

  int* no_pool_err;
  SMOKE_CHECK(cudaMalloc(&no_pool_err, sizeof(int)));
  run_without_pool<<<1, 1>>>(no_pool_err);
  SMOKE_CHECK(cudaGetLastError());
  SMOKE_CHECK(cudaDeviceSynchronize());
  int h_np = 0;
  SMOKE_CHECK(cudaMemcpy(&h_np, no_pool_err, sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("no pool: error %d (%s)\n", h_np, weft::to_string(static_cast<weft::errc>(h_np)));
  if (h_np != static_cast<int>(weft::errc::out_of_memory)) ++bad;

  int* bulk_out;
  SMOKE_CHECK(cudaMalloc(&bulk_out, sizeof(int)));
  run_inline_bulk<<<1, 1>>>(bulk_out);
  SMOKE_CHECK(cudaGetLastError());
  SMOKE_CHECK(cudaDeviceSynchronize());
  int h_bulk = 0;
  SMOKE_CHECK(cudaMemcpy(&h_bulk, bulk_out, sizeof(int), cudaMemcpyDeviceToHost));
  const int want_bulk = 40 * 100 + static_cast<int>(weft::errc::backend_unavailable);
  std::printf("bulk without an executor: %d (want %d: 40 calls in the lane, bulk_warps backend_unavailable)\n", h_bulk,
              want_bulk);
  if (h_bulk != want_bulk) ++bad;

  std::printf(bad ? "DEVICE SMOKE: FAIL\n" : "DEVICE SMOKE: PASS\n");
  return bad ? 1 : 0;
}
