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
// functions may be called from any thread at once: the workers, and also the thread that
// calls spawn or block_on, the one that runs shutdown, and any that drops a task. A block
// must be 16-byte aligned: `bytes` includes a 16-byte prefix that names the allocator,
// and the frame starts after it. An allocator must outlive every frame it handed out.
// Frames created outside any runtime (a task built in plain host code) come from the
// process heap. The default pool's largest class is 1 MiB (prefix included): a larger
// frame or object (a coroutine with a big local array, a channel buffer of more than
// 1 MiB less the 16-byte prefix) is out_of_memory there whatever the pool's size, and
// needs an allocator of its own. (The GPU's pool has no prefix: there the bound is 1 MiB.)
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
