// The reactor's answers to bad input from tasks: paths over the limit or empty, null and
// zero-length buffers, reads past the end, bad descriptors and malformed requests. Each
// test ends with a call that succeeds: the reactor keeps serving. Backend-agnostic, like
// test_io.cpp.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <cstring>
#include <string>

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

// ---------------------------------------------------------------- argument errors
struct paths_out {
  int too_long, empty, ok, close_ok;
  int fd;
};

// io::open with a path one byte over the limit, an empty path, then the same file by a
// path exactly at the limit (the following call succeeds: the reactor still serves).
WEFT_HOST_DEVICE weft::task<paths_out> open_paths_root(const char* too_long, const char* empty, const char* at_limit) {
  paths_out o{};
  o.too_long = code_of(co_await weft::io::open(too_long, O_RDONLY));
  o.empty = code_of(co_await weft::io::open(empty, O_RDONLY));
  auto f = co_await weft::io::open(at_limit, O_RDONLY);
  o.ok = code_of(f);
  o.fd = f ? f->fd : -1;
  if (f) o.close_ok = code_of(co_await weft::io::close(*f));
  co_return o;
}

struct null_buf_out {
  int read_null_small, read_null_big, write_null_small, write_null_big;
  int read_zero_null, write_zero_null, read_zero, write_zero;
  std::uint64_t got_zero_null, put_zero_null, got_zero, put_zero;
  int sentinel_changed;
  int read_after;
  std::uint64_t got_after;
  int mismatches;
  int close_ok;
};

// Null buffers with a nonzero length (inline and by-address sizes), then zero-length
// transfers (null and real buffers), then a real read of the file's 20 bytes.
WEFT_HOST_DEVICE weft::task<null_buf_out> null_buffer_root(const char* path, const unsigned char* want) {
  null_buf_out o{};
  auto f = co_await weft::io::open(path, O_RDWR);
  if (!f) {
    o.read_after = code_of(f);
    co_return o;
  }
  o.read_null_small = code_of(co_await weft::io::read(*f, nullptr, 10, 0));
  o.read_null_big = code_of(co_await weft::io::read(*f, nullptr, 300, 0));
  o.write_null_small = code_of(co_await weft::io::write(*f, nullptr, 10, 0));
  o.write_null_big = code_of(co_await weft::io::write(*f, nullptr, 300, 0));
  auto r0 = co_await weft::io::read(*f, nullptr, 0, 0);
  o.read_zero_null = code_of(r0);
  o.got_zero_null = r0 ? *r0 : 99;
  auto w0 = co_await weft::io::write(*f, nullptr, 0, 0);
  o.write_zero_null = code_of(w0);
  o.put_zero_null = w0 ? *w0 : 99;
  unsigned char local[32];
  for (int i = 0; i < 32; ++i) local[i] = 0xAB;
  auto r1 = co_await weft::io::read(*f, local, 0, 0);
  o.read_zero = code_of(r1);
  o.got_zero = r1 ? *r1 : 99;
  auto w1 = co_await weft::io::write(*f, local, 0, 5);
  o.write_zero = code_of(w1);
  o.put_zero = w1 ? *w1 : 99;
  for (int i = 0; i < 32; ++i) o.sentinel_changed += local[i] != 0xAB;
  auto r2 = co_await weft::io::read(*f, local, 32, 0);
  o.read_after = code_of(r2);
  o.got_after = r2 ? *r2 : 0;
  for (int i = 0; i < 20; ++i) o.mismatches += local[i] != want[i];
  o.close_ok = code_of(co_await weft::io::close(*f));
  co_return o;
}

struct past_eof_out {
  int small_code, big_code, shared_code;
  std::uint64_t small_got, big_got, shared_got;
  int untouched_wrong;
  int read_after;
  std::uint64_t got_after;
  int mismatches;
};

