#pragma once
// Carving one caller-provided temporary allocation into several device buffers (the two-phase CUB idiom:
// a call with temp == nullptr only reports the bytes it needs).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/util/error.cuh"

namespace prims::detail {

/// Every buffer starts on this boundary: enough for 16-byte vector access and for a clean cache-line start.
inline constexpr size_t kTempAlignment = 256;

constexpr size_t align_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

/// Lays out N buffers of the given byte sizes one after another, each aligned to kTempAlignment.
template <size_t N>
struct TempLayout {
  size_t offsets[N] = {};
  size_t total_bytes = 0;

  explicit constexpr TempLayout(const size_t (&sizes)[N]) {
    for (size_t i = 0; i < N; ++i) {
      offsets[i] = total_bytes;
      total_bytes += align_up(sizes[i] == 0 ? 1 : sizes[i], kTempAlignment);
    }
  }
};

/// The two-phase protocol in one place. With temp == nullptr it stores the bytes needed in temp_bytes and
/// leaves `buffers` null; otherwise it checks that temp_bytes is large enough and points `buffers` into temp.
/// Returns cudaErrorInvalidValue when the storage given is too small.
/// Example:
///   void* parts[2];
///   PRIMS_TRY(carve_temp(temp, temp_bytes, {count_bytes, partial_bytes}, parts));
///   if (temp == nullptr) return cudaSuccess;
template <size_t N>
cudaError_t carve_temp(void* temp, size_t& temp_bytes, const size_t (&sizes)[N], void* (&buffers)[N]) {
  const TempLayout<N> layout(sizes);
  for (size_t i = 0; i < N; ++i) {
    buffers[i] = nullptr;
  }
  if (temp == nullptr) {
    temp_bytes = layout.total_bytes;
    return cudaSuccess;
  }
  if (temp_bytes < layout.total_bytes) {
    return invalid_value("temporary storage too small: %zu bytes given, %zu needed", temp_bytes, layout.total_bytes);
  }
  for (size_t i = 0; i < N; ++i) {
    buffers[i] = static_cast<char*>(temp) + layout.offsets[i];
  }
  return cudaSuccess;
}

}  // namespace prims::detail
