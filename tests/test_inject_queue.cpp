// The device executor's inject queue (executor/weft/executor/device_queues.hpp) is
// written for both passes, so its protocol is tested here on host threads with tiny
// capacities: "full" is reported, never waited on, and every item is delivered once.
#include <catch2/catch.hpp>
#include <atomic>
#include <thread>
#include <vector>

#include <weft/executor/device_queues.hpp>

using weft::detail::task_header;
using weft::exec::inject_cell;
using weft::exec::inject_ring;
using weft::exec::inject_shard;

TEST_CASE("an inject ring reports full instead of waiting, and hands items back in order", "[executor]") {
  inject_shard shard{};
  inject_cell cells[4];
  inject_ring::init(shard, cells, 4);
  inject_ring q(shard);
  task_header tasks[6];
  REQUIRE(q.pop() == nullptr);
  for (int i = 0; i < 4; ++i) REQUIRE(q.push(&tasks[i]));
  REQUIRE_FALSE(q.push(&tasks[4]));  // full: the caller decides (a spawn reports queue_full)
  REQUIRE(q.claim_push(1) == ~std::uint64_t{0});
  REQUIRE(q.size_approx() == 4);
  REQUIRE(q.pop() == &tasks[0]);
  REQUIRE(q.push(&tasks[4]));  // one slot freed: room again
  std::uint64_t first = 0;
  REQUIRE(q.claim_pop(8, &first) == 4);  // a batch claim takes what there is, no more
  for (int i = 1; i <= 4; ++i) REQUIRE(q.take(first + i - 1) == &tasks[i]);
  REQUIRE(q.pop() == nullptr);
  REQUIRE(q.size_approx() == 0);
}

TEST_CASE("an inject ring shared by producers and batch consumers delivers every item exactly once",
          "[executor][stress]") {
  constexpr int producers = 3, consumers = 3, per_producer = 60'000;
  constexpr int items = producers * per_producer;
  inject_shard shard{};
  std::vector<inject_cell> cells(8);  // tiny: producers meet "full" all the time
  inject_ring::init(shard, cells.data(), cells.size());
  std::vector<task_header> tasks(items);
  std::vector<std::atomic<int>> seen(items);
  std::atomic<int> taken{0};
  std::atomic<long> full_seen{0};

  std::vector<std::thread> ts;
  for (int p = 0; p < producers; ++p) {
    ts.emplace_back([&, p] {
      inject_ring q(shard);
      for (int i = p * per_producer; i < (p + 1) * per_producer; ++i) {
        while (!q.push(&tasks[i])) {
          full_seen.fetch_add(1, std::memory_order_relaxed);
          std::this_thread::yield();
        }
      }
    });
  }
  for (int c = 0; c < consumers; ++c) {
    ts.emplace_back([&] {
      inject_ring q(shard);
      while (taken.load() < items) {
        std::uint64_t first = 0;
        const std::uint32_t n = q.claim_pop(3, &first);
        for (std::uint32_t k = 0; k < n; ++k) seen[q.take(first + k) - tasks.data()].fetch_add(1);
        taken.fetch_add(static_cast<int>(n));
        if (n == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& t : ts) t.join();
  int wrong = 0;
  for (auto& s : seen) wrong += s.load() != 1;
  REQUIRE(wrong == 0);
  REQUIRE(taken.load() == items);
  REQUIRE(full_seen.load() > 0);  // the full path was exercised
}
