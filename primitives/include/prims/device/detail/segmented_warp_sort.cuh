#pragma once
// The segmented sort's warp engine (segmented_radix_sort_dispatch.cuh, step 2): segments of up to 256 keys, each
// sorted by a group of lanes with a bitonic network in registers.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "prims/device/detail/segmented_classes.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/warp/bitonic_sort.cuh"

namespace prims::detail::segmented {

/// Sorts segments of up to LANES * ITEMS keys (a counted class's ranges, or the packed16 class's ids), each by a
/// group of LANES lanes of a warp with warp::bitonic_sort in registers: no shared memory and no block barrier, so
/// warps never wait on each other. Lane l of a group holds positions l * ITEMS .. l * ITEMS + ITEMS - 1 before
/// and after the sort; padding words sort last. What is sorted:
///   PLAIN (integer or float keys, no values, every bit sorted): the sort bits alone, compared and exchanged
///     with min and max. They determine the key, so keys that tie are identical and the key is rebuilt from its
///     word; for floats only if the segment has no -0.0 and no NaN (ordered bits shared with +0.0 and the other
///     NaNs): a segment with one is appended to the `special` list instead and sorted after by index words.
///   otherwise (keys of up to 4 bytes): the sort bits above the key's index in its segment, one 64-bit word, so no
///     two words tie and the order is stable. The word of sorted position p names the index of its key, which is
///     read again from there (the warp has just read it: a cache hit), with its value, and written to p.
template <class Policy, int LANES, int ITEMS, bool PLAIN, class K, class V>
struct SegmentedWarpSort {
  static constexpr int kMaxItems = LANES * ITEMS;
  static constexpr int kGroups = warp::kWarpThreads / LANES;
  static_assert(!(PLAIN && std::is_floating_point_v<K>) || kMaxItems <= (1 << kRangeSizeBits),
                "the special list's ranges hold the sizes");
  static_assert(!PLAIN || !kHasValues<V>, "plain words rebuild keys, not values");
  static_assert(PLAIN || sizeof(K) <= 4, "8-byte keys with an index are sorted by SegmentedCountingSort");
  using Bits = typename RadixKey<K>::Bits;
  using Word = std::conditional_t<PLAIN, Bits, std::uint64_t>;

  __device__ static Word word_of(Bits bits, unsigned index) {
    if constexpr (PLAIN) {
      return bits;
    } else {
      return static_cast<std::uint64_t>(bits) << 32 | index;
    }
  }
  /// Not below any real word: all bits set (an index past any segment).
  __device__ static Word padding() { return word_of(static_cast<Bits>(~Bits{0}), ~0u); }
  /// The key whose plain word (sort bits over the whole key) is `word`: undoes the order's complement and
  /// RadixKey<K>::ordered_bits (for floats: a key that is not special).
  __device__ static K key_of(Bits word, Order order) {
    return RadixKey<K>::from_plain_ordered_bits(order == Order::Descending ? static_cast<Bits>(~word) : word);
  }

  /// Sorts the segment [begin, begin + size) with the other lanes of the group (member: this lane's place in it);
  /// size 0 for a group without a segment. All 32 lanes of the warp call it together.
  template <class Offset>
  __device__ static void sort_segment(const SegmentedSortArgs<K, V, Offset>& args, size_t begin, unsigned size,
                                      int member, const SegmentList& special) {
    Word words[ITEMS];
    [[maybe_unused]] bool special_key = false;
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
      const unsigned index = member * ITEMS + r;
      words[r] = padding();
      if (index < size) {
        const K key = args.io.keys_in[begin + index];
        words[r] = word_of(sort_bits(key, args.order, args.begin_bit, args.end_bit), index);
        if constexpr (PLAIN && std::is_floating_point_v<K>) special_key |= RadixKey<K>::is_special(key);
      }
    }
    warp::bitonic_sort<LANES>(words, member);
    if constexpr (PLAIN) {
      unsigned written = size;
      if constexpr (std::is_floating_point_v<K>) {
        const int lane = threadIdx.x % warp::kWarpThreads;
        const unsigned group_lanes =
            LANES == warp::kWarpThreads ? kFullWarpMask : ((1u << LANES) - 1) << (lane - member);
        if ((__ballot_sync(kFullWarpMask, special_key) & group_lanes) != 0) {
          written = 0;  // the whole group leaves the segment to the special list's sort
          if (member == 0) {
            const unsigned position = atomicAdd(special.count, 1u);
            if (position < special.capacity) {
              special.ranges[position] = static_cast<unsigned long long>(begin) << kRangeSizeBits | (size - 1);
            }
          }
        }
      }
      __syncwarp();  // in place: every key of the group's segments is read before any is written
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        const unsigned position = member * ITEMS + r;
        if (position < written) args.io.keys_out[begin + position] = key_of(words[r], args.order);
      }
    } else {
      K keys[ITEMS];
      [[maybe_unused]] V values[kHasValues<V> ? ITEMS : 1];
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        if (member * ITEMS + r < size) {
          const size_t origin = begin + static_cast<unsigned>(words[r]);  // the index, below the sort bits
          keys[r] = args.io.keys_in[origin];
          if constexpr (kHasValues<V>) values[r] = args.io.values_in[origin];
        }
      }
      __syncwarp();  // in place: every key and value of the group's segments is read before any is written
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        const unsigned position = member * ITEMS + r;
        if (position < size) {
          args.io.keys_out[begin + position] = keys[r];
          if constexpr (kHasValues<V>) args.io.values_out[begin + position] = values[r];
        }
      }
    }
  }
};

/// Sorts a class by warps: warp w sorts entries w * kGroups, (w + warps) * kGroups, ... of the class's list
/// (ranges, or with IDS segment ids: the packed16 class), a group of LANES lanes each (the grid is one wave; the
/// work of a segment is small and even). Float segments that plain words cannot sort go to `special` (see
/// SegmentedWarpSort).
template <class Policy, int LANES, int ITEMS, bool PLAIN, bool IDS, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads)
    segmented_warp_sort_kernel(SegmentedSortArgs<K, V, Offset> args, SegmentList list, SegmentList special) {
  using Sort = SegmentedWarpSort<Policy, LANES, ITEMS, PLAIN, K, V>;
  wait_for_prior_grids();
  allow_dependent_grids();
  const int lane = threadIdx.x % warp::kWarpThreads;
  const size_t warp_id = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp::kWarpThreads;
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / warp::kWarpThreads;
  const unsigned count = list.size();
  // The loop is the same for every lane of a warp, so whole warps meet in the network's shuffles.
  for (size_t first = warp_id * Sort::kGroups; first < count; first += warps * Sort::kGroups) {
    const size_t index = first + lane / LANES;
    size_t begin = 0;
    unsigned size = 0;
    if (index < count) {
      if constexpr (IDS) {
        const SegmentRange range = segment_range(args.begin_offsets, args.end_offsets, list.ids[index]);
        begin = range.begin;
        size = static_cast<unsigned>(range.size);
      } else {
        const unsigned long long range = list.ranges[index];
        begin = static_cast<size_t>(range >> kRangeSizeBits);
        size = static_cast<unsigned>(range & ((1u << kRangeSizeBits) - 1)) + 1;
      }
    }
    Sort::sort_segment(args, begin, size, lane % LANES, special);
  }
}

}  // namespace prims::detail::segmented
