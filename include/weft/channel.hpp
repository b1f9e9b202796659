// weft/channel.hpp - weft::channel<T>, a bounded multi-producer multi-consumer queue.
//
//   weft::channel<int> ch(16);                      // room for 16 items
//   weft::result<void> s = co_await ch.send(42);     // waits while full; errc::closed if closed
//   weft::result<int>  r = co_await ch.recv();       // waits while empty
//   ch.close();                                      // wakes every waiting sender and receiver
//   ch.try_send(v);  ch.try_recv();                  // never wait
//
// Semantics
//   * FIFO: items are received in the order their sends completed. Waiting senders and
//     waiting receivers are each served oldest first, so none starves.
//   * No item is lost or duplicated. A sender that waits on a full channel keeps its
//     item (in its own frame) until a receiver makes room; it then moves the item into
//     the buffer and wakes. A receiver that waits on an empty channel is handed the next
//     item directly by the sender.
//   * close(): later sends fail with errc::closed; senders waiting at that moment fail
//     with errc::closed too (their items were not delivered; they are destroyed with
//     the send). Receivers first drain what the buffer holds, then get errc::closed;
//     receivers waiting at close() (so the buffer is empty) get errc::closed at once.
//     close() is idempotent and may be called by any task or, on the host backend, by
//     host code outside a task. A channel that had tasks waiting when their runtime
//     shut down may only be destroyed afterwards: shutdown destroyed them, and the
//     lists still name their nodes (docs/design.md, Known limits).
//   * try_send: errc::queue_full when full, errc::closed when closed; the argument is
//     left untouched unless the send succeeds. try_recv: errc::would_block when empty
//     and open, errc::closed when closed and drained.
//   * Capacity 0 is invalid (weft has no rendezvous channel yet): such a channel is
//     inert and every operation reports errc::invalid_argument (error() says so). The
//     buffer is allocated from the runtime's frame allocator (the frame pool; a block
//     holds at most 1 MiB); if that fails every operation reports errc::out_of_memory.
//   * A channel may live in a task's frame and be shared by reference with tasks its
//     owner outlives; the owner may destroy it as soon as its own last operation on it
//     returned (operations touch the channel last when they release its lock, and the
//     destructor takes the lock once). Destroying it destroys the items still buffered.
//     T must be nothrow move-constructible (items move under the lock) and at most
//     16-byte aligned; try_send(const T&) copies before it locks, so a throwing copy
//     changes nothing.
//
// Design
//   State, all guarded by lock_ (see detail/wait_list.hpp for the lock protocol):
//     ring buffer buf_[cap_] with head_ and count_; closed_; senders_ (send awaiters,
//     each holding its item); receivers_ (recv awaiters, each with a slot for the item).
//   The awaiters are the list nodes: they live in the suspended frames, alive until
//   their task is woken. A waker pops a node, moves the item into or out of it, sets
//   its status, and wakes its task after unlocking.
//   Invariants (between critical sections):
//     receivers_ non-empty => count_ == 0 and senders_ empty
//     senders_   non-empty => count_ == cap_ and receivers_ empty
//     closed_              => senders_ and receivers_ empty (close() empties them and
//                             nothing enqueues on a closed channel)
//   A recv that takes an item from a full buffer refills it from the oldest waiting
//   sender in the same critical section, so the second invariant holds.
//   Memory orders: the spin lock orders the buffer; items handed through a node reach
//   the wakee through the wake's acq_rel RMWs on its state word.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/detail/wait_list.hpp"
#include "weft/result.hpp"
#include "weft/task.hpp"

namespace weft {

template <class T>
class channel {
  static_assert(!std::is_void_v<T> && !std::is_reference_v<T>, "channel<T>: T must be an object type");
  // Items move under the channel's spin lock (and in noexcept wake paths): a move that
  // threw there would leave the lock held and a popped waiter never woken.
  static_assert(std::is_nothrow_move_constructible_v<T>, "channel<T>: T must be nothrow move-constructible");
  static_assert(alignof(T) <= 16, "channel<T>: T must be at most 16-byte aligned (frame-pool blocks are)");

 public:
  // Waits while the channel is full. Yields result<void>: errc::closed when the
  // channel is (or becomes) closed before the item went in.
  struct send_awaiter {
    using weft_awaitable = void;
    channel* ch;
    T item;
    send_awaiter* next = nullptr;         // senders_ link (while queued)
    detail::task_header* task = nullptr;  // the parked sender
    errc status{};

    WEFT_HOST_DEVICE bool await_ready() const noexcept { return false; }
    template <class P>
    WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
      detail::task_header* me = detail::root_of(h);
      if (ch->send_or_enqueue(*this, me)) return false;
      me->act = detail::action::park;  // touch no field of *this: a receiver may own it now
      return true;
    }
    WEFT_HOST_DEVICE result<void> await_resume() const noexcept {
      if (status != errc{}) return unexpected(status);
      return {};
    }
  };

