// weft/detail/group_core.hpp - the shared state of a spawn_group and its children.
//
// weft::spawn_group (weft/spawn_group.hpp) spawns tasks whose frames are made where they
// start and whose outcomes are written into the group: its owner joins them all with one
// wait. This header holds what the executors and the run path need of it; the typed
// parts (the ramp, the delivery of a T) are in spawn_group.hpp.
//
// Roles
//   owner   the task whose frame holds the spawn_group object: the only one that spawns
//           into the group, joins it, reads its outcomes and drops it.
//   child   a root task made from one of the group's slots (group_slot). On the GPU the
//           lane that takes the slot's queue entry runs the slot's `create` (the ramp:
//           the frame comes from that lane's cache) and runs the child at once; on the
//           host backend the owner runs `create` inside spawn and submits the child like
//           any root. At completion the child copies its outcome into the group
//           (`deliver`), frees its frame and counts itself finished (group_child_done).
//
// The block (one frame-pool block, allocated by the owner, marked as a group's on the
// GPU so that shutdown can find it): group_base (40 bytes), then `capacity` slots (48
// bytes each), then the outcomes. It is freed by whoever drops the last reference: the owner's drop when no
// child is unfinished, else the last child to finish (or shutdown).
//
// The state word (group_base::state; every bit documented)
//   bits 0-23  UNFINISHED  children spawned and not finished. The owner adds one per
//              spawn before the child is queued; a child takes one away when it has
//              delivered its outcome (or was cancelled by shutdown).
//   bit 30     AWAITER     the owner is parked in join(); `joiner` names it. Set by the
//              owner's CAS only while UNFINISHED > 0; the child whose RMW takes
//              UNFINISHED to 0 wakes it; the owner clears the bit when it resumes.
//   bit 31     DROPPED     the owner's spawn_group object is gone (it never joined, or
//              its frame was destroyed). Set once, by the owner's RMW; the child whose
//              RMW takes UNFINISHED to 0 frees the block.
// AWAITER and DROPPED are never both set: the drop's RMW clears AWAITER (a frame
// destroyed by shutdown while parked in join).
//
// Memory orders
//   spawn's add     relaxed: the child's RMW comes after it reads its slot, which it
//                   acquired through the queue that the owner published the slot into
//                   (a release, or __syncwarp within a warp), so the add is ordered before
//                   every child's RMW and UNFINISHED never goes below zero.
//   a child's RMW   acq_rel: release, so its outcome (written before) reaches the owner
//                   that acquires the word; acquire, so that the last child, which frees
//                   the block, sees every use of it before.
//   join's look     acquire load, then an acq_rel CAS (a failed CAS acquires): a zero
//                   count seen there makes every delivered outcome visible.
//   the drop's RMW  acq_rel, for the same reasons as a child's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"

namespace weft::detail {

namespace group_state {
inline constexpr std::uint32_t unfinished_mask = (1u << 24) - 1;
inline constexpr std::uint32_t awaiter = 1u << 30;
inline constexpr std::uint32_t dropped = 1u << 31;
}  // namespace group_state

// The largest capacity of a group (UNFINISHED must not overflow into the flags).
inline constexpr std::uint32_t group_max_capacity = 1u << 20;

struct group_slot;
struct group_ops {
  // Runs the child's ramp from the slot's callable and arguments. Returns the new root
  // (its header filled, its state left to the caller), or null when the frame could not
  // be made: the outcome then holds the error and the child has counted itself finished.
  task_header* (*create)(group_slot*);
  // Copies the finished child's outcome (its promise, in `frame`) into the group.
  void (*deliver)(group_slot*, void* frame);
  // Writes `e` as the child's outcome (shutdown's cancellation, a failed ramp).
  void (*fail)(group_slot*, errc e);
};

struct group_base {
  std::uint32_t state = 0;     // see above; accessed with device_atomic
  std::uint32_t bytes = 0;     // the block's size, to free it
  task_header* joiner = nullptr;  // valid while AWAITER is set
  std::uint32_t capacity = 0;  // slots (constant)
  std::uint32_t size = 0;      // slots used (the owner's alone)
  std::uint32_t failed = 0;    // children whose outcome is an error (each adds one, relaxed,
                               // before its release RMW on `state`)
  std::uint32_t joined = 0;    // `size` when the owner's last join ended (the owner's alone)
  void* outcomes = nullptr;    // the outcome array, after the slots
};

inline constexpr std::size_t group_payload_bytes = 24;

// One child's queue entry points here (tagged: is_group_entry). `link` sits where a
// task_header's does, since a queue's overflow stack links entries through it. The slots
// follow the group_base in its block, so a slot finds its group from its index (48
// bytes a slot: 16 children of a 4-byte T take 936 bytes, within the pool's largest
// cached size class, 1 KiB).
struct group_slot {
  const group_ops* ops;
  task_header* link;
  std::uint32_t index;
  alignas(8) unsigned char payload[group_payload_bytes];  // the callable and its arguments
};
static_assert(offsetof(group_slot, link) == offsetof(task_header, link), "queues link entries through `link`");
static_assert(sizeof(group_slot) == 48 && sizeof(group_base) % alignof(group_slot) == 0, "the block's layout");

WEFT_HOST_DEVICE inline group_slot* group_slots(group_base* g) noexcept {
  return reinterpret_cast<group_slot*>(reinterpret_cast<char*>(g) + sizeof(group_base));
}
WEFT_HOST_DEVICE inline group_base* group_of(group_slot* s) noexcept {
  return reinterpret_cast<group_base*>(reinterpret_cast<char*>(s - s->index) - sizeof(group_base));
}

// Bit 1 of a queue entry: a group slot, not a task (bit 0 is tag_still_running's).
WEFT_HOST_DEVICE inline task_header* tag_group_entry(group_slot* s) noexcept {
  return reinterpret_cast<task_header*>(reinterpret_cast<std::uintptr_t>(s) | 2u);
}
WEFT_HOST_DEVICE inline bool is_group_entry(const task_header* t) noexcept {
  return (reinterpret_cast<std::uintptr_t>(t) & 2u) != 0;
}
WEFT_HOST_DEVICE inline group_slot* group_slot_of(task_header* t) noexcept {
  return reinterpret_cast<group_slot*>(reinterpret_cast<std::uintptr_t>(t) & ~std::uintptr_t{3});
}

WEFT_HOST_DEVICE inline device_atomic<std::uint32_t> group_state_of(group_base* g) noexcept {
  return device_atomic<std::uint32_t>(g->state);
}

}  // namespace weft::detail
