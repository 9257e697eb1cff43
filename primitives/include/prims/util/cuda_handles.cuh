#pragma once
// Owning handles for host programs (apps, benches, tests): a stream, an event and page-locked host memory, each
// released by its destructor. Like DeviceBuffer they throw prims::CudaError on failure.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "prims/util/error.cuh"

namespace prims {

/// A CUDA stream, non-blocking by default (cudaStreamDefault makes one that orders with the legacy default stream).
/// Example: `prims::Stream stream; kernel<<<g, b, 0, stream.get()>>>(...);`
class Stream {
 public:
  explicit Stream(unsigned flags = cudaStreamNonBlocking) {
    check(cudaStreamCreateWithFlags(&stream_, flags), "cudaStreamCreate");
  }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  void synchronize(const char* what) const { check(cudaStreamSynchronize(stream_), what); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event for timing and ordering.
/// Example:
///   prims::Event start, stop;
///   start.record(stream); work(stream); stop.record(stream);
///   double s = prims::Event::seconds_between(start, stop);   // waits for stop
class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) const { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }
  void synchronize(const char* what) const { check(cudaEventSynchronize(event_), what); }

  /// Milliseconds from `start` to `stop`, both recorded; waits for `stop`.
  static float milliseconds_between(const Event& start, const Event& stop) {
    check(cudaEventSynchronize(stop.event_), "cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start.event_, stop.event_), "cudaEventElapsedTime");
    return milliseconds;
  }
  static double seconds_between(const Event& start, const Event& stop) {
    return milliseconds_between(start, stop) / 1000.0;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Page-locked host memory: copies from and to it run at full speed and asynchronously.
/// Example: `prims::PinnedBuffer staging(32 << 20); cudaMemcpyAsync(d, staging.data(), n, ...);`
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) check(cudaHostAlloc(&data_, bytes_, cudaHostAllocDefault), "cudaHostAlloc");
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace prims
