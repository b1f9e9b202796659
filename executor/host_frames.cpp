// Host frame allocation and teardown: see weft/executor/host_frames.hpp.
#include "weft/executor/host_frames.hpp"

#include <cstdlib>
#include <vector>

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

struct kept_frame {
  void* raw;
  std::size_t size;
};
thread_local std::vector<kept_frame>* tls_kept = nullptr;  // set while a deferred_frees lives

}  // namespace

deferred_frees::deferred_frees() noexcept { tls_kept = new std::vector<kept_frame>; }
deferred_frees::~deferred_frees() {
  std::vector<kept_frame>* kept = tls_kept;
  tls_kept = nullptr;
  for (const kept_frame& k : *kept) (*static_cast<weft::frame_allocator**>(k.raw))->deallocate(k.raw, k.size);
  delete kept;
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
  void* raw = (ctx.cache && a == ctx.cache_owner) ? ctx.cache->allocate(n + exec::prefix) : a->allocate(n + exec::prefix);
  if (raw == nullptr) return nullptr;
  *static_cast<weft::frame_allocator**>(raw) = a;
  return static_cast<char*>(raw) + exec::prefix;
}

void host_destroy_frame(void* frame) noexcept { exec::destroy_frame_tree(frame); }

void host_frame_deallocate(void* p, std::size_t n) noexcept {
  void* raw = static_cast<char*>(p) - exec::prefix;
  if (exec::tls_kept != nullptr) {  // a deferred_frees lives: keep the block until it ends
    exec::tls_kept->push_back({raw, n + exec::prefix});
    return;
  }
  weft::frame_allocator* a = *static_cast<weft::frame_allocator**>(raw);
  const exec::frame_context& ctx = exec::tls_ctx;
  if (ctx.cache && a == ctx.cache_owner) ctx.cache->deallocate(raw, n + exec::prefix);
  else a->deallocate(raw, n + exec::prefix);
}

}  // namespace weft::detail
