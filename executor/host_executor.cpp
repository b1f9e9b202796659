// The host backend's executor: see weft/executor/host_executor.hpp for the design.
#include "weft/executor/host_executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "weft/detail/run.hpp"
#include "weft/executor/host_frames.hpp"

namespace weft::exec {

using detail::task_header;

// ---------------------------------------------------------------- frame pool
pool_frame_allocator::pool_frame_allocator(std::size_t bytes)
    : arena_(std::aligned_alloc(64, (bytes + 63) & ~std::size_t{63})) {
  if (arena_ == nullptr) throw std::bad_alloc();
  pool_.init(arena_, (bytes + 63) & ~std::size_t{63});
}
pool_frame_allocator::~pool_frame_allocator() {
  WEFT_UNPOISON(arena_, pool_.capacity_bytes());
  std::free(arena_);
}

// ---------------------------------------------------------------- inject queue
void inject_queue::push(task_header* t) { push_batch(&t, 1); }

void inject_queue::push_batch(task_header* const* ts, std::uint32_t n) {
  if (n == 0) return;
  for (std::uint32_t i = 0; i + 1 < n; ++i) ts[i]->link = ts[i + 1];
  ts[n - 1]->link = nullptr;
  std::lock_guard lk(m_);
  if (tail_) tail_->link = ts[0];
  else head_ = ts[0];
  tail_ = ts[n - 1];
  len_.fetch_add(n, std::memory_order_release);
}

task_header* inject_queue::pop() {
  if (empty()) return nullptr;
  std::lock_guard lk(m_);
  task_header* t = head_;
  if (t == nullptr) return nullptr;
  head_ = t->link;
  if (head_ == nullptr) tail_ = nullptr;
  len_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

// ---------------------------------------------------------------- registry
root_registry::shard& root_registry::shard_of(task_header* t) noexcept {
  return shards_[(reinterpret_cast<std::uintptr_t>(t) >> 6) % shards];
}
void root_registry::unlink(shard& s, task_header* t) noexcept {
  if (t->reg_prev) t->reg_prev->reg_next = t->reg_next;
  else s.head = t->reg_next;
  if (t->reg_next) t->reg_next->reg_prev = t->reg_prev;
  t->reg_prev = t->reg_next = nullptr;
}
void root_registry::add(task_header* t) {
  shard& s = shard_of(t);
  std::lock_guard lk(s.m);
  t->reg_prev = nullptr;
  t->reg_next = s.head;
  if (s.head) s.head->reg_prev = t;
  s.head = t;
  count_.fetch_add(1, std::memory_order_relaxed);
}
void root_registry::remove(task_header* t) {
  shard& s = shard_of(t);
  std::lock_guard lk(s.m);
  unlink(s, t);
  count_.fetch_sub(1, std::memory_order_relaxed);
}
// ---------------------------------------------------------------- workers
struct host_executor::worker {
  host_executor* exec = nullptr;
  unsigned index = 0;
  std::unique_ptr<task_header*[]> slots;
  local_queue queue;
  std::atomic<task_header*> lifo{nullptr};
  unsigned lifo_streak = 0;
  frame_cache cache;
  std::uint32_t rng = 0;
  unsigned tick = 0;
  bool searching = false;
  // The coop budget of bulk steps (host_bulk_budget_spent): steps the task of the current
  // turn may still run before it yields (reset by run_one for each task it runs, as the
  // device resets a warp's inline budget every trip), and whether the last such yield is
  // still to be honoured by the next pick (find_local_work looks at the inbox and the
  // inject queue first).
  std::uint32_t bulk_steps_left = bulk_steps_per_turn;
  bool budget_spent = false;
  // Pinned tasks sent here by other threads (send_home): a Treiber stack through `link`,
  // pushed with release CASes and taken whole with an acquire exchange (so the pushers'
  // `link` writes are visible); `pinned_rest` holds what this thread took and has not
  // run yet. `parked` pairs with the inbox like sleepers_ with the queues (park()).
  std::atomic<task_header*> inbox{nullptr};
  task_header* pinned_rest = nullptr;
  std::atomic<bool> parked{false};
  // Parking (park()): this worker's own condition variable, so that a wake-up meant for
  // it (a permit, or a pinned task in its inbox) wakes this thread and no other; and,
  // under park_m_, whether notify_one_if_needed chose it (and counted it as a searcher).
  std::condition_variable cv;
  bool permit = false;
  std::thread thread;

  explicit worker(size_class_pool* pool) : cache(pool) {}
  std::uint32_t next_random() noexcept {  // xorshift32: victim choice only
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
  }
};

namespace {
thread_local host_executor::worker* tls_worker = nullptr;

std::uint32_t round_up_pow2(std::uint32_t v) {
  std::uint32_t p = 2;
  while (p < v) p <<= 1;
  return p;
}
}  // namespace

host_executor::worker* host_executor::current_worker() const noexcept {
  worker* w = tls_worker;
  return (w && w->exec == this) ? w : nullptr;
}

host_executor::host_executor(const host_executor_config& cfg) {
  if (cfg.user_allocator) {
    allocator_ = cfg.user_allocator;
  } else {
    pool_ = std::make_unique<pool_frame_allocator>(cfg.frame_pool_bytes);
    allocator_ = pool_.get();
  }
  unsigned n = cfg.workers ? cfg.workers : std::thread::hardware_concurrency();
  if (n == 0) n = 1;
  // Clamped to [2, 8192]: push_local's overflow buffer holds half of the largest ring.
  const std::uint32_t want = cfg.local_queue_capacity < 2 ? 2 : (cfg.local_queue_capacity > 8192 ? 8192 : cfg.local_queue_capacity);
  const std::uint32_t cap = round_up_pow2(want);
  for (unsigned i = 0; i < n; ++i) {
    auto w = std::make_unique<worker>(pool_ ? &pool_->pool() : nullptr);
    w->exec = this;
    w->index = i;
    w->slots = std::make_unique<task_header*[]>(cap);
    w->queue.init(w->slots.get(), cap);
    w->rng = 0x9e3779b9u * (i + 1);
    workers_.push_back(std::move(w));
  }
  idle_.reserve(n);  // park() never allocates under park_m_
  try {
    for (auto& w : workers_) w->thread = std::thread([this, p = w.get()] { worker_main(*p); });
  } catch (...) {  // a thread could not start (a process or memory limit): no destructor runs,
    shutdown();    // so the threads that did start are stopped and joined here (step 3)
    throw;
  }
}

// Pools whose blocks outlived their runtime (below): kept reachable to the end of the
// process, so that those blocks' later frees stay valid (and a leak checker sees no leak).
namespace {
std::mutex g_kept_pools_m;
std::vector<std::unique_ptr<pool_frame_allocator>> g_kept_pools;
}  // namespace

host_executor::~host_executor() {
  shutdown();
  // Blocks still out after step 6 belong to objects kept past the runtime's end (a task
  // created but never started and moved out of every frame, a channel on the heap). Each
  // names this pool's allocator in its prefix and will be freed into it, so the pool stays
  // alive: its arena is not returned until the process ends. Said on stderr.
  const std::int64_t kept = pool_ ? pool_->pool().outstanding_blocks() : 0;
  if (kept != 0) {
    std::fprintf(stderr,
                 "weft: %lld frame-pool block(s) outlive their host runtime (a task or object kept past its end); "
                 "the pool is kept so that they can still be freed\n",
                 static_cast<long long>(kept));
    std::lock_guard lk(g_kept_pools_m);
    g_kept_pools.push_back(std::move(pool_));
  }
}

void host_executor::worker_main(worker& w) {
  tls_worker = &w;
  frame_scope frames(allocator_, pool_ ? &w.cache : nullptr);
  while (!stopping()) {
    if (help_bulk(w)) continue;  // bulk chunks first: tasks await them
    if (task_header* t = find_work(w)) run_one(w, t);
    else park(w);
  }
  w.cache.flush();
  tls_worker = nullptr;
}

task_header* host_executor::find_work(worker& w) {
  task_header* t = find_local_work(w);
  if (t == nullptr) return search(w);
  if (w.searching) {  // woken as a searcher (counted by the notifier) but found work at home
    w.searching = false;
    end_search(true);
  }
  return t;
}

// The next pinned task sent to this worker, or null.
task_header* host_executor::take_pinned(worker& w) noexcept {
  if (w.pinned_rest == nullptr && w.inbox.load(std::memory_order_relaxed) != nullptr)
    w.pinned_rest = w.inbox.exchange(nullptr, std::memory_order_acquire);
  task_header* t = w.pinned_rest;
  if (t != nullptr) w.pinned_rest = t->link;
  return t;
}

// The inject queue first every 61st pick, the inbox every 61st (offset) pick: neither
// starves behind a busy LIFO slot and ring; otherwise both come after them.
// The pick after a task spent its bulk budget looks at both first too (as the device's
// trip after a spent inline budget makes every look of its loop): the inbox before the
// inject queue, which other workers' searches also drain, while only this thread may
// run what its inbox holds.
task_header* host_executor::find_local_work(worker& w) {
  ++w.tick;
  const bool spent = w.budget_spent;
  w.budget_spent = false;
  if (spent)
    if (task_header* t = take_pinned(w)) return t;
  if (w.tick % 61 == 0 || spent)
    if (task_header* t = inject_.pop()) return t;
  if (w.tick % 61 == 30)
    if (task_header* t = take_pinned(w)) return t;
  if (task_header* t = w.lifo.exchange(nullptr, std::memory_order_acquire)) {
    if (++w.lifo_streak <= 3) return t;
    push_local(w, t);  // cap LIFO runs so a ping-pong pair cannot starve the queue
  }
  w.lifo_streak = 0;
  if (task_header* t = w.queue.pop()) return t;
  if (task_header* t = take_pinned(w)) return t;
  return inject_.pop();
}

task_header* host_executor::search(worker& w) {
  if (!w.searching && !try_begin_search()) return nullptr;
  w.searching = true;
  task_header* found = nullptr;
  const unsigned n = worker_count();
  const unsigned start = w.next_random() % n;
  for (unsigned k = 0; k < n && !found; ++k) {
    worker& v = *workers_[(start + k) % n];
    if (&v == &w) continue;
    found = w.queue.steal_half_from(v.queue);
  }
  for (unsigned k = 0; k < n && !found; ++k) {  // second pass: LIFO slots
    worker& v = *workers_[(start + k) % n];
    if (&v != &w) found = v.lifo.exchange(nullptr, std::memory_order_acquire);
  }
  if (!found) found = inject_.pop();
  w.searching = false;
  end_search(found != nullptr);
  return found;
}

void host_executor::run_one(worker& w, task_header* t) {
  w.bulk_steps_left = bulk_steps_per_turn;  // this task's turn (host_bulk_budget_spent)
  switch (detail::run_and_settle(t)) {
    case detail::after_run::requeue_now: push_lifo(w, t); break;
    case detail::after_run::requeue_back: push_local(w, t); break;
    case detail::after_run::idle:
    case detail::after_run::held:  // only the device executor holds tasks (bulk.hpp)
    case detail::after_run::finished: break;
  }
}

// One chunk of the bulk board's oldest run, if there is one. A worker woken as a searcher
// (its permit) ends the search here, having found work, so that the searcher count does
// not hold back the wake-ups of other work while it runs chunks.
bool host_executor::help_bulk(worker& w) noexcept {
  if (!bulk_.has_runs()) return false;
  detail::host_bulk_run* r;
  std::uint32_t chunk;
  if (!bulk_.claim(&r, &chunk)) return false;
  if (w.searching) {
    w.searching = false;
    end_search(true);
  }
  run_claimed_chunk(r, chunk);
  return true;
}

errc host_executor::post_bulk(detail::host_bulk_run* r, detail::bulk_job* j) noexcept {
  if (stopping()) return errc::shutting_down;
  bulk_.post(r, j);
  wake_bulk_helpers(j->chunks - 1);  // the poster's own thread takes a chunk too
  return errc{};
}

// Wakes up to `want` parked workers for a post (a thread for every chunk; at most 64:
// beyond that, each woken worker that finds work and was the last searcher wakes one
// more, end_search).
void host_executor::wake_bulk_helpers(std::uint32_t want) noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // Dekker with park(): the post, then the sleepers
  if (want == 0 || sleepers_.load(std::memory_order_seq_cst) == 0) return;
  wake_parked(want);
}

void host_executor::push_local(worker& w, task_header* t) {
  while (!w.queue.push(t)) {
    // Full: move the older half, and t behind it, to the inject queue (Go's runqputslow).
    task_header* half[4096 + 1];
    const std::uint32_t n = w.queue.take_half_for_overflow(half);
    if (n) {
      half[n] = t;
      inject_.push_batch(half, n + 1);
      break;
    }
  }
  notify_one_if_needed();
}

void host_executor::push_lifo(worker& w, task_header* t) {
  if (task_header* old = w.lifo.exchange(t, std::memory_order_acq_rel)) push_local(w, old);
  else notify_one_if_needed();
}

// ---------------------------------------------------------------- parking
bool host_executor::try_begin_search() noexcept {
  int s = searching_.load(std::memory_order_relaxed);
  do {
    if (2 * s >= static_cast<int>(worker_count())) return false;
  } while (!searching_.compare_exchange_weak(s, s + 1, std::memory_order_seq_cst));
  return true;
}

void host_executor::end_search(bool found) noexcept {
  const bool last = searching_.fetch_sub(1, std::memory_order_seq_cst) == 1;
  if (last && found) notify_one_if_needed();  // more work may remain: hand the search on
}

void host_executor::notify_one_if_needed() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // Dekker with park()
  if (searching_.load(std::memory_order_seq_cst) != 0 || sleepers_.load(std::memory_order_seq_cst) == 0) return;
  wake_parked(1);
}

