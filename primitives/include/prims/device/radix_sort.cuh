#pragma once
// Device-wide radix sort: prims::device::radix_sort_keys and radix_sort_pairs.
//
// Keys: 1 to 8-byte integers, float and double (order in prims/util/radix_key.cuh: numpy's for floats, -0.0 equal
// to +0.0, NaNs last). Values: any trivially copyable type of up to 16 bytes. Both orders are stable. Only bits
// [begin_bit, end_bit) of the ordered key bits count; keys equal there keep their input order.
//
// This header is the public API and the choice among the algorithms; each algorithm lives in its own header under
// detail/ (policy, kernels, dispatcher), on what they share in detail/radix_sort_common.cuh. Two algorithms, each
// a digit pass per `radix_bits` of the range, ping-ponging between the output and a buffer in the temporary
// storage (keys_in is only read, unless it is keys_out):
//   TileCounts   reduce-then-scan: per pass, tile digit counts, device::exclusive_sum, rank and scatter.
//   Onesweep     one histogram read for all passes, then one kernel a pass with decoupled look-back, any n (the
//                look-back runs within portions of fewer than 2^30 keys).
// one for small inputs, which never leave the chip between digits:
//   OneBlock     the whole sort in one block's registers and shared memory, one launch (up to 2^14 keys or pairs
//                of up to 4-byte items, 2^13 of 8-byte items, 2^12 with 16-byte values: kOneBlockMaxItems).
// and one that takes the most significant digits first:
//   Hybrid       Onesweep passes over the top bits until buckets average 8 keys (three passes at 2^27), then the
//                segmented sort sorts every bucket at once, in registers: 80 bytes a key for 64-bit keys at 2^27
//                against Onesweep's 136. Faster than Onesweep for 64-bit keys spread evenly over their range
//                (hashes, random ids), slower on skewed keys and on 32-bit keys, so Auto never takes it
//                (detail/radix_sort_hybrid.cuh; docs/design-notes.md, "The hybrid sort").
// Auto, the plain calls' default, runs OneBlock up to half its limit for keys alone (8192 keys of up to 4 bytes, 4096
// of 8) and a quarter of it for pairs (4096 pairs of 4-byte items, 2048 with 8-byte items, 1024 with 16-byte
// values), Onesweep above: the faster of the two at every size (docs/design-notes.md, "Small inputs: the one-block
// sort").
// Every function follows the two-phase protocol (temp == nullptr asks for temp_bytes), launches on `stream`,
// never synchronizes it, and returns the first CUDA error; an invalid bit range is cudaErrorInvalidValue.

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_hybrid.cuh"
#include "prims/device/detail/radix_sort_one_block.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/device/detail/radix_sort_tile_counts.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::device {

/// Ascending or descending, both stable. Example: `radix_sort_keys(t, b, in, out, n, Order::Descending);`
using Order = prims::Order;

/// How the sort finds each digit's output positions in a pass.
/// Example: `prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(t, b, in, out, n);`
enum class RadixSortAlgorithm {
  /// Reduce-then-scan: count digits per tile, scan the counts with device::exclusive_sum, rank and scatter.
  /// Three launches a pass, the keys read twice a pass.
  TileCounts,
  /// Onesweep: all digit histograms in one read, then one launch a pass that ranks, looks back across tiles for
  /// its offsets and scatters. Passes whose keys all share a digit only copy.
  Onesweep,
  /// One block sorts everything in shared memory, one launch; n above the device's one_block_max_items (at most
  /// kOneBlockMaxItems) is cudaErrorInvalidValue.
  OneBlock,
  /// Most significant digits first: Onesweep passes over the top bits until the average bucket holds 8 keys,
  /// then the segmented sort sorts every bucket at once. For 64-bit keys spread evenly over their range; slower
  /// than Onesweep on skewed keys (few distinct top bits make big buckets), so never taken by Auto.
  Hybrid,
  /// OneBlock up to half its limit for keys alone and a quarter for pairs (8192 u32 keys, 4096 u32/u32 pairs), else
  /// Onesweep: the default.
  Auto,
};

/// The most keys RadixSortAlgorithm::OneBlock sorts, for keys K and values V (NoValues: keys only), on GPUs with
/// 163 KB of shared memory a block or more (A100, H100, B200). Parts with 99 KB take as many keys alone but fewer
/// pairs: one_block_max_items tells the current device's limit.
/// Example: `if (n <= prims::device::kOneBlockMaxItems<uint32_t>) ...` (16384).
template <class K, class V = detail::NoValues>
inline constexpr size_t kOneBlockMaxItems = detail::one_block_max_items<detail::TuningSm90, K, V>();

/// The most keys RadixSortAlgorithm::OneBlock takes on the current device, for keys K and values V.
template <class K, class V = detail::NoValues>
cudaError_t one_block_max_items(size_t& items) {
  return detail::with_tuning([&](auto table) {
    items = detail::one_block_max_items<decltype(table), K, V>();
    return cudaSuccess;
  });
}

}  // namespace prims::device

