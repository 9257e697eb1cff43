#pragma once
// Device-wide stable radix partition: prims::device::radix_partition_keys and radix_partition_pairs.
//
// A partition by one digit is one pass of the radix sort: the bits [begin_bit, end_bit) (at most 8) of the keys'
// ordered bits, the same bits and order the sort uses (util/radix_key.cuh: for signed and float keys bucket 0
// holds the smallest keys; Order::Descending reverses the buckets, so bucket 0 holds the largest). keys_out holds
// bucket 0's keys, then bucket 1's, ..., each bucket in input order; values move with their keys.
// bucket_offsets (device memory, 2^(end_bit - begin_bit) + 1 entries) receives each bucket's first index and,
// last, n. It is the sort's own pass, so every kernel is the sort's: Onesweep (one histogram read, one ranking pass:
// one read and one write of the keys plus a histogram read) for large inputs, TileCounts for small ones; a
// template argument picks one explicitly.
// Two-phase temporary storage; launches on `stream` and never synchronizes it; returns the first CUDA error; a bit
// range that is not inside the key or is wider than 8 bits, or null bucket_offsets, is cudaErrorInvalidValue.
// keys_in == keys_out (and values_in == values_out) partitions in place.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/radix_partition_dispatch.cuh"
#include "prims/device/radix_sort.cuh"

namespace prims::device {

/// Partitions keys_in[0..n) stably into keys_out by the digit [begin_bit, end_bit) of the ordered key bits, with
/// the pass algorithm chosen explicitly.
/// Example: `radix_partition_keys<RadixSortAlgorithm::TileCounts>(t, bytes, in, out, n, offsets, 24, 32);`
template <RadixSortAlgorithm ALGORITHM, class K>
cudaError_t radix_partition_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                                 size_t* bucket_offsets, int begin_bit, int end_bit, Order order = Order::Ascending,
                                 cudaStream_t stream = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::radix::radix_partition<ALGORITHM>(temp, temp_bytes, io, n, bucket_offsets, begin_bit, end_bit, order,
                                                   stream);
}

/// Partitions keys_in[0..n) stably into keys_out by the digit [begin_bit, end_bit) of the ordered key bits.
/// Example (256 buckets by the top byte of float keys; bucket 0 holds the most negative):
///   size_t bytes = 0;
///   prims::device::radix_partition_keys(nullptr, bytes, d_in, d_out, n, d_offsets, 24, 32);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_partition_keys(temp, bytes, d_in, d_out, n, d_offsets, 24, 32, Order::Ascending, s);
///   // d_offsets[b] .. d_offsets[b + 1] is bucket b; d_offsets[256] == n.
template <class K>
cudaError_t radix_partition_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                                 size_t* bucket_offsets, int begin_bit, int end_bit, Order order = Order::Ascending,
                                 cudaStream_t stream = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::radix::radix_partition_default(temp, temp_bytes, io, n, bucket_offsets, begin_bit, end_bit, order,
                                                stream);
}

/// Partitions (key, value) pairs by key with the pass algorithm chosen explicitly.
/// Example: `radix_partition_pairs<RadixSortAlgorithm::TileCounts>(t, b, k, k_out, v, v_out, n, offsets, 0, 4);`
template <RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_partition_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                                  V* values_out, size_t n, size_t* bucket_offsets, int begin_bit, int end_bit,
                                  Order order = Order::Ascending, cudaStream_t stream = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::radix::radix_partition<ALGORITHM>(temp, temp_bytes, io, n, bucket_offsets, begin_bit, end_bit, order,
                                                   stream);
}

/// Partitions (key, value) pairs stably by the digit [begin_bit, end_bit) of the ordered key bits: values move
/// with their keys, and each bucket keeps the input order.
/// Example (16 buckets by the low 4 bits, values are row ids):
///   prims::device::radix_partition_pairs(temp, bytes, d_keys, d_keys_out, d_rows, d_rows_out, n, d_offsets, 0, 4);
template <class K, class V>
cudaError_t radix_partition_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                                  V* values_out, size_t n, size_t* bucket_offsets, int begin_bit, int end_bit,
                                  Order order = Order::Ascending, cudaStream_t stream = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::radix::radix_partition_default(temp, temp_bytes, io, n, bucket_offsets, begin_bit, end_bit, order,
                                                stream);
}

}  // namespace prims::device
