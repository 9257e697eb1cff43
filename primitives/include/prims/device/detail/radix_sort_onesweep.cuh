#pragma once
// The single-pass-per-digit radix sort (RadixSortAlgorithm::Onesweep, after Adinets and Merrill, "Onesweep: A
// Faster Least Significant Digit Radix Sort for GPUs", 2022): its policies, kernels and dispatcher.
//   1. onesweep_histogram_kernel      one read of the keys counts the digits of every pass at once, and notes
//                                     whether any float key is a NaN or -0.0;
//   2. onesweep_digit_starts_kernel   one block a pass turns its histogram into each digit's first position and
//                                     notes whether the pass is trivial (every key has the same digit);
//   3. onesweep_pass_kernel           one launch a pass: each block takes the next tile id from a counter, ranks
//      its tile's keys (block::RadixRank, which hands over the tile's digit counts before its block scan, so they
//      are published at once and later tiles stop waiting on this one), then looks back across earlier tiles for
//      each digit's output position while it puts its keys into shared memory in rank order, and finally writes
//      each digit's run with coalesced stores (SortTile of radix_sort_common.cuh, like every radix sort).
//      onesweep_either_pass_kernel is the same block work for one of two passes given at launch (the plain call's
//      two paths share launches with it, radix_sort_auto.cuh).
// The look-back is lookback.cuh's TileCountRows: a tile's row of tagged words (2-bit flag, 30-bit count) a digit,
// so a pass runs over portions of fewer than 2^30 keys (one portion below that), one launch a portion: a look-back
// counts within its portion (its first tile publishes its own counts as inclusive words, so a look-back ends with
// the digit's position within the portion, and the block adds the portion's digit start), and the portion's last
// tile writes the next portion's digit starts.
// Positions are 32-bit below 2^32 keys and 64-bit from there on.
// A trivial pass cannot reorder anything: its blocks copy their tile straight through. When no key is special
// (RadixKey<K>::is_special: float NaNs and -0.0), full tiles compute digits on the shorter plain path.
// Look-back words must be cleared when a launch starts: launch k (a portion of a pass) uses one of two buffers and
// clears the other one for launch k + 1; the histogram kernel clears the first. Every kernel is launched with
// programmatic dependent launch.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>

#include "prims/block/scan.cuh"
#include "prims/device/detail/digit_histogram.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/vector_load.cuh"

