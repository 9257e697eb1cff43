// Host-only: the temporary-storage carving that every device algorithm's two-phase protocol goes through.
#include <gtest/gtest.h>

#include "prims/util/temp_storage.cuh"
#include "prims/util/vector_load.cuh"

namespace {

using prims::detail::carve_temp;
using prims::detail::kTempAlignment;

TEST(TempStorage, QueryReportsAlignedTotal) {
  size_t bytes = 0;
  void* parts[3];
  ASSERT_EQ(cudaSuccess, carve_temp(nullptr, bytes, {10, 0, 300}, parts));
  EXPECT_EQ(bytes, kTempAlignment + kTempAlignment + 2 * kTempAlignment);
  for (void* p : parts) EXPECT_EQ(p, nullptr);
}

TEST(TempStorage, CarvesAlignedNonOverlappingBuffers) {
  alignas(256) static unsigned char storage[4096];
  size_t bytes = sizeof(storage);
  void* parts[3];
  ASSERT_EQ(cudaSuccess, carve_temp(storage, bytes, {10, 257, 8}, parts));
  EXPECT_EQ(parts[0], storage);
  EXPECT_EQ(parts[1], storage + 256);
  EXPECT_EQ(parts[2], storage + 256 + 512);
}

TEST(TempStorage, RejectsTooSmallStorage) {
  alignas(256) static unsigned char storage[256];
  size_t bytes = sizeof(storage);
  void* parts[2];
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cudaErrorInvalidValue, carve_temp(storage, bytes, {100, 100}, parts));
  EXPECT_EQ("", ::testing::internal::GetCapturedStderr()) << "silent unless built with PRIMS_DEBUG_LOG";
}

TEST(VectorLoad, ItemsPerVector) {
  EXPECT_EQ(prims::detail::kVectorItems<int>, 4);
  EXPECT_EQ(prims::detail::kVectorItems<double>, 2);
  EXPECT_EQ(prims::detail::kVectorItems<char>, 16);
  struct Twelve { int a, b, c; };
  EXPECT_EQ(prims::detail::kVectorItems<Twelve>, 1);
}

TEST(VectorLoad, ElementsToAlignment) {
  alignas(16) int values[8] = {};
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(values), 0u);
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(values + 1), 3u);
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(values + 3), 1u);
  alignas(16) double doubles[4] = {};
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(doubles + 1), 1u);
  // A type aligned less than its size: 4 bytes past a 16-byte boundary, no whole number of elements reaches one.
  struct FloatPair {
    float x, y;
  };
  alignas(16) float floats[8] = {};
  const auto* pairs = reinterpret_cast<const FloatPair*>(floats + 1);
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(pairs), prims::detail::kNoVectorAlignment);
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(pairs + 1), prims::detail::kNoVectorAlignment);
  EXPECT_EQ(prims::detail::elements_to_vector_alignment(reinterpret_cast<const FloatPair*>(floats + 2)), 1u);
}

}  // namespace
