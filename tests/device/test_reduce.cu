// prims::device::reduce/sum/min/max against CPU references: every type, every size edge, unaligned inputs,
// both block algorithms, custom ops, and bitwise run-to-run reproducibility of float sums; iterator inputs
// (counting and transform iterators, of another value type than the output's).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <climits>
#include <cmath>
#include <numeric>

#include "gpu_test.cuh"
#include "late_stream.cuh"
#include "prims/device/reduce.cuh"

namespace {

using prims::block::ReduceAlgorithm;
using Tile = prims::detail::ReduceTile<prims::detail::TuningSm90::Reduce, int>;

/// Runs device::reduce on host[offset..offset+n) (offset shifts the device pointer off 16-byte alignment).
template <ReduceAlgorithm ALGORITHM, class T, class Op>
T device_reduce(const std::vector<T>& host, size_t offset, size_t n, Op op, T init) {
  prims::DeviceBuffer<T> in(std::max<size_t>(host.size(), 1)), out(1);
  if (!host.empty()) in.upload(host);
  out.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce<ALGORITHM>(temp, bytes, in.data() + offset, out.data(), n, op, init);
  });
  return out.download()[0];
}

template <class T>
double tolerance(const std::vector<T>& host, size_t offset, size_t n) {
  double sum_abs = 0;
  for (size_t i = offset; i < offset + n; ++i) sum_abs += std::fabs(static_cast<double>(host[i]));
  return (std::is_same_v<T, float> ? 2e-6 : 1e-14) * sum_abs + 1e-6;
}

template <class T, ReduceAlgorithm ALGORITHM>
void check_sum_sizes() {
  for (size_t n : prims::test::edge_sizes(Tile::tile_items)) {
    for (size_t offset : {0, 1, 3}) {
      const std::vector<T> host = prims::test::random_values<T>(n + offset, n * 7 + offset);
      const T init = T(5);
      const T got = device_reduce<ALGORITHM>(host, offset, n, prims::Sum{}, init);
      if constexpr (std::is_floating_point_v<T>) {
        double expected = static_cast<double>(init);
        for (size_t i = offset; i < offset + n; ++i) expected += static_cast<double>(host[i]);
        ASSERT_NEAR(got, expected, tolerance(host, offset, n)) << "n = " << n << ", offset = " << offset;
      } else {
        T expected = init;
        for (size_t i = offset; i < offset + n; ++i) expected = static_cast<T>(expected + host[i]);
        ASSERT_EQ(got, expected) << "n = " << n << ", offset = " << offset;
      }
    }
  }
}

template <class T>
class DeviceReduceTyped : public ::testing::Test {};
using ReduceTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(DeviceReduceTyped, ReduceTypes);

TYPED_TEST(DeviceReduceTyped, SumEverySizeEdgeWarpShuffle) {
  PRIMS_REQUIRE_GPU();
  check_sum_sizes<TypeParam, ReduceAlgorithm::WarpShuffle>();
}

TYPED_TEST(DeviceReduceTyped, SumEverySizeEdgeSmemTree) {
  PRIMS_REQUIRE_GPU();
  check_sum_sizes<TypeParam, ReduceAlgorithm::SmemTree>();
}

TYPED_TEST(DeviceReduceTyped, MinMaxFullRange) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  for (size_t n : {size_t{1}, size_t{1000}, size_t{Tile::tile_items * 3 + 17}, size_t{1} << 20}) {
    const std::vector<T> host = prims::test::random_values<T>(n, n, /*small=*/false);
    prims::DeviceBuffer<T> in(n), out(1);
    in.upload(host);
    out.fill_bytes(0xAB);
    prims::test::run_two_phase(
        [&](void* temp, size_t& bytes) { return prims::device::min(temp, bytes, in.data(), out.data(), n); });
    EXPECT_EQ(out.download()[0], *std::min_element(host.begin(), host.end())) << "min, n = " << n;
    out.fill_bytes(0xAB);
    prims::test::run_two_phase(
        [&](void* temp, size_t& bytes) { return prims::device::max(temp, bytes, in.data(), out.data(), n); });
    EXPECT_EQ(out.download()[0], *std::max_element(host.begin(), host.end())) << "max, n = " << n;
  }
}

TYPED_TEST(DeviceReduceTyped, EmptyInputWritesInit) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  prims::DeviceBuffer<T> in(1), out(1);
  out.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce(temp, bytes, in.data(), out.data(), 0, prims::Sum{}, T(42));
  });
  EXPECT_EQ(out.download()[0], T(42));
  out.fill_bytes(0xAB);
  prims::test::run_two_phase(
      [&](void* temp, size_t& bytes) { return prims::device::min(temp, bytes, in.data(), out.data(), 0); });
  EXPECT_EQ(out.download()[0], std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                   : std::numeric_limits<T>::max());
  out.fill_bytes(0xAB);
  prims::test::run_two_phase(
      [&](void* temp, size_t& bytes) { return prims::device::max(temp, bytes, in.data(), out.data(), 0); });
  EXPECT_EQ(out.download()[0], std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                   : std::numeric_limits<T>::lowest());
  out.fill_bytes(0xAB);
  prims::test::run_two_phase(
      [&](void* temp, size_t& bytes) { return prims::device::sum(temp, bytes, in.data(), out.data(), 0); });
  EXPECT_EQ(out.download()[0], T(0));
}

