#pragma once
// Kernels of the single-pass-per-digit radix sort (RadixSortAlgorithm::Onesweep, after Adinets and Merrill,
// "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022).
//   1. onesweep_histogram_kernel      one read of the keys counts the digits of every pass at once, and notes
//                                     whether any float key is a NaN or -0.0;
//   2. onesweep_digit_starts_kernel   one block a pass turns its histogram into each digit's first position and
//                                     notes whether the pass is trivial (every key has the same digit);
//   3. onesweep_pass_kernel           one launch a pass: each block takes the next tile id from a counter, ranks
//      its tile's keys warp by warp (one ballot per digit bit finds a key's peers, and one shared atomic per group
//      of peers counts them), publishes the tile's digit counts at once (so later tiles stop waiting on it), then
//      looks back across earlier tiles for each digit's output position while it puts its keys
//      into shared memory in rank order, and finally writes each digit's run with coalesced stores.
// Look-back words pack a 2-bit state and a 30-bit count, so one pass covers fewer than 2^30 keys
// (kOnesweepMaxItems); larger inputs go to TileCounts. Tile 0 publishes each digit's global start plus its own
// count as an inclusive word, so a look-back ends with the digit's output position and needs no other table.
// A trivial pass cannot reorder anything: its blocks copy their tile straight through. When no key is special
// (RadixKey<K>::is_special: float NaNs and -0.0), full tiles compute digits on the shorter plain path.
// Look-back words must be zero when a pass starts: pass p uses one of two buffers and clears the other one for
// pass p + 1; the histogram kernel clears the first. Every kernel is launched with programmatic dependent launch.

#include <cuda/atomic>

#include <cstddef>

#include "prims/block/scan.cuh"
#include "prims/device/detail/radix_sort_kernels.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/warp/match.cuh"

namespace prims::device::detail {

/// Look-back word: bits 31..30 say what bits 29..0 hold.
inline constexpr unsigned kLookbackValueMask = (1u << 30) - 1;
/// The tile's own count of the digit.
inline constexpr unsigned kLookbackAggregate = 1u << 30;
/// The digit's output position after this tile: its global start plus its count over this and earlier tiles.
inline constexpr unsigned kLookbackInclusive = 2u << 30;

/// The most keys Onesweep sorts: every count fits in a look-back word's 30 bits.
inline constexpr size_t kOnesweepMaxItems = kLookbackValueMask;

/// N keys read or written as one 16-byte access.
template <class K, int N>
struct alignas(16) KeyVector {
  K keys[N];
};

template <class Policy, class Shape, class K>
__global__ void __launch_bounds__(Shape::threads)
    onesweep_histogram_kernel(const K* __restrict__ keys, size_t n, Order order, int begin_bit, int end_bit,
                              unsigned* __restrict__ histograms, unsigned* __restrict__ special_keys,
                              unsigned* __restrict__ lookback, size_t lookback_words) {
  constexpr int kThreads = Shape::threads;
  constexpr int kItems = Policy::histogram_items_per_thread;
  constexpr int kCopies = Shape::copies;
  constexpr size_t kTileItems = static_cast<size_t>(kThreads) * kItems;
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
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const size_t grid_threads = static_cast<size_t>(gridDim.x) * kThreads;
  for (size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x; i < lookback_words; i += grid_threads) {
    lookback[i] = 0;
  }
  __syncthreads();

  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  const int lane = threadIdx.x % warp::kWarpThreads;
  // Shared-window address of this lane's copy.
  const unsigned my_counts =
      static_cast<unsigned>(__cvta_generic_to_shared(counts)) + (lane % kCopies) * 4u;
  bool special = false;
  auto count_key = [&](K key) {
    if constexpr (RadixKey<K>::kHasSpecialKeys) special = special || RadixKey<K>::is_special(key);
    const auto bits = RadixKey<K>::ordered_bits(key);
#pragma unroll
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (pass < num_passes) {
        const unsigned digit = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass).of_bits(bits);
        asm volatile("red.shared.add.u32 [%0], 1;" : : "r"(my_counts + (pass * kDigits + digit) * kCopies * 4u)
                     : "memory");
      }
    }
  };

  // Keys are read 16 bytes at a time from the first 16-byte boundary on; block 0 counts the keys before it.
  constexpr int kVector = 16 / sizeof(K) > 0 ? 16 / sizeof(K) : 1;
  static_assert(kItems % kVector == 0, "histogram items come in whole 16-byte vectors");
  using Vector = KeyVector<K, kVector>;
  const size_t misaligned = (reinterpret_cast<size_t>(keys) / sizeof(K)) % kVector;
  const size_t head = misaligned == 0 ? 0 : (kVector - misaligned < n ? kVector - misaligned : n);
  if (blockIdx.x == 0 && threadIdx.x < head) count_key(keys[threadIdx.x]);
  const Vector* body = reinterpret_cast<const Vector*>(keys + head);
  const size_t num_full_tiles = (n - head) / kTileItems;
  for (size_t tile = blockIdx.x; tile < num_full_tiles; tile += gridDim.x) {
    Vector vectors[kItems / kVector];
#pragma unroll
    for (int i = 0; i < kItems / kVector; ++i) {
      vectors[i] = body[(tile * kItems / kVector + i) * kThreads + threadIdx.x];
    }
#pragma unroll
    for (int i = 0; i < kItems / kVector; ++i) {
#pragma unroll
      for (int j = 0; j < kVector; ++j) count_key(vectors[i].keys[j]);
    }
  }
  for (size_t i = head + num_full_tiles * kTileItems + blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x;
       i < n; i += grid_threads) {
    count_key(keys[i]);
  }
  if (__syncthreads_or(special) && threadIdx.x == 0) *special_keys = 1;

  for (int i = threadIdx.x; i < num_passes * kDigits; i += kThreads) {
    unsigned total = 0;
#pragma unroll
    for (int copy = 0; copy < kCopies; ++copy) total += counts[i * kCopies + copy];
    if (total != 0) atomicAdd(&histograms[i], total);
  }
}

