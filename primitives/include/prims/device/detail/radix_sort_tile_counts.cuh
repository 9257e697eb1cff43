#pragma once
// Kernels of the reduce-then-scan radix sort (RadixSortAlgorithm::TileCounts). One digit pass is three steps:
//   1. tile_counts_kernel   block b counts its tile's digits in shared memory and writes them digit-major:
//                           counts[d * num_tiles + b];
//   2. device::exclusive_sum over that flat array: entry (d, b) becomes the output position of tile b's first
//                           key with digit d (all smaller digits, then digit d in earlier tiles);
//   3. tile_counts_scatter_kernel   block b ranks its tile (block::RadixRank) and scatters it from there.
// Both kernels are launched with programmatic dependent launch.
// Positions are size_t throughout, so any n that fits in memory works.

#include <cstddef>

#include "prims/device/detail/radix_sort_kernels.cuh"
#include "prims/util/launch.cuh"

namespace prims::device::detail {

template <class Policy, class K>
__global__ void __launch_bounds__(Policy::block_threads)
    tile_counts_kernel(const K* __restrict__ keys, size_t n, DigitExtractor<K> digit_of,
                       size_t* __restrict__ counts, size_t num_tiles) {
  using Tile = SortTile<Policy, K, NoValues, size_t>;
  __shared__ unsigned histogram[Tile::kDigits];
  for (int d = threadIdx.x; d < Tile::kDigits; d += Tile::kThreads) histogram[d] = 0;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  __syncthreads();

  const size_t tile_begin = blockIdx.x * static_cast<size_t>(Tile::kTileItems);
  const int valid = static_cast<int>(n - tile_begin < Tile::kTileItems ? n - tile_begin : Tile::kTileItems);
  K tile_keys[Tile::kItems];
  Tile::load(keys + tile_begin, valid, tile_keys);
#pragma unroll
  for (int i = 0; i < Tile::kItems; ++i) {
    if (Tile::element(i) < valid) atomicAdd(&histogram[digit_of(tile_keys[i])], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < Tile::kDigits; d += Tile::kThreads) {
    counts[d * num_tiles + blockIdx.x] = histogram[d];
  }
}

template <class Policy, class K, class V>
__global__ void __launch_bounds__(Policy::block_threads)
    tile_counts_scatter_kernel(PassBuffers<K, V> buffers, size_t n, DigitExtractor<K> digit_of,
                               const size_t* __restrict__ starts, size_t num_tiles) {
  using Tile = SortTile<Policy, K, V, size_t>;
  __shared__ typename Tile::TempStorage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();

  const size_t tile_begin = blockIdx.x * static_cast<size_t>(Tile::kTileItems);
  const int valid = static_cast<int>(n - tile_begin < Tile::kTileItems ? n - tile_begin : Tile::kTileItems);
  K keys[Tile::kItems];
  Tile::load(buffers.keys_in + tile_begin, valid, keys);
  unsigned digits[Tile::kItems];
  Tile::key_digits(keys, valid, digit_of, digits);
  unsigned ranks[Tile::kItems];
  unsigned digit_count = 0;
  unsigned digit_prefix = 0;
  typename Tile::Rank(storage.rank).rank(digits, ranks, digit_count, digit_prefix);
  if (threadIdx.x < Tile::kDigits) {
    // Unsigned wrap-around is fine: every slot s of digit d has s >= digit_prefix.
    storage.digit_base[threadIdx.x] = starts[threadIdx.x * num_tiles + blockIdx.x] - digit_prefix;
  }

  unsigned slot_digits[Tile::kItems];
  Tile::scatter_keys(keys, ranks, valid, digit_of, storage, buffers.keys_out, slot_digits);
  if constexpr (kHasValues<V>) {
    V values[Tile::kItems];
    Tile::load(buffers.values_in + tile_begin, valid, values);
    Tile::scatter_values(values, ranks, valid, slot_digits, storage, buffers.values_out);
  }
}

}  // namespace prims::device::detail
