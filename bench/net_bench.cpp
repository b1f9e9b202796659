// TCP echo served by device tasks, beside a plain epoll echo server, in the same run (issue 4:
// "1,000 concurrent connections, 64 B messages | p99 <= 2x a plain epoll echo server on the
// host; no lost messages | aim p99 <= 1.2x").
//
//   BM_tcp_echo/<connections>/<message bytes>/<timed messages per connection>
//
// Each iteration runs the same load twice: first against a one-thread, level-triggered,
// non-blocking epoll echo server on the host (the baseline, echo_load.cpp), then against weft, where a root
// task listens, accepts every connection and spawns one task per connection that echoes with
// net::conn::recv/send until the peer closes. The load: 4 client threads (epoll,
// non-blocking, TCP_NODELAY) open all connections, make one untimed round trip on each (so
// every connection is accepted and served before timing starts), wait for each other, then
// run closed-loop round trips: send one message carrying (connection id, sequence number,
// pattern bytes), wait for the whole echo, compare every byte with what was sent, record the
// round-trip time, send the next. Counters: p50/p99 of those round trips for each server,
// weft's p99 over epoll's, messages expected, lost (not echoed intact: missing, failed
// connection or corrupt), corrupt (echoed with a wrong byte). A run that is not done after
// 30 s (WEFT_BENCH_NET_TIMEOUT_S) counts what is missing as lost and fails the benchmark, as
// does any lost message or a byte count that differs between the clients and the server.
//
// The backend: WEFT_BENCH_BACKEND=host|cuda, by default cuda in a CUDA build, else host.
//   here:  cmake --preset cuda && cmake --build --preset cuda -j2 --target weft_bench_net
//   GPU:   OUT=$OUT scripts/gpu-bench   (runs build/cuda/bench/weft_bench_net when present), or
//          LD_LIBRARY_PATH=build/cuda/bench build/cuda/bench/weft_bench_net --benchmark_counters_tabular=true
//   host:  WEFT_BENCH_BACKEND=host build/host/bench/weft_bench_net   (a sanity check, not a claim)
//
// Why 200 timed messages per connection: under closed-loop load the round trip is set by the
// server's throughput, RTT ~= connections / (messages per second), not by one message's path.
// 1000 x 200 = 200,000 round trips take about 3 s for an epoll server at the ~60k msg/s it
// managed on a 2-core development machine, and 2-4 s for weft if it reaches the 0.13M requests/s
// that host_call did on an H200 (two requests per echo: recv, send), well inside the time limit.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <weft/weft.hpp>

#include "../tests/shared_array.hpp"  // memory the host reads and a task writes, on either backend
#include "bench_support.hpp"
#include "echo_load.hpp"

namespace {

using weft_bench::clock_type;
using weft_bench::percentile;
using weft_bench::echo::header_bytes;
using weft_bench::echo::load_totals;
using weft_bench::echo::max_msg_bytes;

// ---------------------------------------------------------------- weft: the device-task server
struct serve_state {
  int pending = 1;  // the root's own count plus one per live connection task
  int conn_errors = 0;
  int first_error = 0;
  std::uint64_t echoed = 0;
  weft::event all_done;
};

struct serve_out {
  int listen_code, accept_code, spawn_code, accepted, conn_errors, first_error;
  std::uint64_t echoed;
};

template <class R>
WEFT_HOST_DEVICE int code_of(const R& r) {
  return r ? 0 : static_cast<int>(r.error());
}

WEFT_HOST_DEVICE void leave(serve_state* s) {
  if (weft::detail::device_atomic<int>(s->pending).fetch_add(-1, weft::detail::mo_acq_rel) == 1) s->all_done.set();
}

// One connection: echo what each recv gives until the peer closes (recv returns 0). TCP may
// split a message: a short recv is echoed as it is and the client reassembles, as with the
// epoll server. send writes its whole buffer (net.hpp) and returns the length; anything else
// counts as an error. The buffer is in the frame (GPU memory on the cuda backend). A 64 B
// message takes the inline path on recv (<= 104 B: the bytes ride in the completion slot and
// the drainer copies them into the frame) and on send too (<= 184 B: the bytes ride in the
// request slot); in host memory both are memcpy.
WEFT_HOST_DEVICE weft::task<void> echo_conn(weft::net::conn c, std::uint32_t msg, serve_state* s) {
  unsigned char buf[max_msg_bytes];
  std::uint64_t echoed = 0;
  int err = 0;
  for (;;) {
    auto n = co_await c.recv(buf, msg);
    if (!n) {
      err = code_of(n);
      break;
    }
    if (*n == 0) break;
    auto w = co_await c.send(buf, *n);
    if (!w || *w != *n) {
      err = w ? static_cast<int>(weft::errc::io_error) : code_of(w);
      break;
    }
    echoed += *w;
  }
  const int close_err = code_of(co_await c.close());
  if (err == 0) err = close_err;
  weft::detail::device_atomic<std::uint64_t>(s->echoed).fetch_add(echoed, weft::detail::mo_relaxed);
  if (err != 0) {
    weft::detail::device_atomic<int>(s->conn_errors).fetch_add(1, weft::detail::mo_relaxed);
    int none = 0;
    weft::detail::device_atomic<int>(s->first_error).compare_exchange_strong(none, err, weft::detail::mo_relaxed,
                                                                             weft::detail::mo_relaxed);
  }
  leave(s);
}

// Listens on an ephemeral port, publishes it in *port_out, accepts `conns` connections,
// spawns one detached echo task for each, then waits for the last of them to finish.
WEFT_HOST_DEVICE weft::task<serve_out> serve_root(int* port_out, int conns, std::uint32_t msg) {
  serve_out o{};
  serve_state s;
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
    ++o.accepted;
    weft::detail::device_atomic<int>(s.pending).fetch_add(1, weft::detail::mo_relaxed);
    weft::join_handle<void> h = weft::spawn(echo_conn(*c, msg, &s));  // dropped: detached
    if (!h) {
      o.spawn_code = static_cast<int>(h.error());
      leave(&s);
      (void)co_await c->close();
      break;
    }
  }
  (void)co_await l->close();
  leave(&s);
  co_await s.all_done.wait();
  o.conn_errors = s.conn_errors;
  o.first_error = s.first_error;
  o.echoed = s.echoed;
  co_return o;
}

