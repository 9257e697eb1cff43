#pragma once
// The digit histogram of every radix sort that counts before it moves keys: shared-memory counters of every pass's
// digits at once (PassDigitCounter), fed by one read of the keys (count_keys_in_vectors where whole arrays or
// segments are read in 16-byte vectors; a sort's own tile loads elsewhere). Onesweep's histogram kernel, segmented
// Onesweep's, the segmented sort's large class and TileCounts' tile counts all count through it.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/util/radix_key.cuh"
#include "prims/util/sort_shapes.cuh"
#include "prims/util/vector_load.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail::radix {

/// The digit extractors of a sort's passes: made once and kept (KEEP), or made again from the bit range at each
/// use (for kernels short of registers).
template <class K, int RADIX_BITS, int MAX_PASSES, bool KEEP>
struct PassDigits {
  DigitExtractor<K> digits[MAX_PASSES];
  __device__ PassDigits(Order order, int begin_bit, int end_bit) {
    const int num_passes = radix_passes(begin_bit, end_bit, RADIX_BITS);
#pragma unroll
    for (int pass = 0; pass < MAX_PASSES; ++pass) {
      if (pass < num_passes) digits[pass] = pass_digit<K>(order, begin_bit, end_bit, RADIX_BITS, pass);
    }
  }
  __device__ explicit PassDigits(DigitExtractor<K> only) { digits[0] = only; }
  __device__ DigitExtractor<K> operator[](int pass) const { return digits[pass]; }
};

template <class K, int RADIX_BITS, int MAX_PASSES>
struct PassDigits<K, RADIX_BITS, MAX_PASSES, false> {
  Order order;
  int begin_bit;
  int end_bit;
  __device__ PassDigits(Order order_, int begin_bit_, int end_bit_)
      : order(order_), begin_bit(begin_bit_), end_bit(end_bit_) {}
  __device__ DigitExtractor<K> operator[](int pass) const {
    return pass_digit<K>(order, begin_bit, end_bit, RADIX_BITS, pass);
  }
};

/// Counts keys' digits of every pass in shared-memory counters laid out as counts[(pass * digits + digit) *
/// COPIES + copy]; `my_counts` is the shared-window address of this lane's copy (lane % COPIES). KEEP_DIGITS: the
/// passes' digit extractors are made once and kept in registers (the histogram kernels); otherwise they are made
/// again for each key from the bit range, for a kernel short of registers (the segmented large class: kept, they
/// spilled more of its registers).
template <class Policy, int COPIES, class K, int MAX_PASSES = radix_passes(0, RadixKey<K>::kBits, Policy::radix_bits),
          bool KEEP_DIGITS = true>
struct PassDigitCounter {
  static constexpr int kDigits = 1 << Policy::radix_bits;
  static constexpr int kMaxPasses = MAX_PASSES;
  PassDigits<K, Policy::radix_bits, MAX_PASSES, KEEP_DIGITS> digits;
  int num_passes;
  unsigned my_counts;

  /// Every pass of [begin_bit, end_bit) (at most kMaxPasses).
  __device__ PassDigitCounter(Order order, int begin_bit, int end_bit, unsigned my_counts_)
      : digits(order, begin_bit, end_bit),
        num_passes(radix_passes(begin_bit, end_bit, Policy::radix_bits)),
        my_counts(my_counts_) {}

  /// One pass, whose digit is `digit_of`.
  __device__ PassDigitCounter(DigitExtractor<K> digit_of, unsigned my_counts_)
      : digits(digit_of), num_passes(1), my_counts(my_counts_) {}

  /// The shared-window address of this thread's copy of `counts` (a shared array of the layout above).
  __device__ static unsigned copy_of(const unsigned* counts) {
    return static_cast<unsigned>(__cvta_generic_to_shared(counts)) + (threadIdx.x % warp::kWarpThreads % COPIES) * 4u;
  }

  /// Adds the copies of every counter of counts[] (the shared array `my_counts` points into) to histograms[pass *
  /// digits + digit], one atomic a non-zero sum; CLEAR zeroes the counters for the next run. The block must be
  /// synchronized before (every count made) and, with CLEAR, after (before counting again).
  template <bool CLEAR>
  __device__ __forceinline__ void flush(unsigned* counts, unsigned* histograms) const {
    for (int i = threadIdx.x; i < num_passes * kDigits; i += blockDim.x) {
      unsigned total = 0;
#pragma unroll
      for (int copy = 0; copy < COPIES; ++copy) {
        total += counts[i * COPIES + copy];
        if constexpr (CLEAR) counts[i * COPIES + copy] = 0;
      }
      if (total != 0) atomicAdd(&histograms[i], total);
    }
  }

  __device__ __forceinline__ void count(K key) const {
    const auto bits = RadixKey<K>::ordered_bits(key);
#pragma unroll
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      if (pass < num_passes) {
        const unsigned digit = digits[pass].of_bits(bits);
        asm volatile("red.shared.add.u32 [%0], 1;" : : "r"(my_counts + (pass * kDigits + digit) * COPIES * 4u)
                     : "memory");
      }
    }
  }
};

/// Hands keys[0, n) to count_key(key), read 16 bytes at a time from the first 16-byte boundary on, in tiles of
/// THREADS x ITEMS keys: a block that is part `part` of `parts` takes tiles part, part + parts, ...; part 0 also
/// takes the keys before the boundary, and the keys after the last whole tile go thread by thread over all parts.
/// The digit histograms of Onesweep (the grid's blocks split one array) and of segmented Onesweep (a block
/// alone on each segment's range of its tiles) read their keys through it.
template <int THREADS, int ITEMS, class K, class CountKey>
__device__ __forceinline__ void count_keys_in_vectors(const K* __restrict__ keys, size_t n, size_t part, size_t parts,
                                                      CountKey& count_key) {
  constexpr int kVector = kVectorItems<K>;
  static_assert(ITEMS % kVector == 0, "histogram items come in whole 16-byte vectors");
  constexpr size_t kTileItems = static_cast<size_t>(THREADS) * ITEMS;
  const size_t misaligned = (reinterpret_cast<size_t>(keys) / sizeof(K)) % kVector;
  const size_t head = misaligned == 0 ? 0 : (kVector - misaligned < n ? kVector - misaligned : n);
  if (part == 0 && threadIdx.x < head) count_key(keys[threadIdx.x]);
  const Vector<K>* body = reinterpret_cast<const Vector<K>*>(keys + head);
  const size_t num_full_tiles = (n - head) / kTileItems;
  for (size_t tile = part; tile < num_full_tiles; tile += parts) {
    Vector<K> vectors[ITEMS / kVector];
#pragma unroll
    for (int i = 0; i < ITEMS / kVector; ++i) {
      vectors[i] = body[(tile * ITEMS / kVector + i) * THREADS + threadIdx.x];
    }
#pragma unroll
    for (int i = 0; i < ITEMS / kVector; ++i) {
#pragma unroll
      for (int j = 0; j < kVector; ++j) count_key(vectors[i].items[j]);
    }
  }
  for (size_t i = head + num_full_tiles * kTileItems + part * THREADS + threadIdx.x; i < n; i += parts * THREADS) {
    count_key(keys[i]);
  }
}

}  // namespace prims::detail::radix