  // Waits while the channel is empty and open. Yields result<T>: errc::closed once
  // the channel is closed and drained.
  struct recv_awaiter {
    using weft_awaitable = void;
    channel* ch;
    detail::value_slot<T> slot{};
    recv_awaiter* next = nullptr;
    detail::task_header* task = nullptr;
    errc status{};

    WEFT_HOST_DEVICE bool await_ready() const noexcept { return false; }
    template <class P>
    WEFT_HOST_DEVICE bool await_suspend(std::coroutine_handle<P> h) noexcept {
      detail::task_header* me = detail::root_of(h);
      if (ch->recv_or_enqueue(*this, me)) return false;
      me->act = detail::action::park;
      return true;
    }
    WEFT_HOST_DEVICE result<T> await_resume() noexcept(std::is_nothrow_move_constructible_v<T>) {
      if (status != errc{}) return unexpected(status);
      return result<T>(std::move(slot.get()));
    }
  };

  WEFT_HOST_DEVICE explicit channel(std::uint32_t capacity) noexcept
      : buf_(nullptr), cap_(capacity), broken_(capacity == 0 ? errc::invalid_argument : errc{}) {
    if (cap_ != 0) {
      buf_ = static_cast<T*>(detail::object_allocate(bytes()));
      if (buf_ == nullptr) broken_ = errc::out_of_memory;
    }
  }
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  WEFT_HOST_DEVICE ~channel() {
    lock_.lock();  // let an operation still leaving its critical section finish
    lock_.unlock();
    if (buf_ == nullptr) return;
    for (std::uint32_t i = 0; i < count_; ++i) at(head_ + i).~T();
    detail::object_deallocate(buf_, bytes());
  }

  // errc{} for a usable channel; invalid_argument (capacity 0) or out_of_memory.
  WEFT_HOST_DEVICE errc error() const noexcept { return broken_; }
  WEFT_HOST_DEVICE std::uint32_t capacity() const noexcept { return cap_; }
  // Items buffered now (a snapshot).
  WEFT_HOST_DEVICE std::uint32_t size() noexcept {
    lock_.lock();
    const std::uint32_t n = count_;
    lock_.unlock();
    return n;
  }
  WEFT_HOST_DEVICE bool is_closed() noexcept {
    lock_.lock();
    const bool c = closed_;
    lock_.unlock();
    return c;
  }

  WEFT_HOST_DEVICE send_awaiter send(T item) noexcept(std::is_nothrow_move_constructible_v<T>) {
    return send_awaiter{this, std::move(item)};
  }
  WEFT_HOST_DEVICE recv_awaiter recv() noexcept { return recv_awaiter{this}; }

  // (The copy is made before the lock is taken: a copy that throws leaves the channel
  // as it was, and the exception reaches the caller.)
  WEFT_HOST_DEVICE result<void> try_send(const T& item) { return try_send_impl(T(item)); }
  WEFT_HOST_DEVICE result<void> try_send(T&& item) { return try_send_impl(std::move(item)); }
  WEFT_HOST_DEVICE result<T> try_recv();

  // Closes the channel and wakes every waiting sender and receiver (see above).
  WEFT_HOST_DEVICE void close() noexcept;

 private:
  WEFT_HOST_DEVICE std::size_t bytes() const noexcept { return std::size_t{cap_} * sizeof(T); }
  WEFT_HOST_DEVICE T& at(std::uint32_t i) noexcept { return buf_[i % cap_]; }

  // Under lock_: a send that may complete now. Gives the item to the oldest waiting
  // receiver (returned, to be woken after unlocking) or appends it to the buffer.
  // Returns errc::queue_full when neither is possible.
  template <class U>
  WEFT_HOST_DEVICE errc deliver_locked(U&& item, recv_awaiter*& woken) {
    if (closed_) return errc::closed;
    if (recv_awaiter* r = receivers_.pop_front()) {
      r->slot.emplace(static_cast<U&&>(item));
      woken = r;
      return errc{};
    }
    if (count_ == cap_) return errc::queue_full;
    ::new (static_cast<void*>(&at(head_ + count_))) T(static_cast<U&&>(item));
    ++count_;
    return errc{};
  }

  // Under lock_: takes the oldest buffered item into `out` and refills the buffer from
  // the oldest waiting sender (returned, to be woken after unlocking).
  template <class Sink>
  WEFT_HOST_DEVICE void take_locked(Sink&& out, send_awaiter*& woken) {
    T& front = at(head_);
    out(std::move(front));
    front.~T();
    head_ = (head_ + 1) % cap_;
    --count_;
    if (send_awaiter* s = senders_.pop_front()) {
      ::new (static_cast<void*>(&at(head_ + count_))) T(std::move(s->item));
      ++count_;
      woken = s;
    }
  }

