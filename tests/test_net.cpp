// TCP served by tasks through the reactor: echo, peer close, bad handles, shutdown.
// Backend-agnostic (compiled as CUDA in a cuda build); the clients are host threads.
#include <catch2/catch.hpp>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "shared_array.hpp"
#include "support.hpp"

using weft_test::code;
using weft_test::code_of;
using weft_test::shared_array;

namespace {

struct echo_out {
  int listen_code, accept_code, recv_error, send_error, close_code;
  std::uint64_t echoed;
  int connections;
};

// Listens, publishes the port, then serves `conns` clients one after another: echoes
// each one's bytes until it closes (recv gives 0). The buffer is in the frame (GPU
// memory on the cuda backend): recvs over 104 bytes and sends over 184 are staged.
WEFT_HOST_DEVICE weft::task<echo_out> echo_root(int* port_out, int conns) {
  echo_out o{};
  auto l = co_await weft::net::listen(0);
  o.listen_code = code_of(l);
  if (!l) co_return o;
  weft::detail::device_atomic<int>(*port_out).store(l->port(), weft::detail::mo_release);
  for (int i = 0; i < conns; ++i) {
    auto c = co_await l->accept();
    if (!c) {
      o.accept_code = code_of(c);
      break;
    }
    ++o.connections;
    unsigned char buf[2048];
    for (;;) {
      auto n = co_await c->recv(buf, sizeof buf);
      if (!n) {
        o.recv_error = code_of(n);
        break;
      }
      if (*n == 0) break;
      auto s = co_await c->send(buf, *n);
      if (!s) {
        o.send_error = code_of(s);
        break;
      }
      o.echoed += *s;
    }
    o.close_code = code_of(co_await c->close());
  }
  (void)co_await l->close();
  co_return o;
}

struct bad_out {
  int recv_bad, send_bad, accept_on_conn, close_bad, listen_bad_port_twice;
};
WEFT_HOST_DEVICE weft::task<bad_out> bad_handles_root() {
  bad_out o{};
  weft::net::conn bogus(1 << 20);
  char b[8] = {};
  o.recv_bad = code_of(co_await bogus.recv(b, sizeof b));
  o.send_bad = code_of(co_await bogus.send(b, sizeof b));
  o.close_bad = code_of(co_await bogus.close());
  auto l = co_await weft::net::listen(0);
  if (l) {
    o.accept_on_conn = code_of(co_await weft::net::conn(l->handle()).recv(b, sizeof b));  // a listener is no conn
    auto again = co_await weft::net::listen(l->port());  // taken: SO_REUSEADDR does not share a listening port
    o.listen_bad_port_twice = code_of(again);
    (void)co_await l->close();
  }
  co_return o;
}

struct null_out {
  int accept_code, recv_null, recv_null_big, recv_zero, send_null, send_null_big, recv_code, send_code, close_code;
  std::uint64_t got, sent;
};
// Accepts one client, makes every recv and send with a null buffer (and a recv of 0
// bytes, which could not tell its answer from the peer's close), then echoes what one
// recv gives: the refused calls must neither take the client's bytes nor send any.
WEFT_HOST_DEVICE weft::task<null_out> null_buffers_root(int* port_out) {
  null_out o{};
  auto l = co_await weft::net::listen(0);
  if (!l) co_return o;
  weft::detail::device_atomic<int>(*port_out).store(l->port(), weft::detail::mo_release);
  auto c = co_await l->accept();
  o.accept_code = code_of(c);
  if (!c) co_return o;
  unsigned char b[64];
  o.recv_null = code_of(co_await c->recv(nullptr, 10));
  o.recv_null_big = code_of(co_await c->recv(nullptr, 3000));  // (a staged size on the GPU)
  o.recv_zero = code_of(co_await c->recv(b, 0));
  o.send_null = code_of(co_await c->send(nullptr, 10));
  o.send_null_big = code_of(co_await c->send(nullptr, 3000));
  auto n = co_await c->recv(b, sizeof b);
  o.recv_code = code_of(n);
  o.got = n ? *n : 0;
  auto s = co_await c->send(b, o.got);
  o.send_code = code_of(s);
  o.sent = s ? *s : 0;
  o.close_code = code_of(co_await c->close());
  (void)co_await l->close();
  co_return o;
}

WEFT_HOST_DEVICE weft::task<int> accept_forever(int* port_out) {
  auto l = co_await weft::net::listen(0);
  if (!l) co_return code_of(l);
  weft::detail::device_atomic<int>(*port_out).store(l->port(), weft::detail::mo_release);
  auto c = co_await l->accept();
  co_return code_of(c);
}

struct pending_out {
  int accept_code, recv_code, send_code;
};

WEFT_HOST_DEVICE weft::task<int> send_until_shutdown(weft::net::conn c, const unsigned char* big, std::size_t n) {
  co_return code_of(co_await c.send(big, n));
}

// Accepts one client, which never reads or writes: a send of n bytes (more than the
// socket buffers hold) waits for room in a task of its own, and a recv waits for data.
WEFT_HOST_DEVICE weft::task<pending_out> pending_root(int* port_out, const unsigned char* big, std::size_t n) {
  pending_out o{};
  auto l = co_await weft::net::listen(0);
  if (!l) co_return o;
  weft::detail::device_atomic<int>(*port_out).store(l->port(), weft::detail::mo_release);
  auto c = co_await l->accept();
  o.accept_code = code_of(c);
  if (!c) co_return o;
  auto sender = weft::spawn(send_until_shutdown(*c, big, n));
  unsigned char b[256];
  o.recv_code = code_of(co_await c->recv(b, sizeof b));
  auto s = co_await weft::try_await(sender);
  o.send_code = s ? *s : -1;
  co_return o;
}

#if WEFT_CUDA_COMPILE
__global__ void net_roots_compile_for_device(int* p, int n) {
  (void)pending_root(p, nullptr, 0);
  (void)echo_root(p, n);
  (void)bad_handles_root();
  (void)accept_forever(p);
  (void)null_buffers_root(p);
}
#endif

int wait_port(shared_array<int>& port) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int p = 0;
  while ((p = weft::detail::device_atomic<int>(port[0]).load(weft::detail::mo_acquire)) == 0 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return p;
}

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const char* p, std::size_t n) {
  while (n) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}
