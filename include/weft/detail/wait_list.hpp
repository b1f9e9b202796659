// weft/detail/wait_list.hpp - the waiter lists shared by semaphore, mutex and channel.
//
// Roles
//   primitive  owns an intrusive_fifo of parked waiters and a spin lock guarding it
//              together with the primitive's own state (permit count, ring buffer).
//   waiter     a task on its way to parking: inside await_suspend it takes the lock,
//              re-checks the state, and either proceeds (await_suspend returns false)
//              or appends itself and parks (act = park, returns true).
//   waker      pops waiters under the lock, hands each its permit / item / status
//              (plain writes into the waiter's node), releases the lock, then calls
//              detail::wake once per popped waiter (wake_all).
// Invariants
//   * A node is in at most one list, and is popped by exactly one waker: so each
//     registration gets exactly one wake (the task_header.hpp invariant).
//   * The waker owns a popped node until it wakes its task: it may write the node's
//     fields and read its `next` / `link`, but must read everything it needs before
//     the wake, after which the task may resume and its frame (and node) go away.
//   * Wakes happen after the lock is released. On the host a wake only queues the task
//     (it never runs it inline), so this is for short critical sections, not safety.
// Why a spin lock: every critical section is a few pointer moves plus at most one
// item move, and the waiter must decide "proceed or enqueue" atomically with the
// primitive's state, in FIFO order; a lock-free MPMC list with hand-off would cost
// far more code for no gain at this size. exec::spin_lock works on both backends (it
// naps with __nanosleep on the device and yields the thread on the host).
// Memory orders: the spin lock (acquire / release) orders the list and the state; a
// waker's writes into a node happen-before the wakee reads them through the acq_rel
// RMWs on the task state word (wake, then begin_run or end_run_parked).
#pragma once
#include "weft/detail/run.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/executor/spin_lock.hpp"

namespace weft::detail {

// A FIFO of nodes linked through their member `Next`. Not thread-safe: its owner
// guards it with a lock.
template <class Node, Node* Node::*Next>
struct intrusive_fifo {
  Node* head = nullptr;
  Node* tail = nullptr;

  WEFT_HOST_DEVICE bool empty() const noexcept { return head == nullptr; }
  WEFT_HOST_DEVICE void push_back(Node* n) noexcept {
    n->*Next = nullptr;
    if (tail != nullptr) tail->*Next = n;
    else head = n;
    tail = n;
  }
  WEFT_HOST_DEVICE Node* pop_front() noexcept {
    Node* n = head;
    if (n != nullptr) {
      head = n->*Next;
      if (head == nullptr) tail = nullptr;
    }
    return n;
  }
  // Empties the list and returns its old head (the chain stays linked through Next).
  WEFT_HOST_DEVICE Node* take_all() noexcept {
    Node* n = head;
    head = tail = nullptr;
    return n;
  }
};

// Parked tasks linked through task_header::link (theirs while parked).
using task_fifo = intrusive_fifo<task_header, &task_header::link>;

// Wakes a chain of popped tasks linked through `link`.
WEFT_HOST_DEVICE inline void wake_all(task_header* t) noexcept {
  while (t != nullptr) {
    task_header* next = t->link;  // read before the wake may reuse `link`
    wake(t);
    t = next;
  }
}

// The task that a weft awaiter's await_suspend runs under.
template <class P>
WEFT_HOST_DEVICE inline task_header* root_of(std::coroutine_handle<P> h) noexcept {
  return promise_of(h.address()).root;
}

}  // namespace weft::detail
