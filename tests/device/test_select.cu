// prims::device::select_if, select_flagged, unique, unique_by_key and partition_if against CPU references: every
// size edge (tiles of both policies, look-back windows of 32 tiles), selection ratios 0, 1%, 50%, 99% and 100%,
// runs of length 1, long runs and one run of everything, 1- to 16-byte items (and items with a constructor), flags
// of bytes, bools and types wider than the items, iterator inputs (thrust counting and transform iterators), in
// place, a custom equality, float keys with -0.0/+0.0 and NaN, and 2^28 items. Outputs are poisoned first:
// nothing past the count (past n for partition_if) may be written.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/select.cuh"

namespace {

using prims::DeviceBuffer;

constexpr size_t kGuard = 7;  // poisoned items past the selected ones that must stay poisoned

template <class T>
size_t tile_items() {
  return prims::detail::scan::SelectTile<prims::detail::TuningSm90::Select<T>, T>::tile_items;
}

/// The tile of the small inputs' policy (up to Select::small_max_bytes of items).
template <class T>
size_t small_tile_items() {
  return prims::detail::scan::SelectTile<prims::detail::TuningSm90::SelectSmall<T>, T>::tile_items;
}

template <class T>
std::vector<size_t> select_sizes() {
  std::vector<size_t> sizes = prims::test::edge_sizes(tile_items<T>());
  for (const size_t n : prims::test::edge_sizes(small_tile_items<T>())) {
    if (n <= prims::detail::TuningSm90::Select<T>::small_max_bytes / sizeof(T)) sizes.push_back(n);
  }
  for (long delta : {-1, 0, 1}) {
    sizes.push_back(prims::detail::TuningSm90::Select<T>::small_max_bytes / sizeof(T) + delta);
  }
  for (size_t tiles : {size_t{32}, size_t{33}, size_t{65}}) {
    for (long delta : {-1, 0, 1}) sizes.push_back(tiles * tile_items<T>() + delta);
  }
  sizes.push_back((size_t{1} << 20) + 7);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// A value of T from an integer (each byte a function of it, for wide types).
template <class T>
T make(uint64_t x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(x);
  } else {
    T value;
    unsigned char bytes[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<unsigned char>(x * 131 + i);
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }
}

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Runs `call(temp, bytes, d_out, d_count)` and checks the count and out[0, count) against `expected`, and that
/// every item after them (capacity + kGuard in all) is untouched. The output starts `out_offset` items into its
/// allocation (past a 16-byte boundary where that is not a whole number of vectors); the items before it must
/// stay untouched too.
template <class T, class Call>
void expect_selected(const std::vector<T>& expected, size_t capacity, Call call, const char* what,
                     size_t out_offset = 0) {
  DeviceBuffer<T> out(out_offset + capacity + kGuard);
  out.fill_bytes(0xAB);
  DeviceBuffer<size_t> count(1);
  count.fill_bytes(0xEE);
  prims::test::run_two_phase(
      [&](void* temp, size_t& bytes) { return call(temp, bytes, out.data() + out_offset, count.data()); });
  const size_t got_count = count.download(1)[0];
  ASSERT_EQ(got_count, expected.size()) << what;
  const std::vector<T> all = out.download(out_offset + capacity + kGuard);
  unsigned char poison[sizeof(T)];
  std::memset(poison, 0xAB, sizeof(T));
  for (size_t i = 0; i < out_offset; ++i) {
    ASSERT_EQ(std::memcmp(&all[i], poison, sizeof(T)), 0) << what << ": item " << i << " before the output was written";
  }
  const T* got = all.data() + out_offset;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(same_bytes(got[i], expected[i])) << what << ": item " << i << " of " << expected.size();
  }
  for (size_t i = expected.size(); i < capacity + kGuard; ++i) {
    ASSERT_EQ(std::memcmp(&got[i], poison, sizeof(T)), 0) << what << ": item " << i << " past the selected ones was written";
  }
}

struct Below {
  uint64_t threshold;  // keeps items whose mixed bits fall below it
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    uint64_t bits = 0;
    memcpy(&bits, &x, sizeof(T) < 8 ? sizeof(T) : 8);
    bits ^= bits >> 29;
    bits *= 0xBF58476D1CE4E5B9ull;
    bits ^= bits >> 32;
    return (bits % 1000) < threshold;
  }
};

