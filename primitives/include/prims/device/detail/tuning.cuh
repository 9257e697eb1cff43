#pragma once
// The tuning hub: every policy and size threshold of the device algorithms, one table per GPU generation, and the
// choice of a table at run time from the current device's compute capability and shared memory a block.
//
//   TuningSm90   sm_90: H100, H200. Tuned: each entry names the bench that chose it.
//   TuningSm100  sm_100 and later: B200 (227 KB a block, as Hopper). Hopper's entries; untuned.
//   TuningSm80   sm_80, sm_87: A100, Orin (163 KB a block). Hopper's entries, every one of which fits; untuned.
//   TuningSm86   sm_86, sm_89, sm_120: RTX 30xx/40xx/50xx, A40, L40S, RTX 6000 Ada (99 KB a block). Hopper's
//                entries where they fit; the digit histograms keep half the counter copies; untuned.
//
// A table is a struct of policy types. A table that keeps an entry of another inherits it, so both name the same
// type and its kernels are compiled once, whatever the number of tables. Every dispatcher runs under with_tuning()
// and takes its policies from the table it is handed; a dispatcher whose kernel uses more shared memory than a
// table's shared_bytes_per_block does not compile for that table (static_assert), and choices that depend on
// shared memory (the one-block sort's largest tile, the segmented sort's local class) are made per table at
// compile time.
// Tests force a table with tuning_override_for_tests() (tests/tuning_switch.cu: PRIMS_TEST_TUNING=sm80|sm86|sm90|
// sm100), so every table runs on an H100.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <type_traits>

#include "prims/util/sort_shapes.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/vector_load.cuh"

namespace prims::detail {

/// The GPU generations with a table of their own.
enum class Generation : int { Sm80, Sm86, Sm90, Sm100 };
inline constexpr int kGenerations = 4;

inline const char* generation_name(Generation generation) {
  switch (generation) {
    case Generation::Sm80: return "sm80";
    case Generation::Sm86: return "sm86";
    case Generation::Sm90: return "sm90";
    case Generation::Sm100: return "sm100";
  }
  return "unknown";
}

/// How an Onesweep pass of pairs brings its tile's values to their scatter: loaded into registers before the
/// look-back, or asked of the L2 cache before the look-back and loaded at the scatter (no registers held across it).
enum class OnesweepValuesFetch { Registers, L2BeforeLookBack };

/// The most keys of an Onesweep look-back portion: every count within it fits in a look-back word's 30 bits.
inline constexpr size_t kOnesweepPortionMaxItems = (size_t{1} << 30) - 1;

/// A digit histogram kernel's shape: THREADS threads a block, BLOCKS_PER_SM blocks an SM, COPIES copies of the
/// counters (lane l adds to copy l % COPIES), ITEMS keys a thread a step.
template <int THREADS, int BLOCKS_PER_SM, int COPIES, int ITEMS>
struct HistogramShape {
  static constexpr int threads = THREADS;
  static constexpr int blocks_per_sm = BLOCKS_PER_SM;
  static constexpr int copies = COPIES;
  static constexpr int items = ITEMS;

  /// Dynamic shared-memory bytes of the kernel for keys K and `radix_bits`-bit digits: every pass's counters.
  template <class K>
  static constexpr size_t shared_bytes(int radix_bits) {
    return static_cast<size_t>(radix_passes(0, RadixKey<K>::kBits, radix_bits)) * (size_t{1} << radix_bits) *
           sizeof(unsigned) * COPIES;
  }
};

/// Hopper's table (H100, H200): the tuned one.
struct TuningSm90 {
  static constexpr Generation generation = Generation::Sm90;
  /// The most shared memory a block may opt in to.
  static constexpr size_t shared_bytes_per_block = 227 * 1024;
  static constexpr bool tuned = true;

  /// The reduce kernels (H100: 132 SMs, 3 TB/s): 4 vector loads in flight per thread and
  /// 4 blocks of 256 threads per SM keep about 64 KB of loads in flight per SM.
  struct Reduce {
    static constexpr int block_threads = 256;
    static constexpr int vectors_per_thread = 4;
    static constexpr int blocks_per_sm = 4;
    /// Up to this many full tiles, one block does all the work in a single launch.
    static constexpr int single_block_max_tiles = 2;
  };

  /// The decoupled look-back (lookback.cuh) of every single-pass algorithm whose tile carries one value: the scan,
  /// the selections, the by-key family and top-k's splits take it as a base. Chosen with bench/tune_scan
  /// (docs/design-notes.md, "Scan").
  struct LookBack {
    /// Pause between two polls of predecessors that have not published yet, so spinning warps leave the SM's issue
    /// slots and the L2 to the blocks that are still loading.
    static constexpr unsigned look_back_wait_ns = 64;
    /// Tiles each lane of the look-back warp reads per poll: one poll covers 32 * this many predecessors. One: wider
    /// polls wait longer for the nearest predecessors.
    static constexpr int look_back_tiles_per_lane = 1;
    /// Bytes between two tiles' status words: one 32-byte L2 sector each. Neighbouring tiles publish and poll at
    /// the same moments; with words packed side by side (8 a sector for 4-byte types) every publish and every poll
    /// of a sector's tiles queue on the same sector; a sector each is enough, wider slots gain nothing.
    static constexpr int status_slot_bytes = 32;
  };