  template <class U>
  WEFT_HOST_DEVICE result<void> try_send_impl(U&& item);
  WEFT_HOST_DEVICE bool send_or_enqueue(send_awaiter& s, detail::task_header* me) noexcept;
  WEFT_HOST_DEVICE bool recv_or_enqueue(recv_awaiter& r, detail::task_header* me) noexcept;

  // Wakes a node popped from a list; its status is already set.
  template <class Node>
  WEFT_HOST_DEVICE static void wake_node(Node* n) noexcept {
    if (n != nullptr) detail::wake(n->task);  // task read before the wake frees the node
  }

  // Fails a chain of nodes taken from a list with errc::closed. Each node is ours
  // until its wake, so `next` is read before it.
  template <class Node>
  WEFT_HOST_DEVICE static void close_all(Node* n) noexcept {
    while (n != nullptr) {
      Node* next = n->next;
      n->status = errc::closed;
      wake_node(n);
      n = next;
    }
  }

  T* buf_;
  std::uint32_t cap_;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
  bool closed_ = false;
  errc broken_;
  exec::spin_lock lock_;
  detail::intrusive_fifo<send_awaiter, &send_awaiter::next> senders_;
  detail::intrusive_fifo<recv_awaiter, &recv_awaiter::next> receivers_;
};

template <class T>
template <class U>
WEFT_HOST_DEVICE result<void> channel<T>::try_send_impl(U&& item) {
  if (broken_ != errc{}) return unexpected(broken_);
  recv_awaiter* woken = nullptr;
  lock_.lock();
  const errc e = deliver_locked(static_cast<U&&>(item), woken);
  lock_.unlock();
  wake_node(woken);
  if (e != errc{}) return unexpected(e);
  return {};
}

template <class T>
WEFT_HOST_DEVICE result<T> channel<T>::try_recv() {
  if (broken_ != errc{}) return unexpected(broken_);
  detail::value_slot<T> got;
  send_awaiter* woken = nullptr;
  lock_.lock();
  const bool empty = count_ == 0;
  const bool closed = closed_;
  if (!empty) take_locked([&](T&& v) { got.emplace(std::move(v)); }, woken);
  lock_.unlock();
  wake_node(woken);
  if (empty) return unexpected(closed ? errc::closed : errc::would_block);
  return result<T>(std::move(got.get()));
}

// Returns true when the send completed (or failed) without waiting; false when `s`
// was queued and the task must park.
template <class T>
WEFT_HOST_DEVICE bool channel<T>::send_or_enqueue(send_awaiter& s, detail::task_header* me) noexcept {
  if (broken_ != errc{}) {
    s.status = broken_;
    return true;
  }
  recv_awaiter* woken = nullptr;
  lock_.lock();
  const errc e = deliver_locked(std::move(s.item), woken);
  if (e == errc::queue_full && detail::parks_nowhere(me)) {  // run_inline: no waiting (task_header.hpp)
    lock_.unlock();
    s.status = errc::would_block;
    return true;
  }
  if (e == errc::queue_full) {
    s.task = me;
    senders_.push_back(&s);
    lock_.unlock();
    return false;
  }
  lock_.unlock();
  s.status = e;
  wake_node(woken);
  return true;
}

template <class T>
WEFT_HOST_DEVICE bool channel<T>::recv_or_enqueue(recv_awaiter& r, detail::task_header* me) noexcept {
  if (broken_ != errc{}) {
    r.status = broken_;
    return true;
  }
  send_awaiter* woken = nullptr;
  lock_.lock();
  if (count_ == 0 && !closed_ && detail::parks_nowhere(me)) {  // run_inline: no waiting (task_header.hpp)
    lock_.unlock();
    r.status = errc::would_block;
    return true;
  }
  if (count_ == 0 && !closed_) {
    r.task = me;
    receivers_.push_back(&r);
    lock_.unlock();
    return false;
  }
  if (count_ == 0) r.status = errc::closed;
  else take_locked([&](T&& v) { r.slot.emplace(std::move(v)); }, woken);
  lock_.unlock();
  wake_node(woken);
  return true;
}

template <class T>
WEFT_HOST_DEVICE void channel<T>::close() noexcept {
  lock_.lock();
  const bool was_closed = closed_;
  closed_ = true;
  send_awaiter* s = senders_.take_all();
  recv_awaiter* r = receivers_.take_all();
  lock_.unlock();
  if (was_closed) return;
  close_all(s);
  close_all(r);
}

}  // namespace weft
