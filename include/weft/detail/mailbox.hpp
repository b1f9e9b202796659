// weft/detail/mailbox.hpp - the request/completion rings between tasks and the host reactor.
//
// Tasks (GPU lanes, or host worker threads on the host backend) ask the host reactor
// for system calls through a mailbox: a request ring the tasks fill and the reactor
// drains, and a completion ring the reactor fills and a drainer on the task side
// empties. docs/mailbox.md draws the protocol as a sequence; this block is the
// reference for the code.
//
// Where each part lives
//   mailbox_shared (pinned, mapped host memory on the cuda backend; ordinary memory on
//   the host backend): the request slots, the completion ring's LL words
//   (mailbox_layout.hpp), and two words, each on its own 128-byte line:
//     doorbell   task side -> host. Each publication of ticket t then stores t + 1 here
//                (relaxed; racing producers may store out of order, and a slot's words
//                may land after its doorbell). The reactor scans when it changes, and on
//                every trip also looks at word 0 of the slot at its head (the scan takes
//                slots in ticket order, so that slot decides whether it can take
//                anything): a published request is found on the next trip whatever the
//                doorbell says. The reactor polls these two lines instead of every slot.
//     req_head   host -> task side. Requests the reactor has copied out: slot t % N is
//                free for ticket t + N once req_head > t.
//   (There is no word for published or delivered completions: each completion's words
//   carry its flag, so the drainer reads the completions themselves, one PCIe round
//   trip for 32, and hands each slot back by marking it: see below.)
//   mailbox (device memory on the cuda backend): the task side's own words.
//     req_tail   the claim counter: ticket = req_tail++ (warp-aggregated on the GPU).
//     head_seen  the last req_head the task side read: a claim reads the pinned
//                req_head (a PCIe round trip) only when head_seen says the ring is full.
//     drain      the drain duty (bit 0: held; the GPU's try-lock, device_io.hpp) and,
//                in the other bits, the next completion to deliver: whoever takes the
//                duty reads where to go on in the same atomic (drain_word).
//     waiters    requests that found the ring full (a Treiber stack of host_op): the
//                drainer publishes them when slots free up. No lane ever spins on a
//                full ring; the task stays parked until its completion. (On the GPU
//                the overflow ring comes first: executor/weft/executor/device_io.hpp.)
//     inflight   requests posted or waiting for space, not yet delivered (on the GPU
//                but for the one an in-place waiter waits for: device_io.hpp).
//
// Ownership of a request slot (ticket t, slot t % N)
//   1. A producer claims t by CAS on req_tail, only while t < head_seen + N (so the
//      reactor has copied out ticket t - N and the slot is free).
//   2. It writes the slot as LL words carrying ll_flag(t) (mailbox_layout.hpp), with a
//      release at system scope (on the GPU a fence before them, on the host word 0's
//      store) unless it will take its own answer and sends no task memory
//      (mailbox_publish says why that is safe), then the doorbell.
//   3. The reactor, at req_head == t, acquires the slot's words; when all carry
//      ll_flag(t) the request is there. It copies it out, clears the data words, and
//      after a batch stores req_head (release, system): the copies and clears are done
//      before any producer can reuse the slot.
// Ownership of a completion slot (index c, slot c % M)
//   1. The reactor writes completion c only once the slot is free: c < M, or completion
//      c - M handed back (header word 5 carrying completion_handed_back and c - M's flag,
//      read with acquire: mailbox_handed_back). It writes the inline data's LL words,
//      header words 1-5 (8-byte relaxed stores), then header word 0 with release. A full
//      completion ring keeps the rest in the reactor's own queue: the reactor never
//      blocks on the GPU.
//   2. The drainer reads the header words of its next completion (drain), the one after, ... (system
//      scope; independent loads, word 0 last with acquire: it pairs with the reactor's
//      release store of word 0); completion c is there when every word carries
//      ll_flag(c). It reads the inline data words the same way (a word not yet
//      carrying the flag is read again: the reactor's release orders them before word
//      0, but nothing orders the drainer's earlier loads), writes the result into the
//      host_op (in the waiting task's frame), wakes the task, and hands the slot back
//      (mailbox_hand_back): it stores word 5 = ll_word(completion_handed_back,
//      ll_flag(c)). A mark per slot, not a shared head: drainers that follow one another
//      (the GPU's drain duty passes from warp to warp) never store over each other, so a
//      holder that gives the duty back needs no fence to keep its hand-backs ordered
//      before the next holder's. The store's order: see mailbox_hand_back.
// Each request names its host_op by address (the token); the reactor treats it as an
// opaque number and returns it in exactly one completion. One completion, one wake:
// the task state word's invariant (task_header.hpp).
//
// Scopes: every word both sides touch is a system-scope atomic (toolchain trap 11: a
// plain load of pinned memory polled by the GPU can stay stale); the task side's own
// words are device scope.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/detail/mailbox_layout.hpp"
#include "weft/detail/run.hpp"
#include "weft/errc.hpp"

