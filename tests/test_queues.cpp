// Concurrent building blocks, stress-tested on the host with small capacities.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstdint>
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

// As the executor uses them: every worker owns a queue and steals from the others, so
// thieves are robbed too. Each item carries plain (non-atomic) contents that its owner
// writes just before the push and whoever takes it reads: only the queue's own orders
// publish them (ThreadSanitizer, scripts/test tsan, reports a missing one as a race). The
// tallies are per thread and the one shared count is relaxed, so no other
// synchronisation orders the threads for them.
TEST_CASE("local queues whose owners are also thieves hand every item, with its contents, to exactly one taker",
          "[executor][stress]") {
  constexpr std::uint32_t cap = 4;
  constexpr int workers = 6, per_worker = 40'000, total = workers * per_worker;
  struct item {
    task_header header;
    std::uint64_t contents;  // plain: written before the push, read by the taker
  };
  std::vector<item> items(total);
  std::vector<task_header*> slots(workers * cap);
  std::vector<weft::exec::local_queue> queues(workers);
  for (int w = 0; w < workers; ++w) queues[w].init(&slots[w * cap], cap);
  std::atomic<int> taken_total{0};
  std::vector<std::vector<int>> tally(workers, std::vector<int>(total, 0));
  std::vector<int> bad_contents(workers, 0);
  auto take = [&](int w, task_header* t) {
    const auto* it = reinterpret_cast<const item*>(t);
    const int i = static_cast<int>(it - items.data());
    if (it->contents != 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1)) ++bad_contents[w];
    ++tally[w][i];
    taken_total.fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<std::thread> ts;
  for (int w = 0; w < workers; ++w) {
    ts.emplace_back([&, w] {
      weft::exec::local_queue& mine = queues[w];
      task_header* overflow[cap];
      std::uint32_t rng = 0x2545f491u * static_cast<std::uint32_t>(w + 1);
      int next = 0;
      while (taken_total.load(std::memory_order_relaxed) < total) {
        if (next < per_worker) {  // push one of our own, then maybe run one
          const int i = w * per_worker + next++;
          items[i].contents = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
          while (!mine.push(&items[i].header)) {
            const std::uint32_t n = mine.take_half_for_overflow(overflow);
            for (std::uint32_t j = 0; j < n; ++j) take(w, overflow[j]);
          }
          if (next % 2 == 0)
            if (task_header* t = mine.pop()) take(w, t);
          continue;
        }
        if (task_header* t = mine.pop()) {
          take(w, t);
          continue;
        }
        rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;  // our queue is empty: steal
        const int victim = static_cast<int>(rng % workers);
        if (victim == w) continue;
        if (task_header* t = mine.steal_half_from(queues[victim])) take(w, t);
      }
    });
  }
  for (auto& t : ts) t.join();
  int wrong = 0, bad = 0;
  for (int i = 0; i < total; ++i) {
    int n = 0;
    for (int w = 0; w < workers; ++w) n += tally[w][i];
    wrong += n != 1;
  }
  for (int w = 0; w < workers; ++w) bad += bad_contents[w];
  REQUIRE(taken_total.load() == total);
  REQUIRE(wrong == 0);
  REQUIRE(bad == 0);
}

TEST_CASE("the frame pool never hands one block to two owners and runs dry cleanly", "[executor][stress]") {
  constexpr std::size_t arena_bytes = 64 * 1024;
  alignas(64) static unsigned char arena[arena_bytes];
  weft::exec::size_class_pool pool;
  pool.init(arena, arena_bytes);
  // Each thread holds up to `most_held` blocks of 40..939 bytes (about 81 KiB of them, in
  // blocks of 64..1,024 bytes): more than the arena, so every thread runs it dry, even
  // one that runs alone, and sees allocate return null rather than a block someone holds.
  constexpr std::size_t most_held = 120;
  std::atomic<int> failures{0};
  std::atomic<int> threads_ran_dry{0};
  std::atomic<int> corrupt{0};
  std::vector<std::thread> ts;
  for (int k = 0; k < 4; ++k) {
    ts.emplace_back([&, k] {
      weft::exec::frame_cache cache(&pool);
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      int mine = 0;
      for (int round = 0; round < 20'000; ++round) {
        const std::size_t n = 40 + (round * 37 + k * 11) % 900;
        if (auto* p = static_cast<unsigned char*>(cache.allocate(n))) {
          std::fill(p, p + n, static_cast<unsigned char>(k + 1));
          held.emplace_back(p, n);
        } else {
          ++mine;
        }
        if (held.size() > most_held || (round % 5 == 0 && !held.empty())) {
          auto [p, m] = held.front();
          for (std::size_t i = 0; i < m; ++i) corrupt.fetch_add(p[i] != k + 1);
          cache.deallocate(p, m);
          held.erase(held.begin());
        }
      }
      for (auto [p, m] : held) cache.deallocate(p, m);
      failures.fetch_add(mine);
      threads_ran_dry.fetch_add(mine > 0);
    });
  }
  for (auto& t : ts) t.join();
  INFO("allocations refused: " << failures.load());
  REQUIRE(threads_ran_dry.load() == 4);  // the dry pool was met, by every thread
  REQUIRE(corrupt.load() == 0);
  REQUIRE(pool.outstanding_blocks() == 0);  // caches flushed by their destructors
  REQUIRE(pool.carved_bytes() <= arena_bytes);
  // Dry no more: the blocks given back serve again (the 1,024-byte class was carved).
  void* again = pool.allocate(1000);
  REQUIRE(again != nullptr);
  REQUIRE(pool.owns(again));
  pool.deallocate(again, 1000);
  void* big = pool.allocate(weft::exec::size_class_pool::max_block + 1);
  REQUIRE(big == nullptr);  // larger than the largest class
}
