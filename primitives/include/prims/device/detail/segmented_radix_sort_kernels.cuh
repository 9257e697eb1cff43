#pragma once
// The segmented radix sort's policy, kernels and dispatcher (device/segmented_radix_sort.cuh is the API).
//
// Every segment up to 2^15 keys (2^14 with values) is sorted by one block or part of a warp, in one of seven size
// classes; bigger ones by Onesweep passes shared by all of them (segmented_onesweep.cuh). No host synchronization is
// needed and the offsets never leave the device. T is the policy's tile (256 threads x 16 keys of up to 4 bytes:
// 4096; 2048 for 8-byte items, 1024 for 16-byte values).
//   1. segmented_classify_kernel   one thread a segment reads its two offsets and appends the segment's id to
//      the list of its class (one atomic a class for each block and round; empty segments go nowhere):
//        tiny      1 .. 16 keys      a group of 4 lanes a segment (8 segments a warp)
//        counted   .. 64 keys        a group of 16 lanes a segment (2 a warp)
//        packed16  .. T/16 keys      a whole warp a segment (step 2), else packed 16 to a tile
//        packed4   .. T/4 keys       packed 4 to a tile
//        tile      .. T keys         one to a tile
//        local     .. 4T keys        one to a tile of 1024 threads (4T)
//        large     more than 4T keys, up to onesweep_min_items (2^15), or 2^30 and more
//        onesweep  more than onesweep_min_items and fewer than 2^30 keys
//   2. segmented_warp_sort_kernel, one launch for each of the tiny and counted classes, whose lists hold each
//      segment's begin and size (not its id), so no offsets are read. Each group of lanes takes a segment and
//      sorts a word a key with a bitonic network in registers (warp/bitonic_sort.cuh): the key's sort bits alone
//      for keys without values sorted on every bit (the word is the key; float segments holding -0.0 or a NaN are
//      listed and sorted after, as below), else the sort bits above the key's index (stable; the key and value
//      are read again from that index). No shared memory, no barrier.
//      8-byte keys that need their index go to segmented_counting_kernel instead: a block packs the words of a
//      group of segments in shared memory and writes each key straight to the number of keys of its segment that
//      sort before it (smaller, or equal and earlier), each thread ranking a quad of one segment. The packed16
//      class goes to segmented_warp_sort_kernel too, 32 lanes a segment, where its words are plain integer keys
//      or keys of up to 4 bytes with their index (its list holds ids: the group reads the offsets).
//   3. segmented_tile_kernel, one launch for each of the next four classes. A block takes the next group of
//      segments from its list and gives each a slot of SLOT_ITEMS tile elements. The whole tile
//      is sorted in registers and shared memory: for each 8-bit digit from begin_bit to end_bit, block::RadixRank
//      ranks the tile (slot padding takes the largest digit) and the keys are exchanged through shared memory into
//      rank order, their origins in the tile moving with them in shared memory only; a last pass by slot number
//      brings each slot's keys together again (LSD: the slot is the most significant digit), real keys first.
//      Keys are read once and written once; values are read once, by origin, at the end, and written once.
//      Nothing goes through the temporary storage.
//   4. segmented_large_kernel   the large class, one segment at a time per block, taken from its list with an
//      atomic counter. One read of the segment counts the digits of every pass (a permutation does not change
//      them); passes in which every key has the same digit are skipped. Each remaining pass walks the segment tile
//      by tile, in order: rank (block::RadixRank) and scatter (SortTile of radix_sort_common.cuh) at per-digit
//      offsets carried from tile to tile, so the pass is stable. Passes ping-pong between keys_out and a buffer in
//      the temporary storage (PingPong, per segment, for the passes it needs), so the last lands in keys_out; in
//      place with an odd number of passes, the block copies its segment back.
//   5. segmented_onesweep_sort   the onesweep class: every pass is one persistent launch over all tiles of all
//      its segments, each tile ranked and scattered by the Onesweep pass's tile code with look-back inside its own
//      segment, so a few big segments use the whole GPU rather than one SM each.
// Bytes moved: counted, packed, tile and local classes read and write each key (and value) once, plus 8 or 16 bytes of
// offsets and 4 (8 for counted segments) bytes of list a segment. A large segment costs one read of its keys for
// the histogram, then per non-trivial pass one read and one write of keys and values, plus one copy when in place
// with an odd number of passes.
// Elements outside every segment are never read or written, and the temporary storage is never assumed zeroed.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "prims/block/radix_rank.cuh"
#include "prims/block/scan.cuh"
#include "prims/device/detail/digit_histogram.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/segmented_onesweep.cuh"
#include "prims/device/detail/tile_io.cuh"
#include "prims/device/detail/tile_sort.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/warp/bitonic_sort.cuh"

