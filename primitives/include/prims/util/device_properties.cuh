#pragma once
// Properties of the current device that launch code depends on, read once per device and cached.

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>

#include "prims/util/error.cuh"

namespace prims::detail {

inline constexpr int kMaxCachedDevices = 64;

/// One cached integer attribute of the current device (a non-negative one; the cache keeps it plus one, so that 0
/// means "not read yet" and an attribute of 0 is cached too).
template <cudaDeviceAttr ATTRIBUTE>
cudaError_t cached_device_attribute(int& value) {
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  int device = 0;
  PRIMS_TRY(cudaGetDevice(&device));
  if (device < kMaxCachedDevices) {
    const int cached = cache[device].load(std::memory_order_relaxed);
    if (cached > 0) {
      value = cached - 1;
      return cudaSuccess;
    }
  }
  PRIMS_TRY(cudaDeviceGetAttribute(&value, ATTRIBUTE, device));
  if (device < kMaxCachedDevices) {
    cache[device].store(value + 1, std::memory_order_relaxed);
  }
  return cudaSuccess;
}

/// The number of multiprocessors of the current device.
inline cudaError_t multiprocessor_count(int& count) {
  return cached_device_attribute<cudaDevAttrMultiProcessorCount>(count);
}

/// The compute capability of the current device as major * 10 + minor (90 for an H100).
inline cudaError_t compute_capability(int& capability) {
  int major = 0;
  int minor = 0;
  PRIMS_TRY(cached_device_attribute<cudaDevAttrComputeCapabilityMajor>(major));
  PRIMS_TRY(cached_device_attribute<cudaDevAttrComputeCapabilityMinor>(minor));
  capability = major * 10 + minor;
  return cudaSuccess;
}

/// A cap on the shared memory a block may use, below the device's own, for tests: set it to 99 KB on an H100 and
/// the library takes the paths it takes on a GPU with that much (an RTX 4090, an L40S). 0 (the default): no cap.
inline std::atomic<size_t>& shared_memory_cap_for_tests() {
  static std::atomic<size_t> cap{0};
  return cap;
}

/// The most shared memory a block of the current device may ask for (opted in), in bytes, under the test cap.
inline cudaError_t shared_memory_per_block(size_t& bytes) {
  int optin = 0;
  PRIMS_TRY(cached_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(optin));
  bytes = static_cast<size_t>(optin);
  const size_t cap = shared_memory_cap_for_tests().load(std::memory_order_relaxed);
  if (cap > 0 && cap < bytes) bytes = cap;
  return cudaSuccess;
}

}  // namespace prims::detail
