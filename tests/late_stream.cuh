#pragma once
// LateStream: checks that a device algorithm runs on the stream it is given, ordered after the work queued before
// it and before the work queued after it (CUDA sources only: it launches a kernel).

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"

namespace prims::test {

/// Kernels load when the program starts rather than at their first launch, which may wait for the device and so
/// would end the spin before the algorithm is queued. Set before the first CUDA call of any test that includes this.
inline const bool kEagerModuleLoading = ::setenv("CUDA_MODULE_LOADING", "EAGER", 0) == 0;

/// Keeps its single thread busy for about `cycles` clock cycles (some milliseconds), holding back what follows it on
/// its stream.
__global__ inline void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

/// A non-blocking stream for checking that an algorithm runs on the stream it is given: its inputs are written by
/// copies queued behind a kernel that spins for milliseconds (until then they hold poison), and its outputs are read
/// back through copies queued after it on the same stream. An algorithm that launched on another stream would read
/// the poison, or finish after its outputs were read. Nothing is allocated on the device once work is queued (an
/// allocation may wait for the device).
///
///   prims::test::LateStream late;              // every buffer and the temporary storage allocated first
///   late.upload_late(d_in, host_in);
///   late.run(temp, [&](void* t, size_t& b, cudaStream_t s) { return prims::device::sum(t, b, d_in, d_out, n, s); });
///   const auto out = late.download(d_out, 1);
class LateStream {
 public:
  LateStream() {
    prims::check(cudaDeviceSynchronize(), "work queued before the stream check");
    prims::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    prims::check(cudaEventCreateWithFlags(&spun_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  LateStream(const LateStream&) = delete;
  LateStream& operator=(const LateStream&) = delete;
  ~LateStream() {
    cudaEventDestroy(spun_);
    cudaStreamDestroy(stream_);
  }

  /// Poisons `device` (host.size() items) now; run() copies `host` there behind the spin.
  template <class T>
  void upload_late(T* device, const std::vector<T>& host) {
    const size_t bytes = host.size() * sizeof(T);
    if (bytes == 0) return;
    staging_.emplace_back(bytes);
    prims::check(cudaMemcpy(staging_.back().data(), host.data(), bytes, cudaMemcpyHostToDevice), "staging upload");
    prims::check(cudaMemset(device, 0xCD, bytes), "poison");
    prims::check(cudaDeviceSynchronize(), "poison");
    copies_.push_back({device, staging_.back().data(), bytes});
  }

  /// Queues on the stream: a spin of some milliseconds, the inputs' copies, then the two-phase call
  /// `call(temp, temp_bytes, stream)` with `temp` (allocated beforehand: temp_for).
  template <class Call>
  void run(DeviceBuffer<unsigned char>& temp, Call call) {
    size_t bytes = 0;
    ASSERT_EQ(cudaSuccess, call(nullptr, bytes, stream_));
    ASSERT_LE(bytes, temp.size());
    spin_kernel<<<1, 1, 0, stream_>>>(kSpinCycles);
    ASSERT_EQ(cudaSuccess, cudaGetLastError());
    ASSERT_EQ(cudaSuccess, cudaEventRecord(spun_, stream_));
    for (const Copy& copy : copies_) {
      ASSERT_EQ(cudaSuccess, cudaMemcpyAsync(copy.to, copy.from, copy.bytes, cudaMemcpyDeviceToDevice, stream_));
    }
    ASSERT_EQ(cudaSuccess, call(temp.data(), bytes, stream_));
    // Otherwise the inputs were in place before the call was queued, and the check proves nothing.
    ASSERT_EQ(cudaErrorNotReady, cudaEventQuery(spun_)) << "the spin ended before the call was queued";
  }

  /// `count` items of `device`, read by a copy queued on the stream after the call; waits for the stream alone.
  template <class T>
  std::vector<T> download(const T* device, size_t count) {
    std::vector<T> host(count);
    if (count > 0) {
      prims::check(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream_),
                   "download on the stream");
    }
    prims::check(cudaStreamSynchronize(stream_), "the stream");
    return host;
  }

 private:
  struct Copy {
    void* to;
    const void* from;
    size_t bytes;
  };
  static constexpr long long kSpinCycles = 20'000'000;  // about 10 ms at 2 GHz
  cudaStream_t stream_ = nullptr;
  cudaEvent_t spun_ = nullptr;
  std::vector<DeviceBuffer<unsigned char>> staging_;
  std::vector<Copy> copies_;
};

/// Temporary storage for a two-phase call, allocated before any LateStream work is queued.
template <class Call>
DeviceBuffer<unsigned char> temp_for(Call call) {
  size_t bytes = 0;
  prims::check(call(nullptr, bytes, cudaStream_t{0}), "sizing");
  DeviceBuffer<unsigned char> temp(std::max<size_t>(bytes, 1));
  temp.fill_bytes(0xCD);
  return temp;
}

}  // namespace prims::test
