#pragma once
// The segmented radix sort's dispatcher (device/segmented_radix_sort.cuh is the API); each size class's engine has
// a header of its own: segmented_classes.cuh (the classes and their lists), segmented_warp_sort.cuh,
// segmented_counting_sort.cuh, segmented_tile_sort.cuh, segmented_large_sort.cuh, segmented_onesweep.cuh.
//
// Every segment up to 2^15 keys (2^14 with values) is sorted by one block or part of a warp, in one of eight size
// classes; bigger ones by Onesweep passes shared by all of them (segmented_onesweep.cuh). No host synchronization is
// needed and the offsets never leave the device. T is the policy's tile (256 threads x 16 keys of up to 4 bytes:
// 4096; 2048 for 8-byte items, 1024 for 16-byte values).
//   1. segmented_classify_kernel   one thread a segment reads its two offsets and appends the segment's id to
//      the list of its class (one atomic a class for each block and round; empty segments go nowhere):
//        tiny      1 .. 16 keys      a group of 4 lanes a segment (8 segments a warp)
//        small     .. 32 keys        a group of 8 lanes a segment (4 a warp)
//        counted   .. 64 keys        a group of 16 lanes a segment (2 a warp)
//        packed16  .. T/16 keys      a whole warp a segment (step 2), else packed 16 to a tile
//        packed4   .. T/4 keys       packed 4 to a tile
//        tile      .. T keys         one to a tile
//        local     .. 4T keys        one to a tile of 1024 threads (4T)
//        large     more than 4T keys, up to onesweep_min_items (2^15), or 2^30 and more
//        onesweep  more than onesweep_min_items and fewer than 2^30 keys
//   2. segmented_warp_sort_kernel, one launch for each of the tiny, small and counted classes, whose lists hold each
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
#include <type_traits>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/segmented_classes.cuh"
#include "prims/device/detail/segmented_counting_sort.cuh"
#include "prims/device/detail/segmented_large_sort.cuh"
#include "prims/device/detail/segmented_onesweep.cuh"
#include "prims/device/detail/segmented_tile_sort.cuh"
#include "prims/device/detail/segmented_warp_sort.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail::segmented {

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

/// What a sort inside the library may add to a segmented sort: a device word that, when non-zero, makes the whole
/// sort do nothing (its classify kernel lists no segment, so every class's launch finds its list empty), and
/// alternate buffers of n items that the caller lends (then the temporary storage holds none; the size query says
/// `alternate_lent` too, without the buffers).
template <class K, class V>
struct SegmentedSortExtras {
  const unsigned* skip = nullptr;
  bool alternate_lent = false;
  K* alternate_keys = nullptr;
  V* alternate_values = nullptr;
};

/// The segmented sort under a table (see the file comment). `Policy` is a template argument so tuning programs can
/// sweep it.
template <class Table, class K, class V, class Offset, class Policy = typename Table::template SegmentedSort<K, V>>
cudaError_t segmented_radix_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n,
                                 size_t num_segments, const Offset* begin_offsets, const Offset* end_offsets,
                                 Order order, int begin_bit, int end_bit, cudaStream_t stream,
                                 const SegmentedSortExtras<K, V>& extras = {}) {
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
  static_assert(Policy::counting_tiny_items < Policy::counting_small_items &&
                    Policy::counting_small_items < Policy::counting_max_items,
                "the counted classes' limits grow");
  constexpr size_t kSmallestSize[kSegmentClasses] = {1,
                                                     Policy::counting_tiny_items + 1,
                                                     Policy::counting_small_items + 1,
                                                     Policy::counting_max_items + 1,
                                                     Policy::packed16_slot_items + 1,
                                                     Policy::packed4_slot_items + 1,
                                                     Policy::tile_items + 1,
                                                     Policy::tile_items + 1,
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
  const bool lent_alternate = extras.alternate_lent;
  sizes[kAlternateKeysPart] = lent_alternate ? 0 : radix::alternate_bytes<K>(alternate_items);
  sizes[kAlternateValuesPart] = lent_alternate ? 0 : radix::alternate_bytes<V>(alternate_items);
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

  K* const alternate_keys = lent_alternate ? extras.alternate_keys : static_cast<K*>(parts[kAlternateKeysPart]);
  V* const alternate_values = lent_alternate ? extras.alternate_values : static_cast<V*>(parts[kAlternateValuesPart]);
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
                   kClassifyThreads, 0, stream, begin_offsets, end_offsets, num_segments, local_max_items, lists,
                   extras.skip));

  const SegmentedSortArgs<K, V, Offset> args{io, begin_offsets, end_offsets, order, begin_bit, end_bit};
  // Each class's kernel, on a persistent grid of no more blocks than the class's groups can keep busy.
  auto sort_list = [&](auto kernel, size_t segments_a_block, const SegmentList& list, auto... more) -> cudaError_t {
    if (list.capacity == 0) return cudaSuccess;
    return launch_persistent(kernel, (list.capacity + segments_a_block - 1) / segments_a_block,
                             Policy::block_threads, 0, stream, args, list, more...);
  };
  constexpr int kTiny = Policy::counting_tiny_items;
  constexpr int kSmall = Policy::counting_small_items;
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
  using SmallLanes = std::integral_constant<int, Policy::warp_sort_small_lanes>;
  using CountedLanes = std::integral_constant<int, Policy::warp_sort_lanes>;
  using TinyItems = std::integral_constant<int, kTiny>;
  using SmallItems = std::integral_constant<int, kSmall>;
  using CountedItems = std::integral_constant<int, kCounted>;
  using Ranges = std::false_type;
  const SegmentList& tiny = lists.list[kTinySegments];
  const SegmentList& small = lists.list[kSmallSegments];
  const SegmentList& counted = lists.list[kCountedSegments];
  PRIMS_TRY(sort_by_warps(TinyLanes{}, TinyItems{}, Ranges{}, tiny, plain, by_counting(TinyItems{}, tiny)));
  PRIMS_TRY(sort_by_warps(SmallLanes{}, SmallItems{}, Ranges{}, small, plain, by_counting(SmallItems{}, small)));
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

}  // namespace prims::detail::segmented