// Reads at offsets past the end of a 20-byte file: inline size, by-address size into the
// frame (staged on the GPU) and into shared memory; then a read that finds the bytes.
WEFT_HOST_DEVICE weft::task<past_eof_out> past_eof_root(const char* path, unsigned char* shared,
                                                        const unsigned char* want) {
  past_eof_out o{};
  auto f = co_await weft::io::open(path, O_RDONLY);
  if (!f) {
    o.read_after = code_of(f);
    co_return o;
  }
  unsigned char local[300];
  for (int i = 0; i < 300; ++i) local[i] = 0xAB;
  auto a = co_await weft::io::read(*f, local, 10, 1000);
  o.small_code = code_of(a);
  o.small_got = a ? *a : 99;
  auto b = co_await weft::io::read(*f, local, 300, std::uint64_t{1} << 40);
  o.big_code = code_of(b);
  o.big_got = b ? *b : 99;
  auto c = co_await weft::io::read(*f, shared, 300, 21);
  o.shared_code = code_of(c);
  o.shared_got = c ? *c : 99;
  for (int i = 0; i < 300; ++i) o.untouched_wrong += (local[i] != 0xAB) + (shared[i] != 0xAB);
  auto d = co_await weft::io::read(*f, local, 300, 0);
  o.read_after = code_of(d);
  o.got_after = d ? *d : 0;
  for (int i = 0; i < 20; ++i) o.mismatches += local[i] != want[i];
  (void)co_await weft::io::close(*f);
  co_return o;
}

struct handles_out {
  int write_closed, write_closed_big, read_stdin, write_stdout, read_default, close_stdout;
  int write_after;
  std::uint64_t put_after;
};

// Writes to a file after closing it, and uses descriptors the reactor never opened
// (stdin, stdout, the default -1); then writes to a file the reactor did open.
WEFT_HOST_DEVICE weft::task<handles_out> handles_root(const char* path, const unsigned char* data) {
  handles_out o{};
  auto f = co_await weft::io::open(path, O_WRONLY);
  if (!f) {
    o.write_after = code_of(f);
    co_return o;
  }
  const weft::io::file closed = *f;
  (void)co_await weft::io::close(closed);
  o.write_closed = code_of(co_await weft::io::write(closed, data, 10, 0));
  o.write_closed_big = code_of(co_await weft::io::write(closed, data, 300, 0));
  unsigned char local[16];
  o.read_stdin = code_of(co_await weft::io::read(weft::io::file{0}, local, sizeof local, 0));
  o.write_stdout = code_of(co_await weft::io::write(weft::io::file{1}, data, 10, 0));
  o.read_default = code_of(co_await weft::io::read(weft::io::file{}, local, sizeof local, 0));
  o.close_stdout = code_of(co_await weft::io::close(weft::io::file{1}));
  auto g = co_await weft::io::open(path, O_WRONLY);
  if (!g) {
    o.write_after = code_of(g);
    co_return o;
  }
  auto w = co_await weft::io::write(*g, data, 10, 0);
  o.write_after = code_of(w);
  o.put_after = w ? *w : 0;
  (void)co_await weft::io::close(*g);
  co_return o;
}

// ---------------------------------------------------------------- malformed requests
// The public API cannot build these: host_call's static_asserts refuse more than six
// arguments or non-integral ones at compile time, io::open refuses long paths before
// posting, and every opcode it posts is one the reactor knows. They are built here with
// the detail awaiter, as a corrupted or foreign request would arrive, to show that the
// reactor checks them again and answers instead of crashing or hanging.
using raw_u64 = weft::detail::host_request_awaiter<std::uint64_t, weft::detail::as_u64>;

struct malformed_out {
  int unknown_op, unknown_op_max, unknown_op_wide, argc7, argc6_no_inline, open_long, after_code;
  std::uint64_t after;
};

WEFT_HOST_DEVICE weft::task<malformed_out> malformed_root(const char* path) {
  malformed_out o{};
  o.unknown_op = code_of(co_await raw_u64(static_cast<weft::detail::opcode>(13), 1, 2, 3));
  o.unknown_op_max = code_of(co_await raw_u64(static_cast<weft::detail::opcode>(0xffffffffu)));
  // Wider than a slot's 16-bit opcode field, with host_call's number in its low bits:
  // it must not arrive as a host_call.
  o.unknown_op_wide = code_of(co_await raw_u64(static_cast<weft::detail::opcode>(0x10001u), 1, 5));
  // host_call: args[0] = id | argc << 32 (weft::host_call).
  o.argc7 = code_of(co_await raw_u64(weft::detail::opcode::host_call, 1 | (std::uint64_t{7} << 32), 1, 2, 3, 4, 5));
  o.argc6_no_inline =
      code_of(co_await raw_u64(weft::detail::opcode::host_call, 1 | (std::uint64_t{6} << 32), 1, 2, 3, 4, 5));
  // open: args = flags, mode, path address, path length; a length at the limit.
  o.open_long = code_of(co_await raw_u64(weft::detail::opcode::open, O_RDONLY, 0,
                                         reinterpret_cast<std::uint64_t>(path), weft::detail::max_path_bytes));
  auto r = co_await weft::host_call(1, 40, 2);
  o.after_code = code_of(r);
  o.after = r ? *r : 0;
  co_return o;
}

