#pragma once
// What both radix-sort algorithms share: the tuning policies and one tile's work in a digit pass.
//
// A tile is BLOCK_THREADS * ITEMS_PER_THREAD consecutive keys, loaded warp-striped (item i of lane l in warp w
// is tile element (w * ITEMS_PER_THREAD + i) * 32 + l: each load is coalesced, and a warp's items in item order
// are in tile order, which block::RadixRank needs for stability). The last tile is padded: missing keys get the
// largest digit, so they rank after every real key and are simply not written.
// A tile pass: load keys, take their digits, rank them, learn where each digit's run goes in the output (the
// algorithms differ only here), then scatter through shared memory: keys are placed in the tile in rank order,
// and thread t writes slots t, t + BLOCK_THREADS, ..., so a run of equal digits is written contiguously.
// Values follow the same ranks. The sort moves the original keys; digits come from their ordered bits.

#include <cstddef>
#include <type_traits>

#include "prims/block/radix_rank.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::device::detail {

/// Keys-only sorts carry this in place of a value type.
struct NoValues {};

template <class V>
inline constexpr bool kHasValues = !std::is_same_v<V, NoValues>;

/// The widest item a tile moves through shared memory: the key or the value.
template <class K, class V>
inline constexpr int kSortItemBytes =
    static_cast<int>(sizeof(K) > sizeof(V) || !kHasValues<V> ? sizeof(K) : sizeof(V));

/// The number of digit passes over [begin_bit, end_bit) with digits of `radix_bits`.
__host__ __device__ constexpr int radix_passes(int begin_bit, int end_bit, int radix_bits) {
  return (end_bit - begin_bit + radix_bits - 1) / radix_bits;
}

/// The histogram kernel's shape: THREADS threads a block, BLOCKS_PER_SM blocks an SM, COPIES copies of the counters.
template <int THREADS, int BLOCKS_PER_SM, int COPIES>
struct HistogramShape {
  static constexpr int threads = THREADS;
  static constexpr int blocks_per_sm = BLOCKS_PER_SM;
  static constexpr int copies = COPIES;

  /// Dynamic shared-memory bytes of the kernel for keys K and `radix_bits`-bit digits.
  template <class K>
  static constexpr size_t shared_bytes(int radix_bits) {
    return static_cast<size_t>(radix_passes(0, RadixKey<K>::kBits, radix_bits)) * (size_t{1} << radix_bits) *
           sizeof(unsigned) * COPIES;
  }
};

/// Tuning of the reduce-then-scan algorithm (TileCounts) on Hopper: a tile of 16 KB of the widest item.
template <class K, class V>
struct TileCountsPolicySm90 {
  static constexpr int radix_bits = 8;
  static constexpr int block_threads = 256;
  static constexpr int items_per_thread = kSortItemBytes<K, V> <= 4 ? 16 : kSortItemBytes<K, V> <= 8 ? 8 : 4;
};

/// Tuning of Onesweep on Hopper (measured with bench/tune_sort against CUB, keys of entropy 1.0, 0.544, 0.201).
/// Pass kernel: 384 threads capped at 80 registers, so two blocks share an SM and one block's look-back wait is
/// covered by the other's work. Keys a thread: 24 for keys-only sorts of up to 4-byte keys (a 36 KB tile), 20 for
/// pairs of 4-byte items, 15 for 8-byte items; from inputs of 2^26 keys on, keys-only sorts of up to 4-byte keys
/// take 28 (integers) or 26 (floats) (OnesweepLargePolicySm90). Measured at 2^24 and 2^28 among 256, 384 and 512
/// threads of 10 to 28 keys and 2 or 3 blocks an SM: bigger tiles win at 2^28 until registers spill (float keys
/// spill at 28: their tiles keep two digit paths), smaller ones at 2^24. Ranking finds equal digits with one ballot per digit bit:
/// __match_any_sync measured 1.5x slower (its pipe saturates), and ORing lane bits into a shared table of digit
/// masks 3% faster on uniform keys but up to 1.4x slower on low-entropy keys (many lanes' atomics on one word).
/// A look-back step reads 4 earlier tiles' words at once.
/// Histogram kernel: a persistent grid reading 16-byte vectors, 64 bytes of keys a thread per tile, in one of two
/// shapes by input size (2^16 u32: 43 us in all with the small shape, 48 with the wide one; 2^28: 5745 and 5649).
template <class K, class V>
struct OnesweepPolicySm90 {
  static constexpr int radix_bits = 8;
  static constexpr int block_threads = 384;
  static constexpr int items_per_thread = !kHasValues<V> && sizeof(K) <= 4 ? 24
                                          : kSortItemBytes<K, V> <= 4      ? 20
                                          : kSortItemBytes<K, V> <= 8      ? 15
                                                                           : 5;
  static constexpr int min_blocks_per_sm = 2;
  static constexpr int lookback_words_per_step = 4;
  static constexpr bool rank_with_match_any = false;
  static constexpr int histogram_items_per_thread = sizeof(K) <= 4 ? 16 : 8;
  /// Small inputs: small blocks and two copies of the counters (the wide shape's setup costs ~5 us).
  using SmallHistogram = HistogramShape<256, 4, 2>;
  /// From wide_histogram_min_items keys on: one block an SM with a copy of the counters for every lane (16 for
  /// 8-byte keys, to fit 128 KB), so a warp's atomics never collide, however skewed the digits.
  using WideHistogram = HistogramShape<1024, 1, sizeof(K) <= 4 ? 32 : 16>;
  static constexpr size_t wide_histogram_min_items = size_t{1} << 26;
};

