#pragma once
// Kernels and dispatch of the by-key family: prims::device::reduce_by_key, inclusive_scan_by_key,
// exclusive_scan_by_key (device/by_key.cuh) and run_length_encode and non_trivial_runs (device/run_length.cuh).
//
// A run is a stretch of consecutive keys equal under eq (eq(earlier, later)); its first item is its head, its last
// its tail. Every item becomes a pair (1 if it is a head, else 0; its value), and the pairs are scanned with the
// segmented operator
//   (a_heads, a) . (b_heads, b) = (a_heads + b_heads, b_heads != 0 ? b : a op b)
// (associative whenever op is), which restarts at every head: an item's inclusive pair holds the number of heads
// up to it (its run's index + 1) and the op-reduction of its run up to it.
//
// One pass, one block a tile, on the look-back agent of lookback.cuh, as the scan: a block loads its tile's keys
// and values blocked, finds the heads (the key before each thread's first comes from the thread before, the one
// before the tile from memory; a thread's flags are bit words, flag_bits.cuh), scans each thread's items on their
// own (its last item then holds the thread's pair), scans the threads' pairs behind the tile's prefix from the
// look-back, and completes the items before each thread's first head with the thread's prefix. reduce_by_key
// writes each run's first key where the run starts (at its head) and its reduction where it ends (at its tail: the
// item after the tile is read for the tile's last), both gathered in shared memory first and written as contiguous
// runs of the outputs; the block of the last tile writes the number of runs. The scans write every item's value.

#include <cuda_runtime.h>

#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/block/scan.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/error.cuh"
#include "prims/util/flag_bits.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/ops.cuh"

namespace prims::detail::scan {

/// A stretch of items under the segmented operator: the heads in it, and the reduction of its items after its
/// last head (of all of them where it holds none). Heads are counted in 32 bits where n allows: a pair of 4-byte
/// values then fits the look-back's single 16-byte status word, and the block scan moves half the bytes.
template <class Count, class V>
struct RunPair {
  Count heads;
  V value;
};

/// The segmented operator of the file comment.
template <class Op>
struct RunOp {
  Op op;
  template <class Count, class V>
  __device__ RunPair<Count, V> operator()(const RunPair<Count, V>& a, const RunPair<Count, V>& b) const {
    return {static_cast<Count>(a.heads + b.heads), b.heads != 0 ? b.value : static_cast<V>(op(a.value, b.value))};
  }
};

/// What a by-key pass writes: each run's first key and reduction (Reduce); every item's scanned value, inclusive
/// or exclusive (ScanInclusive, ScanExclusive); or, of every run longer than one, where it starts and its length
/// (NonTrivialRuns: the pairs restart only at such runs' heads, the values are ones).
enum class ByKeyMode { Reduce, ScanInclusive, ScanExclusive, NonTrivialRuns };

/// A random-access iterator whose every item is `value` (run_length_encode's values: a run's length is the sum of
/// its ones).
template <class T>
struct ConstantIterator {
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = T;
  using iterator_category = std::random_access_iterator_tag;
  T value;
  __host__ __device__ T operator[](size_t) const { return value; }
};

template <class Policy, class K, class V, class Count>
struct ByKeyTile {
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int pair_bytes = static_cast<int>(sizeof(K) + sizeof(V));
  /// The keys' and values' areas and the threads' first and last keys stay within 42 KB (static shared memory is
  /// 48 KB a block; 20 items of 4-byte keys and values fill it): wide keys and values get fewer items a thread.
  static constexpr int kAreaItems =
      (42 * 1024 - 2 * block_threads * static_cast<int>(sizeof(K))) / (block_threads * pair_bytes);
  static constexpr int kWanted =
      Policy::bytes_per_thread / pair_bytes > Policy::max_items_per_thread ? Policy::max_items_per_thread
                                                                            : Policy::bytes_per_thread / pair_bytes;
  static constexpr int kCapped = kWanted < kAreaItems ? kWanted : kAreaItems;
  static constexpr int items_per_thread = kCapped < 1 ? 1 : kCapped;
  static constexpr int tile_items = block_threads * items_per_thread;
  using Pair = RunPair<Count, V>;
  using BlockScan = block::Scan<Pair, block_threads>;

