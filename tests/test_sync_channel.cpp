// weft::channel<T>: order, exactly-once delivery, waiting on full and empty channels,
// close, the try_ operations and capacity 0.
//
// Backend-agnostic, like test_sync.cpp: every root is a WEFT_HOST_DEVICE coroutine run
// through runtime::block_on, sharing state only through frames.
#include <catch2/catch.hpp>

#include "support.hpp"

using weft::errc;
using weft_test::any_backend_config;
using weft_test::atomic_add;
using weft_test::atomic_load;
using weft_test::code;
using weft_test::code_of;

namespace {

WEFT_HOST_DEVICE weft::task<void> send_range(weft::channel<int>& ch, int from, int to) {
  for (int v = from; v < to; ++v) (void)co_await ch.send(v);
}

WEFT_HOST_DEVICE weft::task<int> spsc_root(int n, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  weft::join_handle<void> p = weft::spawn(send_range(ch, 0, n));
  int in_order = 0;
  for (int i = 0; i < n; ++i) {
    weft::result<int> r = co_await ch.recv();
    if (r && *r == i) ++in_order;
  }
  co_await std::move(p);
  co_return in_order;
}

WEFT_HOST_DEVICE weft::task<void> drain_counting(weft::channel<int>& ch, int* seen) {
  for (;;) {
    weft::result<int> r = co_await ch.recv();
    if (!r) co_return;  // closed and drained
    atomic_add(seen[*r], 1);
  }
}

constexpr int mpmc_max_items = 8000;

// Producers send disjoint ranges; consumers mark each item seen; returns how many items
// were seen exactly once (all of them, or something was lost or duplicated).
WEFT_HOST_DEVICE weft::task<int> mpmc_root(int producers, int consumers, int per_producer, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  int seen[mpmc_max_items] = {};
  weft::join_handle<void> ps[16];
  weft::join_handle<void> cs[16];
  for (int i = 0; i < consumers; ++i) cs[i] = weft::spawn(drain_counting(ch, seen));
  for (int i = 0; i < producers; ++i) ps[i] = weft::spawn(send_range(ch, i * per_producer, (i + 1) * per_producer));
  for (int i = 0; i < producers; ++i) co_await std::move(ps[i]);
  ch.close();
  for (int i = 0; i < consumers; ++i) co_await std::move(cs[i]);
  int exactly_once = 0;
  for (int v = 0; v < producers * per_producer; ++v) exactly_once += seen[v] == 1;
  co_return exactly_once;
}

WEFT_HOST_DEVICE weft::task<int> send_and_report(weft::channel<int>& ch, int v, int& finished) {
  weft::result<void> r = co_await ch.send(v);
  atomic_add(finished, 1);
  co_return code_of(r);
}

struct full_channel_report {
  int finished_before_reading;  // sends that completed with no reader: at most the capacity
  int received;
  int received_mask;            // bit v set for each value v received
  int failed_sends;
  int left_after;               // try_recv after the drain: would_block
};

WEFT_HOST_DEVICE weft::task<full_channel_report> full_channel_root(int senders, int capacity) {
  weft::channel<int> ch(static_cast<std::uint32_t>(capacity));
  int finished = 0;
  weft::join_handle<int> hs[16];
  for (int i = 0; i < senders; ++i) hs[i] = weft::spawn(send_and_report(ch, i + 1, finished));
  for (int k = 0; k < 200; ++k) co_await weft::yield();  // let every sender reach the full channel
  full_channel_report rep{atomic_load(finished), 0, 0, 0, 0};
  for (int i = 0; i < senders; ++i) {
    weft::result<int> r = co_await ch.recv();
    if (!r) break;
    ++rep.received;
    rep.received_mask |= 1 << *r;
  }
  for (int i = 0; i < senders; ++i) rep.failed_sends += (co_await std::move(hs[i])) != 0;
  rep.left_after = code_of(ch.try_recv());
  co_return rep;
}

WEFT_HOST_DEVICE weft::task<int> recv_code(weft::channel<int>& ch) { co_return code_of(co_await ch.recv()); }

struct close_report {
  int waiting_receivers_closed;  // receivers parked at close() that got errc::closed
  int drained_in_order;          // items buffered before close() received afterwards, in order
  int recv_after_drain;          // then errc::closed
  int send_after_close;          // errc::closed
  int try_send_after_close;      // errc::closed
  int try_recv_after_close;      // errc::closed
  int waiting_sender;            // a sender parked on a full channel at close(): errc::closed
};

WEFT_HOST_DEVICE weft::task<close_report> close_root() {
  close_report rep{};
  {
    weft::channel<int> empty(4);
    weft::join_handle<int> rs[3];
    for (auto& r : rs) r = weft::spawn(recv_code(empty));
    for (int k = 0; k < 100; ++k) co_await weft::yield();
    empty.close();
    for (auto& r : rs) rep.waiting_receivers_closed += (co_await std::move(r)) == code(errc::closed);
  }
  weft::channel<int> ch(3);
  for (int v = 1; v <= 3; ++v) (void)co_await ch.send(v);
  int finished = 0;
  weft::join_handle<int> blocked = weft::spawn(send_and_report(ch, 4, finished));
  for (int k = 0; k < 100; ++k) co_await weft::yield();
  ch.close();
  rep.waiting_sender = co_await std::move(blocked);
  for (int v = 1; v <= 3; ++v) {
    weft::result<int> r = co_await ch.recv();
    rep.drained_in_order += (r && *r == v);
  }
  rep.recv_after_drain = code_of(co_await ch.recv());
  rep.send_after_close = code_of(co_await ch.send(9));
  rep.try_send_after_close = code_of(ch.try_send(9));
  rep.try_recv_after_close = code_of(ch.try_recv());
  co_return rep;
}

WEFT_HOST_DEVICE weft::task<int> channel_try_root() {
  weft::channel<int> ch(2);
  int ok = 0;
  ok += code_of(ch.try_recv()) == code(errc::would_block);
  ok += code_of(ch.try_send(1)) == 0;
  const int two = 2;
  ok += code_of(ch.try_send(two)) == 0;
  ok += code_of(ch.try_send(3)) == code(errc::queue_full);
  ok += ch.size() == 2 && ch.capacity() == 2;
  weft::result<int> a = ch.try_recv();
  weft::result<int> b = co_await ch.recv();
  ok += a && *a == 1 && b && *b == 2;
  ok += code_of(ch.try_recv()) == code(errc::would_block);
  co_return ok;
}

WEFT_HOST_DEVICE weft::task<int> channel_zero_root() {
  weft::channel<int> ch(0);
  const int bad = code(errc::invalid_argument);
  int ok = 0;
  ok += code(ch.error()) == bad;
  ok += code_of(ch.try_send(1)) == bad;
  ok += code_of(ch.try_recv()) == bad;
  ok += code_of(co_await ch.send(1)) == bad;  // does not wait
  ok += code_of(co_await ch.recv()) == bad;   // does not wait
  ch.close();
  ok += code_of(co_await ch.recv()) == bad;
  co_return ok;
}

WEFT_HOST_DEVICE weft::task<void> recv_into(weft::channel<int>& ch, int& got) {
  weft::result<int> r = co_await ch.recv();
  got = r ? *r : -code_of(r);
}

// One worker: each task spawned runs, and parks on the channel, at the spawner's next
// yield, so the waiters queue in the order they were spawned. Receivers 1..4 wait on an
// empty channel and sends 1..4 follow; then senders 1..4 wait on a full one (holding 0)
// and receives follow. Returns what receiver k got as digit k, then what the receives
// got (five digits): 1234 then 01234, oldest first on both sides (no waiter overtaken).
WEFT_HOST_DEVICE weft::task<int> oldest_first_root() {
  weft::channel<int> ch(1);
  int got[4] = {};
  weft::join_handle<void> rs[4];
  for (int i = 0; i < 4; ++i) {
    rs[i] = weft::spawn(recv_into(ch, got[i]));
    co_await weft::yield();
  }
  for (int v = 1; v <= 4; ++v) (void)ch.try_send(v);  // each to the oldest waiting receiver
  for (auto& r : rs) co_await std::move(r);
  int receivers = 0;
  for (int g : got) receivers = receivers * 10 + g;

  (void)ch.try_send(0);  // full
  int finished = 0;
  weft::join_handle<int> ss[4];
  for (int i = 0; i < 4; ++i) {
    ss[i] = weft::spawn(send_and_report(ch, i + 1, finished));
    co_await weft::yield();
  }
  int received = 0;
  for (int i = 0; i < 5; ++i) {  // the buffered 0, then the senders' items as they refill it
    weft::result<int> r = co_await ch.recv();
    received = received * 10 + (r ? *r : 9);
  }
  for (auto& s : ss) co_await std::move(s);
  co_return receivers * 100000 + received;  // 1234'01234
}

struct close_twice_report {
  int receivers_closed;  // receivers waiting at the first close(): each woken once, with closed
  int is_closed;
  int drained_in_order;  // items buffered before the closes, received after them
  int recv_after_drain;  // closed
  int try_send_after;    // closed
};

// close() twice, with receivers waiting and with items buffered: the second changes
// nothing (no second wake, no item dropped).
WEFT_HOST_DEVICE weft::task<close_twice_report> close_twice_root() {
  close_twice_report rep{};
  {
    weft::channel<int> empty(2);
    weft::join_handle<int> rs[3];
    for (auto& r : rs) r = weft::spawn(recv_code(empty));
    for (int k = 0; k < 100; ++k) co_await weft::yield();
    empty.close();
    empty.close();
    for (auto& r : rs) rep.receivers_closed += (co_await std::move(r)) == code(errc::closed);
  }
  weft::channel<int> ch(3);
  for (int v = 1; v <= 3; ++v) (void)ch.try_send(v);
  ch.close();
  ch.close();
  rep.is_closed = ch.is_closed();
  for (int v = 1; v <= 3; ++v) {
    weft::result<int> r = co_await ch.recv();
    rep.drained_in_order += (r && *r == v);
  }
  rep.recv_after_drain = code_of(co_await ch.recv());
  rep.try_send_after = code_of(ch.try_send(4));
  co_return rep;
}

// Move-only, and shows whether it was moved from (v == -1 then).
struct marked {
  int v;
  WEFT_HOST_DEVICE explicit marked(int x) noexcept : v(x) {}
  WEFT_HOST_DEVICE marked(marked&& o) noexcept : v(o.v) { o.v = -1; }
  marked(const marked&) = delete;
  marked& operator=(const marked&) = delete;
};

// try_send(T&&) that fails (full, then closed) must leave its argument as it was; one
// that succeeds moves it. Returns a bit per expectation met (all: 63).
WEFT_HOST_DEVICE weft::task<int> try_send_keeps_item_root() {
  weft::channel<marked> ch(1);
  int ok = 0;
  marked a(5);
  ok |= (code_of(ch.try_send(static_cast<marked&&>(a))) == 0 && a.v == -1) << 0;  // (the probe sees a move)
  marked b(7);
  ok |= (code_of(ch.try_send(static_cast<marked&&>(b))) == code(errc::queue_full)) << 1;
  ok |= (b.v == 7) << 2;  // refused while full: still the caller's
  weft::result<marked> r = ch.try_recv();
  ok |= (r && r->v == 5) << 3;
  ch.close();
  marked c(9);
  ok |= (code_of(ch.try_send(static_cast<marked&&>(c))) == code(errc::closed)) << 4;
  ok |= (c.v == 9) << 5;  // refused when closed: still the caller's
  co_return ok;
}

// A buffer larger than the frame pool's largest block (1 MiB): the channel is broken with
// out_of_memory, and every operation says so without waiting.
WEFT_HOST_DEVICE weft::task<int> channel_oom_root() {
  weft::channel<std::uint64_t> ch(std::uint32_t{1} << 18);  // 2 MiB of items
  const int oom = code(errc::out_of_memory);
  int ok = 0;
  ok += code(ch.error()) == oom;
  ok += code_of(ch.try_send(1)) == oom;
  ok += code_of(ch.try_recv()) == oom;
  ok += code_of(co_await ch.send(1)) == oom;  // does not wait
  ok += code_of(co_await ch.recv()) == oom;   // does not wait
  ch.close();
  ok += code_of(co_await ch.recv()) == oom;
  weft::channel<std::uint64_t> small(16);  // the pool itself is fine
  ok += code(small.error()) == 0 && code_of(small.try_send(3)) == 0;
  co_return ok;
}

#if WEFT_CUDA_COMPILE
// Makes the device pass compile these roots (see test_sync.cpp's kernel for why).
__global__ void channel_roots_compile_for_device(int n) {
  (void)spsc_root(n, n);
  (void)mpmc_root(n, n, n, n);
  (void)full_channel_root(n, n);
  (void)close_root();
  (void)channel_try_root();
  (void)channel_zero_root();
  (void)oldest_first_root();
  (void)close_twice_root();
  (void)try_send_keeps_item_root();
  (void)channel_oom_root();
}
#endif

}  // namespace

