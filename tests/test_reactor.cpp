// The reactor alone (src/reactor.hpp), driven through its mailbox by this thread as the
// task side, over a memory_ops whose failures the test chooses: a ring allocation that
// fails in the constructor, task memory the host cannot touch (as GPU memory), no
// staging buffer, a failed copy. These paths only the cuda backend takes in a runtime;
// here they run on any machine. Host-only code, so plain C++.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <weft/detail/mailbox.hpp>

#include "io_support.hpp"
#include "reactor.hpp"

namespace {

namespace d = weft::detail;
using weft::errc;

// What the fake memory_ops is told and what it saw; owned by the test, so it outlives
// the reactor (which owns the fake).
struct memory_script {
  int fail_alloc_at = 0;                  // the k-th alloc_shared throws bad_alloc (1-based; 0: never)
  std::atomic<bool> give_staging{true};   // false: staging() has no buffer
  std::atomic<int> copy_error{0};         // nonzero: every copy to or from task memory fails so
  std::atomic<int> allocs{0}, live{0};    // alloc_shared calls; blocks not yet freed
  std::atomic<int> staging_asks{0};
  std::vector<char> task_memory = std::vector<char>(std::size_t{1} << 16);  // "GPU memory"
};

class scripted_memory_ops final : public weft::rt::memory_ops {
 public:
  explicit scripted_memory_ops(memory_script& s) : s_(s) {}
  void* alloc_shared(std::size_t bytes) override {
    if (++s_.allocs == s_.fail_alloc_at) throw std::bad_alloc();
    void* p = ::operator new(bytes, std::align_val_t{128});
    std::memset(p, 0, bytes);
    ++s_.live;
    return p;
  }
  void free_shared(void* p) noexcept override {
    --s_.live;
    ::operator delete(p, std::align_val_t{128});
  }
  bool host_accessible(const void* p) noexcept override { return !in_task_memory(p); }
  errc to_task(unsigned, void* dst, const void* src, std::size_t n) noexcept override { return copy(dst, src, n); }
  errc from_task(unsigned, void* dst, const void* src, std::size_t n) noexcept override { return copy(dst, src, n); }
  void* staging(unsigned, std::size_t bytes) noexcept override {
    ++s_.staging_asks;
    if (!s_.give_staging.load()) return nullptr;
    if (stage_.size() < bytes) stage_.resize(bytes);
    return stage_.data();
  }
  errc to_task_async(unsigned, void* dst, const void* src, std::size_t n) noexcept override { return copy(dst, src, n); }
  errc wait(unsigned) noexcept override { return errc{}; }

 private:
  bool in_task_memory(const void* p) const noexcept {
    const char* c = static_cast<const char*>(p);
    return c >= s_.task_memory.data() && c < s_.task_memory.data() + s_.task_memory.size();
  }
  errc copy(void* dst, const void* src, std::size_t n) noexcept {
    if (const int e = s_.copy_error.load(); e != 0) return static_cast<errc>(e);
    std::memcpy(dst, src, n);
    return errc{};
  }
  memory_script& s_;
  std::vector<char> stage_;  // touched by the reactor thread only
};

weft::rt::reactor_config one_thread(unsigned threads = 1) {
  weft::rt::reactor_config c;
  c.threads = threads;
  c.slots = 8;
  c.completions = 8;
  c.drain_here = false;  // this thread is the task side: it drains
  return c;
}

struct answer {
  errc error;
  std::uint64_t value;
};

// The task side of mailbox 0, one request at a time: posts it, then drains until its
// own completion is there and hands the slots back.
class reactor_client {
 public:
  explicit reactor_client(memory_script& s) : r_(one_thread(), std::make_unique<scripted_memory_ops>(s)) {
    r_.start();
    box_ = r_.host_link().boxes;
  }
  answer call(d::opcode op, std::array<std::uint64_t, d::request_args> args, const void* inline_src = nullptr,
              std::uint32_t inline_bytes = 0) {
    d::host_op o{};
    o.req.op = op;
    o.req.token = reinterpret_cast<std::uint64_t>(&o);
    o.req.inline_bytes = inline_bytes;
    for (unsigned i = 0; i < d::request_args; ++i) o.req.args[i] = args[i];
    o.inline_src = inline_src;
    d::mailbox_post_one(*box_, &o);
    const std::uint64_t first = next_;
    bool done = false, read_inline = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done && std::chrono::steady_clock::now() < deadline) {
      d::mailbox_drain_until_own(*box_, &next_, &o, 8, &done, &read_inline, [](d::task_header*) {});
      if (!done) std::this_thread::yield();
    }
    d::mailbox_hand_back_range(*box_, first, next_, read_inline);
    REQUIRE(done);  // else the reactor never answered
    return {o.error, o.value};
  }
  answer open(const std::string& path, int flags) {
    return call(d::opcode::open, {static_cast<std::uint64_t>(flags), 0644, reinterpret_cast<std::uint64_t>(path.c_str()),
                                  path.size()},
                path.c_str(), static_cast<std::uint32_t>(path.size()));
  }

 private:
  weft::rt::reactor r_;
  d::mailbox* box_ = nullptr;
  std::uint64_t next_ = 0;
};

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }
char pattern(std::size_t i) { return static_cast<char>('a' + i % 23); }