template <class T>
void check_select_if(size_t n, uint64_t per_mille, uint64_t seed, size_t out_offset = 0) {
  std::vector<T> input(n);
  std::mt19937_64 rng(seed);
  for (auto& x : input) x = make<T>(rng());
  const Below pred{per_mille};
  std::vector<T> expected;
  for (const T& x : input) {
    if (pred(x)) expected.push_back(x);
  }
  DeviceBuffer<T> in(n);
  in.upload(input.data(), n);
  expect_selected<T>(expected, n, [&](void* temp, size_t& bytes, T* out, size_t* count) {
    return prims::device::select_if(temp, bytes, in.data(), out, count, n, pred);
  }, "select_if", out_offset);
}

template <class T>
class Select : public ::testing::Test {};
struct Wide16 {
  uint64_t a, b;
};
struct Three {
  unsigned char c[3];
};
using ItemTypes = ::testing::Types<uint8_t, int16_t, int32_t, float, uint64_t, double, Three, Wide16>;
TYPED_TEST_SUITE(Select, ItemTypes);

TYPED_TEST(Select, IfEverySizeAndRatio) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : select_sizes<TypeParam>()) {
    for (const uint64_t per_mille : {0, 10, 500, 990, 1000}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", kept per mille " << per_mille);
      check_select_if<TypeParam>(n, per_mille, n * 7 + per_mille);
    }
  }
}

/// partition_if: the kept items in order, then the others in order, every one of the n places written, nothing
/// after them.
/// The input starts `offset` items into its allocation (past a 16-byte boundary for offsets that are not whole
/// vectors: the count then reads the first items one at a time), the output `out_offset` items into its own.
template <class T>
void check_partition_if(size_t n, uint64_t per_mille, uint64_t seed, size_t offset = 0, size_t out_offset = 0) {
  std::vector<T> input(n);
  std::mt19937_64 rng(seed);
  for (auto& x : input) x = make<T>(rng());
  const Below pred{per_mille};
  std::vector<T> expected, others;
  for (const T& x : input) (pred(x) ? expected : others).push_back(x);
  const size_t kept = expected.size();
  expected.insert(expected.end(), others.begin(), others.end());
  DeviceBuffer<T> in(n + offset), out(out_offset + n + kGuard);
  DeviceBuffer<size_t> count(1);
  if (n > 0) {
    ASSERT_EQ(cudaSuccess, cudaMemcpy(in.data() + offset, input.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  out.fill_bytes(0xAB);
  count.fill_bytes(0xEE);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::partition_if(temp, bytes, in.data() + offset, out.data() + out_offset, count.data(), n,
                                       pred);
  });
  ASSERT_EQ(count.download(1)[0], kept);
  const std::vector<T> all = out.download(out_offset + n + kGuard);
  unsigned char poison[sizeof(T)];
  std::memset(poison, 0xAB, sizeof(T));
  for (size_t i = 0; i < out_offset; ++i) ASSERT_EQ(std::memcmp(&all[i], poison, sizeof(T)), 0) << "item " << i;
  const T* got = all.data() + out_offset;
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bytes(got[i], expected[i])) << "item " << i << " of " << n;
  for (size_t i = n; i < n + kGuard; ++i) ASSERT_EQ(std::memcmp(&got[i], poison, sizeof(T)), 0) << "item " << i;
}

TYPED_TEST(Select, PartitionEverySizeAndRatio) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : select_sizes<TypeParam>()) {
    for (const uint64_t per_mille : {0, 10, 500, 990, 1000}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", kept per mille " << per_mille);
      check_partition_if<TypeParam>(n, per_mille, n * 11 + per_mille);
    }
  }
}

