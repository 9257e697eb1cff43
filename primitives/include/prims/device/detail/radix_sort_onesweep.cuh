#pragma once
// Kernels of the single-pass-per-digit radix sort (RadixSortAlgorithm::Onesweep, after Adinets and Merrill,
// "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022).
//   1. onesweep_histogram_kernel      one read of the keys counts the digits of every pass at once;
//   2. onesweep_digit_starts_kernel   one block a pass turns its histogram into each digit's first position;
//   3. onesweep_pass_kernel           one launch a pass: each block takes the next tile id from a counter, ranks
//      the tile (block::RadixRank), publishes its digit counts and looks back across earlier tiles for their sum
//      (decoupled look-back), then scatters (SortTile).
// Look-back words pack a 2-bit state and a 30-bit count, so one pass covers fewer than 2^30 keys
// (kOnesweepMaxItems); larger inputs go to TileCounts. A pass whose keys all share one digit cannot reorder
// anything: its blocks see that in the histogram and copy their tile straight through, with no ranking and no
// look-back. Look-back words must be zero when a pass starts: pass p uses one of two buffers and clears the
// other one for pass p + 1; the histogram kernel clears the first.

#include <cuda/atomic>

#include <cstddef>

#include "prims/block/scan.cuh"
#include "prims/device/detail/radix_sort_kernels.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/shuffle.cuh"

namespace prims::device::detail {

/// Look-back word: bits 31..30 say what bits 29..0 hold.
inline constexpr unsigned kLookbackValueMask = (1u << 30) - 1;
/// The tile's own count of the digit.
inline constexpr unsigned kLookbackAggregate = 1u << 30;
/// The count of the digit over this tile and every earlier one.
inline constexpr unsigned kLookbackInclusive = 2u << 30;

/// The most keys Onesweep sorts: every count fits in a look-back word's 30 bits.
inline constexpr size_t kOnesweepMaxItems = kLookbackValueMask;

template <class Policy, class K>
__global__ void __launch_bounds__(Policy::histogram_block_threads)
    onesweep_histogram_kernel(const K* __restrict__ keys, size_t n, Order order, int begin_bit, int end_bit,
                              unsigned* __restrict__ histograms, unsigned* __restrict__ lookback,
                              size_t lookback_words) {
  constexpr int kThreads = Policy::histogram_block_threads;
  constexpr int kItems = Policy::histogram_items_per_thread;
  constexpr size_t kTileItems = static_cast<size_t>(kThreads) * kItems;
  constexpr int kDigits = 1 << Policy::radix_bits;
  constexpr int kMaxPasses = radix_passes(0, RadixKey<K>::kBits, Policy::radix_bits);
  // One word of padding between copies puts the copies of a counter in different banks.
  constexpr int kCopyWords = kMaxPasses * kDigits + 1;
  __shared__ unsigned counts[Policy::histogram_copies * kCopyWords];

  for (int i = threadIdx.x; i < Policy::histogram_copies * kCopyWords; i += kThreads) counts[i] = 0;
  const size_t grid_threads = static_cast<size_t>(gridDim.x) * kThreads;
  for (size_t i = blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x; i < lookback_words; i += grid_threads) {
    lookback[i] = 0;
  }
  __syncthreads();

  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  const int lane = threadIdx.x % warp::kWarpThreads;
  unsigned* my_counts = counts + (lane % Policy::histogram_copies) * kCopyWords;
  auto count_key = [&](K key, unsigned* into, unsigned amount) {
#pragma unroll
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (pass < num_passes) {
        const unsigned digit = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass)(key);
        atomicAdd(&into[pass * kDigits + digit], amount);
      }
    }
  };

  const size_t num_full_tiles = n / kTileItems;
  for (size_t tile = blockIdx.x; tile < num_full_tiles; tile += gridDim.x) {
    K tile_keys[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) tile_keys[i] = keys[tile * kTileItems + i * kThreads + threadIdx.x];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      // A warp holding one key value (all-equal and low-entropy inputs) adds 32 once instead of colliding.
      const K first = prims::detail::shuffle_index(tile_keys[i], 0);
      if (__all_sync(prims::detail::kFullWarpMask, RadixKey<K>::raw_bits(tile_keys[i]) == RadixKey<K>::raw_bits(first))) {
        if (lane == 0) count_key(first, counts, warp::kWarpThreads);
      } else {
        count_key(tile_keys[i], my_counts, 1);
      }
    }
  }
  for (size_t i = num_full_tiles * kTileItems + blockIdx.x * static_cast<size_t>(kThreads) + threadIdx.x; i < n;
       i += grid_threads) {
    count_key(keys[i], my_counts, 1);
  }
  __syncthreads();

  for (int i = threadIdx.x; i < num_passes * kDigits; i += kThreads) {
    unsigned total = 0;
#pragma unroll
    for (int copy = 0; copy < Policy::histogram_copies; ++copy) total += counts[copy * kCopyWords + i];
    if (total != 0) atomicAdd(&histograms[i], total);
  }
}

