#pragma once
// Onesweep passes over many segments at once: every segment is sorted on its own, but all segments' tiles share
// one launch a pass, so a few big segments keep the whole GPU busy (one block a segment would leave most of it
// idle, and sort each segment at one SM's bandwidth). The segmented sort uses it for its biggest segments.
//   1. segmented_onesweep_layout_kernel     block 0 numbers the tiles of the listed segments (an exclusive scan
//                                           of their tile counts); every block clears the digit counters;
//   2. segmented_onesweep_histogram_kernel  a persistent grid, each block a run of consecutive tiles: writes each
//      tile's record (its segment) and clears the first pass's look-back words, then counts the digits of every
//      pass of each segment (one read of the keys: a segment's range of the run in 16-byte vectors, as Onesweep's
//      histogram reads the whole array; counts flushed once a segment's range is done) and notes special float
//      keys;
//   3. segmented_onesweep_starts_kernel     one block a segment: each digit's first position in the segment in
//      every pass, and the passes that are trivial for the segment (one digit holds every key), noted in the
//      records of its tiles, so that a pass block reads one record between its tile id and its keys;
//   4. segmented_onesweep_pass_kernel       one launch a pass taking tile ids in the order blocks start from a
//      counter (OnesweepGrid: a block a tile, or a persistent grid looping over them): each tile is the Onesweep
//      pass's tile (onesweep_tile) on its segment's keys, looking back only over the tiles of its own segment;
//      tiles of segments whose pass is trivial are copied through.
// Every segment takes every pass, so one PingPong serves all of them; an in-place sort with an odd number of
// passes ends with a copy (the pass kernel again, copying every tile back).
// One pass can also gather (segmented_onesweep_gather_pass): each segment read from a buffer of its own (a piece of
// a bigger segment, on another GPU perhaps) and written at a given place, with digit starts the caller computed,
// so that several pieces land in one segment, in order, as if it had been sorted whole.
// Bytes moved: one read of the keys for the counts, then per pass one read and one write of keys and values, as
// Onesweep on the whole array; plus a word a tile and 1 KB a tile of look-back words.

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "prims/block/scan.cuh"
#include "prims/device/detail/digit_histogram.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/util/host_device.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"

namespace prims::detail::segmented {

/// A segment the passes sort: where it lies and its first tile among all listed segments' tiles. It is read at
/// `begin` of the pass's input (of source buffer `source` in a gather pass) and written from `out_begin` of the
/// output on (equal to `begin` but in a gather pass). `head`: the keys between the line edge of the source before
/// `begin` and `begin` (a gather pass's; 0 otherwise): the segment's first tile is that much shorter, so that
/// every other tile starts at a 128-byte line edge and a warp's loads cover whole lines (a load across a line
/// edge costs two requests, which over the links is about 9% of the rate).
struct OnesweepSegment {
  size_t begin;
  size_t out_begin;
  unsigned size;
  unsigned first_tile;
  unsigned source;
  unsigned head;
};

/// The tiles of a segment of `size` keys whose first tile is `head` keys short.
__host__ __device__ inline unsigned segment_tile_count(unsigned size, unsigned head, unsigned tile_items) {
  return size == 0 ? 0u : (size + head + tile_items - 1) / tile_items;
}

/// A tile as the pass kernel reads it, in one record: its segment and the passes that are trivial for the segment
/// (one digit holds all its keys), so a block has one read between taking a tile id and loading its keys.
struct OnesweepTileInfo {
  OnesweepSegment range;
  unsigned segment;
  unsigned trivial_passes;  // bit p: pass p is trivial
};

/// The device state shared by the kernels of one segmented Onesweep sort.
struct SegmentedOnesweepState {
  /// The listed segments' ids (indices into the offsets) and how many there are (at most `capacity`).
  const unsigned* ids;
  const unsigned* count;
  unsigned capacity;
  /// [segment] of the list, written by the layout kernel.
  OnesweepSegment* segments;
  /// [tile]: the tile's segment; the trivial passes are filled in by the starts kernel.
  OnesweepTileInfo* tiles;
  /// [segment][pass][digit]: digit counts, then each digit's first position in the segment.
  unsigned* counts;
  unsigned* starts;
  /// Words cleared by the layout kernel (kStateWords(num_passes) of them): see tile_total, special_keys and
  /// tile_counter.
  unsigned* words;
  /// Two buffers of look-back rows (OnesweepLookBack: [tile][digit] words), for alternate passes.
  unsigned* lookback[2];
  int num_passes;
  /// The keys the storage was sized for: with `capacity`, the most tiles the list can have at a policy's tile.
  size_t items;
  /// The most tiles of a segment that are not whole: 1, or 2 where segments' first tiles are short (gather
  /// passes, OnesweepSegment::head).
  unsigned partial_tiles;

