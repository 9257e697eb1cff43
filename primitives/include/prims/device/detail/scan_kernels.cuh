#pragma once
// Kernels of prims::device::inclusive_scan and exclusive_scan.
//
// Both algorithms cut the input into tiles of block_threads * items_per_thread items and move each tile the
// same way (ScanTile, on BlockedTileIo of tile_io.cuh): coalesced warp-striped reads (16-byte vectors when the
// tile is full and the pointer aligned, single items otherwise), a transpose through shared memory to the blocked
// arrangement, a block scan,
// and the same path back out. The last tile is padded with copies of its first item instead of divergent tail
// code: padding only ever follows the valid items, so it never reaches a valid output.
//
// A scan is seeded (Maybe<T>): exclusive scans put init in front of everything; inclusive scans have nothing in
// front of the first tile, which is then scanned without a prefix.
//
// SinglePass (Merrill & Garland 2016, decoupled look-back): init_tile_status_kernel clears one status word per
// tile and the tile counter; single_pass_scan_kernel then takes tile ids from the counter in the order blocks
// start, so a tile only ever waits on tiles of blocks that are already running (deadlock-free under any
// scheduling). Each tile publishes its aggregate, looks back over its predecessors 32 at a time with one warp
// until it meets an inclusive prefix, then publishes its own inclusive prefix.
//
// Every kernel is launched with programmatic dependent launch (util/launch.cuh) and so starts with
// wait_for_prior_grids() before it touches global memory: the previous call may still be using the same
// temporary storage, and the input may still be being written.
//
// ReduceThenScan (three short steps over spans of whole tiles, one span per block of a grid that fills the GPU):
//   reduce_spans_kernel  (a) each block reduces its span into one total (the last span's total is never needed);
//   scan_totals_kernel   (b) one block scans the totals, inclusive, seeded, tile after tile with a carry;
//   scan_spans_kernel    (c) each block scans its span, seeded with the total of the spans before it.

#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "prims/block/scan.cuh"
#include "prims/device/detail/tile_io.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/util/vector_load.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail {

/// Tuning for the single-pass kernel on Hopper (H100: 132 SMs, 3 TB/s) and items of type T. 256 threads. Fewer,
/// larger tiles shorten the chain of look-backs that every tile's prefix travels along; more resident blocks keep
/// more bytes in flight while some of them wait on their look-back. 4-byte items: 128 bytes a thread (32 KB tiles)
/// with registers capped at 48 for 5 blocks an SM. 8-byte items: 176 bytes (44 KB tiles, near the 48 KB a block may
/// stage in static shared memory), capped at 64 registers for 4 blocks. Larger tiles gain 4-byte items nothing at
/// large sizes and cost them at a few waves of tiles; a sixth block an SM would spill registers. Other item sizes
/// keep 32 KB tiles and the registers they need.
/// Chosen with bench/tune_scan (docs/design-notes.md, "Scan").
template <class T>
struct SinglePassScanPolicySm90 {
  static constexpr int block_threads = 256;
  static constexpr int bytes_per_thread = sizeof(T) == 8 ? 176 : 128;
  /// Blocks an SM must be able to hold, which caps a thread's registers (65536 / (256 * blocks), rounded down to 8).
  static constexpr int min_blocks_per_sm = sizeof(T) == 4 ? 5 : sizeof(T) == 8 ? 4 : 1;
  /// Pause between two polls of predecessors that have not published yet, so spinning warps leave the SM's issue
  /// slots and the L2 to the blocks that are still loading.
  static constexpr unsigned look_back_wait_ns = 64;
  /// Tiles each lane of the look-back warp reads per poll: one poll covers 32 * this many predecessors. One: wider
  /// polls wait longer for the nearest predecessors.
  static constexpr int look_back_tiles_per_lane = 1;
  /// How tiles are read and written (util/vector_load.cuh): every item is touched once, so loads are marked last
  /// use and stores evict-first, leaving the L2 to the look-back's status words and the loads still in flight.
  static constexpr CacheHint load_hint = CacheHint::LastUse;
  static constexpr CacheHint store_hint = CacheHint::LastUse;
  /// Bytes between two tiles' status words: one 32-byte L2 sector each. Neighbouring tiles publish and poll at
  /// the same moments; with words packed side by side (8 a sector for 4-byte types) every publish and every poll
  /// of a sector's tiles queue on the same sector; a sector each is enough, wider slots gain nothing.
  static constexpr int status_slot_bytes = 32;
};

