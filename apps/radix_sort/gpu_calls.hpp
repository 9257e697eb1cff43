#pragma once
// The GPU backend's calls into the library (sort, partition, top-k), one key type at a time. Each key type's calls
// are compiled in a translation unit of their own (gpu_calls_<type>.cu, made by CMake from gpu_calls_type.cu.in):
// the CUDA driver loads a unit's kernels when one of them first runs, and the time it takes grows with the unit, so
// a sort of i32 keys loads only the i32 kernels. With all ten types in one unit, that load added about 0.2 s to the
// first sort of a run on an H100 (bench/results/2026-11-27-H100-radix_sort-module-per-key-type.txt).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backend.hpp"

namespace radix_sort {

template <class K>
struct GpuCalls {
  /// The library's sort of keys (and values) in place: `temp == nullptr` asks for the scratch size.
  static cudaError_t sort(const SortRequest& request, void* temp, size_t& temp_bytes, void* keys, void* values,
                          cudaStream_t stream);
  /// The library's partition by one digit: `temp == nullptr` asks for the scratch size.
  static cudaError_t partition(const PartitionRequest& request, void* temp, size_t& temp_bytes, const void* keys_in,
                               void* keys_out, const void* values_in, void* values_out, size_t* offsets,
                               cudaStream_t stream);
  /// The library's top-k: `temp == nullptr` asks for the scratch size.
  static cudaError_t top(const TopRequest& request, void* temp, size_t& temp_bytes, const void* keys, void* keys_out,
                         cudaStream_t stream);
};

extern template struct GpuCalls<int8_t>;
extern template struct GpuCalls<uint8_t>;
extern template struct GpuCalls<int16_t>;
extern template struct GpuCalls<uint16_t>;
extern template struct GpuCalls<int32_t>;
extern template struct GpuCalls<uint32_t>;
extern template struct GpuCalls<int64_t>;
extern template struct GpuCalls<uint64_t>;
extern template struct GpuCalls<float>;
extern template struct GpuCalls<double>;

}  // namespace radix_sort
