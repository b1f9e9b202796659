// src/reactor_net.cpp - TCP for tasks: non-blocking sockets in reactor thread 0's epoll set.
//
// Every socket is registered once, edge-triggered, for input and output. A request
// tries its system call at once; when it would block (EAGAIN) it waits in the socket's
// queue (accepts and recvs in `readers`, sends in `writers`), and each epoll event on
// the socket retries the queue heads until one would block again. Edge triggering is
// safe because a queue is only left waiting after a call returned EAGAIN, which
// re-arms the edge. Each request completes exactly once: by its call, by close (the
// queued ones fail with closed), or by a refusal (shutdown, a stopped service).
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <deque>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "reactor_thread.hpp"

namespace weft::rt {

struct net_state {
  struct reader {  // an accept (n == 0) or a recv
    std::uint64_t token;
    void* buf;
    std::uint64_t n;
  };
  struct writer {
    std::uint64_t token;
    std::vector<char> data;
    std::size_t sent;
    // A send from GPU memory whose bytes are on their way into the staging buffer here
    // (from_task_async): not sent until the round's finish_net_copies moved them into
    // `data`; or the copy's error, which the writer fails with when it reaches the front.
    const char* staged = nullptr;
    errc copy_error{};
  };
  struct sock {
    bool listening = false;
    std::deque<reader> readers;
    std::deque<writer> writers;
  };
  int ep = -1;
  std::unordered_map<int, sock> socks;
  std::size_t waiting = 0;  // queued requests over all sockets
  // Staged recvs whose copies into task memory run (to_task_async), and staged sends
  // whose copies out of it run (from_task_async; their sockets in `sends_copying`), in
  // the staging buffer's [0, stage_used): finished together once the stream has done
  // them (reactor_thread::finish_net_copies), so that one wait covers a round's copies.
  struct copying {
    std::uint64_t token;
    std::uint64_t got;
  };
  std::vector<copying> copies;
  std::vector<int> sends_copying;
  std::size_t stage_used = 0;
  // Sockets whose staged sends' bytes have arrived (settle_copies) and which still need a
  // progress call to send them: made at the next point where no progress call is under
  // way (pump_ready), never inside one. A settle can happen inside progress (a staged
  // recv that finds the buffer full), and progress on the socket being progressed there
  // would complete and pop the reader the outer call still holds.
  std::vector<int> sends_ready;
  bool copying_any() const noexcept { return !copies.empty() || !sends_copying.empty(); }