namespace weft::detail {

// ---------------------------------------------------------------- producer side

// Claims up to `want` consecutive tickets; returns how many (0: the ring is full) and
// the first in *ticket, and in *head_out the head it acquired (see claim_hint). Any
// thread may call it; the GPU calls it once per warp.
WEFT_HOST_DEVICE inline std::uint32_t mailbox_claim(mailbox& m, std::uint32_t want, std::uint64_t* ticket,
                                                    std::uint64_t* head_out = nullptr) noexcept {
  device_atomic<std::uint64_t> tail(m.req_tail), seen(m.head_seen);
  const std::uint64_t cap = m.req_capacity;
  std::uint64_t t = tail.load(mo_relaxed);
  for (;;) {
    // Acquire: whoever raised head_seen did so after acquiring req_head from the
    // reactor (below), so the reactor's copies of the old slots happen-before our writes.
    std::uint64_t head = seen.load(mo_acquire);
    if (head > t) {  // our tail was stale (the reactor consumed past it): read it again
      t = tail.load(mo_relaxed);
      continue;
    }
    if (t - head >= cap) {
      // Looks full: read the reactor's progress (acquire at system scope: its copies of
      // the old slots are done before we overwrite them; on the GPU a PCIe round trip,
      // hence the cache) and raise head_seen to it (release: for the claimants above).
      head = system_atomic<std::uint64_t>(m.shared->req_head).load(mo_acquire);
      std::uint64_t s = seen.load(mo_relaxed);
      while (s < head && !seen.compare_exchange_weak(s, head, mo_release, mo_relaxed)) {
      }
      if (head > t) {
        t = tail.load(mo_relaxed);
        continue;
      }
      if (t - head >= cap) return 0;
    }
    const std::uint64_t room = cap - (t - head);
    const std::uint32_t got = room < want ? static_cast<std::uint32_t>(room) : want;
    // Relaxed: the CAS only makes tickets unique; the slots' freedom came from the
    // acquires above.
    if (tail.compare_exchange_weak(t, t + got, mo_relaxed, mo_relaxed)) {
      *ticket = t;
      if (head_out != nullptr) *head_out = head;
      return got;
    }
  }
}

// What a poster knows after its last claim on a mailbox: the ticket after its own, the
// head it had acquired then (head_seen and req_head only grow, so an old value is a safe
// lower bound on the reactor's progress), and the ring's capacity (a constant, kept by
// the poster so that the hinted claim's CAS waits for no load: on the GPU reading it
// from the mailbox is an L2 round trip before the CAS's own).
struct claim_hint {
  std::uint64_t next_ticket;
  std::uint64_t head;
  std::uint32_t capacity;
};

// One ticket with a single CAS and no load before it, for a poster that expects nobody
// has claimed since its last claim (the GPU's lone task calling the host again and
// again). The slot is free when next_ticket - head < capacity: the acquire that read
// `head` came earlier in this thread, so the reactor's copy of the slot's last request
// happens-before our writes. False (someone claimed in between, or the ring may be
// full): claim as usual.
WEFT_HOST_DEVICE inline bool mailbox_claim_hinted(mailbox& m, const claim_hint& h) noexcept {
  if (h.next_ticket - h.head >= h.capacity) return false;  // also when head > next_ticket: stale
  std::uint64_t t = h.next_ticket;
  return device_atomic<std::uint64_t>(m.req_tail).compare_exchange_strong(t, t + 1, mo_relaxed, mo_relaxed);
}

// What a publication reads before its stores (the request, where its inline bytes are,
// the slots, the doorbell), loaded apart: a GPU poster loads it before its claim, so
// those L2 loads overlap the claim's round trips instead of following them.
struct staged_request {
  request req;
  const unsigned char* inline_src;
  request_slot* slots;
  std::uint64_t* doorbell;
  std::uint64_t mask;  // req_capacity - 1
};
WEFT_HOST_DEVICE inline staged_request mailbox_stage(const mailbox& m, const host_op& op) noexcept {
  return {op.req, static_cast<const unsigned char*>(op.inline_src), m.slots, &m.shared->doorbell,
          std::uint64_t{m.req_capacity} - 1u};
}

// Writes the request into slot `ticket` as LL words (step 2 of the slot protocol): the
// data words, then header words 1.., then word 0, each an 8-byte relaxed store carrying
// ll_flag(ticket). Word 0 goes last only so that a reactor that sees it usually finds
// the rest landed too; the flags, not the order, make the slot's reading safe.
// `release`: on the GPU a system-scope acq_rel fence before the stores, on the host
// word 0's store with release (below). It makes everything the poster wrote before (a
// buffer the reactor reads, the host_op a later drainer reads) visible to whoever
// acquires a word of this request. Only a poster that delivers its own answer and sends
// no task memory leaves it out (the in-place wait: device_io.hpp); the fence cost
// ~0.5 us of an H200 round trip. Then the doorbell, relaxed: the reactor also looks at its next slot's word
// 0 on every trip (reactor.cpp, step 1), so the doorbell's order does not matter.
WEFT_HOST_DEVICE inline void mailbox_publish(const staged_request& r, std::uint64_t ticket, bool release = true) noexcept {
  std::uint64_t* w = r.slots[ticket & r.mask].words;
  const std::uint32_t flag = ll_flag(ticket);
#if WEFT_DEVICE_PASS
  if (release) fence_system_acq_rel();
  const memory_order last = mo_relaxed;
#else
  // A host poster (the host backend) releases with word 0's store instead: the same
  // ordering, free on x86, and visible to a thread sanitizer (which ignores fences).
  const memory_order last = release ? mo_release : mo_relaxed;
#endif
  const auto put = [w, flag](std::uint32_t j, std::uint32_t payload, memory_order mo = mo_relaxed) {
    system_atomic<std::uint64_t>(w[j]).store(ll_word(payload, flag), mo);
  };
  const std::uint32_t n = r.req.inline_bytes;
  for (std::uint32_t k = 0; k * 4 < n; ++k) put(request_header_words + k, ll_pack(r.inline_src, n, k));
  put(1, static_cast<std::uint32_t>(r.req.token));
  put(2, static_cast<std::uint32_t>(r.req.token >> 32));
  for (std::uint32_t j = 0; j < request_args; ++j) {
    put(3 + 2 * j, static_cast<std::uint32_t>(r.req.args[j]));
    put(4 + 2 * j, static_cast<std::uint32_t>(r.req.args[j] >> 32));
  }
  // The opcode has 16 bits of word 0: a wider value (no opcode is) goes as 0xffff, which
  // the reactor fails with invalid_argument, not as whatever its low bits name.
  const auto op = static_cast<std::uint32_t>(r.req.op);
  put(0, (op > 0xffffu ? 0xffffu : op) | n << 16, last);
  system_atomic<std::uint64_t>(*r.doorbell).store(ticket + 1, mo_relaxed);
}
WEFT_HOST_DEVICE inline void mailbox_publish(mailbox& m, std::uint64_t ticket, const host_op& op) noexcept {
  mailbox_publish(mailbox_stage(m, op), ticket);
}

// The reactor: whether ticket t's word 0 has landed (relaxed: a hint; the words are
// acquired by mailbox_take_request).
inline bool mailbox_request_landed(const mailbox_shared& sh, std::uint64_t t) noexcept {
  const std::uint64_t x = system_atomic<std::uint64_t>(sh.slots[t & (sh.req_capacity - 1)].words[0]).load(mo_relaxed);
  return static_cast<std::uint32_t>(x >> 32) == ll_flag(t);
}

// The reactor: reads ticket t's request (step 3 of the slot protocol) when every word
// of it has landed, else false (read it again later: a poster's words are all in flight
// once its word 0 is). Each word is acquired: with the poster's release, when it had
// one, what the poster wrote before happens-before the handler. Then it clears the
// data words it read, before the slot is freed (see request_slot). A header that names
// more inline bytes than a slot holds is malformed: it comes back with an opcode nobody
// knows, and its task gets invalid_argument.
inline bool mailbox_take_request(mailbox_shared& sh, std::uint64_t t, request* q, unsigned char* data) noexcept {
  std::uint64_t* w = sh.slots[t & (sh.req_capacity - 1)].words;
  const std::uint32_t flag = ll_flag(t);
  const auto landed = [w, flag](std::uint32_t j, std::uint64_t* x) {  // word j, acquired, carries t's flag
    *x = system_atomic<std::uint64_t>(w[j]).load(mo_acquire);
    return static_cast<std::uint32_t>(*x >> 32) == flag;
  };
  std::uint32_t h[request_header_words];
  for (std::uint32_t j = 0; j < request_header_words; ++j) {
    std::uint64_t x = 0;
    if (!landed(j, &x)) return false;
    h[j] = static_cast<std::uint32_t>(x);
  }
  q->op = static_cast<opcode>(h[0] & 0xffffu);
  q->inline_bytes = h[0] >> 16;
  q->token = h[1] | std::uint64_t{h[2]} << 32;
  for (std::uint32_t j = 0; j < request_args; ++j) q->args[j] = h[3 + 2 * j] | std::uint64_t{h[4 + 2 * j]} << 32;
  if (q->inline_bytes > request_inline_bytes) {
    q->op = static_cast<opcode>(0xffffu);
    q->inline_bytes = 0;
  }
  const std::uint32_t words = (q->inline_bytes + 3) / 4;
  for (std::uint32_t k = 0; k < words; ++k) {
    std::uint64_t x = 0;
    if (!landed(request_header_words + k, &x)) return false;
    ll_unpack(x, data, q->inline_bytes, k);
  }
  for (std::uint32_t k = 0; k < words; ++k) system_atomic<std::uint64_t>(w[request_header_words + k]).store(0, mo_relaxed);
  return true;
}

// Puts `op` on the waiters stack: the drainer publishes it when slots free up.
WEFT_HOST_DEVICE inline void mailbox_wait_for_space(mailbox& m, host_op* op) noexcept {
  device_atomic<std::uint64_t> top(m.waiters);
  std::uint64_t old = top.load(mo_relaxed);
  do {
    op->next = reinterpret_cast<host_op*>(old);
  } while (!top.compare_exchange_weak(old, reinterpret_cast<std::uint64_t>(op), mo_release, mo_relaxed));
}

// Posts `op` from one thread (a host backend worker): publishes it, or
// leaves it on the waiters stack. The caller has set the task to park and counted it
// in inflight.
WEFT_HOST_DEVICE inline void mailbox_post_one(mailbox& m, host_op* op) noexcept {
  std::uint64_t t = 0;
  if (mailbox_claim(m, 1, &t) == 1) mailbox_publish(m, t, *op);
  else mailbox_wait_for_space(m, op);
}

// The drainer: publishes waiting requests while slots are free, oldest first. Waiters
// move from the shared stack to the drainer's own FIFO (backlog) in one exchange, so
// each waiter costs O(1) however long the backlog: a burst of a million requests does
// not make the drainer re-push the ones that still find no room. Returns how many it
// published. Only the mailbox's drainer calls it.
WEFT_HOST_DEVICE inline std::uint32_t mailbox_publish_waiters(mailbox& m) noexcept {
  device_atomic<std::uint64_t> top(m.waiters);
  if (top.load(mo_relaxed) != 0) {
    host_op* list = reinterpret_cast<host_op*>(top.exchange(0, mo_acquire));  // the ops' writes
    host_op* fifo = nullptr;  // reverse: the stack is newest first
    host_op* last = list;
    while (list) {
      host_op* n = list->next;
      list->next = fifo;
      fifo = list;
      list = n;
    }
    if (m.backlog_tail) m.backlog_tail->next = fifo;
    else m.backlog_head = fifo;
    if (last) m.backlog_tail = last;
  }
  std::uint32_t published = 0;
  while (m.backlog_head) {
    std::uint64_t t = 0;
    if (mailbox_claim(m, 1, &t) == 0) break;
    host_op* op = m.backlog_head;
    m.backlog_head = op->next;
    if (!m.backlog_head) m.backlog_tail = nullptr;
    mailbox_publish(m, t, *op);  // op may complete and vanish from here on
    ++published;
  }
  return published;
}

// ---------------------------------------------------------------- drainer side

// One completion's header, decoded.
struct completion_view {
  std::uint64_t token = 0;
  std::uint64_t value = 0;
  std::uint32_t error = 0;
  std::uint32_t inline_bytes = 0;
};

// Reads completion c's header words (system scope, independent loads: one PCIe round
// trip on the GPU). True when every word carries c's flag: then *v is c.
// Word 0 is loaded last, with acquire: when it carries c's flag it read the reactor's
// release store of it (mailbox_write_completion), so what the reactor saw before it (the
// request, and through the request's release the task's writes to its host_op)
// happens-before whatever the drainer does next: it reads op->task and writes
// op->value. (A request published without that release is delivered by its own
// poster, or by a drainer that took the duty after the poster gave it back: the
// poster's release of the duty carries the host_op then, to the next holder's acquire
// (a warp-wide drainer's take, or an in-place waiter's fence before it delivers
// another task's answer: mailbox_deliver_to_waiter). device_io.hpp.) Loaded last, the
// acquire holds back none of the other five loads: they are all in flight at once.
WEFT_HOST_DEVICE inline bool mailbox_read_completion(const mailbox& m, std::uint64_t c, completion_view* v) noexcept {
  const std::uint64_t cap = m.comp_capacity, at = c & (cap - 1);
  std::uint64_t w[completion_header_words];
  for (std::uint32_t j = 1; j < completion_header_words; ++j)
    w[j] = system_atomic<std::uint64_t>(m.comp_words[j * cap + at]).load(mo_relaxed);
  w[0] = system_atomic<std::uint64_t>(m.comp_words[at]).load(mo_acquire);
  const std::uint32_t flag = ll_flag(c);
  bool ok = true;
  for (std::uint32_t j = 0; j < completion_header_words; ++j) ok = ok && static_cast<std::uint32_t>(w[j] >> 32) == flag;
  const auto lo = [&](std::uint32_t j) { return w[j] & 0xffffffffu; };
  v->token = lo(0) | lo(1) << 32;
  v->value = lo(2) | lo(3) << 32;
  v->error = static_cast<std::uint32_t>(lo(4));
  v->inline_bytes = static_cast<std::uint32_t>(lo(5));
  return ok;
}

// The reactor: writes completion c (step 1 of the completion slot's protocol).
inline void mailbox_write_completion(mailbox_shared& sh, std::uint64_t c, const completion& q) noexcept {
  const std::uint64_t cap = sh.comp_capacity, at = c & (cap - 1);
  const std::uint32_t flag = ll_flag(c);
  for (std::uint32_t k = 0; k * 4 < q.inline_bytes; ++k)
    system_atomic<std::uint64_t>(sh.comp_data[at * completion_data_words + k])
        .store(ll_word(ll_pack(q.data, q.inline_bytes, k), flag), mo_relaxed);
  const std::uint32_t payload[completion_header_words] = {
      static_cast<std::uint32_t>(q.token), static_cast<std::uint32_t>(q.token >> 32),
      static_cast<std::uint32_t>(q.value), static_cast<std::uint32_t>(q.value >> 32), q.error, q.inline_bytes};
  for (std::uint32_t j = 1; j < completion_header_words; ++j)
    system_atomic<std::uint64_t>(sh.comp_words[j * cap + at]).store(ll_word(payload[j], flag), mo_relaxed);
  // Word 0 last, with release: the data words above (and all the reactor did for this
  // request) reach a drainer that acquires it. A release store, not a fence and relaxed
  // stores: the same on x86 (a plain store), and a thread sanitizer sees the pairing.
  system_atomic<std::uint64_t>(sh.comp_words[at]).store(ll_word(payload[0], flag), mo_release);
}

// Copies completion c's inline data (n bytes) to dst, word by word, each read until it
// carries c's flag (see step 2 above).
WEFT_HOST_DEVICE inline void mailbox_copy_inline(const mailbox& m, std::uint64_t c, std::uint32_t n, void* dst) noexcept {
  std::uint64_t* words = m.comp_data + (c & (m.comp_capacity - 1)) * completion_data_words;
  const std::uint32_t flag = ll_flag(c);
  auto* out = static_cast<unsigned char*>(dst);
  for (std::uint32_t k = 0; k * 4 < n && k < completion_data_words; ++k) {
    system_atomic<std::uint64_t> word(words[k]);
    std::uint64_t w = word.load(mo_relaxed);
    while (static_cast<std::uint32_t>(w >> 32) != flag) w = word.load(mo_relaxed);
    ll_unpack(w, out, n, k);
  }
}

// Delivers completion c (read as v): the result into its op, then the wake's state
// change. Returns the task when the caller must queue it (wake_needs_queue), else null.
// After the state change the task may run and free the op, so nothing reads it afterwards.
WEFT_HOST_DEVICE inline void mailbox_write_result(const mailbox& m, std::uint64_t c, const completion_view& v,
                                                  host_op* op) noexcept {
  if (v.inline_bytes != 0 && op->inline_dst != nullptr) mailbox_copy_inline(m, c, v.inline_bytes, op->inline_dst);
  op->value = v.value;
  op->error = static_cast<errc>(v.error);
}
WEFT_HOST_DEVICE inline task_header* mailbox_deliver_result(const mailbox& m, std::uint64_t c,
                                                           const completion_view& v) noexcept {
  host_op* op = reinterpret_cast<host_op*>(v.token);
  mailbox_write_result(m, c, v, op);
  task_header* t = op->task;
  // Its acq_rel RMW publishes the writes above to the task's next runner.
  return wake_needs_queue(t) ? t : nullptr;
}

// A poster that waits for its own request `own` in place, holding the drain duty (the
// GPU's await_in_place, executor/weft/executor/device_io.hpp): delivers the completions
// from *next on that are there, in order, at most `max` of them (each is one more PCIe
// round trip on the GPU: a lane alone must not drain a burst), and stops after its own. Its own answer is
// written into `own` with no wake: its task is RUNNING and will not park for it (a wake
// would leave SCHEDULED set with nobody to queue it, or queue it twice). Every other
// task that must be queued is passed to queue(t). Returns how many were delivered
// (*next moves past them; the caller hands their slots back); *own_done when its own was one.
// mailbox_deliver_to_waiter delivers one completion so. Another task's answer gets an
// acquire fence (device scope) first: the waiter took the duty with a relaxed RMW
// (device_io.hpp: begin_take_drain), and that task's host_op may have been published
// without a release, by a poster whose release of the drain duty carries it: the fence
// after the RMW that read that release makes the op's writes visible here. Its own op
// needs none: this thread wrote it.
template <class Queue>
WEFT_HOST_DEVICE inline void mailbox_deliver_to_waiter(const mailbox& m, std::uint64_t c, const completion_view& v,
                                                       host_op* own, bool* own_done, bool* read_inline,
                                                       Queue&& queue) noexcept {
  *read_inline = *read_inline || v.inline_bytes != 0;
  if (reinterpret_cast<host_op*>(v.token) == own) {
    mailbox_write_result(m, c, v, own);
    *own_done = true;
    return;
  }
  fence_device_acquire();
  if (task_header* t = mailbox_deliver_result(m, c, v)) queue(t);
}
template <class Queue>
WEFT_HOST_DEVICE inline std::uint32_t mailbox_drain_until_own(mailbox& m, std::uint64_t* next, host_op* own,
                                                             std::uint32_t max, bool* own_done, bool* read_inline,
                                                             Queue&& queue) noexcept {
  std::uint32_t n = 0;
  completion_view v;
  while (!*own_done && n < max && mailbox_read_completion(m, *next, &v)) {
    mailbox_deliver_to_waiter(m, *next, v, own, own_done, read_inline, queue);
    ++*next;
    ++n;
  }
  return n;
}

// The drain word (mailbox::drain): drain_held while a drainer holds the duty (the GPU),
// the rest the next completion to deliver. A holder reads it from the word it took the
// duty with, and writes it back in the word that gives the duty back.
inline constexpr std::uint64_t drain_held = 1;
WEFT_HOST_DEVICE constexpr std::uint64_t drain_word(std::uint64_t next) noexcept { return next << 1; }
WEFT_HOST_DEVICE constexpr std::uint64_t drain_next(std::uint64_t word) noexcept { return word >> 1; }

// The drainer, after reading completion c (and delivering it): hands its slot back to
// the reactor (step 2 of the completion slot's protocol) by storing header word 5 =
// ll_word(completion_handed_back, ll_flag(c)); the reactor writes completion c + M there
// once it sees it (mailbox_handed_back). The drainer's reads of the slot must be done
// before the reactor writes it again:
//   * inline data read (`read_inline`): a release store (system scope). On the GPU a
//     fence before the store; such answers (a read's bytes) are rare on the latency path.
//   * header words only, on the GPU: relaxed. The store is issued only once the loads of
//     the header words have come back and been checked (the caller decided from them that
//     c is there: a GPU does not issue a store under a branch before the loads that
//     decide it), so the reactor cannot see the mark before they are done.
//   * on the host backend: always release (a plain store on x86, and a thread sanitizer
//     sees the pairing).
WEFT_HOST_DEVICE inline void mailbox_hand_back(const mailbox& m, std::uint64_t c, bool read_inline) noexcept {
  const std::uint64_t cap = m.comp_capacity;
#if WEFT_DEVICE_PASS
  const memory_order mo = read_inline ? mo_release : mo_relaxed;
#else
  (void)read_inline;
  const memory_order mo = mo_release;
#endif
  system_atomic<std::uint64_t>(m.comp_words[completion_hand_back_word * cap + (c & (cap - 1))])
      .store(ll_word(completion_handed_back, ll_flag(c)), mo);
}

// The reactor: whether completion c's slot has been handed back (acquire: pairs with
// mailbox_hand_back's release, or its control dependency, above).
inline bool mailbox_handed_back(const mailbox_shared& sh, std::uint64_t c) noexcept {
  const std::uint64_t cap = sh.comp_capacity;
  const std::uint64_t w =
      system_atomic<std::uint64_t>(sh.comp_words[completion_hand_back_word * cap + (c & (cap - 1))]).load(mo_acquire);
  return w == ll_word(completion_handed_back, ll_flag(c));
}

// One thread, after delivering completions [first, end): hands their slots back.
WEFT_HOST_DEVICE inline void mailbox_hand_back_range(const mailbox& m, std::uint64_t first, std::uint64_t end,
                                                     bool read_inline) noexcept {
  for (std::uint64_t c = first; c < end; ++c) mailbox_hand_back(m, c, read_inline);
}

// One thread's drain (the host backend's reactor, and tests; the only drainer of its
// mailbox, so it keeps the drain word without the held bit): delivers every completion
// that is there, then publishes waiting requests. Returns the completions delivered.
inline std::uint32_t mailbox_drain_serial(mailbox& m) noexcept {
  device_atomic<std::uint64_t> drain(m.drain);
  const std::uint64_t first = drain_next(drain.load(mo_relaxed));
  std::uint64_t c = first;
  completion_view v;
  while (mailbox_read_completion(m, c, &v)) {
    if (task_header* t = mailbox_deliver_result(m, c, v)) schedule(t);
    mailbox_hand_back(m, c, v.inline_bytes != 0);
    ++c;
  }
  if (c != first) {
    // Release: the tasks queued above are visible to whoever reads inflight 0 with
    // acquire (the reactor's close, which then asks the executor whether it is idle).
    device_atomic<std::uint32_t>(m.inflight).fetch_sub(static_cast<std::uint32_t>(c - first), mo_release);
    drain.store(drain_word(c), mo_relaxed);
  }
  mailbox_publish_waiters(m);
  return static_cast<std::uint32_t>(c - first);
}

}  // namespace weft::detail