TEST_CASE("a channel delivers one sender's items to one receiver in order", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int c) { return spsc_root(n, c); }, 2000, 4) == 2000);
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int n, int c) { return spsc_root(n, c); }, 500, 1) == 500);
}

TEST_CASE("a channel with many senders and receivers delivers every item exactly once", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int p, int c, int k, int cap) { return mpmc_root(p, c, k, cap); }, 4, 4,
                      500, 8) == 2000);
}

TEST_CASE("a small channel under heavy many-to-many traffic loses and duplicates nothing", "[sync][stress]") {
  weft::runtime rt(any_backend_config());
  for (int round = 0; round < 5; ++round) {
    for (int cap : {1, 3, 64}) {
      INFO("capacity " << cap);
      REQUIRE(rt.block_on([] WEFT_HOST_DEVICE(int p, int c, int k, int c2) { return mpmc_root(p, c, k, c2); }, 8,
                          6, 1000, cap) == 8000);
    }
  }
}

TEST_CASE("senders wait on a full channel with no reader and none of their items is lost", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE(int s, int c) { return full_channel_root(s, c); }, 8, 2);
  REQUIRE(r.finished_before_reading <= 2);
  REQUIRE(r.received == 8);
  REQUIRE(r.received_mask == 0x1fe);  // values 1..8, each once
  REQUIRE(r.failed_sends == 0);
  REQUIRE(r.left_after == code(errc::would_block));
}