namespace prims::detail {

/// The sort under a table (with_tuning, detail/tuning.cuh), with the algorithm chosen at compile time: an explicit
/// TileCounts call compiles no Onesweep kernel. With `bucket_offsets` (one pass only: end_bit - begin_bit <= 8),
/// also writes where each digit's keys start, then n (the partition). The bit range is checked by the caller.
template <device::RadixSortAlgorithm ALGORITHM, class Table, class K, class V>
cudaError_t radix_sort_with(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                            int begin_bit, int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  static_assert(kIsRadixKey<K>, "radix-sort keys are 1 to 8-byte integers, float or double");
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 16,
                "radix-sort values are trivially copyable types of up to 16 bytes");
  using device::RadixSortAlgorithm;
  if constexpr (ALGORITHM == RadixSortAlgorithm::Auto) {
    // One of the two, by n alone, so the size query and the run agree.
    if (n <= one_block_auto_max_items<Table, K, V>()) {
      return radix_sort_with<RadixSortAlgorithm::OneBlock, Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                                  bucket_offsets, stream);
    }
    return radix_sort_with<RadixSortAlgorithm::Onesweep, Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                                bucket_offsets, stream);
  } else if constexpr (ALGORITHM == RadixSortAlgorithm::Hybrid) {
    if (bucket_offsets != nullptr) return invalid_value("RadixSortAlgorithm::Hybrid cannot report bucket offsets");
    return hybrid_sort<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
  } else if constexpr (ALGORITHM == RadixSortAlgorithm::OneBlock) {
    if (bucket_offsets != nullptr) return invalid_value("RadixSortAlgorithm::OneBlock cannot report bucket offsets");
    return one_block_sort<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
  } else if constexpr (ALGORITHM == RadixSortAlgorithm::Onesweep) {
    return onesweep_sort_for_size<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, bucket_offsets, stream);
  } else {
    return tile_counts_sort<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, bucket_offsets, stream);
  }
}

/// The sort under the current device's table, its arguments checked.
template <device::RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order, int begin_bit,
                       int end_bit, size_t* bucket_offsets, cudaStream_t stream) {
  if (!valid_bit_range<K>(begin_bit, end_bit)) {
    return invalid_value("radix_sort: bit range [%d, %d) is not inside a %d-bit key", begin_bit, end_bit,
                         RadixKey<K>::kBits);
  }
  return with_tuning([&](auto table) {
    return radix_sort_with<ALGORITHM, decltype(table)>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                       bucket_offsets, stream);
  });
}

}  // namespace prims::detail

namespace prims::device {

/// Sorts keys_in[0..n) into keys_out with the algorithm chosen explicitly. keys_in == keys_out sorts in place.
/// Example:
///   size_t bytes = 0;
///   prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(nullptr, bytes, in, out, n);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(temp, bytes, in, out, n);
template <RadixSortAlgorithm ALGORITHM, class K>
cudaError_t radix_sort_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                            Order order = Order::Ascending, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                            cudaStream_t stream = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, nullptr, stream);
}

/// Sorts keys_in[0..n) into keys_out, stably, by the ordered bits [begin_bit, end_bit) of each key.
/// Example (floats, largest first, NaNs first):
///   size_t bytes = 0;
///   prims::device::radix_sort_keys(nullptr, bytes, d_in, d_out, n, prims::device::Order::Descending);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_keys(temp, bytes, d_in, d_out, n, prims::device::Order::Descending, 0, 32, stream);
template <class K>
cudaError_t radix_sort_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                            Order order = Order::Ascending, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                            cudaStream_t stream = 0) {
  return radix_sort_keys<RadixSortAlgorithm::Auto>(temp, temp_bytes, keys_in, keys_out, n, order, begin_bit, end_bit,
                                                   stream);
}

/// Sorts (key, value) pairs by key with the algorithm chosen explicitly; equal keys keep their input order.
/// keys_in == keys_out and values_in == values_out sort in place.
/// Example: `radix_sort_pairs<RadixSortAlgorithm::TileCounts>(temp, bytes, k_in, k_out, v_in, v_out, n);`
template <RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                             V* values_out, size_t n, Order order = Order::Ascending, int begin_bit = 0,
                             int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, nullptr, stream);
}

/// Sorts (key, value) pairs by key, stably: equal keys keep their values' input order.
/// Example (an argsort: values_in holds 0, 1, ..., n - 1):
///   size_t bytes = 0;
///   prims::device::radix_sort_pairs(nullptr, bytes, d_keys, d_sorted, d_index, d_order, n);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_pairs(temp, bytes, d_keys, d_sorted, d_index, d_order, n);
template <class K, class V>
cudaError_t radix_sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                             V* values_out, size_t n, Order order = Order::Ascending, int begin_bit = 0,
                             int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  return radix_sort_pairs<RadixSortAlgorithm::Auto>(temp, temp_bytes, keys_in, keys_out, values_in, values_out, n,
                                                    order, begin_bit, end_bit, stream);
}

}  // namespace prims::device