/// Tuning for the three reduce-then-scan kernels on Hopper: 512 threads with 64 bytes each (32 KB tiles) and a grid
/// of 4 blocks per SM, each walking a contiguous span of tiles.
/// Chosen with bench/tune_scan (docs/design-notes.md, "Scan").
struct ReduceThenScanPolicySm90 {
  static constexpr int block_threads = 512;
  static constexpr int bytes_per_thread = 64;
  static constexpr int blocks_per_sm = 4;
};

/// The policies for the architecture the library is built for; one entry today.
template <class T>
using SinglePassScanPolicy = SinglePassScanPolicySm90<T>;
using ReduceThenScanPolicy = ReduceThenScanPolicySm90;

/// One tile's shape; its trip between global memory and blocked registers is BlockedTileIo's (tile_io.cuh).
template <class Policy, class T>
inline constexpr int kScanItemsPerThread =
    Policy::bytes_per_thread >= static_cast<int>(sizeof(T)) ? Policy::bytes_per_thread / static_cast<int>(sizeof(T))
                                                             : 1;

template <class Policy, class T>
struct ScanTile : BlockedTileIo<T, Policy::block_threads, kScanItemsPerThread<Policy, T>> {
  using Io = BlockedTileIo<T, Policy::block_threads, kScanItemsPerThread<Policy, T>>;
  static constexpr int block_threads = Io::block_threads;
  static constexpr int items_per_thread = Io::items_per_thread;
  static constexpr int tile_items = Io::tile_items;
  using BlockScan = block::Scan<T, block_threads>;

  struct Storage : Io::Storage {
    typename BlockScan::TempStorage scan;
  };

  __host__ __device__ static constexpr size_t count(size_t n) { return (n + tile_items - 1) / tile_items; }

  /// Items of tile `tile` of an n-item array that exist.
  __device__ static int valid_items(size_t tile, size_t n) {
    const size_t rest = n - tile * tile_items;
    return rest < static_cast<size_t>(tile_items) ? static_cast<int>(rest) : tile_items;
  }
};

