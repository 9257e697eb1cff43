#pragma once
// The hybrid radix sort (RadixSortAlgorithm::Hybrid): most significant digits first, then every bucket at once.
//   1. Onesweep sorts the keys by the top `msd_bits` bits of the range [begin_bit, end_bit) into keys_out (its
//      histogram read, then ceil(msd_bits / 8) passes): keys sharing those bits now form a bucket, the buckets are
//      in order and each keeps the input order.
//   2. hybrid_bucket_bounds_kernel, one read of the sorted keys: a key whose predecessor has another top-bits
//      prefix begins its bucket and ends the predecessor's, so every non-empty bucket learns its begin and end;
//      empty buckets keep begin = end = 0 (an empty segment).
//   3. The segmented sort (segmented_radix_sort_dispatch.cuh) sorts every bucket in place, all in one set of
//      launches: msd_bits is chosen from n so that the average bucket holds 2^bucket_items_log2 keys, and small
//      buckets are sorted in registers by a few lanes each, read once and written once. Buckets that skewed
//      keys make large (few distinct prefixes, all keys equal) go to its large class (which skips the passes
//      whose digit every key of the bucket shares) or its Onesweep class (which copies such passes through).
// Bytes moved per key of K bytes (keys only, random keys): the histogram read (K), a read and a write a top pass
// (2K each), the bounds read (K), the buckets' read and write (2K), plus 8 bytes of bounds a bucket. For 64-bit
// keys at 2^27 that is 3 passes: 80 bytes a key against 136 for eight LSD passes; for 32-bit keys 3 passes and
// 41 bytes against 36, which is why 32-bit keys gain nothing.
// Inputs of 2^30 - 1 keys or more run Onesweep alone: one skewed bucket could then hold more keys than a look-back
// word counts, and the segmented sort gives such a segment to one block, far more slowly. So do n == 0 and ranges
// no wider than msd_bits. The choice depends on n and the bit range only, so the size query and the run agree.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/device/detail/segmented_radix_sort_dispatch.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::radix {

/// Threads of a block of the bounds kernel.
inline constexpr int kBucketBoundsThreads = 256;

/// Keys a thread of the bounds kernel reads: 64 bytes, loaded before any is compared, so the loads overlap.
template <class K>
inline constexpr int kBucketBoundsItems = 64 / sizeof(K);

/// For every key of sorted_keys[0, n) (sorted by the prefix `prefix_of` extracts), marks where its bucket begins
/// or ends: begins[prefix] at the first key of a bucket, ends[prefix] one past its last. Entries of empty buckets
/// are left as they are (zero). Each thread takes kBucketBoundsItems consecutive keys and the one before them, a
/// block kBucketBoundsThreads such runs at a time until the keys run out (one round on a grid of one block a run
/// of keys; a smaller grid makes a skipped launch cheap). Does nothing when `skip` (may be null) is non-zero.
template <class K>
__global__ void __launch_bounds__(kBucketBoundsThreads)
    hybrid_bucket_bounds_kernel(const K* __restrict__ sorted_keys, unsigned n, DigitExtractor<K> prefix_of,
                                unsigned* __restrict__ begins, unsigned* __restrict__ ends,
                                const unsigned* __restrict__ skip) {
  constexpr int kItems = kBucketBoundsItems<K>;
  wait_for_prior_grids();
  allow_dependent_grids();
  if (skip != nullptr && *skip != 0) return;
  const size_t stride = static_cast<size_t>(gridDim.x) * kBucketBoundsThreads * kItems;
  for (size_t first = (static_cast<size_t>(blockIdx.x) * kBucketBoundsThreads + threadIdx.x) * kItems; first < n;
       first += stride) {
    K keys[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (first + j < n) keys[j] = sorted_keys[first + j];
    }
    unsigned before = first == 0 ? UINT_MAX : prefix_of(sorted_keys[first - 1]);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const size_t i = first + j;
      if (i < n) {
        const unsigned prefix = prefix_of(keys[j]);
        if (prefix != before) {
          begins[prefix] = static_cast<unsigned>(i);
          if (i != 0) ends[before] = static_cast<unsigned>(i);
        }
        before = prefix;
        if (i == n - 1) ends[prefix] = n;
      }
    }
  }
}

/// How many top bits of [begin_bit, end_bit) the hybrid sorts by Onesweep passes for n keys: enough to leave
/// buckets of 2^bucket_items_log2 keys on average, or a pass fewer where that still leaves buckets of at most
/// 2^max_bucket_items_log2 (a pass costs more than the bigger buckets' sort); the whole range means Onesweep alone.
template <class Policy>
constexpr int hybrid_msd_bits(size_t n, int begin_bit, int end_bit) {
  int log2_n = 0;
  while (log2_n < 63 && (size_t{1} << log2_n) < n) ++log2_n;
  int bits = std::max(1, log2_n - Policy::bucket_items_log2);
  constexpr int kPassBits = Policy::radix_bits;
  const int a_pass_fewer = (bits + kPassBits - 1) / kPassBits * kPassBits - kPassBits;
  if (a_pass_fewer > 0 && log2_n - a_pass_fewer <= Policy::max_bucket_items_log2) bits = a_pass_fewer;
  return std::min({bits, Policy::max_msd_bits, end_bit - begin_bit});
}

