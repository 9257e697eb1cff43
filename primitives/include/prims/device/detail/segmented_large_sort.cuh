#pragma once
// The segmented sort's large class (segmented_radix_sort_dispatch.cuh, step 4): one block a segment, digit passes
// through global memory.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/block/scan.cuh"
#include "prims/device/detail/digit_histogram.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/segmented_classes.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::detail::segmented {

/// Copies a segment's items [begin, begin + size) from one array to another, in the block.
template <class T>
__device__ void copy_segment(const T* from, T* to, size_t begin, size_t size) {
  for (size_t i = threadIdx.x; i < size; i += blockDim.x) to[begin + i] = from[begin + i];
}

/// The large class's tile: SortTile with 64-bit positions.
template <class Policy, class K, class V>
using SegmentedLargeTile = radix::SortTile<Policy, K, V, size_t>;

/// Sorts the large class: a persistent block takes one segment at a time from the list (see the file comment).
/// Counts are flushed from shared memory every kLargeChunkItems keys, so a segment may hold 2^32 keys or more.
inline constexpr size_t kLargeChunkItems = size_t{1} << 30;

template <class Policy, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    segmented_large_kernel(SegmentedSortArgs<K, V, Offset> args, SegmentList list, K* alternate_keys,
                           V* alternate_values) {
  using Tile = SegmentedLargeTile<Policy, K, V>;
  constexpr int kTileItems = Tile::kTileItems;
  constexpr int kDigits = Tile::kDigits;
  constexpr int kMaxPasses = radix_passes(0, RadixKey<K>::kBits, Policy::radix_bits);
  static_assert(kDigits <= Tile::kThreads, "a thread per digit");
  static_assert(kLargeChunkItems % kTileItems == 0, "chunks are whole tiles");
  using DigitScan = block::Scan<size_t, Tile::kThreads>;
  __shared__ typename Tile::TempStorage storage;
  __shared__ typename DigitScan::TempStorage scan_storage;
  __shared__ unsigned counts[kMaxPasses][kDigits];
  __shared__ unsigned work;
  wait_for_prior_grids();
  allow_dependent_grids();

  const int num_passes = radix_passes(args.begin_bit, args.end_bit, Policy::radix_bits);
  const unsigned count = list.size();
  const int digit = threadIdx.x;
  // counts[pass][digit], one copy; the digits made for each key (the kernel is short of registers).
  using Counter = radix::PassDigitCounter<Policy, 1, K, kMaxPasses, false>;
  for (;;) {
    const unsigned index = take_work(list.next, work);
    if (index >= count) return;
    const SegmentRange segment = segment_range(args.begin_offsets, args.end_offsets, list.ids[index]);

    // 1. Thread d < kDigits: totals[p] = keys of the segment with digit d in pass p.
    size_t totals[kMaxPasses] = {};
    for (size_t chunk = 0; chunk < segment.size; chunk += kLargeChunkItems) {
      for (int i = threadIdx.x; i < kMaxPasses * kDigits; i += Tile::kThreads) counts[i / kDigits][i % kDigits] = 0;
      __syncthreads();
      const size_t chunk_end = segment.size - chunk < kLargeChunkItems ? segment.size : chunk + kLargeChunkItems;
      const Counter counter(args.order, args.begin_bit, args.end_bit, Counter::copy_of(&counts[0][0]));
      for (size_t tile = chunk; tile < chunk_end; tile += kTileItems) {
        const int valid = static_cast<int>(chunk_end - tile < kTileItems ? chunk_end - tile : kTileItems);
        K keys[Tile::kItems];
        Tile::load(args.io.keys_in + segment.begin + tile, valid, keys);
#pragma unroll
        for (int i = 0; i < Tile::kItems; ++i) {
          if (Tile::element(i) < valid) counter.count(keys[i]);
        }
      }
      __syncthreads();
      if (digit < kDigits) {
#pragma unroll
        for (int pass = 0; pass < kMaxPasses; ++pass) totals[pass] += counts[pass][digit];
      }
      __syncthreads();
    }

    // 2. The passes that reorder anything: in a pass whose keys all have one digit, every key stays put.
    unsigned needed = 0;
#pragma unroll
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (pass < num_passes && !radix::pass_is_trivial(digit < kDigits, totals[pass], segment.size)) {
        needed |= 1u << pass;
      }
    }
    const int num_needed = __popc(needed);

    // 3. Those passes, ping-ponging so that the last lands in the output.
    const radix::PingPong<K> keys(args.io.keys_in, args.io.keys_out, alternate_keys, num_needed);
    const radix::PingPong<V> values(args.io.values_in, args.io.values_out, alternate_values, num_needed);
    int step = 0;
#pragma unroll 1
    for (int pass = 0; pass < num_passes; ++pass) {
      if ((needed >> pass & 1u) == 0) continue;
      size_t total = 0;
#pragma unroll
      for (int p = 0; p < kMaxPasses; ++p) total = p == pass ? totals[p] : total;  // keeps totals in registers
      size_t running = segment.begin + DigitScan(scan_storage).exclusive_scan(total, Sum{}, size_t{0});
      const auto digit_of = pass_digit<K>(args.order, args.begin_bit, args.end_bit, Policy::radix_bits, pass);
      const K* keys_in = keys.source(step) + segment.begin;
      K* keys_out = keys.destination(step);
      const V* values_in = nullptr;
      V* values_out = nullptr;
      if constexpr (kHasValues<V>) {
        values_in = values.source(step) + segment.begin;
        values_out = values.destination(step);
      }
      for (size_t tile = 0; tile < segment.size; tile += kTileItems) {
        const size_t left = segment.size - tile;
        const V* tile_values = kHasValues<V> ? values_in + tile : nullptr;
        // Thread d: digit d's keys of this tile start where the previous tile's ended.
        auto first_of_digit = [&running](unsigned, unsigned count) {
          const size_t first = running;
          running += count;
          return first;
        };
        if (left >= static_cast<size_t>(kTileItems)) {
          Tile::template rank_and_scatter<true>(keys_in + tile, tile_values, kTileItems, digit_of, first_of_digit,
                                                keys_out, values_out, storage);
        } else {
          Tile::template rank_and_scatter<false>(keys_in + tile, tile_values, static_cast<int>(left), digit_of,
                                                 first_of_digit, keys_out, values_out, storage);
        }
      }
      ++step;
    }

    // 4. What did not end in the output: no pass at all (a copy unless in place), or an odd number in place.
    if (const K* from = keys.result_to_copy()) copy_segment(from, args.io.keys_out, segment.begin, segment.size);
    if constexpr (kHasValues<V>) {
      if (const V* from = values.result_to_copy()) copy_segment(from, args.io.values_out, segment.begin, segment.size);
    }
    __syncthreads();  // the work id, the counts and the scan storage are reused by the next segment
  }
}

}  // namespace prims::detail::segmented
