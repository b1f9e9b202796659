// The mailbox protocol under stress with tiny capacities (host threads standing in for
// warps and the reactor): on the request ring, claims of several slots at once,
// publication out of ticket order, waiters published by a drainer, and a consumer that
// frees slots as the reactor does; on the completion ring, LL words written by one
// thread while another reads them, slots reused as soon as they are handed back.
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <weft/detail/mailbox.hpp>

namespace {

using weft::detail::host_op;
using weft::detail::mailbox;
using weft::detail::mailbox_shared;
using weft::detail::request_slot;
using weft::detail::system_atomic;

struct ring {
  std::unique_ptr<request_slot[]> slots;
  std::unique_ptr<std::uint64_t[]> comp_words, comp_data;
  mailbox_shared sh{};
  mailbox m{};
  explicit ring(std::uint32_t cap, std::uint32_t comp_cap = 2)
      : slots(new request_slot[cap]()),
        comp_words(new std::uint64_t[weft::detail::completion_header_words * comp_cap]()),
        comp_data(new std::uint64_t[weft::detail::completion_data_words * comp_cap]()) {
    sh.req_capacity = cap;
    sh.comp_capacity = comp_cap;
    sh.slots = slots.get();
    sh.comp_words = comp_words.get();
    sh.comp_data = comp_data.get();
    m = weft::detail::make_mailbox(&sh);
  }
};

// The bytes a test request carries inline: a pattern of its token, of its own length
// (0 to a full slot's 184 bytes, so that laps of one slot leave data words of every age).
std::uint32_t inline_len(std::uint64_t token) { return std::uint32_t(token % (weft::detail::request_inline_bytes + 1)); }
unsigned char inline_byte(std::uint64_t token, std::uint32_t b) { return static_cast<unsigned char>(token * 31 + b); }

// The reactor's side of the request ring (as in src/reactor.cpp): copy out in ticket
// order, then free the slots with one store of req_head.
std::uint64_t consume(ring& r, std::uint64_t& head, std::vector<int>& seen, std::atomic<int>& torn) {
  std::uint64_t took = 0;
  for (;;) {
    weft::detail::request q;
    unsigned char data[weft::detail::request_inline_bytes];
    if (!weft::detail::mailbox_take_request(r.sh, head, &q, data)) break;
    bool ok = q.args[1] == (q.token ^ 0x5a5a5a5a5a5aull) && q.inline_bytes == inline_len(q.token);
    for (std::uint32_t b = 0; ok && b < q.inline_bytes; ++b) ok = data[b] == inline_byte(q.token, b);
    if (!ok) torn.fetch_add(1);
    ++seen.at(q.token);
    ++head;
    ++took;
  }
  if (took) system_atomic<std::uint64_t>(r.sh.req_head).store(head, weft::detail::mo_release);
  return took;
}

// The completion-ring tests hand a 2- or 4-slot ring back and forth between two threads
// some 10^5 times. A side that spins (or sched_yields) while it waits for the other
// burns its time slice whenever the two share a core, and the other side waits that
// slice out: beside two `yes` processes one run took over 600 s (33 s on a busy shared
// machine). So a side that has looked spin_looks times in vain sleeps on a futex
// (std::atomic::wait) until the other side's progress counter moves. The ring is still
// polled as before (the counter only says when to look again), and the first looks of
// every wait are spins, so the reader still meets words mid-write whenever the two
// threads run side by side.
inline constexpr unsigned spin_looks = 256;

struct progress {
  std::atomic<std::uint32_t> count{0};
  // After the ring change it announces (a release store, in program order before this RMW).
  void bump() {
    count.fetch_add(1, std::memory_order_seq_cst);
    count.notify_all();
  }
};

// Calls look() until it returns true; after spin_looks failed looks, sleeps until p moves.
// No wake-up is lost: `seen` is read before the look. A look that misses the other side's
// ring change read `seen` before that side's bump (had it read the bump, whose RMW comes
// after the change, it would have synchronized with it and seen the change), so wait(seen)
// returns once the bump lands, or at once if it already has.
template <class Look>
void wait_until(progress& p, Look&& look) {
  for (unsigned looks = 0;; ++looks) {
    const std::uint32_t seen = p.count.load(std::memory_order_seq_cst);
    if (look()) return;
    if (looks >= spin_looks) p.count.wait(seen, std::memory_order_seq_cst);
  }
}

// The reactor's side of the completion ring (as in src/reactor.cpp, flush): waits until
// the drainer has handed slot c % capacity back (the drainer bumps `handed` after each
// hand-back), then writes completion c there.
void write_when_free(ring& r, std::uint64_t c, const weft::detail::completion& q, progress& handed) {
  if (c >= r.sh.comp_capacity)
    wait_until(handed, [&] { return weft::detail::mailbox_handed_back(r.sh, c - r.sh.comp_capacity); });
  weft::detail::mailbox_write_completion(r.sh, c, q);
}

}  // namespace

