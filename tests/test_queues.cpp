// Concurrent building blocks, stress-tested on the host with small capacities.
#include <catch2/catch.hpp>
#include <atomic>
#include <thread>
#include <vector>

#include <weft/executor/frame_pool.hpp>
#include <weft/executor/local_queue.hpp>

using weft::detail::task_header;

TEST_CASE("a local queue hands every item to exactly one of its owner and thieves", "[executor][stress]") {
  constexpr std::uint32_t cap = 8;  // tiny: forces full-queue and overflow paths
  constexpr int items = 200'000;
  constexpr int thieves = 3;
  std::vector<task_header> tasks(items);
  std::vector<std::atomic<int>> seen(items);
  auto index_of = [&](task_header* t) { return static_cast<int>(t - tasks.data()); };

  task_header* owner_slots[cap];
  weft::exec::local_queue owner;
  owner.init(owner_slots, cap);
  std::atomic<bool> done{false};
  std::atomic<int> taken{0};

  std::vector<std::thread> ts;
  for (int k = 0; k < thieves; ++k) {
    ts.emplace_back([&] {
      task_header* slots[cap];
      weft::exec::local_queue mine;
      mine.init(slots, cap);
      while (!done.load(std::memory_order_acquire) || !owner.empty_approx()) {
        if (task_header* t = mine.steal_half_from(owner)) {
          seen[index_of(t)].fetch_add(1);
          taken.fetch_add(1);
          while (task_header* u = mine.pop()) {
            seen[index_of(u)].fetch_add(1);
            taken.fetch_add(1);
          }
        }
      }
    });
  }
  std::vector<task_header*> overflow(cap);
  for (int i = 0; i < items; ++i) {
    while (!owner.push(&tasks[i])) {
      const std::uint32_t n = owner.take_half_for_overflow(overflow.data());
      for (std::uint32_t j = 0; j < n; ++j) {
        seen[index_of(overflow[j])].fetch_add(1);
        taken.fetch_add(1);
      }
    }
    if (i % 3 == 0)
      if (task_header* t = owner.pop()) {
        seen[index_of(t)].fetch_add(1);
        taken.fetch_add(1);
      }
  }
  while (task_header* t = owner.pop()) {
    seen[index_of(t)].fetch_add(1);
    taken.fetch_add(1);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : ts) t.join();
  REQUIRE(taken.load() == items);
  int wrong = 0;
  for (auto& s : seen) wrong += s.load() != 1;
  REQUIRE(wrong == 0);
}

TEST_CASE("the frame pool never hands one block to two owners and runs dry cleanly", "[executor][stress]") {
  constexpr std::size_t arena_bytes = 64 * 1024;
  alignas(64) static unsigned char arena[arena_bytes];
  weft::exec::size_class_pool pool;
  pool.init(arena, arena_bytes);
  std::atomic<int> failures{0};
  std::atomic<int> corrupt{0};
  std::vector<std::thread> ts;
  for (int k = 0; k < 4; ++k) {
    ts.emplace_back([&, k] {
      weft::exec::frame_cache cache(&pool);
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      for (int round = 0; round < 20'000; ++round) {
        const std::size_t n = 40 + (round * 37 + k * 11) % 900;
        if (auto* p = static_cast<unsigned char*>(cache.allocate(n))) {
          std::fill(p, p + n, static_cast<unsigned char>(k + 1));
          held.emplace_back(p, n);
        } else {
          failures.fetch_add(1);
        }
        if (held.size() > 24 || (round % 5 == 0 && !held.empty())) {
          auto [p, m] = held.front();
          for (std::size_t i = 0; i < m; ++i) corrupt.fetch_add(p[i] != k + 1);
          cache.deallocate(p, m);
          held.erase(held.begin());
        }
      }
      for (auto [p, m] : held) cache.deallocate(p, m);
    });
  }
  for (auto& t : ts) t.join();
  REQUIRE(corrupt.load() == 0);
  REQUIRE(pool.outstanding_blocks() == 0);  // caches flushed by their destructors
  REQUIRE(pool.carved_bytes() <= arena_bytes);
  void* big = pool.allocate(weft::exec::size_class_pool::max_block + 1);
  REQUIRE(big == nullptr);  // larger than the largest class
}