/// The count before partition_if's pass: every edge of its chunks (a load a thread of 16-byte vectors or of
/// items), more chunks than its grid has blocks (the few blocks of small inputs and the full grid), and inputs not
/// at a vector boundary.
TYPED_TEST(Select, PartitionCountChunksAndMisalignedInputs) {
  PRIMS_REQUIRE_GPU();
  using Policy = prims::detail::TuningSm90::Select<TypeParam>;
  const size_t chunk = static_cast<size_t>(Policy::block_threads) * Policy::count_loads_per_thread *
                       prims::detail::kVectorItems<TypeParam>;
  int multiprocessors = 0;
  ASSERT_EQ(cudaSuccess, cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0));
  const size_t grid_chunks = static_cast<size_t>(multiprocessors) * Policy::count_blocks_per_sm;
  const size_t few_blocks_items = Policy::count_few_blocks_max_bytes / sizeof(TypeParam);
  for (const size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {
    for (const size_t n : {size_t{1}, size_t{17}, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, few_blocks_items,
                           few_blocks_items + 1}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", offset " << offset);
      check_partition_if<TypeParam>(n, 500, n * 13 + offset, offset);
      check_partition_if<TypeParam>(n, 10, n * 17 + offset, offset);
    }
  }
  const size_t full_grid_items = (grid_chunks + 1) * chunk + 9;
  SCOPED_TRACE(::testing::Message() << "n = " << full_grid_items << ", offset 1");
  check_partition_if<TypeParam>(full_grid_items, 500, 29, 1);
}

TYPED_TEST(Select, FlaggedEverySize) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  for (const size_t n : select_sizes<T>()) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    std::vector<T> input(n);
    std::vector<unsigned char> flags(n);
    std::mt19937_64 rng(n + 11);
    std::vector<T> expected;
    for (size_t i = 0; i < n; ++i) {
      input[i] = make<T>(i);
      flags[i] = static_cast<unsigned char>(rng() % 3 == 0 ? 1 + rng() % 200 : 0);  // any nonzero value keeps
      if (flags[i] != 0) expected.push_back(input[i]);
    }
    DeviceBuffer<T> in(n);
    DeviceBuffer<unsigned char> d_flags(n);
    in.upload(input.data(), n);
    d_flags.upload(flags.data(), n);
    expect_selected<T>(expected, n, [&](void* temp, size_t& bytes, T* out, size_t* count) {
      return prims::device::select_flagged(temp, bytes, in.data(), d_flags.data(), out, count, n);
    }, "select_flagged");
  }
}

/// Runs of lengths drawn up to max_run (1: all distinct), as unique's input.
template <class T>
std::vector<T> runs(size_t n, size_t max_run, uint64_t seed) {
  std::vector<T> input(n);
  std::mt19937_64 rng(seed);
  uint64_t value = 0;
  for (size_t i = 0; i < n;) {
    const size_t length = 1 + rng() % max_run;
    ++value;
    for (size_t k = 0; k < length && i < n; ++k, ++i) input[i] = make<T>(value);
  }
  return input;
}

template <class T>
std::vector<T> unique_reference(const std::vector<T>& input) {
  std::vector<T> expected;
  for (size_t i = 0; i < input.size(); ++i) {
    if (i == 0 || !same_bytes(input[i], input[i - 1])) expected.push_back(input[i]);
  }
  return expected;
}

struct BytesEqual {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    const unsigned char* x = reinterpret_cast<const unsigned char*>(&a);
    const unsigned char* y = reinterpret_cast<const unsigned char*>(&b);
    for (size_t i = 0; i < sizeof(T); ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
};

TYPED_TEST(Select, UniqueRunsOfEveryLength) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  for (const size_t n : select_sizes<T>()) {
    for (const size_t max_run : {size_t{1}, size_t{4}, size_t{3000}, n + 1}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", runs up to " << max_run);
      const std::vector<T> input = runs<T>(n, max_run, n + max_run);
      DeviceBuffer<T> in(n);
      in.upload(input.data(), n);
      expect_selected<T>(unique_reference(input), n, [&](void* temp, size_t& bytes, T* out, size_t* count) {
        return prims::device::unique(temp, bytes, in.data(), out, count, n, BytesEqual{});
      }, "unique");
    }
  }
}