bool recv_all(int fd, char* p, std::size_t n) {
  while (n) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

TEST_CASE("a task serves TCP echo to clients one after another and sees each peer close", "[net]") {
  shared_array<int> port(1);
  weft::runtime rt(weft_test::any_backend_config());
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* p, int n) { return echo_root(p, n); }, port.data(), 2);
  const int p = wait_port(port);
  REQUIRE(p > 0);
  std::uint64_t sent = 0;
  for (int client = 0; client < 2; ++client) {
    const int fd = connect_to(p);
    REQUIRE(fd >= 0);
    for (std::size_t len : {std::size_t{5}, std::size_t{64}, std::size_t{1000}, std::size_t{1}}) {
      std::string msg(len, '\0');
      for (std::size_t i = 0; i < len; ++i) msg[i] = static_cast<char>('a' + (i * 7 + client) % 26);
      REQUIRE(send_all(fd, msg.data(), len));
      std::string back(len, '\0');
      REQUIRE(recv_all(fd, back.data(), len));
      REQUIRE(back == msg);
      sent += len;
    }
    ::close(fd);
  }
  const echo_out o = h.get();
  REQUIRE(o.listen_code == 0);
  REQUIRE(o.accept_code == 0);
  REQUIRE(o.recv_error == 0);
  REQUIRE(o.send_error == 0);
  REQUIRE(o.close_code == 0);
  REQUIRE(o.connections == 2);
  REQUIRE(o.echoed == sent);
}

TEST_CASE("a peer that resets the connection gives the serving task an error and no hang", "[net][fault]") {
  shared_array<int> port(1);
  weft::runtime rt(weft_test::any_backend_config());
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* p, int n) { return echo_root(p, n); }, port.data(), 1);
  const int p = wait_port(port);
  REQUIRE(p > 0);
  const int fd = connect_to(p);
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, "ping", 4));
  char back[4];
  REQUIRE(recv_all(fd, back, 4));
  linger lg{1, 0};  // close with RST
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(fd);
  const echo_out o = h.get();
  REQUIRE(o.connections == 1);
  REQUIRE(o.echoed == 4);
  // The reset shows as closed on the next recv: the socket's pending ECONNRESET, which
  // the first recv after it reports whether it was already waiting or came later (a
  // plain 0, the orderly close, would be the wrong answer: net.hpp's closed).
  REQUIRE(o.recv_error == code(weft::errc::closed));
}

