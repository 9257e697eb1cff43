#pragma once
// What every radix-sort algorithm shares (TileCounts, Onesweep, and the partition, which is one pass of either):
// the digit of a pass, the buffers a sort ping-pongs between, the prologue that sizes and carves the temporary
// storage and finishes what needs no pass, and one tile's work in a digit pass.
//
// A tile is BLOCK_THREADS * ITEMS_PER_THREAD consecutive keys, loaded warp-striped (WarpStripedTileIo of
// tile_io.cuh), ranked by digit with block::RadixRank, and scattered through shared memory: keys are placed in the
// tile in rank order, and thread t writes slots t, t + BLOCK_THREADS, ..., so a run of equal digits is written
// contiguously. The last tile is padded: missing keys get the largest digit, so they rank after every real key
// and are simply not written. Values follow the same ranks. The algorithms differ only in how a tile learns where
// each digit's run goes in the output (SortTile::TempStorage::digit_base).
// The sort moves the original keys; digits come from their ordered bits (util/radix_key.cuh).

#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <type_traits>

#include "prims/block/radix_rank.cuh"
#include "prims/block/scan.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/util/sort_shapes.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::radix {

/// One tile of a digit pass, for the policy's block shape. `Offset` holds output positions (size_t where n may
/// pass 2^32). FULL (a template argument of the steps) says the tile holds kTileItems keys: no bounds checks.
template <class Policy, class K, class V, class Offset>
struct SortTile : WarpStripedTileIo<Policy::block_threads, Policy::items_per_thread> {
  using Io = WarpStripedTileIo<Policy::block_threads, Policy::items_per_thread>;
  using Io::element;
  static constexpr int kThreads = Io::kThreads;
  static constexpr int kItems = Io::kItems;
  static constexpr int kTileItems = Io::kTileItems;
  static constexpr int kDigits = 1 << Policy::radix_bits;
  using Rank = block::RadixRank<kThreads, kItems, Policy::radix_bits, Policy::rank_with_match_any>;
  static_assert(Policy::radix_bits <= 8, "slot digits are kept in 8 bits");

  struct TempStorage {
    union {
      typename Rank::TempStorage rank;
      /// The tile in rank order, keys first and then values.
      alignas(16) unsigned char exchange[static_cast<size_t>(kTileItems) * kSortItemBytes<K, V>];
    };
    /// Slot s of the ranked tile, with digit d, goes to output position digit_base[d] + s.
    Offset digit_base[kDigits];
  };

  /// The digit of each slot a thread writes, kept for the values' scatter: four to a register (registers are what
  /// pairs run short of); keys-only sorts keep none.
  struct SlotDigits {
    static constexpr int kWords = kHasValues<V> ? (kItems + 3) / 4 : 1;
    unsigned words[kWords] = {};
    __device__ void set(int k, unsigned digit) {
      if constexpr (kHasValues<V>) words[k / 4] |= digit << (8 * (k % 4));
    }
    __device__ unsigned get(int k) const { return (words[k / 4] >> (8 * (k % 4))) & 0xffu; }
  };