TEST_CASE("every request posted through a 4-slot ring is taken exactly once, untorn, with waiters published",
          "[mailbox][stress]") {
  for (std::uint32_t cap : {2u, 4u, 8u}) {
    ring r(cap);
    const int producers = 4, per = 20000, total = producers * per;
    std::vector<host_op> ops(total);
    std::vector<std::array<unsigned char, weft::detail::request_inline_bytes>> bytes(total);
    for (int i = 0; i < total; ++i) {
      const auto token = std::uint64_t(i);
      for (std::uint32_t b = 0; b < inline_len(token); ++b) bytes[i][b] = inline_byte(token, b);
      ops[i].req.op = weft::detail::opcode::nop;
      ops[i].req.token = token;
      ops[i].req.args[1] = token ^ 0x5a5a5a5a5a5aull;
      ops[i].req.inline_bytes = inline_len(token);
      ops[i].inline_src = bytes[i].data();
    }
    std::atomic<int> done_producers{0}, torn{0};
    std::atomic<std::uint64_t> waited{0};
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; ++p) {
      ts.emplace_back([&, p] {
        std::minstd_rand rng(p + 1);
        for (int i = p * per; i < (p + 1) * per;) {
          // A "warp" of 1..4 lanes posting together: one claim for all of them.
          const int k = std::min<int>(1 + int(rng() % 4), (p + 1) * per - i);
          std::uint64_t t = 0;
          const std::uint32_t got = weft::detail::mailbox_claim(r.m, std::uint32_t(k), &t);
          for (int j = 0; j < k; ++j) {
            // Half without the release fence (a GPU poster that takes its own answer).
            if (std::uint32_t(j) < got)
              weft::detail::mailbox_publish(weft::detail::mailbox_stage(r.m, ops[i + j]), t + j, (i + j) % 2 == 0);
            else {
              weft::detail::mailbox_wait_for_space(r.m, &ops[i + j]);
              waited.fetch_add(1);
            }
          }
          i += k;
        }
        done_producers.fetch_add(1);
      });
    }
    std::vector<int> seen(total, 0);
    std::uint64_t head = 0, taken = 0;
    // This thread is both the reactor (consume) and the drainer (publish waiters), as the
    // host backend's reactor thread is.
    while (taken < std::uint64_t(total)) {
      taken += consume(r, head, seen, torn);
      weft::detail::mailbox_publish_waiters(r.m);
      if (done_producers.load() == producers && taken < std::uint64_t(total)) std::this_thread::yield();
    }
    for (auto& t : ts) t.join();
    INFO("capacity " << cap);
    REQUIRE(torn.load() == 0);
    int wrong = 0;
    for (int v : seen) wrong += v != 1;
    REQUIRE(wrong == 0);
    REQUIRE(waited.load() > 0);  // the tiny ring really was full at times
    REQUIRE(r.m.backlog_head == nullptr);
    REQUIRE(r.m.waiters == 0);
  }
}

