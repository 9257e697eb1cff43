#pragma once
// A thread's per-item flags as one word, bit i for its item i (the selections' kept items, unique's and the
// by-key family's heads, their tails): bounds are applied once to the word, counts are one popcount, and a loop
// over the items tests one bit each.

namespace prims::detail {

/// The word of the first `held` of a thread's items: none where held <= 0, all 32 from 32 on.
__device__ inline unsigned held_bits(int held) { return held <= 0 ? 0u : held >= 32 ? ~0u : (1u << held) - 1u; }

/// Whether bit i of `bits` is set.
__device__ inline bool has_bit(unsigned bits, int i) { return ((bits >> i) & 1u) != 0; }

/// The word of a thread's items that begin a run of items equal under eq (eq(earlier, later)): item i where it
/// differs from item i - 1, item 0 where it is the input's first (`first_of_input`) or differs from the item before
/// it, before_first() (read after the thread's own items are compared); only the bits of `held` (items past the
/// input are copies of real ones, so eq sees only those).
template <int ITEMS, class T, class BeforeFirst, class Eq>
__device__ __forceinline__ unsigned head_bits(const T (&items)[ITEMS], BeforeFirst before_first, bool first_of_input,
                                              unsigned held, Eq& eq) {
  unsigned heads = 0;
#pragma unroll
  for (int i = 1; i < ITEMS; ++i) heads |= eq(items[i - 1], items[i]) ? 0u : 1u << i;
  const T before = before_first();
  if (first_of_input || !eq(before, items[0])) heads |= 1u;
  return heads & held;
}

/// Returns `bits` unchanged, hidden from the optimizer, so that the tests of its bits after it are not merged with
/// those before it: merged across a block scan, each item's test is kept as a bit repacked into a register of its
/// own, two instructions an item.
__device__ inline unsigned opaque_bits(unsigned bits) {
  asm("" : "+r"(bits));
  return bits;
}

}  // namespace prims::detail