  /// The digit of every key; the padding past `valid` gets the largest digit.
  template <bool FULL, class DigitOf>
  __device__ static void key_digits(const K (&keys)[kItems], int valid, DigitOf digit_of,
                                    unsigned (&digits)[kItems]) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) digits[i] = FULL || element(i) < valid ? digit_of(keys[i]) : kDigits - 1;
  }

  /// Puts the tile's items into the exchange in rank order. The caller synchronizes the block before (the
  /// exchange shares memory with the ranking) and after.
  template <bool FULL, class T>
  __device__ static void place_ranked(const T (&items)[kItems], const unsigned (&ranks)[kItems], int valid,
                                      TempStorage& storage) {
    T* exchange = reinterpret_cast<T*>(storage.exchange);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (FULL || ranks[i] < static_cast<unsigned>(valid)) exchange[ranks[i]] = items[i];
    }
  }

  /// Writes the placed keys to their output positions (digit_base must be set) and notes each slot's digit.
  template <bool FULL, class DigitOf>
  __device__ static void scatter_keys(int valid, DigitOf digit_of, const TempStorage& storage, K* __restrict__ out,
                                      SlotDigits& slot_digits) {
    const K* ranked = reinterpret_cast<const K*>(storage.exchange);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int slot = k * kThreads + threadIdx.x;
      if (FULL || slot < valid) {
        const K key = ranked[slot];
        const unsigned digit = digit_of(key);
        slot_digits.set(k, digit);
        out[storage.digit_base[digit] + slot] = key;
      }
    }
  }

  /// Places the values by the keys' ranks and writes them where scatter_keys wrote their keys.
  template <bool FULL>
  __device__ static void scatter_values(const V (&values)[kItems], const unsigned (&ranks)[kItems], int valid,
                                        const SlotDigits& slot_digits, TempStorage& storage,
                                        V* __restrict__ out) {
    __syncthreads();  // the keys' scatter still reads the exchange
    place_ranked<FULL>(values, ranks, valid, storage);
    __syncthreads();
    const V* ranked = reinterpret_cast<const V*>(storage.exchange);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int slot = k * kThreads + threadIdx.x;
      if (FULL || slot < valid) out[storage.digit_base[slot_digits.get(k)] + slot] = ranked[slot];
    }
  }

  /// One whole pass over a tile whose digits' output positions come from outside the tile (a scan of all tiles'
  /// counts, or a count carried from the previous tile): loads the tile, ranks it, and writes each key (and value)
  /// of digit d to first_of_digit(d, count) + its rank among the tile's keys of d. first_of_digit is called once by
  /// each thread d < kDigits, with the tile's count of d. The block is synchronized on return.
  template <bool FULL, class DigitOf, class FirstOfDigit>
  __device__ static void rank_and_scatter(const K* keys_in, const V* values_in, int valid, DigitOf digit_of,
                                          FirstOfDigit first_of_digit, K* keys_out, V* values_out,
                                          TempStorage& storage) {
    K keys[kItems];
    Io::template load<FULL>(keys_in, valid, keys);
    unsigned ranks[kItems];
    key_digits<FULL>(keys, valid, digit_of, ranks);
    unsigned digit_count = 0;
    unsigned digit_prefix = 0;
    Rank(storage.rank).rank(ranks, ranks, digit_count, digit_prefix, kTileItems - valid, IgnoreDigitCounts{});
    if (threadIdx.x < kDigits) {
      // Unsigned wrap-around is fine: every slot s of digit d has s >= digit_prefix.
      storage.digit_base[threadIdx.x] = first_of_digit(threadIdx.x, digit_count) - digit_prefix;
    }
    __syncthreads();
    place_ranked<FULL>(keys, ranks, valid, storage);
    __syncthreads();
    SlotDigits slot_digits;
    scatter_keys<FULL>(valid, digit_of, storage, keys_out, slot_digits);
    if constexpr (kHasValues<V>) {
      V values[kItems];
      Io::template load<FULL>(values_in, valid, values);
      scatter_values<FULL>(values, ranks, valid, slot_digits, storage, values_out);
    }
    __syncthreads();  // the next tile reuses the exchange and digit_base
  }
};

/// Where pass p of one array (keys or values) reads and writes. Passes alternate between `out` and
/// `alternate` so that the last lands in `out`; when in == out the first pass must not write `in`, and an odd
/// number of passes then ends in `alternate` and needs one copy back. Usable on the device too: the segmented
/// sort makes one per segment, for the passes that segment actually needs.
template <class T>
class PingPong {
 public:
  PRIMS_HOST_DEVICE PingPong(const T* in, T* out, T* alternate, int num_passes)
      : in_(in), buffers_{out, alternate}, first_(in == out || num_passes % 2 == 0 ? 1 : 0), last_(num_passes - 1) {}

