// src/reactor.cpp - the reactor's threads: poll, dispatch, flush, drain, wait.
#include "reactor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <time.h>
#include <unistd.h>

#include "reactor_thread.hpp"
#include "weft/detail/mailbox.hpp"
#include "weft/runtime.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WEFT_CPU_RELAX() _mm_pause()
#else
#define WEFT_CPU_RELAX() ((void)0)
#endif

namespace weft::rt {

using detail::system_atomic;

std::uint64_t steady_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

namespace {

bool is_pow2(std::uint32_t v) { return v >= 2 && (v & (v - 1)) == 0; }

// Shutdown's wait (reactor::close, reactor::await_late_answers): looks until `quiet()`
// holds on two looks in a row, 1 ms apart, or until `until` (steady_ns) has passed.
template <class Look>
void until_quiet_twice(std::uint64_t until, Look quiet) {
  for (int quiet_looks = 0; quiet_looks < 2 && steady_ns() < until;) {
    quiet_looks = quiet() ? quiet_looks + 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class host_memory_ops final : public memory_ops {
 public:
  void* alloc_shared(std::size_t bytes) override {
    void* p = ::operator new(bytes, std::align_val_t{128});
    std::memset(p, 0, bytes);
    return p;
  }
  void free_shared(void* p) noexcept override { ::operator delete(p, std::align_val_t{128}); }
  bool host_accessible(const void*) noexcept override { return true; }
  errc to_task(unsigned, void* dst, const void* src, std::size_t n) noexcept override {
    std::memcpy(dst, src, n);
    return errc{};
  }
  errc from_task(unsigned, void* dst, const void* src, std::size_t n) noexcept override {
    std::memcpy(dst, src, n);
    return errc{};
  }
  void* staging(unsigned, std::size_t) noexcept override { return nullptr; }
  errc to_task_async(unsigned, void* dst, const void* src, std::size_t n) noexcept override {
    std::memcpy(dst, src, n);
    return errc{};
  }
  errc from_task_async(unsigned, void* dst, const void* src, std::size_t n) noexcept override {
    std::memcpy(dst, src, n);
    return errc{};
  }
  errc wait(unsigned) noexcept override { return errc{}; }
};

}  // namespace

std::unique_ptr<memory_ops> make_host_memory_ops() { return std::make_unique<host_memory_ops>(); }

// ---------------------------------------------------------------- reactor

reactor::reactor(const reactor_config& cfg, std::unique_ptr<memory_ops> mem) : cfg_(cfg), mem_(std::move(mem)) {
  if (cfg_.threads == 0 || cfg_.threads > 64)
    throw error(errc::invalid_argument, "weft: config::reactor_threads must be 1..64");
  if (!is_pow2(cfg_.slots) || !is_pow2(cfg_.completions) || cfg_.slots > max_mailbox_slots ||
      cfg_.completions > max_mailbox_slots)
    throw error(errc::invalid_argument, "weft: config::mailbox_slots must be a power of two in 2..2^20");
  try {  // a failed allocation frees what was made before it (no destructor runs)
    shared_.reserve(cfg_.threads);
    for (unsigned i = 0; i < cfg_.threads; ++i) {
      auto* sh = static_cast<detail::mailbox_shared*>(mem_->alloc_shared(sizeof(detail::mailbox_shared)));
      shared_.push_back(sh);  // zeroed: its ring pointers are null until allocated (free_shared_memory)
      sh->req_capacity = cfg_.slots;
      sh->comp_capacity = cfg_.completions;
      sh->slots = static_cast<detail::request_slot*>(mem_->alloc_shared(sizeof(detail::request_slot) * cfg_.slots));
      sh->comp_words = static_cast<std::uint64_t*>(
          mem_->alloc_shared(sizeof(std::uint64_t) * detail::completion_header_words * cfg_.completions));
      sh->comp_data = static_cast<std::uint64_t*>(
          mem_->alloc_shared(sizeof(std::uint64_t) * detail::completion_data_words * cfg_.completions));
    }
    host_boxes_.resize(cfg_.threads);
    for (unsigned i = 0; i < cfg_.threads; ++i) {
      host_boxes_[i] = detail::make_mailbox(shared_[i]);
    }
    for (unsigned i = 0; i < cfg_.threads; ++i)
      threads_.push_back(
          std::make_unique<reactor_thread>(*this, i, shared_[i], cfg_.drain_here ? &host_boxes_[i] : nullptr));
  } catch (...) {
    threads_.clear();  // none started yet (start() does that)
    free_shared_memory();
    throw;
  }
}

void reactor::free_shared_memory() noexcept {
  for (detail::mailbox_shared* sh : shared_) {
    if (sh->slots) mem_->free_shared(sh->slots);
    if (sh->comp_words) mem_->free_shared(sh->comp_words);
    if (sh->comp_data) mem_->free_shared(sh->comp_data);
    mem_->free_shared(sh);
  }
  shared_.clear();
}

reactor::~reactor() {
  stop();
  threads_.clear();
  free_shared_memory();
}

void reactor::start() {
  for (auto& t : threads_) t->start();
}

void reactor::register_fn(std::uint32_t id, host_fn fn) {
  if (!fn) throw error(errc::invalid_argument, "weft: register_host_fn: empty function");
  std::unique_lock lk(fns_m_);
  fns_[id] = std::move(fn);
}

errc reactor::call_fn(std::uint32_t id, std::span<const std::uint64_t> args, std::uint64_t* out) noexcept {
  host_fn fn;
  {
    std::shared_lock lk(fns_m_);
    auto it = fns_.find(id);
    if (it == fns_.end()) return errc::not_found;
    fn = it->second;  // a copy: the function may be replaced while it runs
  }
  try {
    *out = fn(args);
    return errc{};
  } catch (...) {
    handler_errors_.fetch_add(1, std::memory_order_relaxed);
    return errc::host_error;
  }
}

void reactor::add_file(int fd) {
  std::unique_lock lk(files_m_);
  files_.insert(fd);
}
std::shared_lock<std::shared_mutex> reactor::use_file(int fd, bool* known) {
  std::shared_lock lk(files_m_);
  *known = files_.count(fd) != 0;
  return lk;
}
bool reactor::close_file(int fd, int* err) noexcept {
  std::unique_lock lk(files_m_);
  if (files_.erase(fd) == 0) return false;
  *err = ::close(fd) == 0 ? 0 : errno;
  return true;
}

std::uint64_t reactor::answers_published() const noexcept {
  std::uint64_t n = 0;
  for (auto& t : threads_) n += t->completions();
  return n;
}

// One look: every request taken has been answered and its answer delivered, and none
// waits on the task side for ring space.
bool reactor::requests_settled(const std::function<std::uint64_t()>& task_side_inflight) noexcept {
  for (auto& t : threads_)
    if (!t->quiescent()) return false;
  for (auto& m : host_boxes_)
    if (detail::device_atomic<std::uint32_t>(m.inflight).load(detail::mo_acquire) != 0) return false;
  return !task_side_inflight || task_side_inflight() == 0;
}

void reactor::close(unsigned timeout_ms, const std::function<std::uint64_t()>& task_side_inflight,
                    const std::function<bool()>& task_side_idle) noexcept {
  // Answers published from here on (counted before closing_ is raised) mean that a task
  // may have been woken: see `answered` below.
  const std::uint64_t answers_before = answers_published();
  closing_.store(true, std::memory_order_release);
  const std::uint64_t until = close_until_ = steady_ns() + std::uint64_t{timeout_ms} * 1000000u;
  // Quiet must hold twice, 1 ms apart: a request posted just before the first look
  // shows up by the second (its doorbell store is already on its way). Quiet includes
  // the task side: a request still waiting for ring space (the waiters stack, the GPU's
  // overflow ring) is published, refused and answered before the threads stop, so its
  // task sees shutting_down instead of being destroyed while it waits.
  // An answer delivered is not yet an answer seen: delivery only queues the task, and
  // the executor's shutdown destroys a queued task without running it. So once a look
  // has found a request unanswered (`answered`: this close answers something), quiet
  // also needs the task side idle (task_side_idle: nothing running, nothing queued),
  // which holds only after every task woken by an answer, and every task those woke in
  // turn (a join), has run to its next wait or its end. A close that finds nothing to
  // answer does not wait for idle: a runtime whose tasks never stop running would
  // otherwise wait out the timeout. The host drain queues the woken tasks before its
  // release subtraction from inflight (mailbox_drain_serial), and requests_settled reads
  // inflight with acquire before task_side_idle looks: a look that finds inflight 0
  // also finds those tasks queued (not idle) or already run.
  // `answered` also counts answers published since close began that no look saw in
  // flight: a reactor thread refuses, answers and (host) drains a request within one
  // pass of its loop, well inside the 1 ms between looks. Read after requests_settled:
  // its acquire load of a drained `inflight` follows the drain, which took the answer
  // after the reactor thread counted it, so a drained answer is counted here.
  bool answered = false;
  until_quiet_twice(until, [&] {
    // The count first: an answer published during the look below is then later than
    // the look, for await_late_answers, even when the look already found it quiet.
    const std::uint64_t published = answers_published();
    const bool settled = requests_settled(task_side_inflight);
    answers_at_last_look_ = published;
    answered = answered || !settled || published != answers_before;
    return settled && (!answered || !task_side_idle || task_side_idle());
  });
}

// A request can still be posted between close's last look and stop(): close then returns
// (two quiet looks) while a reactor thread refuses it, and the answer wakes a task that
// the executor's shutdown would destroy unrun (tests/test_shutdown_host.cpp: 7 of 40 runs
// beside two `yes` processes, forty-first session). After stop() the threads have
// published their last answers, and close took its count before each look's reads, so
// comparing the two finds every answer a look may have missed. What is waited for: every
// answer published has been handed back by the task side (read, its task woken; this
// also covers the GPU's answers taken in place, which no inflight count shows) and the
// task side is idle. Not the mailboxes' inflight: a request a woken task posts now is
// never answered, and would hold it up. Within close's own deadline: a close that timed
// out (tasks that keep running) does not wait a second time.
void reactor::await_late_answers(const std::function<bool()>& task_side_idle) noexcept {
  if (!task_side_idle || answers_published() == answers_at_last_look_) return;
  until_quiet_twice(close_until_, [&] {
    for (auto& t : threads_)
      if (!t->answers_handed_back()) return false;  // joined: safe here
    return task_side_idle();
  });
}

void reactor::stop() noexcept {
  if (stopped_) return;
  stopped_ = true;
  closing_.store(true, std::memory_order_release);
  for (auto& t : threads_) t->request_stop();
  for (auto& t : threads_) t->join();
  for (auto& t : threads_) t->close_sockets();  // as the files below: nothing serves them now
  std::unique_lock lk(files_m_);
  for (int fd : files_) ::close(fd);  // files the tasks left open
  files_.clear();
}

void reactor::stop_thread(unsigned i) noexcept {
  if (i < threads_.size()) threads_[i]->stop_service();
}

reactor_stats reactor::stats() const noexcept {
  reactor_stats s;
  for (auto& t : threads_) {
    s.requests += t->requests();
    s.completions += t->completions();
    s.deferred += t->deferred();
    s.max_queued_completions = std::max(s.max_queued_completions, t->max_queued());
  }
  s.handler_errors = handler_errors_.load(std::memory_order_relaxed);
  return s;
}

// ---------------------------------------------------------------- reactor_thread

void reactor_thread::start() {
  thread_ = std::thread([this] { run(); });
}

void reactor_thread::join() noexcept {
  if (thread_.joinable()) thread_.join();
}

errc reactor_thread::refusal() const noexcept {
  if (failing_.load(std::memory_order_acquire)) return errc::host_unavailable;
  if (r_.closing()) return errc::shutting_down;
  return errc{};
}

void reactor_thread::complete(std::uint64_t token, std::uint64_t value, errc e, const void* data,
                              std::uint32_t n) noexcept {
  detail::completion c{};
  c.token = token;
  c.value = value;
  c.error = static_cast<std::uint32_t>(e);
  c.inline_bytes = e == errc{} ? n : 0;
  if (c.inline_bytes != 0) std::memcpy(c.data, data, n);
  queued_.push_back(c);
  --outstanding_;
  if (queued_.size() > max_queued_.load(std::memory_order_relaxed))
    max_queued_.store(queued_.size(), std::memory_order_relaxed);
}

// Step 1: copies out every published request in ticket order, dispatching each.
bool reactor_thread::take_requests() noexcept {
  // Relaxed: the doorbell only says that something moved; each slot's words are
  // acquired below. Racing producers' doorbell stores may land out of order, and a
  // slot's words after its doorbell (mailbox_publish): so word 0 of the next slot is
  // looked at too (a line in host memory, as cheap as the doorbell's). The scan takes slots in
  // ticket order and stops at the first unpublished one, so that one slot decides
  // whether a scan can take anything: a published request is never left waiting for
  // a later doorbell or an idle sleep's rescan.
  const std::uint64_t bell = system_atomic<std::uint64_t>(sh_->doorbell).load(detail::mo_relaxed);
  if (bell == doorbell_seen_ && !rescan_ && !detail::mailbox_request_landed(*sh_, head_)) return false;
  doorbell_seen_ = bell;
  rescan_ = false;
  std::uint64_t taken = 0;
  for (;;) {
    // Backpressure: with a completion ring's worth of answers queued, take no more
    // requests; the request ring fills and tasks wait in their own frames instead.
    if (queued_.size() >= sh_->comp_capacity) {
      rescan_ = true;
      break;
    }
    // All of ticket head_'s words, acquired (mailbox_take_request); a slot whose words
    // have not all landed is taken on a later trip (word 0 tells the check above).
    detail::request q;
    unsigned char data[detail::request_inline_bytes];
    if (!detail::mailbox_take_request(*sh_, head_, &q, data)) break;
    ++head_;
    ++taken;
    ++outstanding_;
    dispatch(q, data);
    if (taken % 64 == 0)  // free slots as we go, so producers do not wait a whole batch
      system_atomic<std::uint64_t>(sh_->req_head).store(head_, detail::mo_release);
  }
  // Release: our copies of the slots are done before a producer reuses them.
  if (taken != 0) system_atomic<std::uint64_t>(sh_->req_head).store(head_, detail::mo_release);
  // A producer may have claimed a slot and not published it yet: look again next round
  // even without a new doorbell value while the ring holds claimed-but-unseen slots.
  rescan_ = rescan_ || taken != 0;
  requests_.fetch_add(taken, std::memory_order_relaxed);
  return taken != 0;
}

void reactor_thread::dispatch(const detail::request& q, const unsigned char* data) noexcept {
  if (const errc e = refusal(); e != errc{}) return fail(q.token, e);
  using detail::opcode;
  switch (q.op) {
    case opcode::nop: return complete(q.token, 0, errc{});
    case opcode::host_call: return op_host_call(q, data);
    case opcode::open: return op_open(q, data);
    case opcode::read: return op_read(q);
    case opcode::write: return op_write(q, data);
    case opcode::close: return op_close(q);
    case opcode::print: return op_print(q, data);
    case opcode::sleep: return op_sleep(q);
    case opcode::listen:
    case opcode::accept:
    case opcode::recv:
    case opcode::send:
    case opcode::net_close: return op_net(q, data);
  }
  fail(q.token, errc::invalid_argument);  // a malformed request: an opcode nobody knows
}

// Step 4: publishes queued completions while the completion ring has room.
bool reactor_thread::flush() noexcept {
  if (queued_.empty()) return false;
  const std::uint64_t head = handed_back();
  const std::uint64_t cap = sh_->comp_capacity;
  const std::uint64_t n = std::min<std::uint64_t>(queued_.size(), cap - (comp_tail_ - head));
  if (n == 0) return false;
  // Counted before they are written: whoever takes one (the drain's acquire of its words)
  // then sees it counted too (reactor::close relies on it).
  completions_.fetch_add(n, std::memory_order_relaxed);
  for (std::uint64_t i = 0; i < n; ++i) {
    detail::mailbox_write_completion(*sh_, comp_tail_ + i, queued_.front());  // LL words: no index to publish
    queued_.pop_front();
  }
  comp_tail_ += n;
  return true;
}

// The timer heap of io::sleep_for. all: fire every timer now with error e (shutdown).
bool reactor_thread::fire_timers(bool all, errc e) noexcept {
  bool fired = false;
  const auto later = [](const timer& a, const timer& b) { return a.deadline > b.deadline; };
  const std::uint64_t now = timers_.empty() ? 0 : steady_ns();
  while (!timers_.empty() && (all || timers_.front().deadline <= now)) {
    std::pop_heap(timers_.begin(), timers_.end(), later);
    complete(timers_.back().token, 0, e);
    timers_.pop_back();
    fired = true;
  }
  return fired;
}

void reactor_thread::op_sleep(const detail::request& q) noexcept {
  const std::uint64_t now = steady_ns();
  const std::uint64_t ns = q.args[0];
  timers_.push_back({ns > ~std::uint64_t{0} - now ? ~std::uint64_t{0} : now + ns, q.token});
  std::push_heap(timers_.begin(), timers_.end(), [](const timer& a, const timer& b) { return a.deadline > b.deadline; });
  count_deferred();
}

// Completions the drainers have handed back, in order: comp_free_ moves past each slot
// whose mark is there (mailbox_handed_back's acquire: the drainer's reads of the slot are
// done before we write it again). Drainers hand slots back one by one, and a warp's lanes
// in any order, so the count stops at the first slot not yet marked.
std::uint64_t reactor_thread::handed_back() noexcept {
  while (comp_free_ < comp_tail_ && detail::mailbox_handed_back(*sh_, comp_free_)) ++comp_free_;
  return comp_free_;
}

void reactor_thread::update_quiet() noexcept {
  const bool delivered = handed_back() == comp_tail_;
  quiet_.store(outstanding_ == 0 && queued_.empty() && delivered && !rescan_, std::memory_order_release);
}

// Step 6: spin while work is recent, then sleep in doubling steps (bounded).
void reactor_thread::idle_wait(std::uint64_t idle_since_ns) noexcept {
  const std::uint64_t idle = steady_ns() - idle_since_ns;
  if (idle < r_.cfg().spin_ns) {
    // One pause per trip: a request's latency includes the rest of the trip it lands in
    // (32 pauses were ~1.5 us on the GPU machine's Xeon, ~140 cycles each, and cost the
    // host_call round trip ~0.75 us on average; bench/results/2026-11-21-h200-session7/).
    WEFT_CPU_RELAX();
    return;
  }
  std::uint64_t ns = 1000;
  while (ns < idle / 4 && ns < r_.cfg().max_sleep_ns) ns *= 2;
  if (ns > r_.cfg().max_sleep_ns) ns = r_.cfg().max_sleep_ns;
  if (!timers_.empty()) {
    const std::uint64_t now = steady_ns(), due = timers_.front().deadline;
    if (due <= now) return;
    if (due - now < ns) ns = due - now;
  }
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
  rescan_ = true;  // bounds the doorbell's race (mailbox.hpp) by one sleep
}

namespace {
thread_local const reactor* tls_reactor = nullptr;  // set for the life of a reactor thread
}  // namespace

const reactor* current_reactor() noexcept { return tls_reactor; }

void reactor_thread::run() noexcept {
  tls_reactor = &r_;
  r_.mem().bind_thread(index_);
  std::uint64_t last_work = steady_ns();
  while (!stop_.load(std::memory_order_acquire)) {
    bool busy = take_requests();
    if (const errc e = refusal(); e != errc{}) {
      if (!timers_.empty()) busy |= fire_timers(true, e);
      fail_net(e);
    }
    busy |= poll_net();
    busy |= finish_net_copies();
    busy |= fire_timers(false, errc{});
    busy |= flush();
    if (drain_box_ != nullptr) busy |= detail::mailbox_drain_serial(*drain_box_) != 0;
    update_quiet();
    if (busy) last_work = steady_ns();
    else idle_wait(last_work);
  }
}

}  // namespace weft::rt
