#pragma once
// Properties of the current device that launch code sizes grids by, read once per device and cached.

#include <cuda_runtime.h>

#include <atomic>

#include "prims/util/error.cuh"

namespace prims::detail {

inline constexpr int kMaxCachedDevices = 64;

/// The number of multiprocessors of the current device.
inline cudaError_t multiprocessor_count(int& count) {
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  int device = 0;
  PRIMS_TRY(cudaGetDevice(&device));
  if (device < kMaxCachedDevices) {
    count = cache[device].load(std::memory_order_relaxed);
    if (count > 0) {
      return cudaSuccess;
    }
  }
  PRIMS_TRY(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  if (device < kMaxCachedDevices) {
    cache[device].store(count, std::memory_order_relaxed);
  }
  return cudaSuccess;
}

}  // namespace prims::detail