/// Scans a tile's blocked items in place, inclusive or exclusive, with the prefix from `prefix_op` in front.
template <bool EXCLUSIVE, class BlockScan, class T, int ITEMS, class Op, class PrefixOp>
__device__ __forceinline__ void scan_with_prefix(BlockScan& scan, T (&items)[ITEMS], Op op, PrefixOp& prefix_op) {
  if constexpr (EXCLUSIVE) {
    scan.exclusive_scan_with_prefix(items, items, op, prefix_op);
  } else {
    scan.inclusive_scan_with_prefix(items, items, op, prefix_op);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// SinglePass

/// What a tile has published: nothing yet, its own aggregate, or its inclusive prefix (everything up to and
/// including it, seed included).
enum TileFlag : unsigned { kTileInvalid = 0, kTileAggregate = 1, kTileInclusive = 2 };

template <class T>
struct TileState {
  unsigned flag;
  T value;
};

/// How a tile's status is kept: one 8-byte word (types of up to 4 bytes), one 16-byte word (8-byte types), or a
/// flag apart from the value (other types). 5- to 7-byte types stay off the 16-byte word: ptxas split its 16-byte
/// load into two 4-byte loads there, and a reader could see a flag with half a value.
enum class TileStatusWord { Packed8, Packed16, Separate };

template <class T>
inline constexpr TileStatusWord kTileStatusWord = sizeof(T) <= 4   ? TileStatusWord::Packed8
                                                  : sizeof(T) == 8 ? TileStatusWord::Packed16
                                                                   : TileStatusWord::Separate;

/// One status per tile. Types of 1-4 and of 8 bytes share one word with their flag, published and read with single
/// accesses, so a reader sees flag and value together and no fence is needed. Other types keep the flag apart
/// from two value slots (aggregate, inclusive: one slot would let a reader that saw "aggregate" read the
/// inclusive prefix written over it); the value is written before the flag is stored with release semantics, and
/// read after the flag is loaded with acquire semantics. Each tile's word (its flag, for larger types) sits alone
/// in a slot of SLOT_BYTES, so that tiles published and polled at the same time do not share an L2 sector.
template <class T, int SLOT_BYTES, TileStatusWord WORD = kTileStatusWord<T>>
class TileStatus;

/// A status word padded to its own slot.
template <class Word, int SLOT_BYTES>
struct alignas(SLOT_BYTES) TileStatusSlot {
  static_assert(SLOT_BYTES >= static_cast<int>(sizeof(Word)) && (SLOT_BYTES & (SLOT_BYTES - 1)) == 0,
                "a status slot is a power of two that holds its word");
  Word word;
};

template <class T, int SLOT_BYTES>
class TileStatus<T, SLOT_BYTES, TileStatusWord::Packed8> {
  using Word = unsigned long long;
  using Slot = TileStatusSlot<Word, SLOT_BYTES>;

 public:
  static size_t bytes(size_t num_tiles) { return num_tiles * sizeof(Slot); }
  explicit TileStatus(void* storage, size_t) : slots_(static_cast<Slot*>(storage)) {}

  __device__ void reset(size_t tile) const { slots_[tile].word = 0; }

  __device__ void publish(size_t tile, TileFlag flag, const T& value) const {
    unsigned bits = 0;
    memcpy(&bits, &value, sizeof(T));
    word(tile).store(static_cast<Word>(bits) << 32 | flag, cuda::memory_order_relaxed);
  }

  __device__ TileState<T> read(size_t tile) const {
    const Word packed = word(tile).load(cuda::memory_order_relaxed);
    const unsigned bits = static_cast<unsigned>(packed >> 32);
    TileState<T> state;
    state.flag = static_cast<unsigned>(packed);
    memcpy(&state.value, &bits, sizeof(T));
    return state;
  }

 private:
  __device__ cuda::atomic_ref<Word, cuda::thread_scope_device> word(size_t tile) const {
    return cuda::atomic_ref<Word, cuda::thread_scope_device>(slots_[tile].word);
  }

  Slot* slots_;
};

/// Flag and an up-to-8-byte value in one 16-byte aligned word, written with one 128-bit store (st.global.cg.v2)
/// and read with one 128-bit load (ld.global.cv.v2, which always fetches from L2). The memory model makes no
/// promise for vector accesses as a whole, but on sm_70 and later an aligned 16-byte access is performed as one
/// transaction, so in practice it is single-copy atomic: a reader never sees a new flag with an old value. This
/// is what the scan relies on (as CUB's tile status does); it saves the fences of the release/acquire scheme.
/// Only for 8-byte types: with a smaller value both halves of the word have unused upper bits, and the compiler
/// may then split the load into two narrower ones (ptxas did: torn reads, wrong sums).
template <class T, int SLOT_BYTES>
class TileStatus<T, SLOT_BYTES, TileStatusWord::Packed16> {
  static_assert(sizeof(T) == 8, "the 16-byte status word is for 8-byte types; smaller ones use Packed8");
  using Word = ulonglong2;  // x: the value's bits, y: the flag
  using Slot = TileStatusSlot<Word, SLOT_BYTES>;

 public:
  static size_t bytes(size_t num_tiles) { return num_tiles * sizeof(Slot); }
  explicit TileStatus(void* storage, size_t) : slots_(static_cast<Slot*>(storage)) {}

  __device__ void reset(size_t tile) const { __stcg(&slots_[tile].word, Word{0, kTileInvalid}); }

  __device__ void publish(size_t tile, TileFlag flag, const T& value) const {
    unsigned long long bits = 0;
    memcpy(&bits, &value, sizeof(T));
    __stcg(&slots_[tile].word, Word{bits, flag});
  }

  __device__ TileState<T> read(size_t tile) const {
    const Word word = __ldcv(&slots_[tile].word);
    TileState<T> state;
    state.flag = static_cast<unsigned>(word.y);
    memcpy(&state.value, &word.x, sizeof(T));
    return state;
  }

 private:
  Slot* slots_;
};

template <class T, int SLOT_BYTES>
class TileStatus<T, SLOT_BYTES, TileStatusWord::Separate> {
  using Slot = TileStatusSlot<unsigned, SLOT_BYTES>;

  static prims::detail::TempLayout<3> layout(size_t num_tiles) {
    return prims::detail::TempLayout<3>({num_tiles * sizeof(Slot), num_tiles * sizeof(T), num_tiles * sizeof(T)});
  }

 public:
  static size_t bytes(size_t num_tiles) { return layout(num_tiles).total_bytes; }
  TileStatus(void* storage, size_t num_tiles) {
    const auto parts = layout(num_tiles);
    char* base = static_cast<char*>(storage);
    flags_ = reinterpret_cast<Slot*>(base + parts.offsets[0]);
    aggregates_ = reinterpret_cast<T*>(base + parts.offsets[1]);
    inclusives_ = reinterpret_cast<T*>(base + parts.offsets[2]);
  }

  __device__ void reset(size_t tile) const { flags_[tile].word = kTileInvalid; }

  __device__ void publish(size_t tile, TileFlag flag, const T& value) const {
    (flag == kTileAggregate ? aggregates_ : inclusives_)[tile] = value;
    flag_ref(tile).store(flag, cuda::memory_order_release);
  }

  __device__ TileState<T> read(size_t tile) const {
    TileState<T> state;
    state.flag = flag_ref(tile).load(cuda::memory_order_acquire);
    if (state.flag == kTileAggregate) {
      state.value = aggregates_[tile];
    } else if (state.flag == kTileInclusive) {
      state.value = inclusives_[tile];
    }
    return state;
  }

 private:
  __device__ cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag_ref(size_t tile) const {
    return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(flags_[tile].word);
  }

  Slot* flags_;
  T* aggregates_;
  T* inclusives_;
};

/// Temporary storage holds garbage on entry: clear every tile's status and the tile counter before the scan.
template <class Status>
__global__ void init_tile_status_kernel(Status status, size_t num_tiles, unsigned* tile_counter) {
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const size_t tile = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tile < num_tiles) {
    status.reset(tile);
  }
  if (tile == 0) {
    *tile_counter = 0;
  }
}

/// The block-scan prefix callback of a single-pass tile: publishes the tile's aggregate, looks back for the
/// prefix of everything before the tile, and publishes the tile's inclusive prefix. Called by all of warp 0.
template <class Policy, class T, class Op, class Status>
struct LookBackPrefix {
  Status status;
  size_t tile;
  Op op;
  prims::detail::Maybe<T> seed;

  __device__ T operator()(const T& aggregate) {
    const bool publisher = threadIdx.x == 0;
    if (tile == 0) {  // only seeded (exclusive) scans get here with tile 0
      if (publisher) status.publish(0, kTileInclusive, op(seed.value, aggregate));
      return seed.value;
    }
    if (publisher) status.publish(tile, kTileAggregate, aggregate);
    const T prefix = look_back(aggregate);
    if (publisher) status.publish(tile, kTileInclusive, op(prefix, aggregate));
    return prefix;
  }

 private:
  // Lane i watches the tiles_per_lane tiles (window - i * tiles_per_lane - k), k = 0, 1, ..., with window = tile - 1,
  // then one window of 32 * tiles_per_lane tiles further back, and so on. Each lane first combines its own tiles
  // up to the nearest inclusive prefix among them; the window's lane values are then combined up to the nearest
  // lane with an inclusive prefix, and windows further back go on the left until one holds an inclusive prefix.
  // Tile 0 always publishes an inclusive prefix, so the walk ends there at the latest.
  __device__ T look_back(const T& placeholder) const {
    constexpr int tiles_per_lane = Policy::look_back_tiles_per_lane;
    constexpr long long window_tiles = static_cast<long long>(warp::kWarpThreads) * tiles_per_lane;
    const int lane = threadIdx.x % warp::kWarpThreads;
    T prefix = placeholder;
    for (long long window = static_cast<long long>(tile) - 1;; window -= window_tiles) {
      const long long nearest = window - static_cast<long long>(lane) * tiles_per_lane;
      TileState<T> state;
      unsigned inclusive_lanes;
      for (;;) {
        TileState<T> states[tiles_per_lane];
#pragma unroll
        for (int k = 0; k < tiles_per_lane; ++k) {
          // Tiles before tile 0 pose as inclusive; tile 0, nearer, always ends the walk first.
          states[k] = nearest - k >= 0 ? status.read(static_cast<size_t>(nearest - k))
                                       : TileState<T>{kTileInclusive, placeholder};
        }
        state = states[0];
        bool waiting = state.flag == kTileInvalid;
#pragma unroll
        for (int k = 1; k < tiles_per_lane; ++k) {
          if (state.flag != kTileInclusive) {
            waiting = waiting || states[k].flag == kTileInvalid;
            state = TileState<T>{states[k].flag, op(states[k].value, state.value)};
          }
        }
        const unsigned waiting_lanes = __ballot_sync(prims::detail::kFullWarpMask, waiting);
        inclusive_lanes = __ballot_sync(prims::detail::kFullWarpMask, state.flag == kTileInclusive);
        // Lanes up to the nearest inclusive one (all lanes when there is none): the lowest set bit and below.
        const unsigned needed = inclusive_lanes ^ (inclusive_lanes - 1);
        if ((waiting_lanes & needed) == 0) {
          break;
        }
        __nanosleep(Policy::look_back_wait_ns);
      }
      const int last = inclusive_lanes != 0 ? __ffs(inclusive_lanes) - 1 : warp::kWarpThreads - 1;
      const T window_total = reduce_window(state.value, last, lane);
      prefix = window == static_cast<long long>(tile) - 1 ? window_total : op(window_total, prefix);
      if (inclusive_lanes != 0) {
        return prefix;
      }
    }
  }

  // value[last] op ... op value[0] (higher lanes hold earlier tiles) in every lane: a doubling tree in which
  // lane i ends up holding lanes [i, min(i + 2 * offset - 1, last)], in order.
  __device__ T reduce_window(T value, int last, int lane) const {
#pragma unroll
    for (int offset = 1; offset < warp::kWarpThreads; offset *= 2) {
      const T earlier = prims::detail::shuffle_down(value, offset);
      if (lane + offset <= last) {
        value = op(earlier, value);
      }
    }
    return prims::detail::shuffle_index(value, 0);
  }
};

/// One block per tile, tiles taken in start order from the counter.
template <class Policy, bool EXCLUSIVE, class T, class Op, class Status>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    single_pass_scan_kernel(const T* in, T* out, size_t n, Op op, Maybe<T> seed, Status status,
                            unsigned* tile_counter) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  __shared__ unsigned tile_slot;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  if (threadIdx.x == 0) {
    tile_slot = atomicAdd(tile_counter, 1u);
  }
  __syncthreads();
  const size_t tile = tile_slot;
  const size_t tile_begin = tile * Tile::tile_items;
  const int valid = Tile::valid_items(tile, n);

  T items[Tile::items_per_thread];
  Tile::template load<Policy::load_hint>(in + tile_begin, valid, items, storage);
  typename Tile::BlockScan scan(storage.scan);
  if (tile == 0 && !seed.valid) {
    T aggregate;
    scan.inclusive_scan(items, items, op, aggregate);
    if (threadIdx.x == 0) {
      status.publish(0, kTileInclusive, aggregate);
    }
  } else {
    LookBackPrefix<Policy, T, Op, Status> prefix_op{status, tile, op, seed};
    scan_with_prefix<EXCLUSIVE>(scan, items, op, prefix_op);
  }
  Tile::template store<Policy::store_hint>(out + tile_begin, valid, items, storage);
}