// Hands permits to up to `want` (at most 64) parked workers that hold none, the most
// recently parked first (the warmest caches); each starts as a searcher. Fewer when
// every other sleeper holds a permit already.
void host_executor::wake_parked(std::uint32_t want) noexcept {
  worker* woken[64];
  std::uint32_t n = 0;
  {
    std::lock_guard lk(park_m_);
    while (n < want && n < 64 && !idle_.empty()) {
      worker* v = idle_.back();
      idle_.pop_back();
      v->permit = true;
      searching_.fetch_add(1, std::memory_order_seq_cst);  // the woken worker starts as a searcher
      woken[n++] = v;
    }
  }
  // After the unlock, so that a worker does not wake into a held mutex. Its permit is set,
  // and it reads it under the lock: one that woke and left meanwhile finds no permit on
  // this notify and waits on (workers outlive every notifier).
  for (std::uint32_t i = 0; i < n; ++i) woken[i]->cv.notify_one();
}

bool host_executor::any_work_visible() const noexcept {
  if (!inject_.empty() || bulk_.has_runs_seq_cst()) return true;
  for (auto& w : workers_)
    if (!w->queue.empty_approx() || w->lifo.load(std::memory_order_acquire)) return true;
  return false;
}

// A worker counts itself in sleepers_ on entering park() and out on leaving it, and runs
// tasks only outside it; so sleepers_ == workers means no task is running. A task queued
// meanwhile is visible to any_work_visible (the pusher published it before its Dekker
// fence; so did a pinned task's sender, in the inbox), though its worker may not have
// been woken yet. A worker's private pinned_rest is empty whenever it parks.
// The reads are not one snapshot: a worker woken with a permit is still counted until it
// leaves park(), so it can leave and pop the last queued task between the first count
// and the look at the queues. Hence the count is read again after the queues: the
// worker's seq_cst decrement comes before its pop, so a look that missed the task
// (popped) finds the count lower, unless the task has run and its worker parked again,
// which is idle too. (reactor::close also asks for two quiet looks, 1 ms apart.)
bool host_executor::idle() const noexcept {
  const int all = static_cast<int>(worker_count());
  if (sleepers_.load(std::memory_order_seq_cst) != all) return false;
  if (any_work_visible()) return false;
  for (auto& w : workers_)
    if (w->inbox.load(std::memory_order_seq_cst) != nullptr) return false;
  return sleepers_.load(std::memory_order_seq_cst) == all;
}