  /// The single-pass kernel (H100: 132 SMs, 3 TB/s) and items of type T. 256 threads. Fewer,
  /// larger tiles shorten the chain of look-backs that every tile's prefix travels along; more resident blocks keep
  /// more bytes in flight while some of them wait on their look-back. 4-byte items: 128 bytes a thread (32 KB tiles)
  /// with registers capped at 48 for 5 blocks an SM. 8-byte items: 176 bytes (44 KB tiles, near the 48 KB a block may
  /// stage in static shared memory), capped at 64 registers for 4 blocks. Larger tiles gain 4-byte items nothing at
  /// large sizes and cost them at a few waves of tiles; a sixth block an SM would spill registers. Other item sizes
  /// keep 32 KB tiles and the registers they need.
  /// Chosen with bench/tune_scan (docs/design-notes.md, "Scan").
  template <class T>
  struct SinglePassScan : LookBack {
    static constexpr int block_threads = 256;
    static constexpr int bytes_per_thread = sizeof(T) == 8 ? 176 : 128;
    /// Blocks an SM must be able to hold, which caps a thread's registers (65536 / (256 * blocks), rounded down to 8).
    static constexpr int min_blocks_per_sm = sizeof(T) == 4 ? 5 : sizeof(T) == 8 ? 4 : 1;
    /// How tiles are read and written (util/vector_load.cuh): every item is touched once, so loads are marked last
    /// use and stores evict-first, leaving the L2 to the look-back's status words and the loads still in flight.
    static constexpr CacheHint load_hint = CacheHint::LastUse;
    static constexpr CacheHint store_hint = CacheHint::LastUse;
  };

  /// The three reduce-then-scan kernels: 512 threads with 64 bytes each (32 KB tiles) and a grid
  /// of 4 blocks per SM, each walking a contiguous span of tiles.
  /// Chosen with bench/tune_scan (docs/design-notes.md, "Scan").
  struct ReduceThenScan {
    static constexpr int block_threads = 512;
    static constexpr int bytes_per_thread = 64;
    static constexpr int blocks_per_sm = 4;
  };

  /// The selections: 256 threads of 128 bytes of items each (32 four-byte items; larger tiles
  /// shorten the chain of look-backs), look-back as the scan's.
  /// Chosen with bench/bench_select (docs/design-notes.md, "Selections").
  template <class T>
  struct Select : LookBack {
    static constexpr int block_threads = 256;
    static constexpr int bytes_per_thread = 128;
    static constexpr int max_items_per_thread = 32;
    static constexpr CacheHint load_hint = CacheHint::Normal;
    /// partition_if's count of the kept items (a read only, as the reduce's): loads in flight a thread (16-byte
    /// vectors where the input is a pointer, items otherwise) and blocks an SM. 16 loads rather than 4: a count
    /// grid of 128 blocks or more made partition_if up to a third slower at i32 2^19-2^21 (the cause was not found;
    /// the count alone is not slower in ncu), and the same read in a quarter of the blocks is no slower elsewhere;
    /// up to count_few_blocks_max_bytes at most count_few_blocks blocks (docs/design-notes.md, "Selections";
    /// bench/results/2026-12-02-H200-bench_select-partition-count-grid.txt).
    static constexpr int count_loads_per_thread = 16;
    static constexpr int count_blocks_per_sm = 8;
    static constexpr size_t count_few_blocks_max_bytes = size_t{8} << 20;
    static constexpr size_t count_few_blocks = 64;
    /// Up to this many bytes of items the selections take SelectSmall's tiles.
    static constexpr size_t small_max_bytes = size_t{4} << 20;
  };

  /// The selections of at most Select::small_max_bytes of items: 64 bytes a thread (16 four-byte items), twice as
  /// many tiles, so that a small input spreads over more blocks (i32 2^16-2^20 on an H200: select_if 1.09x ->
  /// 1.18x CUB at 2^16, partition_if 0.92x -> 1.06x; 2-16% slower from 2^22; bench/results/2026-12-02-H200-
  /// bench_select-tiles.txt).
  template <class T>
  struct SelectSmall : Select<T> {
    static constexpr int bytes_per_thread = 64;
  };

  /// Unique_by_key: as the selections', with 160 bytes of keys and values a thread (20 items of
  /// 4-byte keys and values) and loads marked last use. Chosen with bench/bench_select (docs/design-notes.md,
  /// "Selections").
  template <class K, class V>
  struct SelectByKey : LookBack {
    static constexpr int block_threads = 256;
    static constexpr int bytes_per_thread = 160;
    static constexpr int max_items_per_thread = 32;
    static constexpr CacheHint load_hint = CacheHint::LastUse;
  };

