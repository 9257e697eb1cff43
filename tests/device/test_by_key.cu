// prims::device::reduce_by_key, inclusive_scan_by_key, exclusive_scan_by_key, run_length_encode and
// non_trivial_runs against CPU references: every size edge (tiles, look-back windows of 32 tiles), runs of length
// 1, of about 4 and about 1000 and one run of everything, several key and value types, an operator that is not
// commutative (affine maps composed), iterator inputs (thrust counting and transform iterators), scans in place, a
// custom equality, float keys with -0.0/+0.0 and NaN, 2^28 items and more than 2^32. Outputs are poisoned first:
// nothing past the runs may be written.
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
#include "prims/device/by_key.cuh"
#include "prims/device/run_length.cuh"

namespace {

using prims::DeviceBuffer;

constexpr size_t kGuard = 7;  // poisoned items past the runs that must stay poisoned

template <class K, class V>
size_t tile_items() {
  return prims::detail::scan::ByKeyTile<prims::detail::TuningSm90::ByKey<K, V>, K, V, unsigned>::tile_items;
}

/// The tile of small inputs (up to ByKey::small_max_bytes of keys and values).
template <class K, class V>
size_t small_tile_items() {
  using Small = prims::detail::scan::ByKeySmallTiles<prims::detail::TuningSm90::ByKey<K, V>>;
  return prims::detail::scan::ByKeyTile<Small, K, V, unsigned>::tile_items;
}

/// The most items that take the small tiles.
template <class K, class V>
size_t small_max_items() {
  return prims::detail::TuningSm90::ByKey<K, V>::small_max_bytes / (sizeof(K) + sizeof(V));
}

/// Both tiles' edges, look-back windows of 32 tiles of each, and either side of the switch between them.
template <class K, class V>
std::vector<size_t> by_key_sizes() {
  const size_t small_max = small_max_items<K, V>();
  std::vector<size_t> sizes;
  for (const size_t n : prims::test::edge_sizes(small_tile_items<K, V>())) sizes.push_back(n);
  for (size_t tiles : {size_t{32}, size_t{33}, size_t{65}}) {
    for (long delta : {-1, 0, 1}) {
      const size_t n = tiles * small_tile_items<K, V>() + delta;
      if (n <= small_max) sizes.push_back(n);
    }
  }
  const size_t tile = tile_items<K, V>();
  const size_t first_tiles = small_max / tile + 1;  // the first whole tiles past the switch
  for (long delta : {-1, 0, 1}) {
    sizes.push_back(small_max + delta);
    for (size_t tiles : {first_tiles, first_tiles + 1, first_tiles + 33}) sizes.push_back(tiles * tile + delta);
  }
  sizes.push_back((size_t{1} << 20) + 7);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// Keys in runs of random lengths from 1 to 2 * mean - 1 (mean 1: every key its own run; 0: one run of all).
template <class K>
std::vector<K> run_keys(size_t n, size_t mean, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  uint64_t key = rng() % 7;
  size_t left = mean == 0 ? n : 1 + rng() % (2 * mean - 1);
  for (size_t i = 0; i < n; ++i) {
    if (left == 0) {
      key += 1 + rng() % 3;  // a different key (keys wrap for narrow types, but never onto the previous one)
      left = 1 + rng() % (2 * mean - 1);
    }
    keys[i] = static_cast<K>(key);
    --left;
  }
  return keys;
}

/// Values whose sums are exact in any order (integers, also as floats): the device combines a run's values in
/// another grouping than the CPU's left-to-right fold.
template <class V>
std::vector<V> exact_values(size_t n, uint64_t seed) {
  if constexpr (std::is_floating_point_v<V>) {
    const std::vector<int> ints = prims::test::random_values<int>(n, seed);
    return std::vector<V>(ints.begin(), ints.end());
  } else {
    return prims::test::random_values<V>(n, seed);
  }
}

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
void expect_poisoned(const std::vector<T>& got, size_t from, const char* what) {
  unsigned char poison[sizeof(T)];
  std::memset(poison, 0xAB, sizeof(T));
  for (size_t i = from; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], poison, sizeof(T)), 0) << what << ": item " << i << " past the runs was written";
  }
}

