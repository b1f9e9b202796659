// weft/detail/host_request.hpp - the awaitable behind every request to the host reactor.
//
// io::read, host_call, net::conn::recv and the rest all build a host_op (the request
// and the place its answer lands, inside the awaiting task's frame), post it into a
// mailbox (weft/detail/mailbox.hpp) and park. The drainer writes the answer into the
// op and wakes the task, which then converts the raw 64-bit value into its result.
//
// Protocol (the same as sleep_for's): await_suspend sets act = park before the post,
// because the completion may be delivered before await_suspend returns (the task is
// still RUNNING then: SCHEDULED|RUNNING covers it). Nothing is read or written after
// the post except when it was refused (no reactor: then no completion will come), or
// on the GPU when the task waits for its answer in place (device_io.hpp): it took the
// drain duty before the post, so the answer is its own to take, with no wake, and it
// goes on without parking.
//
// On the GPU the lanes of a warp that post to the same mailbox together claim their
// slots with one atomic (warp aggregation: __match_any_sync groups them, the lowest
// lane claims for the group). A request that finds the ring full waits on the
// mailbox's waiters stack, still parked: no lane ever spins on a full ring.
#pragma once
#include <cstdint>

#include "weft/detail/mailbox.hpp"
#include "weft/result.hpp"
#include "weft/task.hpp"
#if WEFT_DEVICE_PASS
#include "weft/executor/device_io.hpp"  // the overflow ring, the in-place wait
#endif

namespace weft::detail {

#if WEFT_DEVICE_PASS
// Warp-aggregated post: one claim per group of lanes posting to the same mailbox. The
// lanes that get no ring slot wait in the overflow ring (one claim for all of them), or
// on the waiters stack when that is full too. True: this lane's request went into a
// ring slot (published); false: it waits for one. A lane `alone` in its warp claims
// with the warp's hint (staging_area::claim_*: one CAS when nobody claimed since).
// `own_answer`: the lane holds m's drain duty and will take its own answer (the in-place
// wait), so a request that sends no task memory is published without the release fence
// (mailbox_publish): the answer comes back to this thread, or to a drainer that takes
// the duty after this lane gives it back (this lane then gives the duty back with
// release, and the next holder acquires it: await_in_place, mailbox_deliver_to_waiter). Its request, once in a ring slot, is
// not counted in inflight: the waiter counts it if it gives up (await_in_place), so
// while it waits other warps see nothing to drain and leave the duty alone.
__device__ inline bool device_post(mailbox& m, host_op* op, bool alone, bool own_answer) noexcept {
  const unsigned active = __activemask();
  const unsigned group = __match_any_sync(active, reinterpret_cast<unsigned long long>(&m));
  const unsigned lane = exec::current_lane_ids().lane;
  const unsigned leader = static_cast<unsigned>(__ffs(group)) - 1u;
  const unsigned rank = __popc(group & ((1u << lane) - 1u));
  const std::uint32_t size = static_cast<std::uint32_t>(__popc(group));
  const staged_request staged = mailbox_stage(m, *op);  // before the claim: see there
  exec::basic_inject_ring<host_op> overflow(*m.overflow);
  unsigned long long ticket = 0, spill = ~0ull;
  unsigned got = 0;
  if (lane == leader) {
    std::uint64_t t = 0;
    exec::staging_area& st = exec::staging_of_this_warp();
    if (alone && st.claim_box == &m && mailbox_claim_hinted(m, {st.claim_next, st.claim_head, st.claim_capacity})) {
      t = st.claim_next;
      got = 1;
    } else {
      std::uint64_t head = 0;
      got = mailbox_claim(m, size, &t, &head);
      // The hint's head goes with its box and ticket, which only a lone claim sets
      // (below): a group's claim on another box, taken as this box's head, could let
      // the hint claim a slot whose request the reactor has not taken yet.
      if (alone && got != 0) st.claim_head = head;
    }
    if (alone) {
      st.claim_box = &m;
      st.claim_next = t + got;
      st.claim_capacity = static_cast<std::uint32_t>(staged.mask + 1);  // loaded before the claim
    }
    ticket = t;
    // Before any lane of the group publishes (a relaxed RMW: a drainer's subtraction
    // could only come after the request's round trip to the host).
    const std::uint32_t counted = own_answer && got == 1 ? 0u : size;  // own_answer: alone, size 1
    if (counted != 0) device_atomic<std::uint32_t>(m.inflight).fetch_add(counted, mo_relaxed);
    if (got < size) spill = overflow.claim_push(size - got);  // ~0: no room there either
  }
  ticket = __shfl_sync(group, ticket, leader);
  got = __shfl_sync(group, got, leader);
  spill = __shfl_sync(group, spill, leader);
  if (rank < got) {
    mailbox_publish(staged, ticket + rank, !own_answer || request_touches_task_memory(staged.req));
    return true;
  }
  if (spill != ~0ull) overflow.put(spill + (rank - got), op);
  else mailbox_wait_for_space(m, op);
  return false;
}
#endif

// Posts `op` for the calling task. errc{} when posted (a completion will come, or has
// come already when *answered: on the GPU, a task with nothing else to run in its warp
// waits for the answer in place; device_io.hpp), or why not: backend_unavailable
// outside a runtime's executor (run_inline has no reactor).
WEFT_HOST_DEVICE inline errc post_request(host_op& op, bool* answered) noexcept {
  *answered = false;
  op.req.token = reinterpret_cast<std::uint64_t>(&op);
  mailbox* box = current_mailbox(op.req.op);
  if (box == nullptr) return errc::backend_unavailable;
  mailbox& m = *box;
#if WEFT_DEVICE_PASS
  const exec::lane_ids id = exec::current_lane_ids();
  const bool alone = exec::alone_in_warp(id);
  const std::uint64_t was = alone ? exec::begin_take_drain(m) : drain_held;  // before the post: see there
  // `was` is first needed at the publication, after the claim: the RMW's round trip
  // overlaps the claim's.
  const bool own = (was & drain_held) == 0;
  const bool published = device_post(m, &op, alone, own);
  if (own) *answered = exec::await_in_place(*exec::g_device_sched, m, &op, id, published, drain_next(was));
#else
  device_atomic<std::uint32_t>(m.inflight).fetch_add(1, mo_relaxed);
  mailbox_post_one(m, &op);
#endif
  return errc{};
}

// Conv::convert(std::uint64_t) -> T turns the host's value into the awaited value.
template <class T, class Conv>
struct host_request_awaiter {
  using weft_awaitable = void;
  host_op op{};
  errc early{};  // refused before posting (a bad argument found on the task's side)
  bool inline_value = false;  // op.value holds 8 bytes to send inline (host_call's 6th argument)

