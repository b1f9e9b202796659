// weft/executor/frame_pool.hpp - the size-class frame pool and its per-worker cache.
//
// Roles
//   size_class_pool  one per runtime, shared by every worker: an arena of fixed size
//                    (config::frame_pool_bytes) carved into blocks of 15 size classes,
//                    64 B to 1 MiB, with one free list per class.
//   frame_cache      one per worker (a host thread; later a GPU warp): up to 32 blocks
//                    per class for classes up to 4 KiB, refilled from and flushed to
//                    the pool in half-batches, so most allocations touch no shared word.
// Invariants
//   * A block belongs to exactly one place: the free list of its class, one cache, or
//     a live frame. `outstanding_` counts blocks outside the free lists (in caches or
//     live); after every cache is flushed it equals the number of live frames.
//   * The arena is carved monotonically (`carved_` only grows, never past `size_`); a
//     block keeps its class for the pool's lifetime.
//   * Exhaustion (free list empty and no room to carve) returns nullptr; it never
//     waits, and never falls back to malloc.
// Concurrency and memory orders
//   * Each free list is guarded by its own spin_lock (acquire/release), held only for
//     a batch of pointer moves; batches amortise it across 16 frames.
//   * `carved_` advances by a CAS (relaxed): it hands out disjoint ranges; the block's
//     contents are published to other threads by whatever publishes the frame.
//   * `outstanding_` is a relaxed counter: statistics only, exact when quiescent.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/atomic.hpp"
#include "weft/executor/spin_lock.hpp"

#if !WEFT_DEVICE_PASS && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_ASAN 1
#endif
#endif
#if !WEFT_DEVICE_PASS && defined(__SANITIZE_ADDRESS__)
#define WEFT_ASAN 1
#endif
#ifdef WEFT_ASAN
#include <sanitizer/asan_interface.h>
#define WEFT_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define WEFT_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define WEFT_POISON(p, n) ((void)(p), (void)(n))
#define WEFT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace weft::exec {

class size_class_pool {
 public:
  static constexpr unsigned num_classes = 15;
  static constexpr std::size_t min_block = 64;
  static constexpr std::size_t max_block = min_block << (num_classes - 1);

  WEFT_HOST_DEVICE static constexpr std::size_t class_bytes(unsigned c) noexcept { return min_block << c; }
  // The class that holds n bytes, or -1 when n exceeds the largest class.
  WEFT_HOST_DEVICE static constexpr int class_of(std::size_t n) noexcept {
    if (n > max_block) return -1;
    unsigned c = 0;
    while (class_bytes(c) < n) ++c;
    return static_cast<int>(c);
  }

  // `arena` must be 64-byte aligned and outlive the pool.
  WEFT_HOST_DEVICE void init(void* arena, std::size_t bytes) noexcept {
    base_ = static_cast<char*>(arena);
    size_ = bytes;
    carved_ = 0;
    outstanding_ = 0;
    for (auto& h : heads_) h = nullptr;
    WEFT_POISON(arena, bytes);
  }

  // Takes up to `max` blocks of class c into out[]; returns how many (0: exhausted).
  WEFT_HOST_DEVICE unsigned pop_batch(unsigned c, void** out, unsigned max) noexcept {
    unsigned n = 0;
    locks_[c].lock();
    while (n < max && heads_[c] != nullptr) {
      free_node* b = heads_[c];
      heads_[c] = b->next;
      out[n++] = b;
    }
    locks_[c].unlock();
    while (n < max) {
      void* b = carve(class_bytes(c));
      if (b == nullptr) break;
      out[n++] = b;
    }
    for (unsigned i = 0; i < n; ++i) WEFT_UNPOISON(out[i], class_bytes(c));
    count_outstanding(static_cast<std::int64_t>(n));
    return n;
  }

  WEFT_HOST_DEVICE void push_batch(unsigned c, void* const* blocks, unsigned n) noexcept {
    if (n == 0) return;
    for (unsigned i = 0; i < n; ++i) WEFT_POISON(static_cast<char*>(blocks[i]) + sizeof(free_node), class_bytes(c) - sizeof(free_node));
    locks_[c].lock();
    for (unsigned i = 0; i < n; ++i) {
      auto* b = static_cast<free_node*>(blocks[i]);
      b->next = heads_[c];
      heads_[c] = b;
    }
    locks_[c].unlock();
    count_outstanding(-static_cast<std::int64_t>(n));
  }

