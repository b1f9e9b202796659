// Host services from tasks through the reactor: host_call, files, print, host sleeps,
// backpressure, exactly-once completion and the faults. Backend-agnostic: compiled as
// CUDA in a cuda build and run on whichever backend WEFT_BACKEND names.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "io_support.hpp"
#include "shared_array.hpp"
#include "support.hpp"

using weft_test::code;
using weft_test::code_of;
using weft_test::register_test_fns;
using weft_test::shared_array;
using weft_test::shared_text;
using weft_test::temp_file;
using weft_test::twenty;

namespace {

// ---------------------------------------------------------------- host_call
struct calls_out {
  std::uint64_t sum3, sum6, after_throw;
  int missing, thrown, after_code;
};

WEFT_HOST_DEVICE weft::task<calls_out> host_call_root() {
  calls_out o{};
  auto a = co_await weft::host_call(1, 2u, 3u, 4u);
  o.sum3 = a ? *a : 0;
  auto b = co_await weft::host_call(1, 1, 2, 3, 4, 5, 6);
  o.sum6 = b ? *b : 0;
  auto c = co_await weft::host_call(99, 1);
  o.missing = code_of(c);
  auto d = co_await weft::host_call(2, 7);
  o.thrown = code_of(d);
  auto e = co_await weft::host_call(1, 40, 2);
  o.after_throw = e ? *e : 0;
  o.after_code = code_of(e);
  co_return o;
}

// ---------------------------------------------------------------- files
struct file_out {
  int open_missing, open_ok, write_big, write_small, read_big, read_short, read_eof, close_ok, close_again,
      read_closed, bad_null;
  std::uint64_t wrote_big, wrote_small, got_big, got_short, got_eof;
  int mismatches;
};

// Writes 300 bytes (by address) and 10 (inline), reads them back into the frame (GPU
// memory on the cuda backend: the staged and inline paths) and into `buf`.
WEFT_HOST_DEVICE weft::task<file_out> file_root(const char* path, const char* missing, unsigned char* buf) {
  file_out o{};
  o.open_missing = code_of(co_await weft::io::open(missing, O_RDONLY));
  auto f = co_await weft::io::open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  o.open_ok = code_of(f);
  if (!f) co_return o;
  auto w1 = co_await weft::io::write(*f, buf, 300, 0);
  o.write_big = code_of(w1);
  o.wrote_big = w1 ? *w1 : 0;
  auto w2 = co_await weft::io::write(*f, buf + 300, 10, 300);
  o.write_small = code_of(w2);
  o.wrote_small = w2 ? *w2 : 0;
  unsigned char local[310];
  auto r1 = co_await weft::io::read(*f, local, 310, 0);
  o.read_big = code_of(r1);
  o.got_big = r1 ? *r1 : 0;
  unsigned char tail[100];
  auto r2 = co_await weft::io::read(*f, tail, 100, 305);  // inline: only 5 bytes are left
  o.read_short = code_of(r2);
  o.got_short = r2 ? *r2 : 0;
  auto r3 = co_await weft::io::read(*f, buf + 1024, 200, 310);
  o.read_eof = code_of(r3);
  o.got_eof = r3 ? *r3 : 99;
  for (int i = 0; i < 310; ++i) o.mismatches += local[i] != buf[i];
  for (int i = 0; i < 5; ++i) o.mismatches += tail[i] != buf[305 + i];
  o.close_ok = code_of(co_await weft::io::close(*f));
  o.close_again = code_of(co_await weft::io::close(*f));
  o.read_closed = code_of(co_await weft::io::read(*f, local, 10, 0));
  o.bad_null = code_of(co_await weft::io::open(nullptr, O_RDONLY));
  co_return o;
}

struct print_out {
  int short_text, long_text, too_long, at_limit, null_text;
};
#define WEFT_TEST_SHORT_LINE "weft: a line printed by a task\n"
#define WEFT_TEST_LONG_LINE                                                                                         \
  "weft: a longer line printed by a task, more than the 184 bytes a request slot carries inline, so the reactor " \
  "reads it by address from the task's memory (staged through pinned memory on the GPU) and still prints it whole\n"
// Prints the two lines, then `huge` (over the limit: nothing printed), then `limit`
// (exactly 64 KiB: printed whole), then a null text.
WEFT_HOST_DEVICE weft::task<print_out> print_root(const char* huge, const char* limit) {
  print_out o{};
  o.short_text = code_of(co_await weft::io::print(WEFT_TEST_SHORT_LINE));
  o.long_text = code_of(co_await weft::io::print(WEFT_TEST_LONG_LINE));
  o.too_long = code_of(co_await weft::io::print(huge));
  o.at_limit = code_of(co_await weft::io::print(limit));
  o.null_text = code_of(co_await weft::io::print(nullptr));
  co_return o;
}

// Sends this process's standard output (descriptor 1) to a temporary file for one scope;
// text() ends the capture and returns what was written meanwhile.
class captured_stdout {
 public:
  captured_stdout() {
    std::fflush(stdout);
    char tmpl[] = "/tmp/weft-stdout-XXXXXX";
    fd_ = ::mkstemp(tmpl);
    if (fd_ < 0) throw std::runtime_error("mkstemp failed");
    ::unlink(tmpl);
    saved_ = ::dup(1);
    if (saved_ < 0 || ::dup2(fd_, 1) < 0) throw std::runtime_error("dup failed");
  }
  captured_stdout(const captured_stdout&) = delete;
  captured_stdout& operator=(const captured_stdout&) = delete;
  ~captured_stdout() {
    restore();
    ::close(fd_);
  }
  std::string text() {
    restore();
    std::string out;
    char b[4096];
    ssize_t n;
    for (off_t at = 0; (n = ::pread(fd_, b, sizeof b, at)) > 0; at += n) out.append(b, static_cast<std::size_t>(n));
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    ::dup2(saved_, 1);
    ::close(saved_);
    saved_ = -1;
  }
  int fd_ = -1;
  int saved_ = -1;
};

WEFT_HOST_DEVICE weft::task<std::uint64_t> host_sleep_root(std::uint64_t ns) {
  const std::uint64_t t0 = weft::now_ns();
  auto r = co_await weft::io::sleep_for(ns);
  if (!r) co_return 0;
  co_return weft::now_ns() - t0;
}

// ---------------------------------------------------------------- many requests
struct many_state {
  int done = 0;
  int wrong = 0;
  int errors = 0;
  int spawn_failed = 0;
  weft::event all_done;
};

WEFT_HOST_DEVICE weft::task<void> caller(int i, int calls, many_state* s, int total) {
  for (int k = 0; k < calls; ++k) {
    const std::uint64_t x = static_cast<std::uint64_t>(i) * 1000003u + static_cast<std::uint64_t>(k);
    auto r = co_await weft::host_call(3, x);
    if (!r) weft_test::atomic_add(s->errors, 1);
    else if (*r != 2 * x + 1) weft_test::atomic_add(s->wrong, 1);
  }
  if (weft_test::atomic_add(s->done, 1) + 1 == total) s->all_done.set();
}

struct many_out {
  int done, wrong, errors, spawn_failed;
};

// n tasks, each making `calls` host calls; every answer is checked against its question.
WEFT_HOST_DEVICE weft::task<many_out> many_callers_root(int n, int calls) {
  many_state s;
  for (int i = 0; i < n; ++i) {
    auto h = weft::spawn(caller(i, calls, &s, n));
    if (!h) {  // the pool or queue is full: count it as done, it never ran
      ++s.spawn_failed;
      if (weft_test::atomic_add(s.done, 1) + 1 == n) s.all_done.set();
    }
  }
  co_await s.all_done.wait();
  co_return many_out{s.done, s.wrong, s.errors, s.spawn_failed};
}

// ---------------------------------------------------------------- faults
WEFT_HOST_DEVICE weft::task<void> sleep_and_report(int* code_out, std::uint64_t ns) {
  auto r = co_await weft::io::sleep_for(ns);
  weft::detail::device_atomic<int>(*code_out).store(r ? 0 : static_cast<int>(r.error()), weft::detail::mo_release);
}
WEFT_HOST_DEVICE weft::task<int> spawn_sleepers(int n, int* codes, std::uint64_t ns) {
  for (int i = 0; i < n; ++i) (void)weft::spawn(sleep_and_report(&codes[i], ns));
  co_return 0;
}
WEFT_HOST_DEVICE weft::task<int> one_call(std::uint32_t id) { co_return code_of(co_await weft::host_call(id, 1)); }
// host_call(id, 1)'s value, or 1000 + its error code.
WEFT_HOST_DEVICE weft::task<std::uint64_t> call_value(std::uint32_t id) {
  auto r = co_await weft::host_call(id, 1);
  co_return r ? *r : 1000u + static_cast<std::uint64_t>(r.error());
}

// n tasks each call host function `id` once and store the answer's code in codes[i].
WEFT_HOST_DEVICE weft::task<void> call_and_report(std::uint32_t id, int* code_out) {
  const int c = code_of(co_await weft::host_call(id, 1));
  weft::detail::device_atomic<int>(*code_out).store(c, weft::detail::mo_release);
}
WEFT_HOST_DEVICE weft::task<int> spawn_callers(std::uint32_t id, int n, int* codes) {
  for (int i = 0; i < n; ++i) (void)weft::spawn(call_and_report(id, &codes[i]));
  co_return 0;
}

#if WEFT_CUDA_COMPILE
// Makes the device pass compile the roots above (block_on calls them from host code).
__global__ void io_roots_compile_for_device(const char* p, unsigned char* b, int n, int* c, std::uint64_t ns) {
  (void)host_call_root();
  (void)file_root(p, p, b);
  (void)print_root(p, p);
  (void)host_sleep_root(ns);
  (void)many_callers_root(n, n);
  (void)spawn_sleepers(n, c, ns);
  (void)one_call(1);
  (void)call_value(1);
  (void)spawn_callers(1, n, c);
}
#endif

}  // namespace