// The completion ring: one thread writes completions as the reactor does (waiting for a
// free slot, inline data of every length), another delivers them as a drainer does.
// Every completion must arrive exactly once, in order, with its value and its bytes,
// although the writer reuses each slot as soon as the drainer hands it back.
TEST_CASE("every completion through a 2-slot LL ring arrives once, in order, with its value and inline bytes",
          "[mailbox][stress]") {
  namespace d = weft::detail;
  for (std::uint32_t cap : {2u, 4u}) {
    ring r(2, cap);
    progress written, handed;  // the writer's completions, the reader's hand-backs
    const std::uint64_t total = 100000;
    std::vector<host_op> ops(64);
    std::vector<std::array<unsigned char, d::completion_inline_bytes>> bufs(ops.size());
    std::vector<d::task_header> tasks(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      ops[i].task = &tasks[i];
      ops[i].inline_dst = bufs[i].data();
    }
    auto bytes_of = [](std::uint64_t c) { return std::uint32_t(c % (d::completion_inline_bytes + 1)); };
    std::thread writer([&] {
      for (std::uint64_t c = 0; c < total; ++c) {
        d::completion q{};
        q.token = reinterpret_cast<std::uint64_t>(&ops[c % ops.size()]);
        q.value = c * 0x9e3779b97f4a7c15ull;
        q.error = std::uint32_t(c % 7);
        q.inline_bytes = bytes_of(c);
        for (std::uint32_t b = 0; b < q.inline_bytes; ++b) q.data[b] = static_cast<unsigned char>(c + b);
        write_when_free(r, c, q, handed);
        written.bump();
      }
    });
    std::uint64_t next = 0, wrong = 0, empty_polls = 0;
    while (next < total) {
      d::completion_view v;
      wait_until(written, [&] {
        if (d::mailbox_read_completion(r.m, next, &v)) return true;
        ++empty_polls;
        return false;
      });
      host_op& op = ops[next % ops.size()];
      wrong += v.token != reinterpret_cast<std::uint64_t>(&op);
      d::task_header* woken = d::mailbox_deliver_result(r.m, next, v);
      wrong += woken != op.task;  // the task was idle: the drainer must queue it
      tasks[next % ops.size()].state = 0;
      wrong += op.value != next * 0x9e3779b97f4a7c15ull;
      wrong += static_cast<std::uint32_t>(op.error) != next % 7;
      for (std::uint32_t b = 0; b < bytes_of(next); ++b) wrong += bufs[next % ops.size()][b] != static_cast<unsigned char>(next + b);
      d::mailbox_hand_back(r.m, next, v.inline_bytes != 0);  // the writer may reuse the slot now
      handed.bump();
      ++next;
    }
    writer.join();
    INFO("capacity " << cap << ", empty polls " << empty_polls);
    REQUIRE(wrong == 0);
    d::completion_view v;
    REQUIRE_FALSE(d::mailbox_read_completion(r.m, total, &v));  // nothing past the last one
  }
}

// A poster that waits for its own answer in place (the GPU's await_in_place) drains the
// completion ring as the drainer, stopping after its own answer. One thread writes, per
// round, 0-3 answers for other tasks and then the poster's; the poster must get its own
// value with no wake (its task stays RUNNING and untouched), stop right after it, and
// pass every other task to the queue exactly once, with its value, through a ring of 2
// or 4 slots that the writer reuses as soon as they are handed back.
namespace {
struct in_place_rig {
  explicit in_place_rig(std::uint32_t cap) : r(2, cap), others(3), other_tasks(3), queued(3) {
    for (std::size_t i = 0; i < others.size(); ++i) others[i].task = &other_tasks[i];
    me.state = weft::detail::task_state::running;
    own.task = &me;
  }
  ring r;
  std::vector<host_op> others;
  std::vector<weft::detail::task_header> other_tasks;
  std::vector<std::uint64_t> queued;  // answers passed to the queue, per other task
  host_op own{};
  weft::detail::task_header me{};
  progress written, handed;  // the writer's completions, the poster's hand-backs
  std::uint64_t next = 0, wrong = 0;
  // How many rounds the test runs: the writer lowers it from max_rounds when the time
  // budget is spent (write_in_place_rounds); the poster reads it after each round.
  std::atomic<std::uint32_t> rounds{max_rounds};
  static constexpr std::uint32_t max_rounds = 20000, min_rounds = 400;
  static constexpr std::chrono::seconds budget{2};
};

// The writer's side: in round `round`, answers for others[0 .. round % 4 - 1], then own's.
// All max_rounds take ~0.2 s when the two threads have cores of their own. On a loaded
// machine every hand-over of the 2- or 4-slot ring waits for a time slice, so after
// `budget` the writer makes the current round the last (never before min_rounds: every
// pattern of a round against the ring's slots many times over). It stores the count
// before it writes the round's own answer, whose word 0 is a release store: the poster,
// which acquires that word before its round ends, then reads the new count.
void write_in_place_rounds(in_place_rig& g) {
  const auto until = std::chrono::steady_clock::now() + in_place_rig::budget;
  std::uint64_t c = 0;
  for (std::uint32_t round = 0; round < g.rounds.load(std::memory_order_relaxed); ++round) {
    for (std::uint32_t k = 0; k <= round % 4; ++k, ++c) {
      weft::detail::completion q{};
      const bool last = k == round % 4;
      if (last && round + 1 >= in_place_rig::min_rounds && std::chrono::steady_clock::now() > until)
        g.rounds.store(round + 1, std::memory_order_relaxed);
      q.token = reinterpret_cast<std::uint64_t>(last ? &g.own : &g.others[k]);
      q.value = last ? round : std::uint64_t(round) << 8 | k;
      write_when_free(g.r, c, q, g.handed);
      g.written.bump();
    }
  }
}

// The poster's side of one round: drains (at most 2 a call) until its own answer.
void drain_in_place_round(in_place_rig& g, std::uint32_t round) {
  namespace d = weft::detail;
  const std::uint64_t first = g.next;
  bool done = false, read_inline = false;
  while (!done) {
    const std::uint64_t from = g.next;
    std::uint32_t got = 0;
    wait_until(g.written, [&] {  // a call that finds nothing delivers nothing: look again
      got = d::mailbox_drain_until_own(g.r.m, &g.next, &g.own, 2, &done, &read_inline, [&](d::task_header* t) {
        const std::size_t k = static_cast<std::size_t>(t - g.other_tasks.data());
        g.wrong += g.others[k].value != (std::uint64_t(round) << 8 | k);
        ++g.queued[k];
        t->state = 0;  // the queue ran it: idle again for its next answer
      });
      return got != 0;
    });
    g.wrong += got > 2;  // at most `max` answers per call
    d::mailbox_hand_back_range(g.r.m, from, g.next, read_inline);
    g.handed.bump();
  }
  g.wrong += g.own.value != round;
  g.wrong += g.next - first != round % 4 + 1;  // stopped right after its own answer
  g.wrong += g.me.state != d::task_state::running;  // never woken
}
}  // namespace

