#pragma once
// A thread's per-item flags as one word, bit i for its item i (the selections' kept items, the by-key family's
// heads and tails): bounds are applied once to the word, counts are one popcount, and a loop over the items tests
// one bit each.

namespace prims::detail {

/// The word of the first `held` of a thread's items: none where held <= 0, all 32 from 32 on.
__device__ inline unsigned held_bits(int held) { return held <= 0 ? 0u : held >= 32 ? ~0u : (1u << held) - 1u; }

/// Whether bit i of `bits` is set.
__device__ inline bool has_bit(unsigned bits, int i) { return ((bits >> i) & 1u) != 0; }

/// Returns `bits` unchanged, hidden from the optimizer, so that the tests of its bits after it are not merged with
/// those before it: merged across a block scan, each item's test is kept as a bit repacked into a register of its
/// own, two instructions an item.
__device__ inline unsigned opaque_bits(unsigned bits) {
  asm("" : "+r"(bits));
  return bits;
}

}  // namespace prims::detail