TEST_CASE("host_call runs the registered host function and returns its value", "[io]") {
  weft::runtime rt(weft_test::any_backend_config());
  register_test_fns(rt);
  const calls_out o = rt.block_on([] WEFT_HOST_DEVICE() { return host_call_root(); });
  REQUIRE(o.sum3 == 9);
  REQUIRE(o.sum6 == 21);
}

// A task alone in its warp waits for each answer in place on the GPU (device_io.hpp:
// await_in_place): the answers arrive with no wake, so the worker resumes the task
// about once for the whole loop, not once per call. A host function slower than the
// wait's bound (16 polls, ~20 us) makes the wait give up: the task parks and is woken.
WEFT_HOST_DEVICE weft::task<std::uint64_t> call_many(int n, std::uint32_t fn) {
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    auto r = co_await weft::host_call(fn, std::uint64_t(i), std::uint64_t(1));
    if (!r) co_return ~std::uint64_t{0};
    sum += *r;
  }
  co_return sum;
}

TEST_CASE("a task alone in its warp gets its host_call answers in place, without a resume per call", "[io]") {
  weft::runtime rt(weft_test::any_backend_config());
  register_test_fns(rt);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return call_many(1, 1); }) == 1);  // warm-up
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // idle workers publish their counts
  const auto before = rt.device() ? rt.device()->stats() : weft::exec::device_stats{};
  const int calls = 2000;
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return call_many(n, 1); }, calls) ==
          std::uint64_t(calls) * (calls + 1) / 2);  // (i + 1) summed
  if (rt.device() != nullptr) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto after = rt.device()->stats();
    INFO("resumes during " << calls << " calls: " << after.resumed - before.resumed);
    REQUIRE(after.resumed - before.resumed < calls / 10);  // parking would resume it once per call
  }
}