/// The CPU reference of reduce_by_key: each run's first key and its values folded left to right.
template <class K, class V, class Op, class Eq>
void reduce_runs(const std::vector<K>& keys, const std::vector<V>& values, Op op, Eq eq, std::vector<K>& unique,
                 std::vector<V>& sums) {
  unique.clear();
  sums.clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i == 0 || !eq(keys[i - 1], keys[i])) {
      unique.push_back(keys[i]);
      sums.push_back(values[i]);
    } else {
      sums.back() = op(sums.back(), values[i]);
    }
  }
}

/// Runs reduce_by_key on device copies of keys and values and checks both outputs, the count and the poison.
template <class K, class V, class Op, class Eq = prims::Equal>
void check_reduce_by_key(const std::vector<K>& keys, const std::vector<V>& values, Op op, Eq eq = {},
                         const char* what = "reduce_by_key") {
  const size_t n = keys.size();
  std::vector<K> unique;
  std::vector<V> sums;
  reduce_runs(keys, values, op, eq, unique, sums);
  DeviceBuffer<K> d_keys(n);
  DeviceBuffer<V> d_values(n);
  d_keys.upload(keys.data(), n);
  d_values.upload(values.data(), n);
  DeviceBuffer<K> d_unique(n + kGuard);
  DeviceBuffer<V> d_sums(n + kGuard);
  DeviceBuffer<size_t> d_count(1);
  d_unique.fill_bytes(0xAB);
  d_sums.fill_bytes(0xAB);
  d_count.fill_bytes(0xEE);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce_by_key(temp, bytes, d_keys.data(), d_unique.data(), d_values.data(), d_sums.data(),
                                        d_count.data(), n, op, eq);
  });
  ASSERT_EQ(d_count.download(1)[0], unique.size()) << what;
  const std::vector<K> got_keys = d_unique.download(n + kGuard);
  const std::vector<V> got_sums = d_sums.download(n + kGuard);
  for (size_t i = 0; i < unique.size(); ++i) {
    ASSERT_TRUE(same_bytes(got_keys[i], unique[i])) << what << ": key of run " << i << " of " << unique.size();
    ASSERT_TRUE(same_bytes(got_sums[i], sums[i])) << what << ": reduction of run " << i << " of " << unique.size();
  }
  expect_poisoned(got_keys, unique.size(), what);
  expect_poisoned(got_sums, unique.size(), what);
}

/// Checks both scans by key (out of place and in place) against the CPU's left-to-right folds.
template <class K, class V, class Op, class Eq = prims::Equal>
void check_scans_by_key(const std::vector<K>& keys, const std::vector<V>& values, Op op, V init, Eq eq = {}) {
  const size_t n = keys.size();
  std::vector<V> inclusive(n), exclusive(n);
  for (size_t i = 0; i < n; ++i) {
    const bool head = i == 0 || !eq(keys[i - 1], keys[i]);
    inclusive[i] = head ? values[i] : op(inclusive[i - 1], values[i]);
    exclusive[i] = head ? init : op(exclusive[i - 1], values[i - 1]);
  }
  DeviceBuffer<K> d_keys(n);
  DeviceBuffer<V> d_values(n);
  DeviceBuffer<V> d_out(n + kGuard);
  d_keys.upload(keys.data(), n);
  for (const bool in_place : {false, true}) {
    for (const bool is_exclusive : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (is_exclusive ? "exclusive" : "inclusive")
                                        << (in_place ? ", in place" : ""));
      d_values.upload(values.data(), n);
      d_out.fill_bytes(0xAB);
      V* out = in_place ? d_values.data() : d_out.data();
      prims::test::run_two_phase([&](void* temp, size_t& bytes) {
        return is_exclusive ? prims::device::exclusive_scan_by_key(temp, bytes, d_keys.data(), d_values.data(), out,
                                                                   n, op, init, eq)
                            : prims::device::inclusive_scan_by_key(temp, bytes, d_keys.data(), d_values.data(), out,
                                                                   n, op, eq);
      });
      const std::vector<V>& expected = is_exclusive ? exclusive : inclusive;
      const std::vector<V> got = in_place ? d_values.download(n) : d_out.download(n + kGuard);
      for (size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bytes(got[i], expected[i])) << "item " << i << " of " << n;
      if (!in_place) expect_poisoned(got, n, "scan by key");
    }
  }
}