  /// The by-key family: 256 threads, 160 bytes of keys and values a thread (20 items of 4-byte keys and values:
  /// larger tiles shorten the chain of look-backs), loads and stores marked last use (as the scan's), look-back as
  /// the scan's. Registers capped for 4 blocks an SM where keys and values are 4 bytes each (tune_by_key,
  /// bench/results/2026-12-01-H200-tune_by_key.txt), 3 for other widths, which spill at 4 (docs/design-notes.md,
  /// "By key").
  template <class K, class V>
  struct ByKey : LookBack {
    static constexpr int block_threads = 256;
    static constexpr int bytes_per_thread = 160;
    static constexpr int max_items_per_thread = 20;
    static constexpr int min_blocks_per_sm = sizeof(K) == 4 && sizeof(V) == 4 ? 4 : 3;
    static constexpr CacheHint load_hint = CacheHint::LastUse;
    static constexpr CacheHint store_hint = CacheHint::LastUse;
    /// Up to this many bytes of keys and values the tiles hold small_bytes_per_thread a thread (ByKeySmallTiles,
    /// 12 items of 4-byte keys and values): small inputs spread over more blocks. Chosen with bench/bench_by_key
    /// against 64 bytes and a 16 MB limit (bench/results/2026-12-02-H200-bench_by_key-small-tiles.txt).
    static constexpr size_t small_max_bytes = size_t{4} << 20;
    static constexpr int small_bytes_per_thread = 96;
  };

  /// The histograms: 256 threads, 16 samples a thread in flight (iterators), and up to 32 KB of a block's shared
  /// memory for copies of its bins (32 copies of 256 bins). Chosen with bench/bench_histogram
  /// (docs/design-notes.md, "Histograms").
  struct Histogram {
    static constexpr int block_threads = 256;
    static constexpr int items_per_thread = 16;
    static constexpr size_t bin_copy_bytes = 32 * 1024;
  };

  /// The segmented reduce: warps take segments of up to 1024 items (longer ones wait on a warp's
  /// few loads in flight: 256 segments of 4096 items ran at 0.28x CUB with 8192), 8 loads in flight a thread.
  struct SegmentedReduce {
    /// Up to this many times as many segments as blocks fit at once: a block a segment, one launch.
    static constexpr size_t block_a_segment_fills = 4;
    static constexpr int block_threads = 256;
    static constexpr int loads_per_thread = 8;
    /// Where the segments take more than one fill of blocks: 2 loads a thread, whose fewer registers let more
    /// blocks share an SM (bench/results/2026-11-27-H100-bench_segmented_reduce-packed-old-new.txt), in blocks of
    /// 128 threads: such segments are short on average, and a block of 256 left most of its warps without items and
    /// waiting at the block's combine (bench/results/2026-12-02-H200-bench_segmented_reduce-packed-threads.txt).
    static constexpr int packed_loads_per_thread = 2;
    static constexpr int packed_block_threads = 128;
    static constexpr size_t warp_segment_items = 1024;
  };

  /// Onesweep's passes, for uniform and low-entropy keys alike: 384 threads capped at 80 registers, so two blocks
  /// share an SM and one block's look-back wait is covered by the other's work. Keys a thread: 24 for keys-only
  /// sorts of up to 4-byte keys (a 36 KB tile), 20 for pairs of 4-byte items, 15 for 8-byte items; from inputs of
  /// 2^26 keys on, keys-only sorts of up to 4-byte keys take 28 (integers) or 26 (floats) (OnesweepLarge). Bigger
  /// tiles pay off at large inputs until registers spill (float keys spill at 28: their tiles keep two digit
  /// paths), smaller ones below (OnesweepSmall, OnesweepMedium, OnesweepMediumKeys). The plain sort's pairs of up to
  /// 4-byte items take OnesweepPairs from 2^20 keys on.
  /// Ranking finds equal digits with one ballot per digit bit: __match_any_sync saturates its pipe, and ORing lane
  /// bits into a shared table of digit masks puts many lanes' atomics on one word when keys have low entropy. A
  /// look-back step reads 4 earlier tiles' words at once.
  /// Chosen with bench/tune_sort (docs/design-notes.md, "Radix sort").
  template <class K, class V>
  struct Onesweep {
    static constexpr int radix_bits = 8;
    static constexpr int block_threads = 384;
    static constexpr int items_per_thread = !kHasValues<V> && sizeof(K) <= 4 ? 24
                                            : kSortItemBytes<K, V> <= 4      ? 20
                                            : kSortItemBytes<K, V> <= 8      ? 15
                                                                             : 5;
    static constexpr int min_blocks_per_sm = 2;
    static constexpr int lookback_words_per_step = 4;
    static constexpr bool rank_with_match_any = false;
    static constexpr OnesweepValuesFetch values_fetch = OnesweepValuesFetch::Registers;
    /// Keys of a look-back portion at most (tests make it small to cross portions with few keys).
    static constexpr size_t portion_max_items = kOnesweepPortionMaxItems;
  };