/// Both block algorithms on a non-blocking stream with work queued before and after them.
TEST(DeviceReduce, RunsOnItsStream) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{3} << 20) + 5;
  const std::vector<int64_t> host = prims::test::random_values<int64_t>(n, 9, /*small=*/false);
  int64_t expected = 11;
  for (int64_t x : host) expected = static_cast<int64_t>(static_cast<uint64_t>(expected) + static_cast<uint64_t>(x));
  auto check = [&](auto algorithm) {
    constexpr ReduceAlgorithm kAlgorithm = decltype(algorithm)::value;
    prims::DeviceBuffer<int64_t> in(n), out(1);
    auto call = [&](void* temp, size_t& bytes, cudaStream_t s) {
      return prims::device::reduce<kAlgorithm>(temp, bytes, in.data(), out.data(), n, prims::Sum{}, int64_t{11}, s);
    };
    auto temp = prims::test::temp_for(call);
    out.fill_bytes(0xAB);
    prims::test::LateStream late;
    late.upload_late(in.data(), host);
    late.run(temp, call);
    EXPECT_EQ(late.download(out.data(), 1)[0], expected);
  };
  check(std::integral_constant<ReduceAlgorithm, ReduceAlgorithm::WarpShuffle>{});
  check(std::integral_constant<ReduceAlgorithm, ReduceAlgorithm::SmemTree>{});
}

TEST(DeviceReduce, FloatSumIsBitwiseReproducible) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 22) + 12345;
  const std::vector<float> host = prims::test::random_values<float>(n, 99);
  prims::DeviceBuffer<float> in(n), out(1);
  in.upload(host);
  size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, bytes, in.data(), out.data(), n));
  prims::DeviceBuffer<unsigned char> temp(bytes);
  std::vector<float> results;
  for (int run = 0; run < 20; ++run) {
    ASSERT_EQ(cudaSuccess, prims::device::sum(temp.data(), bytes, in.data(), out.data(), n));
    results.push_back(out.download()[0]);
  }
  for (float r : results) EXPECT_EQ(std::memcmp(&r, &results[0], sizeof(float)), 0);
}

/// A custom op on a struct: the arg-max of values with the lowest index among ties (associative and commutative).
struct IndexedValue {
  float value;
  int index;
};
struct ArgMax {
  __host__ __device__ IndexedValue operator()(const IndexedValue& a, const IndexedValue& b) const {
    if (a.value != b.value) return a.value > b.value ? a : b;
    return a.index < b.index ? a : b;
  }
};

TEST(DeviceReduce, CustomStructOp) {
  PRIMS_REQUIRE_GPU();
  for (size_t n : {size_t{1}, size_t{777}, size_t{3} * Tile::tile_items + 5, size_t{1} << 21}) {
    const std::vector<float> values = prims::test::random_values<float>(n, n + 5);
    std::vector<IndexedValue> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = {values[i], static_cast<int>(i)};
    const IndexedValue got =
        device_reduce<ReduceAlgorithm::WarpShuffle>(host, 0, n, ArgMax{}, IndexedValue{-2.0f, -1});
    const auto best = std::max_element(values.begin(), values.end());
    EXPECT_EQ(got.index, best - values.begin()) << "n = " << n;
    EXPECT_EQ(got.value, *best);
  }
}

/// A type aligned less than its size (8 bytes, 4-byte aligned) at an address that is 4 mod 8: no element boundary
/// is 16-byte aligned, so the reduce must read it element by element.
struct FloatPair {
  float x, y;
};
struct AddPairs {
  __host__ __device__ FloatPair operator()(const FloatPair& a, const FloatPair& b) const {
    return {a.x + b.x, a.y + b.y};
  }
};

TEST(DeviceReduce, UnderAlignedStructAtOddAddress) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 100000;
  std::vector<float> floats(2 * n + 1);
  for (size_t i = 0; i < floats.size(); ++i) floats[i] = static_cast<float>(i % 7);
  prims::DeviceBuffer<float> in(floats.size());
  in.upload(floats);
  prims::DeviceBuffer<FloatPair> out(1);
  out.fill_bytes(0xAB);
  const auto* pairs = reinterpret_cast<const FloatPair*>(in.data() + 1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce(temp, bytes, pairs, out.data(), n, AddPairs{}, FloatPair{0.0f, 0.0f});
  });
  double x = 0, y = 0;
  for (size_t i = 0; i < n; ++i) {
    x += floats[1 + 2 * i];
    y += floats[2 + 2 * i];
  }
  const FloatPair got = out.download()[0];
  EXPECT_EQ(got.x, static_cast<float>(x));  // small integers: exact in float
  EXPECT_EQ(got.y, static_cast<float>(y));
}

