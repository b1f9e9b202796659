// weft/warp.hpp - weft::warp_ctx: what a bulk_warps job sees of its warp.
//
//   co_await weft::bulk_warps(k, [=] WEFT_HOST_DEVICE (weft::warp_ctx& w) {
//     float v = x[w.warp() * 32 + w.lane()];
//     float sum = w.reduce_add(v);                 // every lane gets the warp's sum
//     std::uint32_t odd = w.ballot(v > 0.5f);      // bit l: lane l's predicate
//     float right = w.shfl(v, (w.lane() + 1) % 32);
//   });
//
// On the GPU a warp job runs on one worker warp, all 32 lanes together, and these are
// the warp intrinsics (__shfl_sync, __ballot_sync, __syncwarp with the full mask). As
// in CUDA, every lane must reach each collective: lanes may diverge between them.
// On the host backend the 32 lanes run as Boost.Context fibers on one thread
// (executor/host_warp.cpp): a collective suspends the lane until all 32 have reached
// it, then each gets its result. reduce() is a butterfly of shfl_xor steps on both
// backends, so floating-point results are the same bits on the host and the GPU.
// Calling a collective from only some lanes is a contract violation on the host (on
// the GPU it is undefined, as in CUDA).
// Lanes talk to each other only through these collectives. A lane that spins on a flag
// another lane of its warp sets works on the GPU (independent thread scheduling) but
// never ends on the host, where a lane runs until its next collective before the next
// lane starts. A lane's stack on the host is 256 KiB, with a guard page below it.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/config.hpp"

namespace weft {

namespace detail {
struct warp_emu;  // the host emulation of one warp (executor/host_warp.cpp)
// Host emulation: each lane calls these with its own value; they return once all 32
// lanes made the same call.
std::uint64_t host_warp_shfl(warp_emu* e, std::uint32_t lane, std::uint64_t v, std::uint32_t src) noexcept;
std::uint32_t host_warp_ballot(warp_emu* e, std::uint32_t lane, bool p) noexcept;
void host_warp_sync(warp_emu* e, std::uint32_t lane) noexcept;
// Runs body(arg, lane, emu) for lanes 0..31 as fibers on the calling thread.
void host_run_warp(void (*body)(void* arg, std::uint32_t lane, warp_emu* e), void* arg) noexcept;
}  // namespace detail

class warp_ctx {
 public:
#if WEFT_DEVICE_PASS
  WEFT_HOST_DEVICE warp_ctx(std::uint32_t lane, std::uint64_t warp, std::uint64_t warps) noexcept
      : lane_(lane), warp_(warp), warps_(warps) {}
#else
  WEFT_HOST_DEVICE warp_ctx(std::uint32_t lane, std::uint64_t warp, std::uint64_t warps, detail::warp_emu* e) noexcept
      : lane_(lane), warp_(warp), warps_(warps), emu_(e) {}
#endif

  // This lane's id, 0..31.
  WEFT_HOST_DEVICE std::uint32_t lane() const noexcept { return lane_; }
  // Which warp job this is, 0..warps()-1, and how many the bulk_warps call has.
  WEFT_HOST_DEVICE std::uint64_t warp() const noexcept { return warp_; }
  WEFT_HOST_DEVICE std::uint64_t warps() const noexcept { return warps_; }

  // Lane `src`'s v (src taken modulo 32). T: trivially copyable, at most 8 bytes.
  template <class T>
  WEFT_HOST_DEVICE T shfl(T v, std::uint32_t src) const noexcept {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "warp_ctx::shfl: T must be trivially copyable, <= 8 bytes");
    return from_bits<T>(exchange(to_bits(v), src % WEFT_WARP_SIZE));
  }
  // Lane (lane() ^ mask)'s v.
  template <class T>
  WEFT_HOST_DEVICE T shfl_xor(T v, std::uint32_t mask) const noexcept {
    return shfl(v, lane_ ^ (mask % WEFT_WARP_SIZE));
  }
  // Bit l set when lane l's p is true.
  WEFT_HOST_DEVICE std::uint32_t ballot(bool p) const noexcept {
#if WEFT_DEVICE_PASS
    return __ballot_sync(0xffffffffu, p);
#else
    return detail::host_warp_ballot(emu_, lane_, p);
#endif
  }
  // op folded over the 32 lanes' v, in a butterfly (the same order on both backends);
  // every lane receives the result. op: (T, T) -> T, associative and commutative (a
  // butterfly combines each lane's value with its partner's in both orders: with an op
  // that is not commutative the lanes get different results).
  template <class T, class Op>
  WEFT_HOST_DEVICE T reduce(T v, Op op) const noexcept {
    for (std::uint32_t m = WEFT_WARP_SIZE / 2; m != 0; m /= 2) v = op(v, shfl_xor(v, m));
    return v;
  }
  template <class T>
  WEFT_HOST_DEVICE T reduce_add(T v) const noexcept {
    return reduce(v, [] WEFT_HOST_DEVICE(T a, T b) { return a + b; });
  }
  // Waits until every lane of the warp got here; memory writes before it are visible
  // to the warp's lanes after it.
  WEFT_HOST_DEVICE void sync() const noexcept {
#if WEFT_DEVICE_PASS
    __syncwarp();
#else
    detail::host_warp_sync(emu_, lane_);
#endif
  }

 private:
  template <class T>
  WEFT_HOST_DEVICE static std::uint64_t to_bits(const T& v) noexcept {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
  }
  template <class T>
  WEFT_HOST_DEVICE static T from_bits(std::uint64_t b) noexcept {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
  }
  WEFT_HOST_DEVICE std::uint64_t exchange(std::uint64_t b, std::uint32_t src) const noexcept {
#if WEFT_DEVICE_PASS
    return __shfl_sync(0xffffffffu, static_cast<unsigned long long>(b), static_cast<int>(src));
#else
    return detail::host_warp_shfl(emu_, lane_, b, src);
#endif
  }

  std::uint32_t lane_;
  std::uint64_t warp_;
  std::uint64_t warps_;
#if !WEFT_DEVICE_PASS
  detail::warp_emu* emu_;
#endif
};

}  // namespace weft
