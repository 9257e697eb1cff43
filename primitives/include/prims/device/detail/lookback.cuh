#pragma once
// The decoupled look-back (Merrill & Garland 2016) of every single-pass algorithm: the scan (scan_kernels.cuh),
// the selections (select_kernels.cuh), the by-key family (by_key_kernels.cuh), top-k's splits (top_k_kernels.cuh),
// and the radix sort's Onesweep passes (radix_sort_onesweep.cuh, segmented_onesweep.cuh). A tile's block takes its
// tile id from a counter in the order blocks start, so a tile only ever waits on tiles of blocks already running
// (deadlock-free under any scheduling); it publishes its aggregate, looks back over its predecessors until it meets
// an inclusive prefix, and publishes its own inclusive prefix.
//
//   TileStatus               one status word a tile (flag and value), in temporary storage; four layouts, one
//                            interface (reset, publish, read)
//   reset_statuses           how every status is cleared (temporary storage holds garbage on entry)
//   init_tile_status_kernel  clears the words and the tile counter
//   LookBackPrefix           a tile with one value: the block scan's prefix callback that publishes, looks back
//                            with one warp and publishes again
//   TileCountRows            a tile with many counts (one a digit): each count published and looked back by its
//                            own thread
//   take_work, take_tile     a block's tile from the counter
//
// A Policy gives look_back_wait_ns (the pause between polls of predecessors that have not published) and
// look_back_tiles_per_lane (tiles each lane of the look-back warp reads a poll).

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "prims/util/error.cuh"
#include "prims/util/host_device.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail {

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
/// load into two 4-byte loads there, and a reader could see a flag with half a value. Tagged30: one 4-byte word of
/// a 2-bit flag and a 30-bit count, for tiles that publish many counts (TileCountRows): a radix-sort tile's 256
/// counts in 1 KB, not 2 KB, which the pass's look-back reads over and over.
enum class TileStatusWord { Packed8, Packed16, Separate, Tagged30 };

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

/// A flag in bits 31..30 and a count below 2^30 in bits 29..0, in one 4-byte word written and read whole (relaxed
/// atomics: the count is the only data shared, and it travels with its flag). Words are packed (SLOT_BYTES 4): the
/// counts of one tile are published together, and each tile's row of them fills lines of its own.
template <int SLOT_BYTES>
class TileStatus<unsigned, SLOT_BYTES, TileStatusWord::Tagged30> {
  static_assert(SLOT_BYTES == 4, "tagged words are packed");
  static_assert(kTileInclusive < 4, "flags fit in two bits");

 public:
  /// The largest count a word holds.
  static constexpr unsigned kMaxValue = (1u << 30) - 1;

  static size_t bytes(size_t num_words) { return num_words * sizeof(unsigned); }
  PRIMS_HOST_DEVICE explicit TileStatus(void* storage, size_t = 0) : words_(static_cast<unsigned*>(storage)) {}

  __device__ void reset(size_t i) const { words_[i] = 0; }

  __device__ void publish(size_t i, TileFlag flag, unsigned count) const {
    word(i).store(static_cast<unsigned>(flag) << 30 | count, cuda::memory_order_relaxed);
  }

  __device__ TileState<unsigned> read(size_t i) const {
    const unsigned packed = word(i).load(cuda::memory_order_relaxed);
    return {packed >> 30, packed & kMaxValue};
  }

  PRIMS_HOST_DEVICE unsigned* data() const { return words_; }

 private:
  __device__ cuda::atomic_ref<unsigned, cuda::thread_scope_device> word(size_t i) const {
    return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(words_[i]);
  }

  unsigned* words_;
};

/// Resets statuses [0, count): worker `worker` of `workers` takes every workers-th one from `worker` on. Every
/// status is cleared this way (by a kernel of its own, or by the kernel before the one that uses it).
template <class Status>
__device__ __forceinline__ void reset_statuses(const Status& status, size_t count, size_t worker, size_t workers) {
  for (size_t i = worker; i < count; i += workers) status.reset(i);
}

