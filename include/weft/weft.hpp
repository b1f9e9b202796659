// weft/weft.hpp - the umbrella header: everything a weft program uses.
#pragma once
#include "weft/config.hpp"
#include "weft/errc.hpp"
#include "weft/event.hpp"
#include "weft/frame_allocator.hpp"
#include "weft/mutex.hpp"
#include "weft/result.hpp"
#include "weft/run_inline.hpp"
#include "weft/runtime.hpp"
#include "weft/semaphore.hpp"
#include "weft/spawn.hpp"
#include "weft/task.hpp"
#include "weft/when_all.hpp"