/// x -> m x + c on 32-bit words; composing them (first a, then b) is associative and not commutative.
struct Affine {
  uint32_t m, c;
};
struct ThenApply {
  __host__ __device__ Affine operator()(const Affine& a, const Affine& b) const {
    return {b.m * a.m, b.m * a.c + b.c};
  }
};

template <class KV>
class ByKey : public ::testing::Test {};
template <class K_, class V_>
struct KV {
  using K = K_;
  using V = V_;
};
using KeyValueTypes = ::testing::Types<KV<int32_t, int32_t>, KV<uint64_t, int32_t>, KV<int32_t, double>,
                                       KV<uint8_t, int64_t>, KV<int16_t, uint16_t>>;
TYPED_TEST_SUITE(ByKey, KeyValueTypes);

TYPED_TEST(ByKey, ReduceEverySizeAndRunLength) {
  PRIMS_REQUIRE_GPU();
  using K = typename TypeParam::K;
  using V = typename TypeParam::V;
  for (const size_t n : by_key_sizes<K, V>()) {
    for (const size_t mean : {size_t{1}, size_t{4}, size_t{1000}, size_t{0}}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", mean run " << mean);
      const std::vector<K> keys = run_keys<K>(n, mean, n * 5 + mean);
      const std::vector<V> values = exact_values<V>(n, n + mean);
      check_reduce_by_key(keys, values, prims::Sum{});
    }
  }
}

TYPED_TEST(ByKey, ScansEverySizeAndRunLength) {
  PRIMS_REQUIRE_GPU();
  using K = typename TypeParam::K;
  using V = typename TypeParam::V;
  for (const size_t n : by_key_sizes<K, V>()) {
    for (const size_t mean : {size_t{1}, size_t{4}, size_t{1000}, size_t{0}}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", mean run " << mean);
      const std::vector<K> keys = run_keys<K>(n, mean, n * 3 + mean);
      const std::vector<V> values = exact_values<V>(n, n + 2 * mean);
      check_scans_by_key(keys, values, prims::Sum{}, static_cast<V>(5));
    }
  }
}

/// Affine maps composed in order: a wrong order or a wrong restart changes the result.
TEST(ByKey, OperatorThatIsNotCommutative) {
  PRIMS_REQUIRE_GPU();
  using K = int32_t;
  const size_t tile = tile_items<K, Affine>();
  for (const size_t n : {size_t{1}, tile - 1, tile + 1, 40 * tile + 3}) {
    for (const size_t mean : {size_t{3}, size_t{5000}, size_t{0}}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", mean run " << mean);
      const std::vector<K> keys = run_keys<K>(n, mean, n + mean);
      std::vector<Affine> maps(n);
      std::mt19937 rng(static_cast<unsigned>(n));
      for (auto& map : maps) map = {static_cast<uint32_t>(rng() | 1u), static_cast<uint32_t>(rng())};
      check_reduce_by_key(keys, maps, ThenApply{});
      check_scans_by_key(keys, maps, ThenApply{}, Affine{1, 0});
    }
  }
}

/// Float keys under == (-0.0 equals +0.0, a NaN equals nothing) and under "same bits".
struct SameBits {
  __host__ __device__ bool operator()(float a, float b) const {
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
  }
};

TEST(ByKey, FloatKeysZerosAndNaNs) {
  PRIMS_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> pattern = {1.0f, 1.0f, -0.0f, 0.0f, 0.0f, -0.0f, nan, nan, 2.0f, nan, 3.0f, 3.0f};
  const size_t n = 3 * tile_items<float, int>() + 11;
  std::vector<float> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = pattern[(i / 97) % pattern.size()];
  const std::vector<int> values = prims::test::random_values<int>(n, 3);
  check_reduce_by_key(keys, values, prims::Sum{}, prims::Equal{}, "operator==");
  check_reduce_by_key(keys, values, prims::Sum{}, SameBits{}, "same bits");
  check_scans_by_key(keys, values, prims::Sum{}, 0, SameBits{});
}

