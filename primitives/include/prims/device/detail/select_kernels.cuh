#pragma once
// Kernels and dispatch of the selections (prims::device::select_if, select_flagged, unique, unique_by_key and
// partition_if; device/select.cuh).
//
// One pass, one block a tile, on the look-back agent of lookback.cuh: a block loads its tile in the blocked
// arrangement (thread t holds items [t * ITEMS, (t + 1) * ITEMS)), marks the items it keeps, counts them with a
// block scan, takes the count of everything kept before its tile from the look-back (its own count published
// first), then gathers its kept items in shared memory in order and writes them out as one contiguous run, so the
// writes are coalesced. The block of the last tile writes the total.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/block/reduce.cuh"
#include "prims/block/scan.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/flag_bits.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::scan {

/// What a selection keeps, and what the kernel needs to tell: KeepIf, the items with pred(item); KeepFlagged, the
/// items whose flag is nonzero; KeepUnique, the first item of every run of items equal under eq; KeepPartition,
/// the items with pred(item) first and the others after them (`kept` items in all, counted before the pass).
enum class KeepKind { If, Flagged, Unique, Partition };
template <class Pred>
struct KeepIf {
  static constexpr KeepKind kind = KeepKind::If;
  Pred pred;
};
template <class Pred>
struct KeepPartition {
  static constexpr KeepKind kind = KeepKind::Partition;
  Pred pred;
  const unsigned long long* kept;
};
template <class FlagIt>
struct KeepFlagged {
  static constexpr KeepKind kind = KeepKind::Flagged;
  FlagIt flags;
};
template <class Eq>
struct KeepUnique {
  static constexpr KeepKind kind = KeepKind::Unique;
  Eq eq;
};

template <class InIt>
using ItemOf = std::remove_cv_t<typename std::iterator_traits<InIt>::value_type>;

/// A selection's values (unique_by_key): each kept item's value goes with it. NoSelectValues: none.
struct NoSelectValues {
  using Value = void;
};
template <class ValIt, class ValOut>
struct SelectValues {
  using Value = ItemOf<ValIt>;
  ValIt in;
  ValOut out;
};

/// sizeof(V), 0 for void.
template <class V>
constexpr size_t size_or_zero() {
  if constexpr (std::is_void_v<V>) {
    return 0;
  } else {
    return sizeof(V);
  }
}

/// A selection's tile of items T (and values V, void for none).
template <class Policy, class T, class V = void>
struct SelectTile {
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int item_bytes = static_cast<int>(sizeof(T) + size_or_zero<V>());
  /// bytes_per_thread of items (and values), at most Policy::max_items_per_thread of them (narrow items would fill
  /// the registers).
  static constexpr int items_per_thread =
      Policy::bytes_per_thread >= item_bytes
          ? (Policy::bytes_per_thread / item_bytes < Policy::max_items_per_thread ? Policy::bytes_per_thread / item_bytes
                                                                                  : Policy::max_items_per_thread)
          : 1;
  static constexpr int tile_items = block_threads * items_per_thread;
  static constexpr size_t kLoadBytes = kBlockedLoadBytes<T, block_threads, items_per_thread>;
  using Count = unsigned long long;
  using BlockScan = block::Scan<Count, block_threads>;

  /// Flags of FlagIt read as coalesced vectors where it is a pointer to flags no wider than the items (their
  /// exchange fits the items') whose vectors divide a thread's items.
  template <class FlagIt, class F = std::remove_cv_t<std::remove_pointer_t<FlagIt>>>
  static constexpr bool kVectorFlags =
      std::is_pointer_v<FlagIt> && sizeof(F) <= sizeof(T) && items_per_thread % kVectorItems<F> == 0;

  /// The tile's shared memory: one area used in turn by the load's exchange, each thread's last item (unique),
  /// the flags' exchange and the kept items in order; raw bytes, so that items with constructors fit too.
  /// The values' area: their load's exchange, then the kept values in order (one byte where there are none).
  struct Storage {
    static constexpr size_t kTileBytes = kLoadBytes > tile_items * sizeof(T) ? kLoadBytes : tile_items * sizeof(T);
    static constexpr size_t kValueBytes =
        std::is_void_v<V> ? 1
                          : (kBlockedLoadBytes<std::conditional_t<std::is_void_v<V>, char, V>, block_threads,
                                               items_per_thread> > tile_items * size_or_zero<V>()
                                 ? kBlockedLoadBytes<std::conditional_t<std::is_void_v<V>, char, V>, block_threads,
                                                     items_per_thread>
                                 : tile_items * size_or_zero<V>());
    alignas(16 > alignof(T) ? 16 : alignof(T)) unsigned char tile[kTileBytes];
    alignas(16) unsigned char values[kValueBytes];
    typename BlockScan::TempStorage scan;
    Count prefix;