TEST_CASE("net recv and send with a null buffer, and a recv of 0 bytes, give invalid_argument and leave the "
          "connection's bytes as they were",
          "[net][fault]") {
  shared_array<int> port(1);
  weft::runtime rt(weft_test::any_backend_config());
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* p) { return null_buffers_root(p); }, port.data());
  const int p = wait_port(port);
  REQUIRE(p > 0);
  const int fd = connect_to(p);
  REQUIRE(fd >= 0);
  timeval tv{10, 0};  // a task that went wrong makes these reads fail, not hang
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  REQUIRE(send_all(fd, "hello", 5));
  char back[5];
  REQUIRE(recv_all(fd, back, 5));
  CHECK(std::string(back, 5) == "hello");
  char more;
  CHECK(::recv(fd, &more, 1, 0) == 0);  // then the task's close: no byte from the refused sends
  ::close(fd);
  const null_out o = h.get();
  const int bad = code(weft::errc::invalid_argument);
  CHECK(o.accept_code == 0);
  CHECK(o.recv_null == bad);
  CHECK(o.recv_null_big == bad);
  CHECK(o.recv_zero == bad);
  CHECK(o.send_null == bad);
  CHECK(o.send_null_big == bad);
  CHECK(o.recv_code == 0);
  CHECK(o.got == 5);  // the bytes no refused recv took
  CHECK(o.send_code == 0);
  CHECK(o.sent == 5);
  CHECK(o.close_code == 0);
}

TEST_CASE("socket requests on handles that are not open sockets give bad_handle, and a taken port gives io_error",
          "[net][fault]") {
  weft::runtime rt(weft_test::any_backend_config());
  const bad_out o = rt.block_on([] WEFT_HOST_DEVICE() { return bad_handles_root(); });
  REQUIRE(o.recv_bad == code(weft::errc::bad_handle));
  REQUIRE(o.send_bad == code(weft::errc::bad_handle));
  REQUIRE(o.close_bad == code(weft::errc::bad_handle));
  REQUIRE(o.accept_on_conn == code(weft::errc::bad_handle));
  REQUIRE(o.listen_bad_port_twice == code(weft::errc::io_error));
}

TEST_CASE("runtime shutdown fails a pending accept with shutting_down and closes the listener, whose port then "
          "refuses connections",
          "[net][fault]") {
  shared_array<int> port(1);
  weft::runtime rt(weft_test::any_backend_config());
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* p) { return accept_forever(p); }, port.data());
  REQUIRE(wait_port(port) > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the accept is pending
  rt.shutdown();  // the runtime object lives on: the sockets close at shutdown, not at ~runtime
  const weft::result<int> r = h.try_get();
  // The task saw the error and finished with it, before the executor stopped.
  REQUIRE(r.has_value());
  REQUIRE(*r == code(weft::errc::shutting_down));
  const int late = connect_to(port[0]);
  CHECK(late == -1);  // refused: nobody listens there any more
  if (late >= 0) ::close(late);
}

TEST_CASE("runtime shutdown fails a recv waiting for data and a send waiting for room with shutting_down", "[net][fault]") {
  const std::size_t n = std::size_t{32} << 20;  // far more than a loopback socket's buffers
  shared_array<int> port(1);
  shared_array<unsigned char> big(n);
  weft::runtime rt(weft_test::any_backend_config());
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* p, const unsigned char* b, std::size_t k) { return pending_root(p, b, k); },
                    port.data(), big.data(), n);
  REQUIRE(wait_port(port) > 0);
  const int client = connect_to(port[0]);  // never reads or writes
  REQUIRE(client >= 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the recv and the send are waiting
  CHECK(!h.is_ready());
  rt.shutdown();
  const weft::result<pending_out> r = h.try_get();
  ::close(client);
  REQUIRE(r.has_value());
  CHECK(r->accept_code == 0);
  CHECK(r->recv_code == code(weft::errc::shutting_down));
  CHECK(r->send_code == code(weft::errc::shutting_down));
}
