#pragma once
// Kernels of prims::device::inclusive_scan and exclusive_scan.
//
// Both algorithms cut the input into tiles of block_threads * items_per_thread items and move each tile the
// same way (ScanTile, on BlockedTileIo of tile_io.cuh): coalesced warp-striped reads (16-byte vectors when the
// tile is full and the pointer aligned, single items otherwise), a transpose through shared memory to the blocked
// arrangement, a block scan,
// and the same path back out. The last tile is padded with copies of its first item instead of divergent tail
// code: padding only ever follows the valid items, so it never reaches a valid output.
//
// A scan is seeded (Maybe<T>): exclusive scans put init in front of everything; inclusive scans have nothing in
// front of the first tile, which is then scanned without a prefix.
//
// SinglePass (Merrill & Garland 2016, decoupled look-back; the agent is lookback.cuh's, shared with the
// selections): init_tile_status_kernel clears one status word per tile and the tile counter; single_pass_scan_kernel
// then takes tile ids from the counter in the order blocks start and scans each tile behind LookBackPrefix.
//
// Every kernel is launched with programmatic dependent launch (util/launch.cuh) and so starts with
// wait_for_prior_grids() before it touches global memory: the previous call may still be using the same
// temporary storage, and the input may still be being written.
//
// ReduceThenScan (three short steps over spans of whole tiles, one span per block of a grid that fills the GPU):
//   reduce_spans_kernel  (a) each block reduces its span into one total (the last span's total is never needed);
//   scan_totals_kernel   (b) one block scans the totals, inclusive, seeded, tile after tile with a carry;
//   scan_spans_kernel    (c) each block scans its span, seeded with the total of the spans before it.

#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "prims/block/scan.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/util/vector_load.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail::scan {

/// One tile's shape; its trip between global memory and blocked registers is BlockedTileIo's (tile_io.cuh).
template <class Policy, class T>
inline constexpr int kScanItemsPerThread =
    Policy::bytes_per_thread >= static_cast<int>(sizeof(T)) ? Policy::bytes_per_thread / static_cast<int>(sizeof(T))
                                                             : 1;

template <class Policy, class T>
struct ScanTile : BlockedTileIo<T, Policy::block_threads, kScanItemsPerThread<Policy, T>> {
  using Io = BlockedTileIo<T, Policy::block_threads, kScanItemsPerThread<Policy, T>>;
  static constexpr int block_threads = Io::block_threads;
  static constexpr int items_per_thread = Io::items_per_thread;
  static constexpr int tile_items = Io::tile_items;
  using BlockScan = block::Scan<T, block_threads>;

  struct Storage : Io::Storage {
    typename BlockScan::TempStorage scan;
  };

  __host__ __device__ static constexpr size_t count(size_t n) { return (n + tile_items - 1) / tile_items; }

  /// Items of tile `tile` of an n-item array that exist.
  __device__ static int valid_items(size_t tile, size_t n) {
    const size_t rest = n - tile * tile_items;
    return rest < static_cast<size_t>(tile_items) ? static_cast<int>(rest) : tile_items;
  }
};