    __device__ T* kept() { return reinterpret_cast<T*>(tile); }
    __device__ T* last_items() { return reinterpret_cast<T*>(tile); }
    template <class U>
    __device__ U* kept_values() {
      return reinterpret_cast<U*>(values);
    }
  };

  __host__ __device__ static constexpr size_t count(size_t n) { return (n + tile_items - 1) / tile_items; }

  /// The word of this thread's items whose flag is nonzero (flag_bits.cuh; items past `valid` are not set).
  template <class FlagIt>
  __device__ static unsigned load_flags(FlagIt flags, size_t tile_begin, int valid, Storage& storage) {
    using F = std::remove_cv_t<typename std::iterator_traits<FlagIt>::value_type>;
    F values[items_per_thread];
    if constexpr (kVectorFlags<FlagIt>) {
      using FlagIo = BlockedTileIo<F, block_threads, items_per_thread>;
      static_assert(sizeof(typename FlagIo::Storage) <= Storage::kTileBytes, "the flags' exchange fits the tile's");
      __syncthreads();  // the items' exchange storage is reused
      FlagIo::load(flags + tile_begin, valid, values, *reinterpret_cast<typename FlagIo::Storage*>(storage.tile));
    } else {
#pragma unroll
      for (int i = 0; i < items_per_thread; ++i) {
        const int item = threadIdx.x * items_per_thread + i;
        values[i] = flags[tile_begin + static_cast<size_t>(item < valid ? item : 0)];
      }
    }
    unsigned kept = 0;
#pragma unroll
    for (int i = 0; i < items_per_thread; ++i) kept |= values[i] != F{} ? 1u << i : 0u;
    return kept & held_bits(valid - static_cast<int>(threadIdx.x) * items_per_thread);
  }

  /// Loads tile items [tile_begin, tile_begin + valid) blocked (load_blocked). Items past `valid` are copies of
  /// the tile's first.
  template <class InIt>
  __device__ static void load(InIt in, size_t tile_begin, int valid, T (&items)[items_per_thread],
                              Storage& storage) {
    load_blocked<block_threads, Policy::load_hint>(in, tile_begin, valid, items, storage.tile);
  }
};

