// bench/echo_load.hpp - the host side of the TCP echo benchmark (bench/net_bench.cpp): the
// baseline epoll echo server and the client load generator. Host-only, plain C++
// (echo_load.cpp); the device-task server is in net_bench.cpp.
//
//   weft_bench::echo::epoll_server srv(conns, msg);  int port = srv.start();
//   load_totals t = weft_bench::echo::run_load(port, conns, msg, timed, deadline);
//   srv.finish(grace);   // the server ends once every client closed
//
// The protocol: a client sends a message of `msg` bytes (connection id, sequence number,
// pattern bytes), waits for all of it to come back, checks every byte, sends the next.
#pragma once
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_support.hpp"

namespace weft_bench::echo {

inline constexpr std::uint32_t max_msg_bytes = 1024;  // a server's echo buffer (a task frame's)
inline constexpr std::uint32_t header_bytes = 8;      // connection id, sequence number
inline constexpr int client_threads = 4;

// Raises the soft RLIMIT_NOFILE to `need` if it is lower; false when the hard limit forbids.
bool raise_fd_limit(rlim_t need);

// One thread, level-triggered, non-blocking: it reads up to one message's worth and sends it
// back, like each weft task. A send that the socket takes only in part keeps the rest and
// waits for EPOLLOUT, reading nothing more from that connection meanwhile. It ends once it
// has accepted `conns` connections and seen each of them close.
class epoll_server {
 public:
  epoll_server(int conns, std::uint32_t msg) : conns_(conns), msg_(msg) {}
  ~epoll_server();
  epoll_server(const epoll_server&) = delete;
  epoll_server& operator=(const epoll_server&) = delete;
  // Listens on 0.0.0.0 at an ephemeral port and starts the thread; the port, or -1.
  int start();
  // Waits up to `limit` for the server to end by itself, then stops it; true if it ended.
  bool finish(std::chrono::milliseconds limit);
  // After finish(): bytes sent back, connections that failed.
  std::uint64_t echoed() const { return echoed_; }
  int errors() const { return errors_; }

 private:
  struct pending {
    std::vector<unsigned char> out;  // bytes not yet sent back
    std::size_t off = 0;
  };
  bool watch(int fd, std::uint32_t events, int op);
  void stop();
  void drop(int fd, bool error);
  void accept_all();
  bool flush(int fd, pending& p);
  void serve(int fd, std::uint32_t events);
  void run();

  int conns_;
  std::uint32_t msg_;
  int listen_fd_ = -1, ep_ = -1, stop_fd_ = -1, port_ = 0;
  int accepted_ = 0, closed_ = 0, errors_ = 0;
  std::uint64_t echoed_ = 0;
  std::unordered_map<int, pending> open_;
  std::thread thread_;
  std::atomic<bool> done_{false};
};

struct load_result {
  std::vector<double> rtt_us;  // timed round trips
  std::uint64_t ok = 0;        // messages echoed intact (untimed ones included)
  std::uint64_t corrupt = 0;   // echoed with at least one wrong byte
  int failed_conns = 0;        // closed, reset or out of step before their last message
  double timed_s = 0;          // the timed phase, first thread in to last thread out
};

struct load_totals {
  load_result r;
  std::uint64_t expected = 0;  // connections x (1 + timed)
  std::uint64_t lost = 0;      // expected - ok: missing, on a failed connection, or corrupt
  std::string error;
};

// Runs the whole load against 127.0.0.1:port: client_threads threads share the connections;
// each connects its share, makes one untimed round trip on each, waits for the others (so
// that the timed phase starts with every connection accepted and served), then makes `timed`
// timed round trips on each, and closes its connections. What is not back intact by
// `deadline` is lost.
load_totals run_load(int port, int conns, std::uint32_t msg, std::uint32_t timed, clock_type::time_point deadline);

}  // namespace weft_bench::echo
