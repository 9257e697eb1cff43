#pragma once
// Warp match: which lanes of a full warp hold the same small value. The ranking step of the radix sorts uses it to
// find the lanes whose keys share a digit.

#include "prims/util/shuffle.cuh"

namespace prims::warp {

/// The mask of lanes whose value equals this lane's, comparing the low BITS bits. All 32 lanes must call it.
/// By default one ballot per bit, each folded in as `ballot` or `~ballot` by the lane's own bit: written in PTX
/// because that is three instructions a bit, where the compiler's form of the same C++ takes about seven.
/// MATCH_ANY uses the single __match_any_sync instruction instead: fewer instructions, but on sm_90 its unit
/// saturates in a sort's ranking loop, where the ballots are faster.
/// Example: `const unsigned peers = prims::warp::lanes_with_same_value<8>(digit);`
template <int BITS, bool MATCH_ANY = false>
__device__ __forceinline__ unsigned lanes_with_same_value(unsigned value) {
  if constexpr (MATCH_ANY) {
    return __match_any_sync(detail::kFullWarpMask, value);
  } else {
    unsigned peers = detail::kFullWarpMask;
#pragma unroll
    for (int bit = 0; bit < BITS; ++bit) {
      unsigned with_same_bit;
      asm("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\t"
          "and.b32 t, %1, %2;\n\tsetp.ne.u32 p, t, 0;\n\t"
          "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
          "@!p not.b32 %0, %0;\n\t}"
          : "=r"(with_same_bit)
          : "r"(value), "r"(1u << bit));
      peers &= with_same_bit;
    }
    return peers;
  }
}

}  // namespace prims::warp
