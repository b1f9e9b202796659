// weft/spawn_group.hpp - spawn many tasks, join them with one wait.
//
//   weft::spawn_group<int> g(16);                  // room for 16 children (one pool block)
//   for (int i = 0; i < 16; ++i)
//     g.spawn([] WEFT_HOST_DEVICE (int k) { return square(k); }, i);  // -> result<index>
//   std::uint32_t failed = co_await g.join();      // waits for every child spawned so far
//   int first = *g.outcome(0);                     // result<int>, in spawn order
//
// A child is `fn(args...)`, a task<T>, started at once on any worker, like spawn(task).
// Unlike spawn(task), the child's frame is made where the child starts: on the GPU by
// the lane that takes it from a queue (from that lane's frame cache), not by the
// spawner. So a spawn costs the spawner a few stores into the group and a queue push,
// the children of one spawner start side by side in the lanes of one warp, and the
// owner's join is one wait for all of them rather than one per child. (On the host
// backend the frame is made inside spawn; what the owner sees is the same.)
//
// Contract and errors
//   * fn is a WEFT_HOST_DEVICE callable object returning task<T>; fn and args are
//     trivially copyable and together at most group_payload_bytes (24) bytes (checked
//     at compile time): they are copied into the group, as block_on copies its
//     arguments. T is trivially destructible (outcomes are kept as plain result<T>s).
//   * spawn returns the child's index (its outcome's place), or why it was not
//     accepted: queue_full (the group's capacity is used up, or the executor's queues
//     are full), shutting_down, no_runtime (outside a runtime: run_inline), out_of_memory
//     (the group's own block could not be allocated). A child whose frame cannot be
//     made is accepted and reports out_of_memory as its outcome.
//   * join() waits for every child spawned so far and returns how many of them failed
//     (0: every outcome holds a value). It never fails the owner. outcome(i) is valid
//     for a child that finished (every child, after join returned).
//   * Only the task whose frame holds the group spawns into it, joins it and reads it.
//   * Dropping the group without joining detaches the children: they run to completion,
//     their outcomes are discarded, and the last one frees the group's block. Shutdown
//     destroys children that never finished as it does any root, and the group's block
//     with them (group_core.hpp has the protocol).
//   * Capacity: 1 to group_max_capacity children over the group's life; the block
//     holds 40 + capacity * (48 + sizeof(result<T>)) bytes (16 children of a 4-byte T:
//     936 bytes, within the frame pool's cached size classes, which end at 1 KiB).
#pragma once
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/detail/group_core.hpp"
#include "weft/detail/run.hpp"
#include "weft/spawn.hpp"

