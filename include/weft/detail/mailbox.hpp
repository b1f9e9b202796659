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
//   the host backend): the request slots, the completion slots, and four words, each
//   on its own 64-byte line:
//     doorbell   task side -> host. Each publication of ticket t then stores t + 1 here
//                (relaxed; racing producers may store out of order, and a seq may land
//                after its doorbell). The reactor scans when it changes, and on every
//                trip also looks at the seq of the slot at its head (the scan takes
//                slots in ticket order, so that slot decides whether it can take
//                anything): a published request is found on the next trip whatever the
//                doorbell says. The reactor polls these two lines instead of every slot.
//     req_head   host -> task side. Requests the reactor has copied out: slot t % N is
//                free for ticket t + N once req_head > t.
//     comp_tail  host -> task side. Completions published (the reactor's batch store).
//     comp_head  task side -> host. Completions the drainer has delivered.
//   mailbox (device memory on the cuda backend): the task side's own words.
//     req_tail   the claim counter: ticket = req_tail++ (warp-aggregated on the GPU).
//     head_seen  the last req_head the task side read: a claim reads the pinned
//                req_head (a PCIe round trip) only when head_seen says the ring is full.
//     comp_next  the drainer's next completion (the drainer is one thread or one warp).
//     waiters    requests that found the ring full (a Treiber stack of host_op): the
//                drainer publishes them when slots free up. No lane ever spins on a
//                full ring; the task stays parked until its completion. (On the GPU
//                the overflow ring comes first: executor/weft/executor/device_io.hpp.)
//     inflight   requests posted or waiting for space, not yet delivered.
//
// Ownership of a request slot (ticket t, slot t % N)
//   1. A producer claims t by CAS on req_tail, only while t < head_seen + N (so the
//      reactor has copied out ticket t - N and the slot is free).
//   2. It writes the slot's body with plain stores, then seq = t + 1 (release, system
//      scope: the body is visible to a host thread that acquires seq), then the doorbell.
//   3. The reactor, at req_head == t, acquires seq; == t + 1 means published. It copies
//      the body out, and after a batch stores req_head (release, system): the copies
//      are done before any producer can reuse the slot.
// Ownership of a completion slot (index c, slot c % M)
//   1. The reactor writes slots comp_tail .. comp_tail + k - 1 only while they are free
//      (c < comp_head + M, comp_head read with acquire), then stores comp_tail + k
//      (release, system: one store publishes the batch). A full completion ring keeps
//      the rest in the reactor's own queue: the reactor never blocks on the GPU.
//   2. The drainer acquires comp_tail, reads the slots, writes each result into its
//      host_op (in the waiting task's frame), wakes the task, and then stores
//      comp_head (release, system): the slot reads are done before the host reuses them.
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
// the first in *ticket. Any thread may call it; the GPU calls it once per warp.
WEFT_HOST_DEVICE inline std::uint32_t mailbox_claim(mailbox& m, std::uint32_t want, std::uint64_t* ticket) noexcept {
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
      return got;
    }
  }
}

// Writes the request into slot `ticket` and publishes it (step 2 of the slot protocol).
WEFT_HOST_DEVICE inline void mailbox_publish(mailbox& m, std::uint64_t ticket, const host_op& op) noexcept {
  request_slot& slot = m.slots[ticket & (m.req_capacity - 1)];
  slot.req = op.req;
  const auto* src = static_cast<const unsigned char*>(op.inline_src);
  for (std::uint32_t i = 0; i < op.req.inline_bytes; ++i) slot.data[i] = src[i];
  // Release at system scope: the body above is visible to the reactor thread that
  // acquires seq. Then the doorbell, relaxed: the reactor also looks at its next slot's
  // seq on every trip (reactor.cpp, step 1), so the order of the two stores does not
  // matter, and a second system-scope fence (a PCIe round trip on the GPU, on every
  // request's path) is saved.
  system_atomic<std::uint64_t>(slot.seq).store(ticket + 1, mo_release);
  system_atomic<std::uint64_t>(m.shared->doorbell).store(ticket + 1, mo_relaxed);
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

// Delivers one completion: the result into its op, then the wake's state change.
// Returns the task when the caller must queue it (wake_needs_queue), else null. After
// the state change the task may run and free the op, so nothing reads it afterwards.
WEFT_HOST_DEVICE inline task_header* mailbox_deliver_result(const completion_slot& c) noexcept {
  host_op* op = reinterpret_cast<host_op*>(c.token);
  if (c.inline_bytes != 0 && op->inline_dst != nullptr) {
    auto* dst = static_cast<unsigned char*>(op->inline_dst);
    for (std::uint32_t i = 0; i < c.inline_bytes; ++i) dst[i] = c.data[i];
  }
  op->value = c.value;
  op->error = static_cast<errc>(c.error);
  task_header* t = op->task;
  // Its acq_rel RMW publishes the writes above to the task's next runner.
  return wake_needs_queue(t) ? t : nullptr;
}
WEFT_HOST_DEVICE inline void mailbox_deliver(const completion_slot& c) noexcept {
  if (task_header* t = mailbox_deliver_result(c)) schedule(t);
}

// The completions published and not yet delivered: [*first, returned end).
WEFT_HOST_DEVICE inline std::uint64_t mailbox_completions(mailbox& m, std::uint64_t* first) noexcept {
  *first = m.comp_next;
  // Acquire at system scope: the reactor's slot writes are visible before we read them.
  return system_atomic<std::uint64_t>(m.shared->comp_tail).load(mo_acquire);
}

// After delivering [comp_next, end): hands the slots back to the reactor.
WEFT_HOST_DEVICE inline void mailbox_retire(mailbox& m, std::uint64_t end, std::uint64_t delivered) noexcept {
  m.comp_next = end;
  device_atomic<std::uint32_t>(m.inflight).fetch_sub(static_cast<std::uint32_t>(delivered), mo_relaxed);
  // Release at system scope: our reads of the slots are done before the reactor reuses them.
  system_atomic<std::uint64_t>(m.shared->comp_head).store(end, mo_release);
}

// One thread's drain (the host backend's reactor, and tests): delivers every published
// completion, then publishes waiting requests. Returns the completions delivered.
inline std::uint32_t mailbox_drain_serial(mailbox& m) noexcept {
  std::uint64_t first = 0;
  const std::uint64_t end = mailbox_completions(m, &first);
  for (std::uint64_t c = first; c != end; ++c) mailbox_deliver(m.comps[c & (m.comp_capacity - 1)]);
  if (end != first) mailbox_retire(m, end, end - first);
  mailbox_publish_waiters(m);
  return static_cast<std::uint32_t>(end - first);
}

}  // namespace weft::detail
