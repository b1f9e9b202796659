// weft/frame_allocator.hpp - where coroutine frames come from, on the host backend.
//
// Every weft task frame is allocated through the runtime's frame allocator, never by
// plain new. The default is a size-class pool of config::frame_pool_bytes with a
// cache per worker thread (executor/weft/executor/frame_pool.hpp). A program may
// plug in its own allocator through config::frame_allocator (for example to count
// frames, or to use malloc so that AddressSanitizer sees every frame).
//
// Contract: allocate returns nullptr when it has no memory (never throws); weft turns
// that into errc::out_of_memory for the task that tried to start a child. Both
// functions may be called from any worker thread at once. Frames created outside any
// runtime (a task built in plain host code) come from the process heap.
#pragma once
#include <cstddef>

namespace weft {

class frame_allocator {
 public:
  virtual ~frame_allocator() = default;
  virtual void* allocate(std::size_t bytes) noexcept = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
};

}  // namespace weft