TEST_CASE("a host call slower than the in-place wait still answers its task", "[io]") {
  weft::runtime rt(weft_test::any_backend_config());
  rt.register_host_fn(4, [](std::span<const std::uint64_t> a) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // far past the in-place bound
    return a[0] + a[1];
  });
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n) { return call_many(n, 4); }, 20) == 20u * 21u / 2u);
}

TEST_CASE("register_host_fn replaces the function under an id, and refuses an empty one with invalid_argument, "
          "changing nothing",
          "[io][fault]") {
  weft::runtime rt(weft_test::any_backend_config());
  auto call = [&](std::uint32_t id) { return rt.block_on([] WEFT_HOST_DEVICE(std::uint32_t i) { return call_value(i); }, id); };
  rt.register_host_fn(5, [](std::span<const std::uint64_t> a) -> std::uint64_t { return 10 + a[0]; });
  REQUIRE(call(5) == 11);
  rt.register_host_fn(5, [](std::span<const std::uint64_t> a) -> std::uint64_t { return 20 + a[0]; });
  REQUIRE(call(5) == 21);  // the later function answers
  const auto refused = [&](std::uint32_t id, weft::host_fn fn) {
    try {
      rt.register_host_fn(id, std::move(fn));
    } catch (const weft::error& e) {
      return e.code() == weft::errc::invalid_argument;
    }
    return false;
  };
  CHECK(refused(5, weft::host_fn{}));
  CHECK(refused(5, static_cast<std::uint64_t (*)(std::span<const std::uint64_t>)>(nullptr)));  // empty too
  CHECK(call(5) == 21);  // still registered: the refusal replaced nothing
  CHECK(refused(6, weft::host_fn{}));
  CHECK(call(6) == 1000u + static_cast<std::uint64_t>(weft::errc::not_found));  // nor registered anything
}