TEST_CASE("close wakes waiting receivers and senders with closed, and receivers drain what is left first",
          "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE() { return close_root(); });
  REQUIRE(r.waiting_receivers_closed == 3);
  REQUIRE(r.waiting_sender == code(errc::closed));
  REQUIRE(r.drained_in_order == 3);
  REQUIRE(r.recv_after_drain == code(errc::closed));
  REQUIRE(r.send_after_close == code(errc::closed));
  REQUIRE(r.try_send_after_close == code(errc::closed));
  REQUIRE(r.try_recv_after_close == code(errc::closed));
}

TEST_CASE("try_send reports queue_full and try_recv would_block instead of waiting", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return channel_try_root(); });
  REQUIRE(r == 7);
}

TEST_CASE("a channel of capacity 0 is invalid and every operation reports invalid_argument", "[sync]") {
  weft::runtime rt(any_backend_config());
  const int r = rt.block_on([] WEFT_HOST_DEVICE() { return channel_zero_root(); });
  REQUIRE(r == 6);
}

// One worker, so that the waiters queue in spawn order (host backend: a GPU worker is a
// warp of 32 lanes, which would run the spawned tasks side by side).
TEST_CASE("a channel serves its waiting receivers and its waiting senders oldest first", "[sync]") {
  weft::runtime rt(weft_test::host_config(1));
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return oldest_first_root(); }) == 123401234);
}