  PRIMS_HOST_DEVICE const T* source(int pass) const { return pass == 0 ? in_ : buffers_[(first_ + pass - 1) % 2]; }
  PRIMS_HOST_DEVICE T* destination(int pass) const { return buffers_[(first_ + pass) % 2]; }
  /// After the passes: where the result lies when it is not in `out`, so that one copy finishes the sort (null when
  /// it is there): the input itself when no pass ran and the sort is not in place, the alternate buffer after an
  /// odd number of passes in place. Every sort finishes through it.
  PRIMS_HOST_DEVICE const T* result_to_copy() const {
    if (last_ < 0) return in_ == buffers_[0] ? nullptr : in_;
    return ends_in_alternate() ? buffers_[1] : nullptr;
  }

 private:
  PRIMS_HOST_DEVICE bool ends_in_alternate() const { return (first_ + last_) % 2 == 1; }

  const T* in_;
  T* buffers_[2];
  int first_;
  int last_;
};

/// Launches that a sort may skip from the device: they do nothing when `*skip` (skip may be null) is non-zero, and
/// run on a persistent grid (launch_persistent), so that a skipped launch costs little.
inline constexpr int kSkippableThreads = 256;

template <class T>
__global__ void __launch_bounds__(kSkippableThreads)
    skippable_clear_kernel(T* __restrict__ items, size_t n, const unsigned* __restrict__ skip) {
  wait_for_prior_grids();
  allow_dependent_grids();
  if (skip != nullptr && *skip != 0) return;
  const size_t stride = size_t{gridDim.x} * kSkippableThreads;
  for (size_t i = blockIdx.x * size_t{kSkippableThreads} + threadIdx.x; i < n; i += stride) items[i] = T{};
}

template <class T>
__global__ void __launch_bounds__(kSkippableThreads)
    skippable_copy_kernel(const T* __restrict__ from, T* __restrict__ to, size_t n, const unsigned* __restrict__ skip) {
  wait_for_prior_grids();
  allow_dependent_grids();
  if (skip != nullptr && *skip != 0) return;
  const size_t stride = size_t{gridDim.x} * kSkippableThreads;
  for (size_t i = blockIdx.x * size_t{kSkippableThreads} + threadIdx.x; i < n; i += stride) to[i] = from[i];
}

/// words[0, count) = 0, unless *skip is non-zero.
inline cudaError_t clear_words(unsigned* words, size_t count, const unsigned* skip, cudaStream_t stream) {
  return launch_persistent(skippable_clear_kernel<unsigned>, (count + kSkippableThreads - 1) / kSkippableThreads,
                           kSkippableThreads, 0, stream, words, count, skip);
}

/// to[0, n) = from[0, n), unless *skip is non-zero.
template <class T>
cudaError_t copy_items(const T* from, T* to, size_t n, const unsigned* skip, cudaStream_t stream) {
  return launch_persistent(skippable_copy_kernel<T>, (n + kSkippableThreads - 1) / kSkippableThreads,
                           kSkippableThreads, 0, stream, from, to, n, skip);
}

/// The buffers of a whole sort: keys, and values unless V is NoValues.
template <class K, class V>
class SortBuffers {
 public:
  SortBuffers(PassBuffers<K, V> io, K* alternate_keys, V* alternate_values, int num_passes)
      : io_(io),
        keys_(io.keys_in, io.keys_out, alternate_keys, num_passes),
        values_(io.values_in, io.values_out, alternate_values, num_passes) {}

  PassBuffers<K, V> pass(int p) const {
    return {keys_.source(p), keys_.destination(p), values_.source(p), values_.destination(p)};
  }

  /// After the last pass (or with no pass at all): copies the result to the outputs where it is not there yet.
  /// With `skip` (a device word), the copy does nothing when *skip is non-zero (the sort took another path).
  cudaError_t finish(size_t n, cudaStream_t stream, const unsigned* skip = nullptr) const {
    auto copy = [&](auto* to, const auto* from) {
      if (skip != nullptr) return copy_items(from, to, n, skip, stream);
      return cudaMemcpyAsync(to, from, n * sizeof(*from), cudaMemcpyDeviceToDevice, stream);
    };
    if (const K* from = keys_.result_to_copy()) PRIMS_TRY(copy(io_.keys_out, from));
    if constexpr (kHasValues<V>) {
      if (const V* from = values_.result_to_copy()) PRIMS_TRY(copy(io_.values_out, from));
    }
    return cudaSuccess;
  }