namespace prims::detail::radix {

/// A pass's look-back: a row of counts a tile, one a digit (the tile's own count of the digit; then the digit's
/// count over this tile and the earlier tiles of its portion, its position there after this tile).
template <int RADIX_BITS>
using OnesweepLookBack = TileCountRows<1 << RADIX_BITS>;

/// A pass's trivial flag that makes its launch return at once: the pass belongs to a path not taken.
inline constexpr unsigned kPassSkipped = 2;

static_assert(kOnesweepPortionMaxItems == TileCountRows<1>::kMaxCount, "a portion's counts fit in a look-back word");

template <class Policy, class Shape, class K>
__global__ void __launch_bounds__(Shape::threads)
    onesweep_histogram_kernel(const K* __restrict__ keys, size_t n, Order order, int begin_bit, int end_bit,
                              unsigned* __restrict__ histograms, unsigned* __restrict__ special_keys,
                              OnesweepLookBack<Policy::radix_bits> lookback, size_t lookback_tiles) {
  constexpr int kThreads = Shape::threads;
  constexpr int kItems = Shape::items;
  constexpr int kCopies = Shape::copies;
  constexpr int kDigits = 1 << Policy::radix_bits;
  constexpr int kMaxPasses = radix_passes(0, RadixKey<K>::kBits, Policy::radix_bits);
  constexpr int kCounterWords = kMaxPasses * kDigits * kCopies;
  static_assert(kCopies >= 1 && kCopies <= warp::kWarpThreads && warp::kWarpThreads % kCopies == 0,
                "histogram copies divide the warp");
  // counts[(pass * kDigits + digit) * kCopies + copy], in dynamic shared memory (over 48 KB). Lane l adds to copy
  // l % kCopies: with 32 copies lane l only ever touches bank l, so a warp's atomics never collide, however
  // skewed the digits.
  extern __shared__ unsigned counts[];

  for (int i = threadIdx.x; i < kCounterWords; i += kThreads) counts[i] = 0;
  wait_for_prior_grids();
  allow_dependent_grids();
  reset_statuses(lookback.words(), lookback_tiles * kDigits, blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x,
                 static_cast<size_t>(gridDim.x) * kThreads);
  __syncthreads();

  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  using Counter = PassDigitCounter<Policy, kCopies, K>;
  bool special = false;
  const Counter counter(order, begin_bit, end_bit, Counter::copy_of(counts));
  auto count_key = [&](K key) {
    if constexpr (RadixKey<K>::kHasSpecialKeys) special = special || RadixKey<K>::is_special(key);
    counter.count(key);
  };

  count_keys_in_vectors<kThreads, kItems>(keys, n, blockIdx.x, gridDim.x, count_key);
  if (__syncthreads_or(special) && threadIdx.x == 0) *special_keys = 1;
  counter.template flush<false>(counts, histograms);
}

/// Block p, with histograms[q][p][d] counting digit d of pass p among the input's portion q (`portion_words`
/// apart; counts of all portions together may pass 2^32): starts[p * starts_stride + d] = histograms[*][p][0] +
/// ... + histograms[*][p][d - 1]; trivial[p] = whether one digit holds all n keys.
template <class Policy, class Offset>
__global__ void __launch_bounds__(1 << Policy::radix_bits)
    onesweep_digit_starts_kernel(const unsigned* __restrict__ histograms, Offset* __restrict__ starts,
                                 unsigned* __restrict__ trivial, Offset n, int num_portions, size_t portion_words,
                                 size_t starts_stride) {
  constexpr int kDigits = 1 << Policy::radix_bits;
  __shared__ typename block::Scan<Offset, kDigits>::TempStorage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const size_t i = blockIdx.x * kDigits + threadIdx.x;
  Offset count = 0;
  for (int q = 0; q < num_portions; ++q) count += histograms[q * portion_words + i];
  bool one_digit = false;
  starts[blockIdx.x * starts_stride + threadIdx.x] = digit_start<kDigits>(storage, count, n, one_digit);
  if (threadIdx.x == 0) trivial[blockIdx.x] = one_digit ? 1u : 0u;
}

/// Everything one portion of an Onesweep pass needs; the grid has one block per tile of the portion. Offset holds
/// positions (unsigned below 2^32 keys, size_t from there on).
template <int RADIX_BITS, class K, class V, class Offset = unsigned>
struct OnesweepPass {
  /// keys_in (values_in) from the portion's first key on; keys_out (values_out) whole.
  PassBuffers<K, V> buffers;
  /// Where the portion's first key is in the whole input (a trivial pass copies it there) and its number of keys.
  Offset portion_begin;
  Offset n;
  DigitExtractor<K> digit_of;
  /// Where the portion's keys of each digit start; the next portion's, which the portion's last tile writes (null
  /// when no portion follows).
  const Offset* digit_starts;
  Offset* next_digit_starts;
  /// Whether the pass is trivial (from kernel 2): non-zero, or kPassSkipped for a pass of a path the sort did not
  /// take (radix_sort_auto.cuh), whose launch then does nothing at all.
  const unsigned* trivial;
  /// Non-zero when some key is special (RadixKey<K>::is_special); otherwise digits take the plain path.
  const unsigned* special_keys;
  /// Hands out tile ids in the order blocks start, so a tile only ever waits for tiles already running.
  unsigned* tile_counter;
  /// The look-back rows of this portion's tiles (cleared on entry), and the next launch's `next_lookback_tiles`
  /// rows to clear (none: 0).
  OnesweepLookBack<RADIX_BITS> lookback;
  OnesweepLookBack<RADIX_BITS> next_lookback;
  unsigned next_lookback_tiles;
};

/// The tile of a pass block.
template <class Policy, class K, class V, class Offset = unsigned>
using OnesweepTile = SortTile<Policy, K, V, Offset>;

/// Copies the `valid` items of a tile of a trivial pass to the same place in `out` (both point at the tile).
template <class Tile, class T>
__device__ void copy_tile(const T* __restrict__ in, T* __restrict__ out, int valid) {
  T items[Tile::kItems];
  Tile::load(in, valid, items);
  Tile::store(out, valid, items);
}

/// A tile that a pass leaves where it is (the pass is trivial, or the sort's last copy): its keys and values,
/// `valid` of them, from `in_at` of buffers' inputs to `out_at` of their outputs. Null inputs are not copied.
template <class Tile, class K, class V>
__device__ void copy_tile_through(const PassBuffers<K, V>& buffers, size_t in_at, size_t out_at, int valid) {
  if (buffers.keys_in != nullptr) copy_tile<Tile>(buffers.keys_in + in_at, buffers.keys_out + out_at, valid);
  if constexpr (kHasValues<V>) {
    if (buffers.values_in != nullptr) copy_tile<Tile>(buffers.values_in + in_at, buffers.values_out + out_at, valid);
  }
}

/// One tile of a pass, after the block has taken its tile id. FULL: the tile holds kTileItems keys, none of them
/// special (RadixKey<K>::is_special), so no item needs a bounds check and digits come from DigitExtractor::plain;
/// otherwise `valid` keys (the last tile, or any tile when some float key is a NaN or -0.0) and the exact digits.
template <class Policy, class K, class V, bool FULL, class Offset>
__device__ __forceinline__ void onesweep_tile(const OnesweepPass<Policy::radix_bits, K, V, Offset>& pass,
                                              typename OnesweepTile<Policy, K, V, Offset>::TempStorage& storage,
                                              unsigned tile, int valid) {
  using Tile = OnesweepTile<Policy, K, V, Offset>;
  constexpr int kItems = Tile::kItems;
  constexpr int kTileItems = Tile::kTileItems;
  constexpr int kDigits = Tile::kDigits;
  if constexpr (FULL) valid = kTileItems;
  const Offset tile_begin = static_cast<Offset>(tile) * kTileItems;
  const bool digit_thread = threadIdx.x < kDigits;
  auto digit_of = [&](K key) { return FULL ? pass.digit_of.plain(key) : pass.digit_of(key); };

  // 1. Rank the tile. Each digit's count is published as soon as the ranking has it: tile 0's as the digit's
  //    inclusive position in the portion, every other tile's as its aggregate, so later tiles stop waiting on this
  //    one.
  K keys[kItems];
  Tile::template load<FULL>(pass.buffers.keys_in + tile_begin, valid, keys);
  unsigned ranks[kItems];
  Tile::template key_digits<FULL>(keys, valid, digit_of, ranks);
  unsigned digit_total = 0;
  unsigned digit_prefix = 0;
  typename Tile::Rank(storage.rank)
      .rank(ranks, ranks, digit_total, digit_prefix, kTileItems - valid, [&](unsigned count) {
        pass.lookback.publish(tile, threadIdx.x, tile == 0 ? kTileInclusive : kTileAggregate, count);
      });
  __syncthreads();

  // 2. Keys go to shared memory in rank order while the digit threads look back for their digit's position.
  Tile::template place_ranked<FULL>(keys, ranks, valid, storage);
  // Values load (or are fetched into L2) before the look-back, so that their latency and the look-back's overlap.
  constexpr bool kValuesThroughL2 = kHasValues<V> && Policy::values_fetch == OnesweepValuesFetch::L2BeforeLookBack;
  V values[kItems];
  if constexpr (kValuesThroughL2) {
    Tile::prefetch_l2(pass.buffers.values_in + tile_begin, valid);
  } else if constexpr (kHasValues<V>) {
    Tile::template load<FULL>(pass.buffers.values_in + tile_begin, valid, values);
  }
  if (digit_thread) {
    const Offset start = pass.digit_starts[threadIdx.x];
    unsigned before = 0;  // keys of the digit in the portion's earlier tiles
    if (tile != 0) {
      before = pass.lookback.template look_back<Policy::lookback_words_per_step>(tile, threadIdx.x);
      pass.lookback.publish(tile, threadIdx.x, kTileInclusive, before + digit_total);
    }
    storage.digit_base[threadIdx.x] = start + before - digit_prefix;
    if (pass.next_digit_starts != nullptr && pass.n - tile_begin <= static_cast<Offset>(kTileItems)) {
      pass.next_digit_starts[threadIdx.x] = start + before + digit_total;
    }
  }
  __syncthreads();

  // 3. Slot s holds the key of rank s: runs of one digit are written contiguously; values follow.
  typename Tile::SlotDigits slot_digits;
  Tile::template scatter_keys<FULL>(valid, digit_of, storage, pass.buffers.keys_out, slot_digits);
  if constexpr (kHasValues<V>) {
    if constexpr (kValuesThroughL2) Tile::template load<FULL>(pass.buffers.values_in + tile_begin, valid, values);
    Tile::template scatter_values<FULL>(values, ranks, valid, slot_digits, storage, pass.buffers.values_out);
  }
}

/// What a block of a pass launch does once the grids before it are done, given the pass's trivial flag (*pass.trivial):
/// nothing for a skipped pass, a copy of its tile for a trivial one, else the next tile id's ranking and scatter.
template <class Policy, class K, class V, class Offset>
__device__ __forceinline__ void onesweep_pass_block(const OnesweepPass<Policy::radix_bits, K, V, Offset>& pass,
                                                    unsigned trivial,
                                                    typename OnesweepTile<Policy, K, V, Offset>::TempStorage& storage,
                                                    unsigned& tile_id) {
  using Tile = OnesweepTile<Policy, K, V, Offset>;
  constexpr int kTileItems = Tile::kTileItems;
  constexpr int kDigits = Tile::kDigits;
  static_assert(kDigits <= Tile::kThreads, "the pass kernel needs a thread per digit");
  if (trivial == kPassSkipped) return;
  if (threadIdx.x < kDigits) {
    for (unsigned row = blockIdx.x; row < pass.next_lookback_tiles; row += gridDim.x) {
      pass.next_lookback.reset(row, threadIdx.x);
    }
  }
  if (trivial != 0) {
    const Offset begin = static_cast<Offset>(blockIdx.x) * kTileItems;
    const int valid = pass.n - begin < static_cast<Offset>(kTileItems) ? static_cast<int>(pass.n - begin) : kTileItems;
    copy_tile_through<Tile>(pass.buffers, begin, static_cast<size_t>(pass.portion_begin) + begin, valid);
    return;
  }

  const unsigned tile = take_work(pass.tile_counter, tile_id);
  const Offset tile_begin = static_cast<Offset>(tile) * kTileItems;
  const int valid =
      pass.n - tile_begin < static_cast<Offset>(kTileItems) ? static_cast<int>(pass.n - tile_begin) : kTileItems;
  // Full tiles without special keys (every integer key) take the plain body; the last tile, and every tile when
  // some float is a NaN or -0.0, the general one. A third body for full tiles with special keys would make the
  // kernel much larger and every pass slower to start.
  if (valid == kTileItems && (!RadixKey<K>::kHasSpecialKeys || *pass.special_keys == 0)) {
    onesweep_tile<Policy, K, V, true, Offset>(pass, storage, tile, kTileItems);
  } else {
    onesweep_tile<Policy, K, V, false, Offset>(pass, storage, tile, valid);
  }
}

template <class Policy, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    onesweep_pass_kernel(OnesweepPass<Policy::radix_bits, K, V, Offset> pass) {
  __shared__ typename OnesweepTile<Policy, K, V, Offset>::TempStorage storage;
  __shared__ unsigned tile_id;
  wait_for_prior_grids();
  allow_dependent_grids();
  onesweep_pass_block<Policy, K, V, Offset>(pass, *pass.trivial, storage, tile_id);
}

/// One launch that serves two sorts' passes over the same tiles, of which an earlier kernel of the stream marked one
/// kPassSkipped (its trivial flag): the other one runs. The plain call's two paths (radix_sort_auto.cuh) share their
/// first passes' launches this way, so the path not taken costs no launch there. The choice is the flags
/// themselves: where `first` runs, a block waits for memory once before its tile, as in the plain kernel (the
/// compiler reads the second flag only where the first is skipped; a word read first to choose, then the chosen
/// pass's flag, made every ranking pass a few percent slower). The arguments are __grid_constant__: one body
/// reads the chosen pass's where they lie, among the kernel's parameters.
template <class Policy, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    onesweep_either_pass_kernel(const __grid_constant__ OnesweepPass<Policy::radix_bits, K, V, Offset> first,
                                const __grid_constant__ OnesweepPass<Policy::radix_bits, K, V, Offset> second) {
  __shared__ typename OnesweepTile<Policy, K, V, Offset>::TempStorage storage;
  __shared__ unsigned tile_id;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned first_trivial = *first.trivial;
  const unsigned second_trivial = *second.trivial;
  const bool take_second = first_trivial == kPassSkipped;
  onesweep_pass_block<Policy, K, V, Offset>(take_second ? second : first,
                                            take_second ? second_trivial : first_trivial, storage, tile_id);
}

/// The shape of an Onesweep sort of n keys over [begin_bit, end_bit) with Policy's tiles: its passes, tiles and
/// portions (equal tile counts, the last one may have fewer keys; each launch clears the next one's look-back
/// words, which a launch of a few tiles would do slowly), and its own parts of the temporary storage.
template <class Policy, class K, class V, class Offset>
struct OnesweepLayout {
  using Tile = OnesweepTile<Policy, K, V, Offset>;
  using LookBack = OnesweepLookBack<Policy::radix_bits>;
  static constexpr int kDigits = Tile::kDigits;
  static_assert(Policy::portion_max_items >= Tile::kTileItems && Policy::portion_max_items <= kOnesweepPortionMaxItems,
                "a portion holds whole tiles and its counts fit in a look-back word");
  /// The parts: the counters (histograms[portion][pass][digit], each portion counted apart so no count passes
  /// 2^30; the tile counters [pass][portion]; the special-key flag; `extra_counters` words for the caller), all
  /// cleared by one memset; the digit starts [pass][portion][digit]; the trivial-pass flags; two look-back areas.
  enum Part : int { kCountersPart, kStartsPart, kTrivialPart, kLookBackPart, kParts };