// ---------------------------------------------------------------- files that are not files
struct fifo_out {
  int read_fifo, write_fifo, after;
  int fd;
};

// A FIFO opened for reading and for writing, with nobody at its other end (either open
// would wait for one), then a plain file.
WEFT_HOST_DEVICE weft::task<fifo_out> fifo_root(const char* fifo, const char* plain) {
  fifo_out o{};
  o.read_fifo = code_of(co_await weft::io::open(fifo, O_RDONLY));
  o.write_fifo = code_of(co_await weft::io::open(fifo, O_WRONLY));
  auto f = co_await weft::io::open(plain, O_RDONLY);
  o.after = code_of(f);
  o.fd = f ? f->fd : -1;  // left open: the test looks at its flags, shutdown closes it
  co_return o;
}

struct short_write_out {
  int first, second;
  std::uint64_t put;
};

// 1,000 bytes written 500 bytes before a 4,096-byte file size limit, then 1,000 at it.
WEFT_HOST_DEVICE weft::task<short_write_out> short_write_root(const char* path, const unsigned char* data) {
  short_write_out o{};
  auto f = co_await weft::io::open(path, O_RDWR);
  if (!f) {
    o.first = code_of(f);
    co_return o;
  }
  auto w = co_await weft::io::write(*f, data, 1000, 4096 - 500);
  o.first = code_of(w);
  o.put = w ? *w : 0;
  o.second = code_of(co_await weft::io::write(*f, data, 1000, 4096));
  (void)co_await weft::io::close(*f);
  co_return o;
}

struct short_read_out {
  int first, second;
  std::uint64_t got;
};

// Reads 2 pages of this process's memory through /proc/self/mem at `at`, whose second
// page cannot be read (an empty file's page, past its end): the kernel copies the first
// page and stops (a short read); a read of the second page alone then fails (EIO).
WEFT_HOST_DEVICE weft::task<short_read_out> short_read_root(const char* path, unsigned char* into,
                                                            std::uint64_t at, std::uint64_t page) {
  short_read_out o{};
  auto f = co_await weft::io::open(path, O_RDONLY);
  if (!f) {
    o.first = code_of(f);
    co_return o;
  }
  auto r = co_await weft::io::read(*f, into, 2 * page, at);
  o.first = code_of(r);
  o.got = r ? *r : 0;
  o.second = code_of(co_await weft::io::read(*f, into, page, at + page));
  (void)co_await weft::io::close(*f);
  co_return o;
}

#if WEFT_CUDA_COMPILE
// Makes the device pass compile the roots above (block_on calls them from host code).
__global__ void io_error_roots_compile_for_device(const char* p, unsigned char* b) {
  (void)open_paths_root(p, p, p);
  (void)null_buffer_root(p, b);
  (void)past_eof_root(p, b, b);
  (void)handles_root(p, b);
  (void)malformed_root(p);
  (void)fifo_root(p, p);
  (void)short_write_root(p, b);
  (void)short_read_root(p, b, 0, 0);
}
#endif

}  // namespace

TEST_CASE("io::open gives too_large for a path of 4096 bytes and invalid_argument for an empty one but opens a "
          "4095-byte path", "[io][fault]") {
  temp_file file(twenty);
  REQUIRE(file.path.rfind("/tmp/", 0) == 0);
  // Extra slashes after /tmp lengthen the path without changing the file it names.
  std::string at_limit = file.path;
  at_limit.insert(4, weft::detail::max_path_bytes - 1 - at_limit.size(), '/');
  REQUIRE(at_limit.size() == 4095);
  std::string over = at_limit;
  over.insert(4, 1, '/');
  REQUIRE(over.size() == 4096);
  shared_text too_long(over), empty(""), ok(at_limit);
  weft::runtime rt(weft_test::any_backend_config());
  const paths_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* t, const char* e, const char* k) { return open_paths_root(t, e, k); },
      too_long.c_str(), empty.c_str(), ok.c_str());
  CHECK(o.too_long == code(weft::errc::too_large));
  CHECK(o.empty == code(weft::errc::invalid_argument));
  CHECK(o.ok == 0);  // the reactor serves on after the refusals
  CHECK(o.fd >= 0);
  CHECK(o.close_ok == 0);
}