/// Onesweep on Hopper for inputs of at least `min_items` keys: bigger tiles for keys-only sorts of up to 4-byte
/// keys (u32 2^28: 5404 us with 28 keys a thread, 5504 with 26, 5632 with 24; at 2^24 456, 440 and 438; f32 2^28:
/// 5685 with 26, 5807 with 24; floats spill at 28).
template <class K, class V>
struct OnesweepLargePolicySm90 : OnesweepPolicySm90<K, V> {
  static constexpr size_t min_items = size_t{1} << 26;
  static constexpr int items_per_thread = kHasValues<V> || sizeof(K) > 4
                                              ? OnesweepPolicySm90<K, V>::items_per_thread
                                          : std::is_integral_v<K> ? 28
                                                                  : 26;
};

/// The policies for the architecture the library is built for; one entry today.
template <class K, class V>
using TileCountsPolicy = TileCountsPolicySm90<K, V>;
template <class K, class V>
using OnesweepPolicy = OnesweepPolicySm90<K, V>;
template <class K, class V>
using OnesweepLargePolicy = OnesweepLargePolicySm90<K, V>;

/// The digit of pass `pass`: bits [begin_bit + pass * radix_bits, ...), fewer in the last pass.
template <class K>
__host__ __device__ DigitExtractor<K> pass_digit(Order order, int begin_bit, int end_bit, int radix_bits,
                                                 int pass) {
  const int shift = begin_bit + pass * radix_bits;
  const int width = end_bit - shift < radix_bits ? end_bit - shift : radix_bits;
  return DigitExtractor<K>(order, shift, width);
}

/// What a digit pass reads and writes. Keys-only passes have null value pointers.
template <class K, class V>
struct PassBuffers {
  const K* keys_in;
  K* keys_out;
  const V* values_in;
  V* values_out;
};

/// One tile of a digit pass, for the policy's block shape. `Offset` holds output positions (size_t where n may
/// pass 2^32).
template <class Policy, class K, class V, class Offset>
struct SortTile {
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kTileItems = kThreads * kItems;
  static constexpr int kDigits = 1 << Policy::radix_bits;
  using Rank = block::RadixRank<kThreads, kItems, Policy::radix_bits>;

  struct TempStorage {
    union {
      typename Rank::TempStorage rank;
      /// The tile in rank order, keys first and then values.
      alignas(16) unsigned char exchange[static_cast<size_t>(kTileItems) * kSortItemBytes<K, V>];
    };
    /// Slot s of the ranked tile, with digit d, goes to output position digit_base[d] + s.
    Offset digit_base[kDigits];
  };

  /// Where this thread's item i lies in the tile.
  __device__ static int element(int item) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    return (warp_id * kItems + item) * warp::kWarpThreads + lane;
  }

  /// Loads the tile starting at `tile`; items past `valid` are left unset.
  template <class T>
  __device__ static void load(const T* __restrict__ tile, int valid, T (&items)[kItems]) {
    if (valid == kTileItems) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) items[i] = tile[element(i)];
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (element(i) < valid) items[i] = tile[element(i)];
      }
    }
  }

  /// Stores items back at their own tile positions (a pass that cannot reorder anything copies this way).
  template <class T>
  __device__ static void store_in_place(T* __restrict__ tile, int valid, const T (&items)[kItems]) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (element(i) < valid) tile[element(i)] = items[i];
    }
  }

  /// The digit of every key; the padding past `valid` gets the largest digit.
  __device__ static void key_digits(const K (&keys)[kItems], int valid, DigitExtractor<K> digit_of,
                                unsigned (&digits)[kItems]) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      digits[i] = element(i) < valid ? digit_of(keys[i]) : kDigits - 1;
    }
  }

  /// Scatters the ranked keys; digit_base must be set. Returns the digit of each slot this thread wrote in
  /// `slot_digits`, for scatter_values.
  __device__ static void scatter_keys(const K (&keys)[kItems], const unsigned (&ranks)[kItems], int valid,
                                      DigitExtractor<K> digit_of, TempStorage& storage, K* __restrict__ out,
                                      unsigned (&slot_digits)[kItems]) {
    const K* ranked = to_rank_order(keys, ranks, valid, storage);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int slot = k * kThreads + threadIdx.x;
      if (slot < valid) {
        const K key = ranked[slot];
        slot_digits[k] = digit_of(key);
        out[storage.digit_base[slot_digits[k]] + slot] = key;
      }
    }
  }

  /// Scatters the values with the ranks and slot digits of scatter_keys.
  template <class T>
  __device__ static void scatter_values(const T (&values)[kItems], const unsigned (&ranks)[kItems], int valid,
                                        const unsigned (&slot_digits)[kItems], TempStorage& storage,
                                        T* __restrict__ out) {
    const T* ranked = to_rank_order(values, ranks, valid, storage);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int slot = k * kThreads + threadIdx.x;
      if (slot < valid) {
        out[storage.digit_base[slot_digits[k]] + slot] = ranked[slot];
      }
    }
  }

 private:
  /// Puts the tile's items into shared memory in rank order. The barrier in front lets the exchange reuse the
  /// rank storage and a previous exchange.
  template <class T>
  __device__ static const T* to_rank_order(const T (&items)[kItems], const unsigned (&ranks)[kItems], int valid,
                                           TempStorage& storage) {
    T* exchange = reinterpret_cast<T*>(storage.exchange);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (ranks[i] < static_cast<unsigned>(valid)) exchange[ranks[i]] = items[i];
    }
    __syncthreads();
    return exchange;
  }
};

}  // namespace prims::device::detail