// Parking. A worker registers under park_m_ (into idle_, then the sleepers_ count),
// fences, and looks at every queue and its inbox once more before it waits on its own
// condition variable, so that no wake-up is lost and none wakes a thread it is not for:
//   * a pusher publishes its task, fences, then reads sleepers_ (notify_one_if_needed):
//     one of the two sees the other (Dekker). A pusher that sees the count takes park_m_
//     after the registration (made under the lock, before the count), finds the worker
//     in idle_ unless it already holds a permit or left, hands it a permit and notifies
//     that worker alone;
//   * send_home publishes into the inbox, fences, then reads `parked`, which the worker
//     set before its fence, and notifies the home alone; the home's wait reads the inbox
//     under park_m_ and the sender takes park_m_ before it notifies, so the notify cannot
//     fall between the home's look and its wait;
//   * shutdown notifies every worker under park_m_ after raising stopping_.
// A worker that leaves (work seen, its permit, a pinned task, the stop) takes its permit
// if it has one (the notifier counted it as a searcher), else leaves idle_.
void host_executor::park(worker& w) {
  {
    std::lock_guard lk(park_m_);
    idle_.push_back(&w);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
  }
  w.parked.store(true, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // Dekker with notify_one_if_needed(), send_home()
  auto pinned_waiting = [&] { return w.inbox.load(std::memory_order_seq_cst) != nullptr; };
  if (any_work_visible() || pinned_waiting() || stopping()) {
    {
      std::lock_guard lk(park_m_);
      leave_park_locked(w);
    }
    std::this_thread::yield();  // e.g. work exists but searchers are at their bound
    return;
  }
  // A worker that waits gives its cached frame blocks back to the pool first: while it
  // sleeps nobody else can use them, and a spawner on another worker would be refused
  // with out_of_memory while up to 32 blocks of each small class sat here (the device
  // reclaims lane caches before it refuses: device_frames.hpp). Only the owner thread
  // touches its cache, so this needs no lock; the pool's pushes are its own.
  w.cache.flush();
  std::unique_lock lk(park_m_);
  w.cv.wait(lk, [&] { return w.permit || stopping() || pinned_waiting(); });
  leave_park_locked(w);
}

void host_executor::leave_park_locked(worker& w) noexcept {
  if (w.permit) {  // taken even when something else woke us: the notifier counted us as a searcher
    w.permit = false;
    w.searching = true;  // find_work ends the search at home, or search() does
  } else {  // no permit: still in idle_ (only a notifier takes a worker out, and it sets the permit)
    idle_.erase(std::find(idle_.begin(), idle_.end(), &w));
  }
  w.parked.store(false, std::memory_order_relaxed);
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void host_executor::send_home(task_header* t) noexcept {
  worker& w = *workers_[t->home];
  task_header* old = w.inbox.load(std::memory_order_relaxed);
  do {
    t->link = old;
  } while (!w.inbox.compare_exchange_weak(old, t, std::memory_order_release, std::memory_order_relaxed));
  std::atomic_thread_fence(std::memory_order_seq_cst);  // Dekker with park()
  if (w.parked.load(std::memory_order_seq_cst)) {
    // The empty locked section orders us against the home's look at its inbox, which it
    // makes under park_m_: a home that looked before it already waits (and is notified),
    // one that looks after it sees the task.
    { std::lock_guard lk(park_m_); }
    w.cv.notify_one();
  }
}

// ---------------------------------------------------------------- task hooks
errc host_executor::submit_root(task_header* t) noexcept {
  worker* here = current_worker();
  std::shared_lock<std::shared_mutex> host_side;  // see host_submit_m_ (workers need none)
  if (here == nullptr) host_side = std::shared_lock<std::shared_mutex>(host_submit_m_);
  if (stopping()) return errc::shutting_down;
  registry_.add(t);
  if (t->home != detail::no_home && (here == nullptr || here->index != t->home)) {
    send_home(t);
  } else if (worker* w = here) {
    push_local(*w, t);
  } else {
    inject_.push(t);
    notify_one_if_needed();
  }
  return errc{};
}

void host_executor::schedule(task_header* t) noexcept {
  if (worker* w = current_worker()) {
    push_lifo(*w, t);
  } else {
    inject_.push(t);
    notify_one_if_needed();
  }
}

void host_executor::destroy_root(task_header* t) noexcept {
  registry_.remove(t);
  destroy_frame_tree(detail::frame_of(t));
}

// Allocates nothing (shutdown is noexcept): the roots of (b) and (c) are listed through
// their `joiner` words. A task's joiner is written by a join's await_suspend (no task runs
// from step 3 on) and read only by complete_root, which never runs for a DOOMED root, so
// the word is free here. The list of (b) holds only roots that no handle names, which
// nothing but this loop destroys; in (c) nothing frees a root (COMPLETED is clear).
void host_executor::destroy_incomplete_roots() noexcept {
  using detail::task_state::completed, detail::task_state::doomed, detail::task_state::handle;
  deferred_frees keep;  // every frame freed below stays allocated until the end (the header says why)
  auto destroy_listed = [this](task_header* t) {
    while (t != nullptr) {
      task_header* next = t->joiner;  // read before the frame goes
      destroy_root(t);
      t = next;
    }
  };
  task_header* unnamed = nullptr;
  registry_.for_each([&](task_header* t) {  // (a) mark: COMPLETED | DOOMED, never to run again
    auto st = detail::state_of(t);
    if (st.load(detail::mo_relaxed) & completed) return;  // one thread from here (step 3)
    if (st.fetch_or(completed | doomed, detail::mo_acq_rel) & handle) return;
    detail::cancel_group_child(t);  // a spawn_group's child: before `joiner` is reused below
    t->joiner = unnamed;
    unnamed = t;
  });
  destroy_listed(unnamed);  // (b) their frames drop handles, freeing what those name
  // (c) the marked roots still registered (named from another such root, a cycle, or from
  //     outside any frame): clear COMPLETED on all of them first, so that no dropped
  //     handle frees one; destroy each once; keep the freed frames until the last is
  //     destroyed, since a handle in a cycle may still write to a root freed before it.
  task_header* named = nullptr;
  registry_.for_each([&](task_header* t) {
    auto st = detail::state_of(t);
    if (!(st.load(detail::mo_relaxed) & doomed)) return;
    st.fetch_and(~completed, detail::mo_relaxed);
    t->joiner = named;
    named = t;
  });
  destroy_listed(named);
}

// ---------------------------------------------------------------- timers
namespace {
bool later(const host_executor::timer_entry& a, const host_executor::timer_entry& b) noexcept {
  return a.deadline != b.deadline ? a.deadline > b.deadline : a.seq > b.seq;
}
}  // namespace

void host_executor::schedule_at(task_header* t, std::uint64_t deadline_ns) noexcept {
  std::lock_guard lk(timer_m_);
  if (timer_stop_) return;  // stopping: it stays parked and shutdown destroys it (step 5)
  if (!timer_thread_.joinable()) timer_thread_ = std::thread([this] { timer_main(); });
  timers_.push_back({deadline_ns, timer_seq_++, t});
  std::push_heap(timers_.begin(), timers_.end(), later);
  if (timers_.front().task == t) timer_cv_.notify_one();  // a new earliest deadline
}

void host_executor::timer_main() {
  std::unique_lock lk(timer_m_);
  while (!timer_stop_) {
    if (timers_.empty()) {
      timer_cv_.wait(lk);
      continue;
    }
    const std::uint64_t now = detail::host_now_ns();
    const std::uint64_t first = timers_.front().deadline;
    if (first > now) {  // sleep until the earliest deadline (capped: deadlines may be huge)
      const std::uint64_t cap = std::uint64_t{3600} * 1'000'000'000u;
      timer_cv_.wait_for(lk, std::chrono::nanoseconds(std::min(first - now, cap)));
      continue;
    }
    // Pop every due entry in deadline order, chained through `link` (free while parked).
    task_header* head = nullptr;
    task_header** tail = &head;
    while (!timers_.empty() && timers_.front().deadline <= now) {
      std::pop_heap(timers_.begin(), timers_.end(), later);
      *tail = timers_.back().task;
      tail = &timers_.back().task->link;
      timers_.pop_back();
    }
    *tail = nullptr;
    lk.unlock();
    while (head) {
      task_header* next = head->link;  // read before the wake may reuse `link`
      detail::wake(head);
      head = next;
    }
    lk.lock();
  }
}

void host_executor::stop_timer() noexcept {
  {
    std::lock_guard lk(timer_m_);
    timer_stop_ = true;
  }
  timer_cv_.notify_all();
  if (timer_thread_.joinable()) timer_thread_.join();
  timers_.clear();  // the sleeping tasks are in the registry: step 5 destroys them
}

std::int64_t host_executor::live_frame_blocks() const noexcept {
  return pool_ ? pool_->pool().outstanding_blocks() : -1;
}

void host_executor::shutdown() noexcept {
  if (shut_down_.exchange(true)) return;
  {
    std::unique_lock<std::shared_mutex> no_host_submission(host_submit_m_);
    stopping_.store(true, std::memory_order_seq_cst);  // 1. refuse new roots
  }
  {
    std::lock_guard lk(park_m_);  // 2. wake every parked worker
    for (auto& w : workers_) w->cv.notify_one();
  }
  for (auto& w : workers_)  // 3. join the workers, then the timer; one thread owns everything from here
    if (w->thread.joinable()) w->thread.join();
  stop_timer();
  // 4. the queues and the bulk board are forgotten: every queued task is also in the
  //    registry, and every run on the board belongs to a parked task that is.
  bulk_.forget();
  // 5. destroy every root that has not completed (marked completed first: see the header);
  //    completed roots go with their handles.
  destroy_incomplete_roots();
  for (auto& w : workers_) w->cache.flush();  // 6. return cached blocks to the pool
}

}  // namespace weft::exec

// ---------------------------------------------------------------- backend hooks
namespace weft::detail {

void* host_current_scheduler() noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  return w ? w->exec : nullptr;
}
errc host_submit_root(void* sched, task_header* t) noexcept {
  return static_cast<exec::host_executor*>(sched)->submit_root(t);
}
void host_schedule(task_header* t) noexcept { static_cast<exec::host_executor*>(t->sched)->schedule(t); }
void host_destroy_root(task_header* t) noexcept { static_cast<exec::host_executor*>(t->sched)->destroy_root(t); }
std::uint64_t host_now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
io_link* host_current_io() noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  return w ? w->exec->io() : nullptr;
}
std::uint32_t host_worker_index() noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  return w ? w->index : no_home;
}
bool host_bulk_plan(bulk_job& j) noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  if (w == nullptr) return false;  // not a worker thread (run_inline there): run it whole
  return exec::plan_host_bulk(j, w->exec->worker_count());
}
errc host_post_bulk(host_bulk_run* r, bulk_job* j) noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  if (w == nullptr) return errc::backend_unavailable;  // host_bulk_plan said no: never here
  return w->exec->post_bulk(r, j);
}
bool host_bulk_budget_spent() noexcept {
  exec::host_executor::worker* w = exec::tls_worker;
  if (w == nullptr) return false;  // not a worker thread (run_inline there): no loop to go back to
  if (--w->bulk_steps_left != 0) return false;
  w->bulk_steps_left = exec::bulk_steps_per_turn;
  w->budget_spent = true;
  return true;
}
std::uint32_t host_worker_count(void* sched) noexcept {
  return static_cast<exec::host_executor*>(sched)->worker_count();
}
void host_send_home(task_header* t) noexcept { static_cast<exec::host_executor*>(t->sched)->send_home(t); }
// A task driven without an executor (run_inline) has no scheduler: no timer there.
errc host_schedule_at(task_header* t, std::uint64_t deadline_ns) noexcept {
  if (t->sched == nullptr) return errc::backend_unavailable;  // run_inline: nobody to wake it
  static_cast<exec::host_executor*>(t->sched)->schedule_at(t, deadline_ns);
  return errc{};
}

}  // namespace weft::detail