TEST_CASE("io::read and io::write with a null buffer and a nonzero length give invalid_argument, and zero-length "
          "transfers give 0 bytes and no error", "[io][fault]") {
  temp_file file(twenty);
  shared_text path(file.path), want(twenty);
  weft::runtime rt(weft_test::any_backend_config());
  const null_buf_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, const char* w) {
        return null_buffer_root(p, reinterpret_cast<const unsigned char*>(w));
      },
      path.c_str(), want.c_str());
  rt.shutdown();
  CHECK(o.read_null_small == code(weft::errc::invalid_argument));
  CHECK(o.read_null_big == code(weft::errc::invalid_argument));
  CHECK(o.write_null_small == code(weft::errc::invalid_argument));
  CHECK(o.write_null_big == code(weft::errc::invalid_argument));
  CHECK(o.read_zero_null == 0);
  CHECK(o.got_zero_null == 0);
  CHECK(o.write_zero_null == 0);
  CHECK(o.put_zero_null == 0);
  CHECK(o.read_zero == 0);
  CHECK(o.got_zero == 0);
  CHECK(o.write_zero == 0);
  CHECK(o.put_zero == 0);
  CHECK(o.sentinel_changed == 0);  // a zero-length read writes nothing into the buffer
  CHECK(o.read_after == 0);        // then a real read: the reactor serves on
  CHECK(o.got_after == 20);
  CHECK(o.mismatches == 0);
  CHECK(o.close_ok == 0);
  CHECK(file.read_all() == twenty);  // nothing was written
}

TEST_CASE("io::read at an offset past the end of the file gives 0 bytes and leaves the buffer alone", "[io]") {
  temp_file file(twenty);
  shared_text path(file.path), want(twenty);
  shared_array<unsigned char> buf(300);
  for (int i = 0; i < 300; ++i) buf[i] = 0xAB;
  weft::runtime rt(weft_test::any_backend_config());
  const past_eof_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, unsigned char* b, const char* w) {
        return past_eof_root(p, b, reinterpret_cast<const unsigned char*>(w));
      },
      path.c_str(), buf.data(), want.c_str());
  rt.shutdown();
  CHECK(o.small_code == 0);
  CHECK(o.small_got == 0);
  CHECK(o.big_code == 0);
  CHECK(o.big_got == 0);
  CHECK(o.shared_code == 0);
  CHECK(o.shared_got == 0);
  CHECK(o.untouched_wrong == 0);
  CHECK(o.read_after == 0);
  CHECK(o.got_after == 20);
  CHECK(o.mismatches == 0);
}

TEST_CASE("io::write to a closed file or any call on a descriptor the reactor did not open gives bad_handle",
          "[io][fault]") {
  temp_file file(twenty);
  shared_text path(file.path), data("ABCDEFGHIJ" + std::string(290, '.'));  // 300 bytes
  weft::runtime rt(weft_test::any_backend_config());
  const handles_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, const char* d) {
        return handles_root(p, reinterpret_cast<const unsigned char*>(d));
      },
      path.c_str(), data.c_str());
  rt.shutdown();
  CHECK(o.write_closed == code(weft::errc::bad_handle));
  CHECK(o.write_closed_big == code(weft::errc::bad_handle));
  CHECK(o.read_stdin == code(weft::errc::bad_handle));
  CHECK(o.write_stdout == code(weft::errc::bad_handle));
  CHECK(o.read_default == code(weft::errc::bad_handle));
  CHECK(o.close_stdout == code(weft::errc::bad_handle));
  CHECK(o.write_after == 0);  // a file opened again is written: the reactor serves on
  CHECK(o.put_after == 10);
  CHECK(file.read_all() == "ABCDEFGHIJabcdefghij");
}

TEST_CASE("a malformed request (an unknown opcode or host_call of 7 arguments or a 6th without its bytes or open of "
          "a 4096-byte path) gives an error and the reactor keeps serving", "[io][fault]") {
  shared_text path(std::string(weft::detail::max_path_bytes, 'x'));  // as long as the request claims
  weft::runtime rt(weft_test::any_backend_config());
  register_test_fns(rt);
  const malformed_out o = rt.block_on([] WEFT_HOST_DEVICE(const char* p) { return malformed_root(p); }, path.c_str());
  CHECK(o.unknown_op == code(weft::errc::invalid_argument));
  CHECK(o.unknown_op_max == code(weft::errc::invalid_argument));
  CHECK(o.unknown_op_wide == code(weft::errc::invalid_argument));
  CHECK(o.argc7 == code(weft::errc::invalid_argument));
  CHECK(o.argc6_no_inline == code(weft::errc::invalid_argument));
  CHECK(o.open_long == code(weft::errc::too_large));
  CHECK(o.after_code == 0);
  CHECK(o.after == 42);
  CHECK(rt.reactor_stats().handler_errors == 0);
}

