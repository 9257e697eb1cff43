#pragma once
// The segmented sort's counting engine (segmented_radix_sort_dispatch.cuh, step 2): groups of small segments of
// 8-byte keys that need their index, each key written straight to its rank in its segment.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "prims/device/detail/segmented_classes.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/shuffle.cuh"

namespace prims::detail::segmented {

/// Sorts groups of up to Policy::counting_capacity / MAX_ITEMS segments of at most MAX_ITEMS 8-byte keys that
/// need their index to sort stably (floats, bit ranges, pairs; the other counted segments go to
/// SegmentedWarpSort, whose network would compare 96-bit words here) by counting: the key at index i of a segment
/// goes to the number of the segment's keys that sort before it (smaller, or equal and at a lower index), so no
/// radix pass and no exchange are needed, and work follows the real keys (the segments are packed one after
/// another in shared memory, not in fixed slots). Each thread ranks quads: four consecutive words of one segment
/// (segments are padded to whole quads), so every word it reads from shared memory is compared with four keys.
template <class Policy, int MAX_ITEMS, class K, class V>
struct SegmentedCountingSort {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kMaxItems = MAX_ITEMS;
  static constexpr int kQuad = 4;
  static constexpr int kCapacity = Policy::counting_capacity;
  static constexpr int kGroup = kCapacity / kMaxItems;
  static constexpr int kQuads = kCapacity / kQuad / kThreads;
  static_assert(kMaxItems <= (1 << kRangeSizeBits), "sizes fit the list's ranges");
  static_assert(kMaxItems % kQuad == 0 && kCapacity % (kQuad * kThreads) == 0,
                "whole quads a segment, whole quads a thread");
  static_assert(kGroup <= kThreads, "a thread a segment of the group");
  static_assert(sizeof(K) == 8, "shorter keys are sorted by SegmentedWarpSort");
  using Bits = typename RadixKey<K>::Bits;
  /// What is compared: the sort bits, ties broken by index.
  using Word = Bits;
  /// Fills a segment's last quad: not below any real word, and never before a real one on a tie (its index is
  /// past the segment).
  static constexpr Word kPadding = ~Word{0};
  using SizeScan = block::Scan<unsigned, kThreads>;

  struct TempStorage {
    alignas(16) Word words[kCapacity];
    typename SizeScan::TempStorage scan;
    size_t begin[kGroup];
    unsigned start[kGroup];
    unsigned size[kGroup];
    unsigned packed;
  };

  /// Whether the word at index t of a segment sorts before the one at index i.
  __device__ static bool before(Word word_t, Word word_i, unsigned t, unsigned i) {
    return word_t < word_i || (word_t == word_i && t < i);
  }