TEST(Select, UniqueDefaultEqualityOnFloats) {
  PRIMS_REQUIRE_GPU();
  // operator==: -0.0 equals +0.0 (one run), NaN equals nothing (every NaN its own run).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> input = {1.0f, 1.0f, -0.0f, 0.0f, 0.0f, nan, nan, 2.0f, 2.0f, -0.0f};
  const std::vector<float> expected = {1.0f, -0.0f, nan, nan, 2.0f, -0.0f};
  DeviceBuffer<float> in(input.size());
  in.upload(input.data(), input.size());
  expect_selected<float>(expected, input.size(), [&](void* temp, size_t& bytes, float* out, size_t* count) {
    return prims::device::unique(temp, bytes, in.data(), out, count, input.size());
  }, "unique on floats");
}

struct Odd {
  __host__ __device__ bool operator()(uint32_t x) const { return (x & 1u) != 0; }
};
struct Nonzero {
  __host__ __device__ bool operator()(uint32_t x) const { return x != 0; }
};
/// 1 where kept[i] is not the i-th odd number.
struct Misplaced {
  const uint32_t* kept;
  __host__ __device__ uint32_t operator()(uint32_t i) const { return kept[i] != 2 * i + 1 ? 1u : 0u; }
};
struct EveryThird {
  __host__ __device__ int operator()(int i) const { return i % 3 == 0 ? 1 : 0; }
};
struct Fifth {
  __host__ __device__ int operator()(int i) const { return i / 5; }
};

/// unique_by_key: the first key of every run and its value (the head's position, so a wrong choice of value
/// shows), values of 4 and of 8 bytes; the values past the kept ones stay poisoned.
template <class T, class V>
void check_unique_by_key(const std::vector<T>& input, size_t out_offset = 0, size_t values_out_offset = 0) {
  const size_t n = input.size();
  std::vector<V> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<V>(i * 3 + 1);
  std::vector<V> expected_values;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || !same_bytes(input[i], input[i - 1])) expected_values.push_back(values[i]);
  }
  DeviceBuffer<T> in(n);
  DeviceBuffer<V> d_values(n), d_values_out(values_out_offset + n + kGuard);
  in.upload(input.data(), n);
  d_values.upload(values.data(), n);
  d_values_out.fill_bytes(0xAB);
  expect_selected<T>(unique_reference(input), n, [&](void* temp, size_t& bytes, T* out, size_t* count) {
    return prims::device::unique_by_key(temp, bytes, in.data(), d_values.data(), out,
                                        d_values_out.data() + values_out_offset, count, n, BytesEqual{});
  }, "unique_by_key", out_offset);
  const std::vector<V> all = d_values_out.download(values_out_offset + n + kGuard);
  unsigned char poison[sizeof(V)];
  std::memset(poison, 0xAB, sizeof(V));
  for (size_t i = 0; i < values_out_offset; ++i) {
    ASSERT_EQ(std::memcmp(&all[i], poison, sizeof(V)), 0) << "value " << i << " before the output was written";
  }
  const V* got = all.data() + values_out_offset;
  for (size_t i = 0; i < expected_values.size(); ++i) ASSERT_EQ(got[i], expected_values[i]) << "value " << i;
  for (size_t i = expected_values.size(); i < n + kGuard; ++i) {
    ASSERT_EQ(std::memcmp(&got[i], poison, sizeof(V)), 0) << "value " << i << " past the kept ones was written";
  }
}

