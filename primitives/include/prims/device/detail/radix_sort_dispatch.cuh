#pragma once
// The radix sort's dispatch (device/radix_sort.cuh is the API): the algorithm under a table, and under the
// current device's table with its arguments checked. Each algorithm has its own header beside this one.

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "prims/device/algorithms.cuh"
#include "prims/device/detail/radix_sort_auto.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_hybrid.cuh"
#include "prims/device/detail/radix_sort_one_block.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/device/detail/radix_sort_tile_counts.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/error.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::detail::radix {

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
    // The path is chosen from n and the bit range alone, so the size query and the run agree; between Onesweep and
    // the hybrid, the device then chooses from the keys (radix_sort_auto.cuh).
    if (n <= one_block_auto_max_items<Table, K, V>()) {
      return radix_sort_with<RadixSortAlgorithm::OneBlock, Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit,
                                                                  bucket_offsets, stream);
    }
    if (bucket_offsets == nullptr && auto_choice_applies<Table, K, V>(n, begin_bit, end_bit)) {
      return auto_sort<Table>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
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

}  // namespace prims::detail::radix
