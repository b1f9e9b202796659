// saxpy: data-parallel work awaited from a task.
//
//   y = a * x + y over 1M elements with co_await weft::bulk, then the sum of y with
//   co_await weft::bulk_warps (each warp job reduces 1024 elements with warp_ctx),
//   then a decision on the device from that sum: no round trip to the host between
//   the steps. Checked against the same computation on the host.
//
// On the cuda backend the arrays are CUDA managed memory (the GPU and the host both
// use them); on the host backend, plain memory. Build: examples/saxpy (both presets).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include <weft/weft.hpp>

namespace {

constexpr std::size_t n = std::size_t{1} << 20;
constexpr std::size_t per_job = 1024;  // elements one warp job sums

WEFT_HOST_DEVICE weft::task<int> saxpy_then_sum(float a, const float* x, float* y, float* partial) {
  co_await weft::bulk(n, [=] WEFT_HOST_DEVICE(std::size_t i) { y[i] = a * x[i] + y[i]; });
  co_await weft::bulk_warps(n / per_job, [=] WEFT_HOST_DEVICE(weft::warp_ctx& w) {
    float s = 0;
    for (std::size_t i = w.lane(); i < per_job; i += 32) s += y[w.warp() * per_job + i];
    s = w.reduce_add(s);  // every lane gets the warp's sum
    if (w.lane() == 0) partial[w.warp()] = s;
  });
  float total = 0;
  for (std::size_t j = 0; j < n / per_job; ++j) total += partial[j];
  // A decision taken on the device: scale y down when the sum is large.
  if (total > 1e6f) co_await weft::bulk(n, [=] WEFT_HOST_DEVICE(std::size_t i) { y[i] *= 0.5f; });
  co_return total > 1e6f ? 1 : 0;
}

// Memory both the GPU and the host can use: CUDA managed memory on a CUDA build with
// a GPU, else the heap. Create it before the runtime and let it die after: freeing
// managed memory while the persistent kernel runs would wait for that kernel.
class shared_floats {
 public:
  explicit shared_floats(std::size_t count) {
#if WEFT_CUDA_COMPILE
    if (cudaMallocManaged(&p_, count * sizeof(float)) == cudaSuccess) {
      managed_ = true;
      return;
    }
    cudaGetLastError();
#endif
    p_ = std::calloc(count, sizeof(float));
    if (p_ == nullptr) throw std::bad_alloc();
  }
  shared_floats(const shared_floats&) = delete;
  shared_floats& operator=(const shared_floats&) = delete;
  ~shared_floats() {
#if WEFT_CUDA_COMPILE
    if (managed_) {
      cudaFree(p_);
      return;
    }
#endif
    std::free(p_);
  }
  float* get() const noexcept { return static_cast<float*>(p_); }

 private:
  void* p_ = nullptr;
  bool managed_ = false;
};

}  // namespace

int main() try {
  shared_floats xs(n), ys(n), partials(n / per_job);  // outlive the runtime below
  float* x = xs.get();
  float* y = ys.get();
  float* partial = partials.get();
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = float(i % 100);
    y[i] = 1.0f;
    want[i] = 2.5f * x[i] + 1.0f;
  }
  double want_sum = 0;
  for (float v : want) want_sum += v;
  const bool want_halved = want_sum > 1e6;

  weft::runtime rt;  // WEFT_BACKEND=host|cuda forces a backend
  const int halved = rt.block_on(
      [] WEFT_HOST_DEVICE(const float* xv, float* yv, float* pv) { return saxpy_then_sum(2.5f, xv, yv, pv); }, x, y,
      partial);

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += y[i] != (want_halved ? want[i] * 0.5f : want[i]);
  std::printf("saxpy over %zu elements via %s: sum %.6g, %s, %zu wrong\n", n, rt.backend_name(), want_sum,
              halved ? "halved on the device" : "kept", wrong);
  return wrong == 0 && (halved != 0) == want_halved ? 0 : 1;
} catch (const weft::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
