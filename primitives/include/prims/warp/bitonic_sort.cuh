#pragma once
// Warp bitonic sort: groups of LANES consecutive lanes each sort LANES * ITEMS items held in registers, blocked
// (lane l of a group holds elements l * ITEMS .. l * ITEMS + ITEMS - 1, before and after), ascending by `less`.
//
// The network is Batcher's bitonic sort in the form whose compare-exchanges all keep the smaller item at the lower
// index: each merge of two sorted runs of k/2 first compares element i with i ^ (k - 1) (the second run read
// backwards), then with i ^ j for j = k/4 .. 1. Pairs inside a lane's items are exchanged in registers (their
// indices are compile-time constants once the loops unroll); pairs across lanes by one shuffle an item, each lane
// keeping the smaller item or the larger by which side of the pair it holds. log2(N) (log2(N) + 1) / 2 stages for
// N = LANES * ITEMS: 21 for 64 items.
// Not stable: items that compare equal may come out in any order (sort words that carry their index to decide
// ties, as the segmented sort does).

#include <type_traits>

#include "prims/util/shuffle.cuh"

namespace prims::warp {

namespace detail {

/// Orders integers by their own order, with min and max (one instruction each for 32-bit words).
struct IntegerLess {};

template <class T, class Less>
__device__ __forceinline__ void order_pair(T& low, T& high, [[maybe_unused]] Less less) {
  if constexpr (std::is_same_v<Less, IntegerLess>) {
    const T smaller = min(low, high);
    high = max(low, high);
    low = smaller;
  } else {
    const bool swap = less(high, low);
    const T smaller = swap ? high : low;
    high = swap ? low : high;
    low = smaller;
  }
}

/// The smaller of `own` and `other` on the lower side of a pair, the larger on the upper side. Both sides decide
/// by the same comparison (upper < lower), so items that compare equal are neither lost nor duplicated.
template <class T, class Less>
__device__ __forceinline__ T keep_side(const T& own, const T& other, bool lower, [[maybe_unused]] Less less) {
  if constexpr (std::is_same_v<Less, IntegerLess>) {
    return lower ? min(own, other) : max(own, other);
  } else {
    const bool swap = lower ? less(other, own) : less(own, other);
    return swap ? other : own;
  }
}

}  // namespace detail

/// Sorts each group's LANES * ITEMS items (see the file comment). LANES is a power of two of at most 32, ITEMS a
/// power of two; `member` is the lane's index in its group (lane % LANES). All 32 lanes of the warp must call it,
/// with the same LANES and ITEMS (lanes without items to sort fill theirs with the largest value).
/// Example (8 groups of 4 lanes, 64 words a group): `prims::warp::bitonic_sort<4>(words, lane % 4, Less{});`
template <int LANES, int ITEMS, class T, class Less>
__device__ __forceinline__ void bitonic_sort(T (&items)[ITEMS], int member, Less less) {
  static_assert(LANES > 0 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "LANES is a power of two up to 32");
  static_assert(ITEMS > 0 && (ITEMS & (ITEMS - 1)) == 0, "ITEMS is a power of two");
  constexpr int kLog2Items = __builtin_ctz(ITEMS);
  constexpr int kLog2Size = kLog2Items + __builtin_ctz(LANES);
#pragma unroll
  for (int log2_k = 1; log2_k <= kLog2Size; ++log2_k) {
    const int k = 1 << log2_k;
    // Merge runs of k/2 into runs of k: element i against i ^ (k - 1).
    if (log2_k <= kLog2Items) {
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        const int partner = r ^ (k - 1);
        if (r < partner) detail::order_pair(items[r], items[partner], less);
      }
    } else {
      // The partner lane holds the mirrored items: item r pairs with its item ITEMS - 1 - r.
      const int lane_mask = (k >> kLog2Items) - 1;
      const bool lower = (member & (k >> (kLog2Items + 1))) == 0;
      T other[ITEMS];
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) other[r] = prims::detail::shuffle_xor(items[ITEMS - 1 - r], lane_mask);
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) items[r] = detail::keep_side(items[r], other[r], lower, less);
    }
    // Then halving strides: element i against i ^ j.
#pragma unroll
    for (int log2_j = log2_k - 2; log2_j >= 0; --log2_j) {
      const int j = 1 << log2_j;
      if (log2_j < kLog2Items) {
#pragma unroll
        for (int r = 0; r < ITEMS; ++r) {
          if ((r & j) == 0) detail::order_pair(items[r], items[r | j], less);
        }
      } else {
        const int lane_mask = j >> kLog2Items;
        const bool lower = (member & lane_mask) == 0;
#pragma unroll
        for (int r = 0; r < ITEMS; ++r) {
          items[r] = detail::keep_side(items[r], prims::detail::shuffle_xor(items[r], lane_mask), lower, less);
        }
      }
    }
  }
}

}  // namespace prims::warp

namespace prims::warp {

/// bitonic_sort for integers in their own order (min and max instead of a comparison and selects).
/// Example: `prims::warp::bitonic_sort<8>(keys, lane % 8);`
template <int LANES, int ITEMS, class T>
__device__ __forceinline__ void bitonic_sort(T (&items)[ITEMS], int member) {
  static_assert(std::is_integral_v<T>, "without a comparison, items are integers");
  bitonic_sort<LANES>(items, member, detail::IntegerLess{});
}

}  // namespace prims::warp