  /// Onesweep's digit histogram (all passes' digits in one read of the keys): a persistent grid reading 16-byte
  /// vectors, 64 bytes of keys a thread per tile, in one of two shapes by input size.
  /// Chosen with bench/tune_sort (docs/design-notes.md, "Radix sort").
  template <class K>
  struct OnesweepHistogram {
    /// Small inputs: small blocks and two copies of the counters (the wide shape's setup costs more than it saves).
    using Small = HistogramShape<256, 4, 2, sizeof(K) <= 4 ? 16 : 8>;
    /// From wide_min_items keys on: one block an SM with a copy of the counters for every lane (16 for 8-byte
    /// keys, to fit 128 KB), so a warp's atomics never collide, however skewed the digits.
    using Wide = HistogramShape<1024, 1, sizeof(K) <= 4 ? 32 : 16, sizeof(K) <= 4 ? 16 : 8>;
    static constexpr size_t wide_min_items = size_t{1} << 26;
  };

  /// The segmented Onesweep passes' histogram (device/detail/segmented_onesweep.cuh) and the distributed sort's
  /// counting: one block an SM, a copy of the counters for every lane (16 for 8-byte keys, to fit 128 KB).
  /// THREADS: fewer leave an SM room for another kernel's block beside it (the distributed sort's copies ahead).
  template <class K, int THREADS = 1024>
  using SegmentedOnesweepHistogram = HistogramShape<THREADS, 1, sizeof(K) <= 4 ? 32 : 16, sizeof(K) <= 4 ? 16 : 8>;

  /// Onesweep for inputs of at least `min_items` keys: bigger tiles for keys-only sorts of up to 4-byte
  /// keys, faster on large inputs only (26 keys a thread for floats, which spill at 28).
  /// Chosen with bench/tune_sort (docs/design-notes.md, "Radix sort").
  template <class K, class V>
  struct OnesweepLarge : Onesweep<K, V> {
    static constexpr size_t min_items = size_t{1} << 26;
    static constexpr int items_per_thread = kHasValues<V> || sizeof(K) > 4
                                                ? Onesweep<K, V>::items_per_thread
                                            : std::is_integral_v<K> ? 28
                                                                    : 26;
  };

  /// The plain sort's (and the partition's) Onesweep for pairs of up to 4-byte items from OnesweepMedium's max_items
  /// keys on (below, values through L2 were no faster): 512 threads of 16 (64 registers), whose values come through
  /// L2 at the scatter rather than wait in registers over the look-back; from `large_min_items` on, 384 of 24. The
  /// segmented Onesweep passes keep Onesweep's tiles (these were slower on large segments).
  /// Chosen with bench/tune_sort and bench_sort (bench/results/2026-11-27-H100-tune_sort-pairs-values-through-l2.txt,
  /// ...-bench_sort-pairs-tiles-old-new.txt, ...-pairs-tiles-elsewhere.txt).
  template <class K, class V>
  struct OnesweepPairs : Onesweep<K, V> {
    static constexpr bool applies = kHasValues<V> && kSortItemBytes<K, V> <= 4;
    static constexpr size_t large_min_items = size_t{1} << 26;
    static constexpr int block_threads = 512;
    static constexpr int items_per_thread = 16;
    static constexpr OnesweepValuesFetch values_fetch = OnesweepValuesFetch::L2BeforeLookBack;
  };
  template <class K, class V>
  struct OnesweepPairsLarge : OnesweepPairs<K, V> {
    static constexpr int block_threads = 384;
    static constexpr int items_per_thread = 24;
  };

  /// Onesweep for inputs of at most `max_items` keys: tiles of 256 threads x 8 items (fewer where the
  /// default policy has fewer: 5 with 16-byte values), four blocks an SM. A pass over few tiles waits on each
  /// tile's ranking, so small inputs want many small tiles; above max_items OnesweepMedium's are faster.
  /// Chosen with bench/tune_sort (docs/design-notes.md, "Small inputs: the one-block sort").
  template <class K, class V>
  struct OnesweepSmall : Onesweep<K, V> {
    static constexpr size_t max_items = size_t{1} << 18;
    static constexpr int block_threads = 256;
    static constexpr int items_per_thread =
        Onesweep<K, V>::items_per_thread < 8 ? Onesweep<K, V>::items_per_thread : 8;
    static constexpr int min_blocks_per_sm = 4;
  };