  WEFT_HOST_DEVICE void* allocate(std::size_t n) noexcept {
    const int c = class_of(n);
    void* b = nullptr;
    if (c >= 0) pop_batch(static_cast<unsigned>(c), &b, 1);
    return b;
  }
  WEFT_HOST_DEVICE void deallocate(void* p, std::size_t n) noexcept {
    push_batch(static_cast<unsigned>(class_of(n)), &p, 1);
  }

  WEFT_HOST_DEVICE bool owns(const void* p) const noexcept {
    return static_cast<const char*>(p) >= base_ && static_cast<const char*>(p) < base_ + size_;
  }
  // Blocks outside the free lists: live frames plus blocks parked in caches.
  WEFT_HOST_DEVICE std::int64_t outstanding_blocks() const noexcept {
    return detail::device_atomic<std::int64_t>(const_cast<std::int64_t&>(outstanding_)).load(detail::mo_relaxed);
  }
  WEFT_HOST_DEVICE std::size_t capacity_bytes() const noexcept { return size_; }
  WEFT_HOST_DEVICE std::size_t carved_bytes() const noexcept {
    return detail::device_atomic<std::uint64_t>(const_cast<std::uint64_t&>(carved_)).load(detail::mo_relaxed);
  }

 private:
  struct free_node {
    free_node* next;
  };

  WEFT_HOST_DEVICE void* carve(std::size_t bytes) noexcept {
    detail::device_atomic<std::uint64_t> c(carved_);
    std::uint64_t old = c.load(detail::mo_relaxed);
    do {
      if (old + bytes > size_) return nullptr;
    } while (!c.compare_exchange_weak(old, old + bytes, detail::mo_relaxed, detail::mo_relaxed));
    return base_ + old;
  }
  WEFT_HOST_DEVICE void count_outstanding(std::int64_t d) noexcept {
    if (d != 0) detail::device_atomic<std::int64_t>(outstanding_).fetch_add(d, detail::mo_relaxed);
  }

  char* base_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t carved_ = 0;
  std::int64_t outstanding_ = 0;
  free_node* heads_[num_classes] = {};
  spin_lock locks_[num_classes];
};

// A worker's private cache in front of a size_class_pool. Not thread-safe: exactly
// one worker uses it (it takes no ids because it holds no per-lane state).
class frame_cache {
 public:
  static constexpr unsigned cached_classes = 7;  // 64 B .. 4 KiB
  static constexpr unsigned depth = 32;

  WEFT_HOST_DEVICE explicit frame_cache(size_class_pool* pool = nullptr) noexcept : pool_(pool) {}
  frame_cache(const frame_cache&) = delete;
  frame_cache& operator=(const frame_cache&) = delete;
  WEFT_HOST_DEVICE ~frame_cache() { flush(); }

  WEFT_HOST_DEVICE size_class_pool* pool() const noexcept { return pool_; }

  WEFT_HOST_DEVICE void* allocate(std::size_t n) noexcept {
    const int c = size_class_pool::class_of(n);
    if (c < 0) return nullptr;
    if (static_cast<unsigned>(c) >= cached_classes) return pool_->allocate(n);
    unsigned& k = count_[c];
    if (k == 0) k = pool_->pop_batch(static_cast<unsigned>(c), slots_[c], depth / 2);
    return k == 0 ? nullptr : slots_[c][--k];
  }

  WEFT_HOST_DEVICE void deallocate(void* p, std::size_t n) noexcept {
    const int c = size_class_pool::class_of(n);
    if (static_cast<unsigned>(c) >= cached_classes) return pool_->deallocate(p, n);
    unsigned& k = count_[c];
    if (k == depth) {
      pool_->push_batch(static_cast<unsigned>(c), &slots_[c][depth / 2], depth / 2);
      k = depth / 2;
    }
    slots_[c][k++] = p;
  }

  // Returns every cached block to the pool.
  WEFT_HOST_DEVICE void flush() noexcept {
    if (pool_ == nullptr) return;
    for (unsigned c = 0; c < cached_classes; ++c) {
      pool_->push_batch(c, slots_[c], count_[c]);
      count_[c] = 0;
    }
  }

 private:
  size_class_pool* pool_;
  void* slots_[cached_classes][depth] = {};
  unsigned count_[cached_classes] = {};
};

}  // namespace weft::exec
