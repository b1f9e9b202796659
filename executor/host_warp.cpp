// executor/host_warp.cpp - a warp of 32 lanes emulated with Boost.Context fibers.
//
// bulk_warps on the host backend runs each warp job on one thread: host_run_warp makes
// one fiber per lane and drives them in rounds. In a round every lane that has not
// finished runs until it reaches its next collective (shfl, ballot, sync), where it
// leaves its input in the warp_emu and switches back to the driver. When all lanes have
// arrived, the driver computes every lane's result from the inputs and starts the next
// round; each lane then reads its result and runs on. So the lanes see what a converged
// warp computes, in the same order.
//
// Roles and invariants
//   driver  host_run_warp's loop, the only code that resumes lane fibers.
//   lane    a fiber; it touches only its own entries of in/src/op/out, and only
//           between being resumed and switching back.
//   * At the end of a round, either every lane has finished, or every lane waits at a
//     collective of the same kind; anything else (a collective reached by only some
//     lanes, two kinds at once) is a contract violation, reported, not guessed at.
// Threading: one warp runs on one thread from start to end, so no atomics are needed.
// Stacks: each lane runs on a 256 KiB stack with a guard page below it (a lane that
// overflows it faults at once instead of writing over the heap), mapped on a thread's
// first warp job and kept in a per-thread pool of 32 for its later ones (a warp job used
// to malloc and free 32 stacks). A thread that cannot map them stops with a contract
// violation saying so, not with an exception out of noexcept code.
// Sanitizers: the fibers' stacks are announced to AddressSanitizer around each switch
// (__sanitizer_start/finish_switch_fiber) so that it does not mistake them for overflows.
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "weft/warp.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_ASAN_FIBERS 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_ASAN_FIBERS 1
#endif
#if WEFT_ASAN_FIBERS
#include <sanitizer/common_interface_defs.h>
#endif