int connect_to(std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return s;
  if (s >= 0) ::close(s);
  return -1;
}

}  // namespace

TEST_CASE("the reactor's constructor frees every ring it allocated when a later allocation fails, and throws",
          "[io][fault]") {
  for (unsigned threads : {1u, 3u}) {
    const int per_thread = 4;  // the shared block, the request slots, completion headers and data
    const int total = per_thread * static_cast<int>(threads);
    for (int k = 1; k <= total; ++k) {
      memory_script s;
      s.fail_alloc_at = k;
      INFO("threads " << threads << ", allocation " << k << " fails");
      REQUIRE_THROWS_AS(weft::rt::reactor(one_thread(threads), std::make_unique<scripted_memory_ops>(s)),
                        std::bad_alloc);
      CHECK(s.allocs.load() == k);
      CHECK(s.live.load() == 0);
    }
    memory_script s;
    {
      weft::rt::reactor r(one_thread(threads), std::make_unique<scripted_memory_ops>(s));
      CHECK(s.live.load() == total);
    }
    CHECK(s.live.load() == 0);
  }
}

TEST_CASE("a recv into task memory the host cannot touch goes through the staging buffer; with none it fails with "
          "out_of_memory and leaves the bytes for the next recv",
          "[net][fault]") {
  memory_script s;
  reactor_client c(s);
  const answer l = c.call(d::opcode::listen, {0});
  REQUIRE(l.error == errc{});
  const std::uint64_t listener = l.value & 0xffffffffu;
  const int peer = connect_to(static_cast<std::uint16_t>(l.value >> 32));
  REQUIRE(peer >= 0);
  const answer a = c.call(d::opcode::accept, {listener});
  REQUIRE(a.error == errc{});
  const std::uint64_t conn = a.value;

  const std::size_t n = 3000;  // over a completion's 104 inline bytes: staged
  std::string sent(n, '\0');
  for (std::size_t i = 0; i < n; ++i) sent[i] = pattern(i);
  REQUIRE(::send(peer, sent.data(), n, 0) == static_cast<ssize_t>(n));
  char* dst = s.task_memory.data();

  s.give_staging = false;
  const answer refused = c.call(d::opcode::recv, {conn, addr(dst), n});
  CHECK(refused.error == errc::out_of_memory);
  CHECK(s.staging_asks.load() == 1);

  s.give_staging = true;
  std::size_t got = 0;
  for (int tries = 0; got < n && tries < 100; ++tries) {  // a recv may return part of what was sent
    const answer r = c.call(d::opcode::recv, {conn, addr(dst + got), n - got});
    REQUIRE(r.error == errc{});
    REQUIRE(r.value > 0);
    got += r.value;
  }
  CHECK(got == n);
  CHECK(std::string(dst, n) == sent);  // nothing lost by the refused recv, nothing twice

  s.copy_error = static_cast<int>(errc::device_fault);  // the copy to the task's memory fails
  REQUIRE(::send(peer, sent.data(), 200, 0) == 200);
  CHECK(c.call(d::opcode::recv, {conn, addr(dst), 200}).error == errc::device_fault);
  s.copy_error = 0;

  CHECK(c.call(d::opcode::net_close, {conn}).error == errc{});
  CHECK(c.call(d::opcode::net_close, {listener}).error == errc{});
  ::close(peer);
}

TEST_CASE("a file read or write of task memory the host cannot touch fails with out_of_memory without a staging "
          "buffer, and with a failed copy's error, leaving the file as it was",
          "[io][fault]") {
  const std::size_t n = 5000;
  std::string content(n, '\0');
  for (std::size_t i = 0; i < n; ++i) content[i] = pattern(i);
  weft_test::temp_file file(content);
  memory_script s;
  reactor_client c(s);
  const answer f = c.open(file.path, O_RDWR);
  REQUIRE(f.error == errc{});
  const std::uint64_t fd = f.value;
  char* buf = s.task_memory.data();

  s.give_staging = false;
  CHECK(c.call(d::opcode::read, {fd, addr(buf), n, 0}).error == errc::out_of_memory);
  CHECK(c.call(d::opcode::write, {fd, addr(buf), n, 0}).error == errc::out_of_memory);
  s.give_staging = true;

  const answer r = c.call(d::opcode::read, {fd, addr(buf), n, 0});
  CHECK(r.error == errc{});
  CHECK(r.value == n);
  CHECK(std::string(buf, n) == content);  // staged into "GPU memory"

  std::memset(buf, 'Z', n);
  s.copy_error = static_cast<int>(errc::device_fault);
  CHECK(c.call(d::opcode::write, {fd, addr(buf), n, 0}).error == errc::device_fault);
  CHECK(c.call(d::opcode::read, {fd, addr(buf), n, 0}).error == errc::device_fault);
  s.copy_error = 0;
  CHECK(file.read_all() == content);  // neither refused write nor the failed one wrote a byte

  const answer w = c.call(d::opcode::write, {fd, addr(buf), n, 0});
  CHECK(w.error == errc{});
  CHECK(w.value == n);
  CHECK(file.read_all() == std::string(n, 'Z'));
  CHECK(c.call(d::opcode::close, {fd}).error == errc{});
}
