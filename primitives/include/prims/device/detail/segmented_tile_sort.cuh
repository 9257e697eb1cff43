#pragma once
// The segmented sort's tile engine (segmented_radix_sort_dispatch.cuh, step 3): the packed, tile and local
// classes, whole segments sorted in one block's registers and shared memory (TileSort).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/segmented_classes.cuh"
#include "prims/block/tile_sort.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"

namespace prims::detail::segmented {

/// Sorts the segments of one packed, tile or local class: a persistent block takes groups of TileSort::kSlots
/// ids from the class's list until none is left. Its storage, TileSort::TempStorage, is the launch's dynamic
/// shared memory (the local class's is above the 48 KB a static array may have).
template <class Policy, class Shape, int SLOT_ITEMS, class K, class V, class Offset>
__global__ void __launch_bounds__(Shape::threads, Shape::min_blocks_per_sm)
    segmented_tile_kernel(SegmentedSortArgs<K, V, Offset> args, SegmentList list) {
  using Tile = TileSort<Policy, Shape, SLOT_ITEMS, K, V>;
  extern __shared__ __align__(16) unsigned char tile_storage[];
  auto& storage = *reinterpret_cast<typename Tile::TempStorage*>(tile_storage);
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned count = list.size();
  // In 64 bits: up to 2^32 - 1 segments are allowed, and count + kSlots - 1 would wrap in 32.
  const auto groups = static_cast<unsigned>((static_cast<size_t>(count) + Tile::kSlots - 1) / Tile::kSlots);
  for (;;) {
    const unsigned group = take_work(list.next, storage.work);
    if (group >= groups) return;
    for (int j = threadIdx.x; j < Tile::kSlots; j += Tile::kThreads) {
      const size_t index = static_cast<size_t>(group) * Tile::kSlots + j;
      SegmentRange range{0, 0};
      if (index < count) range = segment_range(args.begin_offsets, args.end_offsets, list.ids[index]);
      storage.slot_begin[j] = range.begin;
      storage.slot_size[j] = static_cast<unsigned>(range.size);
    }
    __syncthreads();
    Tile::sort_group(args.io, args.order, args.begin_bit, args.end_bit, storage);
    __syncthreads();  // the slots and the work id are rewritten for the next group
  }
}


/// The local class's tile.
template <class K, class V, class Policy>
using SegmentedLocalTile = TileSort<Policy, typename Policy::local_shape, Policy::local_tile_items, K, V>;

/// Whether the local class runs under a table: its block's shared memory (96 KB for keys alone, 112 to 160 KB for
/// pairs) fits the table's, and the current device's (a cap for tests may lower it). Pairs do not fit on parts with
/// 99 KB a block (sm_86, sm_89, sm_120): the class's segments go to the large class (one block each, through global
/// memory) there.
template <class Table, class K, class V, class Policy>
cudaError_t segmented_local_class_fits(bool& fits) {
  constexpr size_t kBytes = sizeof(typename SegmentedLocalTile<K, V, Policy>::TempStorage);
  fits = false;
  if constexpr (fits_shared_memory<Table>(kBytes)) {
    size_t shared_bytes = 0;
    PRIMS_TRY(shared_memory_per_block(shared_bytes));
    fits = kBytes <= shared_bytes;
  }
  return cudaSuccess;
}

}  // namespace prims::detail::segmented