/// Scans a tile's blocked items in place, inclusive or exclusive, with the prefix from `prefix_op` in front.
template <bool EXCLUSIVE, class BlockScan, class T, int ITEMS, class Op, class PrefixOp>
__device__ __forceinline__ void scan_with_prefix(BlockScan& scan, T (&items)[ITEMS], Op op, PrefixOp& prefix_op) {
  if constexpr (EXCLUSIVE) {
    scan.exclusive_scan_with_prefix(items, items, op, prefix_op);
  } else {
    scan.inclusive_scan_with_prefix(items, items, op, prefix_op);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// SinglePass

/// One block per tile, tiles taken in start order from the counter.
template <class Policy, bool EXCLUSIVE, class T, class Op, class Status>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    single_pass_scan_kernel(const T* in, T* out, size_t n, Op op, Maybe<T> seed, Status status,
                            unsigned* tile_counter) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const auto [tile, tile_begin, valid] = take_tile<Tile::tile_items>(tile_counter, n);

  T items[Tile::items_per_thread];
  Tile::template load<Policy::load_hint>(in + tile_begin, valid, items, storage);
  typename Tile::BlockScan scan(storage.scan);
  if (tile == 0 && !seed.valid) {
    T aggregate;
    scan.inclusive_scan(items, items, op, aggregate);
    if (threadIdx.x == 0) {
      status.publish(0, kTileInclusive, aggregate);
    }
  } else {
    LookBackPrefix<Policy, T, Op, Status> prefix_op{status, tile, op, seed};
    scan_with_prefix<EXCLUSIVE>(scan, items, op, prefix_op);
  }
  Tile::template store<Policy::store_hint>(out + tile_begin, valid, items, storage);
}

// ---------------------------------------------------------------------------------------------------------------
// ReduceThenScan

/// Contiguous runs of tiles, one per block: span b is tiles [b * tiles_per_span, (b + 1) * tiles_per_span),
/// the last one cut at num_tiles.
struct Spans {
  size_t num_tiles;
  size_t tiles_per_span;
  size_t count;

  __host__ __device__ size_t first_tile(size_t span) const { return span * tiles_per_span; }
  __host__ __device__ size_t end_tile(size_t span) const {
    return span + 1 < count ? (span + 1) * tiles_per_span : num_tiles;
  }
};

/// The block-scan prefix callback of a block walking tiles in order: hands out the running carry and adds each
/// tile's total to it. Only warp 0's copy is ever called, so only warp 0's copy stays current.
template <class T, class Op>
struct RunningPrefix {
  T carry;
  Op op;
  __device__ T operator()(const T& aggregate) {
    const T prefix = carry;
    carry = op(carry, aggregate);
    return prefix;
  }
};

/// Scans tiles [first_tile, end_tile) of in[0, n) into out, in order, behind `carry` (absent only at the very
/// start of an inclusive scan, whose first tile then has nothing in front of it).
template <class Policy, bool EXCLUSIVE, class T, class Op>
__device__ void scan_tiles_in_order(const T* in, T* out, size_t n, size_t first_tile, size_t end_tile, Op op,
                                    Maybe<T> carry, typename ScanTile<Policy, T>::Storage& storage) {
  using Tile = ScanTile<Policy, T>;
  T items[Tile::items_per_thread];
  RunningPrefix<T, Op> prefix_op{carry.value, op};
  for (size_t tile = first_tile; tile < end_tile; ++tile) {
    const size_t tile_begin = tile * Tile::tile_items;
    const int valid = Tile::valid_items(tile, n);
    Tile::load(in + tile_begin, valid, items, storage);
    typename Tile::BlockScan scan(storage.scan);
    if (carry.valid) {
      scan_with_prefix<EXCLUSIVE>(scan, items, op, prefix_op);
    } else {
      scan.inclusive_scan(items, items, op, prefix_op.carry);
      carry.valid = true;
    }
    Tile::store(out + tile_begin, valid, items, storage);
    __syncthreads();  // the next tile reuses the block scan's storage
  }
}

/// (a) Block b reduces the tiles of span b, in order, into totals[b].
template <class Policy, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    reduce_spans_kernel(const T* in, size_t n, Spans spans, T* totals, Op op) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  T items[Tile::items_per_thread];
  T total;
  const size_t first_tile = spans.first_tile(blockIdx.x);
  for (size_t tile = first_tile; tile < spans.end_tile(blockIdx.x); ++tile) {
    Tile::load(in + tile * Tile::tile_items, Tile::valid_items(tile, n), items, storage);
    const T tile_total = typename Tile::BlockScan(storage.scan).reduce(items, op);
    total = tile == first_tile ? tile_total : op(total, tile_total);
    __syncthreads();  // the next tile reuses the block scan's storage
  }
  if (threadIdx.x == 0) {
    totals[blockIdx.x] = total;
  }
}

/// (b) One block: totals[b] becomes seed op totals[0] op ... op totals[b] (inclusive), so that span b + 1
/// starts behind totals[b].
template <class Policy, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    scan_totals_kernel(T* totals, size_t count, Op op, Maybe<T> seed) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  scan_tiles_in_order<Policy, false>(totals, totals, count, 0, Tile::count(count), op, seed, storage);
}

/// (c) Block b scans span b behind the scanned total of the spans before it (span 0: behind the seed).
template <class Policy, bool EXCLUSIVE, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    scan_spans_kernel(const T* in, T* out, size_t n, Spans spans, const T* scanned_totals, Op op, Maybe<T> seed) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const Maybe<T> carry = blockIdx.x == 0 ? seed : Maybe<T>{scanned_totals[blockIdx.x - 1], true};
  scan_tiles_in_order<Policy, EXCLUSIVE>(in, out, n, spans.first_tile(blockIdx.x), spans.end_tile(blockIdx.x), op,
                                         carry, storage);
}

}  // namespace prims::detail::scan