#if WEFT_CUDA_COMPILE
[[maybe_unused]] __global__ void net_bench_roots_compile_for_device(int* p, int n) { (void)serve_root(p, n, 64); }
#endif

// ---------------------------------------------------------------- the two runs
struct server_run {
  load_totals load;
  std::uint64_t server_echoed = 0;  // bytes the server says it sent back
  std::string error;
};

struct run_params {
  int conns;
  std::uint32_t msg, timed;
  std::chrono::milliseconds timeout;
};

constexpr std::chrono::milliseconds finish_grace{5000};  // for a server whose clients all closed

server_run run_epoll(const run_params& p) {
  server_run out;
  weft_bench::echo::epoll_server srv(p.conns, p.msg);
  const int port = srv.start();
  if (port <= 0) {
    out.error = "epoll server: cannot listen";
    return out;
  }
  out.load = weft_bench::echo::run_load(port, p.conns, p.msg, p.timed, clock_type::now() + p.timeout);
  if (!srv.finish(finish_grace)) out.error = "epoll server: did not see every client close";
  out.server_echoed = srv.echoed();
  if (srv.errors() != 0) out.error += " epoll server: " + std::to_string(srv.errors()) + " connection errors";
  return out;
}

std::string serve_error(const serve_out& o) {
  std::string e;
  if (o.listen_code) e += std::string(" listen: ") + weft::to_string(static_cast<weft::errc>(o.listen_code));
  if (o.accept_code) e += std::string(" accept: ") + weft::to_string(static_cast<weft::errc>(o.accept_code));
  if (o.spawn_code) e += std::string(" spawn: ") + weft::to_string(static_cast<weft::errc>(o.spawn_code));
  if (o.conn_errors)
    e += " " + std::to_string(o.conn_errors) + " connection tasks failed, first: " +
         weft::to_string(static_cast<weft::errc>(o.first_error));
  return e;
}

