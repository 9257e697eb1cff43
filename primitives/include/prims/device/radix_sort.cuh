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
//   Hybrid       Onesweep passes over the top bits until buckets average 16 keys (8 for pairs; three passes up to
//                2^29), then the segmented sort sorts every bucket at once, in registers: 80 bytes a key for 64-bit
//                keys at 2^27 against Onesweep's 136. Faster than Onesweep for 64-bit keys spread evenly over their
//                range (hashes, random ids), slower on skewed keys and on 32-bit keys (detail/radix_sort_hybrid.cuh;
//                docs/design-notes.md, "The hybrid sort").
// Auto, the plain calls' default, runs OneBlock up to half its limit for keys alone (8192 keys of up to 4 bytes, 4096
// of 8) and a quarter of it for pairs (4096 pairs of 4-byte items, 2048 with 8-byte items, 1024 with 16-byte
// values), Onesweep above: the faster of the two at every size (docs/design-notes.md, "Small inputs: the one-block
// sort"). For 8-byte keys from 2^26 keys (below 2^30, on ranges of whole bytes) the device chooses between Onesweep
// and Hybrid from the histograms of the top digits that Onesweep counts first: Hybrid where few keys share their
// top bits, Onesweep on skewed keys; the path not taken costs only its launches, which return at once, and there
// is no host synchronization (detail/radix_sort_auto.cuh; docs/design-notes.md, "The plain call
// chooses on the device").
// Every function follows the two-phase protocol (temp == nullptr asks for temp_bytes), launches on `stream`,
// never synchronizes it, and returns the first CUDA error; an invalid bit range is cudaErrorInvalidValue.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/algorithms.cuh"
#include "prims/device/detail/radix_sort_dispatch.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::device {

/// Ascending or descending, both stable. Example: `radix_sort_keys(t, b, in, out, n, Order::Descending);`
using Order = prims::Order;

/// The most keys RadixSortAlgorithm::OneBlock sorts, for keys K and values V (NoValues: keys only), on GPUs with
/// 163 KB of shared memory a block or more (A100, H100, B200). Parts with 99 KB take as many keys alone but fewer
/// pairs: one_block_max_items tells the current device's limit.
/// Example: `if (n <= prims::device::kOneBlockMaxItems<uint32_t>) ...` (16384).
template <class K, class V = detail::NoValues>
inline constexpr size_t kOneBlockMaxItems = detail::radix::one_block_max_items<detail::TuningSm90, K, V>();

/// The most keys RadixSortAlgorithm::OneBlock takes on the current device, for keys K and values V.
template <class K, class V = detail::NoValues>
cudaError_t one_block_max_items(size_t& items) {
  return detail::with_tuning([&](auto table) {
    items = detail::radix::one_block_max_items<decltype(table), K, V>();
    return cudaSuccess;
  });
}


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
  return detail::radix::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, nullptr, stream);
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
  return detail::radix::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, nullptr, stream);
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