/// One block a tile, tiles taken in start order from the counter (lookback.cuh).
template <class Policy, class InIt, class OutIt, class Keep, class Values, class Status>
__global__ void __launch_bounds__(Policy::block_threads)
    select_kernel(InIt in, OutIt out, size_t* num_selected, size_t n, Keep keep, Values values, Status status,
                  unsigned* tile_counter) {
  using T = ItemOf<InIt>;
  using V = typename Values::Value;
  constexpr bool kHasValues = !std::is_void_v<V>;
  using Tile = SelectTile<Policy, T, V>;
  using Count = typename Tile::Count;
  constexpr int kItems = Tile::items_per_thread;
  __shared__ typename Tile::Storage storage;
  // partition_if's pass waits only where it reads the count (below): the grid before it is the count, which writes
  // nothing but the count, and started after the statuses and the tile counter were cleared and the input written
  // (it waited for them), so the tile's load and the look-back overlap the count's last blocks.
  if constexpr (Keep::kind != KeepKind::Partition) wait_for_prior_grids();
  allow_dependent_grids();
  const auto [tile, tile_begin, valid] = take_tile<Tile::tile_items>(tile_counter, n);

  // Unique: the item before the tile, read first so that its latency hides behind the tile's.
  T before_tile{};
  if constexpr (Keep::kind == KeepKind::Unique) {
    if (threadIdx.x == 0 && tile > 0) before_tile = in[tile_begin - 1];
  }
  T items[kItems];
  Tile::load(in, tile_begin, valid, items, storage);
  std::conditional_t<kHasValues, V, char> item_values[kItems];
  if constexpr (kHasValues) {
    load_blocked<Tile::block_threads, Policy::load_hint>(values.in, tile_begin, valid, item_values, storage.values);
  }
  // The items kept, a bit each (flag_bits.cuh). Items past `valid` are copies of the tile's first (load_blocked),
  // so the predicate and eq see only the input's items; their bits are cleared.
  static_assert(kItems <= 32, "a thread's flags fit one word");
  const int first_item = threadIdx.x * kItems;
  const unsigned held = held_bits(valid - first_item);
  unsigned kept = 0;
  if constexpr (Keep::kind == KeepKind::Unique) {
    // The item before each thread's first: the previous thread's last, or the one before the tile.
    __syncthreads();  // the load's exchange storage is reused
    storage.last_items()[threadIdx.x] = items[kItems - 1];
    __syncthreads();
    const T before = threadIdx.x > 0 ? storage.last_items()[threadIdx.x - 1] : before_tile;
    kept = head_bits(items, [&] { return before; }, tile == 0 && threadIdx.x == 0, held, keep.eq);
  } else if constexpr (Keep::kind == KeepKind::If || Keep::kind == KeepKind::Partition) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) kept |= static_cast<bool>(keep.pred(items[i])) ? 1u << i : 0u;
    kept &= held;
  } else {
    kept = Tile::load_flags(keep.flags, tile_begin, valid, storage);
  }
  const Count count = static_cast<Count>(__popc(kept));

  Count tile_kept;
  const Count offset = typename Tile::BlockScan(storage.scan).exclusive_scan(count, Sum{}, Count{0}, tile_kept);
  // Everything kept before the tile: warp 0 publishes the tile's count and looks back.
  if (threadIdx.x < warp::kWarpThreads) {
    LookBackPrefix<Policy, Count, Sum, Status> look_back{status, tile, Sum{}, Maybe<Count>{Count{0}, true}};
    const Count prefix = look_back(tile_kept);
    if (threadIdx.x == 0) storage.prefix = prefix;
  }
  kept = opaque_bits(kept);
  __syncthreads();  // the exchange storage is free; the prefix is set
  const Count prefix = storage.prefix;
  if constexpr (Keep::kind == KeepKind::Partition) {
    // The tile's kept items in order, then its others in order: the others before the tile start after all the
    // kept ones. An item past `valid` is not kept and has every kept item of the tile before it, so it lands in
    // its own slot, which is not written out.
    Count slot = offset;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const bool keeps = has_bit(kept, i);
      const Count at = keeps ? slot : tile_kept + static_cast<Count>(first_item + i) - slot;
      storage.kept()[at] = items[i];
      slot += keeps ? 1 : 0;
    }
    wait_for_prior_grids();  // the count is complete
    __syncthreads();
    const Count others_begin = static_cast<Count>(*keep.kept) + (tile_begin - prefix);
    for (int k = threadIdx.x; k < valid; k += Tile::block_threads) {
      const Count at = static_cast<Count>(k);
      out[at < tile_kept ? prefix + at : others_begin + (at - tile_kept)] = storage.kept()[k];
    }
  } else {
    Count slot = offset;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (has_bit(kept, i)) {
        storage.kept()[slot] = items[i];
        if constexpr (kHasValues) storage.template kept_values<V>()[slot] = item_values[i];
        ++slot;
      }
    }
    __syncthreads();
    for (Count k = threadIdx.x; k < tile_kept; k += Tile::block_threads) {
      out[prefix + k] = storage.kept()[k];
      if constexpr (kHasValues) values.out[prefix + k] = storage.template kept_values<V>()[k];
    }
  }
  if (threadIdx.x == 0 && tile_begin + Tile::tile_items >= n) *num_selected = static_cast<size_t>(prefix + tile_kept);
}