namespace prims::detail {

/// The size classes, in the order of their kernels.
enum SegmentClass : int {
  kTinySegments,
  kCountedSegments,
  kPacked16Segments,
  kPacked4Segments,
  kTileSegments,
  kLocalSegments,
  kLargeSegments,
  kOnesweepSegments,
  kSegmentClasses
};

/// Whether a class is ranked by counting (its list holds ranges, not ids).
__host__ __device__ constexpr bool is_counted_class(int c) { return c == kTinySegments || c == kCountedSegments; }

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
                              size_t num_segments, size_t local_max_items, SegmentLists lists) {
  constexpr int kWarps = kClassifyThreads / warp::kWarpThreads;
  /// Members of each class in each warp, then where each warp's members of the class go in the block's room.
  __shared__ unsigned warp_offsets[kSegmentClasses][kWarps];
  __shared__ unsigned block_base[kSegmentClasses];
  wait_for_prior_grids();
  allow_dependent_grids();
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
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      if (segments[q] < 0) continue;
#pragma unroll
      for (int r = 0; r < kQuad; ++r) {
        if (firsts[q] + r < storage.size[segments[q]]) {
          args.io.keys_out[storage.begin[segments[q]] + ranks[q][r]] = keys[q][r];
        }
      }
    }
    if constexpr (kHasValues<V>) {
      V values[kQuads][kQuad];
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        if (segments[q] < 0) continue;
#pragma unroll
        for (int r = 0; r < kQuad; ++r) {
          if (firsts[q] + r < storage.size[segments[q]]) {
            values[q][r] = args.io.values_in[storage.begin[segments[q]] + firsts[q] + r];
          }
        }
      }
      __syncthreads();  // in place: every value of the group is read before any is written
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        if (segments[q] < 0) continue;
#pragma unroll
        for (int r = 0; r < kQuad; ++r) {
          if (firsts[q] + r < storage.size[segments[q]]) {
            args.io.values_out[storage.begin[segments[q]] + ranks[q][r]] = values[q][r];
          }
        }
      }
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

/// Sorts segments of up to LANES * ITEMS keys (a counted class's ranges, or the packed16 class's ids), each by a
/// group of LANES lanes of a warp with warp::bitonic_sort in registers: no shared memory and no block barrier, so
/// warps never wait on each other. Lane l of a group holds positions l * ITEMS .. l * ITEMS + ITEMS - 1 before
/// and after the sort; padding words sort last. What is sorted:
///   PLAIN (integer or float keys, no values, every bit sorted): the sort bits alone, compared and exchanged
///     with min and max. They determine the key, so keys that tie are identical and the key is rebuilt from its
///     word; for floats only if the segment has no -0.0 and no NaN (ordered bits shared with +0.0 and the other
///     NaNs): a segment with one is appended to the `special` list instead and sorted after by index words.
///   otherwise (keys of up to 4 bytes): the sort bits above the key's index in its segment, one 64-bit word, so no
///     two words tie and the order is stable. The word of sorted position p names the index of its key, which is
///     read again from there (the warp has just read it: a cache hit), with its value, and written to p.
template <class Policy, int LANES, int ITEMS, bool PLAIN, class K, class V>
struct SegmentedWarpSort {
  static constexpr int kMaxItems = LANES * ITEMS;
  static constexpr int kGroups = warp::kWarpThreads / LANES;
  static_assert(!(PLAIN && std::is_floating_point_v<K>) || kMaxItems <= (1 << kRangeSizeBits),
                "the special list's ranges hold the sizes");
  static_assert(!PLAIN || !kHasValues<V>, "plain words rebuild keys, not values");
  static_assert(PLAIN || sizeof(K) <= 4, "8-byte keys with an index are sorted by SegmentedCountingSort");
  using Bits = typename RadixKey<K>::Bits;
  using Word = std::conditional_t<PLAIN, Bits, std::uint64_t>;

