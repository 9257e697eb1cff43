#pragma once
// The radix partition's dispatch (device/radix_partition.cuh is the API): one pass of the sort's TileCounts or
// Onesweep, its digit's buckets reported.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/algorithms.cuh"
#include "prims/device/detail/radix_sort_dispatch.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/error.cuh"

namespace prims::detail::radix {

/// The widest digit a partition takes: one pass of the sort.
inline constexpr int kMaxPartitionBits = 8;

/// One pass of ALGORITHM under a table, its digit's buckets reported.
template <device::RadixSortAlgorithm ALGORITHM, class Table, class K, class V>
cudaError_t radix_partition_with(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n,
                                 size_t* bucket_offsets, int begin_bit, int end_bit, Order order,
                                 cudaStream_t stream) {
  static_assert(
      ALGORITHM == device::RadixSortAlgorithm::TileCounts || ALGORITHM == device::RadixSortAlgorithm::Onesweep,
      "a partition is one pass of TileCounts or Onesweep");
  if (!valid_bit_range<K>(begin_bit, end_bit) || end_bit - begin_bit > kMaxPartitionBits) {
    return invalid_value("radix_partition: bit range [%d, %d) is not a digit of at most %d bits inside a %d-bit key",
                         begin_bit, end_bit, kMaxPartitionBits, RadixKey<K>::kBits);
  }
  if (temp != nullptr && bucket_offsets == nullptr) return invalid_value("radix_partition: bucket_offsets is null");
  PRIMS_TRY((radix_sort_with<ALGORITHM, Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, bucket_offsets,
                                               stream)));
  if (temp == nullptr || (n != 0 && begin_bit != end_bit)) return cudaSuccess;
  // No pass ran: every key is in bucket 0 (an empty digit), or there are no keys.
  return write_bucket_offsets(static_cast<const unsigned*>(nullptr), 0, bucket_offsets, 1 << (end_bit - begin_bit),
                              n, stream);
}

template <device::RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_partition(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, size_t* bucket_offsets,
                            int begin_bit, int end_bit, Order order, cudaStream_t stream) {
  return with_tuning([&](auto table) {
    return radix_partition_with<ALGORITHM, decltype(table)>(temp, temp_bytes, io, n, bucket_offsets, begin_bit,
                                                            end_bit, order, stream);
  });
}

/// The plain partition under a table: TileCounts up to its RadixPartition<V>::tile_counts_max_items, Onesweep
/// above.
template <class Table, class K, class V>
cudaError_t radix_partition_default_with(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n,
                                         size_t* bucket_offsets, int begin_bit, int end_bit, Order order,
                                         cudaStream_t stream) {
  using device::RadixSortAlgorithm;
  if (n <= Table::template RadixPartition<V>::tile_counts_max_items) {
    return radix_partition_with<RadixSortAlgorithm::TileCounts, Table>(temp, temp_bytes, io, n, bucket_offsets,
                                                                       begin_bit, end_bit, order, stream);
  }
  return radix_partition_with<RadixSortAlgorithm::Onesweep, Table>(temp, temp_bytes, io, n, bucket_offsets,
                                                                    begin_bit, end_bit, order, stream);
}

template <class K, class V>
cudaError_t radix_partition_default(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n,
                                    size_t* bucket_offsets, int begin_bit, int end_bit, Order order,
                                    cudaStream_t stream) {
  return with_tuning([&](auto table) {
    return radix_partition_default_with<decltype(table)>(temp, temp_bytes, io, n, bucket_offsets, begin_bit, end_bit,
                                                         order, stream);
  });
}

}  // namespace prims::detail::radix
