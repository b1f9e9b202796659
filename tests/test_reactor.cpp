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
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <weft/detail/mailbox.hpp>

#include "io_support.hpp"
#include "reactor.hpp"
#include "support.hpp"

namespace {

namespace d = weft::detail;
using weft::errc;

// What the fake memory_ops is told and what it saw; owned by the test, so it outlives
// the reactor (which owns the fake).
struct memory_script {
  int fail_alloc_at = 0;                  // the k-th alloc_shared throws bad_alloc (1-based; 0: never)
  std::atomic<bool> give_staging{true};   // false: staging() has no buffer
  std::atomic<int> copy_error{0};         // nonzero: every copy to or from task memory fails so
  std::atomic<int> wait_error{0};         // nonzero: wait() drops the copies it would end and fails so
  std::atomic<int> most_in_flight{0};     // the most asynchronous copies that one wait() ended
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
  // As on a CUDA stream: a synchronous copy runs after the asynchronous ones before it.
  errc to_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    if (const errc e = to_task_async(thread, dst, src, n); e != errc{}) return e;
    return wait(thread);
  }
  errc from_task(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    if (const errc e = wait(thread); e != errc{}) return e;
    return copy(dst, src, n);
  }
  void* staging(unsigned, std::size_t bytes) noexcept override {
    ++s_.staging_asks;
    if (!s_.give_staging.load()) return nullptr;
    if (stage_.size() < bytes) stage_.resize(bytes);
    return stage_.data();
  }
  // Asynchronous for real: the bytes are read from src only in wait(), so a source
  // that the reactor overwrites before it waits shows up as wrong data.
  errc to_task_async(unsigned, void* dst, const void* src, std::size_t n) noexcept override {
    if (const int e = s_.copy_error.load(); e != 0) return static_cast<errc>(e);
    in_flight_.push_back({dst, src, n});
    return errc{};
  }
  errc from_task_async(unsigned thread, void* dst, const void* src, std::size_t n) noexcept override {
    return to_task_async(thread, dst, src, n);  // the same deferred copy, the other way
  }
  errc wait(unsigned) noexcept override {
    const int n = static_cast<int>(in_flight_.size());
    if (n > s_.most_in_flight.load()) s_.most_in_flight = n;
    if (const int e = s_.wait_error.load(); e != 0) {
      in_flight_.clear();
      return static_cast<errc>(e);
    }
    for (const pending& p : in_flight_) std::memcpy(p.dst, p.src, p.n);
    in_flight_.clear();
    return errc{};
  }

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
  struct pending {
    void* dst;
    const void* src;
    std::size_t n;
  };
  memory_script& s_;
  std::vector<char> stage_;          // touched by the reactor thread only
  std::vector<pending> in_flight_;   // likewise
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
  // Posts a request; its answer is in the op once collect() has seen it (done).
  struct op {
    d::host_op o{};
    bool done = false;
  };
  std::unique_ptr<op> post(d::opcode code, std::array<std::uint64_t, d::request_args> args,
                           const void* inline_src = nullptr, std::uint32_t inline_bytes = 0) {
    auto p = std::make_unique<op>();
    p->o.req.op = code;
    p->o.req.token = reinterpret_cast<std::uint64_t>(p.get());  // the op: o is its first member
    p->o.req.inline_bytes = inline_bytes;
    for (unsigned i = 0; i < d::request_args; ++i) p->o.req.args[i] = args[i];
    p->o.inline_src = inline_src;
    d::mailbox_post_one(*box_, &p->o);
    return p;
  }
  // Drains completions (writing each into its op) until every op in `ops` is done.
  void collect(std::initializer_list<op*> ops) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    const auto all_done = [&] {
      for (op* p : ops)
        if (!p->done) return false;
      return true;
    };
    while (!all_done() && std::chrono::steady_clock::now() < deadline) {
      d::completion_view v;
      if (!d::mailbox_read_completion(*box_, next_, &v)) {
        std::this_thread::yield();
        continue;
      }
      op* p = reinterpret_cast<op*>(v.token);
      d::mailbox_write_result(*box_, next_, v, &p->o);
      p->done = true;
      d::mailbox_hand_back(*box_, next_, v.inline_bytes != 0);
      ++next_;
    }
    REQUIRE(all_done());  // else the reactor never answered
  }
  answer call(d::opcode code, std::array<std::uint64_t, d::request_args> args, const void* inline_src = nullptr,
              std::uint32_t inline_bytes = 0) {
    auto p = post(code, args, inline_src, inline_bytes);
    collect({p.get()});
    return {p->o.error, p->o.value};
  }
  weft::rt::reactor& reactor() { return r_; }
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

