#pragma once
// The reduce-then-scan radix sort (RadixSortAlgorithm::TileCounts): its policy, kernels and dispatcher. One digit
// pass is three steps:
//   1. tile_counts_kernel   block b counts its tile's digits in shared memory and writes them digit-major:
//                           counts[d * num_tiles + b];
//   2. the device scan's exclusive sum over that flat array: entry (d, b) becomes the output position of tile b's first
//                           key with digit d (all smaller digits, then digit d in earlier tiles);
//   3. tile_counts_scatter_kernel   block b ranks its tile (block::RadixRank) and scatters it from there
//                           (SortTile, radix_sort_common.cuh).
// Both kernels are launched with programmatic dependent launch. Positions are size_t throughout, so any n that
// fits in memory works.

#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <optional>

#include "prims/device/detail/digit_histogram.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/device/detail/scan_dispatch.cuh"
#include "prims/util/launch.cuh"

namespace prims::detail::radix {

template <class Policy, class K>
__global__ void __launch_bounds__(Policy::block_threads)
    tile_counts_kernel(const K* __restrict__ keys, size_t n, DigitExtractor<K> digit_of,
                       size_t* __restrict__ counts, size_t num_tiles) {
  using Tile = SortTile<Policy, K, NoValues, size_t>;
  __shared__ unsigned histogram[Tile::kDigits];
  for (int d = threadIdx.x; d < Tile::kDigits; d += Tile::kThreads) histogram[d] = 0;
  wait_for_prior_grids();
  allow_dependent_grids();
  __syncthreads();

  const size_t tile_begin = blockIdx.x * static_cast<size_t>(Tile::kTileItems);
  const int valid = static_cast<int>(n - tile_begin < Tile::kTileItems ? n - tile_begin : Tile::kTileItems);
  K tile_keys[Tile::kItems];
  Tile::load(keys + tile_begin, valid, tile_keys);
  using Counter = PassDigitCounter<Policy, 1, K, 1>;  // this pass only, one copy
  const Counter counter(digit_of, Counter::copy_of(histogram));
#pragma unroll
  for (int i = 0; i < Tile::kItems; ++i) {
    if (Tile::element(i) < valid) counter.count(tile_keys[i]);
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
  wait_for_prior_grids();
  allow_dependent_grids();

  const size_t tile_begin = blockIdx.x * static_cast<size_t>(Tile::kTileItems);
  const int valid = static_cast<int>(n - tile_begin < Tile::kTileItems ? n - tile_begin : Tile::kTileItems);
  const V* values_in = kHasValues<V> ? buffers.values_in + tile_begin : nullptr;
  Tile::template rank_and_scatter<false>(
      buffers.keys_in + tile_begin, values_in, valid, digit_of,
      [&](unsigned digit, unsigned) { return starts[digit * num_tiles + blockIdx.x]; }, buffers.keys_out,
      buffers.values_out, storage);
}

/// TileCounts over [begin_bit, end_bit) under a table. With `bucket_offsets` (a one-pass sort only), also writes
/// where each of the pass's 2^(end_bit - begin_bit) digits starts, then n.
template <class Table, class K, class V>
cudaError_t tile_counts_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                             int begin_bit, int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  using Policy = typename Table::template TileCounts<K, V>;
  using Tile = SortTile<Policy, K, V, size_t>;
  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  const size_t num_tiles = (n + Tile::kTileItems - 1) / Tile::kTileItems;
  const size_t num_counts = num_tiles * Tile::kDigits;
  if (num_tiles > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return invalid_value("RadixSortAlgorithm::TileCounts: n = %zu needs more tiles than a grid has blocks", n);
  }
  size_t scan_bytes = 0;
  // The counts' exclusive sum, under this sort's table.
  auto exclusive_sum = [&](void* scan_temp, size_t* counts) {
    return scan::scan_with<scan::kDefaultScanAlgorithm, true, Table>(scan_temp, scan_bytes,
                                                                     static_cast<const size_t*>(counts), counts,
                                                                     num_counts, Sum{}, Maybe<size_t>{0, true}, stream);
  };
  PRIMS_TRY(exclusive_sum(nullptr, nullptr));
  std::optional<SortBuffers<K, V>> buffers;
  void* parts[2];
  PRIMS_TRY(sort_prologue(temp, temp_bytes, io, n, num_passes, {num_counts * sizeof(size_t), scan_bytes}, parts,
                          buffers, stream));
  if (!buffers) return cudaSuccess;

  size_t* counts = static_cast<size_t*>(parts[0]);
  for (int pass = 0; pass < num_passes; ++pass) {
    const auto digit_of = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass);
    const PassBuffers<K, V> pass_buffers = buffers->pass(pass);
    PRIMS_TRY(launch(tile_counts_kernel<Policy, K>, static_cast<unsigned>(num_tiles), Policy::block_threads, 0,
                     stream, pass_buffers.keys_in, n, digit_of, counts, num_tiles));
    PRIMS_TRY(exclusive_sum(parts[1], counts));
    PRIMS_TRY(launch(tile_counts_scatter_kernel<Policy, K, V>, static_cast<unsigned>(num_tiles),
                     Policy::block_threads, 0, stream, pass_buffers, n, digit_of, static_cast<const size_t*>(counts),
                     num_tiles));
  }
  if (bucket_offsets != nullptr) {
    // Bucket d starts where tile 0's keys of digit d go.
    PRIMS_TRY(write_bucket_offsets(static_cast<const size_t*>(counts), num_tiles, bucket_offsets,
                                   1 << (end_bit - begin_bit), n, stream));
  }
  return buffers->finish(n, stream);
}

}  // namespace prims::detail::radix
