// Host frame allocation and teardown: see weft/executor/host_frames.hpp.
#include "weft/executor/host_frames.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "weft/detail/backend_hooks.hpp"
#include "weft/detail/coro.hpp"
#include "weft/detail/task_header.hpp"

namespace weft::exec {
namespace {

// Frames made outside any runtime come from the heap.
class heap_frame_allocator final : public weft::frame_allocator {
 public:
  void* allocate(std::size_t n) noexcept override { return std::malloc(n); }
  void deallocate(void* p, std::size_t) noexcept override { std::free(p); }
};
heap_frame_allocator g_heap;

struct frame_context {
  weft::frame_allocator* alloc = nullptr;
  frame_cache* cache = nullptr;
  weft::frame_allocator* cache_owner = nullptr;  // the allocator whose pool `cache` fronts
};
thread_local frame_context tls_ctx;

// The prefix keeps frames 16-byte aligned (weft promises are at most 16-aligned).
constexpr std::size_t prefix = 16;

// Deferred destructions while a teardown is draining (see the header).
struct teardown_list {
  bool active = false;
  void* head = nullptr;  // frames linked through their promise_base::continuation
};
thread_local teardown_list tls_teardown;

// Every block holds at least one word past the prefix (block_bytes), for the kept list.
std::size_t block_bytes(std::size_t n) noexcept { return std::max(n, sizeof(std::size_t)) + prefix; }

// Frames kept while a deferred_frees lives, linked through the dead blocks themselves, so
// that keeping one allocates nothing (shutdown is noexcept; a vector here could throw
// bad_alloc into std::terminate). A kept block: [allocator*][next kept block][size_t
// size, over a frame's dead resume pointer or an object's first word][...]. Nothing
// reads or writes those words of a freed block: what may still write to a freed frame
// is a dropped join handle's RMW on the task's state word, which lies in the promise,
// past them.
struct kept_list {
  bool active = false;
  void* head = nullptr;  // the raw block kept last
};
thread_local kept_list tls_kept;

void keep_block(void* raw, std::size_t size) noexcept {
  std::memcpy(static_cast<char*>(raw) + 8, &tls_kept.head, sizeof(void*));
  std::memcpy(static_cast<char*>(raw) + prefix, &size, sizeof size);
  tls_kept.head = raw;
}

}  // namespace

static_assert(prefix >= 2 * sizeof(void*), "a kept block's allocator and link fit in the prefix");

deferred_frees::deferred_frees() noexcept {
  tls_kept.active = true;
  tls_kept.head = nullptr;
}
deferred_frees::~deferred_frees() {
  void* raw = tls_kept.head;
  tls_kept = kept_list{};
  while (raw != nullptr) {
    void* next;
    std::size_t size;
    std::memcpy(&next, static_cast<char*>(raw) + 8, sizeof next);
    std::memcpy(&size, static_cast<char*>(raw) + prefix, sizeof size);
    (*static_cast<weft::frame_allocator**>(raw))->deallocate(raw, size);
    raw = next;
  }
}

frame_scope::frame_scope(weft::frame_allocator* a, frame_cache* cache) noexcept
    : prev_alloc_(tls_ctx.alloc), prev_cache_(tls_ctx.cache), prev_cache_owner_(tls_ctx.cache_owner) {
  tls_ctx.alloc = a;
  tls_ctx.cache = cache;
  tls_ctx.cache_owner = cache ? a : nullptr;
}
frame_scope::~frame_scope() {
  tls_ctx.alloc = prev_alloc_;
  tls_ctx.cache = prev_cache_;
  tls_ctx.cache_owner = prev_cache_owner_;
}

void destroy_frame_tree(void* frame) noexcept {
  if (tls_teardown.active) {  // nested: defer to the draining loop below
    detail::promise_of(frame).continuation = tls_teardown.head;
    tls_teardown.head = frame;
    return;
  }
  tls_teardown.active = true;
  detail::destroy_frame_and_chain(frame);  // a root's chain innermost first (task_header.hpp)
  while (void* f = tls_teardown.head) {
    tls_teardown.head = detail::promise_of(f).continuation;
    detail::destroy_frame_and_chain(f);
  }
  tls_teardown.active = false;
}

}  // namespace weft::exec

namespace weft::detail {

void* host_frame_allocate(std::size_t n) noexcept {
  const exec::frame_context& ctx = exec::tls_ctx;
  weft::frame_allocator* a = ctx.alloc ? ctx.alloc : &exec::g_heap;
  const std::size_t bytes = exec::block_bytes(n);
  void* raw = (ctx.cache && a == ctx.cache_owner) ? ctx.cache->allocate(bytes) : a->allocate(bytes);
  if (raw == nullptr) return nullptr;
  *static_cast<weft::frame_allocator**>(raw) = a;
  return static_cast<char*>(raw) + exec::prefix;
}

void host_destroy_frame(void* frame) noexcept { exec::destroy_frame_tree(frame); }

void host_frame_deallocate(void* p, std::size_t n) noexcept {
  void* raw = static_cast<char*>(p) - exec::prefix;
  const std::size_t bytes = exec::block_bytes(n);  // as host_frame_allocate asked for it
  if (exec::tls_kept.active) {  // a deferred_frees lives: keep the block until it ends
    exec::keep_block(raw, bytes);
    return;
  }
  weft::frame_allocator* a = *static_cast<weft::frame_allocator**>(raw);
  const exec::frame_context& ctx = exec::tls_ctx;
  if (ctx.cache && a == ctx.cache_owner) ctx.cache->deallocate(raw, bytes);
  else a->deallocate(raw, bytes);
}

}  // namespace weft::detail
