// prims::device::segmented_reduce against a CPU reference: empty segments, short ones (one warp each), long ones
// (one block each) and mixes, segments with gaps, overlapping and out of order, sums and maxima with an init that
// is not the op's identity, 4- and 8-byte integers and floats holding integers (exact in any order), iterator
// inputs, no segments, and 2^28 items as 2^20 segments of 256 and as 256 segments of 2^20.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/segmented_reduce.cuh"

namespace {

using prims::DeviceBuffer;

/// Runs segmented_reduce over device copies of `items`, `begins` and `ends` and compares with the CPU's folds.
template <class T, class Op>
void check(const std::vector<T>& items, const std::vector<int64_t>& begins, const std::vector<int64_t>& ends, Op op,
           T init) {
  const size_t segments = begins.size();
  std::vector<T> expected(segments);
  for (size_t s = 0; s < segments; ++s) {
    T acc = init;
    for (int64_t i = begins[s]; i < ends[s]; ++i) acc = op(acc, items[static_cast<size_t>(i)]);
    expected[s] = acc;
  }
  DeviceBuffer<T> d_items(std::max<size_t>(items.size(), 1));
  if (!items.empty()) d_items.upload(items.data(), items.size());
  DeviceBuffer<int64_t> d_begins(std::max<size_t>(segments, 1)), d_ends(std::max<size_t>(segments, 1));
  if (segments > 0) {
    d_begins.upload(begins.data(), segments);
    d_ends.upload(ends.data(), segments);
  }
  DeviceBuffer<T> d_out(segments + 1);
  d_out.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::segmented_reduce(temp, bytes, d_items.data(), d_out.data(), segments, d_begins.data(),
                                           d_ends.data(), op, init);
  });
  const std::vector<T> got = d_out.download(segments + 1);
  for (size_t s = 0; s < segments; ++s) {
    ASSERT_EQ(got[s], expected[s]) << "segment " << s << " [" << begins[s] << ", " << ends[s] << ")";
  }
  const T poison = got[segments];
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &poison, sizeof(T));
  EXPECT_EQ(bytes[0], 0xAB) << "written past the segments";
}

/// Back-to-back segments of random lengths in [0, max_length].
void contiguous(size_t segments, size_t max_length, uint64_t seed, std::vector<int64_t>& begins,
                std::vector<int64_t>& ends) {
  std::mt19937_64 rng(seed);
  begins.resize(segments);
  ends.resize(segments);
  int64_t at = 0;
  for (size_t s = 0; s < segments; ++s) {
    begins[s] = at;
    at += static_cast<int64_t>(max_length == 0 ? 0 : rng() % (max_length + 1));
    ends[s] = at;
  }
}

struct Max {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

template <class T>
class SegmentedReduce : public ::testing::Test {};
using ValueTypes = ::testing::Types<int32_t, int64_t, float, double>;
TYPED_TEST_SUITE(SegmentedReduce, ValueTypes);

TYPED_TEST(SegmentedReduce, ShortLongAndMixedSegments) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  struct Shape {
    size_t segments, max_length;
  };
  // A block a segment (many loads a thread where the segments fit the device at once, fewer beyond: up to about
  // 2600 segments on an H100) or a warp each, the long ones marked: empty only; short; around the warp limit
  // (1024); long; one segment; blocks of fewer loads; many around the warp limit; short only; mixed.
  for (const Shape shape : {Shape{1000, 0}, Shape{3000, 64}, Shape{300, 2000}, Shape{7, 300000}, Shape{1, 1000003},
                            Shape{1500, 5000}, Shape{9000, 3000}, Shape{70000, 64}, Shape{20000, 20000}}) {
    SCOPED_TRACE(::testing::Message() << shape.segments << " segments of up to " << shape.max_length);
    std::vector<int64_t> begins, ends;
    contiguous(shape.segments, shape.max_length, shape.segments + shape.max_length, begins, ends);
    const size_t n = static_cast<size_t>(ends.empty() ? 0 : ends.back());
    std::vector<T> items(n);
    std::mt19937 rng(static_cast<unsigned>(n));
    for (auto& x : items) x = static_cast<T>(static_cast<int>(rng() % 2001) - 1000);
    check(items, begins, ends, prims::Sum{}, static_cast<T>(7));
    check(items, begins, ends, Max{}, std::numeric_limits<T>::lowest());
  }
}

/// Segments with gaps, overlapping, out of order, and some with end before begin (empty): a block a segment (300
/// and 1500: many loads a thread and fewer) and a warp a segment (3000 and 20000).
TEST(SegmentedReduce, GapsOverlapsAndAnyOrder) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 500000;
  std::vector<int32_t> items(n);
  std::mt19937_64 rng(5);
  for (auto& x : items) x = static_cast<int32_t>(rng() % 100);
  for (const size_t segments : {size_t{300}, size_t{1500}, size_t{3000}, size_t{20000}}) {
    SCOPED_TRACE(::testing::Message() << segments << " segments");
    std::vector<int64_t> begins(segments), ends(segments);
    for (size_t s = 0; s < segments; ++s) {
      begins[s] = static_cast<int64_t>(rng() % n);
      const size_t length = s % 10 == 0 ? rng() % 50000 : rng() % 300;
      ends[s] = std::min<int64_t>(static_cast<int64_t>(n), begins[s] + static_cast<int64_t>(length));
      if (s % 17 == 0) std::swap(begins[s], ends[s]);  // end before begin: empty
    }
    check(items, begins, ends, prims::Sum{}, int32_t{0});
  }
}

TEST(SegmentedReduce, NoSegments) {
  PRIMS_REQUIRE_GPU();
  check(std::vector<int32_t>{1, 2, 3}, {}, {}, prims::Sum{}, int32_t{0});
}

struct Mod7 {
  __host__ __device__ int64_t operator()(int64_t i) const { return i % 7; }
};

/// 2^28 items of an iterator (i % 7), as 2^20 segments of 256 and as 256 segments of 2^20.
TEST(SegmentedReduce, LargeIteratorInput) {
  PRIMS_REQUIRE_GPU();
  const auto in = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), Mod7{});
  for (const size_t length : {size_t{256}, size_t{1} << 20}) {
    const size_t segments = (size_t{1} << 28) / length;
    SCOPED_TRACE(::testing::Message() << segments << " segments of " << length);
    std::vector<int64_t> offsets(segments + 1);
    for (size_t s = 0; s <= segments; ++s) offsets[s] = static_cast<int64_t>(s * length);
    DeviceBuffer<int64_t> d_offsets(segments + 1);
    d_offsets.upload(offsets.data(), segments + 1);
    DeviceBuffer<int64_t> d_out(segments);
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return prims::device::segmented_reduce(temp, bytes, in, d_out.data(), segments, d_offsets.data(),
                                             d_offsets.data() + 1, prims::Sum{}, int64_t{0});
    });
    const std::vector<int64_t> got = d_out.download(segments);
    for (size_t s = 0; s < segments; ++s) {
      int64_t sum = 0;
      for (size_t i = s * length; i < (s + 1) * length; ++i) sum += static_cast<int64_t>(i % 7);
      ASSERT_EQ(got[s], sum) << "segment " << s;
    }
  }
}

}  // namespace