TEST_CASE("close is idempotent: a second close wakes nobody again and drops no buffered item", "[sync]") {
  weft::runtime rt(any_backend_config());
  const auto r = rt.block_on([] WEFT_HOST_DEVICE() { return close_twice_root(); });
  REQUIRE(r.receivers_closed == 3);
  REQUIRE(r.is_closed == 1);
  REQUIRE(r.drained_in_order == 3);
  REQUIRE(r.recv_after_drain == code(errc::closed));
  REQUIRE(r.try_send_after == code(errc::closed));
}

TEST_CASE("a try_send refused because the channel is full or closed leaves the moved-from argument untouched",
          "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return try_send_keeps_item_root(); }) == 63);
}

TEST_CASE("a channel whose buffer cannot be allocated reports out_of_memory from every operation", "[sync]") {
  weft::runtime rt(any_backend_config());
  REQUIRE(rt.block_on([] WEFT_HOST_DEVICE() { return channel_oom_root(); }) == 7);
}

// See support.hpp: a runtime's device code must come from one CUDA translation unit.
int weft_test::block_on_from_another_translation_unit(weft::runtime& rt) {
  auto r = rt.try_block_on([] WEFT_HOST_DEVICE() -> weft::task<int> { co_return 7; });
  return r ? *r : -static_cast<int>(r.error());
}