namespace weft {

namespace detail {

// The callable and its arguments, as copied into a slot.
template <class... Ts>
struct group_args {
  template <class F, class... Done>
  WEFT_HOST_DEVICE auto call(const F& f, const Done&... done) const {
    return f(done...);
  }
};
template <class H, class... Ts>
struct group_args<H, Ts...> {
  H head;
  [[no_unique_address]] group_args<Ts...> rest;  // (an empty tail takes no room)
  template <class F, class... Done>
  WEFT_HOST_DEVICE auto call(const F& f, const Done&... done) const {
    return rest.call(f, done..., head);
  }
};
template <class F, class... A>
struct group_call {
  [[no_unique_address]] F fn;  // a capture-less lambda takes no room
  group_args<A...> args;
};

template <class T>
WEFT_HOST_DEVICE inline result<T>* group_outcome(group_base* g, std::uint32_t i) noexcept {
  return static_cast<result<T>*>(g->outcomes) + i;
}

// The outcome's writes come before the child's release RMW (group_child_done), which
// publishes them; `failed` is counted before it too.
template <class T>
WEFT_HOST_DEVICE void group_fail_slot(group_slot* s, errc e) noexcept {
  ::new (static_cast<void*>(group_outcome<T>(group_of(s), s->index))) result<T>(unexpected(e));
  device_atomic<std::uint32_t>(group_of(s)->failed).fetch_add(1, mo_relaxed);
}

template <class T>
WEFT_HOST_DEVICE void group_deliver_slot(group_slot* s, void* frame) noexcept {
  auto& p = promise_base_of<task_promise<T>>(frame);
  if (p.error != errc{}) return group_fail_slot<T>(s, p.error);
  ::new (static_cast<void*>(group_outcome<T>(group_of(s), s->index))) result<T>(outcome_of<T>(p));
}

template <class T, class F, class... A>
WEFT_HOST_DEVICE task_header* group_create_slot(group_slot* s) noexcept {
  const auto& c = *reinterpret_cast<const group_call<F, A...>*>(s->payload);
  task<T> t = c.args.call(c.fn);
  if (!t.valid()) {
    group_fail_slot<T>(s, t.error());
    group_child_done(group_of(s), /*may_wake=*/true);
    return nullptr;
  }
  void* frame = t.release();
  promise_base& p = promise_of(frame);
  p.root = &p;
  p.continuation = nullptr;
  p.current = frame;
  p.sched = current_scheduler();
  p.home = no_home;
  p.joiner = reinterpret_cast<task_header*>(s);
  p.group_child = 1;
  return &p;
}

template <class T, class F, class... A>
struct group_ops_of {
#if WEFT_DEVICE_PASS
  static constexpr __device__ group_ops ops{&group_create_slot<T, F, A...>, &group_deliver_slot<T>, &group_fail_slot<T>};
#else
  static constexpr group_ops ops{&group_create_slot<T, F, A...>, &group_deliver_slot<T>, &group_fail_slot<T>};
#endif
};

// Awaiter of spawn_group::join (group_core.hpp: AWAITER).
struct group_join_awaiter {
  using weft_awaitable = void;
  group_base* g;
  std::uint32_t seen = 0;
  bool parked = false;