TEST_CASE("a task waiting in place takes its own answer without a wake and queues the others it passes, once",
          "[mailbox][stress]") {
  namespace d = weft::detail;
  for (std::uint32_t cap : {2u, 4u}) {
    in_place_rig g(cap);
    std::thread writer([&] { write_in_place_rounds(g); });
    std::uint32_t round = 0;
    for (; round < g.rounds.load(std::memory_order_relaxed); ++round) drain_in_place_round(g, round);
    writer.join();
    INFO("capacity " << cap << ", rounds " << round);
    REQUIRE(round == g.rounds.load());
    REQUIRE(round >= in_place_rig::min_rounds);
    REQUIRE(g.wrong == 0);
    // Other task k is answered in the rounds whose round % 4 >= k + 1.
    for (std::uint32_t k = 0; k < g.others.size(); ++k) {
      std::uint64_t expected = 0;
      for (std::uint32_t r = 0; r < round; ++r) expected += r % 4 >= k + 1;
      REQUIRE(g.queued[k] == expected);
    }
    d::completion_view v;  // and nothing past the last round's answers
    REQUIRE_FALSE(d::mailbox_read_completion(g.r.m, g.next, &v));
  }
}

// The lone poster's claim (the GPU's task calling the host again and again): one CAS on
// the ticket after its last claim, refused when someone claimed in between or when its
// remembered head says the ring may be full, so it never takes a slot the reactor has
// not copied out.
TEST_CASE("a hinted claim takes the expected ticket only while nobody claimed and the ring has room", "[mailbox]") {
  namespace d = weft::detail;
  ring r(4);
  std::uint64_t t = 0, head = 99;
  REQUIRE(d::mailbox_claim(r.m, 1, &t, &head) == 1);
  REQUIRE(t == 0);
  REQUIRE(head == 0);
  REQUIRE(d::mailbox_claim_hinted(r.m, {1, head, 4}));        // ticket 1
  REQUIRE_FALSE(d::mailbox_claim_hinted(r.m, {1, head, 4}));  // taken: tail is 2
  REQUIRE(d::mailbox_claim_hinted(r.m, {2, head, 4}));
  REQUIRE(d::mailbox_claim_hinted(r.m, {3, head, 4}));
  REQUIRE_FALSE(d::mailbox_claim_hinted(r.m, {4, head, 4}));  // 4 slots from head 0: full
  REQUIRE(r.m.req_tail == 4);                             // the refusal claimed nothing
  REQUIRE_FALSE(d::mailbox_claim_hinted(r.m, {1, 3, 4}));     // a hint older than its head
  system_atomic<std::uint64_t>(r.sh.req_head).store(2, weft::detail::mo_release);  // the reactor copied 0 and 1
  REQUIRE(d::mailbox_claim_hinted(r.m, {4, 2, 4}));           // a newer head makes room
  REQUIRE(d::mailbox_claim(r.m, 1, &t, &head) == 1);       // the usual claim reads req_head when full-looking
  REQUIRE(t == 5);
  REQUIRE(head == 2);
}