// ---------------------------------------------------------------------------------------------------------------
// ReduceThenScan

/// Contiguous runs of tiles, one per block: span b is tiles [b * tiles_per_span, (b + 1) * tiles_per_span),
/// the last one cut at num_tiles.
struct Spans {
  size_t num_tiles;
  size_t tiles_per_span;
  size_t count;

  __host__ __device__ size_t first_tile(size_t span) const { return span * tiles_per_span; }
  __host__ __device__ size_t end_tile(size_t span) const {
    return span + 1 < count ? (span + 1) * tiles_per_span : num_tiles;
  }
};

/// The block-scan prefix callback of a block walking tiles in order: hands out the running carry and adds each
/// tile's total to it. Only warp 0's copy is ever called, so only warp 0's copy stays current.
template <class T, class Op>
struct RunningPrefix {
  T carry;
  Op op;
  __device__ T operator()(const T& aggregate) {
    const T prefix = carry;
    carry = op(carry, aggregate);
    return prefix;
  }
};

/// Scans tiles [first_tile, end_tile) of in[0, n) into out, in order, behind `carry` (absent only at the very
/// start of an inclusive scan, whose first tile then has nothing in front of it).
template <class Policy, bool EXCLUSIVE, class T, class Op>
__device__ void scan_tiles_in_order(const T* in, T* out, size_t n, size_t first_tile, size_t end_tile, Op op,
                                    Maybe<T> carry, typename ScanTile<Policy, T>::Storage& storage) {
  using Tile = ScanTile<Policy, T>;
  T items[Tile::items_per_thread];
  RunningPrefix<T, Op> prefix_op{carry.value, op};
  for (size_t tile = first_tile; tile < end_tile; ++tile) {
    const size_t tile_begin = tile * Tile::tile_items;
    const int valid = Tile::valid_items(tile, n);
    Tile::load(in + tile_begin, valid, items, storage);
    typename Tile::BlockScan scan(storage.scan);
    if (carry.valid) {
      scan_with_prefix<EXCLUSIVE>(scan, items, op, prefix_op);
    } else {
      scan.inclusive_scan(items, items, op, prefix_op.carry);
      carry.valid = true;
    }
    Tile::store(out + tile_begin, valid, items, storage);
    __syncthreads();  // the next tile reuses the block scan's storage
  }
}

