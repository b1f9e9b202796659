// bench/echo_load.cpp - the baseline epoll echo server and the client load generator of
// the TCP echo benchmark (echo_load.hpp says what each does). Host-only, plain C++.
#include "echo_load.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace weft_bench::echo {

bool raise_fd_limit(rlim_t need) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return false;
  if (r.rlim_cur >= need) return true;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < need) return false;
  r.rlim_cur = need;
  return ::setrlimit(RLIMIT_NOFILE, &r) == 0;
}

namespace {

// ---------------------------------------------------------------- sockets
void set_nodelay_nonblocking(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// A blocking connect (the server's backlog completes it before any accept), then non-blocking.
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  set_nodelay_nonblocking(fd);
  return fd;
}

// Listens on 0.0.0.0 at an ephemeral port, as net::listen(0) does; returns the fd, *port.
int listen_any(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4096) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

// Message `seq` of connection `id`: the two numbers, then bytes that depend on both and on
// the position, so that a byte from another message or another connection shows.
void fill_message(unsigned char* m, std::uint32_t n, std::uint32_t id, std::uint32_t seq) {
  std::memcpy(m, &id, 4);
  std::memcpy(m + 4, &seq, 4);
  for (std::uint32_t i = header_bytes; i < n; ++i) m[i] = static_cast<unsigned char>(id * 131u + seq * 31u + i * 7u);
}

struct client_conn {
  int fd = -1;
  std::uint32_t id = 0, seq = 0;
  std::uint32_t left = 0;  // messages still to send in this phase, the one in flight included
  std::size_t sent = 0, got = 0;
  bool want_out = false;  // EPOLLOUT is on: a send found the socket full
  bool failed = false;
  clock_type::time_point t0;
  std::vector<unsigned char> tx, rx;
};

// One client thread: its connections, its epoll set, its share of the counters.
class client {
 public:
  client(std::uint32_t msg, clock_type::time_point deadline) : msg_(msg), deadline_(deadline) {}
  ~client() {
    for (auto& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
    if (ep_ >= 0) ::close(ep_);
  }
  bool connect_all(int port, std::uint32_t first_id, std::uint32_t count) {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return false;
    conns_.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      client_conn& c = conns_[i];
      c.id = first_id + i;
      c.tx.resize(msg_);
      c.rx.resize(msg_);
      c.fd = connect_loopback(port);
      if (c.fd < 0 || !watch(i, EPOLL_CTL_ADD)) return false;
    }
    return true;
  }
  // Closed-loop round trips, `per_conn` on every connection, until all are done or the
  // deadline passes; timed ones go into result().rtt_us.
  void run_phase(std::uint32_t per_conn, bool timed) {
    timed_ = timed;
    active_ = 0;
    for (std::uint32_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i].failed || per_conn == 0) continue;
      conns_[i].left = per_conn;
      ++active_;
      start_message(i);
    }
    epoll_event evs[256];
    while (active_ > 0 && clock_type::now() < deadline_) {
      const int n = ::epoll_wait(ep_, evs, 256, 10);
      for (int e = 0; e < n; ++e) on_event(evs[e].data.u32, evs[e].events);
    }
  }
  load_result& result() { return res_; }

 private:
  bool watch(std::uint32_t i, int op) {
    epoll_event ev{};
    ev.events = EPOLLIN | (conns_[i].want_out ? EPOLLOUT : 0u);
    ev.data.u32 = i;
    return ::epoll_ctl(ep_, op, conns_[i].fd, &ev) == 0;
  }
  void fail(std::uint32_t i) {
    client_conn& c = conns_[i];
    if (c.failed) return;
    c.failed = true;
    ++res_.failed_conns;
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
    --active_;  // its messages never come back ok: run_load counts them lost
  }
  void start_message(std::uint32_t i) {
    client_conn& c = conns_[i];
    fill_message(c.tx.data(), msg_, c.id, c.seq);
    c.sent = c.got = 0;
    c.t0 = clock_type::now();
    push(i);
  }
  // Sends what is left of the message; on a full socket, waits for EPOLLOUT.
  void push(std::uint32_t i) {
    client_conn& c = conns_[i];
    while (c.sent < msg_) {
      const ssize_t w = ::send(c.fd, c.tx.data() + c.sent, msg_ - c.sent, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!c.want_out && (c.want_out = true, !watch(i, EPOLL_CTL_MOD))) fail(i);
        return;
      }
      if (w < 0) return fail(i);
      c.sent += static_cast<std::size_t>(w);
    }
    if (c.want_out && (c.want_out = false, !watch(i, EPOLL_CTL_MOD))) fail(i);
  }
  void on_event(std::uint32_t i, std::uint32_t events) {
    client_conn& c = conns_[i];
    if (c.failed || c.left == 0) return;  // between phases, or done: nothing is due
    if ((events & EPOLLOUT) && c.sent < msg_) push(i);
    while (!c.failed && c.got < msg_) {
      const ssize_t r = ::recv(c.fd, c.rx.data() + c.got, msg_ - c.got, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (r <= 0) return fail(i);  // the server closed or reset: the message is lost
      c.got += static_cast<std::size_t>(r);
    }
    if (!c.failed) echoed(i);
  }
  // A whole echo is in: check every byte, record, send the next or finish.
  void echoed(std::uint32_t i) {
    client_conn& c = conns_[i];
    const double us = std::chrono::duration<double, std::micro>(clock_type::now() - c.t0).count();
    if (std::memcmp(c.rx.data(), c.tx.data(), msg_) != 0) {
      ++res_.corrupt;
      return fail(i);  // the stream is out of step: nothing after this can be trusted
    }
    ++res_.ok;
    if (timed_) res_.rtt_us.push_back(us);
    ++c.seq;
    if (--c.left > 0) start_message(i);
    else --active_;
  }

  std::uint32_t msg_;
  clock_type::time_point deadline_;
  int ep_ = -1;
  std::vector<client_conn> conns_;
  std::uint32_t active_ = 0;
  bool timed_ = false;
  load_result res_;
};

}  // namespace

