#pragma once
// Kernel launch for every device algorithm: programmatic dependent launch on Hopper and later, so a kernel's
// blocks are scheduled while the previous kernel in the stream drains and the launch latency between the
// steps of an algorithm (and between algorithms) is hidden.
//
// The rule that keeps it correct: every kernel launched this way calls wait_for_prior_grids() before it reads or
// writes any global memory (the wait returns once all prior work in the stream has completed and its writes are
// visible), then allow_dependent_grids() so the next kernel can be scheduled early in turn.

#include <cuda_runtime.h>

#include <utility>

#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"

namespace prims::detail {

/// Waits until all prior work in the stream has completed and its memory is visible (a no-op before Hopper or when
/// the kernel was launched without programmatic serialization).
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

/// Lets the next kernel in the stream be scheduled now; it still waits for this one at its own
/// wait_for_prior_grids().
__device__ __forceinline__ void allow_dependent_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...) and returns the launch error.
/// Example: `PRIMS_TRY(launch(my_kernel<T>, blocks, 256, 0, stream, in, out, n));`
template <class... KernelParams, class... Args>
cudaError_t launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                   Args&&... args) {
  int major = 0;
  PRIMS_TRY(compute_capability_major(major));
  cudaLaunchAttribute attributes[1];
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = major >= 9 ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace prims::detail
