// weft/net.hpp - TCP servers run by tasks.
//
//   weft::result<weft::net::listener> l = co_await weft::net::listen(0);   // 0: any free port
//   std::uint16_t port = l->port();
//   weft::result<weft::net::conn> c = co_await l->accept();
//   weft::result<std::size_t> n = co_await c->recv(buf, sizeof buf);        // 0: the peer closed
//   co_await c->send(buf, *n);
//   co_await c->close();
//
// The host reactor owns the sockets: they are non-blocking, in its epoll set, and a
// request that cannot complete yet (accept with no client, recv with no data, send on
// a full socket buffer) waits there without a thread; the task stays parked. One task
// owns each connection: requests on one socket from two tasks at once are not ordered.
//
// send writes the whole buffer (it waits for room as often as it must) and returns its
// length; recv returns what one read gave (>= 1 byte), or 0 once the peer closed.
// Errors: closed (the peer reset the connection), bad_handle (not an open socket),
// io_error (another socket error: the port is taken, ...), host_unavailable,
// shutting_down, backend_unavailable (no runtime).
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/host_request.hpp"

namespace weft::net {

class conn {
 public:
  conn() = default;
  WEFT_HOST_DEVICE explicit conn(int fd) noexcept : fd_(fd) {}
  WEFT_HOST_DEVICE int handle() const noexcept { return fd_; }
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return fd_ >= 0; }

  WEFT_HOST_DEVICE auto recv(void* buf, std::size_t n) const noexcept {
    weft::detail::host_request_awaiter<std::size_t, weft::detail::as_size> aw(
        weft::detail::opcode::recv, arg(), reinterpret_cast<std::uint64_t>(buf), n);
    if (n <= weft::detail::completion_inline_bytes) aw.op.inline_dst = buf;
    if (buf == nullptr || n == 0) aw.early = errc::invalid_argument;
    return aw;
  }
  WEFT_HOST_DEVICE auto send(const void* buf, std::size_t n) const noexcept {
    weft::detail::host_request_awaiter<std::size_t, weft::detail::as_size> aw(
        weft::detail::opcode::send, arg(), reinterpret_cast<std::uint64_t>(buf), n);
    if (n <= weft::detail::request_inline_bytes) {
      aw.op.inline_src = buf;
      aw.op.req.inline_bytes = static_cast<std::uint32_t>(n);
    }
    if (buf == nullptr && n != 0) aw.early = errc::invalid_argument;
    return aw;
  }
  WEFT_HOST_DEVICE auto close() const noexcept {
    return weft::detail::host_request_awaiter<void, weft::detail::as_void>(weft::detail::opcode::net_close, arg());
  }

 private:
  WEFT_HOST_DEVICE std::uint64_t arg() const noexcept { return static_cast<std::uint64_t>(static_cast<std::int64_t>(fd_)); }
  int fd_ = -1;
};

namespace detail {
struct as_conn {
  WEFT_HOST_DEVICE static conn convert(std::uint64_t v) noexcept { return conn(static_cast<int>(v)); }
};
}  // namespace detail

class listener {
 public:
  listener() = default;
  WEFT_HOST_DEVICE listener(int fd, std::uint16_t port) noexcept : fd_(fd), port_(port) {}
  // The port it listens on (the one the host picked, for listen(0)).
  WEFT_HOST_DEVICE std::uint16_t port() const noexcept { return port_; }
  WEFT_HOST_DEVICE int handle() const noexcept { return fd_; }
  WEFT_HOST_DEVICE explicit operator bool() const noexcept { return fd_ >= 0; }

  WEFT_HOST_DEVICE auto accept() const noexcept {
    return weft::detail::host_request_awaiter<conn, detail::as_conn>(
        weft::detail::opcode::accept, static_cast<std::uint64_t>(static_cast<std::int64_t>(fd_)));
  }
  // Stops listening (a pending accept fails with closed).
  WEFT_HOST_DEVICE auto close() const noexcept {
    return weft::detail::host_request_awaiter<void, weft::detail::as_void>(
        weft::detail::opcode::net_close, static_cast<std::uint64_t>(static_cast<std::int64_t>(fd_)));
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

namespace detail {
// The host answers listen with fd | port << 32.
struct as_listener {
  WEFT_HOST_DEVICE static listener convert(std::uint64_t v) noexcept {
    return listener(static_cast<int>(v & 0xffffffffu), static_cast<std::uint16_t>(v >> 32));
  }
};
}  // namespace detail

// Listens on 0.0.0.0:port (SO_REUSEADDR; port 0 picks a free one).
WEFT_HOST_DEVICE inline auto listen(std::uint16_t port) noexcept {
  return weft::detail::host_request_awaiter<listener, detail::as_listener>(weft::detail::opcode::listen, port);
}

}  // namespace weft::net