// ---------------------------------------------------------------- baseline: epoll echo server
epoll_server::~epoll_server() {
  stop();
  for (int fd : {listen_fd_, stop_fd_, ep_})
    if (fd >= 0) ::close(fd);
}

int epoll_server::start() {
  listen_fd_ = listen_any(&port_);
  ep_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (listen_fd_ < 0 || ep_ < 0 || stop_fd_ < 0 || !watch(listen_fd_, EPOLLIN, EPOLL_CTL_ADD) ||
      !watch(stop_fd_, EPOLLIN, EPOLL_CTL_ADD))
    return -1;
  thread_ = std::thread([this] { run(); });
  return port_;
}

bool epoll_server::finish(std::chrono::milliseconds limit) {
  const auto until = clock_type::now() + limit;
  while (!done_.load(std::memory_order_acquire) && clock_type::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool by_itself = done_.load(std::memory_order_acquire);
  stop();
  return by_itself;
}

bool epoll_server::watch(int fd, std::uint32_t events, int op) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  return ::epoll_ctl(ep_, op, fd, &ev) == 0;
}

void epoll_server::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) std::perror("epoll_server: eventfd write");
  thread_.join();
}

void epoll_server::drop(int fd, bool error) {
  ::close(fd);  // also leaves the epoll set
  open_.erase(fd);
  ++closed_;
  if (error) ++errors_;
}

void epoll_server::accept_all() {
  for (;;) {
    const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return;  // EAGAIN, or an aborted connection: the next event retries
    const int one = 1;
    ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!watch(c, EPOLLIN, EPOLL_CTL_ADD)) {
      ::close(c);
      ++errors_;
      continue;
    }
    open_.emplace(c, pending{});
    ++accepted_;
  }
}

// Sends what `p` still holds; false when the connection failed and was dropped.
bool epoll_server::flush(int fd, pending& p) {
  while (p.off < p.out.size()) {
    const ssize_t w = ::send(fd, p.out.data() + p.off, p.out.size() - p.off, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return watch(fd, EPOLLOUT, EPOLL_CTL_MOD);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return drop(fd, true), false;
    p.off += static_cast<std::size_t>(w);
    echoed_ += static_cast<std::uint64_t>(w);
  }
  p.out.clear();
  p.off = 0;
  return watch(fd, EPOLLIN, EPOLL_CTL_MOD);
}

void epoll_server::serve(int fd, std::uint32_t events) {
  auto it = open_.find(fd);
  if (it == open_.end()) return;
  pending& p = it->second;
  if (!p.out.empty()) {  // waiting for room: EPOLLOUT (or an error) is what woke us
    flush(fd, p);
    return;
  }
  if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP))) return;
  unsigned char buf[max_msg_bytes];
  const ssize_t n = ::recv(fd, buf, msg_, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) return drop(fd, n < 0);
  p.out.assign(buf, buf + n);
  flush(fd, p);
}

void epoll_server::run() {
  epoll_event evs[256];
  bool stopping = false;
  while (!stopping && (accepted_ < conns_ || closed_ < accepted_)) {
    const int n = ::epoll_wait(ep_, evs, 256, -1);
    for (int i = 0; i < n && !stopping; ++i) {
      const int fd = evs[i].data.fd;
      if (fd == stop_fd_) stopping = true;
      else if (fd == listen_fd_) accept_all();
      else serve(fd, evs[i].events);
    }
  }
  for (auto& [fd, p] : open_) ::close(fd);
  open_.clear();
  done_.store(true, std::memory_order_release);
}

// ---------------------------------------------------------------- the load
load_totals run_load(int port, int conns, std::uint32_t msg, std::uint32_t timed, clock_type::time_point deadline) {
  const int threads = std::min(client_threads, conns);
  std::vector<load_result> res(threads);
  std::vector<clock_type::time_point> begin(threads), end(threads);
  std::vector<char> connected(threads, 0);
  std::atomic<int> warmed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const auto first = static_cast<std::uint32_t>(std::int64_t{conns} * t / threads);
      const auto last = static_cast<std::uint32_t>(std::int64_t{conns} * (t + 1) / threads);
      client c(msg, deadline);
      connected[t] = c.connect_all(port, first, last - first);
      if (connected[t]) c.run_phase(1, false);
      warmed.fetch_add(1, std::memory_order_acq_rel);
      while (warmed.load(std::memory_order_acquire) < threads && clock_type::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      begin[t] = clock_type::now();
      if (connected[t]) c.run_phase(timed, true);
      end[t] = clock_type::now();
      res[t] = std::move(c.result());
    });  // ~client closes the connections: the server's side sees each peer close
  }
  for (auto& th : pool) th.join();
  load_totals out;
  out.expected = std::uint64_t(conns) * (1 + timed);
  for (int t = 0; t < threads; ++t) {
    if (!connected[t]) out.error = "a client could not connect";
    out.r.rtt_us.insert(out.r.rtt_us.end(), res[t].rtt_us.begin(), res[t].rtt_us.end());
    out.r.ok += res[t].ok;
    out.r.corrupt += res[t].corrupt;
    out.r.failed_conns += res[t].failed_conns;
  }
  out.r.timed_s = std::chrono::duration<double>(*std::max_element(end.begin(), end.end()) -
                                                *std::min_element(begin.begin(), begin.end()))
                      .count();
  out.lost = out.expected - out.r.ok;
  return out;
}

}  // namespace weft_bench::echo