  /// How many words `words` holds: the tile total, the special-key flag, a tile counter a pass and one for the copy.
  static constexpr int words_for(int passes) { return 3 + passes; }
  /// The number of the listed segments' tiles (written by the layout kernel).
  PRIMS_HOST_DEVICE unsigned* tile_total() const { return words; }
  /// Non-zero when some key is special (RadixKey<K>::is_special).
  PRIMS_HOST_DEVICE unsigned* special_keys() const { return words + 1; }
  /// The tile counter of pass `pass`; pass num_passes is the final copy's.
  PRIMS_HOST_DEVICE unsigned* tile_counter(int pass) const { return words + 2 + pass; }
};

/// The most tiles `capacity` segments holding `items` keys can have, at `tile_items` keys a tile.
inline size_t segmented_onesweep_max_tiles(size_t items, unsigned capacity, unsigned partial_tiles,
                                           size_t tile_items) {
  return capacity == 0 ? 0 : items / tile_items + static_cast<size_t>(capacity) * partial_tiles;
}

inline constexpr int kSegmentedOnesweepLayoutThreads = 1024;

/// Block 0: tile numbering (exclusive scan of each segment's tiles) and the tile total. Every block: clears the
/// counts of the segments actually listed. `out_offsets` and `sources` (a gather pass's) may be null: segments
/// are then written where they are read, from one buffer. `line_sources` (a gather pass's: the buffers `sources`
/// index, of `key_bytes` keys) gives each segment its head (OnesweepSegment); null: none.
template <class Tile, class Offset>
__global__ void __launch_bounds__(kSegmentedOnesweepLayoutThreads)
    segmented_onesweep_layout_kernel(const Offset* __restrict__ begin_offsets, const Offset* __restrict__ end_offsets,
                                     const Offset* __restrict__ out_offsets, const unsigned* __restrict__ sources,
                                     const void* const* __restrict__ line_sources, unsigned key_bytes,
                                     SegmentedOnesweepState state) {
  using TileScan = block::Scan<unsigned, kSegmentedOnesweepLayoutThreads>;
  __shared__ typename TileScan::TempStorage scan_storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned count = *state.count < state.capacity ? *state.count : state.capacity;
  const size_t count_words = static_cast<size_t>(count) * state.num_passes * Tile::kDigits;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count_words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    state.counts[i] = 0;
  }
  if (blockIdx.x != 0) return;
  unsigned carry = 0;
  for (unsigned first = 0; first < count; first += kSegmentedOnesweepLayoutThreads) {
    const unsigned i = first + threadIdx.x;
    OnesweepSegment segment{0, 0, 0, 0, 0, 0};
    if (i < count) {
      const unsigned id = state.ids[i];
      const Offset begin = begin_offsets[id];
      const Offset end = end_offsets[id];
      segment.begin = static_cast<size_t>(begin);
      segment.out_begin = out_offsets != nullptr ? static_cast<size_t>(out_offsets[id]) : segment.begin;
      segment.size = static_cast<unsigned>(static_cast<size_t>(end) - static_cast<size_t>(begin));
      segment.source = sources != nullptr ? sources[id] : 0u;
      if (line_sources != nullptr && 128 % key_bytes == 0) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(line_sources[segment.source]) + segment.begin * key_bytes;
        segment.head = static_cast<unsigned>(at % 128 / key_bytes);
      }
    }
    const unsigned tiles = segment_tile_count(segment.size, segment.head, Tile::kTileItems);
    unsigned total = 0;
    segment.first_tile = carry + TileScan(scan_storage).exclusive_scan(tiles, Sum{}, 0u, total);
    if (i < count) state.segments[i] = segment;
    carry += total;
    __syncthreads();  // the scan storage is reused
  }
  if (threadIdx.x == 0) *state.tile_total() = carry;
  // The special-key flag and every tile counter.
  if (threadIdx.x >= 1 && threadIdx.x < SegmentedOnesweepState::words_for(state.num_passes)) {
    state.words[threadIdx.x] = 0;
  }
}