/// Temporary storage holds garbage on entry: clear every tile's status and the tile counter before the scan (and
/// `count`, an algorithm's own counter, where given).
template <class Status>
__global__ void init_tile_status_kernel(Status status, size_t num_tiles, unsigned* tile_counter,
                                        unsigned long long* count) {
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const size_t tile = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  reset_statuses(status, num_tiles, tile, static_cast<size_t>(gridDim.x) * blockDim.x);
  if (tile == 0) {
    *tile_counter = 0;
    if (count != nullptr) *count = 0;
  }
}

/// The tile a block works on: the next one from the counter, so tiles go to blocks in the order they start.
struct TakenTile {
  size_t tile;   // its index
  size_t begin;  // its first item
  int valid;     // how many of its TILE_ITEMS items exist (the last tile may hold fewer)
};

/// The next unit of work (tile id) of a block, taken from `counter` in the order blocks ask, the same in every
/// thread (the caller synchronizes the block before calling again, since `shared` is reused).
__device__ __forceinline__ unsigned take_work(unsigned* counter, unsigned& shared) {
  if (threadIdx.x == 0) shared = atomicAdd(counter, 1u);
  __syncthreads();
  return shared;
}

/// Takes the block's tile (all threads call it; one reads the counter). After wait_for_prior_grids().
template <int TILE_ITEMS>
__device__ inline TakenTile take_tile(unsigned* tile_counter, size_t n) {
  __shared__ unsigned slot;
  const size_t tile = take_work(tile_counter, slot);
  const size_t begin = tile * TILE_ITEMS;
  const size_t rest = n - begin;
  return {tile, begin, rest < static_cast<size_t>(TILE_ITEMS) ? static_cast<int>(rest) : TILE_ITEMS};
}

/// A single-pass algorithm's look-back storage in temp: every tile's status, then the tile counter.
/// Example (dispatch of a single-pass kernel):
///   void* parts[2];
///   PRIMS_TRY(LookBackTemp<Status>::carve(temp, temp_bytes, num_tiles, "scan", n, parts));
///   if (temp == nullptr) return cudaSuccess;
///   const LookBackTemp<Status> look_back(parts, num_tiles);
///   PRIMS_TRY(look_back.clear(num_tiles, stream));  // then the kernel, with look_back.status and .tile_counter
template <class Status>
struct LookBackTemp {
  Status status;
  unsigned* tile_counter;

  LookBackTemp(void* const (&parts)[2], size_t num_tiles)
      : status(parts[0], num_tiles), tile_counter(static_cast<unsigned*>(parts[1])) {}

  /// The two-phase protocol's carving (with temp == nullptr only temp_bytes is set). More tiles than a grid has
  /// blocks is an invalid value, reported for `name` and n.
  static cudaError_t carve(void* temp, size_t& temp_bytes, size_t num_tiles, const char* name, size_t n,
                           void* (&parts)[2]) {
    void* extra = nullptr;
    return carve(temp, temp_bytes, num_tiles, name, n, parts, 0, extra);
  }
  /// The same with `extra_bytes` more for the algorithm's own use (`extra`).
  static cudaError_t carve(void* temp, size_t& temp_bytes, size_t num_tiles, const char* name, size_t n,
                           void* (&parts)[2], size_t extra_bytes, void*& extra) {
    if (num_tiles > static_cast<size_t>(INT_MAX)) {
      return invalid_value("%s: n = %zu needs more tiles than a grid has blocks", name, n);
    }
    void* all[3];
    PRIMS_TRY(carve_temp(temp, temp_bytes, {Status::bytes(num_tiles), sizeof(unsigned), extra_bytes}, all));
    parts[0] = all[0];
    parts[1] = all[1];
    extra = all[2];
    return cudaSuccess;
  }