// The bytes peer k sends: a pattern of its own.
std::string message(int k, std::size_t n) {
  std::string m(n, '\0');
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<char>('A' + (i * 7 + static_cast<std::size_t>(k) * 5) % 26);
  return m;
}

// Waits (up to 10 s) until `n` bytes are readable on the reactor's socket `fd` (a
// descriptor of this process: peeked, not taken).
bool readable(std::uint64_t fd, std::size_t n) {
  std::vector<char> b(n);
  const auto there = [&] {
    return ::recv(static_cast<int>(fd), b.data(), n, MSG_PEEK | MSG_DONTWAIT) == static_cast<ssize_t>(n);
  };
  return weft_test::wait_for_value(there, true, std::chrono::seconds(10));
}

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

// A listener of the reactor's with k clients connected and accepted: the clients' own
// sockets (this process's) and the reactor's handles of the accepted connections.
struct served_peers {
  std::uint64_t listener = 0;
  std::vector<int> peers;
  std::vector<std::uint64_t> conns;
};
served_peers connect_peers(reactor_client& c, int k) {
  served_peers p;
  const answer l = c.call(d::opcode::listen, {0});
  REQUIRE(l.error == errc{});
  p.listener = l.value & 0xffffffffu;
  for (int i = 0; i < k; ++i) {
    p.peers.push_back(connect_to(static_cast<std::uint16_t>(l.value >> 32)));
    REQUIRE(p.peers.back() >= 0);
    const answer a = c.call(d::opcode::accept, {p.listener});
    REQUIRE(a.error == errc{});
    p.conns.push_back(a.value);
  }
  return p;
}