  OnesweepLayout(size_t n, int begin_bit, int end_bit, size_t extra_counters = 0)
      : n(n), num_passes(radix_passes(begin_bit, end_bit, Policy::radix_bits)) {
    const size_t num_tiles = (n + Tile::kTileItems - 1) / Tile::kTileItems;
    const size_t max_portion_tiles = Policy::portion_max_items / Tile::kTileItems;
    const size_t fewest_portions = std::max<size_t>(1, (num_tiles + max_portion_tiles - 1) / max_portion_tiles);
    portion_tiles = std::max<size_t>(1, (num_tiles + fewest_portions - 1) / fewest_portions);
    portion_items = portion_tiles * Tile::kTileItems;
    num_portions = static_cast<int>(std::max<size_t>(1, (num_tiles + portion_tiles - 1) / portion_tiles));
    portion_words = static_cast<size_t>(num_passes) * kDigits;
    histogram_words = portion_words * num_portions;
    launches = static_cast<size_t>(num_passes) * num_portions;
    counter_words = histogram_words + launches + 1 + extra_counters;
    pass_starts = static_cast<size_t>(num_portions) * kDigits;
  }

  void sizes(size_t (&bytes)[kParts]) const {
    bytes[kCountersPart] = counter_words * sizeof(unsigned);
    bytes[kStartsPart] = histogram_words * sizeof(Offset);
    bytes[kTrivialPart] = num_passes * sizeof(unsigned);
    bytes[kLookBackPart] = 2 * LookBack::bytes(portion_tiles);
  }