/// How many items pred keeps, added to *kept (zero before): a read of the input only. With VECTORS (an input
/// pointer) the items from `head` on (the first one at a 16-byte boundary) are read as vectors and the few outside
/// the whole vectors one at a time by block 0; otherwise item by item (head is 0). Block b takes chunks of
/// Policy::count_loads_per_thread loads a thread, the last chunk first and then every gridDim.x-th one below it:
/// the chunks read last, at the input's start, are still in the L2 cache when the pass that follows reads the
/// first tiles again. One atomic a block.
template <class Policy, bool VECTORS, class InIt, class Pred>
__global__ void __launch_bounds__(Policy::block_threads)
    count_kept_kernel(InIt in, size_t n, size_t head, Pred pred, unsigned long long* kept) {
  using T = ItemOf<InIt>;
  constexpr int kThreads = Policy::block_threads;
  constexpr int kLoads = Policy::count_loads_per_thread;
  constexpr size_t kUnitItems = VECTORS ? kVectorItems<T> : 1;
  constexpr size_t kChunkUnits = static_cast<size_t>(kThreads) * kLoads;
  using Unit = std::conditional_t<VECTORS, Vector<T>, T>;
  wait_for_prior_grids();
  allow_dependent_grids();
  const auto unit_at = [&](size_t u) -> Unit {
    if constexpr (VECTORS) {
      return reinterpret_cast<const Vector<T>*>(in + head)[u];
    } else {
      return in[u];
    }
  };
  const auto kept_of = [&](const Unit& unit) -> unsigned {
    if constexpr (VECTORS) {
      unsigned c = 0;
#pragma unroll
      for (size_t i = 0; i < kUnitItems; ++i) c += static_cast<bool>(pred(unit.items[i])) ? 1u : 0u;
      return c;
    } else {
      return static_cast<bool>(pred(unit)) ? 1u : 0u;
    }
  };
  const size_t units = (n - head) / kUnitItems;
  const size_t chunks = (units + kChunkUnits - 1) / kChunkUnits;
  unsigned long long count = 0;
  // Unsigned: the loop ends when the chunk index wraps below zero (or starts past the last chunk).
  for (size_t chunk = chunks - 1 - blockIdx.x; chunk < chunks; chunk -= gridDim.x) {
    const size_t first = chunk * kChunkUnits + threadIdx.x;
    unsigned chunk_count = 0;
    if (chunk + 1 < chunks) {
      Unit loaded[kLoads];
#pragma unroll
      for (int j = 0; j < kLoads; ++j) loaded[j] = unit_at(first + static_cast<size_t>(j) * kThreads);
#pragma unroll
      for (int j = 0; j < kLoads; ++j) chunk_count += kept_of(loaded[j]);
    } else {
#pragma unroll
      for (int j = 0; j < kLoads; ++j) {
        const size_t u = first + static_cast<size_t>(j) * kThreads;
        if (u < units) chunk_count += kept_of(unit_at(u));
      }
    }
    count += chunk_count;
  }
  if (blockIdx.x == 0) {
    for (size_t i = threadIdx.x; i < head; i += kThreads) count += static_cast<bool>(pred(in[i])) ? 1u : 0u;
    for (size_t i = head + units * kUnitItems + threadIdx.x; i < n; i += kThreads) {
      count += static_cast<bool>(pred(in[i])) ? 1u : 0u;
    }
  }
  using BlockReduce = block::Reduce<unsigned long long, kThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  const unsigned long long total = BlockReduce(storage).reduce(count, Sum{});
  if (threadIdx.x == 0 && total > 0) atomicAdd(kept, total);
}

/// Launches count_kept_kernel: a block a chunk, at most Policy::count_blocks_per_sm an SM (each then walks
/// several) and Policy::count_few_blocks up to Policy::count_few_blocks_max_bytes of items, one block at least
/// (the items outside the vectors).
template <class Policy, bool VECTORS, class InIt, class Pred>
cudaError_t launch_count_kept(InIt in, size_t n, size_t head, Pred pred, unsigned long long* kept,
                              cudaStream_t stream) {
  constexpr size_t kUnitItems = VECTORS ? kVectorItems<ItemOf<InIt>> : 1;
  constexpr size_t kChunkItems =
      static_cast<size_t>(Policy::block_threads) * Policy::count_loads_per_thread * kUnitItems;
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  const size_t chunks = (n - head + kChunkItems - 1) / kChunkItems;
  const size_t max_blocks = n * sizeof(ItemOf<InIt>) <= Policy::count_few_blocks_max_bytes
                                ? Policy::count_few_blocks
                                : static_cast<size_t>(multiprocessors) * Policy::count_blocks_per_sm;
  const size_t blocks = std::max<size_t>(1, std::min(chunks, max_blocks));
  return launch(count_kept_kernel<Policy, VECTORS, InIt, Pred>, static_cast<unsigned>(blocks), Policy::block_threads,
                0, stream, in, n, head, pred, kept);
}

