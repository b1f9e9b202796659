// src/reactor_thread.hpp - one reactor thread and its mailbox (see reactor.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "reactor.hpp"

namespace weft::rt {

struct net_state;  // reactor_net.cpp

class reactor_thread {
 public:
  reactor_thread(reactor& r, unsigned index, detail::mailbox_shared* sh, detail::mailbox* drain_box);
  ~reactor_thread();

  void start();
  void join() noexcept;
  void request_stop() noexcept { stop_.store(true, std::memory_order_release); }
  // After join: closes the sockets the tasks left open (a listener stops accepting, its
  // port is free again, peers see the close) and forgets them.
  void close_sockets() noexcept;
  // Fault drill: from now on every request fails with host_unavailable.
  void stop_service() noexcept { failing_.store(true, std::memory_order_release); }
  // True when everything taken has been completed and the task side took it all.
  bool quiescent() const noexcept { return quiet_.load(std::memory_order_acquire); }
  // True when the task side has handed back every completion this thread published: each
  // answer has been read and its task woken. Only on this thread, or after it was joined.
  bool answers_handed_back() noexcept { return handed_back() == comp_tail_; }

  std::uint64_t requests() const noexcept { return requests_.load(std::memory_order_relaxed); }
  std::uint64_t completions() const noexcept { return completions_.load(std::memory_order_relaxed); }
  std::uint64_t deferred() const noexcept { return deferred_.load(std::memory_order_relaxed); }
  std::uint64_t max_queued() const noexcept { return max_queued_.load(std::memory_order_relaxed); }

  // ---- used by the op handlers (reactor_ops.cpp, reactor_net.cpp)
  // Queues the one completion of request `token`; `data` (n bytes) travels inline.
  void complete(std::uint64_t token, std::uint64_t value, errc e, const void* data = nullptr,
                std::uint32_t n = 0) noexcept;
  void fail(std::uint64_t token, errc e) noexcept { complete(token, 0, e); }
  reactor& owner() noexcept { return r_; }
  unsigned index() const noexcept { return index_; }
  void count_deferred() noexcept { deferred_.fetch_add(1, std::memory_order_relaxed); }
  // The error every request gets when the thread no longer serves (errc{}: it serves).
  errc refusal() const noexcept;
  // Waits for the staged copies started this round, completes those recvs and moves the
  // staged sends' bytes into their writers, freeing the whole staging buffer (before a
  // file transfer reuses it, and when a staged recv or send finds its free part too
  // small). Their sockets are progressed later: it runs inside progress calls.
  void settle_net_copies() noexcept;
  // settle_net_copies, then progresses the sockets whose sends it made sendable (at each
  // round's end; only where no progress call is under way). True when it did anything.
  bool finish_net_copies() noexcept;

 private:
  void run() noexcept;
  bool take_requests() noexcept;
  void dispatch(const detail::request& q, const unsigned char* data) noexcept;
  bool flush() noexcept;
  std::uint64_t handed_back() noexcept;
  bool fire_timers(bool all, errc e) noexcept;
  void update_quiet() noexcept;
  void idle_wait(std::uint64_t idle_since_ns) noexcept;

  // handlers (reactor_ops.cpp)
  void op_host_call(const detail::request& q, const unsigned char* data) noexcept;
  void op_open(const detail::request& q, const unsigned char* data) noexcept;
  void op_read(const detail::request& q) noexcept;
  void op_write(const detail::request& q, const unsigned char* data) noexcept;
  void op_close(const detail::request& q) noexcept;
  void op_print(const detail::request& q, const unsigned char* data) noexcept;
  void op_sleep(const detail::request& q) noexcept;
  // handlers (reactor_net.cpp)
  void op_net(const detail::request& q, const unsigned char* data) noexcept;
  bool poll_net() noexcept;
  void fail_net(errc e) noexcept;

  reactor& r_;
  unsigned index_;
  detail::mailbox_shared* sh_;
  detail::mailbox* drain_box_;  // host backend: the task side's mailbox, drained here
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failing_{false};
  std::atomic<bool> quiet_{true};

  std::uint64_t head_ = 0;          // next request ticket
  std::uint64_t doorbell_seen_ = 0;
  bool rescan_ = true;              // the last scan may have stopped at an unpublished slot
  std::uint64_t comp_tail_ = 0;     // completions published
  std::uint64_t comp_free_ = 0;     // completions handed back (their slots free again)
  std::uint64_t outstanding_ = 0;   // requests taken and not yet completed
  std::deque<detail::completion> queued_;  // completions waiting for ring room

  struct timer {
    std::uint64_t deadline;
    std::uint64_t token;
  };
  std::vector<timer> timers_;  // a min-heap on deadline

  std::unique_ptr<net_state> net_;

  std::atomic<std::uint64_t> requests_{0}, completions_{0}, deferred_{0}, max_queued_{0};
};

std::uint64_t steady_ns() noexcept;

}  // namespace weft::rt