  /// Onesweep above OnesweepSmall's range and below `max_items` keys, where the default tiles are fewer than the
  /// GPU's block slots (2^19 u32 keys are 57 tiles of 9216) and the small ones too many to amortize a tile's
  /// look-back: items of up to 4 bytes (keys alone or pairs) in 256 threads of 16, three blocks an SM, below
  /// 2^20; 8-byte items (8-byte keys, or 8-byte values) in 512 threads of 8 below 2^22. 16-byte values keep the
  /// default tiles (not measured).
  /// Chosen with bench/tune_sort (bench/results/2026-11-27-H100-tune_sort-medium-tiles.txt).
  template <class K, class V>
  struct OnesweepMedium : Onesweep<K, V> {
    static constexpr bool narrow_items = kSortItemBytes<K, V> <= 4;
    static constexpr bool applies = kSortItemBytes<K, V> <= 8;
    static constexpr size_t max_items = narrow_items ? size_t{1} << 20 : size_t{1} << 22;
    static constexpr int block_threads = narrow_items ? 256 : 512;
    static constexpr int items_per_thread = narrow_items ? 16 : 8;
    static constexpr int min_blocks_per_sm = narrow_items ? 3 : 2;
  };

  /// Keys alone of up to 4 bytes from OnesweepMedium's range up to `max_items` keys (excluded): 512 threads of 16,
  /// two blocks an SM. From max_items on the default tiles are as fast or faster.
  /// Chosen with bench/tune_sort (bench/results/2026-11-27-H100-tune_sort-medium-tiles.txt).
  template <class K, class V>
  struct OnesweepMediumKeys : Onesweep<K, V> {
    static constexpr bool applies = !kHasValues<V> && sizeof(K) <= 4;
    static constexpr size_t max_items = size_t{1} << 24;
    static constexpr int block_threads = 512;
    static constexpr int items_per_thread = 16;
    static constexpr int min_blocks_per_sm = 2;
  };

  /// The one-block sort: four block shapes by input size, the smallest whose tile holds n runs.
  /// A lone block is bound by its passes' latency, so a tile is as small as n allows and its items spread over more
  /// than 512 threads only where the tile needs them (a digit thread sums one counter per warp).
  /// Chosen by timing each shape (docs/design-notes.md, "Small inputs: the one-block sort").
  template <class K, class V>
  struct OneBlock {
    static constexpr int radix_bits = 8;
    static constexpr bool rank_with_match_any = false;
    /// Items a thread in the largest shape: 64 KB of the widest item (key or value) in 1024 threads.
    static constexpr int items_per_thread = kSortItemBytes<K, V> <= 4 ? 16 : kSortItemBytes<K, V> <= 8 ? 8 : 4;
    using small_shape = TileShape<256, items_per_thread / 4, 1>;
    using medium_shape = TileShape<512, items_per_thread / 2, 1>;
    using large_shape = TileShape<512, items_per_thread, 1>;
    using largest_shape = TileShape<1024, items_per_thread, 1>;
    /// Where Auto stops taking the one-block sort, beyond which Onesweep with its small tiles is faster: keys alone up
    /// to the large shape, pairs up to the medium shape.
    /// Chosen with bench/bench_sort (docs/design-notes.md, "Small inputs: the one-block sort").
    static constexpr size_t auto_max_items = kHasValues<V> ? medium_shape::tile_items : large_shape::tile_items;
  };

  /// TileCounts: a tile of 16 KB of the widest item.
  template <class K, class V>
  struct TileCounts {
    static constexpr int radix_bits = 8;
    static constexpr int block_threads = 256;
    static constexpr int items_per_thread = kSortItemBytes<K, V> <= 4 ? 16 : kSortItemBytes<K, V> <= 8 ? 8 : 4;
    static constexpr bool rank_with_match_any = false;
  };

  /// The plain radix partition: TileCounts up to tile_counts_max_items, Onesweep above. The faster of the two, but
  /// for the smallest inputs, where Onesweep's small tiles lead by a little: a single pass pays Onesweep's histogram
  /// and look-back set-up without the passes that amortize them in a sort. Depends on n alone, so the size query and
  /// the run agree. Chosen with bench/bench_partition (docs/design-notes.md, "Radix partition").
  template <class V>
  struct RadixPartition {
    static constexpr size_t tile_counts_max_items = kHasValues<V> ? size_t{1} << 23 : size_t{1} << 24;
  };