/// Block p: starts[p][d] = histograms[p][0] + ... + histograms[p][d - 1]; trivial[p] = whether one digit holds
/// all n keys.
template <class Policy>
__global__ void __launch_bounds__(1 << Policy::radix_bits)
    onesweep_digit_starts_kernel(const unsigned* __restrict__ histograms, unsigned* __restrict__ starts,
                                 unsigned* __restrict__ trivial, unsigned n) {
  constexpr int kDigits = 1 << Policy::radix_bits;
  using DigitScan = block::Scan<unsigned, kDigits>;
  __shared__ typename DigitScan::TempStorage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  const int i = blockIdx.x * kDigits + threadIdx.x;
  const unsigned count = histograms[i];
  starts[i] = DigitScan(storage).exclusive_scan(count, Sum{}, 0u);
  const bool one_digit = __syncthreads_or(count == n);
  if (threadIdx.x == 0) trivial[blockIdx.x] = one_digit ? 1u : 0u;
}

/// Everything one Onesweep pass needs; the grid has one block per tile.
template <class K, class V>
struct OnesweepPass {
  PassBuffers<K, V> buffers;
  unsigned n;
  DigitExtractor<K> digit_of;
  /// This pass's digit starts and whether it is trivial (from kernel 2).
  const unsigned* digit_starts;
  const unsigned* trivial;
  /// Non-zero when some key is special (RadixKey<K>::is_special); otherwise digits take the plain path.
  const unsigned* special_keys;
  /// Hands out tile ids in the order blocks start, so a tile only ever waits for tiles already running.
  unsigned* tile_counter;
  /// [tile][digit] look-back words of this pass (zero on entry), and the next pass's to clear (null if none).
  unsigned* lookback;
  unsigned* next_lookback;
};

using LookbackWord = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