  __device__ static Word word_of(Bits bits, unsigned index) {
    if constexpr (PLAIN) {
      return bits;
    } else {
      return static_cast<std::uint64_t>(bits) << 32 | index;
    }
  }
  /// Not below any real word: all bits set (an index past any segment).
  __device__ static Word padding() { return word_of(static_cast<Bits>(~Bits{0}), ~0u); }
  /// The key whose plain word (sort bits over the whole key) is `word`: undoes the order's complement and
  /// RadixKey<K>::ordered_bits (for floats: a key that is not special).
  __device__ static K key_of(Bits word, Order order) {
    return RadixKey<K>::from_plain_ordered_bits(order == Order::Descending ? static_cast<Bits>(~word) : word);
  }

  /// Sorts the segment [begin, begin + size) with the other lanes of the group (member: this lane's place in it);
  /// size 0 for a group without a segment. All 32 lanes of the warp call it together.
  template <class Offset>
  __device__ static void sort_segment(const SegmentedSortArgs<K, V, Offset>& args, size_t begin, unsigned size,
                                      int member, const SegmentList& special) {
    Word words[ITEMS];
    [[maybe_unused]] bool special_key = false;
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
      const unsigned index = member * ITEMS + r;
      words[r] = padding();
      if (index < size) {
        const K key = args.io.keys_in[begin + index];
        words[r] = word_of(sort_bits(key, args.order, args.begin_bit, args.end_bit), index);
        if constexpr (PLAIN && std::is_floating_point_v<K>) special_key |= RadixKey<K>::is_special(key);
      }
    }
    warp::bitonic_sort<LANES>(words, member);
    if constexpr (PLAIN) {
      unsigned written = size;
      if constexpr (std::is_floating_point_v<K>) {
        const int lane = threadIdx.x % warp::kWarpThreads;
        const unsigned group_lanes =
            LANES == warp::kWarpThreads ? kFullWarpMask : ((1u << LANES) - 1) << (lane - member);
        if ((__ballot_sync(kFullWarpMask, special_key) & group_lanes) != 0) {
          written = 0;  // the whole group leaves the segment to the special list's sort
          if (member == 0) {
            const unsigned position = atomicAdd(special.count, 1u);
            if (position < special.capacity) {
              special.ranges[position] = static_cast<unsigned long long>(begin) << kRangeSizeBits | (size - 1);
            }
          }
        }
      }
      __syncwarp();  // in place: every key of the group's segments is read before any is written
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        const unsigned position = member * ITEMS + r;
        if (position < written) args.io.keys_out[begin + position] = key_of(words[r], args.order);
      }
    } else {
      K keys[ITEMS];
      [[maybe_unused]] V values[kHasValues<V> ? ITEMS : 1];
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        if (member * ITEMS + r < size) {
          const size_t origin = begin + static_cast<unsigned>(words[r]);  // the index, below the sort bits
          keys[r] = args.io.keys_in[origin];
          if constexpr (kHasValues<V>) values[r] = args.io.values_in[origin];
        }
      }
      __syncwarp();  // in place: every key and value of the group's segments is read before any is written
#pragma unroll
      for (int r = 0; r < ITEMS; ++r) {
        const unsigned position = member * ITEMS + r;
        if (position < size) {
          args.io.keys_out[begin + position] = keys[r];
          if constexpr (kHasValues<V>) args.io.values_out[begin + position] = values[r];
        }
      }
    }
  }
};

