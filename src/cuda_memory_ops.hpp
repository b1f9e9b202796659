// src/cuda_memory_ops.hpp - the reactor's memory_ops for the cuda backend.
#pragma once
#include <memory>

#include "reactor.hpp"

namespace weft::rt {

#if WEFT_WITH_CUDA
// Rings in pinned mapped memory; staged copies on one stream per reactor thread.
std::unique_ptr<memory_ops> make_cuda_memory_ops(int device, unsigned threads);
#endif

}  // namespace weft::rt
