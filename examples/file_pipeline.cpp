// file_pipeline: a task streams a file through the GPU and back to disk.
//
//   file_pipeline [input [output]]      (no input: a 256 MiB file is made in /tmp)
//
// One task reads the input in 4 MiB chunks with io::read, transforms each chunk with
// co_await weft::bulk (out = in * 1.5 + 1 on floats, on the GPU's workers), and writes
// it with io::write. Three buffers turn it into a pipeline: while chunk k is being
// transformed, chunk k + 1 is being read and chunk k - 1 written (each io call runs in
// a spawned task, so the three overlap). The output is checked against the same
// transform on the host.
//
// On the cuda backend the buffers are device memory and the run is timed beside a
// host-driven version of the same job: pread, cudaMemcpyAsync, a kernel,
// cudaMemcpyAsync back and pwrite, on two streams with double buffering.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace {

constexpr std::size_t chunk = std::size_t{4} << 20;
constexpr int depth = 3;  // buffers in flight: read, transform, write

WEFT_HOST_DEVICE inline float transform(float x) { return x * 1.5f + 1.0f; }

WEFT_HOST_DEVICE weft::task<std::size_t> read_chunk(weft::io::file f, char* buf, std::uint64_t off) {
  auto n = co_await weft::io::read(f, buf, chunk, off);
  co_return n ? *n : ~std::size_t{0};
}
WEFT_HOST_DEVICE weft::task<std::size_t> write_chunk(weft::io::file f, const char* buf, std::size_t n,
                                                     std::uint64_t off) {
  auto w = co_await weft::io::write(f, buf, n, off);
  co_return w && *w == n ? n : ~std::size_t{0};
}

// Returns the bytes written, or a negative errc on failure.
WEFT_HOST_DEVICE weft::task<long long> pipeline(const char* in_path, const char* out_path, char* bufs) {
  auto in = co_await weft::io::open(in_path, O_RDONLY);
  if (!in) co_return -static_cast<long long>(in.error());
  auto out = co_await weft::io::open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!out) co_return -static_cast<long long>(out.error());
  weft::join_handle<std::size_t> writes[depth];
  long long written = 0;
  bool failed = false;
  std::uint64_t off = 0;
  weft::join_handle<std::size_t> next = weft::spawn(read_chunk(*in, bufs, 0));
  for (int k = 0;; ++k) {
    const std::size_t n = co_await std::move(next);
    next = {};  // joined: an empty handle marks "no read in flight"
    if (n == ~std::size_t{0}) failed = true;
    if (n == 0 || failed) break;
    char* cur = bufs + (k % depth) * chunk;
    char* nb = bufs + ((k + 1) % depth) * chunk;
    // The next read goes into the buffer chunk k - 2 was written from: wait for that write.
    if (writes[(k + 1) % depth].valid()) {
      const std::size_t w = co_await std::move(writes[(k + 1) % depth]);
      writes[(k + 1) % depth] = {};
      failed |= w == ~std::size_t{0};
      written += static_cast<long long>(w);
    }
    next = weft::spawn(read_chunk(*in, nb, off + n));
    float* x = reinterpret_cast<float*>(cur);
    co_await weft::bulk(n / sizeof(float), [x] WEFT_HOST_DEVICE(std::size_t i) { x[i] = transform(x[i]); });
    writes[k % depth] = weft::spawn(write_chunk(*out, cur, n, off));
    off += n;
  }
  if (next.valid()) (void)co_await std::move(next);
  for (auto& w : writes) {
    if (!w.valid()) continue;
    const std::size_t v = co_await std::move(w);
    failed |= v == ~std::size_t{0};
    written += static_cast<long long>(v);
  }
  (void)co_await weft::io::close(*in);
  (void)co_await weft::io::close(*out);
  co_return failed ? -static_cast<long long>(weft::errc::io_error) : written;
}

#if WEFT_CUDA_COMPILE
__global__ void transform_kernel(float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    x[i] = transform(x[i]);
}

// The host-driven version: two streams, each with its own pinned and device buffers.
double host_driven_seconds(const char* in_path, const char* out_path) {
  const int in = ::open(in_path, O_RDONLY), out = ::open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  cudaStream_t s[2];
  char *pin[2], *dev[2];
  std::size_t len[2] = {0, 0};
  std::uint64_t at[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking);
    cudaHostAlloc(&pin[i], chunk, cudaHostAllocDefault);
    cudaMalloc(&dev[i], chunk);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t off = 0;
  for (int k = 0;; ++k) {
    const int b = k % 2;
    cudaStreamSynchronize(s[b]);  // its last chunk is back in pin[b]: write it out
    if (len[b] != 0 && ::pwrite(out, pin[b], len[b], static_cast<off_t>(at[b])) < 0) break;
    const ssize_t n = ::pread(in, pin[b], chunk, static_cast<off_t>(off));
    if (n <= 0) {
      len[b] = 0;
      const int o = 1 - b;  // drain the other stream
      cudaStreamSynchronize(s[o]);
      if (len[o] != 0 && ::pwrite(out, pin[o], len[o], static_cast<off_t>(at[o])) < 0) break;
      break;
    }
    len[b] = static_cast<std::size_t>(n);
    at[b] = off;
    cudaMemcpyAsync(dev[b], pin[b], len[b], cudaMemcpyHostToDevice, s[b]);
    transform_kernel<<<264, 256, 0, s[b]>>>(reinterpret_cast<float*>(dev[b]), len[b] / sizeof(float));
    cudaMemcpyAsync(pin[b], dev[b], len[b], cudaMemcpyDeviceToHost, s[b]);
    off += len[b];
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int i = 0; i < 2; ++i) {
    cudaStreamDestroy(s[i]);
    cudaFreeHost(pin[i]);
    cudaFree(dev[i]);
  }
  ::close(in);
  ::close(out);
  return secs;
}
#endif