  static constexpr size_t max_of(size_t a, size_t b) { return a > b ? a : b; }
  /// The keys' area: their load's exchange, then the tile's first keys of its runs in order (or the starts of its
  /// runs longer than one, 16 bits from the tile's start). The values' area: their load's exchange, then the
  /// reductions of the runs whose tails lie in the tile, one slot after their keys' (the run open before the tile
  /// ends in slot 0), or, for a scan, its store's exchange.
  static_assert(tile_items <= 65536, "a run's start within its tile fits 16 bits");
  static constexpr size_t kKeyBytes = max_of(kBlockedLoadBytes<K, block_threads, items_per_thread>,
                                             max_of(sizeof(K), sizeof(unsigned short)) * tile_items);
  static constexpr size_t kValueBytes =
      max_of(kBlockedLoadBytes<V, block_threads, items_per_thread>, sizeof(V) * (tile_items + 1));
  static constexpr size_t kAlign = alignof(K) > 16 ? alignof(K) : (alignof(V) > 16 ? alignof(V) : 16);

  /// Raw bytes, so that keys and values with constructors fit too.
  struct Storage {
    alignas(kAlign) unsigned char keys[kKeyBytes];
    alignas(kAlign) unsigned char values[kValueBytes];
    alignas(K) unsigned char first_keys[sizeof(K) * block_threads];
    alignas(K) unsigned char last_keys[sizeof(K) * block_threads];
    typename BlockScan::TempStorage scan;
    Pair prefix;
    Pair aggregate;
    bool first_is_head;
    bool last_is_tail;
    unsigned tails;

    __device__ K* key_slots() { return reinterpret_cast<K*>(keys); }
    __device__ unsigned short* start_slots() { return reinterpret_cast<unsigned short*>(keys); }
    __device__ V* end_slots() { return reinterpret_cast<V*>(values); }
    __device__ K* firsts() { return reinterpret_cast<K*>(first_keys); }
    __device__ K* lasts() { return reinterpret_cast<K*>(last_keys); }
  };

  __host__ __device__ static constexpr size_t count(size_t n) { return (n + tile_items - 1) / tile_items; }
};

/// The block scan's prefix callback around the look-back's, keeping the tile's prefix and aggregate in shared
/// memory for the whole block.
template <class LookBack, class Pair>
struct KeptPrefix {
  LookBack look_back;
  Pair* prefix;
  Pair* aggregate;
  __device__ Pair operator()(const Pair& tile_aggregate) {
    const Pair tile_prefix = look_back(tile_aggregate);
    if (threadIdx.x == 0) {
      *prefix = tile_prefix;
      *aggregate = tile_aggregate;
    }
    return tile_prefix;
  }
};

/// One block a tile, tiles taken in start order from the counter (lookback.cuh). For ScanInclusive and
/// ScanExclusive, keys_out and num_runs are unused and values_out receives every item's scanned value (`init` in
/// front of every run for ScanExclusive).
template <class Policy, ByKeyMode MODE, class Count, class KeyIt, class ValIt, class KeyOut, class ValOut, class Op,
          class Eq, class V, class Status>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    by_key_kernel(KeyIt keys_in, ValIt values_in, KeyOut keys_out, ValOut values_out, size_t* num_runs, size_t n,
                  Op op, Eq eq, V init, Status status, unsigned* tile_counter) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  using Tile = ByKeyTile<Policy, K, V, Count>;
  using Pair = typename Tile::Pair;
  constexpr Count kHead = 1;
  constexpr Count kNoHead = 0;
  constexpr int kItems = Tile::items_per_thread;
  constexpr int kThreads = Tile::block_threads;
  __shared__ typename Tile::Storage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const auto [tile, tile_begin, valid] = take_tile<Tile::tile_items>(tile_counter, n);
  const bool full_tile_before_end = tile_begin + Tile::tile_items < n;

