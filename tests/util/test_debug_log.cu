// PRIMS_DEBUG_LOG (defined for this binary only): every misuse a device algorithm rejects with
// cudaErrorInvalidValue prints its reason as one line on stderr. Host-only: each call is rejected before any launch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "prims/device/radix_partition.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/device/segmented_radix_sort.cuh"
#include "prims/util/temp_storage.cuh"

#ifndef PRIMS_DEBUG_LOG
#error "this test is built with PRIMS_DEBUG_LOG"
#endif

namespace {

using prims::device::Order;
using prims::device::RadixSortAlgorithm;

/// Runs `call`, expects cudaErrorInvalidValue, and returns what it printed on stderr.
template <class Call>
std::string rejection(Call call) {
  ::testing::internal::CaptureStderr();
  const cudaError_t result = call();
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaErrorInvalidValue, result);
  return printed;
}

TEST(DebugLog, BitRangeOutsideTheKey) {
  uint32_t* keys = nullptr;
  size_t bytes = 0;
  EXPECT_EQ("prims: radix_sort: bit range [0, 33) is not inside a 32-bit key\n", rejection([&] {
              return prims::device::radix_sort_keys(nullptr, bytes, keys, keys, 10, Order::Ascending, 0, 33);
            }));
  EXPECT_EQ("prims: segmented_radix_sort: bit range [9, 8) is not inside a 16-bit key\n", rejection([&] {
              const int* offsets = nullptr;
              const uint16_t* in = nullptr;
              return prims::device::segmented_radix_sort_keys(nullptr, bytes, in, static_cast<uint16_t*>(nullptr), 10,
                                                              1, offsets, offsets, Order::Ascending, 9, 8);
            }));
  EXPECT_EQ("prims: radix_partition: bit range [0, 9) is not a digit of at most 8 bits inside a 32-bit key\n",
            rejection([&] {
              return prims::device::radix_partition_keys(nullptr, bytes, keys, keys, 10, nullptr, 0, 9);
            }));
}

TEST(DebugLog, NOverAnAlgorithmsLimit) {
  uint32_t* keys = nullptr;
  size_t bytes = 0;
  const size_t limit = prims::device::kOneBlockMaxItems<uint32_t>;
  EXPECT_EQ("prims: RadixSortAlgorithm::OneBlock: n = " + std::to_string(limit + 1) + " is over its limit of " +
                std::to_string(limit) + " items\n",
            rejection([&] {
              return prims::device::radix_sort_keys<RadixSortAlgorithm::OneBlock>(nullptr, bytes, keys, keys,
                                                                                  limit + 1);
            }));
}

TEST(DebugLog, TemporaryStorageTooSmall) {
  alignas(256) static unsigned char storage[512];
  void* parts[2];
  size_t bytes = 100;
  EXPECT_EQ("prims: temporary storage too small: 100 bytes given, 768 needed\n",
            rejection([&] { return prims::detail::carve_temp(storage, bytes, {size_t{200}, size_t{300}}, parts); }));
}

TEST(DebugLog, MissingBucketOffsets) {
  alignas(256) static unsigned char storage[1 << 16];
  uint32_t* keys = nullptr;
  size_t bytes = sizeof(storage);
  EXPECT_EQ("prims: radix_partition: bucket_offsets is null\n", rejection([&] {
              return prims::device::radix_partition_keys(storage, bytes, keys, keys, 10, nullptr, 24, 32);
            }));
}

}  // namespace