/// Sorts a class by warps: warp w sorts entries w * kGroups, (w + warps) * kGroups, ... of the class's list
/// (ranges, or with IDS segment ids: the packed16 class), a group of LANES lanes each (the grid is one wave; the
/// work of a segment is small and even). Float segments that plain words cannot sort go to `special` (see
/// SegmentedWarpSort).
template <class Policy, int LANES, int ITEMS, bool PLAIN, bool IDS, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads)
    segmented_warp_sort_kernel(SegmentedSortArgs<K, V, Offset> args, SegmentList list, SegmentList special) {
  using Sort = SegmentedWarpSort<Policy, LANES, ITEMS, PLAIN, K, V>;
  wait_for_prior_grids();
  allow_dependent_grids();
  const int lane = threadIdx.x % warp::kWarpThreads;
  const size_t warp_id = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp::kWarpThreads;
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / warp::kWarpThreads;
  const unsigned count = list.size();
  // The loop is the same for every lane of a warp, so whole warps meet in the network's shuffles.
  for (size_t first = warp_id * Sort::kGroups; first < count; first += warps * Sort::kGroups) {
    const size_t index = first + lane / LANES;
    size_t begin = 0;
    unsigned size = 0;
    if (index < count) {
      if constexpr (IDS) {
        const SegmentRange range = segment_range(args.begin_offsets, args.end_offsets, list.ids[index]);
        begin = range.begin;
        size = static_cast<unsigned>(range.size);
      } else {
        const unsigned long long range = list.ranges[index];
        begin = static_cast<size_t>(range >> kRangeSizeBits);
        size = static_cast<unsigned>(range & ((1u << kRangeSizeBits) - 1)) + 1;
      }
    }
    Sort::sort_segment(args, begin, size, lane % LANES, special);
  }
}

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

/// Copies a segment's items [begin, begin + size) from one array to another, in the block.
template <class T>
__device__ void copy_segment(const T* from, T* to, size_t begin, size_t size) {
  for (size_t i = threadIdx.x; i < size; i += blockDim.x) to[begin + i] = from[begin + i];
}

/// The large class's tile: SortTile with 64-bit positions.
template <class Policy, class K, class V>
using SegmentedLargeTile = SortTile<Policy, K, V, size_t>;

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
  using Counter = PassDigitCounter<Policy, 1, K, kMaxPasses, false>;
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
      if (pass < num_passes && !pass_is_trivial(digit < kDigits, totals[pass], segment.size)) {
        needed |= 1u << pass;
      }
    }
    const int num_needed = __popc(needed);

    // 3. Those passes, ping-ponging so that the last lands in the output.
    const PingPong<K> keys(args.io.keys_in, args.io.keys_out, alternate_keys, num_needed);
    const PingPong<V> values(args.io.values_in, args.io.values_out, alternate_values, num_needed);
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

/// Calls `passes(tiles)` with the table's Onesweep policy the segmented Onesweep passes take over n keys in
/// num_segments segments: Onesweep's large tiles for large inputs of large segments, where they differ from its
/// default ones (storage sized for the default tiles holds the fewer large ones).
template <class Table, class K, class V, class Policy, class Passes>
cudaError_t with_segmented_onesweep_tiles(size_t n, size_t num_segments, Passes&& passes) {
  using DefaultTiles = typename Table::template Onesweep<K, V>;
  using Large = typename Table::template OnesweepLarge<K, V>;
  using LargeTiles = std::conditional_t<Large::items_per_thread != DefaultTiles::items_per_thread, Large, DefaultTiles>;
  if (n >= Large::min_items && num_segments > 0 && n / num_segments >= Policy::onesweep_large_tiles_mean_items) {
    return passes(LargeTiles{});
  }
  return passes(DefaultTiles{});
}