  WEFT_HOST_DEVICE host_request_awaiter(opcode code, std::uint64_t a0 = 0, std::uint64_t a1 = 0,
                                        std::uint64_t a2 = 0, std::uint64_t a3 = 0, std::uint64_t a4 = 0,
                                        std::uint64_t a5 = 0) noexcept {
    op.req.op = code;
    op.req.inline_bytes = 0;
    op.req.token = 0;
    op.req.args[0] = a0;
    op.req.args[1] = a1;
    op.req.args[2] = a2;
    op.req.args[3] = a3;
    op.req.args[4] = a4;
    op.req.args[5] = a5;
  }

  WEFT_HOST_DEVICE bool await_ready() const noexcept { return early != errc{}; }
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
    task_header* me = promise_of(h.address()).root;
    if (parks_nowhere(me)) {  // run_inline (task_header.hpp): with no runtime at all, backend_unavailable
      early = current_mailbox(op.req.op) == nullptr ? errc::backend_unavailable : errc::would_block;
      return false;
    }
    op.task = me;
    if (inline_value) {  // the awaiter has its final address now (in the frame)
      op.inline_src = &op.value;
      op.req.inline_bytes = 8;
    }
    me->act = action::park;  // before the post: the completion may come at once
    bool answered = false;
    const errc e = post_request(op, &answered);
    if (e == errc{} && !answered) return true;
    me->act = action::none;  // answered in place (the result is in op), or refused
    early = e;
    return false;
  }
  WEFT_HOST_DEVICE result<T> await_resume() noexcept {
    if (early != errc{}) return unexpected(early);
    if (op.error != errc{}) return unexpected(op.error);
    if constexpr (std::is_void_v<T>) return result<void>{};
    else return Conv::convert(op.value);
  }
};

struct as_u64 {
  WEFT_HOST_DEVICE static std::uint64_t convert(std::uint64_t v) noexcept { return v; }
};
struct as_size {
  WEFT_HOST_DEVICE static std::size_t convert(std::uint64_t v) noexcept { return static_cast<std::size_t>(v); }
};
struct as_void {};

WEFT_HOST_DEVICE inline std::uint64_t c_strlen(const char* s) noexcept {
  std::uint64_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

// A text argument (a path, a print): inline when it fits in the slot, else by address
// (args[a], args[a + 1]); over `limit` bytes it is refused with too_large.
template <class A>
WEFT_HOST_DEVICE inline void attach_text(A& aw, const char* s, std::uint64_t limit, unsigned a) noexcept {
  if (s == nullptr) {
    aw.early = errc::invalid_argument;
    return;
  }
  const std::uint64_t n = c_strlen(s);
  if (n > limit) {
    aw.early = errc::too_large;
    return;
  }
  aw.op.req.args[a] = reinterpret_cast<std::uint64_t>(s);
  aw.op.req.args[a + 1] = n;
  if (n <= request_inline_bytes) {
    aw.op.inline_src = s;
    aw.op.req.inline_bytes = static_cast<std::uint32_t>(n);
  }
}

}  // namespace weft::detail