/// (a) Block b reduces the tiles of span b, in order, into totals[b].
template <class Policy, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    reduce_spans_kernel(const T* in, size_t n, Spans spans, T* totals, Op op) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  T items[Tile::items_per_thread];
  T total;
  const size_t first_tile = spans.first_tile(blockIdx.x);
  for (size_t tile = first_tile; tile < spans.end_tile(blockIdx.x); ++tile) {
    Tile::load(in + tile * Tile::tile_items, Tile::valid_items(tile, n), items, storage);
    const T tile_total = typename Tile::BlockScan(storage.scan).reduce(items, op);
    total = tile == first_tile ? tile_total : op(total, tile_total);
    __syncthreads();  // the next tile reuses the block scan's storage
  }
  if (threadIdx.x == 0) {
    totals[blockIdx.x] = total;
  }
}

/// (b) One block: totals[b] becomes seed op totals[0] op ... op totals[b] (inclusive), so that span b + 1
/// starts behind totals[b].
template <class Policy, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    scan_totals_kernel(T* totals, size_t count, Op op, Maybe<T> seed) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  scan_tiles_in_order<Policy, false>(totals, totals, count, 0, Tile::count(count), op, seed, storage);
}

/// (c) Block b scans span b behind the scanned total of the spans before it (span 0: behind the seed).
template <class Policy, bool EXCLUSIVE, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    scan_spans_kernel(const T* in, T* out, size_t n, Spans spans, const T* scanned_totals, Op op, Maybe<T> seed) {
  using Tile = ScanTile<Policy, T>;
  __shared__ typename Tile::Storage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const Maybe<T> carry = blockIdx.x == 0 ? seed : Maybe<T>{scanned_totals[blockIdx.x - 1], true};
  scan_tiles_in_order<Policy, EXCLUSIVE>(in, out, n, spans.first_tile(blockIdx.x), spans.end_tile(blockIdx.x), op,
                                         carry, storage);
}

}  // namespace prims::detail
