#pragma once
// Iterator inputs of the reduce and the plain scans (thrust::counting_iterator, transform iterators, cuda::std
// iterators): the n items, converted to the output's value type, are written once into temporary storage, and the
// pointer path (vector loads, the tuned tiles) runs on them. One extra write and read of n items, and n items more
// of temporary storage; pointer inputs never take this path.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail {

inline constexpr int kStageInputThreads = 256;

/// staged[i] = T(in[i]) for i < n.
template <class InIt, class T>
__global__ void __launch_bounds__(kStageInputThreads) stage_input_kernel(InIt in, T* __restrict__ staged, size_t n) {
  wait_for_prior_grids();
  allow_dependent_grids();
  for (size_t i = blockIdx.x * size_t{kStageInputThreads} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * kStageInputThreads) {
    staged[i] = static_cast<T>(in[i]);
  }
}

/// The two-phase protocol around `run(temp, temp_bytes, const T* staged)` (itself two-phase: with temp == nullptr
/// it sizes): `in`'s n items staged as T in the first part of temp, run's storage after them.
template <class T, class InIt, class Run>
cudaError_t with_staged_input(void* temp, size_t& temp_bytes, InIt in, size_t n, cudaStream_t stream, Run&& run) {
  size_t run_bytes = 0;
  PRIMS_TRY(run(nullptr, run_bytes, static_cast<const T*>(nullptr)));
  const size_t sizes[] = {n * sizeof(T), run_bytes};
  void* parts[2];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr) return cudaSuccess;
  T* staged = static_cast<T*>(parts[0]);
  if (n > 0) {
    int multiprocessors = 0;
    PRIMS_TRY(multiprocessor_count(multiprocessors));
    const size_t blocks = std::min((n + kStageInputThreads - 1) / kStageInputThreads,
                                   static_cast<size_t>(multiprocessors) * 8);
    PRIMS_TRY(launch(stage_input_kernel<InIt, T>, static_cast<unsigned>(blocks), kStageInputThreads, 0, stream, in,
                     staged, n));
  }
  return run(parts[1], run_bytes, static_cast<const T*>(staged));
}

}  // namespace prims::detail