 private:
  PassBuffers<K, V> io_;
  PingPong<K> keys_;
  PingPong<V> values_;
};

/// Bytes of the alternate buffer for n items of T (none for keys-only values).
template <class T>
size_t alternate_bytes(size_t n) {
  return kHasValues<T> ? n * sizeof(T) : 0;
}

/// What every algorithm does before its passes: carves the alternate key and value buffers and the algorithm's
/// own `part_bytes` out of temp (the two-phase protocol: temp == nullptr only sizes), and finishes at once what
/// needs no pass (n == 0 writes nothing; an empty bit range copies). `buffers` is set only when passes follow.
/// Example:
///   std::optional<SortBuffers<K, V>> buffers;
///   void* parts[1];
///   PRIMS_TRY(sort_prologue(temp, temp_bytes, io, n, num_passes, {counts_bytes}, parts, buffers, stream));
///   if (!buffers) return cudaSuccess;
template <class K, class V, size_t PARTS>
cudaError_t sort_prologue(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, int num_passes,
                          const size_t (&part_bytes)[PARTS], void* (&parts)[PARTS],
                          std::optional<SortBuffers<K, V>>& buffers, cudaStream_t stream) {
  size_t sizes[PARTS + 2] = {alternate_bytes<K>(n), alternate_bytes<V>(n)};
  for (size_t i = 0; i < PARTS; ++i) sizes[i + 2] = part_bytes[i];
  void* carved[PARTS + 2];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, carved));
  for (size_t i = 0; i < PARTS; ++i) parts[i] = carved[i + 2];
  if (temp == nullptr || n == 0) return cudaSuccess;
  const SortBuffers<K, V> sort_buffers(io, static_cast<K*>(carved[0]), static_cast<V*>(carved[1]), num_passes);
  if (num_passes == 0) return sort_buffers.finish(n, stream);
  buffers.emplace(sort_buffers);
  return cudaSuccess;
}

/// Block-wide, from each thread's count of its digit in a pass over n keys (`has_digit`: whether the thread holds
/// one): whether one digit holds all n keys. Such a pass would leave every key where it is, so every radix sort
/// that counts its digits first skips it.
template <class Count>
__device__ __forceinline__ bool pass_is_trivial(bool has_digit, Count count, Count n) {
  return __syncthreads_or(has_digit && count == n) != 0;
}

/// Block-wide, a thread per digit holding its digit's `count` of a pass over n keys: returns the digit's first
/// position (the counts of the digits below it) and whether the pass is trivial (pass_is_trivial).
template <int DIGITS, class Offset>
__device__ __forceinline__ Offset digit_start(typename block::Scan<Offset, DIGITS>::TempStorage& storage,
                                              Offset count, Offset n, bool& trivial) {
  const Offset start = block::Scan<Offset, DIGITS>(storage).exclusive_scan(count, Sum{}, Offset{0});
  trivial = pass_is_trivial(true, count, n);
  return start;
}

/// bucket_offsets[d] = starts[d * stride] for each bucket d < num_buckets (every bucket empty, at 0, when `starts`
/// is null), and bucket_offsets[num_buckets] = n: the partition's bucket offsets, from whichever table a one-pass
/// sort built.
template <class Start>
__global__ void bucket_offsets_kernel(const Start* __restrict__ starts, size_t stride,
                                      size_t* __restrict__ bucket_offsets, int num_buckets, size_t n) {
  wait_for_prior_grids();
  allow_dependent_grids();
  for (int d = threadIdx.x; d <= num_buckets; d += blockDim.x) {
    bucket_offsets[d] = d == num_buckets ? n : starts == nullptr ? 0 : static_cast<size_t>(starts[d * stride]);
  }
}

template <class Start>
cudaError_t write_bucket_offsets(const Start* starts, size_t stride, size_t* bucket_offsets, int num_buckets,
                                 size_t n, cudaStream_t stream) {
  return launch(bucket_offsets_kernel<Start>, 1, 256, 0, stream, starts, stride, bucket_offsets, num_buckets, n);
}

}  // namespace prims::detail::radix
