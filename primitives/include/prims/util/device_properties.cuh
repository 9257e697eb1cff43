#pragma once
// Properties of the current device that launch code depends on, read once per device and cached.

#include <cuda_runtime.h>

#include <atomic>

#include "prims/util/error.cuh"

namespace prims::detail {

inline constexpr int kMaxCachedDevices = 64;

/// One cached integer attribute of the current device.
template <cudaDeviceAttr ATTRIBUTE>
cudaError_t cached_device_attribute(int& value) {
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  int device = 0;
  PRIMS_TRY(cudaGetDevice(&device));
  if (device < kMaxCachedDevices) {
    value = cache[device].load(std::memory_order_relaxed);
    if (value > 0) {
      return cudaSuccess;
    }
  }
  PRIMS_TRY(cudaDeviceGetAttribute(&value, ATTRIBUTE, device));
  if (device < kMaxCachedDevices) {
    cache[device].store(value, std::memory_order_relaxed);
  }
  return cudaSuccess;
}

/// The number of multiprocessors of the current device.
inline cudaError_t multiprocessor_count(int& count) {
  return cached_device_attribute<cudaDevAttrMultiProcessorCount>(count);
}

}  // namespace prims::detail
