// weft/executor/host_frames.hpp - how frames are allocated and torn down on the host.
//
// Allocation: each host thread has a frame context (thread-local): the allocator of
// the runtime it works for and, on worker threads, that worker's frame_cache. Every
// frame carries a 16-byte prefix naming the allocator it came from, so a frame freed
// on another thread (tasks migrate by stealing), or after its creator's runtime
// context ended, always returns to its own allocator. Outside any runtime, frames
// come from the process heap.
//
// Teardown: destroying a suspended frame destroys the task objects in it, which
// destroy their (suspended) child frames, and so on: with a chain of a million
// suspended frames that recursion would overflow the stack. destroy_frame_tree
// defers nested destructions onto a thread-local list and drains it in a loop, so
// any chain is destroyed in constant stack space.
#pragma once
#include <cstddef>

#include "weft/executor/frame_pool.hpp"
#include "weft/frame_allocator.hpp"

namespace weft::exec {

// Installs (allocator, cache) as the calling thread's frame context for its lifetime.
class frame_scope {
 public:
  frame_scope(weft::frame_allocator* a, frame_cache* cache) noexcept;
  ~frame_scope();
  frame_scope(const frame_scope&) = delete;
  frame_scope& operator=(const frame_scope&) = delete;

 private:
  weft::frame_allocator* prev_alloc_;
  frame_cache* prev_cache_;
  weft::frame_allocator* prev_cache_owner_;
};

// Destroys a suspended (or finished) frame and every frame it owns, iteratively.
void destroy_frame_tree(void* frame) noexcept;

// While one lives on a thread, frames freed on that thread are kept, not returned to
// their allocators, until it ends. Shutdown's last step uses it (host_executor.hpp, step
// 5(c)): a join handle in a cycle of roots may still write to a root freed before it.
class deferred_frees {
 public:
  deferred_frees() noexcept;
  ~deferred_frees();
  deferred_frees(const deferred_frees&) = delete;
  deferred_frees& operator=(const deferred_frees&) = delete;
};

}  // namespace weft::exec
