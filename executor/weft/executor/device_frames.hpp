// weft/executor/device_frames.hpp - the device frame pool: lock-free magazine shards and lane caches.
//
// Roles
//   arena         one device allocation of config::frame_pool_bytes, carved into blocks
//                 of 15 size classes (64 B .. 1 MiB) on demand, never returned. A block
//                 is named by the index of its first 64-byte granule (32 bits: the arena
//                 is under 256 GiB, max_frame_pool_bytes: the device_runtime constructor
//                 and weft::runtime's check).
//   magazine      up to mag_max free blocks of one class, listed inside the first of them
//                 (its first 64 bytes, as 16 words):
//                   word 0       the next magazine below it on its stack (granule + 1; 0: none)
//                   word 1       m, the blocks in the magazine, itself included (1 .. mag_max)
//                   words 2 ..   the granules of the other m - 1 blocks
//   frame_shard   num_shards lock-free stacks of magazines per class (Treiber stacks with
//                 a tagged top word). A lane refills from and returns to the shard of its
//                 warp (warp id % shards), so thousands of lanes do not meet on one word;
//                 only an empty shard sends a lane to carve or to the other shards.
//   lane_cache    a stack of up to lane_cache_depth blocks per small class (64 B .. 1 KiB)
//                 for each lane of each worker warp: private to that lane, so the common
//                 allocation is a load and a store. An empty cache pops one magazine
//                 (one CAS for up to 15 blocks); a full one pushes its upper half (32
//                 blocks: magazines of 15, 15 and 2, one CAS each). (Lanes of one warp
//                 run different tasks, diverged,
//                 so a cache shared by the warp would need atomics on every call.)
//   reclaim       a lane whose allocation finds the own shard, the arena and every other
//                 shard empty first flushes its own cache, then bumps reclaim_epoch and
//                 waits (device_hooks.hpp, reclaim_then_allocate): every warp that sees a
//                 new epoch flushes its 32 lanes' caches into the shards between batches
//                 (device_worker.hpp: every 16th trip when busy, every idle trip, and a
//                 parked warp leaves its nap for it). The lane retries while it waits,
//                 the longer of reclaim_wait_ns and 2 park_max_ns + 100 us (so that napping
//                 warps wake for it); only then is the task told out_of_memory, and for
//                 reclaim_quiet_ns after that a dry pool fails at once (a spawn storm
//                 on a full pool must not wait at every spawn). The words are hints
//                 (relaxed): a warp that misses an epoch flushes at the next; the blocks
//                 themselves travel through push and pop, as for any spill. A warp that
//                 stays inside one batch for the whole wait keeps its caches: always the
//                 waiting lane's own warp. Only the cached classes (up to 1 KiB) are
//                 reclaimed, and the quiet time is per class.
//   side tables   block_class (class + 1 at each block's first 64-byte granule, written
//                 once when carved) and block_live (1 while the block holds a coroutine
//                 frame, 2 while it holds another object: a channel's buffer, when_any's
//                 shared state; 3 for a spawn_group's block). Shutdown scans them to find
//                 every frame, and every group block, still alive.
// Invariants
//   * A block is in exactly one place: a magazine on a shard's stack, one lane cache, or
//     a live frame or object (block_live != 0 exactly in the last case).
//   * A magazine's words do not change while it is on a stack: only the lane that pops
//     it (the CAS that takes it off) may reuse its blocks.
//   * `carved` only grows. Blocks lie in [0, min(carved, arena_bytes)); granules there
//     with block_class 0 belong to no block (the tail a carve left, below).
//   * Exhaustion returns nullptr after the own shard, carving and every other shard
//     came up empty; the task sees errc::out_of_memory. No device malloc anywhere.
//     The one carve whose range runs past the arena's end leaves the tail that its
//     class does not fit in uncarved, and no later carve uses it: less than that carve's
//     request (at most 32 KiB for the cached classes, 1 MiB otherwise) of the arena can
//     go unused, so out_of_memory may come that much earlier than a perfect fit.
// Memory orders (device scope: every worker warp of the GPU shares the pool)
//   * push: the magazine's words are written, then the top CAS releases them.
//   * pop: the top is loaded with acquire (it reads the last RMW of the release sequence
//     that began at the push of that magazine, so the magazine's words are visible); the
//     words are read, then the CAS takes the magazine off with the same (tagged) value.
//     Every push and pop adds 1 to the tag, so a top that was popped and pushed back in
//     between (ABA) no longer matches and the CAS fails. A loser may read words of a
//     block that its new owner is writing; it discards them (its CAS fails). Those reads
//     are relaxed atomics at device scope, so no stale L1 line is read either.
//   * `carved`: relaxed fetch_add; it hands out disjoint ranges. A frame's contents reach
//     other lanes through whatever publishes the task (its state word, a queue).
//   * Side-table bytes are written by the lane that owns the block and read by the
//     teardown kernel after the workers' kernel has ended (kernel boundary = ordering).
// Why no lock: the spin-locked free lists this replaces took 30,000 to 175,000 cycles
// per refill under load on an H200 (lanes of one warp spinning on one lock, and a chain
// of dependent loads inside it); a pop is three dependent accesses (top, magazine, CAS).
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
  static constexpr unsigned mag_max = granule / sizeof(std::uint32_t) - 1;  // 15
  static constexpr unsigned refill = lane_cache_depth / 2;                  // blocks per spill, and per carve
  static_assert(lane_cache_depth <= 255 && mag_max <= lane_cache_depth, "an empty cache takes a whole magazine");

  WEFT_HOST_DEVICE explicit device_frames(device_sched& d) noexcept : d_(d) {}

  // cache may be null (outside a worker lane: teardown).
  static constexpr std::uint8_t live_frame = 1, live_object = 2, live_group = 3;

  // The common cases, inline (device_hooks.hpp): a block from the lane's own cache, and a
  // block back into it while it has room. Each loads and stores only the lane's cache
  // (which no other lane touches); `false`: the caller takes the out-of-line path below.
  WEFT_HOST_DEVICE static bool take_cached(lane_cache& cache, unsigned c, std::uint32_t* g) noexcept {
    std::uint8_t& k = cache.count[c];
    if (k == 0) return false;
    *g = cache.slots[c][--k];
    return true;
  }
  WEFT_HOST_DEVICE static bool give_cached(lane_cache& cache, unsigned c, std::uint32_t g) noexcept {
    std::uint8_t& k = cache.count[c];
    if (k == lane_cache_depth) return false;
    cache.slots[c][k++] = g;
    return true;
  }
  // Records whether granule g's block holds a live frame (`mark`) or is free (0): the one
  // place that writes block_live (the pool's paths and the hooks' inline ones, which pass
  // the constant bank's copy of its address).
  WEFT_HOST_DEVICE static void mark_block(std::uint8_t* block_live, std::uint32_t g, std::uint8_t mark) noexcept {
    block_live[g] = mark;
  }
  // A block's granule index in `arena`, and back (the hooks' inline paths pass the
  // constant bank's copy of the arena's address).
  WEFT_HOST_DEVICE static std::uint32_t granule_in(const char* arena, const void* p) noexcept {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(static_cast<const char*>(p) - arena) / granule);
  }
  WEFT_HOST_DEVICE static void* block_in(char* arena, std::uint32_t g) noexcept {
    return arena + std::uint64_t{g} * granule;
  }

  WEFT_HOST_DEVICE void* allocate(std::size_t n, lane_cache* cache, unsigned shard,
                                  std::uint8_t mark = live_frame) noexcept {
    const int c = size_class_pool::class_of(n);
    if (c < 0) return nullptr;
    std::uint32_t g = 0;
    bool got = false;
    if (cache != nullptr && static_cast<unsigned>(c) < lane_cache_classes) {
      std::uint8_t& k = cache->count[c];
      if (k == 0) k = static_cast<std::uint8_t>(take(static_cast<unsigned>(c), cache->slots[c], lane_cache_depth, shard));
      got = take_cached(*cache, static_cast<unsigned>(c), &g);
    } else {
      got = take(static_cast<unsigned>(c), &g, 1, shard) != 0;
    }
    if (!got) return nullptr;
    mark_block(d_.block_live, g, mark);
    return block_at(g);
  }

  WEFT_HOST_DEVICE void deallocate(void* p, std::size_t n, lane_cache* cache, unsigned shard) noexcept {
    const unsigned c = static_cast<unsigned>(size_class_pool::class_of(n));
    const std::uint32_t g = granule_of(p);
    mark_block(d_.block_live, g, 0);
    if (cache != nullptr && c < lane_cache_classes) {
      std::uint8_t& k = cache->count[c];
      if (k == lane_cache_depth) {
        give(c, &cache->slots[c][refill], lane_cache_depth - refill, shard);
        k = refill;
      }
      give_cached(*cache, c, g);
      return;
    }
    give(c, &g, 1, shard);
  }

  // Returns a lane cache's blocks to the shards (teardown).
  WEFT_HOST_DEVICE void flush(lane_cache& cache, unsigned shard) noexcept {
    for (unsigned c = 0; c < lane_cache_classes; ++c) {
      give(c, cache.slots[c], cache.count[c], shard);
      cache.count[c] = 0;
    }
  }

 private:
  WEFT_HOST_DEVICE std::uint32_t granule_of(const void* p) const noexcept { return granule_in(d_.arena, p); }
  WEFT_HOST_DEVICE void* block_at(std::uint32_t g) const noexcept { return block_in(d_.arena, g); }
  WEFT_HOST_DEVICE std::uint32_t* words_of(std::uint32_t g) const noexcept {
    return static_cast<std::uint32_t*>(block_at(g));
  }

  // Up to `max` blocks of class c into out[]: own shard, then fresh carving, then the
  // other shards. Returns how many (0: the pool is exhausted for this class).
  WEFT_HOST_DEVICE unsigned take(unsigned c, std::uint32_t* out, unsigned max, unsigned shard) noexcept {
    unsigned n = pop(d_.shards[shard % d_.num_shards], c, out, max, shard);
    if (n == 0) n = carve(c, out, max < refill ? max : refill);
    if (n == 0) n = take_from_others(c, out, max, shard);
    return n;
  }

  // take(), once the own shard and the arena are empty: pops from the nearest other shard
  // (shard + 1, shard + 2, ...) whose stack of class c looks non-empty. The tops are read
  // scan_width at a time with relaxed loads, all issued before any is looked at, so a
  // round costs one memory latency; only a shard that looked non-empty is popped (pop's
  // acquire). Popping each shard in turn cost one acquire load per shard (127 memory
  // latencies, each also dropping the SM's L1) before a pool that is nearly exhausted
  // could say so.
  static constexpr unsigned scan_width = 8;
  WEFT_HOST_DEVICE unsigned take_from_others(unsigned c, std::uint32_t* out, unsigned max, unsigned shard) noexcept {
    const unsigned num = d_.num_shards;
    for (unsigned i = 1; i < num; i += scan_width) {
      std::uint64_t top[scan_width];
      for (unsigned k = 0; k < scan_width; ++k) {
        const unsigned j = i + k < num ? i + k : i;  // past the last shard: look at shard i again
        top[k] = detail::device_atomic<std::uint64_t>(d_.shards[(shard + j) % num].top[c]).load(detail::mo_relaxed);
      }
      for (unsigned k = 0; k < scan_width && i + k < num; ++k) {
        if (static_cast<std::uint32_t>(top[k]) == 0) continue;  // looked empty
        if (const unsigned n = pop(d_.shards[(shard + i + k) % num], c, out, max, shard)) return n;
      }
    }
    return 0;
  }

  // Returns n blocks of class c to the shard, as magazines of at most mag_max.
  WEFT_HOST_DEVICE void give(unsigned c, const std::uint32_t* blocks, unsigned n, unsigned shard) noexcept {
    for (unsigned at = 0; at < n; at += mag_max)
      push(d_.shards[shard % d_.num_shards], c, blocks + at, n - at < mag_max ? n - at : mag_max);
  }

  // Pushes blocks[0 .. m) as one magazine (1 <= m <= mag_max).
  WEFT_HOST_DEVICE void push(frame_shard& s, unsigned c, const std::uint32_t* blocks, unsigned m) noexcept {
    // Relaxed atomic stores: a popper that loses its CAS may be reading these words.
    std::uint32_t* w = words_of(blocks[0]);
    detail::device_atomic<std::uint32_t>(w[1]).store(m, detail::mo_relaxed);
    for (unsigned i = 1; i < m; ++i) detail::device_atomic<std::uint32_t>(w[1 + i]).store(blocks[i], detail::mo_relaxed);
    detail::device_atomic<std::uint64_t> top(s.top[c]);
    detail::device_atomic<std::uint32_t> next(w[0]);
    std::uint64_t t = top.load(detail::mo_relaxed);
    do {
      next.store(static_cast<std::uint32_t>(t), detail::mo_relaxed);
    } while (!top.compare_exchange_weak(t, ((t >> 32) + 1) << 32 | (std::uint64_t{blocks[0]} + 1), detail::mo_release,
                                        detail::mo_relaxed));
  }

  // Pops one magazine into out[] (at most `max` of its blocks: the rest go back as a
  // magazine of their own, which only a caller wanting fewer than a magazine sees).
  WEFT_HOST_DEVICE unsigned pop(frame_shard& s, unsigned c, std::uint32_t* out, unsigned max, unsigned shard) noexcept {
    detail::device_atomic<std::uint64_t> top(s.top[c]);
    std::uint64_t t = top.load(detail::mo_acquire);
    std::uint32_t words[mag_max + 1];
    for (;;) {
      if (static_cast<std::uint32_t>(t) == 0) return 0;  // empty (also the cheap miss of a scan)
      std::uint32_t* w = words_of(static_cast<std::uint32_t>(t) - 1);
      // Every word at once (independent loads: one memory latency), before the CAS: valid
      // if the CAS succeeds, since the magazine cannot change while it is on the stack.
      for (unsigned i = 0; i <= mag_max; ++i) words[i] = detail::device_atomic<std::uint32_t>(w[i]).load(detail::mo_relaxed);
      if (top.compare_exchange_weak(t, ((t >> 32) + 1) << 32 | words[0], detail::mo_acquire, detail::mo_acquire)) break;
    }
    const std::uint32_t first = static_cast<std::uint32_t>(t) - 1;
    const unsigned m = words[1] >= 1 && words[1] <= mag_max ? words[1] : 1;  // written by push: always in range
    out[0] = first;
    const unsigned n = m < max ? m : max;
    for (unsigned i = 1; i < n; ++i) out[i] = words[1 + i];
    if (n < m) give(c, words + 1 + n, m - n, shard);
    return n;
  }

  // Up to `max` fresh blocks of class c from the arena. One fetch_add hands out a
  // disjoint range; a range that runs past the arena's end keeps the blocks that fit, and
  // `carved` stays past the end from then on (the relaxed look first then returns 0
  // without an RMW). The tail of the arena too short for a block of the class that ran
  // past the end stays unused. A CAS loop here retried under contention: with cycle
  // probes in spawn_many on an H200 a carve took about 2,000,000 cycles, every lane whose
  // shard was empty retrying on this one word (docs/benchmarks.md, twelfth session).
  WEFT_HOST_DEVICE unsigned carve(unsigned c, std::uint32_t* out, unsigned max) noexcept {
    const std::uint64_t bytes = size_class_pool::class_bytes(c);
    detail::device_atomic<std::uint64_t> carved(d_.carved);
    if (carved.load(detail::mo_relaxed) >= d_.arena_bytes) return 0;
    const std::uint64_t old = carved.fetch_add(std::uint64_t{max} * bytes, detail::mo_relaxed);
    const std::uint64_t room = old < d_.arena_bytes ? (d_.arena_bytes - old) / bytes : 0;
    const unsigned n = room < max ? static_cast<unsigned>(room) : max;
    for (unsigned i = 0; i < n; ++i) {
      out[i] = static_cast<std::uint32_t>((old + i * bytes) / granule);
      d_.block_class[out[i]] = static_cast<std::uint8_t>(c + 1);
    }
    return n;
  }

  device_sched& d_;
};

}  // namespace weft::exec