/// Walks back from `tile - 1` over the words of one digit, adding aggregates until an inclusive word, and returns
/// the digit's output position for this tile. It reads WORDS_PER_STEP earlier words at once, so a walk over many
/// tiles that have published only their aggregates costs one memory round trip per WORDS_PER_STEP tiles; a word
/// not yet published stops the step, and the next step starts there. Counts are the only data shared between
/// blocks, and each word is written whole, so relaxed atomics suffice.
template <int WORDS_PER_STEP>
__device__ unsigned look_back(const unsigned* lookback, unsigned tile, int digits, int digit) {
  unsigned before = 0;
  unsigned next = tile;  // words of tiles below `next` are still to be added
  for (;;) {
    unsigned words[WORDS_PER_STEP];
#pragma unroll
    for (int j = 0; j < WORDS_PER_STEP; ++j) {
      // Tile 0's word is inclusive, so a walk never needs a word below it.
      words[j] = next > static_cast<unsigned>(j)
                     ? LookbackWord(const_cast<unsigned&>(lookback[(next - 1 - j) * digits + digit]))
                           .load(cuda::memory_order_relaxed)
                     : kLookbackInclusive;
    }
    bool stalled = false;
#pragma unroll
    for (int j = 0; j < WORDS_PER_STEP; ++j) {
      if (!stalled) {
        if ((words[j] & ~kLookbackValueMask) == 0) {
          stalled = true;
        } else {
          before += words[j] & kLookbackValueMask;
          if (words[j] & kLookbackInclusive) return before;
          --next;
        }
      }
    }
  }
}

/// The onesweep tile: shared memory of one pass block, for the policy's block shape.
template <class Policy, class K, class V>
struct OnesweepTile {
  using Tile = SortTile<Policy, K, V, unsigned>;
  static constexpr int kThreads = Tile::kThreads;
  static constexpr int kItems = Tile::kItems;
  static constexpr int kTileItems = Tile::kTileItems;
  static constexpr int kDigits = Tile::kDigits;
  static constexpr int kWarps = kThreads / warp::kWarpThreads;
  using DigitScan = block::Scan<unsigned, kThreads>;
  static_assert(kDigits <= kThreads, "the pass kernel needs a thread per digit");

  struct TempStorage {
    union {
      /// warp_counts[w][d]: first how many of warp w's keys have digit d, then where they start in the tile.
      unsigned warp_counts[kWarps][kDigits];
      /// The tile in rank order (keys, then values).
      alignas(16) unsigned char exchange[static_cast<size_t>(kTileItems) * kSortItemBytes<K, V>];
    };
    /// Slot s of the ranked tile, with digit d, goes to output position digit_base[d] + s.
    unsigned digit_base[kDigits];
    typename DigitScan::TempStorage scan;
    unsigned tile_id;
  };
};

/// The lanes below this one.
__device__ __forceinline__ unsigned lanes_below_mask() {
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

/// Where `leader` holds: atomically adds `amount` to the shared word at `address` (a shared-window address) and
/// returns the old value; elsewhere returns 0 and touches nothing. Predicated, so no branch splits the warp.
__device__ __forceinline__ unsigned shared_add_if(bool leader, unsigned address, unsigned amount) {
  unsigned old;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.u32 %0, 0;\n\t"
      "@p atom.shared.add.u32 %0, [%2], %3;\n\t}"
      : "=r"(old)
      : "r"(static_cast<unsigned>(leader)), "r"(address), "r"(amount)
      : "memory");
  return old;
}

/// Copies one tile of a trivial pass in place.
template <class Tile, class T>
__device__ void onesweep_copy_tile(const T* __restrict__ in, T* __restrict__ out, unsigned n) {
  const unsigned tile_begin = blockIdx.x * Tile::kTileItems;
  const int valid = static_cast<int>(n - tile_begin < Tile::kTileItems ? n - tile_begin : Tile::kTileItems);
  T items[Tile::kItems];
  Tile::load(in + tile_begin, valid, items);
  Tile::store_in_place(out + tile_begin, valid, items);
}

/// Bits of a packed rank word: the rank in the low 16 bits, the item's digit above them.
inline constexpr int kRankBits = 16;
inline constexpr unsigned kRankMask = (1u << kRankBits) - 1;

