// weft/executor/device_frames.hpp - the device frame pool: sharded free lists and lane caches.
//
// Roles
//   arena         one device allocation of config::frame_pool_bytes, carved into blocks
//                 of 15 size classes (64 B .. 1 MiB) on demand, never returned.
//   frame_shard   num_shards free lists per class, each under its own spin lock. A lane
//                 refills from and flushes to the shard of its warp (warp id % shards),
//                 so thousands of lanes do not meet on one lock; only an exhausted shard
//                 sends a lane to carve or to the other shards.
//   lane_cache    a stack of up to 8 blocks per small class (64 B .. 1 KiB) for each lane
//                 of each worker warp: private to that lane, so the common allocation is
//                 a load and a store. (Lanes of one warp run different tasks, diverged,
//                 so a cache shared by the warp would need atomics on every call.)
//   side tables   block_class (class + 1 at each block's first 64-byte granule, written
//                 once when carved) and block_live (1 while the block holds a coroutine
//                 frame, 2 while it holds another object: a channel's buffer, when_any's
//                 shared state). Shutdown scans them to find every frame still alive.
// Invariants
//   * A block is in exactly one place: a shard's free list, one lane cache, or a live
//     frame or object (block_live != 0 exactly in the last case).
//   * `carved` only grows and never passes arena_bytes.
//   * Exhaustion returns nullptr after the own shard, carving and every other shard
//     came up empty; the task sees errc::out_of_memory. No device malloc anywhere.
// Memory orders
//   * Free lists: spin_lock acquire/release around a few pointer moves.
//   * `carved`: relaxed CAS; it hands out disjoint ranges. A frame's contents reach
//     other lanes through whatever publishes the task (its state word, a queue).
//   * Side-table bytes are written by the lane that owns the block and read by the
//     teardown kernel after the workers' kernel has ended (kernel boundary = ordering).
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/executor/device_layout.hpp"
#include "weft/executor/frame_pool.hpp"

namespace weft::exec {

class device_frames {
 public:
  static constexpr std::size_t granule = 64;
  static constexpr unsigned refill = lane_cache_depth / 2;

  WEFT_HOST_DEVICE explicit device_frames(device_sched& d) noexcept : d_(d) {}

  // cache may be null (outside a worker lane: teardown).
  static constexpr std::uint8_t live_frame = 1, live_object = 2;

  WEFT_HOST_DEVICE void* allocate(std::size_t n, lane_cache* cache, unsigned shard,
                                  std::uint8_t mark = live_frame) noexcept {
    const int c = size_class_pool::class_of(n);
    if (c < 0) return nullptr;
    void* b = nullptr;
    if (cache != nullptr && static_cast<unsigned>(c) < lane_cache_classes) {
      std::uint8_t& k = cache->count[c];
      if (k == 0) k = static_cast<std::uint8_t>(take(static_cast<unsigned>(c), cache->slots[c], refill, shard));
      if (k != 0) b = cache->slots[c][--k];
    } else {
      take(static_cast<unsigned>(c), &b, 1, shard);
    }
    if (b != nullptr) d_.block_live[index_of(b)] = mark;
    return b;
  }

  WEFT_HOST_DEVICE void deallocate(void* p, std::size_t n, lane_cache* cache, unsigned shard) noexcept {
    const unsigned c = static_cast<unsigned>(size_class_pool::class_of(n));
    d_.block_live[index_of(p)] = 0;
    if (cache != nullptr && c < lane_cache_classes) {
      std::uint8_t& k = cache->count[c];
      if (k == lane_cache_depth) {
        give(c, &cache->slots[c][refill], lane_cache_depth - refill, shard);
        k = refill;
      }
      cache->slots[c][k++] = p;
      return;
    }
    give(c, &p, 1, shard);
  }

  // Returns a lane cache's blocks to the shards (teardown).
  WEFT_HOST_DEVICE void flush(lane_cache& cache, unsigned shard) noexcept {
    for (unsigned c = 0; c < lane_cache_classes; ++c) {
      give(c, cache.slots[c], cache.count[c], shard);
      cache.count[c] = 0;
    }
  }

  WEFT_HOST_DEVICE std::uint64_t index_of(const void* p) const noexcept {
    return static_cast<std::uint64_t>(static_cast<const char*>(p) - d_.arena) / granule;
  }

 private:
  // Up to `max` blocks of class c: own shard, then fresh carving, then other shards.
  WEFT_HOST_DEVICE unsigned take(unsigned c, void** out, unsigned max, unsigned shard) noexcept {
    unsigned n = pop_shard(d_.shards[shard % d_.num_shards], c, out, max);
    if (n == 0) n = carve(c, out, max);
    for (unsigned i = 1; n == 0 && i < d_.num_shards; ++i) n = pop_shard(d_.shards[(shard + i) % d_.num_shards], c, out, max);
    return n;
  }

  WEFT_HOST_DEVICE unsigned pop_shard(frame_shard& s, unsigned c, void** out, unsigned max) noexcept {
    if (detail::device_atomic<void*>(s.head[c]).load(detail::mo_relaxed) == nullptr) return 0;  // cheap miss
    unsigned n = 0;
    lock(s, c);
    while (n < max && s.head[c] != nullptr) {
      void* b = s.head[c];
      s.head[c] = *static_cast<void**>(b);
      out[n++] = b;
    }
    unlock(s, c);
    return n;
  }

  WEFT_HOST_DEVICE void give(unsigned c, void* const* blocks, unsigned n, unsigned shard) noexcept {
    if (n == 0) return;
    frame_shard& s = d_.shards[shard % d_.num_shards];
    lock(s, c);
    for (unsigned i = 0; i < n; ++i) {
      *static_cast<void**>(blocks[i]) = s.head[c];
      s.head[c] = blocks[i];
    }
    unlock(s, c);
  }

  WEFT_HOST_DEVICE unsigned carve(unsigned c, void** out, unsigned max) noexcept {
    const std::uint64_t bytes = size_class_pool::class_bytes(c);
    detail::device_atomic<std::uint64_t> carved(d_.carved);
    std::uint64_t old = carved.load(detail::mo_relaxed);
    unsigned n;
    do {
      const std::uint64_t room = old < d_.arena_bytes ? (d_.arena_bytes - old) / bytes : 0;
      n = room < max ? static_cast<unsigned>(room) : max;
      if (n == 0) return 0;
    } while (!carved.compare_exchange_weak(old, old + n * bytes, detail::mo_relaxed, detail::mo_relaxed));
    for (unsigned i = 0; i < n; ++i) {
      out[i] = d_.arena + old + i * bytes;
      d_.block_class[(old + i * bytes) / granule] = static_cast<std::uint8_t>(c + 1);
    }
    return n;
  }

  WEFT_HOST_DEVICE static void lock(frame_shard& s, unsigned c) noexcept {
    detail::device_atomic<std::uint32_t> w(s.lock[c]);
    while (w.load(detail::mo_relaxed) != 0 || w.exchange(1, detail::mo_acquire) != 0) {
#if WEFT_DEVICE_PASS
      __nanosleep(64);
#endif
    }
  }
  WEFT_HOST_DEVICE static void unlock(frame_shard& s, unsigned c) noexcept {
    detail::device_atomic<std::uint32_t>(s.lock[c]).store(0, detail::mo_release);
  }

  device_sched& d_;
};

}  // namespace weft::exec