TEST_CASE("host_call to an unregistered id gives not_found", "[io][fault]") {
  weft::runtime rt(weft_test::any_backend_config());
  register_test_fns(rt);
  const calls_out o = rt.block_on([] WEFT_HOST_DEVICE() { return host_call_root(); });
  REQUIRE(o.missing == code(weft::errc::not_found));
}

TEST_CASE("a host function that throws gives host_error and the reactor keeps serving", "[io][fault]") {
  weft::runtime rt(weft_test::any_backend_config());
  register_test_fns(rt);
  const calls_out o = rt.block_on([] WEFT_HOST_DEVICE() { return host_call_root(); });
  REQUIRE(o.thrown == code(weft::errc::host_error));
  REQUIRE(o.after_code == 0);
  REQUIRE(o.after_throw == 42);
  REQUIRE(rt.reactor_stats().handler_errors == 1);
}

TEST_CASE("a task writes, reads back and closes a file, and short reads, EOF and bad handles are reported", "[io]") {
  char tmpl[] = "/tmp/weft-io-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  ::close(fd);
  shared_text path(tmpl), missing(std::string(tmpl) + "-missing/none");
  shared_array<unsigned char> buf(2048);
  for (int i = 0; i < 310; ++i) buf[i] = static_cast<unsigned char>(i * 7 + 1);
  weft::runtime rt(weft_test::any_backend_config());
  const file_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, const char* m, unsigned char* b) { return file_root(p, m, b); },
      path.c_str(), missing.c_str(), buf.data());
  rt.shutdown();
  CHECK(o.open_missing == code(weft::errc::not_found));
  REQUIRE(o.open_ok == 0);
  CHECK(o.write_big == 0);
  CHECK(o.wrote_big == 300);
  CHECK(o.write_small == 0);
  CHECK(o.wrote_small == 10);
  CHECK(o.read_big == 0);
  CHECK(o.got_big == 310);
  CHECK(o.read_short == 0);
  CHECK(o.got_short == 5);
  CHECK(o.read_eof == 0);
  CHECK(o.got_eof == 0);
  CHECK(o.mismatches == 0);
  CHECK(o.close_ok == 0);
  CHECK(o.close_again == code(weft::errc::bad_handle));
  CHECK(o.read_closed == code(weft::errc::bad_handle));
  CHECK(o.bad_null == code(weft::errc::invalid_argument));
  // The bytes on disk are the ones written.
  FILE* f = std::fopen(tmpl, "rb");
  REQUIRE(f != nullptr);
  unsigned char disk[400];
  const std::size_t n = std::fread(disk, 1, sizeof disk, f);
  std::fclose(f);
  ::unlink(tmpl);
  REQUIRE(n == 310);
  REQUIRE(std::memcmp(disk, buf.data(), 310) == 0);
}

namespace {
// Creates `path` with io::open's default mode and closes it: 0, or the first error's code.
WEFT_HOST_DEVICE weft::task<int> create_with_default_mode(const char* path) {
  auto f = co_await weft::io::open(path, O_CREAT | O_WRONLY | O_TRUNC);
  if (!f) co_return code_of(f);
  auto c = co_await weft::io::close(*f);
  co_return c ? 0 : code_of(c);
}
}  // namespace

TEST_CASE("io::open creates a file with mode 0644 (less the umask) when no mode is given", "[io]") {
  char dir_tmpl[] = "/tmp/weft-io-mode-XXXXXX";
  REQUIRE(::mkdtemp(dir_tmpl) != nullptr);
  const std::string made = std::string(dir_tmpl) + "/new";
  shared_text path(made);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  weft::runtime rt(weft_test::any_backend_config());
  const int rc = rt.block_on([] WEFT_HOST_DEVICE(const char* p) { return create_with_default_mode(p); }, path.c_str());
  rt.shutdown();
  struct stat st {};
  const int got = ::stat(made.c_str(), &st);
  ::unlink(made.c_str());
  ::rmdir(dir_tmpl);
  REQUIRE(rc == 0);
  REQUIRE(got == 0);
  CHECK((st.st_mode & 0777) == (0644 & ~mask));
}