  /// The group's segment that holds packed position p (its start is at or before p).
  __device__ static int segment_of(unsigned p, const TempStorage& storage) {
    int low = 0;
    int high = kGroup - 1;
    while (low < high) {  // the last start at or before p (unused slots at the end start at the packed total)
      const int middle = (low + high + 1) / 2;
      if (storage.start[middle] <= p) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    return low;
  }

  /// Sorts the group whose segments are set in `storage` (begin, size; unused slots have size 0).
  template <class Offset>
  __device__ static void sort_group(const SegmentedSortArgs<K, V, Offset>& args, TempStorage& storage) {
    {
      const unsigned size = threadIdx.x < kGroup ? storage.size[threadIdx.x] : 0u;
      unsigned packed = 0;
      const unsigned quad_words = (size + kQuad - 1) & ~(kQuad - 1u);
      const unsigned start = SizeScan(storage.scan).exclusive_scan(quad_words, Sum{}, 0u, packed);
      if (threadIdx.x < kGroup) storage.start[threadIdx.x] = start;
      if (threadIdx.x == 0) storage.packed = packed;
    }
    __syncthreads();
    const unsigned packed = storage.packed;
    // Every key is read (into registers, and as a word into shared memory) before any is written, so in place
    // works: all of a segment is in this block.
    K keys[kQuads][kQuad];
    int segments[kQuads];
    unsigned firsts[kQuads];  // the index in its segment of the quad's first word
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      const unsigned p = (threadIdx.x + q * kThreads) * kQuad;
      segments[q] = -1;
      if (p < packed) {
        const int j = segment_of(p, storage);
        segments[q] = j;
        firsts[q] = p - storage.start[j];
        Word words[kQuad];
#pragma unroll
        for (int r = 0; r < kQuad; ++r) {
          const unsigned index = firsts[q] + r;
          words[r] = kPadding;
          if (index < storage.size[j]) {
            keys[q][r] = args.io.keys_in[storage.begin[j] + index];
            words[r] = sort_bits(keys[q][r], args.order, args.begin_bit, args.end_bit);
          }
        }
        auto* quad = reinterpret_cast<ulonglong2*>(storage.words + p);
        quad[0] = make_ulonglong2(words[0], words[1]);
        quad[1] = make_ulonglong2(words[2], words[3]);
      }
    }
    __syncthreads();
    unsigned ranks[kQuads][kQuad];
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      if (segments[q] < 0) continue;
      const int j = segments[q];
      const unsigned start = storage.start[j];
      const auto* row = reinterpret_cast<const ulonglong2*>(storage.words + start);
      Word own[kQuad];
      {
        const ulonglong2 low = row[firsts[q] / 2];
        const ulonglong2 high = row[firsts[q] / 2 + 1];
        own[0] = low.x;
        own[1] = low.y;
        own[2] = high.x;
        own[3] = high.y;
      }
#pragma unroll
      for (int r = 0; r < kQuad; ++r) ranks[q][r] = 0;
      const unsigned quads = (storage.size[j] + kQuad - 1) / kQuad;
      for (unsigned t = 0; t < quads; ++t) {
        const ulonglong2 low = row[2 * t];
        const ulonglong2 high = row[2 * t + 1];
        const Word other[kQuad] = {low.x, low.y, high.x, high.y};
#pragma unroll
        for (int u = 0; u < kQuad; ++u) {
#pragma unroll
          for (int r = 0; r < kQuad; ++r) ranks[q][r] += before(other[u], own[r], kQuad * t + u, firsts[q] + r);
        }
      }
    }
    // f(q, r, the segment's begin) for each real key of this thread's quads.
    auto for_each_key = [&](auto f) {
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        if (segments[q] < 0) continue;
#pragma unroll
        for (int r = 0; r < kQuad; ++r) {
          if (firsts[q] + r < storage.size[segments[q]]) f(q, r, storage.begin[segments[q]]);
        }
      }
    };
    for_each_key([&](int q, int r, auto begin) { args.io.keys_out[begin + ranks[q][r]] = keys[q][r]; });
    if constexpr (kHasValues<V>) {
      V values[kQuads][kQuad];
      for_each_key([&](int q, int r, auto begin) { values[q][r] = args.io.values_in[begin + firsts[q] + r]; });
      __syncthreads();  // in place: every value of the group is read before any is written
      for_each_key([&](int q, int r, auto begin) { args.io.values_out[begin + ranks[q][r]] = values[q][r]; });
    }
  }
};

/// Sorts a counted class (or the special list): block b sorts groups b, b + gridDim.x, ... of
/// SegmentedCountingSort::kGroup ranges of the list (a grid of as many blocks as fit at once, or fewer; the work of
/// a group is small and even, so no counter hands it out).
template <class Policy, int MAX_ITEMS, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads, Policy::counting_blocks_per_sm)
    segmented_counting_kernel(SegmentedSortArgs<K, V, Offset> args, SegmentList list) {
  using Sort = SegmentedCountingSort<Policy, MAX_ITEMS, K, V>;
  __shared__ typename Sort::TempStorage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned count = list.size();
  for (size_t first = static_cast<size_t>(blockIdx.x) * Sort::kGroup; first < count;
       first += static_cast<size_t>(gridDim.x) * Sort::kGroup) {
    if (threadIdx.x < Sort::kGroup) {
      const size_t index = first + threadIdx.x;
      unsigned long long range = 0;
      unsigned size = 0;
      if (index < count) {
        range = list.ranges[index];
        size = static_cast<unsigned>(range & ((1u << kRangeSizeBits) - 1)) + 1;
      }
      storage.begin[threadIdx.x] = static_cast<size_t>(range >> kRangeSizeBits);
      storage.size[threadIdx.x] = size;
    }
    __syncthreads();
    Sort::sort_group(args, storage);
    __syncthreads();  // the next group rewrites the table and the words
  }
}

}  // namespace prims::detail::segmented