  /// Where a sort's state lies in the parts.
  struct State {
    unsigned* histograms;
    unsigned* tile_counters;
    unsigned* special_keys;
    /// The caller's extra counters, cleared with the rest.
    unsigned* extra_counters;
    Offset* digit_starts;
    unsigned* trivial;
    LookBack lookback[2];
  };
  State state(void* const (&parts)[kParts]) const {
    auto* counters = static_cast<unsigned*>(parts[kCountersPart]);
    auto* lookback = static_cast<unsigned*>(parts[kLookBackPart]);
    return {counters,
            counters + histogram_words,
            counters + histogram_words + launches,
            counters + histogram_words + launches + 1,
            static_cast<Offset*>(parts[kStartsPart]),
            static_cast<unsigned*>(parts[kTrivialPart]),
            {LookBack(lookback), LookBack(lookback).from(portion_tiles)}};
  }
  /// Pass p's digit starts for portion q.
  Offset* starts(const State& state, int pass, int q) const {
    return state.digit_starts + pass * pass_starts + q * kDigits;
  }
  /// The number of keys of portion q.
  size_t portion_count(size_t q) const { return std::min(portion_items, n - q * portion_items); }

  size_t n;
  int num_passes;
  size_t portion_tiles, portion_items;
  int num_portions;
  size_t portion_words, histogram_words, launches, counter_words, pass_starts;
};

/// Onesweep's first two kernels (after clearing the counters): the digits of every pass counted in one read of
/// keys[0, n) (the table's histogram shape for n; the first launch also clears the first pass's look-back), then
/// every pass's digit starts and trivial flag.
template <class Table, class Policy, class K, class V, class Offset>
cudaError_t count_onesweep_digits(const OnesweepLayout<Policy, K, V, Offset>& layout,
                                  const typename OnesweepLayout<Policy, K, V, Offset>::State& state, const K* keys,
                                  Order order, int begin_bit, int end_bit, cudaStream_t stream) {
  using Histogram = typename Table::template OnesweepHistogram<K>;
  constexpr int kDigits = OnesweepLayout<Policy, K, V, Offset>::kDigits;
  PRIMS_TRY(cudaMemsetAsync(state.histograms, 0, layout.counter_words * sizeof(unsigned), stream));
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  auto count_digits = [&](auto shape) -> cudaError_t {
    using Shape = decltype(shape);
    static_assert(fits_shared_memory<Table>(Shape::template shared_bytes<K>(Policy::radix_bits)),
                  "the histogram's counters fit the table's shared memory");
    constexpr size_t kTile = static_cast<size_t>(Shape::threads) * Shape::items;
    for (int q = 0; q < layout.num_portions; ++q) {
      const size_t count = layout.portion_count(q);
      const size_t grid =
          std::min(static_cast<size_t>(multiprocessors) * Shape::blocks_per_sm, (count + kTile - 1) / kTile);
      PRIMS_TRY(launch(onesweep_histogram_kernel<Policy, Shape, K>, static_cast<unsigned>(grid), Shape::threads,
                       Shape::template shared_bytes<K>(Policy::radix_bits), stream, keys + q * layout.portion_items,
                       count, order, begin_bit, end_bit, state.histograms + q * layout.portion_words,
                       state.special_keys, state.lookback[0], q == 0 ? layout.portion_tiles : 0));
    }
    return cudaSuccess;
  };
  if (layout.n >= Histogram::wide_min_items) {
    PRIMS_TRY(count_digits(typename Histogram::Wide{}));
  } else {
    PRIMS_TRY(count_digits(typename Histogram::Small{}));
  }
  return launch(onesweep_digit_starts_kernel<Policy, Offset>, layout.num_passes, kDigits, 0, stream,
                static_cast<const unsigned*>(state.histograms), state.digit_starts, state.trivial,
                static_cast<Offset>(layout.n), layout.num_portions, layout.portion_words, layout.pass_starts);
}

/// The arguments of launch k of `num_passes` passes over the layout's tiles, one launch a portion of a pass: pass p
/// reads and writes buffers.pass(p), takes its digit from digit_of(p), its portion q's digit starts from
/// starts_of(p, q), its trivial flag from trivial_of(p) (kPassSkipped: the launch does nothing) and its tile
/// counters from tile_counters[p * portions + q]. Launch k looks back over the layout's look-back area k % 2 and
/// clears the other for launch k + 1; the histogram kernel clears area 0 for the first.
template <class Policy, class K, class V, class Offset, class DigitOf, class StartsOf, class TrivialOf>
OnesweepPass<Policy::radix_bits, K, V, Offset> onesweep_pass_args(
    const OnesweepLayout<Policy, K, V, Offset>& layout, const typename OnesweepLayout<Policy, K, V, Offset>::State& state,
    const SortBuffers<K, V>& buffers, int num_passes, size_t k, DigitOf& digit_of, StartsOf& starts_of,
    TrivialOf& trivial_of, unsigned* tile_counters) {
  using Tile = OnesweepTile<Policy, K, V, Offset>;
  const int portions = layout.num_portions;
  const size_t launches = static_cast<size_t>(num_passes) * portions;
  const int pass = static_cast<int>(k / portions);
  const int q = static_cast<int>(k % portions);
  const size_t first = q * layout.portion_items;
  const size_t count = layout.portion_count(q);
  PassBuffers<K, V> portion = buffers.pass(pass);
  portion.keys_in += first;
  if constexpr (kHasValues<V>) portion.values_in += first;
  const size_t next_count = layout.portion_count((k + 1) % portions);
  return {portion,
          static_cast<Offset>(first),
          static_cast<Offset>(count),
          digit_of(pass),
          starts_of(pass, q),
          q + 1 < portions ? starts_of(pass, q + 1) : nullptr,
          trivial_of(pass),
          state.special_keys,
          tile_counters + k,
          state.lookback[k % 2],
          state.lookback[(k + 1) % 2],
          k + 1 < launches ? static_cast<unsigned>((next_count + Tile::kTileItems - 1) / Tile::kTileItems) : 0u};
}

/// The blocks of a pass launch: one a tile of portion q.
template <class Policy, class K, class V, class Offset>
unsigned onesweep_pass_blocks(const OnesweepLayout<Policy, K, V, Offset>& layout, int q) {
  using Tile = OnesweepTile<Policy, K, V, Offset>;
  return static_cast<unsigned>((layout.portion_count(q) + Tile::kTileItems - 1) / Tile::kTileItems);
}

/// Launches passes first_pass .. num_passes - 1 of `num_passes` (onesweep_pass_args says what each does).
template <class Policy, class K, class V, class Offset, class DigitOf, class StartsOf, class TrivialOf>
cudaError_t launch_onesweep_passes(const OnesweepLayout<Policy, K, V, Offset>& layout,
                                   const typename OnesweepLayout<Policy, K, V, Offset>::State& state,
                                   const SortBuffers<K, V>& buffers, int num_passes, DigitOf digit_of,
                                   StartsOf starts_of, TrivialOf trivial_of, unsigned* tile_counters,
                                   cudaStream_t stream, int first_pass = 0) {
  const int portions = layout.num_portions;
  const size_t launches = static_cast<size_t>(num_passes) * portions;
  for (size_t k = static_cast<size_t>(first_pass) * portions; k < launches; ++k) {
    PRIMS_TRY(launch(onesweep_pass_kernel<Policy, K, V, Offset>,
                     onesweep_pass_blocks(layout, static_cast<int>(k % portions)), Policy::block_threads, 0, stream,
                     onesweep_pass_args(layout, state, buffers, num_passes, k, digit_of, starts_of, trivial_of,
                                        tile_counters)));
  }
  return cudaSuccess;
}

/// Onesweep over [begin_bit, end_bit) with positions of type Offset, its passes' Policy and the table's digit
/// histogram. With `bucket_offsets` (a one-pass sort only), also writes where each of the pass's
/// 2^(end_bit - begin_bit) digits starts, then n.
template <class Table, class K, class V, class Policy, class Offset>
cudaError_t onesweep_sort_with_offsets(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                                       int begin_bit, int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  using Layout = OnesweepLayout<Policy, K, V, Offset>;
  const Layout layout(n, begin_bit, end_bit);
  size_t sizes[Layout::kParts];
  layout.sizes(sizes);
  std::optional<SortBuffers<K, V>> buffers;
  void* parts[Layout::kParts];
  PRIMS_TRY(sort_prologue(temp, temp_bytes, io, n, layout.num_passes, sizes, parts, buffers, stream));
  if (!buffers) return cudaSuccess;
  const typename Layout::State state = layout.state(parts);
  PRIMS_TRY((count_onesweep_digits<Table>(layout, state, io.keys_in, order, begin_bit, end_bit, stream)));
  if (bucket_offsets != nullptr) {
    PRIMS_TRY(write_bucket_offsets(static_cast<const Offset*>(state.digit_starts), 1, bucket_offsets,
                                   1 << (end_bit - begin_bit), n, stream));
  }
  PRIMS_TRY(launch_onesweep_passes(
      layout, state, *buffers, layout.num_passes,
      [&](int pass) { return pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass); },
      [&](int pass, int q) { return layout.starts(state, pass, q); },
      [&](int pass) { return static_cast<const unsigned*>(state.trivial + pass); }, state.tile_counters, stream));
  return buffers->finish(n, stream);
}