namespace weft::detail {

namespace ctx = boost::context;

namespace {
enum class collective : std::uint8_t { none, shfl, ballot, sync };
constexpr std::size_t lane_stack_bytes = 256 * 1024;
}  // namespace

struct warp_emu {
  std::array<ctx::fiber, WEFT_WARP_SIZE> lanes;    // suspended lane fibers (driver side)
  std::array<ctx::fiber, WEFT_WARP_SIZE> driver;   // the driver's continuation, per lane
  std::array<std::uint64_t, WEFT_WARP_SIZE> in{};  // a lane's input to the current collective
  std::array<std::uint32_t, WEFT_WARP_SIZE> src{};
  std::array<std::uint64_t, WEFT_WARP_SIZE> out{};
  std::array<collective, WEFT_WARP_SIZE> op{};
  std::array<bool, WEFT_WARP_SIZE> done{};
#if WEFT_ASAN_FIBERS
  const void* driver_bottom = nullptr;  // the driver thread's stack, for ASan's switch notes
  std::size_t driver_size = 0;
#endif
  std::array<ctx::stack_context, WEFT_WARP_SIZE> stacks{};  // each lane's fiber stack
};

namespace {

// This thread's lane stacks not in use (see "Stacks" above), freed when the thread ends.
struct lane_stack_pool {
  ctx::protected_fixedsize_stack maker{lane_stack_bytes};
  std::vector<ctx::stack_context> free;
  lane_stack_pool() { free.reserve(WEFT_WARP_SIZE); }
  ~lane_stack_pool() {
    for (ctx::stack_context& s : free) maker.deallocate(s);
  }
};
thread_local lane_stack_pool t_lane_stacks;

// A stack from the pool that remembers where it is (for ASan's switch notes).
struct recorded_stack {
  ctx::stack_context* record;
  ctx::stack_context allocate() {
    lane_stack_pool& p = t_lane_stacks;
    if (p.free.empty()) {
      try {
        *record = p.maker.allocate();
      } catch (...) {
        contract_violation("bulk_warps on the host backend: could not map a lane's 256 KiB fiber stack");
      }
    } else {
      *record = p.free.back();
      p.free.pop_back();
    }
    return *record;
  }
  void deallocate(ctx::stack_context& sc) noexcept { t_lane_stacks.free.push_back(sc); }  // (reserved: no throw)
};

// Switch from a lane back to the driver, and later back again (ASan told both times).
void lane_yield(warp_emu* e, std::uint32_t lane) {
#if WEFT_ASAN_FIBERS
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, e->driver_bottom, e->driver_size);
  e->driver[lane] = std::move(e->driver[lane]).resume();
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  e->driver[lane] = std::move(e->driver[lane]).resume();
#endif
}

void resume_lane(warp_emu* e, std::uint32_t lane) {
#if WEFT_ASAN_FIBERS
  void* fake = nullptr;
  const ctx::stack_context& s = e->stacks[lane];
  __sanitizer_start_switch_fiber(&fake, static_cast<char*>(s.sp) - s.size, s.size);
  e->lanes[lane] = std::move(e->lanes[lane]).resume();
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  e->lanes[lane] = std::move(e->lanes[lane]).resume();
#endif
}

std::uint64_t arrive(warp_emu* e, std::uint32_t lane, collective c, std::uint64_t v, std::uint32_t src) {
  e->op[lane] = c;
  e->in[lane] = v;
  e->src[lane] = src;
  lane_yield(e, lane);
  return e->out[lane];
}

// The end of a round: check that the lanes agree, then compute every lane's result.
// Returns false when all lanes have finished.
bool settle_round(warp_emu* e) {
  std::uint32_t finished = 0;
  collective kind = collective::none;
  for (std::uint32_t l = 0; l < WEFT_WARP_SIZE; ++l) {
    if (e->done[l]) {
      ++finished;
      continue;
    }
    if (kind != collective::none && e->op[l] != kind) contract_violation("warp_ctx: lanes reached different collectives");
    kind = e->op[l];
  }
  if (finished == WEFT_WARP_SIZE) return false;
  if (finished != 0) contract_violation("warp_ctx: a collective was reached by only some lanes of the warp");
  std::uint32_t mask = 0;
  for (std::uint32_t l = 0; l < WEFT_WARP_SIZE; ++l) mask |= (e->in[l] & 1u) << l;
  for (std::uint32_t l = 0; l < WEFT_WARP_SIZE; ++l) {
    if (kind == collective::shfl) e->out[l] = e->in[e->src[l]];
    if (kind == collective::ballot) e->out[l] = mask;
    e->op[l] = collective::none;
  }
  return true;
}

}  // namespace

std::uint64_t host_warp_shfl(warp_emu* e, std::uint32_t lane, std::uint64_t v, std::uint32_t src) noexcept {
  return arrive(e, lane, collective::shfl, v, src % WEFT_WARP_SIZE);
}
std::uint32_t host_warp_ballot(warp_emu* e, std::uint32_t lane, bool p) noexcept {
  return static_cast<std::uint32_t>(arrive(e, lane, collective::ballot, p ? 1u : 0u, 0));
}
void host_warp_sync(warp_emu* e, std::uint32_t lane) noexcept { arrive(e, lane, collective::sync, 0, 0); }

void host_run_warp(void (*body)(void* arg, std::uint32_t lane, warp_emu* e), void* arg) noexcept {
  warp_emu emu;
  warp_emu* e = &emu;
  for (std::uint32_t l = 0; l < WEFT_WARP_SIZE; ++l) {
    e->lanes[l] = ctx::fiber(std::allocator_arg, recorded_stack{&e->stacks[l]}, [e, l, body, arg](ctx::fiber&& driver) {
#if WEFT_ASAN_FIBERS
      __sanitizer_finish_switch_fiber(nullptr, &e->driver_bottom, &e->driver_size);
#endif
      e->driver[l] = std::move(driver);
      body(arg, l, e);
      e->done[l] = true;
#if WEFT_ASAN_FIBERS
      __sanitizer_start_switch_fiber(nullptr, e->driver_bottom, e->driver_size);
#endif
      return std::move(e->driver[l]);
    });
  }
  do {
    for (std::uint32_t l = 0; l < WEFT_WARP_SIZE; ++l)
      if (!e->done[l]) resume_lane(e, l);
  } while (settle_round(e));
}

}  // namespace weft::detail
