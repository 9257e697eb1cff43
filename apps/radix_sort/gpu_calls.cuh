#pragma once
// The definitions of GpuCalls<K> (gpu_calls.hpp), included by each key type's translation unit.

#include <algorithm>

#include "gpu_calls.hpp"
#include "prims/device/radix_partition.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/device/top_k.cuh"

namespace radix_sort {

namespace detail {
inline prims::device::Order order_of(bool descending) {
  return descending ? prims::device::Order::Descending : prims::device::Order::Ascending;
}
}  // namespace detail

template <class K>
cudaError_t GpuCalls<K>::sort(const SortRequest& request, void* temp, size_t& temp_bytes, void* keys, void* values,
                              cudaStream_t stream) {
  // The bits above end_bit are the same in every key (a bucket of the out-of-core sort): no pass for them.
  const int end_bit = std::min<int>(request.end_bit, 8 * sizeof(K));
  K* typed_keys = static_cast<K*>(keys);
  if (request.value_bytes == 0 && !request.argsort) {
    return prims::device::radix_sort_keys<K>(temp, temp_bytes, typed_keys, typed_keys, request.count,
                                             detail::order_of(request.descending), 0, end_bit, stream);
  }
  return visit_value_width(request.argsort ? sizeof(uint64_t) : request.value_bytes, [&](auto value_tag) {
    using V = typename decltype(value_tag)::type;
    V* typed_values = static_cast<V*>(values);
    return prims::device::radix_sort_pairs<K, V>(temp, temp_bytes, typed_keys, typed_keys, typed_values, typed_values,
                                                 request.count, detail::order_of(request.descending), 0, end_bit,
                                                 stream);
  });
}

template <class K>
cudaError_t GpuCalls<K>::partition(const PartitionRequest& request, void* temp, size_t& temp_bytes,
                                   const void* keys_in, void* keys_out, const void* values_in, void* values_out,
                                   size_t* offsets, cudaStream_t stream) {
  const K* typed_in = static_cast<const K*>(keys_in);
  K* typed_out = static_cast<K*>(keys_out);
  const auto order = detail::order_of(request.descending);
  if (request.value_bytes == 0) {
    return prims::device::radix_partition_keys<K>(temp, temp_bytes, typed_in, typed_out, request.count, offsets,
                                                  request.begin_bit, request.end_bit, order, stream);
  }
  return visit_value_width(request.value_bytes, [&](auto value_tag) {
    using V = typename decltype(value_tag)::type;
    return prims::device::radix_partition_pairs<K, V>(temp, temp_bytes, typed_in, typed_out,
                                                      static_cast<const V*>(values_in), static_cast<V*>(values_out),
                                                      request.count, offsets, request.begin_bit, request.end_bit,
                                                      order, stream);
  });
}

template <class K>
cudaError_t GpuCalls<K>::top(const TopRequest& request, void* temp, size_t& temp_bytes, const void* keys,
                             void* keys_out, cudaStream_t stream) {
  return prims::device::top_k_keys<K>(temp, temp_bytes, static_cast<const K*>(keys), static_cast<K*>(keys_out),
                                      request.count, request.k, detail::order_of(request.descending), stream);
}

}  // namespace radix_sort