TEST_CASE("a request is taken only once every one of its words has landed, and its inline data is cleared then",
          "[mailbox]") {
  namespace d = weft::detail;
  ring r(2);
  host_op op{};
  const char text[] = "hello, reactor";
  op.req.op = d::opcode::print;
  op.req.token = 0x1234567890abcdefull;
  op.req.args[0] = 0xfeedfacecafebeefull;
  op.req.args[1] = sizeof text;
  op.req.args[5] = ~0ull;
  op.req.inline_bytes = sizeof text;
  op.inline_src = text;
  // Publish ticket 0 elsewhere, then copy its words in one at a time, word 0 first (the
  // order the reactor may see them in: the flags, not the order, decide).
  ring scratch(2);
  d::mailbox_publish(d::mailbox_stage(scratch.m, op), 0, false);
  const std::uint32_t words = d::request_header_words + (op.req.inline_bytes + 3) / 4;
  d::request q;
  unsigned char data[d::request_inline_bytes];
  for (std::uint32_t j = 0; j < words; ++j) {
    REQUIRE_FALSE(d::mailbox_take_request(r.sh, 0, &q, data));
    r.slots[0].words[j] = scratch.slots[0].words[j];
    CHECK(d::mailbox_request_landed(r.sh, 0));
  }
  REQUIRE(d::mailbox_take_request(r.sh, 0, &q, data));
  CHECK(q.op == d::opcode::print);
  CHECK(q.token == op.req.token);
  CHECK(q.args[0] == op.req.args[0]);
  CHECK(q.args[5] == op.req.args[5]);
  CHECK(q.inline_bytes == sizeof text);
  CHECK(std::memcmp(data, text, sizeof text) == 0);
  for (std::uint32_t j = d::request_header_words; j < words; ++j) CHECK(r.slots[0].words[j] == 0);
  CHECK_FALSE(d::mailbox_take_request(r.sh, 2, &q, data));  // the slot's next lap: other flags
}

TEST_CASE("a request header naming more inline bytes than a slot holds comes back as an unknown opcode",
          "[mailbox]") {
  namespace d = weft::detail;
  ring r(2);
  for (std::uint32_t j = 0; j < 64; ++j) r.slots[1].words[j] = d::ll_word(0, d::ll_flag(1));
  r.slots[1].words[0] = d::ll_word(std::uint32_t(d::opcode::write) | (d::request_inline_bytes + 4) << 16, d::ll_flag(1));
  d::request q;
  unsigned char data[d::request_inline_bytes];
  REQUIRE(d::mailbox_take_request(r.sh, 1, &q, data));
  CHECK(static_cast<std::uint32_t>(q.op) == 0xffffu);  // the reactor fails it with invalid_argument
  CHECK(q.inline_bytes == 0);
}

TEST_CASE("a completion slot counts as handed back only for the lap its drainer marked, and never reads as a completion",
          "[mailbox]") {
  namespace d = weft::detail;
  ring r(2, 4);
  host_op op{};
  d::task_header task{};
  op.task = &task;
  const auto write = [&](std::uint64_t c) {
    d::completion q{};
    q.token = reinterpret_cast<std::uint64_t>(&op);
    q.value = c;
    d::mailbox_write_completion(r.sh, c, q);
  };
  for (std::uint64_t c = 0; c < 4; ++c) write(c);
  d::completion_view v;
  REQUIRE(d::mailbox_read_completion(r.m, 1, &v));
  REQUIRE_FALSE(d::mailbox_handed_back(r.sh, 1));  // written, not yet delivered
  d::mailbox_hand_back(r.m, 1, false);
  CHECK(d::mailbox_handed_back(r.sh, 1));
  CHECK_FALSE(d::mailbox_handed_back(r.sh, 0));      // another slot
  CHECK_FALSE(d::mailbox_handed_back(r.sh, 1 + 4));  // the slot's next lap
  CHECK_FALSE(d::mailbox_read_completion(r.m, 1 + 4, &v));  // the mark is no completion of the next lap
  write(5);                                                 // the reactor reuses the slot
  CHECK_FALSE(d::mailbox_handed_back(r.sh, 1));             // its mark is gone with it
  REQUIRE(d::mailbox_read_completion(r.m, 5, &v));
  CHECK(v.value == 5);
}