  WEFT_HOST_DEVICE bool await_ready() noexcept {
    if (g == nullptr) return true;
    seen = group_state_of(g).load(mo_acquire);
    return (seen & group_state::unfinished_mask) == 0;
  }
  template <class P>
  WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
    task_header* me = promise_of(h.address()).root;
    if (parks_nowhere(me)) return fail_current(h, errc::would_block), true;  // run_inline (task_header.hpp)
    g->joiner = me;  // published by the CAS
    auto st = group_state_of(g);
    std::uint32_t s = seen;
    while ((s & group_state::unfinished_mask) != 0) {
      if (st.compare_exchange_weak(s, s | group_state::awaiter, mo_acq_rel, mo_acquire)) {
        me->act = action::park;
        parked = true;
        return true;
      }
    }
    return false;  // the last child finished meanwhile (the failed CAS acquired)
  }
  // Every child has finished: the owner alone writes the word now (no child is left to
  // take UNFINISHED to 0 again), so AWAITER goes with a relaxed RMW whose value nobody
  // waits for. `failed` was written by the children before their release RMWs.
  WEFT_HOST_DEVICE std::uint32_t await_resume() const noexcept {
    if (g == nullptr) return 0;
    if (parked) group_state_of(g).fetch_and(~group_state::awaiter, mo_relaxed);
    g->joined = g->size;
    return device_atomic<std::uint32_t>(g->failed).load(mo_relaxed);
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] WEFT_DEVICE_OWNER_ABI spawn_group {
  static_assert(std::is_trivially_destructible_v<T> || std::is_void_v<T>,
                "spawn_group keeps outcomes as plain result<T>s: T must be trivially destructible");

 public:
  using value_type = T;

  // An empty group (no block): valid() is false, every spawn gives invalid_argument.
  WEFT_HOST_DEVICE spawn_group() noexcept = default;
  // Allocates the group's block for `capacity` children; valid() is false when it could
  // not (error(): out_of_memory, or invalid_argument for a capacity of 0 or above
  // group_max_capacity), and every spawn then returns that error.
  WEFT_HOST_DEVICE explicit spawn_group(std::uint32_t capacity) noexcept {
    if (capacity == 0 || capacity > detail::group_max_capacity) {
      failed_ = errc::invalid_argument;
      return;
    }
    const std::size_t slots = sizeof(detail::group_base) + std::size_t{capacity} * sizeof(detail::group_slot);
    const std::size_t out_at = (slots + alignof(result<T>) - 1) / alignof(result<T>) * alignof(result<T>);
    const std::size_t bytes = out_at + std::size_t{capacity} * sizeof(result<T>);
    void* p = detail::group_allocate(bytes);
    if (p == nullptr) {
      failed_ = errc::out_of_memory;
      return;
    }
    g_ = ::new (p) detail::group_base{};
    g_->bytes = static_cast<std::uint32_t>(bytes);
    g_->capacity = capacity;
    g_->outcomes = static_cast<char*>(p) + out_at;
  }
  WEFT_HOST_DEVICE spawn_group(spawn_group&& o) noexcept : g_(o.g_), failed_(o.failed_) { o.g_ = nullptr; }
  WEFT_HOST_DEVICE spawn_group& operator=(spawn_group&& o) noexcept {
    if (this != &o) {
      drop();
      g_ = o.g_;
      failed_ = o.failed_;
      o.g_ = nullptr;
    }
    return *this;
  }
  spawn_group(const spawn_group&) = delete;
  spawn_group& operator=(const spawn_group&) = delete;
  WEFT_HOST_DEVICE ~spawn_group() { drop(); }

  WEFT_HOST_DEVICE bool valid() const noexcept { return g_ != nullptr; }
  WEFT_HOST_DEVICE errc error() const noexcept { return g_ ? errc{} : failed_; }
  WEFT_HOST_DEVICE std::uint32_t size() const noexcept { return g_ ? g_->size : 0; }
  WEFT_HOST_DEVICE std::uint32_t capacity() const noexcept { return g_ ? g_->capacity : 0; }

  // Starts fn(args...) as a child (see the header). Returns its index, or why not.
  template <class F, class... A>
  WEFT_HOST_DEVICE result<std::uint32_t> spawn(F fn, A... args) noexcept {
    using call = detail::group_call<F, A...>;
    static_assert(std::is_trivially_copyable_v<call>, "spawn_group: fn and args must be trivially copyable");
    static_assert(sizeof(call) <= detail::group_payload_bytes && alignof(call) <= 8,
                  "spawn_group: fn and args must fit in group_payload_bytes (24): pass a pointer to more");
    static_assert(std::is_same_v<decltype(fn(args...)), task<T>>, "spawn_group<T>: fn(args...) must return task<T>");
    if (g_ == nullptr) return unexpected(failed_);
    if (g_->size == g_->capacity) return unexpected(errc::queue_full);
    detail::group_slot& s = slot(g_->size);
    s.ops = &detail::group_ops_of<T, F, A...>::ops;
    s.link = nullptr;
    s.index = g_->size;
    call c{fn, {args...}};  // group_args' nested members by brace elision
    std::memcpy(s.payload, &c, sizeof c);
    const errc e = detail::submit_group_child(&s);
    if (e != errc{}) return unexpected(e);
    return g_->size++;
  }

  // Waits for every child spawned so far; the awaited value is how many failed.
  WEFT_HOST_DEVICE detail::group_join_awaiter join() noexcept { return {g_}; }

  // Child i's outcome (i < size(), the child finished: after join).
  WEFT_HOST_DEVICE const result<T>& outcome(std::uint32_t i) const noexcept { return *detail::group_outcome<T>(g_, i); }

 private:
  WEFT_HOST_DEVICE detail::group_slot& slot(std::uint32_t i) noexcept {
    return detail::group_slots(g_)[i];
  }
  WEFT_HOST_DEVICE void drop() noexcept {
    if (g_ != nullptr) detail::group_drop(g_);
    g_ = nullptr;
  }

  detail::group_base* g_ = nullptr;
  errc failed_ = errc::invalid_argument;
};

}  // namespace weft