/// Steps 2 and 3 of the hybrid: finds the buckets of io.keys_in[0, n), sorted by their top msd_bits bits of
/// [begin_bit, end_bit) (each bucket in input order), and sorts every bucket into io.keys_out (values alike; in
/// place where they are the same). Through `extras`, a device word that makes every launch of these steps do
/// nothing when it is non-zero, and alternate buffers of n items lent to the segmented sort.
template <class Table, class K, class V, class Policy = typename Table::template Hybrid<K, V>>
cudaError_t sort_buckets(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order, int begin_bit,
                         int end_bit, int msd_bits, const segmented::SegmentedSortExtras<K, V>& extras,
                         cudaStream_t stream) {
  const int msd_begin = end_bit - msd_bits;
  const size_t buckets = size_t{1} << msd_bits;
  const int buckets_end_bit = Policy::buckets_on_whole_range ? end_bit : msd_begin;
  size_t segmented_bytes = 0;
  PRIMS_TRY((segmented::segmented_radix_sort<Table, K, V, unsigned>(nullptr, segmented_bytes, io, n, buckets, nullptr,
                                                                    nullptr, order, begin_bit, buckets_end_bit,
                                                                    stream, extras)));
  const size_t sizes[2] = {2 * buckets * sizeof(unsigned), segmented_bytes};
  void* parts[2];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr) return cudaSuccess;
  auto* begins = static_cast<unsigned*>(parts[0]);
  unsigned* ends = begins + buckets;
  PRIMS_TRY(clear_words(begins, 2 * buckets, extras.skip, stream));
  constexpr size_t kBlockItems = size_t{kBucketBoundsThreads} * kBucketBoundsItems<K>;
  const size_t bounds_blocks = (n + kBlockItems - 1) / kBlockItems;
  const DigitExtractor<K> prefix_of(order, msd_begin, msd_bits);
  if (extras.skip != nullptr) {
    // A launch that may be skipped: a persistent grid, so that skipping costs little.
    PRIMS_TRY(launch_persistent(hybrid_bucket_bounds_kernel<K>, bounds_blocks, kBucketBoundsThreads, 0, stream,
                                io.keys_in, static_cast<unsigned>(n), prefix_of, begins, ends, extras.skip));
  } else {
    PRIMS_TRY(launch(hybrid_bucket_bounds_kernel<K>, static_cast<unsigned>(bounds_blocks), kBucketBoundsThreads, 0,
                     stream, io.keys_in, static_cast<unsigned>(n), prefix_of, begins, ends, extras.skip));
  }
  return segmented::segmented_radix_sort<Table, K, V, unsigned>(parts[1], segmented_bytes, io, n, buckets, begins,
                                                                ends, order, begin_bit, buckets_end_bit, stream,
                                                                extras);
}

/// The hybrid sort under a table (see the file comment). `Policy` is a template argument so tuning programs can
/// sweep it.
template <class Table, class K, class V, class Policy = typename Table::template Hybrid<K, V>>
cudaError_t hybrid_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order, int begin_bit,
                        int end_bit, cudaStream_t stream) {
  const int msd_bits = hybrid_msd_bits<Policy>(n, begin_bit, end_bit);
  const int msd_begin = end_bit - msd_bits;
  if (n == 0 || n >= kOnesweepPortionMaxItems || msd_begin == begin_bit) {
    return onesweep_sort_for_size<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, nullptr, stream);
  }
  const PassBuffers<K, V> buckets_io{io.keys_out, io.keys_out, io.values_out, io.values_out};
  size_t onesweep_bytes = 0;
  size_t buckets_bytes = 0;
  PRIMS_TRY(onesweep_sort_for_size<Table>(nullptr, onesweep_bytes, io, n, order, msd_begin, end_bit, nullptr, stream));
  PRIMS_TRY((sort_buckets<Table, K, V, Policy>(nullptr, buckets_bytes, buckets_io, n, order, begin_bit, end_bit,
                                               msd_bits, {}, stream)));
  // The two run one after the other and share one region.
  const size_t sizes[1] = {std::max(onesweep_bytes, buckets_bytes)};
  void* parts[1];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr) return cudaSuccess;
  PRIMS_TRY(onesweep_sort_for_size<Table>(parts[0], onesweep_bytes, io, n, order, msd_begin, end_bit, nullptr, stream));
  return sort_buckets<Table, K, V, Policy>(parts[0], buckets_bytes, buckets_io, n, order, begin_bit, end_bit, msd_bits,
                                           {}, stream);
}

}  // namespace prims::detail::radix