  // The key before the tile and the one after it, read first so that their latency hides behind the tile's.
  K before_tile{};
  K after_tile{};
  if (threadIdx.x == 0 && tile > 0) before_tile = keys_in[tile_begin - 1];
  constexpr bool kTails = MODE == ByKeyMode::Reduce || MODE == ByKeyMode::NonTrivialRuns;
  if constexpr (kTails) {
    if (threadIdx.x == kThreads - 1 && full_tile_before_end) after_tile = keys_in[tile_begin + Tile::tile_items];
  }
  K keys[kItems];
  V values[kItems];
  load_blocked<kThreads, Policy::load_hint>(keys_in, tile_begin, valid, keys, storage.keys);
  load_blocked<kThreads, Policy::load_hint>(values_in, tile_begin, valid, values, storage.values);
  storage.firsts()[threadIdx.x] = keys[0];
  storage.lasts()[threadIdx.x] = keys[kItems - 1];
  __syncthreads();
  // The thread's flags are words, bit i for item i: the items it holds (the last tile's last thread may hold
  // fewer than kItems, the threads after it none), the heads, the tails. Bounds are applied once, to the words.
  static_assert(kItems <= 32, "a thread's flags fit one word");
  const int first_item = static_cast<int>(threadIdx.x) * kItems;
  const int held = valid <= first_item ? 0 : (valid - first_item < kItems ? valid - first_item : kItems);
  const unsigned held_mask = held_bits(held);
  // Items past `valid` are copies of the tile's first (load_blocked), so eq sees only the input's keys.
  const auto key_before = [&] { return threadIdx.x > 0 ? storage.lasts()[threadIdx.x - 1] : before_tile; };
  unsigned heads = head_bits(keys, key_before, tile == 0 && threadIdx.x == 0, held_mask, eq);
  // An item ends a run where the next item is a head or the input ends. For the thread's last item the next is the
  // next thread's first, the one after the tile, or none (the input's last item).
  unsigned tails = 0;
  bool last_is_tail = false;
  if constexpr (kTails) {
    if (held == kItems) {
      if (tile_begin + static_cast<size_t>(first_item + kItems) == n) {
        last_is_tail = true;
      } else if (threadIdx.x + 1 < kThreads) {
        last_is_tail = !eq(keys[kItems - 1], storage.firsts()[threadIdx.x + 1]);
      } else {
        last_is_tail = !eq(keys[kItems - 1], after_tile);
      }
    }
    const unsigned input_end = held > 0 && held < kItems ? 1u << (held - 1) : 0u;
    tails = ((heads >> 1) | (last_is_tail ? 1u << (kItems - 1) : 0u) | input_end) & held_mask;
    if (threadIdx.x == 0) {
      storage.first_is_head = (heads & 1u) != 0;
      storage.tails = 0;
    }
    // A tile that is not full ends the input: its last item ends a run.
    if (threadIdx.x == kThreads - 1) storage.last_is_tail = valid < Tile::tile_items || last_is_tail;
  }
  // The heads the pairs restart at: every run's, or only those of runs longer than one.
  unsigned run_heads = MODE == ByKeyMode::NonTrivialRuns ? heads & ~tails : heads;