TEST(ByKey, EmptyInputWritesZeroRuns) {
  PRIMS_REQUIRE_GPU();
  DeviceBuffer<int> keys(1), values(1), out_keys(1), out_values(1);
  DeviceBuffer<size_t> count(1);
  count.fill_bytes(0xEE);
  out_values.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce_by_key(temp, bytes, keys.data(), out_keys.data(), values.data(), out_values.data(),
                                        count.data(), 0, prims::Sum{});
  });
  EXPECT_EQ(count.download(1)[0], 0u);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::inclusive_scan_by_key(temp, bytes, keys.data(), values.data(), out_values.data(), 0,
                                                prims::Sum{});
  });
  const int poison = out_values.download(1)[0];
  unsigned char bytes[sizeof(int)];
  std::memcpy(bytes, &poison, sizeof(int));
  EXPECT_EQ(bytes[0], 0xAB) << "an empty scan wrote an item";
}

struct Quarter {
  __host__ __device__ int64_t operator()(int64_t i) const { return i / 4; }
};
struct Square {
  __host__ __device__ int64_t operator()(int64_t i) const { return i * i; }
};

/// Keys and values from iterators: keys i / 4 (runs of 4), values i * i.
TEST(ByKey, IteratorInputs) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 5 * tile_items<int64_t, int64_t>() + 3;
  const auto keys = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), Quarter{});
  const auto values = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), Square{});
  const size_t runs = (n + 3) / 4;
  DeviceBuffer<int64_t> unique(runs), sums(runs), scanned(n);
  DeviceBuffer<size_t> count(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce_by_key(temp, bytes, keys, unique.data(), values, sums.data(), count.data(), n,
                                        prims::Sum{});
  });
  ASSERT_EQ(count.download(1)[0], runs);
  const std::vector<int64_t> got_keys = unique.download(runs);
  const std::vector<int64_t> got_sums = sums.download(runs);
  for (size_t r = 0; r < runs; ++r) {
    int64_t sum = 0;
    for (size_t i = 4 * r; i < std::min(n, 4 * r + 4); ++i) sum += static_cast<int64_t>(i * i);
    ASSERT_EQ(got_keys[r], static_cast<int64_t>(r));
    ASSERT_EQ(got_sums[r], sum) << "run " << r;
  }
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::exclusive_scan_by_key(temp, bytes, keys, values, scanned.data(), n, prims::Sum{},
                                                int64_t{0});
  });
  const std::vector<int64_t> got = scanned.download(n);
  int64_t running = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i % 4 == 0) running = 0;
    ASSERT_EQ(got[i], running) << "item " << i;
    running += static_cast<int64_t>(i * i);
  }
}

/// run_length_encode: the runs' items and lengths, lengths as unsigned and as size_t, items of 1 and 4 bytes.
template <class T, class Length>
void check_run_length(const std::vector<T>& items) {
  const size_t n = items.size();
  std::vector<T> unique;
  std::vector<Length> lengths;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || items[i - 1] != items[i]) {
      unique.push_back(items[i]);
      lengths.push_back(0);
    }
    ++lengths.back();
  }
  DeviceBuffer<T> in(n), d_unique(n + kGuard);
  DeviceBuffer<Length> d_lengths(n + kGuard);
  DeviceBuffer<size_t> count(1);
  in.upload(items.data(), n);
  d_unique.fill_bytes(0xAB);
  d_lengths.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::run_length_encode(temp, bytes, in.data(), d_unique.data(), d_lengths.data(), count.data(),
                                            n);
  });
  ASSERT_EQ(count.download(1)[0], unique.size());
  const std::vector<T> got_items = d_unique.download(n + kGuard);
  const std::vector<Length> got_lengths = d_lengths.download(n + kGuard);
  for (size_t i = 0; i < unique.size(); ++i) {
    ASSERT_EQ(got_items[i], unique[i]) << "run " << i;
    ASSERT_EQ(got_lengths[i], lengths[i]) << "run " << i;
  }
  expect_poisoned(got_items, unique.size(), "run_length_encode items");
  expect_poisoned(got_lengths, unique.size(), "run_length_encode lengths");

  // non_trivial_runs: the runs longer than one, where each starts and its length.
  std::vector<size_t> offsets;
  std::vector<Length> long_lengths;
  for (size_t i = 0, start = 0; i < unique.size(); start += lengths[i], ++i) {
    if (lengths[i] > 1) {
      offsets.push_back(start);
      long_lengths.push_back(lengths[i]);
    }
  }
  DeviceBuffer<size_t> d_offsets(n + kGuard);
  d_offsets.fill_bytes(0xAB);
  d_lengths.fill_bytes(0xAB);
  count.fill_bytes(0xEE);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::non_trivial_runs(temp, bytes, in.data(), d_offsets.data(), d_lengths.data(), count.data(),
                                           n);
  });
  ASSERT_EQ(count.download(1)[0], offsets.size()) << "non_trivial_runs";
  const std::vector<size_t> got_offsets = d_offsets.download(n + kGuard);
  const std::vector<Length> got_long = d_lengths.download(n + kGuard);
  for (size_t i = 0; i < offsets.size(); ++i) {
    ASSERT_EQ(got_offsets[i], offsets[i]) << "non-trivial run " << i;
    ASSERT_EQ(got_long[i], long_lengths[i]) << "non-trivial run " << i;
  }
  expect_poisoned(got_offsets, offsets.size(), "non_trivial_runs offsets");
  expect_poisoned(got_long, offsets.size(), "non_trivial_runs lengths");
}

