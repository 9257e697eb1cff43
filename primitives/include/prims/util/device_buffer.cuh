#pragma once
// An owning device array for host programs (apps, benches, tests). Throws prims::CudaError on failure.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "prims/util/error.cuh"

namespace prims {

/// Example:
///   prims::DeviceBuffer<int> keys(host.size());
///   keys.upload(host);
///   ... kernels on keys.data() ...
///   std::vector<int> back = keys.download();
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count_ > 0) {
      check(cudaMalloc(&data_, count_ * sizeof(T)), "cudaMalloc");
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceBuffer() { cudaFree(data_); }

  T* data() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const T* host, size_t count) {
    check(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice), "copy to the GPU");
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  std::vector<T> download(size_t count) const {
    std::vector<T> host(count);
    check(cudaMemcpy(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost), "copy from the GPU");
    return host;
  }
  std::vector<T> download() const { return download(count_); }
  /// Fills every byte with `byte` (poisons outputs before a run so unwritten elements show).
  void fill_bytes(int byte) { check(cudaMemset(data_, byte, bytes()), "cudaMemset"); }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace prims