/// Calls f with the selections' policy for n items of T (a value of it): the device's table's SelectSmall up to
/// its small_max_bytes of items, else its Select.
template <class T, class F>
cudaError_t with_select_policy(size_t n, F&& f) {
  return with_tuning([&](auto table) {
    using Table = decltype(table);
    if (n <= Table::template Select<T>::small_max_bytes / sizeof(T)) {
      return f(typename Table::template SelectSmall<T>{});
    }
    return f(typename Table::template Select<T>{});
  });
}

/// A selection with its policy given: the look-back's status and tile counter in temp, cleared, then one block a
/// tile; `values` (NoSelectValues for none) go with the kept items. n == 0 writes a zero count.
template <class Policy, class InIt, class OutIt, class Keep, class Values>
cudaError_t dispatch_select(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t* num_selected, size_t n,
                            Keep keep, Values values, cudaStream_t stream, const char* name) {
  using T = ItemOf<InIt>;
  using Tile = SelectTile<Policy, T, typename Values::Value>;
  using Status = TileStatus<typename Tile::Count, Policy::status_slot_bytes>;
  const size_t num_tiles = Tile::count(n);
  void* parts[2] = {nullptr, nullptr};
  PRIMS_TRY(LookBackTemp<Status>::carve(temp, temp_bytes, num_tiles, name, n, parts));
  if (temp == nullptr) return cudaSuccess;
  if (num_selected == nullptr) return invalid_value("%s: num_selected is null", name);
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(size_t), stream);
  const LookBackTemp<Status> look_back(parts, num_tiles);
  PRIMS_TRY(look_back.clear(num_tiles, stream));
  return launch(select_kernel<Policy, InIt, OutIt, Keep, Values, Status>, static_cast<unsigned>(num_tiles),
                Policy::block_threads, 0, stream, in, out, num_selected, n, keep, values, look_back.status,
                look_back.tile_counter);
}

/// partition_if with its policy given: the kept items counted first (a pass that only reads, so the others can
/// go straight to their places after all the kept ones), then the selection's pass placing both. n == 0 writes a
/// zero count.
template <class Policy, class InIt, class OutIt, class Pred>
cudaError_t dispatch_partition(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t* num_selected, size_t n,
                               Pred pred, cudaStream_t stream, const char* name) {
  using T = ItemOf<InIt>;
  using Tile = SelectTile<Policy, T>;
  using Status = TileStatus<typename Tile::Count, Policy::status_slot_bytes>;
  const size_t num_tiles = Tile::count(n);
  void* parts[2] = {nullptr, nullptr};
  void* kept = nullptr;
  PRIMS_TRY(LookBackTemp<Status>::carve(temp, temp_bytes, num_tiles, name, n, parts, sizeof(unsigned long long),
                                        kept));
  if (temp == nullptr) return cudaSuccess;
  if (num_selected == nullptr) return invalid_value("%s: num_selected is null", name);
  if (n == 0) return cudaMemsetAsync(num_selected, 0, sizeof(size_t), stream);
  auto* kept_count = static_cast<unsigned long long*>(kept);
  const LookBackTemp<Status> look_back(parts, num_tiles);
  PRIMS_TRY(look_back.clear(num_tiles, stream, kept_count));
  bool counted = false;
  if constexpr (std::is_pointer_v<InIt> && kVectorItems<T> > 1) {
    const size_t head = elements_to_vector_alignment(in);
    if (head != kNoVectorAlignment) {
      PRIMS_TRY((launch_count_kept<Policy, true>(in, n, std::min(head, n), pred, kept_count, stream)));
      counted = true;
    }
  }
  if (!counted) PRIMS_TRY((launch_count_kept<Policy, false>(in, n, 0, pred, kept_count, stream)));
  return launch(select_kernel<Policy, InIt, OutIt, KeepPartition<Pred>, NoSelectValues, Status>,
                static_cast<unsigned>(num_tiles), Policy::block_threads, 0, stream, in, out, num_selected, n,
                KeepPartition<Pred>{pred, kept_count}, NoSelectValues{}, look_back.status, look_back.tile_counter);
}

}  // namespace prims::detail::scan