TEST(RunLength, EverySizeAndRunLength) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : by_key_sizes<int32_t, unsigned>()) {
    for (const size_t mean : {size_t{1}, size_t{4}, size_t{1000}, size_t{0}}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", mean run " << mean);
      check_run_length<int32_t, unsigned>(run_keys<int32_t>(n, mean, n + mean));
      check_run_length<uint8_t, size_t>(run_keys<uint8_t>(n, mean, 2 * n + mean));
    }
  }
}

struct Eighth {
  __host__ __device__ uint64_t operator()(uint64_t i) const { return i / 8; }
};

/// One run's mismatches: 1 for a wrong item, 1 for a wrong length (runs of 8, the last one shorter).
struct RunMismatch {
  const uint64_t* items;
  const uint32_t* lengths;
  size_t n;
  __host__ __device__ uint32_t operator()(uint64_t r) const {
    const uint32_t expected_length = 8 * (r + 1) <= n ? 8u : static_cast<uint32_t>(n - 8 * r);
    return (items[r] != r ? 1u : 0u) + (lengths[r] != expected_length ? 1u : 0u);
  }
};
struct Zero {
  __host__ __device__ uint32_t operator()(uint64_t) const { return 0; }
};

/// n items in runs of 8 (a transform iterator): every run's item and length, checked on the GPU by a second pass,
/// reduce_by_key of the mismatches under one key (their sum must be zero).
void check_runs_of_eight(size_t n) {
  const auto in = thrust::make_transform_iterator(thrust::make_counting_iterator<uint64_t>(0), Eighth{});
  const size_t runs = (n + 7) / 8;
  DeviceBuffer<uint64_t> items(runs);
  DeviceBuffer<uint32_t> lengths(runs);
  DeviceBuffer<size_t> count(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::run_length_encode(temp, bytes, in, items.data(), lengths.data(), count.data(), n);
  });
  ASSERT_EQ(count.download(1)[0], runs);
  const auto mismatches = thrust::make_transform_iterator(thrust::make_counting_iterator<uint64_t>(0),
                                                          RunMismatch{items.data(), lengths.data(), n});
  const auto zeros = thrust::make_transform_iterator(thrust::make_counting_iterator<uint64_t>(0), Zero{});
  DeviceBuffer<uint32_t> key(1), total(1);
  DeviceBuffer<size_t> one(1);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::reduce_by_key(temp, bytes, zeros, key.data(), mismatches, total.data(), one.data(), runs,
                                        prims::Sum{});
  });
  ASSERT_EQ(one.download(1)[0], 1u);
  EXPECT_EQ(total.download(1)[0], 0u) << "runs with a wrong item or length";
}

TEST(RunLength, LargeInputRunsOfEight) {
  PRIMS_REQUIRE_GPU();
  check_runs_of_eight((size_t{1} << 28) + 3);
}

/// More items than 32 bits count: the heads are counted in 64 bits.
TEST(RunLength, MoreItemsThan32BitsCount) {
  PRIMS_REQUIRE_GPU();
  check_runs_of_eight((size_t{1} << 32) + 5);
}

}  // namespace
