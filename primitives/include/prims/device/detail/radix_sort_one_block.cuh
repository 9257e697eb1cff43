#pragma once
// The one-block radix sort: inputs small enough for one block's registers and shared memory (up to 2^14 keys or
// pairs of up to 4-byte items, 2^13 of 8-byte items, 2^12 with 16-byte values) are sorted by a single block in one launch. The block
// loads every key once, ranks and exchanges them through shared memory for each 8-bit digit (TileSort of
// tile_sort.cuh with one slot holding the whole input), and writes every key once; values are read once at the end
// and written once, by the keys' origins. Nothing goes through the temporary storage.
// Onesweep needs a launch for its clear, the histogram and the digit starts, then one a digit, whatever n is; at
// these sizes those launches are most of the sort, which one block does in a single launch (the faster of the two
// up to the policy's auto_max_items).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/tile_sort.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail {

/// Tuning of the one-block sort on Hopper: four block shapes by input size, the smallest whose tile holds n runs.
/// A lone block is bound by its passes' latency, so a tile is as small as n allows and its items spread over more
/// than 512 threads only where the tile needs them (a digit thread sums one counter per warp).
/// Chosen by timing each shape (docs/design-notes.md, "Small inputs: the one-block sort").
template <class K, class V>
struct OneBlockPolicySm90 {
  static constexpr int radix_bits = 8;
  static constexpr bool rank_with_match_any = false;
  /// Items a thread in the largest shape: 64 KB of the widest item (key or value) in 1024 threads.
  static constexpr int items_per_thread = kSortItemBytes<K, V> <= 4 ? 16 : kSortItemBytes<K, V> <= 8 ? 8 : 4;
  using small_shape = TileShape<256, items_per_thread / 4, 1>;
  using medium_shape = TileShape<512, items_per_thread / 2, 1>;
  using large_shape = TileShape<512, items_per_thread, 1>;
  using largest_shape = TileShape<1024, items_per_thread, 1>;
  static constexpr size_t max_items = largest_shape::tile_items;
  /// Where Auto stops taking the one-block sort, beyond which Onesweep with its small tiles is faster: keys alone up
  /// to the large shape, pairs up to the medium shape.
  /// Chosen with bench/bench_sort (docs/design-notes.md, "Small inputs: the one-block sort").
  static constexpr size_t auto_max_items = kHasValues<V> ? medium_shape::tile_items : large_shape::tile_items;
};

/// The policy for the architecture the library is built for; one entry today.
template <class K, class V>
using OneBlockPolicy = OneBlockPolicySm90<K, V>;

/// The most keys the one-block sort takes for keys K and values V, and the most RadixSortAlgorithm::Auto gives it.
template <class K, class V>
inline constexpr size_t kOneBlockMaxItems = OneBlockPolicy<K, V>::max_items;
template <class K, class V>
inline constexpr size_t kAutoOneBlockMaxItems = OneBlockPolicy<K, V>::auto_max_items;

/// Sorts io.keys_in[0, n) into io.keys_out (values alike) with one block of Shape; n fits the tile. Its storage,
/// TileSort::TempStorage, is the launch's dynamic shared memory.
template <class Policy, class Shape, class K, class V>
__global__ void __launch_bounds__(Shape::threads, 1)
    one_block_sort_kernel(PassBuffers<K, V> io, unsigned n, Order order, int begin_bit, int end_bit) {
  using Tile = TileSort<Policy, Shape, Shape::tile_items, K, V>;
  extern __shared__ __align__(16) unsigned char one_block_storage[];
  auto& storage = *reinterpret_cast<typename Tile::TempStorage*>(one_block_storage);
  wait_for_prior_grids();
  allow_dependent_grids();
  if (threadIdx.x == 0) {
    storage.slot_begin[0] = 0;
    storage.slot_size[0] = n;
  }
  __syncthreads();
  Tile::sort_group(io, order, begin_bit, end_bit, storage);
}

/// The one-block sort: n above kOneBlockMaxItems<K, V> is cudaErrorInvalidValue. Needs no temporary storage (the
/// size query asks for the smallest carved block, so the two-phase protocol holds). An empty bit range copies.
template <class K, class V, class Policy = OneBlockPolicy<K, V>>
cudaError_t one_block_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                           int begin_bit, int end_bit, cudaStream_t stream) {
  if (n > Policy::max_items) {
    return invalid_value("RadixSortAlgorithm::OneBlock: n = %zu is over its limit of %zu items", n,
                         static_cast<size_t>(Policy::max_items));
  }
  const size_t sizes[1] = {0};
  void* parts[1];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr || n == 0) return cudaSuccess;
  auto sort_with = [&](auto shape) {
    using Shape = decltype(shape);
    using Tile = TileSort<Policy, Shape, Shape::tile_items, K, V>;
    return launch(one_block_sort_kernel<Policy, Shape, K, V>, 1, Shape::threads, sizeof(typename Tile::TempStorage),
                  stream, io, static_cast<unsigned>(n), order, begin_bit, end_bit);
  };
  if (n <= static_cast<size_t>(Policy::small_shape::tile_items)) return sort_with(typename Policy::small_shape{});
  if (n <= static_cast<size_t>(Policy::medium_shape::tile_items)) return sort_with(typename Policy::medium_shape{});
  if (n <= static_cast<size_t>(Policy::large_shape::tile_items)) return sort_with(typename Policy::large_shape{});
  return sort_with(typename Policy::largest_shape{});
}

}  // namespace prims::detail