TEST_CASE("io::print writes a task's text to standard output whole and in order, text over 64 KiB gives too_large "
          "and prints nothing, and a null text gives invalid_argument",
          "[io][fault]") {
  shared_text huge(std::string(70000, 'x'));
  std::string at_limit(weft::detail::max_print_bytes - 1, 'y');
  at_limit += '\n';  // 64 KiB exactly: the largest text print takes
  shared_text limit(at_limit);
  weft::runtime rt(weft_test::any_backend_config());
  print_out o{};
  std::string printed;
  {
    captured_stdout out;
    o = rt.block_on([] WEFT_HOST_DEVICE(const char* h, const char* l) { return print_root(h, l); }, huge.c_str(),
                    limit.c_str());
    printed = out.text();  // print answers after its fflush: every byte is in the file now
  }
  REQUIRE(o.short_text == 0);
  REQUIRE(o.long_text == 0);
  REQUIRE(o.too_long == code(weft::errc::too_large));
  REQUIRE(o.at_limit == 0);
  REQUIRE(o.null_text == code(weft::errc::invalid_argument));
  const std::string want = std::string(WEFT_TEST_SHORT_LINE WEFT_TEST_LONG_LINE) + at_limit;
  INFO("printed, its first 300 bytes: " << printed.substr(0, 300));
  CHECK(printed.size() == want.size());
  const bool same = printed == want;  // (not CHECK(printed == want): 64 KiB in the report)
  CHECK(same);
}

TEST_CASE("io::sleep_for parks the task for at least the time asked on the host's clock", "[io]") {
  weft::runtime rt(weft_test::any_backend_config());
  const std::uint64_t ms = 1'000'000;
  const std::uint64_t slept = rt.block_on([] WEFT_HOST_DEVICE(std::uint64_t ns) { return host_sleep_root(ns); }, 20 * ms);
  REQUIRE(slept >= 19 * ms);  // the task's clock may be the GPU's: allow its 1 us grain
  REQUIRE(slept < 2000 * ms);
}

TEST_CASE("every host call from many tasks through tiny rings gets its own answer exactly once", "[io][stress]") {
  weft::config c = weft_test::any_backend_config();
  c.mailbox_slots = 4;  // tiny rings: claims race, the rings fill, requests wait for room
  c.reactor_threads = 2;
  weft::runtime rt(c);
  std::atomic<std::uint64_t> served{0};
  rt.register_host_fn(3, [&served](std::span<const std::uint64_t> a) {
    const std::uint64_t n = served.fetch_add(1, std::memory_order_relaxed);
    thread_local std::minstd_rand rng(static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id())));
    if (rng() % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));  // random delays
    (void)n;
    return 2 * a[0] + 1;
  });
  const int tasks = 1000, calls = 100;  // 100k requests
  const many_out o = rt.block_on([] WEFT_HOST_DEVICE(int n, int k) { return many_callers_root(n, k); }, tasks, calls);
  REQUIRE(o.spawn_failed == 0);
  REQUIRE(o.done == tasks);
  REQUIRE(o.errors == 0);
  REQUIRE(o.wrong == 0);
  REQUIRE(served.load() == std::uint64_t{tasks} * calls);  // each request served once
  const weft::io_stats s = rt.reactor_stats();
  REQUIRE(s.requests == std::uint64_t{tasks} * calls);
  REQUIRE(s.completions == s.requests);
}

TEST_CASE("a burst of a million requests from a million tasks completes with bounded reactor memory",
          "[io][stress]") {
  weft::config c = weft_test::any_backend_config();
  c.mailbox_slots = 256;
  c.frame_pool_bytes = std::size_t{1} << 30;
  weft::runtime rt(c);
  rt.register_host_fn(3, [](std::span<const std::uint64_t> a) { return 2 * a[0] + 1; });
  const int tasks = 1'000'000;
  const many_out o = rt.block_on([] WEFT_HOST_DEVICE(int n, int k) { return many_callers_root(n, k); }, tasks, 1);
  REQUIRE(o.spawn_failed == 0);
  REQUIRE(o.errors == 0);
  REQUIRE(o.wrong == 0);
  const weft::io_stats s = rt.reactor_stats();
  REQUIRE(s.requests == std::uint64_t(tasks));
  // Requests beyond the rings waited in their tasks' frames; the reactor's own queue of
  // answers never grew past one completion ring's worth per thread.
  REQUIRE(s.max_queued_completions <= c.mailbox_slots);
}