// Memory the backend's tasks use for the buffers: device memory on the cuda backend,
// the heap on the host backend. The path strings go to managed memory (or the heap).
struct buffers {
  char* data = nullptr;
  char* paths = nullptr;
  bool cuda = false;
  buffers(bool on_gpu, const std::string& in, const std::string& out) : cuda(on_gpu) {
#if WEFT_CUDA_COMPILE
    if (cuda) {
      cudaMalloc(&data, depth * chunk);
      cudaMallocManaged(&paths, in.size() + out.size() + 2);
    }
#endif
    if (!cuda) {
      data = static_cast<char*>(std::malloc(depth * chunk));
      paths = static_cast<char*>(std::malloc(in.size() + out.size() + 2));
    }
    std::memcpy(paths, in.c_str(), in.size() + 1);
    std::memcpy(paths + in.size() + 1, out.c_str(), out.size() + 1);
  }
  ~buffers() {
#if WEFT_CUDA_COMPILE
    if (cuda) {
      cudaFree(data);
      cudaFree(paths);
      return;
    }
#endif
    std::free(data);
    std::free(paths);
  }
};

bool make_input(const std::string& path, std::size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  std::vector<float> v(chunk / sizeof(float));
  for (std::size_t c = 0; c < bytes / chunk; ++c) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((c * 131 + i) % 1000) * 0.25f;
    std::fwrite(v.data(), 1, chunk, f);
  }
  return std::fclose(f) == 0;
}

// Compares 16 sampled chunks of the output with the host's transform of the input.
bool output_matches(const std::string& in, const std::string& out, std::size_t bytes) {
  FILE *a = std::fopen(in.c_str(), "rb"), *b = std::fopen(out.c_str(), "rb");
  if (!a || !b) return false;
  bool ok = true;
  std::vector<float> x(chunk / sizeof(float)), y(chunk / sizeof(float));
  const std::size_t chunks = bytes / chunk;
  for (std::size_t s = 0; s < 16 && ok; ++s) {
    const long off = static_cast<long>((chunks * s / 16) * chunk);
    std::fseek(a, off, SEEK_SET);
    std::fseek(b, off, SEEK_SET);
    ok = std::fread(x.data(), 1, chunk, a) == chunk && std::fread(y.data(), 1, chunk, b) == chunk;
    for (std::size_t i = 0; ok && i < x.size(); ++i) ok = y[i] == transform(x[i]);
  }
  std::fclose(a);
  std::fclose(b);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = std::size_t{256} << 20;
  std::string in = argc > 1 ? argv[1] : "/tmp/weft-pipeline-in.bin";
  const std::string out = argc > 2 ? argv[2] : in + ".out";
  if (argc <= 1 && !make_input(in, bytes)) {
    std::fprintf(stderr, "file_pipeline: cannot write %s\n", in.c_str());
    return 1;
  }
  double weft_s = 0;
  long long written = 0;
  bool on_gpu = false;
  {
    weft::runtime probe;  // which backend this machine gets
    on_gpu = std::string(probe.backend_name()) == "cuda";
  }
  {
    buffers buf(on_gpu, in, out);  // before the runtime: cudaFree would wait for its kernel
    {
      weft::runtime rt;
      const auto t0 = std::chrono::steady_clock::now();
      written = rt.block_on([] WEFT_HOST_DEVICE(const char* i, const char* o, char* b) { return pipeline(i, o, b); },
                            buf.paths, buf.paths + in.size() + 1, buf.data);
      weft_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("weft (%s): %lld bytes in %.3f s, %.2f GB/s\n", rt.backend_name(), written, weft_s,
                  written / weft_s / 1e9);
    }
  }
  if (written <= 0 || !output_matches(in, out, static_cast<std::size_t>(written))) {
    std::fprintf(stderr, "file_pipeline: FAILED (result %lld)\n", written);
    return 1;
  }
  std::printf("output checked against the host's transform\n");
#if WEFT_CUDA_COMPILE
  if (on_gpu) {
    const double host_s = host_driven_seconds(in.c_str(), (out + ".host").c_str());
    std::printf("host-driven (2 streams, double-buffered): %.3f s, %.2f GB/s; weft/host-driven speed: %.2fx\n", host_s,
                written / host_s / 1e9, host_s / weft_s);
    ::unlink((out + ".host").c_str());
  }
#endif
  if (argc <= 1) ::unlink(in.c_str());
  ::unlink(out.c_str());
  return 0;
}