  ~net_state() {
    for (auto& [fd, s] : socks) ::close(fd);
    if (ep >= 0) ::close(ep);
  }
};

namespace {

errc net_errno(int e) noexcept {
  switch (e) {
    case ECONNRESET:
    case EPIPE:
    case ENOTCONN: return errc::closed;
    case EBADF:
    case ENOTSOCK: return errc::bad_handle;
    default: return errc::io_error;
  }
}

bool would_block(int e) noexcept { return e == EAGAIN || e == EWOULDBLOCK; }

// recv, made again at once when a signal interrupted it (see try_reader).
ssize_t recv_restarting(int fd, void* buf, std::size_t n) noexcept {
  ssize_t got;
  do {
    got = ::recv(fd, buf, n, 0);
  } while (got < 0 && errno == EINTR);
  return got;
}

}  // namespace

// The next free part of the thread's staging buffer, room for `want` (<= staging_bytes)
// bytes: the copies in flight are settled first when the free part is too small (no
// progress call: this runs inside one). Null when the thread has no staging buffer.
// use_stage_part marks n bytes of it taken.
static char* next_stage_part(reactor_thread& t, net_state& ns, std::size_t want) noexcept {
  auto* stage = static_cast<char*>(t.owner().mem().staging(t.index(), staging_bytes));
  if (stage == nullptr) return nullptr;
  if (ns.stage_used + want > staging_bytes) t.settle_net_copies();  // sets stage_used to 0
  return stage + ns.stage_used;
}
static void use_stage_part(net_state& ns, std::size_t n) noexcept {
  ns.stage_used += (n + 255) & ~std::size_t{255};  // each copy's host side 256-byte aligned
}

// A recv into memory the host cannot touch (GPU memory): into the next free part of the
// thread's pinned staging buffer, at most staging_bytes (a recv may return fewer bytes
// than asked: the task sees the count), then an asynchronous copy to the task's buffer
// that the round's finish_net_copies waits for. When the buffer's free part is too small
// for the request, the copies in flight are finished first. No buffer: out_of_memory
// before the socket is read, so no byte is lost. True: it is done with the socket
// (copying, completed or failed); false: it would block and stays queued.
static bool try_staged_recv(reactor_thread& t, int fd, net_state& ns, net_state::reader& r) noexcept {
  memory_ops& m = t.owner().mem();
  const std::size_t want = r.n < staging_bytes ? r.n : staging_bytes;
  char* dst = next_stage_part(t, ns, want);
  if (dst == nullptr) {
    t.fail(r.token, errc::out_of_memory);
    return true;
  }
  const ssize_t got = recv_restarting(fd, dst, want);
  if (got < 0) {
    if (would_block(errno)) return false;
    t.fail(r.token, net_errno(errno));
    return true;
  }
  if (got == 0) {  // the peer closed: nothing to copy
    t.complete(r.token, 0, errc{});
    return true;
  }
  const std::size_t n = static_cast<std::size_t>(got);
  if (const errc e = m.to_task_async(t.index(), r.buf, dst, n); e != errc{}) {
    t.complete(r.token, n, e);
    return true;
  }
  try {
    ns.copies.push_back({r.token, n});
  } catch (...) {  // no room to remember it: finish this copy (and any others) now
    const errc e = m.wait(t.index());
    t.complete(r.token, n, e);
    return true;
  }
  use_stage_part(ns, n);
  return true;
}

// A send from memory the host cannot touch (GPU memory): its bytes are copied
// asynchronously into the next free part of the thread's staging buffer, and the round's
// finish_net_copies moves them into the writer (one wait for the round's copies). A send
// larger than the buffer, or with no buffer, is copied synchronously into the writer.
static errc stage_send(reactor_thread& t, net_state& ns, int fd, net_state::writer& w, const void* buf) noexcept {
  memory_ops& m = t.owner().mem();
  const std::size_t n = w.data.size();
  char* part = n <= staging_bytes ? next_stage_part(t, ns, n) : nullptr;
  if (part == nullptr) return m.from_task(t.index(), w.data.data(), buf, n);
  try {
    ns.sends_copying.push_back(fd);
  } catch (...) {
    return m.from_task(t.index(), w.data.data(), buf, n);
  }
  try {  // room for settle_net_copies to hand every copying socket to sends_ready
    ns.sends_ready.reserve(ns.sends_ready.size() + ns.sends_copying.size());
  } catch (...) {
    ns.sends_copying.pop_back();
    return m.from_task(t.index(), w.data.data(), buf, n);
  }
  if (const errc e = m.from_task_async(t.index(), part, buf, n); e != errc{}) {
    ns.sends_copying.pop_back();
    return e;
  }
  w.staged = part;
  use_stage_part(ns, n);
  return errc{};
}

// Tries the reader at the head of s's queue. True: it completed (or failed); false: it
// would block and stays queued.
// Any call that fails with EINTR, and an accept that finds its connection aborted, is
// made again at once: only EAGAIN may leave the request queued (the header's rule for
// edge triggering: another connection may already wait behind the aborted one).
static bool try_reader(reactor_thread& t, int fd, net_state& ns, net_state::reader& r, bool listening) noexcept {
  if (listening) {
    int c;
    do {
      c = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (c < 0 && (errno == EINTR || errno == ECONNABORTED));
    if (c < 0) {
      if (would_block(errno)) return false;
      t.fail(r.token, net_errno(errno));
      return true;
    }
    const int one = 1;
    ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.fd = c;
    if (::epoll_ctl(ns.ep, EPOLL_CTL_ADD, c, &ev) != 0) {
      ::close(c);
      t.fail(r.token, errc::io_error);
      return true;
    }
    try {
      ns.socks.emplace(c, net_state::sock{});
    } catch (...) {
      ::close(c);
      t.fail(r.token, errc::out_of_memory);
      return true;
    }
    t.complete(r.token, static_cast<std::uint64_t>(c), errc{});
    return true;
  }
  memory_ops& m = t.owner().mem();
  if (r.n <= detail::completion_inline_bytes) {  // small: inline in the completion
    unsigned char small[detail::completion_inline_bytes];
    const ssize_t got = recv_restarting(fd, small, r.n);
    if (got < 0) {
      if (would_block(errno)) return false;
      t.fail(r.token, net_errno(errno));
      return true;
    }
    t.complete(r.token, static_cast<std::uint64_t>(got), errc{}, small, static_cast<std::uint32_t>(got));
    return true;
  }
  if (!m.host_accessible(r.buf)) return try_staged_recv(t, fd, ns, r);
  const ssize_t got = recv_restarting(fd, r.buf, r.n);
  if (got < 0) {
    if (would_block(errno)) return false;
    t.fail(r.token, net_errno(errno));
    return true;
  }
  t.complete(r.token, static_cast<std::uint64_t>(got), errc{});
  return true;
}

static bool try_writer(reactor_thread& t, int fd, net_state::writer& w) noexcept {
  if (w.copy_error != errc{}) {  // its bytes never came out of the task's memory
    t.fail(w.token, w.copy_error);
    return true;
  }
  while (w.sent < w.data.size()) {
    const ssize_t n = ::send(fd, w.data.data() + w.sent, w.data.size() - w.sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (would_block(errno)) return false;
      if (errno == EINTR) continue;
      t.fail(w.token, net_errno(errno));
      return true;
    }
    w.sent += static_cast<std::size_t>(n);
  }
  t.complete(w.token, w.data.size(), errc{});
  return true;
}

// Retries the queue heads of one socket. True when something completed.
static bool progress(reactor_thread& t, net_state& ns, int fd, net_state::sock& s) noexcept {
  bool any = false;
  while (!s.readers.empty() && try_reader(t, fd, ns, s.readers.front(), s.listening)) {
    s.readers.pop_front();
    --ns.waiting;
    any = true;
  }
  while (!s.writers.empty() && s.writers.front().staged == nullptr && try_writer(t, fd, s.writers.front())) {
    s.writers.pop_front();
    --ns.waiting;
    any = true;
  }
  return any;
}

// Progresses the sockets whose staged sends became sendable, until none is left (a
// progress call may settle more, appended behind: read by index). Called only where no
// progress call is under way.
static bool pump_ready(reactor_thread& t, net_state& ns) noexcept {
  bool any = false;
  for (std::size_t i = 0; i < ns.sends_ready.size(); ++i) {
    const int fd = ns.sends_ready[i];
    auto it = ns.socks.find(fd);
    if (it != ns.socks.end()) any |= progress(t, ns, fd, it->second);
  }
  ns.sends_ready.clear();
  return any;
}

static errc open_listener(std::uint16_t port, int ep, int* out_fd, std::uint16_t* out_port) noexcept {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errc::io_error;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(port);
  socklen_t len = sizeof a;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.fd = fd;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4096) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(fd);
    return errc::io_error;
  }
  *out_fd = fd;
  *out_port = ntohs(a.sin_port);
  return errc{};
}

