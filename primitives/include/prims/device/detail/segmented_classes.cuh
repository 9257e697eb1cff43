#pragma once
// The segmented radix sort's size classes (segmented_radix_sort_dispatch.cuh has the overview): the classes, the
// lists the classify kernel fills with each class's segments, and what every class's kernel shares.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail::segmented {

/// The size classes, in the order of their kernels.
enum SegmentClass : int {
  kTinySegments,
  kSmallSegments,
  kCountedSegments,
  kPacked16Segments,
  kPacked4Segments,
  kTileSegments,
  kLocalSegments,
  kLargeSegments,
  kOnesweepSegments,
  kSegmentClasses
};

/// Whether a class is ranked by counting (its list holds ranges, not ids): the tiny, small and counted classes.
__host__ __device__ constexpr bool is_counted_class(int c) { return c <= kCountedSegments; }

/// A counted segment as its list holds it: begin * 64 + size - 1, so the kernels sorting the counted classes (and
/// the special list of float segments) read no offsets (size is 1 to 64; begin is below 2^58, which no device's
/// memory reaches and the dispatcher checks).
inline constexpr int kRangeSizeBits = 6;
inline constexpr size_t kMaxRangeBegin = size_t{1} << (64 - kRangeSizeBits);

/// The ids of one class's segments (or, for the counted classes, their ranges), appended by the classify kernel,
/// and the counter its sorting kernel takes work from. Both counters are cleared before every sort.
struct SegmentList {
  /// Segment ids; null for the counted classes.
  unsigned* ids;
  /// Packed ranges (kRangeSizeBits); null for the other classes.
  unsigned long long* ranges;
  /// How many segments the classify kernel found (more than capacity only if segments overlap).
  unsigned* count;
  /// The next unit of work (a group of ids, or one id) to hand out.
  unsigned* next;
  /// Entries `ids` holds: no more segments of the class fit in n keys without overlapping.
  unsigned capacity;

  __device__ unsigned size() const { return *count < capacity ? *count : capacity; }
};

struct SegmentLists {
  SegmentList list[kSegmentClasses];
};

/// Where a segment lies: [begin, begin + size).
struct SegmentRange {
  size_t begin;
  size_t size;
};

/// Segment s of the offset arrays; an end at or before its begin is an empty segment.
template <class Offset>
__device__ SegmentRange segment_range(const Offset* begin_offsets, const Offset* end_offsets, size_t s) {
  const Offset begin = begin_offsets[s];
  const Offset end = end_offsets[s];
  return {static_cast<size_t>(begin), end > begin ? static_cast<size_t>(end) - static_cast<size_t>(begin) : 0};
}

/// What every sorting kernel of one call shares.
template <class K, class V, class Offset>
struct SegmentedSortArgs {
  PassBuffers<K, V> io;
  const Offset* begin_offsets;
  const Offset* end_offsets;
  Order order;
  int begin_bit;
  int end_bit;
};

/// Appends every non-empty segment to the list of its class. The block's warps count their members of each class
/// (ballots), and one thread a class takes room for the whole block's with one atomic: one counter a class is hit
/// once a block and round, not once a warp, so few same-address atomics queue on it.
inline constexpr int kClassifyThreads = 256;

template <class Policy, class Offset>
__global__ void __launch_bounds__(kClassifyThreads)
    segmented_classify_kernel(const Offset* __restrict__ begin_offsets, const Offset* __restrict__ end_offsets,
                              size_t num_segments, size_t local_max_items, SegmentLists lists,
                              const unsigned* __restrict__ skip) {
  constexpr int kWarps = kClassifyThreads / warp::kWarpThreads;
  /// Members of each class in each warp, then where each warp's members of the class go in the block's room.
  __shared__ unsigned warp_offsets[kSegmentClasses][kWarps];
  __shared__ unsigned block_base[kSegmentClasses];
  wait_for_prior_grids();
  allow_dependent_grids();
  if (skip != nullptr && *skip != 0) return;  // the whole sort is skipped: every list stays empty
  const int lane = threadIdx.x % warp::kWarpThreads;
  const int warp_id = threadIdx.x / warp::kWarpThreads;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  // Every thread of the block runs the same number of rounds, so whole warps meet at the ballots and barriers.
  for (size_t first = blockIdx.x * static_cast<size_t>(blockDim.x); first < num_segments; first += stride) {
    const size_t s = first + threadIdx.x;
    int segment_class = -1;
    SegmentRange range{0, 0};
    if (s < num_segments) {
      range = segment_range(begin_offsets, end_offsets, s);
      const size_t size = range.size;
      segment_class = size == 0                                                     ? -1
                      : size <= static_cast<size_t>(Policy::counting_tiny_items) ? kTinySegments
                      : size <= static_cast<size_t>(Policy::counting_small_items) ? kSmallSegments
                      : size <= static_cast<size_t>(Policy::counting_max_items)  ? kCountedSegments
                      : size <= static_cast<size_t>(Policy::packed16_slot_items) ? kPacked16Segments
                      : size <= static_cast<size_t>(Policy::packed4_slot_items)  ? kPacked4Segments
                      : size <= static_cast<size_t>(Policy::tile_items)          ? kTileSegments
                      : size <= local_max_items                                 ? kLocalSegments
                      : size > Policy::onesweep_min_items && size < kOnesweepPortionMaxItems ? kOnesweepSegments
                                                                                      : kLargeSegments;
    }
    unsigned own_members = 0;
#pragma unroll
    for (int c = 0; c < kSegmentClasses; ++c) {
      const unsigned members = __ballot_sync(kFullWarpMask, segment_class == c);
      if (segment_class == c) own_members = members;
      if (lane == 0) warp_offsets[c][warp_id] = static_cast<unsigned>(__popc(members));
    }
    __syncthreads();
    if (threadIdx.x < kSegmentClasses) {
      const int c = threadIdx.x;
      unsigned total = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const unsigned count = warp_offsets[c][w];
        warp_offsets[c][w] = total;
        total += count;
      }
      block_base[c] = total > 0 ? atomicAdd(lists.list[c].count, total) : 0u;
    }
    __syncthreads();
    if (segment_class >= 0) {
      const int c = segment_class;
      const unsigned position =
          block_base[c] + warp_offsets[c][warp_id] + static_cast<unsigned>(__popc(own_members & lanes_below_mask()));
      if (position < lists.list[c].capacity) {
        if (is_counted_class(c)) {
          lists.list[c].ranges[position] = static_cast<unsigned long long>(range.begin) << kRangeSizeBits |
                                           static_cast<unsigned long long>(range.size - 1);
        } else {
          lists.list[c].ids[position] = static_cast<unsigned>(s);
        }
      }
    }
    __syncthreads();  // the next round rewrites the counts
  }
}

}  // namespace prims::detail::segmented