/// The index of the listed segment that holds tile `tile` (the last whose first tile is at or before it).
__device__ inline unsigned segment_of_tile(const OnesweepSegment* segments, unsigned count, unsigned tile) {
  unsigned low = 0;
  unsigned high = count - 1;
  while (low < high) {
    const unsigned middle = low + (high - low + 1) / 2;
    if (segments[middle].first_tile <= tile) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return low;
}

/// The histogram kernel's work for block `block` of `blocks` (a kernel whose other blocks do something else calls
/// it too): `counters` is the block's shared counters, num_passes * digits * copies words.
/// With keys == nullptr (a gather pass, whose counts come from elsewhere) only the records and the look-back
/// rows, and every float key is taken for special. Without look-back words (a sort that only counts), no rows.
template <class Policy, class Tile, class Shape, class K>
__device__ void segmented_onesweep_histogram_block(const K* __restrict__ keys, Order order, int begin_bit,
                                                   int end_bit, const SegmentedOnesweepState& state,
                                                   unsigned* counters, unsigned block, unsigned blocks) {
  constexpr int kThreads = Shape::threads;
  constexpr int kCopies = Shape::copies;
  constexpr int kDigits = Tile::kDigits;
  const int num_passes = state.num_passes;
  const int counter_words = num_passes * kDigits * kCopies;
  if (keys != nullptr) {
    for (int i = threadIdx.x; i < counter_words; i += kThreads) counters[i] = 0;
  }
  const unsigned count = *state.count < state.capacity ? *state.count : state.capacity;
  const unsigned num_tiles = *state.tile_total();
  // This block's run of consecutive tiles.
  const unsigned per_block = (num_tiles + blocks - 1) / blocks;
  const unsigned first = block * per_block;
  const unsigned last = first + per_block < num_tiles ? first + per_block : num_tiles;
  __syncthreads();
  if (first >= last) return;

  using Counter = radix::PassDigitCounter<Policy, kCopies, K>;
  const Counter counter(order, begin_bit, end_bit, Counter::copy_of(counters));
  bool special = false;
  auto flush = [&](unsigned segment) {
    __syncthreads();
    counter.template flush<true>(counters, state.counts + static_cast<size_t>(segment) * num_passes * kDigits);
    __syncthreads();
  };

  // The records and cleared look-back rows of this block's tiles.
  const unsigned first_segment = segment_of_tile(state.segments, count, first);
  unsigned s = first_segment;
  OnesweepSegment segment = state.segments[s];
  const radix::OnesweepLookBack<Policy::radix_bits> lookback(state.lookback[0]);
  for (unsigned tile = first; tile < last; ++tile) {
    while (s + 1 < count && state.segments[s + 1].first_tile <= tile) segment = state.segments[++s];
    if (threadIdx.x == 0) state.tiles[tile] = {segment, s, 0u};
    if (state.lookback[0] != nullptr && threadIdx.x < kDigits) lookback.reset(tile, threadIdx.x);
  }
  if (keys == nullptr) {
    if (RadixKey<K>::kHasSpecialKeys && block == 0 && threadIdx.x == 0) *state.special_keys() = 1;
    return;
  }
  // The keys of this block's tiles: one contiguous range a segment, read as onesweep_histogram_kernel reads the
  // whole array; each segment's counts flushed once its range is done.
  auto count_key = [&](K key) {
    if constexpr (RadixKey<K>::kHasSpecialKeys) special = special || RadixKey<K>::is_special(key);
    counter.count(key);
  };
  for (s = first_segment;; ++s) {
    segment = state.segments[s];
    const unsigned segment_tiles = (segment.size + Tile::kTileItems - 1) / Tile::kTileItems;
    const unsigned from_tile = first > segment.first_tile ? first - segment.first_tile : 0u;
    const unsigned to_tile = last - segment.first_tile < segment_tiles ? last - segment.first_tile : segment_tiles;
    const size_t begin = static_cast<size_t>(from_tile) * Tile::kTileItems;
    const size_t end = static_cast<size_t>(to_tile) * Tile::kTileItems < segment.size
                           ? static_cast<size_t>(to_tile) * Tile::kTileItems
                           : segment.size;
    radix::count_keys_in_vectors<kThreads, Shape::items>(keys + segment.begin + begin, end - begin, 0, 1, count_key);
    if (s + 1 >= count || state.segments[s + 1].first_tile >= last) break;
    // An empty segment counted nothing: no flush (a list may hold many, as the distributed sort's pieces do).
    if (end > begin) flush(s);
  }
  flush(s);
  if (__syncthreads_or(special) && threadIdx.x == 0) *state.special_keys() = 1;
}

/// Counts, records and look-back rows of the listed segments' tiles (segmented_onesweep_histogram_block), a
/// persistent grid.
template <class Policy, class Tile, class Shape, class K>
__global__ void __launch_bounds__(Shape::threads)
    segmented_onesweep_histogram_kernel(const K* __restrict__ keys, Order order, int begin_bit, int end_bit,
                                        SegmentedOnesweepState state) {
  extern __shared__ unsigned counters[];  // as radix::onesweep_histogram_kernel's
  wait_for_prior_grids();
  allow_dependent_grids();
  segmented_onesweep_histogram_block<Policy, Tile, Shape, K>(keys, order, begin_bit, end_bit, state, counters,
                                                             blockIdx.x, gridDim.x);
}

/// Block s (and s + gridDim.x, ...): segment s's digit starts in every pass, and which passes are trivial for it,
/// noted in each of its tiles' records.
template <class Tile>
__global__ void __launch_bounds__(Tile::kDigits) segmented_onesweep_starts_kernel(SegmentedOnesweepState state) {
  constexpr int kDigits = Tile::kDigits;
  __shared__ typename block::Scan<unsigned, kDigits>::TempStorage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned count = *state.count < state.capacity ? *state.count : state.capacity;
  for (unsigned s = blockIdx.x; s < count; s += gridDim.x) {
    const OnesweepSegment segment = state.segments[s];
    unsigned trivial_passes = 0;
    for (int pass = 0; pass < state.num_passes; ++pass) {
      const size_t i = (static_cast<size_t>(s) * state.num_passes + pass) * kDigits + threadIdx.x;
      bool trivial = false;
      state.starts[i] = radix::digit_start<kDigits>(storage, state.counts[i], segment.size, trivial);
      if (trivial) trivial_passes |= 1u << pass;
    }
    const unsigned tiles = (segment.size + Tile::kTileItems - 1) / Tile::kTileItems;
    for (unsigned t = threadIdx.x; t < tiles; t += kDigits) {
      state.tiles[segment.first_tile + t].trivial_passes = trivial_passes;
    }
  }
}

/// What one launch of the pass kernel does: a pass (rank and scatter, or a copy where the segment's pass is
/// trivial), or a copy of every tile (`copy`: the in-place sort's last step; null arrays are not copied). A gather
/// pass reads segment s from key_sources[s's source] (value_sources[...]) instead of buffers.keys_in (the pass
/// kernel's GATHER instance).
template <class K, class V>
struct SegmentedOnesweepPass {
  PassBuffers<K, V> buffers;
  const K* const* key_sources;
  const V* const* value_sources;
  DigitExtractor<K> digit_of;
  int pass;
  bool copy;
  unsigned* tile_counter;
  unsigned* lookback;
  unsigned* next_lookback;
  /// A gather pass: the tiles of listed segments [0, interleaved) and those of the others are taken in proportion
  /// (0: in order), so that reads from near and far buffers go on side by side.
  unsigned interleaved;
};

/// The tile that the k-th taken tile id stands for, of num_tiles, where tiles [0, first_tiles) and
/// [first_tiles, num_tiles) are taken in proportion, each group in order (so every tile's look-back predecessors
/// are taken before it): slot k takes a tile of the first group when the group's share of slots [0, k + 1)
/// rounds past its share of [0, k).
__device__ inline unsigned interleaved_tile(unsigned k, unsigned first_tiles, unsigned num_tiles) {
  const unsigned before = static_cast<unsigned>(uint64_t{k} * first_tiles / num_tiles);
  const unsigned through = static_cast<unsigned>((uint64_t{k} + 1) * first_tiles / num_tiles);
  return through > before ? before : first_tiles + (k - before);
}

/// How a pass kernel's grid covers the tiles. Tiles: one block a tile, the grid as large as the list's tiles can be
/// (faster a tile, but every block the list does not need still starts, reads a word and exits: for lists whose
/// tiles fill the bound, as the distributed sort's). Persistent: as many blocks as fit, each looping over tiles
/// (for lists that may hold few of the keys the bound counts, as the segmented sort's and the hybrid sort's).
enum class OnesweepGrid { Tiles, Persistent };

/// GATHER: a gather pass (segments read from their sources, written from their out_begin on, tiles interleaved);
/// the other passes compile without it, as it slowed them (docs/design-notes.md, "Distributed radix sort").
template <class Policy, class K, class V, OnesweepGrid GRID, bool GATHER = false>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    segmented_onesweep_pass_kernel(SegmentedOnesweepState state, SegmentedOnesweepPass<K, V> args) {
  using Tile = radix::OnesweepTile<Policy, K, V>;
  constexpr int kTileItems = Tile::kTileItems;
  constexpr int kDigits = Tile::kDigits;
  static_assert(kDigits <= Tile::kThreads, "the pass kernel needs a thread per digit");
  __shared__ typename Tile::TempStorage storage;
  __shared__ unsigned tile_id;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned num_tiles = *state.tile_total();
  const bool special_keys = *state.special_keys() != 0;
  unsigned first_tiles = num_tiles;
  if constexpr (GATHER) {
    const unsigned count = *state.count < state.capacity ? *state.count : state.capacity;
    if (args.interleaved < count) first_tiles = state.segments[args.interleaved].first_tile;
  }
  // Tile ids are taken in the order blocks start (or come back for more).
  do {
    const unsigned taken = take_work(args.tile_counter, tile_id);
    if constexpr (GRID == OnesweepGrid::Persistent) __syncthreads();  // tile_id is rewritten by the next round
    if (taken >= num_tiles) return;
    const unsigned tile = GATHER && args.interleaved != 0 ? interleaved_tile(taken, first_tiles, num_tiles) : taken;
    if (args.next_lookback != nullptr && threadIdx.x < kDigits) {
      radix::OnesweepLookBack<Policy::radix_bits>(args.next_lookback).reset(tile, threadIdx.x);
    }
    const OnesweepTileInfo info = state.tiles[tile];
    const unsigned s = info.segment;
    const OnesweepSegment segment = info.range;
    const unsigned local_tile = tile - segment.first_tile;
    // A gather pass's tile t > 0 starts `head` keys before t tiles into the segment; tile 0 holds the first
    // kTileItems - head (other passes: no head, and no instructions for it).
    const unsigned head = GATHER ? segment.head : 0u;
    const unsigned shift = GATHER && local_tile != 0 ? head : 0u;
    const unsigned tile_begin = local_tile * kTileItems - shift;
    const unsigned tile_items = GATHER ? kTileItems - (head - shift) : static_cast<unsigned>(kTileItems);
    const int valid = segment.size - tile_begin < tile_items ? static_cast<int>(segment.size - tile_begin)
                                                             : static_cast<int>(tile_items);
    const size_t row = static_cast<size_t>(s) * state.num_passes + args.pass;
    // Gather passes have no trivial passes (their starts kernel notes none) and no copies.
    if (args.copy || (info.trivial_passes >> args.pass & 1u) != 0) {
      const size_t begin = segment.begin + tile_begin;
      radix::copy_tile_through<Tile>(args.buffers, begin, begin, valid);
      continue;
    }
    // The segment's view of the pass: positions count from the segment's begin (its out_begin in the output),
    // tiles from its first tile.
    // onesweep_tile reads tile t at t tiles from the segment's view: shifted back by the head past tile 0.
    const K* keys_in = GATHER ? args.key_sources[segment.source] : args.buffers.keys_in;
    const size_t out_begin = GATHER ? segment.out_begin : segment.begin;
    PassBuffers<K, V> buffers{keys_in + (segment.begin - shift), args.buffers.keys_out + out_begin, nullptr,
                              nullptr};
    if constexpr (kHasValues<V>) {
      const V* values_in = GATHER ? args.value_sources[segment.source] : args.buffers.values_in;
      buffers.values_in = values_in + (segment.begin - shift);
      buffers.values_out = args.buffers.values_out + out_begin;
    }
    // A segment is one portion (it has fewer than kOnesweepPortionMaxItems keys), looking back over its own tiles.
    const radix::OnesweepPass<Policy::radix_bits, K, V> pass{
        buffers,
        0u,
        segment.size,
        args.digit_of,
        state.starts + row * kDigits,
        nullptr,
        nullptr,
        nullptr,
        nullptr,
        radix::OnesweepLookBack<Policy::radix_bits>(args.lookback).from(segment.first_tile),
        radix::OnesweepLookBack<Policy::radix_bits>(nullptr),
        0u};
    if (valid == kTileItems && (!RadixKey<K>::kHasSpecialKeys || !special_keys)) {
      radix::onesweep_tile<Policy, K, V, true>(pass, storage, local_tile, kTileItems);
    } else {
      radix::onesweep_tile<Policy, K, V, false>(pass, storage, local_tile, valid);
    }
    if constexpr (GRID == OnesweepGrid::Persistent) __syncthreads();  // the tile storage is reused
  } while (GRID == OnesweepGrid::Persistent);
}

/// Launches one pass kernel over the list's tiles with the GRID's grid.
template <class Policy, class K, class V, OnesweepGrid GRID, bool GATHER = false>
cudaError_t launch_segmented_onesweep_pass(const SegmentedOnesweepState& state, const SegmentedOnesweepPass<K, V>& pass,
                                           cudaStream_t stream) {
  if constexpr (GRID == OnesweepGrid::Tiles) {
    // Each segment has at most one partial tile (two where its first is short: a gather pass's): sized with this
    // policy's tile, no block is surplus to a list that holds every key.
    const size_t max_tiles = segmented_onesweep_max_tiles(state.items, state.capacity, state.partial_tiles,
                                                          radix::OnesweepTile<Policy, K, V>::kTileItems);
    return launch(segmented_onesweep_pass_kernel<Policy, K, V, GRID, GATHER>, static_cast<unsigned>(max_tiles),
                  Policy::block_threads, 0, stream, state, pass);
  } else {
    return launch_persistent(segmented_onesweep_pass_kernel<Policy, K, V, GRID, GATHER>, ~size_t{0},
                             Policy::block_threads, 0, stream, state, pass);
  }
}

/// The temporary storage of a segmented Onesweep sort of up to `capacity` segments holding up to n keys, in
/// the order segmented_onesweep_sort takes the parts.
template <class K, class V, class Policy>
struct SegmentedOnesweepStorage {
  using Tile = radix::OnesweepTile<Policy, K, V>;
  using LookBack = radix::OnesweepLookBack<Policy::radix_bits>;
  /// The parts, in order: SegmentedOnesweepState's segments, tiles, counts, starts, words, and both look-back
  /// buffers.
  enum Part : int { kSegmentsPart, kTilesPart, kCountsPart, kStartsPart, kWordsPart, kLookBackPart, kParts };

  /// partial_tiles: SegmentedOnesweepState's (2 for a gather pass's state).
  static void sizes(size_t n, unsigned capacity, int num_passes, size_t (&bytes)[kParts], unsigned partial_tiles = 1) {
    const size_t rows = static_cast<size_t>(capacity) * num_passes;
    const size_t max_tiles = segmented_onesweep_max_tiles(n, capacity, partial_tiles, Tile::kTileItems);
    bytes[kSegmentsPart] = capacity * sizeof(OnesweepSegment);
    bytes[kTilesPart] = max_tiles * sizeof(OnesweepTileInfo);
    bytes[kCountsPart] = rows * Tile::kDigits * sizeof(unsigned);
    bytes[kStartsPart] = rows * Tile::kDigits * sizeof(unsigned);
    bytes[kWordsPart] = capacity == 0 ? 0 : SegmentedOnesweepState::words_for(num_passes) * sizeof(unsigned);
    bytes[kLookBackPart] = 2 * LookBack::bytes(max_tiles);
  }

  static SegmentedOnesweepState state(void* const (&parts)[kParts], size_t n, unsigned capacity, int num_passes,
                                      const unsigned* ids, const unsigned* count, unsigned partial_tiles = 1) {
    const size_t max_tiles = segmented_onesweep_max_tiles(n, capacity, partial_tiles, Tile::kTileItems);
    const LookBack lookback(static_cast<unsigned*>(parts[kLookBackPart]));
    return {ids,
            count,
            capacity,
            static_cast<OnesweepSegment*>(parts[kSegmentsPart]),
            static_cast<OnesweepTileInfo*>(parts[kTilesPart]),
            static_cast<unsigned*>(parts[kCountsPart]),
            static_cast<unsigned*>(parts[kStartsPart]),
            static_cast<unsigned*>(parts[kWordsPart]),
            {lookback.words().data(), lookback.from(max_tiles).words().data()},
            num_passes,
            n,
            partial_tiles};
  }
};

/// What segmented_onesweep_sort does for the digit counts by default: counts them, one read of the keys.
struct CountDigits {};

/// Sorts every listed segment (each of fewer than kOnesweepPortionMaxItems keys) on [begin_bit, end_bit), ping-ponging
/// with the alternate buffers (n items each; none for NoValues) so that the result lands in io's outputs.
/// Nothing synchronizes the host: the list's length stays on the device; the grids are persistent, or as large as
/// the list can need.
/// GRID: OnesweepGrid::Tiles where the listed segments hold about all n keys the storage was sized for.
/// `fill_counts`: CountDigits, or a call `cudaError_t(const SegmentedOnesweepState&)` that writes every listed
/// segment's digit counts into state.counts ([segment][pass][digit]) itself, on the stream, where the caller
/// knows them already (the keys are then read by the passes only, and float keys take the general path).
template <class Table, class K, class V, class Offset, class Policy = typename Table::template Onesweep<K, V>,
          class FillCounts = CountDigits, OnesweepGrid GRID = OnesweepGrid::Persistent>
cudaError_t segmented_onesweep_sort(SegmentedOnesweepState state, PassBuffers<K, V> io,
                                    const Offset* begin_offsets, const Offset* end_offsets, Order order,
                                    int begin_bit, int end_bit, K* alternate_keys, V* alternate_values,
                                    cudaStream_t stream, FillCounts fill_counts = {}) {
  using Tile = radix::OnesweepTile<Policy, K, V>;
  using Shape = typename Table::template SegmentedOnesweepHistogram<K>;
  static_assert(fits_shared_memory<Table>(Shape::template shared_bytes<K>(Policy::radix_bits)),
                "the histogram's counters fit the table's shared memory");
  if (state.capacity == 0) return cudaSuccess;
  const int num_passes = state.num_passes;
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  PRIMS_TRY(launch(segmented_onesweep_layout_kernel<Tile, Offset>, static_cast<unsigned>(multiprocessors),
                   kSegmentedOnesweepLayoutThreads, 0, stream, begin_offsets, end_offsets,
                   static_cast<const Offset*>(nullptr), static_cast<const unsigned*>(nullptr),
                   static_cast<const void* const*>(nullptr), 0u, state));
  constexpr bool kCounts = std::is_same_v<FillCounts, CountDigits>;
  PRIMS_TRY(launch_persistent(segmented_onesweep_histogram_kernel<Policy, Tile, Shape, K>,
                              static_cast<size_t>(multiprocessors) * Shape::blocks_per_sm, Shape::threads,
                              kCounts ? static_cast<size_t>(num_passes) * Tile::kDigits * Shape::copies *
                                            sizeof(unsigned)
                                      : 0,
                              stream, kCounts ? io.keys_in : nullptr, order, begin_bit, end_bit, state));
  if constexpr (!kCounts) PRIMS_TRY(fill_counts(state));
  PRIMS_TRY(launch_persistent(segmented_onesweep_starts_kernel<Tile>, state.capacity, Tile::kDigits, 0, stream,
                              state));

  const radix::PingPong<K> keys(io.keys_in, io.keys_out, alternate_keys, num_passes);
  const radix::PingPong<V> values(io.values_in, io.values_out, alternate_values, num_passes);
  auto run = [&](SegmentedOnesweepPass<K, V> pass) {
    return launch_segmented_onesweep_pass<Policy, K, V, GRID>(state, pass, stream);
  };
  for (int pass = 0; pass < num_passes; ++pass) {
    PassBuffers<K, V> buffers{keys.source(pass), keys.destination(pass), nullptr, nullptr};
    if constexpr (kHasValues<V>) buffers = {keys.source(pass), keys.destination(pass), values.source(pass),
                                             values.destination(pass)};
    PRIMS_TRY(run({buffers, nullptr, nullptr, pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass),
                   pass, false,
                   state.tile_counter(pass), state.lookback[pass % 2],
                   pass + 1 < num_passes ? state.lookback[(pass + 1) % 2] : nullptr, 0u}));
  }
  // What did not end in the outputs: everything when there is no pass (unless in place), or an odd number of
  // passes in place.
  PassBuffers<K, V> copy{keys.result_to_copy(), io.keys_out, nullptr, nullptr};
  if constexpr (kHasValues<V>) {
    copy.values_in = values.result_to_copy();
    copy.values_out = io.values_out;
  }
  if (copy.keys_in == nullptr && copy.values_in == nullptr) return cudaSuccess;
  return run({copy, nullptr, nullptr, pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, 0), 0, true,
              state.tile_counter(num_passes), nullptr, nullptr, 0u});
}

