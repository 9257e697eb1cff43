#pragma once
// Kernel launch for every device algorithm: programmatic dependent launch on Hopper and later, so a kernel's
// blocks are scheduled while the previous kernel in the stream drains and the launch latency between the
// steps of an algorithm (and between algorithms) is hidden.
//
// The rule that keeps it correct: every kernel launched this way calls wait_for_prior_grids() before it reads or
// writes any global memory (the wait returns once all prior work in the stream has completed and its writes are
// visible), then allow_dependent_grids() so the next kernel can be scheduled early in turn. The one exception,
// partition_if's pass, reads before its wait only what the grid before it cannot change (select_kernels.cuh).

#include <cuda_runtime.h>

#include <map>
#include <mutex>
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

/// What launch() learns about a kernel on a device once and caches: whether the kernel, in the form the device
/// runs, was compiled for Hopper or later (PTX virtual architecture 9.0 or newer), so that its
/// wait_for_prior_grids() is real, and how much dynamic shared memory it has been allowed. Only kernels that wait
/// may start early: one built for an older architecture (PTX compiled at load time on an H100, say) has no wait
/// and must see the previous kernel's writes at its start.
struct KernelSetup {
  bool waits_for_prior_grids = false;
  size_t dynamic_shared_bytes = 0;
  /// The kernel's static shared memory (its __shared__ arrays), which a block takes besides the dynamic part.
  size_t static_shared_bytes = 0;
  /// How many blocks of occupancy_block_threads threads (and dynamic_shared_bytes) fit on one multiprocessor at
  /// once; asked for by launch_persistent only (0: not asked yet).
  int occupancy_block_threads = 0;
  int blocks_per_multiprocessor = 0;
};

/// Looks up (or makes) the setup of `kernel` on the current device for launches of `shared_bytes` dynamic shared
/// memory, raising the kernel's limit when a launch needs more than it has; with occupancy_block_threads > 0, also
/// its occupancy at that block size. Under the tests' shared-memory cap (shared_memory_cap_for_tests) a block that
/// would take more than the cap is refused, as a GPU with that much would refuse it: so the suite run under a
/// smaller GPU's table (tests/tuning_switch.cu) fails where that GPU would.
inline cudaError_t kernel_setup(const void* kernel, size_t shared_bytes, KernelSetup& setup,
                                int occupancy_block_threads = 0) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, KernelSetup> cache;
  int device = 0;
  PRIMS_TRY(cudaGetDevice(&device));
  const std::pair<int, const void*> key{device, kernel};
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found == cache.end()) {
    cudaFuncAttributes attributes{};
    PRIMS_TRY(cudaFuncGetAttributes(&attributes, kernel));
    KernelSetup fresh;
    fresh.waits_for_prior_grids = attributes.ptxVersion >= 90;
    // What the kernel may use without asking: 48 KB less its static shared memory.
    fresh.dynamic_shared_bytes = static_cast<size_t>(attributes.maxDynamicSharedSizeBytes);
    fresh.static_shared_bytes = attributes.sharedSizeBytes;
    found = cache.emplace(key, fresh).first;
  }
  if (shared_memory_cap_for_tests().load(std::memory_order_relaxed) != 0) {
    size_t limit = 0;
    PRIMS_TRY(shared_memory_per_block(limit));
    const size_t block_bytes = found->second.static_shared_bytes + shared_bytes;
    if (block_bytes > limit) {
      return invalid_value("launch: a block takes %zu bytes of shared memory, over the %zu a block may have",
                           block_bytes, limit);
    }
  }
  if (shared_bytes > found->second.dynamic_shared_bytes) {
    PRIMS_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes)));
    found->second.dynamic_shared_bytes = shared_bytes;
    found->second.occupancy_block_threads = 0;  // the occupancy depends on the shared memory
  }
  if (occupancy_block_threads > 0 && occupancy_block_threads != found->second.occupancy_block_threads) {
    PRIMS_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&found->second.blocks_per_multiprocessor, kernel,
                                                            occupancy_block_threads, shared_bytes));
    found->second.occupancy_block_threads = occupancy_block_threads;
  }
  setup = found->second;
  return cudaSuccess;
}

/// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...), allowed to start while the previous kernel in
/// the stream drains where the kernel waits for it, and returns the launch error. Dynamic shared memory beyond a
/// kernel's default allowance (48 KB less its static shared memory) is allowed for the kernel as needed.
/// Example: `PRIMS_TRY(launch(my_kernel<T>, blocks, 256, 0, stream, in, out, n));`
template <class... KernelParams, class... Args>
cudaError_t launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                   Args&&... args) {
  KernelSetup setup;
  PRIMS_TRY(kernel_setup(reinterpret_cast<const void*>(kernel), shared_bytes, setup));
  cudaLaunchAttribute attributes[1];
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = setup.waits_for_prior_grids ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

/// How many blocks of block_threads (with shared_bytes of dynamic shared memory) of `kernel` fit on the current
/// device at once (at least one an SM).
template <class... KernelParams>
cudaError_t resident_blocks(void (*kernel)(KernelParams...), int block_threads, size_t shared_bytes, size_t& blocks) {
  KernelSetup setup;
  PRIMS_TRY(kernel_setup(reinterpret_cast<const void*>(kernel), shared_bytes, setup, block_threads));
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  blocks = static_cast<size_t>(setup.blocks_per_multiprocessor > 0 ? setup.blocks_per_multiprocessor : 1) *
           static_cast<size_t>(multiprocessors);
  return cudaSuccess;
}

/// Launches a persistent kernel, whose blocks take work until none is left: as many blocks of block_threads as fit
/// on the device at once (the occupancy is looked up once a kernel and device), but no more than max_blocks, and at
/// least one. Otherwise as launch().
/// Example: `PRIMS_TRY(launch_persistent(my_kernel<T>, groups, 256, 0, stream, list, out));`
template <class... KernelParams, class... Args>
cudaError_t launch_persistent(void (*kernel)(KernelParams...), size_t max_blocks, int block_threads,
                              size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  size_t resident = 0;
  PRIMS_TRY(resident_blocks(kernel, block_threads, shared_bytes, resident));
  const size_t blocks = max_blocks < resident ? max_blocks : resident;
  return launch(kernel, static_cast<unsigned>(blocks > 0 ? blocks : 1), block_threads, shared_bytes, stream,
                std::forward<Args>(args)...);
}

}  // namespace prims::detail