TYPED_TEST(Select, UniqueByKeyRunsOfEveryLength) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  for (const size_t n : select_sizes<T>()) {
    for (const size_t max_run : {size_t{1}, size_t{4}, size_t{3000}, n + 1}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", runs up to " << max_run);
      const std::vector<T> input = runs<T>(n, max_run, 3 * n + max_run);
      check_unique_by_key<T, uint32_t>(input);
      if (n % 5 == 0) check_unique_by_key<T, uint64_t>(input);
    }
  }
}

/// Outputs that start past a 16-byte boundary (keys and values of unique_by_key at different offsets), on both
/// policies' tiles: the kept items land where the output starts, and nothing before it is written.
TYPED_TEST(Select, OutputsPastAVectorBoundary) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  const size_t large = prims::detail::TuningSm90::Select<T>::small_max_bytes / sizeof(T) + 1;
  for (const size_t out_offset : {size_t{1}, size_t{2}, size_t{3}}) {
    for (const size_t n : {size_t{1}, size_t{6}, small_tile_items<T>() + 1, 3 * small_tile_items<T>() + 5,
                           large + 3 * tile_items<T>() + 7}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", output offset " << out_offset);
      check_select_if<T>(n, 500, n * 5 + out_offset, out_offset);
      check_select_if<T>(n, 990, n * 3 + out_offset, out_offset);
      check_partition_if<T>(n, 500, n * 7 + out_offset, 0, out_offset);
      check_partition_if<T>(n, 10, n * 9 + out_offset, 0, out_offset);
      const std::vector<T> input = runs<T>(n, 4, n + out_offset);
      check_unique_by_key<T, uint32_t>(input, out_offset, 3 - out_offset % 3);
    }
  }
}

/// unique_by_key on iterators: keys i / 5 (runs of 5), values i: the kept values are the multiples of 5.
TEST(Select, UniqueByKeyIteratorInputs) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 4 * tile_items<int>() + 9;
  const auto keys = thrust::make_transform_iterator(thrust::make_counting_iterator<int>(0), Fifth{});
  const auto values = thrust::make_counting_iterator<int64_t>(0);
  const size_t runs = (n + 4) / 5;
  DeviceBuffer<int> keys_out(runs);
  DeviceBuffer<int64_t> values_out(runs);
  DeviceBuffer<size_t> count(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::unique_by_key(temp, bytes, keys, values, keys_out.data(), values_out.data(), count.data(),
                                        n);
  });
  ASSERT_EQ(count.download(1)[0], runs);
  const std::vector<int> got_keys = keys_out.download(runs);
  const std::vector<int64_t> got_values = values_out.download(runs);
  for (size_t r = 0; r < runs; ++r) {
    ASSERT_EQ(got_keys[r], static_cast<int>(r));
    ASSERT_EQ(got_values[r], static_cast<int64_t>(5 * r));
  }
}

/// 2^28 four-byte items kept by half (a counting iterator's odd numbers): the count, and every kept item in its
/// place, checked on the GPU by a second selection that keeps the misplaced ones (and must keep none).
TEST(Select, LargeInputKeepsHalf) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 28;
  const auto in = thrust::make_counting_iterator<uint32_t>(0);
  const Odd odd;
  DeviceBuffer<uint32_t> out(n / 2 + kGuard);
  DeviceBuffer<size_t> count(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::select_if(temp, bytes, in, out.data(), count.data(), n, odd);
  });
  ASSERT_EQ(count.download(1)[0], n / 2);
  // Every kept item is 2i + 1 at position i: a third selection keeps the ones that are not, and must keep none.
  DeviceBuffer<size_t> wrong(1);
  const uint32_t* kept = out.data();
  const auto misplaced = thrust::make_transform_iterator(thrust::make_counting_iterator<uint32_t>(0), Misplaced{kept});
  DeviceBuffer<uint32_t> scratch(n / 2);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::select_if(temp, bytes, misplaced, scratch.data(), wrong.data(), n / 2, Nonzero{});
  });
  EXPECT_EQ(wrong.download(1)[0], 0u);
}