void reactor_thread::op_net(const detail::request& q, const unsigned char* data) noexcept {
  using detail::opcode;
  if (!net_) {
    try {
      net_ = std::make_unique<net_state>();
    } catch (...) {
      return fail(q.token, errc::out_of_memory);
    }
    net_->ep = ::epoll_create1(EPOLL_CLOEXEC);
  }
  net_state& ns = *net_;
  if (ns.ep < 0) return fail(q.token, errc::io_error);
  if (q.op == opcode::listen) {
    if (q.args[0] > 65535) return fail(q.token, errc::invalid_argument);
    int fd = -1;
    std::uint16_t port = 0;
    if (const errc e = open_listener(static_cast<std::uint16_t>(q.args[0]), ns.ep, &fd, &port); e != errc{})
      return fail(q.token, e);
    try {
      ns.socks.emplace(fd, net_state::sock{true, {}, {}});
    } catch (...) {
      ::close(fd);
      return fail(q.token, errc::out_of_memory);
    }
    return complete(q.token, static_cast<std::uint64_t>(fd) | (std::uint64_t{port} << 32), errc{});
  }
  const int fd = static_cast<int>(q.args[0]);
  auto it = ns.socks.find(fd);
  if (it == ns.socks.end()) return fail(q.token, errc::bad_handle);
  net_state::sock& s = it->second;
  try {
    switch (q.op) {
      case opcode::accept:
        if (!s.listening) return fail(q.token, errc::bad_handle);
        s.readers.push_back({q.token, nullptr, 0});
        break;
      case opcode::recv:
        if (s.listening) return fail(q.token, errc::bad_handle);
        s.readers.push_back({q.token, reinterpret_cast<void*>(q.args[1]), q.args[2]});
        break;
      case opcode::send: {
        if (s.listening) return fail(q.token, errc::bad_handle);
        const std::uint64_t n = q.args[2];
        const void* buf = reinterpret_cast<const void*>(q.args[1]);
        net_state::writer w{q.token, std::vector<char>(n), 0};
        if (n <= detail::request_inline_bytes) std::memcpy(w.data.data(), data, n);
        else if (r_.mem().host_accessible(buf)) std::memcpy(w.data.data(), buf, n);
        else if (const errc e = stage_send(*this, ns, fd, w, buf); e != errc{}) return fail(q.token, e);
        s.writers.push_back(std::move(w));
        break;
      }
      case opcode::net_close: {
        // A send still copying out of the task's memory targets this socket's writer:
        // the copies end first (and what can be sent is sent, in order). No progress
        // call is under way here. (The pumped sockets may take new connections, which
        // can rehash socks: `s` stays valid, `it` may not, so the erase is by key.)
        if (!ns.sends_copying.empty()) finish_net_copies();
        for (auto& r : s.readers) fail(r.token, errc::closed);
        for (auto& w : s.writers) fail(w.token, errc::closed);
        ns.waiting -= s.readers.size() + s.writers.size();
        ::close(fd);  // also leaves the epoll set
        ns.socks.erase(fd);
        return complete(q.token, 0, errc{});
      }
      default: return fail(q.token, errc::invalid_argument);
    }
  } catch (...) {
    return fail(q.token, errc::out_of_memory);
  }
  const std::size_t before = ns.waiting++;
  progress(*this, ns, fd, s);
  if (ns.waiting > before) count_deferred();  // it (or one ahead of it) waits for epoll
  pump_ready(*this, ns);
}