  /// Clears the statuses and the counter (temporary storage holds garbage on entry), and `count` where given:
  /// one launch.
  cudaError_t clear(size_t num_tiles, cudaStream_t stream, unsigned long long* count = nullptr) const {
    constexpr unsigned threads = 256;
    const auto blocks = static_cast<unsigned>((num_tiles + threads - 1) / threads);
    return launch(init_tile_status_kernel<Status>, blocks, threads, 0, stream, status, num_tiles, tile_counter,
                  count);
  }
};

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


/// The statuses of tiles that carry LANES counts (a radix-sort pass's tile: one count a digit), each published and
/// looked back by its own thread: row `tile` holds the tile's LANES tagged words ([tile][lane]). A tile publishes
/// each count as soon as it has it (an aggregate; the first tile's as inclusive), then looks back per lane, and
/// publishes the inclusive count. Tiles and words are numbered in 32 bits from the rows' start (a run that looks
/// back within itself holds fewer than 2^30 counted items, so far fewer than 2^32 words): the kernels that use it
/// run short of registers, and 64-bit indices spilled more of them.
template <int LANES>
class TileCountRows {
 public:
  using Words = TileStatus<unsigned, 4, TileStatusWord::Tagged30>;
  /// The largest count (so the most keys of a run of tiles that looks back within itself).
  static constexpr unsigned kMaxCount = Words::kMaxValue;

  static size_t bytes(size_t num_tiles) { return Words::bytes(num_tiles * LANES); }
  PRIMS_HOST_DEVICE explicit TileCountRows(unsigned* storage) : words_(storage) {}

  /// The rows from `first_tile` on, as rows of their own (tile 0 is first_tile): a run of tiles that looks back only
  /// within itself (a segment's).
  PRIMS_HOST_DEVICE TileCountRows from(size_t first_tile) const {
    return TileCountRows(words_.data() + first_tile * LANES);
  }
  /// Every word, one status each: rows [0, t) are words [0, t * LANES), for reset_statuses.
  PRIMS_HOST_DEVICE const Words& words() const { return words_; }

  __device__ void reset(unsigned tile, unsigned lane) const { words_.reset(tile * LANES + lane); }

  __device__ void publish(unsigned tile, unsigned lane, TileFlag flag, unsigned count) const {
    words_.publish(tile * LANES + lane, flag, count);
  }

  /// Walks back from `tile - 1` (tile > 0) over lane `lane`'s words, adding aggregates until an inclusive word, and
  /// returns the sum: the lane's count over the earlier tiles. It reads WORDS_PER_STEP earlier words at once, so a
  /// walk over many tiles that have published only their aggregates costs one memory round trip per
  /// WORDS_PER_STEP tiles; a word not yet published stops the step, and the next step starts there. Tile 0 always
  /// publishes inclusive counts, so the walk ends there at the latest.
  template <int WORDS_PER_STEP>
  __device__ unsigned look_back(unsigned tile, unsigned lane) const {
    unsigned before = 0;
    unsigned next = tile;  // words of tiles below `next` are still to be added
    for (;;) {
      TileState<unsigned> states[WORDS_PER_STEP];
#pragma unroll
      for (int j = 0; j < WORDS_PER_STEP; ++j) {
        states[j] = next > static_cast<unsigned>(j) ? words_.read((next - 1 - j) * LANES + lane)
                                                    : TileState<unsigned>{kTileInclusive, 0u};
      }
      bool stalled = false;
#pragma unroll
      for (int j = 0; j < WORDS_PER_STEP; ++j) {
        if (!stalled) {
          if (states[j].flag == kTileInvalid) {
            stalled = true;
          } else {
            before += states[j].value;
            if (states[j].flag == kTileInclusive) return before;
            --next;
          }
        }
      }
    }
  }

 private:
  Words words_;
};

}  // namespace prims::detail