/// Onesweep with 32-bit positions below 2^32 keys and 64-bit ones from there on, with a table's passes' Policy.
template <class Table, class K, class V, class Policy>
cudaError_t onesweep_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                          int begin_bit, int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  if (n <= std::numeric_limits<unsigned>::max()) {
    return onesweep_sort_with_offsets<Table, K, V, Policy, unsigned>(temp, temp_bytes, io, n, order, begin_bit,
                                                                     end_bit, bucket_offsets, stream);
  }
  return onesweep_sort_with_offsets<Table, K, V, Policy, size_t>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                                 bucket_offsets, stream);
}

/// Calls `sort(policy)` with the table's Onesweep policy for n keys: the choice depends on n alone, so the size
/// query and the sort agree.
template <class Table, class K, class V, class Sort>
cudaError_t with_onesweep_policy(size_t n, Sort&& sort) {
  using Default = typename Table::template Onesweep<K, V>;
  using Small = typename Table::template OnesweepSmall<K, V>;
  if (n <= Small::max_items) return sort(Small{});
  using Medium = typename Table::template OnesweepMedium<K, V>;
  if constexpr (Medium::applies) {
    if (n < Medium::max_items) return sort(Medium{});
  }
  // Pairs of up to 4-byte items past OnesweepMedium's range take their own tiles, never the default ones (which
  // are then not compiled for them).
  using Pairs = typename Table::template OnesweepPairs<K, V>;
  if constexpr (Pairs::applies) {
    static_assert(Medium::applies, "OnesweepPairs starts where OnesweepMedium ends");
    if (n >= Pairs::large_min_items) return sort(typename Table::template OnesweepPairsLarge<K, V>{});
    return sort(Pairs{});
  } else {
    using MediumKeys = typename Table::template OnesweepMediumKeys<K, V>;
    if constexpr (MediumKeys::applies) {
      if (n < MediumKeys::max_items) return sort(MediumKeys{});
    }
    using Large = typename Table::template OnesweepLarge<K, V>;
    if constexpr (Large::items_per_thread != Default::items_per_thread) {
      if (n >= Large::min_items) return sort(Large{});
    }
    return sort(Default{});
  }
}

/// Onesweep with the table's policy for n keys.
template <class Table, class K, class V>
cudaError_t onesweep_sort_for_size(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                                   int begin_bit, int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  return with_onesweep_policy<Table, K, V>(n, [&](auto policy) {
    return onesweep_sort<Table, K, V, decltype(policy)>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                        bucket_offsets, stream);
  });
}

}  // namespace prims::detail::radix