TEST_CASE("a serial drain delivers what has landed, hands each slot back and keeps its place in the drain word",
          "[mailbox]") {
  namespace d = weft::detail;
  ring r(2, 4);
  std::array<host_op, 3> ops{};
  std::array<d::task_header, 3> tasks{};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    ops[i].task = &tasks[i];
    tasks[i].state = d::task_state::running;  // parked later: the wake queues nothing
  }
  const auto write = [&](std::uint64_t c) {
    d::completion q{};
    q.token = reinterpret_cast<std::uint64_t>(&ops[c]);
    q.value = 100 + c;
    d::mailbox_write_completion(r.sh, c, q);
  };
  write(0);
  write(1);
  d::device_atomic<std::uint32_t>(r.m.inflight).store(3, d::mo_relaxed);
  REQUIRE(d::mailbox_drain_serial(r.m) == 2);
  CHECK(ops[0].value == 100);
  CHECK(ops[1].value == 101);
  CHECK(d::drain_next(r.m.drain) == 2);
  CHECK((r.m.drain & d::drain_held) == 0);
  CHECK(r.m.inflight == 1);
  CHECK(d::mailbox_handed_back(r.sh, 0));
  CHECK(d::mailbox_handed_back(r.sh, 1));
  CHECK_FALSE(d::mailbox_handed_back(r.sh, 2));
  REQUIRE(d::mailbox_drain_serial(r.m) == 0);  // nothing new: the place stays
  write(2);
  REQUIRE(d::mailbox_drain_serial(r.m) == 1);
  CHECK(ops[2].value == 102);
  CHECK(d::drain_next(r.m.drain) == 3);
}

TEST_CASE("LL flags are never 0 and differ between laps of a slot, across the 32-bit wrap", "[mailbox]") {
  namespace d = weft::detail;
  const std::uint64_t m32 = 0xffffffffull;
  for (std::uint64_t base : {std::uint64_t{0}, m32 - 3, m32 * 2 - 2, (m32 << 32) - 5, ~std::uint64_t{0} - 70})
    for (std::uint64_t t = base; t < base + 64 && t >= base; ++t) {
      INFO("ticket " << t);
      REQUIRE(d::ll_flag(t) != 0);
      for (std::uint64_t n : {std::uint64_t{2}, std::uint64_t{4}, std::uint64_t{1024}, std::uint64_t{1} << 31})
        if (t + n > t) REQUIRE(d::ll_flag(t) != d::ll_flag(t + n));
      REQUIRE(d::ll_flag(t) != d::ll_flag(t + 1));
    }
}

TEST_CASE("only requests that send or fill task memory by address need the publication's release", "[mailbox]") {
  namespace d = weft::detail;
  d::request q{};
  const auto with = [&](d::opcode op, std::uint64_t n, std::uint32_t inline_bytes, unsigned len_arg) {
    q = {};
    q.op = op;
    q.args[len_arg] = n;
    q.inline_bytes = inline_bytes;
    return d::request_touches_task_memory(q);
  };
  CHECK_FALSE(with(d::opcode::host_call, 3, 0, 0));
  CHECK_FALSE(with(d::opcode::close, 0, 0, 0));
  CHECK_FALSE(with(d::opcode::sleep, 1000, 0, 0));
  CHECK_FALSE(with(d::opcode::read, 64, 0, 2));  // the answer's inline bytes
  CHECK(with(d::opcode::read, 4096, 0, 2));      // into the buffer
  CHECK_FALSE(with(d::opcode::recv, 64, 0, 2));
  CHECK(with(d::opcode::recv, 1000, 0, 2));
  CHECK_FALSE(with(d::opcode::write, 64, 64, 2));  // inline
  CHECK(with(d::opcode::write, 4096, 0, 2));       // by address
  CHECK_FALSE(with(d::opcode::send, 64, 64, 2));
  CHECK(with(d::opcode::send, 1000, 0, 2));
  CHECK_FALSE(with(d::opcode::open, 10, 10, 3));
  CHECK(with(d::opcode::open, 300, 0, 3));
  CHECK_FALSE(with(d::opcode::print, 5, 5, 1));
  CHECK(with(d::opcode::print, 500, 0, 1));
}