  /// The hybrid sort: top bits until buckets average 16 keys (8 for pairs), or a pass fewer where buckets stay at
  /// 32 keys or fewer on average. Small buckets go to the segmented sort's warp classes (a bitonic network in
  /// registers, a few lanes a bucket: 4 up to 16 keys, 8 up to 32; 8-byte keys with values by counting), which
  /// sort every bit of a key for the cost of one read and one write. A top pass costs more than doubling the
  /// buckets up to 32 keys (u64 keys and u64/u32 pairs of 2^28 and 2^29 take three passes, not four); keys alone
  /// sort faster with buckets of 16 than with buckets of 8 and one more top bit, pairs (by counting: a key's work
  /// grows with its bucket) with buckets of 8. Chosen with bench/tune_sort, cases "tune_hybrid", and the trials of
  /// bench/results/2026-12-04-H200-hybrid-buckets.txt (docs/design-notes.md, "The hybrid sort").
  template <class K, class V>
  struct Hybrid {
    /// The bits of a top pass: Onesweep's digit.
    static constexpr int radix_bits = Onesweep<K, V>::radix_bits;
    /// The average bucket the top bits leave: 2^4 keys, 2^3 with values.
    static constexpr int bucket_items_log2 = kHasValues<V> ? 3 : 4;
    /// A pass fewer where the buckets it leaves average at most 2^5 keys.
    static constexpr int max_bucket_items_log2 = 5;
    /// The most top bits: for 64-bit keys four Onesweep passes may run (past 2^29 keys); 16- and 32-bit keys keep a
    /// pass fewer than LSD.
    static constexpr int max_msd_bits = std::max(8, std::min(32, RadixKey<K>::kBits - 8));
    /// The buckets are sorted on the whole range rather than the bits below the prefix they share: the same order,
    /// and keys without values sorted on every bit take the segmented sort's plain words (no index).
    static constexpr bool buckets_on_whole_range = true;
  };

  /// The plain call's choice between Onesweep and the hybrid, made on the device from the digit histograms
  /// (radix_sort_auto.cuh): for which keys and sizes it is made, and the largest expected bucket (keys sharing a
  /// random key's top bits: 8 to 16 for evenly spread keys, thousands for the benches' skewed ones) that still takes
  /// the hybrid. 8-byte keys, with values too: only there does the hybrid pay. Below min_items the launches of the
  /// path not taken cost skewed keys too large a share of Onesweep's time.
  /// Chosen in bench/results/2026-11-27-H100-bench_sort-auto-choice-first.txt.
  template <class K, class V>
  struct AutoChoice {
    static constexpr bool enabled = sizeof(K) == 8;
    static constexpr size_t min_items = size_t{1} << 26;
    static constexpr double max_expected_bucket = 64;
  };

  /// The segmented sort: the block shape and tile of TileCounts (16 KB of the widest item), the
  /// counting class's limits, and the slot sizes of the packed classes.
  template <class K, class V>
  struct SegmentedSort {
    static constexpr int radix_bits = 8;
    static constexpr int block_threads = 256;
    static constexpr int items_per_thread = kSortItemBytes<K, V> <= 4 ? 16 : kSortItemBytes<K, V> <= 8 ? 8 : 4;
    static constexpr bool rank_with_match_any = false;
    /// The large kernel's registers capped at 128 a thread, so two blocks share an SM and one block's barriers are
    /// covered (the tile classes' blocks have their own shapes below).
    static constexpr int min_blocks_per_sm = 2;
    static constexpr int tile_items = block_threads * items_per_thread;
    /// Segments of up to counting_max_items keys are sorted in registers or shared memory, in three classes: up to
    /// counting_tiny_items keys, up to counting_small_items and up to counting_max_items (below this size the radix
    /// passes of a packed tile cost more). By warps (SegmentedWarpSort), a segment to warp_sort_tiny_lanes,
    /// warp_sort_small_lanes and warp_sort_lanes lanes; 8-byte keys that need their index to sort stably by counting
    /// (SegmentedCountingSort), counting_capacity / the class's limit segments a block, bound by the comparisons, so
    /// blocks are small and many to an SM. The lanes a segment hold 4 items each: fewer registers a lane (more warps an
    /// SM) pay for the network's shuffles up to there. A class of its own for 17 to 32 keys halves their network
    /// (the hybrid sort's buckets of 16 keys on average fall on both sides of 16).
    /// Chosen with bench/bench_segmented_sort (docs/design-notes.md, "Segmented radix sort") and the hybrid sort.
    static constexpr int counting_tiny_items = 16;
    static constexpr int counting_small_items = 32;
    static constexpr int counting_max_items = 64;
    static constexpr int warp_sort_tiny_lanes = 4;
    static constexpr int warp_sort_small_lanes = 8;
    static constexpr int warp_sort_lanes = 16;
    static constexpr int counting_capacity = 2048;
    static constexpr int counting_blocks_per_sm = kSortItemBytes<K, V> <= 8 ? 6 : 4;
    /// Then segments of up to tile_items / 16 keys share a tile 16 at a time, and up to tile_items / 4 four at a time.
    static constexpr int packed16_slot_items = tile_items / 16;
    static constexpr int packed4_slot_items = tile_items / 4;
    /// The blocks of the packed and tile classes: the keys alone in registers (the origins stay in shared memory,
    /// TileSort), capped at 64 registers so four blocks share an SM: the ranking is bound by its instructions'
    /// latency, so more warps an SM pay.
    /// Chosen with bench/bench_segmented_sort (docs/design-notes.md, "Segmented radix sort").
    using tile_shape = TileShape<block_threads, items_per_thread, 4>;
    /// Segments of up to local_tile_items keys (four tiles) are sorted one to a block of local_shape, the whole
    /// segment in registers and shared memory (2^14 keys of up to 4 bytes: 160 KB with their origins and the
    /// ranking's counters): each key and value is read and written once, where the large class and the shared
    /// Onesweep passes go through global memory every pass. 1024 threads of 16 keys rather than 512 of 32: more warps
    /// to cover the ranking's latency.
    /// Chosen with bench/bench_segmented_sort (docs/design-notes.md, "Segmented radix sort").
    using local_shape = TileShape<1024, items_per_thread, 1>;
    static constexpr int local_tile_items = local_shape::tile_items;
    /// Segments of more than local_tile_items and onesweep_min_items keys (and fewer than kOnesweepPortionMaxItems)
    /// are sorted by Onesweep passes shared by all of them (segmented_onesweep.cuh), many blocks a segment; those
    /// between the two limits (keys of up to 4 bytes: 2^14 to 2^15; none for pairs of up to 8-byte items) by one block
    /// each through global memory: up to onesweep_min_items keys one block a segment is the faster, above it the
    /// shared passes.
    /// Chosen with bench/bench_segmented_sort (docs/design-notes.md, "Segmented radix sort").
    static constexpr size_t onesweep_min_items = kHasValues<V> ? size_t{1} << 13 : size_t{1} << 15;
    /// Those passes take Onesweep's large tiles (where they differ) from its size limit on, when segments average
    /// this many keys or more; smaller segments lose more to their last, partial tiles than the large tiles gain.
    /// Chosen with bench/bench_segmented_sort (bench/results/2026-11-25-H100-bench_segmented_sort-onesweep-class.txt).
    static constexpr size_t onesweep_large_tiles_mean_items = size_t{1} << 20;
  };