/// The segmented sort under a table (see the file comment). `Policy` is a template argument so tuning programs can
/// sweep it.
template <class Table, class K, class V, class Offset, class Policy = typename Table::template SegmentedSort<K, V>>
cudaError_t segmented_radix_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n,
                                 size_t num_segments, const Offset* begin_offsets, const Offset* end_offsets,
                                 Order order, int begin_bit, int end_bit, cudaStream_t stream) {
  static_assert(kIsRadixKey<K>, "radix-sort keys are 1 to 8-byte integers, float or double");
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 16,
                "radix-sort values are trivially copyable types of up to 16 bytes");
  static_assert(std::is_integral_v<Offset> && !std::is_same_v<Offset, bool>, "segment offsets are integers");
  if (!valid_bit_range<K>(begin_bit, end_bit)) {
    return invalid_value("segmented_radix_sort: bit range [%d, %d) is not inside a %d-bit key", begin_bit, end_bit,
                         RadixKey<K>::kBits);
  }
  if (num_segments > UINT_MAX) {
    return invalid_value("segmented_radix_sort: %zu segments is over the limit of %u", num_segments, UINT_MAX);
  }
  if (n > kMaxRangeBegin) {
    return invalid_value("segmented_radix_sort: n = %zu is over the limit of %zu items", n,
                         static_cast<size_t>(kMaxRangeBegin));
  }
  // The most segments of each class that n keys can hold without overlapping: the class's smallest size divides n.
  // Large segments may be as small as the tile class's largest plus one: where the device gives a block too little
  // shared memory for the local class, its segments are large ones (segmented_local_class_fits).
  constexpr size_t kSmallestSize[kSegmentClasses] = {1, Policy::counting_tiny_items + 1, Policy::counting_max_items + 1,
                                                     Policy::packed16_slot_items + 1, Policy::packed4_slot_items + 1,
                                                     Policy::tile_items + 1, Policy::tile_items + 1,
                                                     Policy::onesweep_min_items + 1};
  unsigned capacity[kSegmentClasses];
  for (int c = 0; c < kSegmentClasses; ++c) {
    capacity[c] = static_cast<unsigned>(std::min(num_segments, n / kSmallestSize[c]));
  }
  // Only large segments pass through the alternate buffers.
  const size_t alternate_items = capacity[kLargeSegments] > 0 || capacity[kOnesweepSegments] > 0 ? n : 0;
  using OnesweepStorage = SegmentedOnesweepStorage<K, V, typename Table::template Onesweep<K, V>>;
  // Float keys without values: small segments holding -0.0 or a NaN, listed by the plain warp sort (every counted
  // segment at most).
  constexpr bool kFloatKeysOnly = std::is_floating_point_v<K> && !kHasValues<V>;
  const unsigned special_capacity = kFloatKeysOnly ? capacity[kTinySegments] : 0u;
  // The parts of the temporary storage, in order: the counters are a count and a next for each class and for the
  // special list; a class's list is its ids (ranges for the counted classes).
  enum Part : int {
    kAlternateKeysPart,
    kAlternateValuesPart,
    kCountersPart,
    kFirstListPart,
    kSpecialPart = kFirstListPart + kSegmentClasses,
    kOnesweepPart,
    kParts = kOnesweepPart + OnesweepStorage::kParts
  };
  size_t sizes[kParts] = {};
  sizes[kAlternateKeysPart] = alternate_bytes<K>(alternate_items);
  sizes[kAlternateValuesPart] = alternate_bytes<V>(alternate_items);
  sizes[kCountersPart] = 2 * (kSegmentClasses + 1) * sizeof(unsigned);
  for (int c = 0; c < kSegmentClasses; ++c) {
    sizes[kFirstListPart + c] = capacity[c] * (is_counted_class(c) ? sizeof(unsigned long long) : sizeof(unsigned));
  }
  sizes[kSpecialPart] = special_capacity * sizeof(unsigned long long);
  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  size_t onesweep_sizes[OnesweepStorage::kParts];
  OnesweepStorage::sizes(n, capacity[kOnesweepSegments], num_passes, onesweep_sizes);
  std::copy(onesweep_sizes, onesweep_sizes + OnesweepStorage::kParts, sizes + kOnesweepPart);
  void* parts[kParts];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr || n == 0 || num_segments == 0) return cudaSuccess;

  K* const alternate_keys = static_cast<K*>(parts[kAlternateKeysPart]);
  V* const alternate_values = static_cast<V*>(parts[kAlternateValuesPart]);
  unsigned* counters = static_cast<unsigned*>(parts[kCountersPart]);
  SegmentLists lists{};
  for (int c = 0; c < kSegmentClasses; ++c) {
    void* list = parts[kFirstListPart + c];
    unsigned* ids = is_counted_class(c) ? nullptr : static_cast<unsigned*>(list);
    auto* ranges = is_counted_class(c) ? static_cast<unsigned long long*>(list) : nullptr;
    lists.list[c] = {ids, ranges, counters + c, counters + kSegmentClasses + c, capacity[c]};
  }
  const SegmentList special{nullptr, static_cast<unsigned long long*>(parts[kSpecialPart]),
                            counters + 2 * kSegmentClasses, counters + 2 * kSegmentClasses + 1, special_capacity};
  PRIMS_TRY(cudaMemsetAsync(counters, 0, sizes[kCountersPart], stream));
  bool local_class = false;
  PRIMS_TRY((segmented_local_class_fits<Table, K, V, Policy>(local_class)));
  const size_t local_max_items = local_class ? Policy::local_tile_items : Policy::tile_items;
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  const size_t classify_blocks =
      std::min((num_segments + kClassifyThreads - 1) / kClassifyThreads, static_cast<size_t>(multiprocessors) * 8);
  PRIMS_TRY(launch(segmented_classify_kernel<Policy, Offset>, static_cast<unsigned>(classify_blocks),
                   kClassifyThreads, 0, stream, begin_offsets, end_offsets, num_segments, local_max_items, lists));

  const SegmentedSortArgs<K, V, Offset> args{io, begin_offsets, end_offsets, order, begin_bit, end_bit};
  // Each class's kernel, on a persistent grid of no more blocks than the class's groups can keep busy.
  auto sort_list = [&](auto kernel, size_t segments_a_block, const SegmentList& list, auto... more) -> cudaError_t {
    if (list.capacity == 0) return cudaSuccess;
    return launch_persistent(kernel, (list.capacity + segments_a_block - 1) / segments_a_block,
                             Policy::block_threads, 0, stream, args, list, more...);
  };
  constexpr int kTiny = Policy::counting_tiny_items;
  constexpr int kCounted = Policy::counting_max_items;
  constexpr int kPacked16 = Policy::packed16_slot_items;
  constexpr int kPacked4 = Policy::packed4_slot_items;
  constexpr int kTile = Policy::tile_items;
  // A packed, tile or local class: blocks of Shape, slots of SLOT_ITEMS keys.
  auto sort_tiles = [&](auto shape, auto slot_items, SegmentClass c) -> cudaError_t {
    using Shape = decltype(shape);
    constexpr int kSlotItems = decltype(slot_items)::value;
    using Tile = TileSort<Policy, Shape, kSlotItems, K, V>;
    static_assert(fits_shared_memory<Table>(sizeof(typename Tile::TempStorage)),
                  "a tile class's block fits the table's shared memory");
    const SegmentList& list = lists.list[c];
    if (list.capacity == 0) return cudaSuccess;
    return launch_persistent(segmented_tile_kernel<Policy, Shape, kSlotItems, K, V, Offset>,
                             (list.capacity + Tile::kSlots - 1) / Tile::kSlots, Shape::threads,
                             sizeof(typename Tile::TempStorage), stream, args, list);
  };
  // The classes of up to 256 keys go to warps (SegmentedWarpSort) where their words allow: plain words where they
  // rebuild the keys (floats only in the counted classes, whose sizes the special list holds), else words holding
  // the index for keys of up to 4 bytes; otherwise `otherwise()` sorts the list (8-byte keys that need their
  // index: by counting, or in a packed tile). Float segments that plain words cannot sort are listed by the plain
  // sort and sorted after it, at the counted class's size.
  constexpr int kWarps = Policy::block_threads / warp::kWarpThreads;
  const bool plain = !kHasValues<V> && begin_bit == 0 && end_bit == RadixKey<K>::kBits;
  auto sort_by_warps = [&](auto lanes, auto max_items, auto ids, const SegmentList& list, bool plain_words,
                           auto otherwise) -> cudaError_t {
    constexpr int kLanes = decltype(lanes)::value;
    constexpr int kItems = decltype(max_items)::value / kLanes;
    constexpr bool kIds = decltype(ids)::value;
    constexpr size_t kSegmentsABlock = kWarps * (warp::kWarpThreads / kLanes);
    constexpr bool kPlainKeys = std::is_integral_v<K> || (std::is_floating_point_v<K> && !kIds &&
                                                          decltype(max_items)::value <= (1 << kRangeSizeBits));
    if constexpr (!kHasValues<V> && kPlainKeys) {
      if (plain_words) {
        return sort_list(segmented_warp_sort_kernel<Policy, kLanes, kItems, true, kIds, K, V, Offset>,
                         kSegmentsABlock, list, special);
      }
    }
    if constexpr (sizeof(K) <= 4) {
      return sort_list(segmented_warp_sort_kernel<Policy, kLanes, kItems, false, kIds, K, V, Offset>,
                       kSegmentsABlock, list, SegmentList{});
    } else {
      return otherwise();
    }
  };
  // A generic lambda (an empty pack), so the counting kernel is instantiated only where it is called: 8-byte keys.
  auto by_counting = [&](auto max_items, const SegmentList& list) {
    constexpr int kMaxItems = decltype(max_items)::value;
    return [&, list](auto...) {
      return sort_list(segmented_counting_kernel<Policy, kMaxItems, K, V, Offset>,
                       Policy::counting_capacity / kMaxItems, list);
    };
  };
  using TinyLanes = std::integral_constant<int, Policy::warp_sort_tiny_lanes>;
  using CountedLanes = std::integral_constant<int, Policy::warp_sort_lanes>;
  using TinyItems = std::integral_constant<int, kTiny>;
  using CountedItems = std::integral_constant<int, kCounted>;
  using Ranges = std::false_type;
  const SegmentList& tiny = lists.list[kTinySegments];
  const SegmentList& counted = lists.list[kCountedSegments];
  PRIMS_TRY(sort_by_warps(TinyLanes{}, TinyItems{}, Ranges{}, tiny, plain, by_counting(TinyItems{}, tiny)));
  PRIMS_TRY(sort_by_warps(CountedLanes{}, CountedItems{}, Ranges{}, counted, plain,
                          by_counting(CountedItems{}, counted)));
  if (kFloatKeysOnly && plain) {
    PRIMS_TRY(sort_by_warps(CountedLanes{}, CountedItems{}, Ranges{}, special, false,
                            by_counting(CountedItems{}, special)));
  }
  using Tiles = typename Policy::tile_shape;
  using Packed16Slots = std::integral_constant<int, kPacked16>;
  PRIMS_TRY(sort_by_warps(std::integral_constant<int, warp::kWarpThreads>{}, Packed16Slots{}, std::true_type{},
                          lists.list[kPacked16Segments], plain,
                          [&] { return sort_tiles(Tiles{}, Packed16Slots{}, kPacked16Segments); }));
  PRIMS_TRY(sort_tiles(Tiles{}, std::integral_constant<int, kPacked4>{}, kPacked4Segments));
  PRIMS_TRY(sort_tiles(Tiles{}, std::integral_constant<int, kTile>{}, kTileSegments));
  if constexpr (fits_shared_memory<Table>(sizeof(typename SegmentedLocalTile<K, V, Policy>::TempStorage))) {
    if (local_class) {
      PRIMS_TRY(sort_tiles(typename Policy::local_shape{}, std::integral_constant<int, Policy::local_tile_items>{},
                           kLocalSegments));
    }
  }
  void* onesweep_parts[OnesweepStorage::kParts];
  std::copy(parts + kOnesweepPart, parts + kParts, onesweep_parts);
  const SegmentList& onesweep_list = lists.list[kOnesweepSegments];
  const SegmentedOnesweepState onesweep_state = OnesweepStorage::state(
      onesweep_parts, n, capacity[kOnesweepSegments], num_passes, onesweep_list.ids, onesweep_list.count);
  PRIMS_TRY((with_segmented_onesweep_tiles<Table, K, V, Policy>(n, num_segments, [&](auto tiles) {
    return segmented_onesweep_sort<Table, K, V, Offset, decltype(tiles)>(
        onesweep_state, io, begin_offsets, end_offsets, order, begin_bit, end_bit, alternate_keys, alternate_values,
        stream);
  })));
  if (capacity[kLargeSegments] == 0) return cudaSuccess;
  return launch_persistent(segmented_large_kernel<Policy, K, V, Offset>, capacity[kLargeSegments],
                           Policy::block_threads, 0, stream, args, lists.list[kLargeSegments], alternate_keys,
                           alternate_values);
}

}  // namespace prims::detail