/// One pass that gathers: listed segment s (state.ids of the offsets) holds the keys [begin_offsets[id],
/// end_offsets[id]) of key_sources[sources[id]] (values of value_sources[...]; null for NoValues), and is scattered
/// on `digit_of` from out_offsets[id] of keys_out (values_out) on, digit d of it from its start
/// state.starts[s * kDigits + d] on (the caller writes them first: state.num_passes is 1). The segments' counts
/// come from elsewhere: the keys are read once, by the pass. Segments of at most kOnesweepPortionMaxItems keys.
/// The tiles of listed segments [0, interleaved) and of the others are taken in proportion (0: in order): list
/// the pieces read nearby first, and the far reads are spread over the whole pass. A block a tile: the pieces hold
/// the n keys the storage was sized for. Each piece's tiles start at line edges of its source past its first
/// (OnesweepSegment::head): the state's partial_tiles must be 2.
template <class Table, class K, class V, class Offset, class Policy = typename Table::template Onesweep<K, V>>
cudaError_t segmented_onesweep_gather_pass(SegmentedOnesweepState state, const K* const* key_sources,
                                           const V* const* value_sources, K* keys_out, V* values_out,
                                           const Offset* begin_offsets, const Offset* end_offsets,
                                           const Offset* out_offsets, const unsigned* sources,
                                           DigitExtractor<K> digit_of, unsigned interleaved, cudaStream_t stream) {
  using Tile = radix::OnesweepTile<Policy, K, V>;
  using Shape = typename Table::template SegmentedOnesweepHistogram<K>;
  if (state.capacity == 0) return cudaSuccess;
  if (state.num_passes != 1 || state.partial_tiles != 2) return cudaErrorInvalidValue;
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  PRIMS_TRY(launch(segmented_onesweep_layout_kernel<Tile, Offset>, static_cast<unsigned>(multiprocessors),
                   kSegmentedOnesweepLayoutThreads, 0, stream, begin_offsets, end_offsets, out_offsets, sources,
                   reinterpret_cast<const void* const*>(key_sources), static_cast<unsigned>(sizeof(K)), state));
  // The tiles' records and look-back rows only.
  PRIMS_TRY(launch_persistent(segmented_onesweep_histogram_kernel<Policy, Tile, Shape, K>,
                              static_cast<size_t>(multiprocessors) * Shape::blocks_per_sm, Shape::threads, 0, stream,
                              static_cast<const K*>(nullptr), Order::Ascending, 0, 0, state));
  PassBuffers<K, V> buffers{nullptr, keys_out, nullptr, values_out};
  const SegmentedOnesweepPass<K, V> pass{buffers, key_sources, value_sources, digit_of, 0, false,
                                         state.tile_counter(0), state.lookback[0], nullptr, interleaved};
  return launch_segmented_onesweep_pass<Policy, K, V, OnesweepGrid::Tiles, true>(state, pass, stream);
}

}  // namespace prims::detail::segmented
