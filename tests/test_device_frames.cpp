// The device frame pool (executor/weft/executor/device_frames.hpp) driven by host threads:
// its code is the same on both sides (scoped atomics), so its lock-free magazine stacks are
// stress-tested here with small capacities, each thread standing for one lane.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "weft/executor/device_frames.hpp"

namespace {

using weft::exec::device_frames;
using weft::exec::device_sched;
using weft::exec::frame_shard;
using weft::exec::lane_cache;

// A device_sched with only the frame pool's fields, in host memory.
struct host_pool {
  std::vector<std::uint64_t> arena_words;
  std::vector<frame_shard> shards;
  std::vector<std::uint8_t> block_class, block_live;
  std::vector<lane_cache> caches;
  device_sched d{};

  host_pool(std::size_t arena_bytes, unsigned num_shards, unsigned lanes)
      : arena_words(arena_bytes / 8), shards(num_shards), block_class(arena_bytes / 64), block_live(arena_bytes / 64),
        caches(lanes) {
    d.arena = reinterpret_cast<char*>(arena_words.data());
    d.arena_bytes = arena_bytes;
    d.shards = shards.data();
    d.num_shards = num_shards;
    d.block_class = block_class.data();
    d.block_live = block_live.data();
    d.caches = caches.data();
  }
  device_frames frames() { return device_frames(d); }
  std::size_t index(const void* p) const { return static_cast<std::size_t>(static_cast<const char*>(p) - d.arena) / 64; }
};

}  // namespace

TEST_CASE("the device frame pool hands each block to one owner at a time under contention, and loses none",
          "[executor][stress]") {
  constexpr unsigned lanes = 8, rounds = 20000;
  host_pool pool(std::size_t{1} << 20, 2, lanes);  // 2 shards: lanes meet on the same stacks
  std::vector<std::atomic<std::uint8_t>> owned(pool.block_live.size());
  std::atomic<unsigned> double_owner{0}, refused{0};  // counted: Catch2's REQUIRE is not for threads
  std::vector<std::thread> threads;
  for (unsigned l = 0; l < lanes; ++l) {
    threads.emplace_back([&, l] {
      std::mt19937 rng(l + 1);
      std::vector<std::pair<void*, std::size_t>> held;
      for (unsigned r = 0; r < rounds; ++r) {
        if (held.size() < 40 && (held.empty() || rng() % 2 == 0)) {
          const std::size_t n = std::size_t{64} << (rng() % 4);  // 64 .. 512 B: cached classes
          void* p = pool.frames().allocate(n, &pool.caches[l], l / 2);
          if (p == nullptr) {  // cannot happen: 8 lanes hold at most 40 x 512 B + caches each
            refused.fetch_add(1);
            continue;
          }
          if (owned[pool.index(p)].exchange(1) != 0) double_owner.fetch_add(1);
          static_cast<char*>(p)[n - 1] = 1;  // the whole block is ours to write
          held.emplace_back(p, n);
        } else {
          const std::size_t i = rng() % held.size();
          owned[pool.index(held[i].first)].store(0);
          pool.frames().deallocate(held[i].first, held[i].second, &pool.caches[l], l / 2);
          held[i] = held.back();
          held.pop_back();
        }
      }
      for (auto& [p, n] : held) {
        owned[pool.index(p)].store(0);
        pool.frames().deallocate(p, n, &pool.caches[l], l / 2);
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(double_owner.load() == 0);
  REQUIRE(refused.load() == 0);
  for (unsigned l = 0; l < lanes; ++l) pool.frames().flush(pool.caches[l], l);
  for (std::uint8_t live : pool.block_live) REQUIRE(live == 0);
}

TEST_CASE("an exhausted device frame pool returns null, and every block comes back after a flush",
          "[executor]") {
  constexpr std::size_t arena = 64 * 1024;  // 256 blocks of 256 B
  host_pool pool(arena, 4, 4);
  std::vector<void*> got;
  for (unsigned l = 0;; l = (l + 1) % 4) {  // every lane allocates until the pool is dry
    void* p = pool.frames().allocate(256, &pool.caches[l], l);
    if (p == nullptr) break;
    got.push_back(p);
  }
  REQUIRE(got.size() == arena / 256);
  REQUIRE(pool.frames().allocate(256, nullptr, 0) == nullptr);  // the uncached path agrees
  // Freed through different lanes and shards, then flushed: all of it can be taken again,
  // through a lane whose own shard never saw most of it.
  for (std::size_t i = 0; i < got.size(); ++i) pool.frames().deallocate(got[i], 256, &pool.caches[i % 4], unsigned(i % 4));
  for (unsigned l = 0; l < 4; ++l) pool.frames().flush(pool.caches[l], l);
  std::size_t again = 0;
  while (pool.frames().allocate(256, &pool.caches[0], 0) != nullptr) ++again;
  REQUIRE(again == arena / 256);
  // A big block (not cached) is refused once no room is left to carve, and is not lost.
  REQUIRE(pool.frames().allocate(4096, nullptr, 0) == nullptr);
}