TEST_CASE("io::open of a FIFO, for reading or writing with nobody at its other end, gives invalid_argument at once "
          "and a file opened after it is a blocking descriptor",
          "[io][fault]") {
  temp_file file(twenty);
  const std::string fifo = file.path + ".fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  shared_text fifo_path(fifo), plain(file.path);
  weft::runtime rt(weft_test::any_backend_config());
  const fifo_out o = rt.block_on([] WEFT_HOST_DEVICE(const char* f, const char* p) { return fifo_root(f, p); },
                                 fifo_path.c_str(), plain.c_str());
  ::unlink(fifo.c_str());
  CHECK(o.read_fifo == code(weft::errc::invalid_argument));
  CHECK(o.write_fifo == code(weft::errc::invalid_argument));
  CHECK(o.after == 0);
  REQUIRE(o.fd >= 0);
  const int fl = ::fcntl(o.fd, F_GETFL);  // the reactor's descriptor, in this process
  CHECK(fl != -1);
  CHECK((fl & O_NONBLOCK) == 0);  // opened non-blocking, then made blocking again
}

TEST_CASE("io::write stopped by a system error after some bytes returns those bytes, and the next write gets the "
          "error",
          "[io][fault]") {
  temp_file file("");
  shared_text path(file.path);
  shared_array<unsigned char> data(1000);
  for (int i = 0; i < 1000; ++i) data[i] = static_cast<unsigned char>('a' + i % 26);
  weft::runtime rt(weft_test::any_backend_config());
  // A file size limit for this process (the reactor thread's writes), put back after;
  // a write past it fails with EFBIG instead of raising SIGXFSZ.
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  const rlimit lim{4096, old.rlim_max};
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  const short_write_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, const unsigned char* d) { return short_write_root(p, d); }, path.c_str(),
      data.data());
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  rt.shutdown();
  CHECK(o.first == 0);
  CHECK(o.put == 500);  // the bytes that landed, not an error that hides them
  CHECK(o.second == code(weft::errc::io_error));
  const std::string back = file.read_all();
  REQUIRE(back.size() == 4096);
  CHECK(back.substr(4096 - 500) == std::string(reinterpret_cast<const char*>(data.data()), 500));
}

TEST_CASE("io::read stopped by a system error after some bytes returns those bytes, and the next read gets the error",
          "[io][fault]") {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  shared_text path("/proc/self/mem");
  shared_array<unsigned char> into(2 * page);
  weft::runtime rt(weft_test::any_backend_config());
  void* m = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  struct unmap_at_end {  // also when a REQUIRE below, or block_on, throws
    void* p;
    std::size_t n;
    ~unmap_at_end() { ::munmap(p, n); }
  } unmap{m, 2 * page};
  auto* bytes = static_cast<unsigned char*>(m);
  for (std::uint64_t i = 0; i < page; ++i) bytes[i] = static_cast<unsigned char>('a' + i % 26);
  // The read's second page: an empty file's page, past its end, so a read of it through
  // /proc/self/mem fails with EIO. A mapping, not a hole: an unmapped page was taken
  // again by the runtime's own mappings on a GPU machine, and the read went on into them
  // (fortieth session's version of this test, which first ran on a GPU in the forty-first).
  const int empty = ::memfd_create("weft-test-hole", 0);
  REQUIRE(empty >= 0);
  void* hole = ::mmap(bytes + page, page, PROT_READ, MAP_SHARED | MAP_FIXED, empty, 0);
  ::close(empty);  // the mapping keeps the file
  REQUIRE(hole == bytes + page);
  const short_read_out o = rt.block_on(
      [] WEFT_HOST_DEVICE(const char* p, unsigned char* b, std::uint64_t at, std::uint64_t pg) {
        return short_read_root(p, b, at, pg);
      },
      path.c_str(), into.data(), static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(bytes)), page);
  rt.shutdown();
  REQUIRE(o.first == 0);
  CHECK(o.got == page);  // the bytes that came, not an error that hides them
  CHECK(o.second == code(weft::errc::io_error));
  CHECK(std::memcmp(into.data(), "abcdefghijklmnopqrstuvwxyz", 26) == 0);
  CHECK(into[page - 1] == static_cast<unsigned char>('a' + (page - 1) % 26));
}