/// The storage a query asks for covers a run with a differently aligned pointer.
TEST(DeviceReduce, TempSizeDoesNotDependOnAlignment) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 65 * Tile::tile_items + 2;  // 65 full tiles from an aligned start, 64 after a 3-element head
  prims::DeviceBuffer<int> in(n + 4), out(1);
  size_t aligned_bytes = 0, shifted_bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, aligned_bytes, in.data(), out.data(), n));
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, shifted_bytes, in.data() + 1, out.data(), n));
  EXPECT_EQ(aligned_bytes, shifted_bytes);
}

TEST(DeviceReduce, RejectsTooSmallTempStorage) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 20;
  prims::DeviceBuffer<int> in(n), out(1);
  size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, bytes, in.data(), out.data(), n));
  prims::DeviceBuffer<unsigned char> temp(bytes);
  size_t too_few = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::sum(temp.data(), too_few, in.data(), out.data(), n));
}

/// Large inputs: exact integer sums at 2^24 and 2^28 (values small enough not to overflow int64).
TEST(DeviceReduce, LargeInt64Sums) {
  PRIMS_REQUIRE_GPU();
  for (int log_n : {24, 28}) {
    const size_t n = size_t{1} << log_n;
    std::vector<int32_t> host = prims::test::random_values<int32_t>(n, log_n, /*small=*/false);
    std::vector<int64_t> wide(host.begin(), host.end());
    const int64_t expected = std::accumulate(wide.begin(), wide.end(), int64_t{0});
    EXPECT_EQ(device_reduce<ReduceAlgorithm::WarpShuffle>(wide, 0, n, prims::Sum{}, int64_t{0}), expected);
    const int32_t expected_wrapped = static_cast<int32_t>(
        std::accumulate(host.begin(), host.end(), uint32_t{0}, [](uint32_t a, int32_t b) { return a + uint32_t(b); }));
    std::vector<uint32_t> unsigned_host(host.begin(), host.end());
    EXPECT_EQ(static_cast<int32_t>(
                  device_reduce<ReduceAlgorithm::SmemTree>(unsigned_host, 0, n, prims::Sum{}, uint32_t{0})),
              expected_wrapped);
  }
}

/// x -> (x % 1000) - 500, as a transform iterator's functor.
struct Centered {
  __host__ __device__ long long operator()(int x) const { return static_cast<long long>(x % 1000) - 500; }
};

TEST(DeviceReduce, IteratorInputs) {
  PRIMS_REQUIRE_GPU();
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{(1 << 20) + 7}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto counting = thrust::make_counting_iterator<int>(0);
    const auto centered = thrust::make_transform_iterator(counting, Centered{});
    long long expected_sum = 0, expected_min = LLONG_MAX, expected_max = LLONG_MIN;
    for (size_t i = 0; i < n; ++i) {
      const long long x = Centered{}(static_cast<int>(i));
      expected_sum += x;
      expected_min = std::min(expected_min, x);
      expected_max = std::max(expected_max, x);
    }
    prims::DeviceBuffer<long long> out(1);
    auto result = [&](auto call) {
      out.fill_bytes(0xAB);
      prims::test::run_two_phase(call);
      return out.download()[0];
    };
    // The counting iterator's ints summed as long long (its value type is not the output's).
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::sum(t, b, counting, out.data(), n); }),
              static_cast<long long>(n) * (static_cast<long long>(n) - 1) / 2);
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::sum(t, b, centered, out.data(), n); }),
              expected_sum);
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::min(t, b, centered, out.data(), n); }),
              expected_min);
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::max(t, b, centered, out.data(), n); }),
              expected_max);
    EXPECT_EQ(result([&](void* t, size_t& b) {
                return prims::device::reduce(t, b, centered, out.data(), n, prims::Sum{}, 7LL);
              }),
              expected_sum + 7);
  }
}

TEST(DeviceReduce, NonConstPointerTakesThePointerPath) {
  PRIMS_REQUIRE_GPU();
  std::vector<int> host(5000);
  std::iota(host.begin(), host.end(), -2000);
  prims::DeviceBuffer<int> in(host.size()), out(1);
  in.upload(host);
  int* mutable_in = in.data();
  size_t pointer_bytes = 0, iterator_bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, pointer_bytes, static_cast<const int*>(mutable_in), out.data(),
                                            host.size()));
  ASSERT_EQ(cudaSuccess, prims::device::sum(nullptr, iterator_bytes, mutable_in, out.data(), host.size()));
  EXPECT_EQ(pointer_bytes, iterator_bytes) << "a non-const pointer is staged like an iterator";
  prims::test::run_two_phase([&](void* t, size_t& b) { return prims::device::sum(t, b, mutable_in, out.data(), host.size()); });
  EXPECT_EQ(out.download()[0], std::accumulate(host.begin(), host.end(), 0));
}

}  // namespace