/// One tile of a pass, after the block has taken its tile id. FULL: the tile holds kTileItems keys, none of them
/// special (RadixKey<K>::is_special), so no item needs a bounds check and digits come from DigitExtractor::plain;
/// otherwise `valid` keys (the last tile, or any tile when some float key is a NaN or -0.0) and the exact digits.
template <class Policy, class K, class V, bool FULL>
__device__ __forceinline__ void onesweep_tile(const OnesweepPass<K, V>& pass,
                                              typename OnesweepTile<Policy, K, V>::TempStorage& storage,
                                              unsigned tile, int valid) {
  using Shape = OnesweepTile<Policy, K, V>;
  using Tile = typename Shape::Tile;
  constexpr int kThreads = Shape::kThreads;
  constexpr int kItems = Shape::kItems;
  constexpr int kTileItems = Shape::kTileItems;
  constexpr int kDigits = Shape::kDigits;
  static_assert(kTileItems <= (1 << kRankBits), "packed ranks hold 16 bits");
  static_assert(Policy::radix_bits <= 8, "packed slot digits hold 8 bits");
  if constexpr (FULL) valid = kTileItems;
  const unsigned tile_begin = tile * kTileItems;
  const int lane = threadIdx.x % warp::kWarpThreads;
  const int warp_id = threadIdx.x / warp::kWarpThreads;
  const bool digit_thread = threadIdx.x < kDigits;
  auto digit_of = [&](K key) { return FULL ? pass.digit_of.plain(key) : pass.digit_of(key); };

  K keys[kItems];
  if constexpr (FULL) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) keys[i] = pass.buffers.keys_in[tile_begin + Tile::element(i)];
  } else {
    Tile::load(pass.buffers.keys_in + tile_begin, valid, keys);
  }

  // 1. Each warp counts its digits in its own row; the highest lane of each group of equal digits adds the
  //    group's size and hands the old count to its peers. Items go in tile order, so ranks are stable.
  //    ranks[i] packs the item's rank (first within the warp's digit, later within the tile) and its digit.
  unsigned ranks[kItems];
  const unsigned lanes_below = lanes_below_mask();
  const unsigned counts_address =
      static_cast<unsigned>(__cvta_generic_to_shared(storage.warp_counts[warp_id]));
  // Every digit first (the padding of the last tile ranks as the largest digit, after every real key); the warp
  // barrier keeps the compiler from deferring key loads into the ranking loop, where each would stall it.
#pragma unroll
  for (int i = 0; i < kItems; ++i) ranks[i] = FULL || Tile::element(i) < valid ? digit_of(keys[i]) : kDigits - 1;
  __syncwarp();
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const unsigned digit = ranks[i];
    const unsigned peers = warp::lanes_with_same_value<Policy::radix_bits, Policy::rank_with_match_any>(digit);
    const int leader = 31 - __clz(peers);
    const unsigned before = shared_add_if(lane == leader, counts_address + digit * 4u, __popc(peers));
    ranks[i] = (__shfl_sync(prims::detail::kFullWarpMask, before, leader) + __popc(peers & lanes_below)) |
               (digit << kRankBits);
  }
  __syncthreads();

  // 2. Thread d totals digit d over the warps and publishes the tile's count right away, then the block scans
  //    the totals and each warp's row becomes its keys' first positions in the ranked tile.
  unsigned digit_total = 0;
  if (digit_thread) {
#pragma unroll
    for (int w = 0; w < Shape::kWarps; ++w) {
      const unsigned count = storage.warp_counts[w][threadIdx.x];
      storage.warp_counts[w][threadIdx.x] = digit_total;
      digit_total += count;
    }
    if (!FULL && threadIdx.x == kDigits - 1) digit_total -= kTileItems - valid;
    LookbackWord own(pass.lookback[tile * kDigits + threadIdx.x]);
    own.store(tile == 0 ? kLookbackInclusive | (pass.digit_starts[threadIdx.x] + digit_total)
                        : kLookbackAggregate | digit_total,
              cuda::memory_order_relaxed);
  }
  const unsigned digit_prefix = typename Shape::DigitScan(storage.scan).exclusive_scan(digit_total, Sum{}, 0u);
  if (digit_thread) {
#pragma unroll
    for (int w = 0; w < Shape::kWarps; ++w) storage.warp_counts[w][threadIdx.x] += digit_prefix;
  }
  __syncthreads();
  const unsigned* counts = storage.warp_counts[warp_id];