/// 1 where out[i] is not what partitioning 0, 1, ..., n - 1 by oddness puts there: the odd numbers, then the even.
struct MisplacedPartition {
  const uint32_t* out;
  uint32_t half;
  __host__ __device__ uint32_t operator()(uint32_t i) const {
    const uint32_t expected = i < half ? 2 * i + 1 : 2 * (i - half);
    return out[i] != expected ? 1u : 0u;
  }
};

/// 2^28 items of a counting iterator partitioned by oddness, checked on the GPU (a selection of the misplaced).
TEST(Select, LargePartitionOfCountingIterator) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 28;
  const auto in = thrust::make_counting_iterator<uint32_t>(0);
  DeviceBuffer<uint32_t> out(n);
  DeviceBuffer<size_t> count(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::partition_if(temp, bytes, in, out.data(), count.data(), n, Odd{});
  });
  ASSERT_EQ(count.download(1)[0], n / 2);
  const auto misplaced = thrust::make_transform_iterator(
      thrust::make_counting_iterator<uint32_t>(0), MisplacedPartition{out.data(), static_cast<uint32_t>(n / 2)});
  DeviceBuffer<uint32_t> scratch(n);
  DeviceBuffer<size_t> wrong(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::select_if(temp, bytes, misplaced, scratch.data(), wrong.data(), n, Nonzero{});
  });
  EXPECT_EQ(wrong.download(1)[0], 0u);
}

TEST(Select, IteratorInputs) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 3 * tile_items<int64_t>() + 5;
  // Counting input, transform flags (every third item).
  const auto in = thrust::make_counting_iterator<int64_t>(100);
  const auto flags = thrust::make_transform_iterator(thrust::make_counting_iterator<int>(0), EveryThird{});
  std::vector<int64_t> expected;
  for (size_t i = 0; i < n; i += 3) expected.push_back(100 + static_cast<int64_t>(i));
  expect_selected<int64_t>(expected, n, [&](void* temp, size_t& bytes, int64_t* out, size_t* count) {
    return prims::device::select_flagged(temp, bytes, in, flags, out, count, n);
  }, "select_flagged on iterators");
  // unique over a transform iterator: i / 5 gives runs of 5.
  const auto fifths = thrust::make_transform_iterator(thrust::make_counting_iterator<int>(0), Fifth{});
  std::vector<int> runs_expected;
  for (size_t i = 0; i < n; i += 5) runs_expected.push_back(static_cast<int>(i / 5));
  expect_selected<int>(runs_expected, n, [&](void* temp, size_t& bytes, int* out, size_t* count) {
    return prims::device::unique(temp, bytes, fifths, out, count, n);
  }, "unique on a transform iterator");
}

TEST(Select, InPlace) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : {size_t{1000003}, 65 * tile_items<int>() + 1}) {
    const std::vector<int> input = runs<int>(n, 4, n);
    DeviceBuffer<int> data(n);
    data.upload(input.data(), n);
    DeviceBuffer<size_t> count(1);
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return prims::device::unique(temp, bytes, data.data(), data.data(), count.data(), n);
    });
    const std::vector<int> expected = unique_reference(input);
    ASSERT_EQ(count.download(1)[0], expected.size());
    const std::vector<int> got = data.download(expected.size());
    EXPECT_EQ(got, expected) << "unique in place, n = " << n;

    data.upload(input.data(), n);
    const Below pred{500};
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return prims::device::select_if(temp, bytes, data.data(), data.data(), count.data(), n, pred);
    });
    std::vector<int> kept;
    for (int x : input) {
      if (pred(x)) kept.push_back(x);
    }
    ASSERT_EQ(count.download(1)[0], kept.size());
    EXPECT_EQ(data.download(kept.size()), kept) << "select_if in place, n = " << n;

    // select_flagged in place, on 8-byte items.
    std::vector<uint64_t> wide(n);
    std::vector<unsigned char> flags(n);
    std::vector<uint64_t> flagged;
    for (size_t i = 0; i < n; ++i) {
      wide[i] = i * 0x9E3779B97F4A7C15ull;
      flags[i] = static_cast<unsigned char>((wide[i] >> 61) == 3);
      if (flags[i] != 0) flagged.push_back(wide[i]);
    }
    DeviceBuffer<uint64_t> wide_data(n);
    DeviceBuffer<unsigned char> d_flags(n);
    wide_data.upload(wide.data(), n);
    d_flags.upload(flags.data(), n);
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return prims::device::select_flagged(temp, bytes, wide_data.data(), d_flags.data(), wide_data.data(),
                                           count.data(), n);
    });
    ASSERT_EQ(count.download(1)[0], flagged.size());
    EXPECT_EQ(wide_data.download(flagged.size()), flagged) << "select_flagged in place, n = " << n;
  }
}

