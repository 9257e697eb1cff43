#pragma once
// Kernel launch for every device algorithm: programmatic dependent launch on Hopper and later, so a kernel's
// blocks are scheduled while the previous kernel in the stream drains and the launch latency between the
// steps of an algorithm (and between algorithms) is hidden.
//
// The rule that keeps it correct: every kernel launched this way calls wait_for_prior_grids() before it reads or
// writes any global memory (the wait returns once all prior work in the stream has completed and its writes are
// visible), then allow_dependent_grids() so the next kernel can be scheduled early in turn.

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

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

/// Whether `kernel`, in the form the current device runs, was compiled for Hopper or later (PTX virtual architecture
/// 9.0 or newer), so that its wait_for_prior_grids() is real. Only such kernels may start early: one built for an
/// older architecture (PTX compiled at load time on an H100, say) has no wait and must see the previous kernel's
/// writes at its start. Cached per device and kernel.
inline cudaError_t waits_for_prior_grids(const void* kernel, bool& waits) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, bool> cache;
  int device = 0;
  PRIMS_TRY(cudaGetDevice(&device));
  const std::pair<int, const void*> key{device, kernel};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto found = cache.find(key);
    if (found != cache.end()) {
      waits = found->second;
      return cudaSuccess;
    }
  }
  cudaFuncAttributes attributes{};
  PRIMS_TRY(cudaFuncGetAttributes(&attributes, kernel));
  waits = attributes.ptxVersion >= 90;
  const std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, waits);
  return cudaSuccess;
}

/// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...), allowed to start while the previous kernel in
/// the stream drains where the kernel waits for it, and returns the launch error.
/// Example: `PRIMS_TRY(launch(my_kernel<T>, blocks, 256, 0, stream, in, out, n));`
template <class... KernelParams, class... Args>
cudaError_t launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                   Args&&... args) {
  bool early_start = false;
  PRIMS_TRY(waits_for_prior_grids(reinterpret_cast<const void*>(kernel), early_start));
  cudaLaunchAttribute attributes[1];
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = early_start ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace prims::detail