  /// Top-k: the splits take the selections' tiles (256 threads, 128 bytes of keys and values a
  /// thread) on a persistent grid of at least four blocks an SM (64 registers a thread: the split waits on its loads
  /// and its look-back, so more blocks pay; two an SM, as 98 registers allow, took 1.2x the time, and smaller tiles
  /// lengthen the look-back's chain); the counting reads 16 keys of up to 4 bytes a thread a step (8 of 8 bytes),
  /// with a copy of the 256 counters a lane (lane l's in bank l: a warp's atomics never collide, however skewed the
  /// keys). Chosen with bench/bench_top_k (bench/results/2026-11-26-H100-bench_top_k-trials.txt).
  template <class K, class V>
  struct TopK : LookBack {
    static constexpr int radix_bits = 8;
    static constexpr int block_threads = 256;
    static constexpr int bytes_per_thread = 128;
    static constexpr int items_per_thread =
        bytes_per_thread / static_cast<int>(sizeof(K) + (kHasValues<V> ? sizeof(V) : 0)) > 0
            ? bytes_per_thread / static_cast<int>(sizeof(K) + (kHasValues<V> ? sizeof(V) : 0))
            : 1;
    static constexpr int split_min_blocks_per_sm = 4;
    static constexpr int count_threads = 256;
    static constexpr int count_items = sizeof(K) <= 4 ? 16 : 8;
    static constexpr int count_blocks_per_sm = 4;
    /// The candidates' buffer: n / candidates_share keys (and values), enough for the top digit's share of n unless
    /// keys are skewed.
    static constexpr size_t candidates_share = 16;
  };

  /// The segmented top-k: 256 threads a segment, chunks of 8 keys a thread (4 of 8 bytes; rows of two chunks stay
  /// in registers where the block sorts the winners), a shared buffer of 4096 keys (3072 of 8 bytes) with their
  /// positions (the kept keys of a long row, for k up to the buffer less a chunk), compactions of 4 keys a thread, an
  /// early reduction at 16 times k, and four blocks an SM (64 registers a thread: five, at 48, spilled the row and
  /// slowed long rows more than the fifth block sped up rows of 4096). Chosen with bench/bench_segmented_top_k
  /// (docs/design-notes.md, "Top-k"; bench/results/2026-11-27-H100-bench_segmented_top_k-blocks-an-sm.txt).
  template <class K, class V>
  struct SegmentedTopK {
    static constexpr int radix_bits = 8;
    static constexpr int block_threads = 256;
    static constexpr int items_per_thread = sizeof(K) <= 4 ? 8 : 4;
    static constexpr int buffer_keys = sizeof(K) <= 4 ? 4096 : 3072;
    static constexpr int compact_items_per_thread = 4;
    static constexpr unsigned early_reduce_factor = 16;
    static constexpr int min_blocks_per_sm = 4;
  };
};

/// Blackwell's table (B200, sm_100 and later): Hopper's entries, which all fit its 227 KB a block. Untuned.
struct TuningSm100 : TuningSm90 {
  static constexpr Generation generation = Generation::Sm100;
  static constexpr bool tuned = false;
};

/// Ampere's table (A100; Orin's sm_87 too): 163 KB a block, in which all of Hopper's entries fit; its 108 SMs and
/// lower bandwidth are read at run time, as on every part. Untuned.
struct TuningSm80 : TuningSm90 {
  static constexpr Generation generation = Generation::Sm80;
  static constexpr size_t shared_bytes_per_block = 163 * 1024;
  static constexpr bool tuned = false;
};

/// The table of parts with 99 KB a block (sm_86, sm_89, sm_120: GeForce and workstation Ampere, Ada and
/// Blackwell). Hopper's entries where they fit; the wide digit histograms keep 16 copies of the counters (8 for
/// 8-byte keys): 64 KB. Their 1536 threads an SM hold one 1024-thread histogram block, as Hopper's do. Untuned.
struct TuningSm86 : TuningSm90 {
  static constexpr Generation generation = Generation::Sm86;
  static constexpr size_t shared_bytes_per_block = 99 * 1024;
  static constexpr bool tuned = false;