// Holds reactor thread 0 inside a host function (id 99) until release(): requests
// posted meanwhile are all taken by the take_requests loop that called it, in one round.
struct held_reactor {
  std::unique_ptr<reactor_client::op> op;
  std::shared_ptr<std::atomic<bool>> go;
  void release() { go->store(true); }
};
held_reactor hold_reactor(reactor_client& c) {
  auto in_fn = std::make_shared<std::atomic<bool>>(false);
  auto go = std::make_shared<std::atomic<bool>>(false);
  c.reactor().register_fn(99, [in_fn, go](std::span<const std::uint64_t>) -> std::uint64_t {
    in_fn->store(true);
    while (!go->load()) std::this_thread::yield();
    return 0;
  });
  held_reactor h{c.post(d::opcode::host_call, {99}), go};
  REQUIRE(weft_test::wait_for_value([&] { return in_fn->load(); }, true, std::chrono::seconds(5)));
  return h;
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

TEST_CASE("a recv into task memory the host cannot touch goes through the staging buffer, and with none it fails with "
          "out_of_memory and leaves the bytes for the next recv",
          "[net][fault]") {
  memory_script s;
  reactor_client c(s);
  const served_peers p = connect_peers(c, 1);
  const std::uint64_t listener = p.listener, conn = p.conns[0];
  const int peer = p.peers[0];

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

TEST_CASE("staged recvs started in one round are finished together, each with its own bytes, and one that finds the "
          "staging buffer's free part too small waits for the copies before it",
          "[net][fault]") {
  memory_script s;
  reactor_client c(s);
  const served_peers p = connect_peers(c, 3);
  const std::uint64_t listener = p.listener;
  const std::vector<int>& peers = p.peers;
  const std::vector<std::uint64_t>& conns = p.conns;
  const std::size_t n = 2000;
  char* mem = s.task_memory.data();
  const auto send_all = [&](std::size_t bytes) {
    for (int k = 0; k < 3; ++k) REQUIRE(::send(peers[k], message(k, bytes).data(), bytes, 0) == ssize_t(bytes));
    for (int k = 0; k < 3; ++k) REQUIRE(readable(conns[k], bytes));
  };

  // Three recvs taken in one round (a host function holds the reactor thread while they
  // are posted, so its take_requests loop finds all three behind it): their bytes are
  // there already, so each starts its copy at once, and the round's one wait ends all three.
  send_all(n);
  {
    auto held = hold_reactor(c);
    auto r0 = c.post(d::opcode::recv, {conns[0], addr(mem), n});
    auto r1 = c.post(d::opcode::recv, {conns[1], addr(mem + 4096), n});
    auto r2 = c.post(d::opcode::recv, {conns[2], addr(mem + 8192), n});
    held.release();
    c.collect({held.op.get(), r0.get(), r1.get(), r2.get()});
    for (auto* r : {r0.get(), r1.get(), r2.get()}) {
      CHECK(r->o.error == errc{});
      CHECK(r->o.value == n);
    }
    for (int k = 0; k < 3; ++k) CHECK(std::string(mem + 4096 * k, n) == message(k, n));
    CHECK(s.most_in_flight.load() == 3);  // one wait for the round, not one per recv
  }

  // Recvs asking for the whole staging buffer: each after the first must wait for the
  // copies before it (the fake copies only in wait(), so a reused source shows).
  send_all(n);
  {
    const std::uint64_t whole = weft::rt::staging_bytes;
    std::memset(mem, 0, 3 * 4096);
    auto r0 = c.post(d::opcode::recv, {conns[0], addr(mem), whole});
    auto r1 = c.post(d::opcode::recv, {conns[1], addr(mem + 4096), whole});
    auto r2 = c.post(d::opcode::recv, {conns[2], addr(mem + 8192), whole});
    c.collect({r0.get(), r1.get(), r2.get()});
    for (int k = 0; k < 3; ++k) CHECK(std::string(mem + 4096 * k, n) == message(k, n));
  }

  // A failed wait is every copy's error; the connection serves on.
  s.wait_error = static_cast<int>(errc::device_fault);
  REQUIRE(::send(peers[0], "x", 1, 0) == 1);
  REQUIRE(readable(conns[0], 1));
  CHECK(c.call(d::opcode::recv, {conns[0], addr(mem), n}).error == errc::device_fault);
  s.wait_error = 0;
  REQUIRE(::send(peers[0], message(0, n).data(), n, 0) == ssize_t(n));
  REQUIRE(readable(conns[0], n));
  const answer again = c.call(d::opcode::recv, {conns[0], addr(mem), n});
  CHECK(again.error == errc{});
  CHECK(again.value == n);
  CHECK(std::string(mem, n) == message(0, n));

  for (int k = 0; k < 3; ++k) {
    CHECK(c.call(d::opcode::net_close, {conns[k]}).error == errc{});
    ::close(peers[k]);
  }
  CHECK(c.call(d::opcode::net_close, {listener}).error == errc{});
}

namespace {
// Reads exactly n bytes from a peer socket (waiting up to 10 s); what came, if less.
std::string read_exact(int fd, std::size_t n) {
  std::string got;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<char> b(n);
  while (got.size() < n) {
    const ssize_t r = ::recv(fd, b.data(), n - got.size(), 0);
    if (r <= 0) break;
    got.append(b.data(), static_cast<std::size_t>(r));
  }
  return got;
}
}  // namespace

TEST_CASE("staged sends started in one round are copied out together and reach their peers in order, a close "
          "right behind a send sends it first, and a failed copy fails the send and sends nothing",
          "[net][fault]") {
  memory_script s;
  reactor_client c(s);
  const served_peers p = connect_peers(c, 2);
  const std::uint64_t listener = p.listener;
  const std::vector<int>& peers = p.peers;
  const std::vector<std::uint64_t>& conns = p.conns;
  char* mem = s.task_memory.data();  // "GPU memory": sends over 184 bytes are staged
  for (int k = 0; k < 3; ++k) std::memcpy(mem + 4096 * k, message(k, 2000).data(), 2000);

  {  // three sends taken in one round (see hold_reactor), two on one socket
    auto held = hold_reactor(c);
    auto s0 = c.post(d::opcode::send, {conns[0], addr(mem), 2000});
    auto s1 = c.post(d::opcode::send, {conns[1], addr(mem + 4096), 2000});
    auto s2 = c.post(d::opcode::send, {conns[0], addr(mem + 8192), 1500});
    held.release();
    c.collect({held.op.get(), s0.get(), s1.get(), s2.get()});
    CHECK(s.most_in_flight.load() == 3);  // the three copies out, ended by the round's one wait
    CHECK(s0->o.error == errc{});
    CHECK(s0->o.value == 2000);
    CHECK(s1->o.value == 2000);
    CHECK(s2->o.value == 1500);
    CHECK(read_exact(peers[0], 3500) == message(0, 2000) + message(2, 1500));  // in order
    CHECK(read_exact(peers[1], 2000) == message(1, 2000));
  }
  {  // a close right behind a send on the same socket
    auto sent = c.post(d::opcode::send, {conns[1], addr(mem), 2000});
    auto closed = c.post(d::opcode::net_close, {conns[1]});
    c.collect({sent.get(), closed.get()});
    CHECK(sent->o.error == errc{});
    CHECK(closed->o.error == errc{});
    CHECK(read_exact(peers[1], 2000) == message(0, 2000));
    char b;
    CHECK(::recv(peers[1], &b, 1, 0) == 0);  // then the close
  }
  // A failed copy, at its start or at the wait: the send's error, and not a byte on the wire.
  s.copy_error = static_cast<int>(errc::invalid_argument);
  CHECK(c.call(d::opcode::send, {conns[0], addr(mem), 2000}).error == errc::invalid_argument);
  s.copy_error = 0;
  s.wait_error = static_cast<int>(errc::device_fault);
  CHECK(c.call(d::opcode::send, {conns[0], addr(mem), 2000}).error == errc::device_fault);
  s.wait_error = 0;
  const answer after = c.call(d::opcode::send, {conns[0], addr(mem + 4096), 300});
  CHECK(after.error == errc{});
  CHECK(read_exact(peers[0], 300) == message(1, 300));  // the failed send's bytes never went out

  CHECK(c.call(d::opcode::net_close, {conns[0]}).error == errc{});
  CHECK(c.call(d::opcode::net_close, {listener}).error == errc{});
  for (int fd : peers) ::close(fd);
}

TEST_CASE("a staged recv that finds the staging buffer full behind a staged send on its own socket completes once, "
          "with its bytes, and the send reaches the peer whole",
          "[net][fault]") {
  // The send (staging_bytes - 500, copying) leaves too little of the buffer for the
  // recv queued ahead of it on the same socket, so the recv settles the round's copies
  // from inside its socket's progress call. That used to progress the socket again from
  // there, completing the recv twice and popping an empty queue.
  memory_script s;
  s.task_memory.assign(std::size_t{8} << 20, 0);
  reactor_client c(s);
  std::atomic<bool> in_fn{false}, release{false};
  c.reactor().register_fn(7, [&](std::span<const std::uint64_t>) -> std::uint64_t {
    in_fn = true;
    while (!release.load()) std::this_thread::yield();
    return 0;
  });
  const served_peers p = connect_peers(c, 1);
  char* mem = s.task_memory.data();
  const std::size_t big = weft::rt::staging_bytes - 500;
  for (std::size_t i = 0; i < big; ++i) mem[i] = pattern(i);
  char* dst = mem + (std::size_t{6} << 20);
  auto recv = c.post(d::opcode::recv, {p.conns[0], addr(dst), 1000});  // nothing to read yet: it waits
  REQUIRE(weft_test::wait_for_value([&] { return c.reactor().stats().deferred; }, std::uint64_t{1},
                                    std::chrono::seconds(5)) == 1);
  auto held = c.post(d::opcode::host_call, {7});  // holds the reactor thread, so the next two land in one round
  REQUIRE(weft_test::wait_for_value([&] { return in_fn.load(); }, true, std::chrono::seconds(5)));
  REQUIRE(::send(p.peers[0], message(0, 3000).data(), 3000, 0) == 3000);
  REQUIRE(readable(p.conns[0], 3000));
  auto send = c.post(d::opcode::send, {p.conns[0], addr(mem), big});
  release = true;
  c.collect({held.get(), recv.get()});
  CHECK(recv->o.error == errc{});
  CHECK(recv->o.value == 1000);
  CHECK(std::string(dst, 1000) == message(0, 1000));
  const std::string wire = read_exact(p.peers[0], big);  // (more than the socket buffers hold)
  c.collect({send.get()});
  CHECK(send->o.error == errc{});
  CHECK(send->o.value == big);
  CHECK(wire.size() == big);
  CHECK(wire == std::string(mem, big));
  // Nothing answered twice: a later request's completion is its own.
  REQUIRE(::send(p.peers[0], "y", 1, 0) == 1);
  const answer tail = c.call(d::opcode::recv, {p.conns[0], addr(dst), 1000});
  CHECK(tail.error == errc{});
  CHECK(tail.value == 1000);  // the 2,000 bytes left, then "y": 1,000 of them
  CHECK(c.call(d::opcode::net_close, {p.conns[0]}).error == errc{});
  CHECK(c.call(d::opcode::net_close, {p.listener}).error == errc{});
  ::close(p.peers[0]);
}