/// Flags of other types: bools, and 8-byte flags wider than 4-byte items (read item by item, not as vectors).
TEST(Select, FlagTypes) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 7 * tile_items<int>() + 3;
  std::vector<int> input(n);
  std::vector<char> bools(n);
  std::vector<int64_t> wide(n);
  std::vector<int> expected;
  for (size_t i = 0; i < n; ++i) {
    input[i] = static_cast<int>(i * 3);
    bools[i] = static_cast<char>(i % 7 == 2);
    wide[i] = i % 7 == 2 ? int64_t{1} << 40 : 0;  // nonzero only in the high word
    if (i % 7 == 2) expected.push_back(input[i]);
  }
  DeviceBuffer<int> in(n);
  DeviceBuffer<bool> d_bools(n);
  DeviceBuffer<int64_t> d_wide(n);
  in.upload(input.data(), n);
  prims::check(cudaMemcpy(d_bools.data(), bools.data(), n, cudaMemcpyHostToDevice), "bool flags");
  d_wide.upload(wide.data(), n);
  expect_selected<int>(expected, n, [&](void* temp, size_t& bytes, int* out, size_t* count) {
    return prims::device::select_flagged(temp, bytes, in.data(), static_cast<const bool*>(d_bools.data()), out, count, n);
  }, "bool flags");
  expect_selected<int>(expected, n, [&](void* temp, size_t& bytes, int* out, size_t* count) {
    return prims::device::select_flagged(temp, bytes, in.data(), d_wide.data(), out, count, n);
  }, "8-byte flags of 4-byte items");
}

/// An item type with a constructor and default member initializers compiles and selects like any other.
struct Tagged {
  int value = 0;
  int tag = 7;  // no padding: the checks compare bytes
  Tagged() = default;
  __host__ __device__ Tagged(int v, int t) : value(v), tag(t) {}
  __host__ __device__ bool operator==(const Tagged& other) const { return value == other.value; }
};

TEST(Select, ItemsWithConstructors) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 3 * tile_items<Tagged>() + 11;
  std::vector<Tagged> input(n);
  std::vector<Tagged> expected;
  for (size_t i = 0; i < n; ++i) {
    input[i] = Tagged(static_cast<int>(i / 3), static_cast<int>(i % 3));
    if (i % 3 == 0) expected.push_back(input[i]);  // the first of each run of 3
  }
  DeviceBuffer<Tagged> in(n);
  in.upload(input.data(), n);
  expect_selected<Tagged>(expected, n, [&](void* temp, size_t& bytes, Tagged* out, size_t* count) {
    return prims::device::unique(temp, bytes, in.data(), out, count, n);
  }, "unique of items with constructors");
}

TEST(Select, NullCountIsInvalidValue) {
  PRIMS_REQUIRE_GPU();
  DeviceBuffer<int> in(10), out(10);
  size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::unique(nullptr, bytes, in.data(), out.data(), nullptr, 10));
  DeviceBuffer<unsigned char> temp(bytes);
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::unique(temp.data(), bytes, in.data(), out.data(), nullptr, 10));
}

}  // namespace
