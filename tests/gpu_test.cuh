#pragma once
// Shared pieces of the GPU tests: skipping without a device, input generators, and running a two-phase
// device algorithm with its temporary storage.

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"

namespace prims::test {

inline bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/// Skips the current test where there is no CUDA device (as in CI); runs it where there is one.
#define PRIMS_REQUIRE_GPU()                                   \
  do {                                                        \
    if (!::prims::test::has_gpu()) {                          \
      GTEST_SKIP() << "no CUDA device on this machine";       \
    }                                                         \
  } while (0)

/// Sizes around the edges that matter to tiled kernels: 0, 1, warp and block edges, tile edges, primes.
inline std::vector<size_t> edge_sizes(size_t tile_items) {
  std::vector<size_t> sizes = {0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4093, 65537, 1000003};
  for (size_t tiles : {1, 2, 3, 7, 600}) {
    for (long delta : {-1, 0, 1}) {
      sizes.push_back(tiles * tile_items + delta);
    }
  }
  return sizes;
}

/// Uniform random values: integers over a range small enough that sums of `n` stay exact in T, floats in [-1, 1).
template <class T>
std::vector<T> random_values(size_t n, uint64_t seed, bool small = true) {
  std::mt19937_64 rng(seed);
  std::vector<T> values(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& v : values) v = static_cast<T>(dist(rng));
  } else if constexpr (std::is_signed_v<T>) {
    std::uniform_int_distribution<long long> dist(small ? -1000 : static_cast<long long>(std::numeric_limits<T>::min()),
                                                  small ? 1000 : static_cast<long long>(std::numeric_limits<T>::max()));
    for (auto& v : values) v = static_cast<T>(dist(rng));
  } else {
    std::uniform_int_distribution<unsigned long long> dist(
        0, small ? 1000 : static_cast<unsigned long long>(std::numeric_limits<T>::max()));
    for (auto& v : values) v = static_cast<T>(dist(rng));
  }
  return values;
}

/// Runs a two-phase device algorithm: `call(temp, temp_bytes)` is invoked once to size and once to run,
/// then the device is synchronized. Every error fails the test. The temporary storage is filled with 0xCD bytes
/// first, so an algorithm that reads it before writing it shows.
template <class Call>
void run_two_phase(Call call) {
  size_t temp_bytes = 0;
  ASSERT_EQ(cudaSuccess, call(nullptr, temp_bytes));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  if (temp_bytes > 0) temp.fill_bytes(0xCD);
  ASSERT_EQ(cudaSuccess, call(temp.data(), temp_bytes));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
}

/// Forces a tuning table (-1: the device's own) and a shared-memory cap (0: none) for one scope, then restores what
/// was there (PRIMS_TEST_TUNING's, tests/tuning_switch.cu).
class ForcedTuning {
 public:
  ForcedTuning(int generation, size_t cap)
      : generation_(prims::detail::tuning_override_for_tests().exchange(generation)),
        cap_(prims::detail::shared_memory_cap_for_tests().exchange(cap)) {}
  explicit ForcedTuning(prims::detail::Generation generation)
      : ForcedTuning(static_cast<int>(generation), prims::detail::table_shared_bytes(generation)) {}
  ForcedTuning(const ForcedTuning&) = delete;
  ForcedTuning& operator=(const ForcedTuning&) = delete;
  ~ForcedTuning() {
    prims::detail::tuning_override_for_tests().store(generation_);
    prims::detail::shared_memory_cap_for_tests().store(cap_);
  }

 private:
  int generation_;
  size_t cap_;
};

inline constexpr prims::detail::Generation kEveryGeneration[] = {
    prims::detail::Generation::Sm80, prims::detail::Generation::Sm86, prims::detail::Generation::Sm90,
    prims::detail::Generation::Sm100};

}  // namespace prims::test