TEST_CASE("runtime shutdown with requests in flight completes every waiting task with shutting_down",
          "[io][fault]") {
  const int n = 64;
  shared_array<int> codes(n);
  for (int i = 0; i < n; ++i) codes[i] = -1;
  {
    weft::runtime rt(weft_test::any_backend_config());
    const std::uint64_t hour = 3600ull * 1'000'000'000ull;
    rt.block_on([] WEFT_HOST_DEVICE(int k, int* cs, std::uint64_t ns) { return spawn_sleepers(k, cs, ns); }, n,
                codes.data(), hour);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rt.reactor_stats().deferred < std::uint64_t(n) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(rt.reactor_stats().deferred == std::uint64_t(n));
    rt.shutdown();
  }
  for (int i = 0; i < n; ++i) REQUIRE(codes[i] == code(weft::errc::shutting_down));
}

TEST_CASE("runtime shutdown answers requests still waiting for ring space with shutting_down", "[io][fault]") {
  const int n = 64;
  shared_array<int> codes(n);
  for (int i = 0; i < n; ++i) codes[i] = -1;
  std::atomic<int> entered{0};
  std::atomic<bool> release{false};
  {
    weft::config c = weft_test::any_backend_config();
    c.reactor_threads = 1;
    c.mailbox_slots = 2;  // one request in the handler, one in the ring: the rest wait on the task side
    weft::runtime rt(c);
    rt.register_host_fn(5, [&](std::span<const std::uint64_t>) -> std::uint64_t {
      entered.fetch_add(1);
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return 7;
    });
    rt.block_on([] WEFT_HOST_DEVICE(int k, int* cs) { return spawn_callers(5, k, cs); }, n, codes.data());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (entered.load() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(entered.load() == 1);
    std::thread stopper([&rt] { rt.shutdown(); });  // refuses from here on, then waits for the task side
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release.store(true);
    stopper.join();
  }
  int served = 0, refused = 0;
  for (int i = 0; i < n; ++i) {
    const int v = weft::detail::device_atomic<int>(codes[i]).load(weft::detail::mo_acquire);
    served += v == 0;
    refused += v == code(weft::errc::shutting_down);
  }
  REQUIRE(served >= 1);               // the one in the handler got its answer
  REQUIRE(served + refused == n);     // and every other task an error: none destroyed while waiting
  REQUIRE(entered.load() == served);  // no request reached the handler after the refusals began
}

TEST_CASE("a stopped reactor thread fails its waiting and new requests with host_unavailable", "[io][fault]") {
  const int n = 16;
  shared_array<int> codes(n);
  for (int i = 0; i < n; ++i) codes[i] = -1;
  weft::config c = weft_test::any_backend_config();
  c.reactor_threads = 1;
  weft::runtime rt(c);
  register_test_fns(rt);
  rt.block_on([] WEFT_HOST_DEVICE(int k, int* cs, std::uint64_t ns) { return spawn_sleepers(k, cs, ns); }, n,
              codes.data(), 3600ull * 1'000'000'000ull);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (rt.reactor_stats().deferred < std::uint64_t(n) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  rt.stop_reactor_thread(0);
  const int later = rt.block_on([] WEFT_HOST_DEVICE() { return one_call(1); });
  REQUIRE(later == code(weft::errc::host_unavailable));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto all_failed = [&] {
    for (int i = 0; i < n; ++i)
      if (weft::detail::device_atomic<int>(codes[i]).load(weft::detail::mo_acquire) != code(weft::errc::host_unavailable))
        return false;
    return true;
  };
  while (!all_failed() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(all_failed());
}

TEST_CASE("requests from a task with no runtime give backend_unavailable", "[io][fault]") {
  weft::result<int> r = weft::run_inline(one_call(1));
  REQUIRE(r.has_value());
  REQUIRE(*r == code(weft::errc::backend_unavailable));
}

// host_call with more than six arguments, or with one that is not integral, does not
// compile (static_asserts in weft::host_call): no test can pass a bad shape through the
// public API. The reactor's own check of the shape is exercised below with a request
// built by hand ("a malformed request ...").