/// Block p: starts[p][d] = histograms[p][0] + ... + histograms[p][d - 1].
template <class Policy>
__global__ void __launch_bounds__(1 << Policy::radix_bits)
    onesweep_digit_starts_kernel(const unsigned* __restrict__ histograms, unsigned* __restrict__ starts) {
  constexpr int kDigits = 1 << Policy::radix_bits;
  using DigitScan = block::Scan<unsigned, kDigits>;
  __shared__ typename DigitScan::TempStorage storage;
  const int i = blockIdx.x * kDigits + threadIdx.x;
  starts[i] = DigitScan(storage).exclusive_scan(histograms[i], Sum{}, 0u);
}

/// Everything one Onesweep pass needs; the grid has one block per tile.
template <class K, class V>
struct OnesweepPass {
  PassBuffers<K, V> buffers;
  unsigned n;
  DigitExtractor<K> digit_of;
  /// This pass's digit counts and digit starts (from kernels 1 and 2).
  const unsigned* digit_counts;
  const unsigned* digit_starts;
  /// Hands out tile ids in the order blocks start, so a tile only ever waits for tiles already running.
  unsigned* tile_counter;
  /// [tile][digit] look-back words of this pass (zero on entry), and the next pass's to clear (null if none).
  unsigned* lookback;
  unsigned* next_lookback;
};

/// Publishes this tile's count of one digit and returns the count of that digit over all earlier tiles.
/// Counts are the only data shared between blocks, and each word is written whole, so relaxed atomics suffice.
__device__ inline unsigned look_back(unsigned* lookback, unsigned tile, int digits, int digit, unsigned count) {
  using Word = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;
  Word own(lookback[tile * digits + digit]);
  if (tile == 0) {
    own.store(kLookbackInclusive | count, cuda::memory_order_relaxed);
    return 0;
  }
  own.store(kLookbackAggregate | count, cuda::memory_order_relaxed);
  unsigned before = 0;
  for (unsigned earlier = tile - 1;; --earlier) {
    Word word_ref(lookback[earlier * digits + digit]);
    unsigned word;
    do {
      word = word_ref.load(cuda::memory_order_relaxed);
    } while ((word & ~kLookbackValueMask) == 0);
    before += word & kLookbackValueMask;
    if (word & kLookbackInclusive) break;
  }
  own.store(kLookbackInclusive | (before + count), cuda::memory_order_relaxed);
  return before;
}

template <class Policy, class K, class V>
__global__ void __launch_bounds__(Policy::block_threads) onesweep_pass_kernel(OnesweepPass<K, V> pass) {
  using Tile = SortTile<Policy, K, V, unsigned>;
  __shared__ typename Tile::TempStorage storage;
  __shared__ unsigned tile_id;

  const bool has_digit_thread = threadIdx.x < Tile::kDigits;
  if (pass.next_lookback != nullptr && has_digit_thread) {
    pass.next_lookback[blockIdx.x * Tile::kDigits + threadIdx.x] = 0;
  }
  const bool one_digit = __syncthreads_or(has_digit_thread && pass.digit_counts[threadIdx.x] == pass.n);
  if (one_digit) {
    const unsigned tile_begin = blockIdx.x * Tile::kTileItems;
    const int valid = static_cast<int>(pass.n - tile_begin < Tile::kTileItems ? pass.n - tile_begin : Tile::kTileItems);
    K keys[Tile::kItems];
    Tile::load(pass.buffers.keys_in + tile_begin, valid, keys);
    Tile::store_in_place(pass.buffers.keys_out + tile_begin, valid, keys);
    if constexpr (kHasValues<V>) {
      V values[Tile::kItems];
      Tile::load(pass.buffers.values_in + tile_begin, valid, values);
      Tile::store_in_place(pass.buffers.values_out + tile_begin, valid, values);
    }
    return;
  }

  if (threadIdx.x == 0) tile_id = atomicAdd(pass.tile_counter, 1u);
  __syncthreads();
  const unsigned tile = tile_id;
  const unsigned tile_begin = tile * Tile::kTileItems;
  const int valid = static_cast<int>(pass.n - tile_begin < Tile::kTileItems ? pass.n - tile_begin : Tile::kTileItems);

  K keys[Tile::kItems];
  Tile::load(pass.buffers.keys_in + tile_begin, valid, keys);
  unsigned digits[Tile::kItems];
  Tile::key_digits(keys, valid, pass.digit_of, digits);
  unsigned ranks[Tile::kItems];
  unsigned digit_count = 0;
  unsigned digit_prefix = 0;
  typename Tile::Rank(storage.rank).rank(digits, ranks, digit_count, digit_prefix);
  if (has_digit_thread) {
    // The padding of the last tile ranked as the largest digit; it is not part of the pass.
    if (threadIdx.x == Tile::kDigits - 1) digit_count -= Tile::kTileItems - valid;
    const unsigned before = look_back(pass.lookback, tile, Tile::kDigits, threadIdx.x, digit_count);
    storage.digit_base[threadIdx.x] = pass.digit_starts[threadIdx.x] + before - digit_prefix;
  }

  unsigned slot_digits[Tile::kItems];
  Tile::scatter_keys(keys, ranks, valid, pass.digit_of, storage, pass.buffers.keys_out, slot_digits);
  if constexpr (kHasValues<V>) {
    V values[Tile::kItems];
    Tile::load(pass.buffers.values_in + tile_begin, valid, values);
    Tile::scatter_values(values, ranks, valid, slot_digits, storage, pass.buffers.values_out);
  }
}

}  // namespace prims::device::detail