#pragma unroll
  for (int i = 0; i < kItems; ++i) ranks[i] = (ranks[i] + counts[ranks[i] >> kRankBits]) & kRankMask;
  __syncthreads();

  // 3. Keys go to shared memory in rank order while the digit threads look back for their digit's position.
  K* ranked_keys = reinterpret_cast<K*>(storage.exchange);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (FULL || ranks[i] < static_cast<unsigned>(valid)) ranked_keys[ranks[i]] = keys[i];
  }
  // Values load before the look-back, so that their latency and the look-back's overlap.
  V values[kItems];
  if constexpr (kHasValues<V>) {
    if constexpr (FULL) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) values[i] = pass.buffers.values_in[tile_begin + Tile::element(i)];
    } else {
      Tile::load(pass.buffers.values_in + tile_begin, valid, values);
    }
  }
  if (digit_thread) {
    unsigned position = pass.digit_starts[threadIdx.x];
    if (tile != 0) {
      position = look_back<Policy::lookback_words_per_step>(pass.lookback, tile, kDigits, threadIdx.x);
      LookbackWord own(pass.lookback[tile * kDigits + threadIdx.x]);
      own.store(kLookbackInclusive | (position + digit_total), cuda::memory_order_relaxed);
    }
    storage.digit_base[threadIdx.x] = position - digit_prefix;
  }
  __syncthreads();

  // 4. Slot s holds the key of rank s: runs of one digit are written contiguously.
  // Pairs keep each slot's digit for the values, four to a register (registers are what pairs run short of).
  constexpr int kPackedDigits = kHasValues<V> ? (kItems + 3) / 4 : 1;
  unsigned slot_digits[kPackedDigits] = {};
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int slot = k * kThreads + threadIdx.x;
    if (FULL || slot < valid) {
      const K key = ranked_keys[slot];
      const unsigned digit = digit_of(key);
      if constexpr (kHasValues<V>) slot_digits[k / 4] |= digit << (8 * (k % 4));
      pass.buffers.keys_out[storage.digit_base[digit] + slot] = key;
    }
  }
  if constexpr (kHasValues<V>) {
    V* ranked_values = reinterpret_cast<V*>(storage.exchange);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (FULL || ranks[i] < static_cast<unsigned>(valid)) ranked_values[ranks[i]] = values[i];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int slot = k * kThreads + threadIdx.x;
      if (FULL || slot < valid) {
        const unsigned digit = (slot_digits[k / 4] >> (8 * (k % 4))) & 0xffu;
        pass.buffers.values_out[storage.digit_base[digit] + slot] = ranked_values[slot];
      }
    }
  }
}

template <class Policy, class K, class V>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    onesweep_pass_kernel(OnesweepPass<K, V> pass) {
  using Shape = OnesweepTile<Policy, K, V>;
  using Tile = typename Shape::Tile;
  constexpr int kTileItems = Shape::kTileItems;
  constexpr int kDigits = Shape::kDigits;
  __shared__ typename Shape::TempStorage storage;

  const int lane = threadIdx.x % warp::kWarpThreads;
  const int warp_id = threadIdx.x / warp::kWarpThreads;
#pragma unroll
  for (int d = lane; d < kDigits; d += warp::kWarpThreads) storage.warp_counts[warp_id][d] = 0;

  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  if (pass.next_lookback != nullptr && threadIdx.x < kDigits) {
    pass.next_lookback[blockIdx.x * kDigits + threadIdx.x] = 0;
  }
  if (*pass.trivial != 0) {
    onesweep_copy_tile<Tile>(pass.buffers.keys_in, pass.buffers.keys_out, pass.n);
    if constexpr (kHasValues<V>) onesweep_copy_tile<Tile>(pass.buffers.values_in, pass.buffers.values_out, pass.n);
    return;
  }

  if (threadIdx.x == 0) storage.tile_id = atomicAdd(pass.tile_counter, 1u);
  __syncthreads();
  const unsigned tile = storage.tile_id;
  const unsigned tile_begin = tile * kTileItems;
  const int valid = pass.n - tile_begin < static_cast<unsigned>(kTileItems) ? static_cast<int>(pass.n - tile_begin)
                                                                            : kTileItems;
  // Full tiles without special keys (every integer key) take the plain body; the last tile, and every tile when
  // some float is a NaN or -0.0, the general one. A third body for full tiles with special keys made the kernel
  // 1.7x larger and every pass ~13 us slower to start.
  if (valid == kTileItems && (!RadixKey<K>::kHasSpecialKeys || *pass.special_keys == 0)) {
    onesweep_tile<Policy, K, V, true>(pass, storage, tile, kTileItems);
  } else {
    onesweep_tile<Policy, K, V, false>(pass, storage, tile, valid);
  }
}

}  // namespace prims::device::detail