// Waits for the root's port, runs the load, then waits for the root to end by itself (every
// connection task sees its peer close); past the grace period it shuts the runtime down.
server_run run_weft(weft::backend kind, const run_params& p, std::string* backend_name) {
  server_run out;
  weft_test::shared_array<int> port(1);  // before the runtime, freed after it
  weft::config c;
  c.kind = kind;
  weft::runtime rt(c);
  *backend_name = rt.backend_name();
  const auto deadline = clock_type::now() + p.timeout;
  auto h = rt.spawn([] WEFT_HOST_DEVICE(int* po, int n, std::uint32_t m) { return serve_root(po, n, m); },
                    port.data(), p.conns, p.msg);
  int pt = 0;
  while ((pt = weft::detail::device_atomic<int>(port[0]).load(weft::detail::mo_acquire)) == 0 && !h.is_ready() &&
         clock_type::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (pt > 0) out.load = weft_bench::echo::run_load(pt, p.conns, p.msg, p.timed, deadline);
  const auto until = clock_type::now() + finish_grace;
  while (!h.is_ready() && clock_type::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!h.is_ready()) {
    out.error = "weft server: did not finish; shut down";
    rt.shutdown();
  }
  const weft::result<serve_out> r = h.try_get();
  if (!r) {
    out.error += std::string(" weft root: ") + weft::to_string(r.error());
    return out;
  }
  out.server_echoed = r->echoed;
  out.error += serve_error(*r);
  if (pt <= 0 && out.error.empty()) out.error = "weft server: no port";
  return out;
}

// Empty when the run is clean: no error, nothing lost, and the server echoed exactly the
// bytes that came back intact.
std::string verdict(const char* who, const server_run& s, std::uint32_t msg) {
  std::string e = s.error + (s.load.error.empty() ? "" : " " + s.load.error);
  if (s.load.lost != 0)
    e += " " + std::to_string(s.load.lost) + " of " + std::to_string(s.load.expected) + " messages lost (" +
         std::to_string(s.load.r.corrupt) + " corrupt, " + std::to_string(s.load.r.failed_conns) +
         " connections failed)";
  else if (s.server_echoed != s.load.r.ok * msg)
    e += " server echoed " + std::to_string(s.server_echoed) + " bytes, clients got " +
         std::to_string(s.load.r.ok * msg);
  return e.empty() ? e : std::string(who) + ":" + e + "; ";
}

// WEFT_BENCH_BACKEND=host|cuda; by default cuda in a CUDA build, else host.
bool bench_backend(weft::backend* kind) {
  const char* v = std::getenv("WEFT_BENCH_BACKEND");
  const std::string s = v ? v : (WEFT_CUDA_COMPILE ? "cuda" : "host");
  if (s == "host") *kind = weft::backend::host;
  else if (s == "cuda") *kind = weft::backend::cuda;
  else return false;
  return true;
}

std::chrono::milliseconds run_timeout() {
  const char* v = std::getenv("WEFT_BENCH_NET_TIMEOUT_S");
  const int s = v ? std::atoi(v) : 30;
  return std::chrono::milliseconds(1000LL * (s > 0 ? s : 30));
}

void set_counters(benchmark::State& state, const server_run& base, const server_run& w, std::uint32_t timed) {
  const double b50 = percentile(base.load.r.rtt_us, 0.5), b99 = percentile(base.load.r.rtt_us, 0.99);
  const double w50 = percentile(w.load.r.rtt_us, 0.5), w99 = percentile(w.load.r.rtt_us, 0.99);
  const double timed_msgs = double(state.range(0)) * timed;
  state.counters["epoll_p50_us"] = b50;
  state.counters["epoll_p99_us"] = b99;
  state.counters["weft_p50_us"] = w50;
  state.counters["weft_p99_us"] = w99;
  state.counters["p99_over_epoll"] = b99 > 0 ? w99 / b99 : 0;
  state.counters["epoll_msgs_per_s"] = base.load.r.timed_s > 0 ? timed_msgs / base.load.r.timed_s : 0;
  state.counters["weft_msgs_per_s"] = w.load.r.timed_s > 0 ? timed_msgs / w.load.r.timed_s : 0;
  state.counters["messages"] = double(w.load.expected);
  state.counters["lost"] = double(w.load.lost);
  state.counters["epoll_lost"] = double(base.load.lost);
}

void BM_tcp_echo(benchmark::State& state) {
  const run_params p{static_cast<int>(state.range(0)), static_cast<std::uint32_t>(state.range(1)),
                     static_cast<std::uint32_t>(state.range(2)), run_timeout()};
  weft::backend kind{};
  if (!bench_backend(&kind)) return state.SkipWithError("WEFT_BENCH_BACKEND must be host or cuda");
  if (p.msg < header_bytes || p.msg > max_msg_bytes) return state.SkipWithError("message size out of 8..1024");
  // Both ends of every connection live in this process, plus the listeners and epoll sets.
  if (!weft_bench::echo::raise_fd_limit(static_cast<rlim_t>(2 * p.conns + 256)))
    return state.SkipWithError("RLIMIT_NOFILE cannot be raised to 2 * connections + 256");
  for (auto _ : state) {
    const server_run base = run_epoll(p);
    std::string name = "?";
    server_run w;
    try {
      w = run_weft(kind, p, &name);
    } catch (const weft::error& e) {
      w.error = e.what();
    }
    set_counters(state, base, w, p.timed);
    state.SetLabel(std::string("weft on ") + name);
    state.SetIterationTime(w.load.r.timed_s > 0 ? w.load.r.timed_s : 1e-9);
    const std::string bad = verdict("epoll", base, p.msg) + verdict("weft", w, p.msg);
    if (!bad.empty()) {
      std::fprintf(stderr, "BM_tcp_echo: %s\n", bad.c_str());
      state.SkipWithError(bad.c_str());
    }
  }
}
// Args: connections, message bytes, timed messages per connection (plus one untimed each).
// 1,024 B messages take the staged paths on the cuda backend (recv through the reactor
// thread's pinned staging buffer, send copied out of the frame).
BENCHMARK(BM_tcp_echo)
    ->Args({1000, 64, 200})
    ->Args({100, 64, 2000})
    ->Args({100, 1024, 2000})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