  // The thread's items scanned on their own first: each value becomes the reduction of its run from the thread's
  // first item on, so the thread's last item holds the thread's pair's value.
  const RunOp<Op> run_op{op};
#pragma unroll
  for (int i = 1; i < kItems; ++i) {
    if (!has_bit(run_heads, i)) values[i] = static_cast<V>(op(values[i - 1], values[i]));
  }
  // The threads' pairs scanned over the block behind the tile's prefix.
  Pair thread_pair[1] = {Pair{static_cast<Count>(__popc(run_heads)), values[kItems - 1]}};
  {
    using LookBack = LookBackPrefix<Policy, Pair, RunOp<Op>, Status>;
    // Tile 0 is seeded with no heads and any value: its first item is a head (or, for NonTrivialRuns, no value
    // before its first head is ever written), so the value never counts.
    KeptPrefix<LookBack, Pair> prefix_op{LookBack{status, tile, run_op, Maybe<Pair>{Pair{kNoHead, V{}}, true}},
                                         &storage.prefix, &storage.aggregate};
    typename Tile::BlockScan(storage.scan).exclusive_scan_with_prefix(thread_pair, thread_pair, run_op, prefix_op);
  }
  const Pair before = thread_pair[0];
  heads = opaque_bits(heads);
  tails = opaque_bits(tails);
  run_heads = opaque_bits(run_heads);
  // The items before the thread's first head continue the run open before the thread: each value is now its
  // run's reduction up to it.
  {
    const int first_head = run_heads != 0 ? __ffs(run_heads) - 1 : kItems;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (i < first_head) values[i] = static_cast<V>(op(before.value, values[i]));
    }
  }
  __syncthreads();  // the prefix and aggregate are set; the load areas are free

  if constexpr (MODE == ByKeyMode::Reduce || MODE == ByKeyMode::NonTrivialRuns) {
    const Pair prefix = storage.prefix;
    const Count tile_heads = storage.aggregate.heads;
    // The tile continues a run open before it unless its first item is a head (for NonTrivialRuns that run is
    // longer than one: it holds the item before the tile and the tile's first). The runs whose tails lie in the
    // tile count from that one.
    const unsigned carried = storage.first_is_head ? 0u : 1u;
    const Count tails_base = prefix.heads - carried;
    // run: the heads of the tile before the current item, so the open run's tail goes to ends[run] and the next
    // head's key (or start) to the tile's slot `run`; the two areas are indexed alike, so one index serves both.
    unsigned run = static_cast<unsigned>(before.heads - prefix.heads);
    if constexpr (MODE == ByKeyMode::Reduce) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (has_bit(heads, i)) storage.key_slots()[run++] = keys[i];
        if (has_bit(tails, i)) storage.end_slots()[run] = values[i];
      }
      __syncthreads();
      const Count tile_tails = tile_heads + carried - (storage.last_is_tail ? kNoHead : kHead);
      const auto keys_at = keys_out + prefix.heads;
      for (unsigned k = threadIdx.x; k < tile_heads; k += kThreads) keys_at[k] = storage.key_slots()[k];
      const auto values_at = values_out + tails_base;
      const V* ends = storage.end_slots() + 1 - carried;
      for (unsigned k = threadIdx.x; k < tile_tails; k += kThreads) values_at[k] = ends[k];
    } else {
      // Runs of one are neither started nor ended here; the tile's tails are counted as they are written.
      const unsigned long_tails = tails & ~heads;
      unsigned tile_tails = 0;
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (has_bit(run_heads, i)) storage.start_slots()[run++] = static_cast<unsigned short>(first_item + i);
        if (has_bit(long_tails, i)) {
          storage.end_slots()[run] = values[i];
          tile_tails = run + carried;
        }
      }
      if (tile_tails > 0) atomicMax(&storage.tails, tile_tails);
      __syncthreads();
      const auto starts_at = keys_out + prefix.heads;
      for (unsigned k = threadIdx.x; k < tile_heads; k += kThreads) {
        starts_at[k] = tile_begin + storage.start_slots()[k];
      }
      const auto lengths_at = values_out + tails_base;
      const V* ends = storage.end_slots() + 1 - carried;
      for (unsigned k = threadIdx.x; k < storage.tails; k += kThreads) lengths_at[k] = ends[k];
    }
    if (threadIdx.x == 0 && !full_tile_before_end) *num_runs = static_cast<size_t>(prefix.heads + tile_heads);
  } else {
    if constexpr (MODE == ByKeyMode::ScanExclusive) {
      // Each item takes the inclusive value before it, from the last item down so that it is still there.
#pragma unroll
      for (int i = kItems - 1; i > 0; --i) {
        values[i] = has_bit(heads, i) ? init : static_cast<V>(op(init, values[i - 1]));
      }
      values[0] = has_bit(heads, 0) ? init : static_cast<V>(op(init, before.value));
    }
    store_blocked<kThreads, Policy::store_hint>(values_out, tile_begin, valid, values, storage.values);
  }
}

