#pragma once
// The small vocabulary that the radix sorts' policies are written in (device/detail/tuning.cuh) and their kernels
// share: the value type of keys-only sorts, the buffers of a pass, the widest item of a tile, the digit passes of a
// bit range, and the shape of a block that sorts whole tiles.

#include <cuda_runtime.h>

#include <type_traits>

namespace prims::detail {

/// Keys-only sorts carry this in place of a value type.
struct NoValues {};

template <class V>
inline constexpr bool kHasValues = !std::is_same_v<V, NoValues>;

/// What a digit pass reads and writes. Keys-only passes have null value pointers.
template <class K, class V>
struct PassBuffers {
  const K* keys_in;
  K* keys_out;
  const V* values_in;
  V* values_out;
};

/// The widest item a tile moves through shared memory: the key or the value.
template <class K, class V>
inline constexpr int kSortItemBytes =
    static_cast<int>(sizeof(K) > sizeof(V) || !kHasValues<V> ? sizeof(K) : sizeof(V));

/// The number of digit passes over [begin_bit, end_bit) with digits of `radix_bits`.
__host__ __device__ constexpr int radix_passes(int begin_bit, int end_bit, int radix_bits) {
  return (end_bit - begin_bit + radix_bits - 1) / radix_bits;
}

/// The block of a kernel that sorts whole tiles in registers and shared memory (TileSort): its threads, the items
/// each holds, and how many blocks must fit on a multiprocessor (which caps the registers).
template <int THREADS, int ITEMS, int MIN_BLOCKS>
struct TileShape {
  static constexpr int threads = THREADS;
  static constexpr int items_per_thread = ITEMS;
  static constexpr int min_blocks_per_sm = MIN_BLOCKS;
  static constexpr int tile_items = THREADS * ITEMS;
};

}  // namespace prims::detail