// Defined here, where net_state is complete.
reactor_thread::reactor_thread(reactor& r, unsigned index, detail::mailbox_shared* sh, detail::mailbox* drain_box)
    : r_(r), index_(index), sh_(sh), drain_box_(drain_box) {}

reactor_thread::~reactor_thread() { join(); }

bool reactor_thread::poll_net() noexcept {
  if (!net_ || net_->waiting == 0) return false;
  net_state& ns = *net_;
  epoll_event evs[256];
  const int n = ::epoll_wait(ns.ep, evs, 256, 0);
  bool any = false;
  for (int i = 0; i < n; ++i) {
    auto it = ns.socks.find(evs[i].data.fd);
    if (it != ns.socks.end()) any |= progress(*this, ns, it->first, it->second);
  }
  return pump_ready(*this, ns) || any;
}

void reactor_thread::settle_net_copies() noexcept {
  if (!net_ || !net_->copying_any()) return;
  net_state& ns = *net_;
  const errc e = r_.mem().wait(index_);  // every copy of the round, one wait
  for (const net_state::copying& c : ns.copies) complete(c.token, c.got, e);
  ns.copies.clear();
  for (int fd : ns.sends_copying) {  // the sends' bytes into their writers
    auto it = ns.socks.find(fd);
    if (it == ns.socks.end()) continue;
    for (net_state::writer& w : it->second.writers) {
      if (w.staged == nullptr) continue;
      if (e == errc{}) std::memcpy(w.data.data(), w.staged, w.data.size());
      else w.copy_error = e;
      w.staged = nullptr;
    }
  }
  // Their sockets wait for pump_ready (room reserved by stage_send: no allocation here).
  ns.sends_ready.insert(ns.sends_ready.end(), ns.sends_copying.begin(), ns.sends_copying.end());
  ns.sends_copying.clear();
  ns.stage_used = 0;  // every part of the staging buffer is free again
}

bool reactor_thread::finish_net_copies() noexcept {
  if (!net_ || (!net_->copying_any() && net_->sends_ready.empty())) return false;
  settle_net_copies();
  pump_ready(*this, *net_);
  return true;
}

void reactor_thread::close_sockets() noexcept { net_.reset(); }  // ~net_state closes them

void reactor_thread::fail_net(errc e) noexcept {
  if (!net_ || net_->waiting == 0) return;
  settle_net_copies();  // no writer is dropped while a copy into its staging part runs
  net_->sends_ready.clear();
  for (auto& [fd, s] : net_->socks) {
    for (auto& r : s.readers) fail(r.token, e);
    for (auto& w : s.writers) fail(w.token, e);
    s.readers.clear();
    s.writers.clear();
  }
  net_->waiting = 0;
}

}  // namespace weft::rt
