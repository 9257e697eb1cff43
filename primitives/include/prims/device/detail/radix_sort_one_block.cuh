#pragma once
// The one-block radix sort: inputs small enough for one block's registers and shared memory (up to 2^14 keys or
// pairs of up to 4-byte items, 2^13 of 8-byte items, 2^12 with 16-byte values; fewer pairs on GPUs with 99 KB of
// shared memory a block) are sorted by a single block in one launch. The block loads every key once, ranks and
// exchanges them through shared memory for each 8-bit digit (TileSort of tile_sort.cuh with one slot holding the
// whole input), and writes every key once; values are read once at the end and written once, by the keys'
// origins. Nothing goes through the temporary storage.
// Onesweep needs a launch for its clear, the histogram and the digit starts, then one a digit, whatever n is; at
// these sizes those launches are most of the sort, which one block does in a single launch (the faster of the two
// up to the policy's auto_max_items).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/block/tile_sort.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::radix {

/// Whether a one-block tile of Shape fits the table's shared memory.
template <class Table, class K, class V, class Shape>
inline constexpr bool kOneBlockShapeFits = fits_shared_memory<Table>(
    sizeof(typename TileSort<typename Table::template OneBlock<K, V>, Shape, Shape::tile_items, K, V>::TempStorage));

/// The most keys the one-block sort takes under a table for keys K and values V: the tile of its largest shape
/// that fits the table's shared memory (the largest shape's, but for pairs on 99 KB parts).
template <class Table, class K, class V>
constexpr size_t one_block_max_items() {
  using Policy = typename Table::template OneBlock<K, V>;
  if constexpr (kOneBlockShapeFits<Table, K, V, typename Policy::largest_shape>) {
    return Policy::largest_shape::tile_items;
  } else {
    static_assert(kOneBlockShapeFits<Table, K, V, typename Policy::large_shape>, "a one-block shape fits");
    return Policy::large_shape::tile_items;
  }
}

/// The most keys RadixSortAlgorithm::Auto gives the one-block sort under a table.
template <class Table, class K, class V>
constexpr size_t one_block_auto_max_items() {
  constexpr size_t kAuto = Table::template OneBlock<K, V>::auto_max_items;
  static_assert(kAuto <= one_block_max_items<Table, K, V>(), "Auto's one-block inputs fit the one-block sort");
  return kAuto;
}

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

/// The one-block sort under a table: n above one_block_max_items<Table, K, V>() is cudaErrorInvalidValue. Needs no
/// temporary storage (the size query asks for the smallest carved block, so the two-phase protocol holds). An
/// empty bit range copies.
template <class Table, class K, class V>
cudaError_t one_block_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                           int begin_bit, int end_bit, cudaStream_t stream) {
  using Policy = typename Table::template OneBlock<K, V>;
  constexpr size_t kMaxItems = one_block_max_items<Table, K, V>();
  if (n > kMaxItems) {
    return invalid_value("RadixSortAlgorithm::OneBlock: n = %zu is over its limit of %zu items", n,
                         kMaxItems);
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
  if constexpr (kMaxItems > static_cast<size_t>(Policy::large_shape::tile_items)) {
    if (n > static_cast<size_t>(Policy::large_shape::tile_items)) return sort_with(typename Policy::largest_shape{});
  }
  return sort_with(typename Policy::large_shape{});
}

}  // namespace prims::detail::radix