/// A by-key pass with its policy and its heads' count type given: the look-back's status and tile counter in temp,
/// cleared, then one block a tile.
template <class Policy, ByKeyMode MODE, class Count, class V, class KeyIt, class ValIt, class KeyOut, class ValOut,
          class Op, class Eq>
cudaError_t dispatch_by_key_counted(void* temp, size_t& temp_bytes, KeyIt keys_in, ValIt values_in, KeyOut keys_out,
                                    ValOut values_out, size_t* num_runs, size_t n, Op op, Eq eq, V init,
                                    cudaStream_t stream, const char* name) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  using Tile = ByKeyTile<Policy, K, V, Count>;
  using Status = TileStatus<typename Tile::Pair, Policy::status_slot_bytes>;
  const size_t num_tiles = Tile::count(n);
  void* parts[2] = {nullptr, nullptr};
  PRIMS_TRY(LookBackTemp<Status>::carve(temp, temp_bytes, num_tiles, name, n, parts));
  if (temp == nullptr) return cudaSuccess;
  if constexpr (MODE == ByKeyMode::Reduce || MODE == ByKeyMode::NonTrivialRuns) {
    if (num_runs == nullptr) return invalid_value("%s: num_runs is null", name);
    if (n == 0) return cudaMemsetAsync(num_runs, 0, sizeof(size_t), stream);
  }
  if (n == 0) return cudaSuccess;
  const LookBackTemp<Status> look_back(parts, num_tiles);
  PRIMS_TRY(look_back.clear(num_tiles, stream));
  return launch(by_key_kernel<Policy, MODE, Count, KeyIt, ValIt, KeyOut, ValOut, Op, Eq, V, Status>,
                static_cast<unsigned>(num_tiles), Policy::block_threads, 0, stream, keys_in, values_in, keys_out,
                values_out, num_runs, n, op, eq, init, look_back.status, look_back.tile_counter);
}

/// Policy with tiles of Policy::small_bytes_per_thread: small inputs spread over more blocks.
template <class Policy>
struct ByKeySmallTiles : Policy {
  static constexpr int bytes_per_thread = Policy::small_bytes_per_thread;
};

/// A by-key pass with its policy given: up to Policy::small_max_bytes of keys and values on ByKeySmallTiles, heads
/// counted in 32 bits up to 2^32 - 1 items, in 64 above. V is the type values are reduced in. n == 0 writes no
/// item (and a zero count for ByKeyMode::Reduce).
template <class Policy, ByKeyMode MODE, class V, class KeyIt, class ValIt, class KeyOut, class ValOut, class Op,
          class Eq>
cudaError_t dispatch_by_key(void* temp, size_t& temp_bytes, KeyIt keys_in, ValIt values_in, KeyOut keys_out,
                            ValOut values_out, size_t* num_runs, size_t n, Op op, Eq eq, V init, cudaStream_t stream,
                            const char* name) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  static_assert((Policy::small_max_bytes >> 32) == 0, "small inputs count their heads in 32 bits");
  if (n <= Policy::small_max_bytes / (sizeof(K) + sizeof(V))) {
    return dispatch_by_key_counted<ByKeySmallTiles<Policy>, MODE, unsigned, V>(
        temp, temp_bytes, keys_in, values_in, keys_out, values_out, num_runs, n, op, eq, init, stream, name);
  }
  if (n <= 0xFFFFFFFFull) {
    return dispatch_by_key_counted<Policy, MODE, unsigned, V>(temp, temp_bytes, keys_in, values_in, keys_out,
                                                              values_out, num_runs, n, op, eq, init, stream, name);
  }
  return dispatch_by_key_counted<Policy, MODE, unsigned long long, V>(temp, temp_bytes, keys_in, values_in, keys_out,
                                                                      values_out, num_runs, n, op, eq, init, stream,
                                                                      name);
}

/// A run's length in the value type of the iterator it is written to (size_t where that has none).
template <class LengthOut>
using RunLengthOf = std::conditional_t<std::is_void_v<typename std::iterator_traits<LengthOut>::value_type>, size_t,
                                       std::remove_cv_t<typename std::iterator_traits<LengthOut>::value_type>>;

}  // namespace prims::detail::scan