  template <class K>
  struct OnesweepHistogram : TuningSm90::OnesweepHistogram<K> {
    using Wide = HistogramShape<1024, 1, sizeof(K) <= 4 ? 16 : 8, sizeof(K) <= 4 ? 16 : 8>;
  };
  template <class K, int THREADS = 1024>
  using SegmentedOnesweepHistogram = HistogramShape<THREADS, 1, sizeof(K) <= 4 ? 16 : 8, sizeof(K) <= 4 ? 16 : 8>;
};

/// Whether `bytes` of shared memory a block fit a table.
template <class Table>
constexpr bool fits_shared_memory(size_t bytes) {
  return bytes <= Table::shared_bytes_per_block;
}

inline constexpr size_t table_shared_bytes(Generation generation) {
  switch (generation) {
    case Generation::Sm80: return TuningSm80::shared_bytes_per_block;
    case Generation::Sm86: return TuningSm86::shared_bytes_per_block;
    case Generation::Sm90: return TuningSm90::shared_bytes_per_block;
    case Generation::Sm100: return TuningSm100::shared_bytes_per_block;
  }
  return 0;
}

/// The table for a device of compute capability major.minor that lets a block opt in to `shared_bytes`: its
/// generation's, or, where the part has less shared memory a block than that table assumes, the largest table that
/// fits (the 99 KB table at least: it is the smallest).
inline Generation generation_for(int major, int minor, size_t shared_bytes) {
  Generation generation = major >= 10                                   ? Generation::Sm100
                          : major == 9                                  ? Generation::Sm90
                          : major == 8 && (minor == 0 || minor == 7) ? Generation::Sm80
                                                                        : Generation::Sm86;
  const Generation smaller[kGenerations] = {Generation::Sm86, Generation::Sm86, Generation::Sm80, Generation::Sm90};
  while (generation != Generation::Sm86 && table_shared_bytes(generation) > shared_bytes) {
    generation = smaller[static_cast<int>(generation)];
  }
  return generation;
}

/// Forces a table, for tests: -1 (the default) lets the device choose.
inline std::atomic<int>& tuning_override_for_tests() {
  static std::atomic<int> forced{-1};
  return forced;
}

/// The current device's table (under the shared-memory cap for tests, shared_memory_cap_for_tests()).
inline cudaError_t current_generation(Generation& generation) {
  const int forced = tuning_override_for_tests().load(std::memory_order_relaxed);
  if (forced >= 0 && forced < kGenerations) {
    generation = static_cast<Generation>(forced);
    return cudaSuccess;
  }
  int capability = 0;
  PRIMS_TRY(compute_capability(capability));
  size_t shared_bytes = 0;
  PRIMS_TRY(shared_memory_per_block(shared_bytes));
  generation = generation_for(capability / 10, capability % 10, shared_bytes);
  return cudaSuccess;
}

/// Calls run(Table{}) with the current device's table and returns what it returns. Every dispatcher is called
/// through it: `return with_tuning([&](auto table) { using Table = decltype(table); ... });`
/// Where the device cannot be asked (no GPU: a size query, or a call that argument checks reject), Hopper's table
/// is taken; a call that goes on to use the device meets the device's error there.
template <class Run>
cudaError_t with_tuning(Run&& run) {
  Generation generation = Generation::Sm90;
  if (current_generation(generation) != cudaSuccess) generation = Generation::Sm90;
  switch (generation) {
    case Generation::Sm80: return run(TuningSm80{});
    case Generation::Sm86: return run(TuningSm86{});
    case Generation::Sm100: return run(TuningSm100{});
    default: return run(TuningSm90{});
  }
}

}  // namespace prims::detail
