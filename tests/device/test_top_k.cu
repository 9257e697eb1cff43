// prims::device::top_k_keys and top_k_pairs against the first k of a CPU stable sort (sort_reference.cuh): every
// key type, both orders, k = 0, 1, 2, n - 1, n, n + 1 and between, sizes around the splits' tiles, keys of every
// bit pattern, few distinct keys (ties across the k-th position), all keys equal, half of them equal, special
// floats (NaNs, -0.0/+0.0), keys crowded into one top digit (the candidates overflow their buffer and the later
// rounds read the input), pairs whose values carry their index, and 2^26 keys. Outputs are poisoned first: nothing
// past min(k, n) may be written.
// segmented_top_k_keys / _pairs the same way, segment by segment: rows of length 0, shorter than k, around the
// select's chunk (2048 keys of up to 4 bytes, 1024 of 8) and shared buffer (4096, 3072) and long (131072: the
// buffer is reduced mid-row), k sorted in the block (up to 256), kept in the shared buffer or in temporary storage,
// rows in sorted order (every key passes the threshold), gaps between rows and rows out of order, every key type,
// ties, special floats; a short row's slots past its length must stay untouched.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/top_k.cuh"
#include "sort_check.cuh"
#include "sort_reference.cuh"

namespace {

using prims::DeviceBuffer;
using prims::Order;

constexpr size_t kGuard = 5;

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& items, size_t count) {
  std::vector<unsigned char> bytes(count * sizeof(T));
  if (count > 0) std::memcpy(bytes.data(), items.data(), count * sizeof(T));
  return bytes;
}

/// Runs top_k_keys (and top_k_pairs with index-carrying values) on `keys` and checks both against the reference.
template <class K>
void check_top_k(const std::vector<K>& keys, size_t k, Order order, const char* what) {
  const size_t n = keys.size();
  const size_t out_count = std::min(k, n);
  const std::vector<size_t> permutation = prims::test::reference_sort_permutation(keys, order, 0, 8 * sizeof(K));
  std::vector<K> expected_keys(out_count);
  std::vector<uint32_t> expected_values(out_count);
  for (size_t i = 0; i < out_count; ++i) {
    expected_keys[i] = keys[permutation[i]];
    expected_values[i] = static_cast<uint32_t>(permutation[i]);
  }
  std::vector<uint32_t> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<uint32_t>(i);

  DeviceBuffer<K> d_keys(n);
  d_keys.upload(keys);
  DeviceBuffer<uint32_t> d_values(n);
  d_values.upload(values);
  const std::vector<K> poison_keys(out_count + kGuard, [] {
    K key;
    std::memset(&key, 0xAB, sizeof(K));
    return key;
  }());
  const std::vector<uint32_t> poison_values(out_count + kGuard, 0xABABABABu);
  for (const bool pairs : {false, true}) {
    SCOPED_TRACE(::testing::Message() << what << ": n = " << n << ", k = " << k
                                      << (order == Order::Descending ? ", descending" : ", ascending")
                                      << (pairs ? ", pairs" : ", keys"));
    DeviceBuffer<K> d_out(out_count + kGuard);
    d_out.fill_bytes(0xAB);
    DeviceBuffer<uint32_t> d_out_values(out_count + kGuard);
    d_out_values.fill_bytes(0xAB);
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return pairs ? prims::device::top_k_pairs(temp, bytes, d_keys.data(), d_out.data(), d_values.data(),
                                                d_out_values.data(), n, k, order)
                   : prims::device::top_k_keys(temp, bytes, d_keys.data(), d_out.data(), n, k, order);
    });
    std::vector<K> got = d_out.download(out_count + kGuard);
    std::vector<K> want = expected_keys;
    want.insert(want.end(), poison_keys.begin(), poison_keys.begin() + kGuard);
    ASSERT_EQ(bytes_of(got, got.size()), bytes_of(want, want.size())) << "keys differ (or a slot past k was written)";
    if (pairs) {
      std::vector<uint32_t> got_values = d_out_values.download(out_count + kGuard);
      std::vector<uint32_t> want_values = expected_values;
      want_values.insert(want_values.end(), poison_values.begin(), poison_values.begin() + kGuard);
      ASSERT_EQ(got_values, want_values) << "values differ (or a slot past k was written)";
    }
  }
}

template <class K>
K key_from_bits(uint64_t bits) {
  K key;
  const auto narrow = static_cast<typename prims::RadixKey<K>::Bits>(bits);
  std::memcpy(&key, &narrow, sizeof(K));
  return key;
}

/// k values worth trying for n keys: the edges and a few between.
std::vector<size_t> ks_for(size_t n) {
  std::vector<size_t> ks = {0, 1, 2, 50};
  if (n >= 1) ks.push_back(n - 1);
  ks.push_back(n);
  ks.push_back(n + 1);
  ks.push_back(n / 2);
  ks.push_back(n / 3 + 1);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

template <class K>
class TopKTyped : public ::testing::Test {};
TYPED_TEST_SUITE(TopKTyped, prims::test::RadixKeyTypes);

TYPED_TEST(TopKTyped, RandomBitsEverySizeAndK) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{37}, size_t{8191}, size_t{8192}, size_t{8193},
                   size_t{100003}}) {
    const std::vector<K> keys = prims::test::random_keys<K>(n, 17 + n);
    for (size_t k : ks_for(n)) {
      for (Order order : {Order::Descending, Order::Ascending}) check_top_k(keys, k, order, "random bits");
    }
  }
}

TYPED_TEST(TopKTyped, TiesAcrossTheKthKey) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const size_t n = 50001;
  std::mt19937_64 rng(5);
  // Few distinct keys: long runs of equal keys, so the k-th key is tied with many on both sides.
  std::vector<K> few(n);
  for (auto& key : few) key = static_cast<K>(rng() % 7);
  // All equal, and half equal (the other half random bits).
  const std::vector<K> equal(n, static_cast<K>(3));
  std::vector<K> half = prims::test::random_keys<K>(n, 9);
  for (size_t i = 0; i < n; i += 2) half[i] = static_cast<K>(5);
  for (Order order : {Order::Descending, Order::Ascending}) {
    for (size_t k : {size_t{1}, size_t{1000}, n / 2, n - 1}) {
      check_top_k(few, k, order, "seven distinct keys");
      check_top_k(equal, k, order, "all keys equal");
      check_top_k(half, k, order, "half the keys equal");
    }
  }
}

TYPED_TEST(TopKTyped, CrowdedTopDigit) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  if (sizeof(K) == 1) GTEST_SKIP() << "one digit: no later rounds";
  // Every key's top byte alike: all keys are candidates, more than their buffer holds.
  const size_t n = 300007;
  std::mt19937_64 rng(11);
  std::vector<K> keys(n);
  for (auto& key : keys) key = key_from_bits<K>(rng() & ((uint64_t{1} << (8 * sizeof(K) - 8)) - 1));
  for (Order order : {Order::Descending, Order::Ascending}) {
    for (size_t k : {size_t{1}, size_t{777}, n / 2}) check_top_k(keys, k, order, "crowded top digit");
  }
}

template <class F>
class TopKFloat : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TopKFloat, FloatTypes);

TYPED_TEST(TopKFloat, SpecialValues) {
  PRIMS_REQUIRE_GPU();
  using F = TypeParam;
  const std::vector<F> specials = prims::test::special_floats<F>();
  std::mt19937_64 rng(3);
  std::vector<F> keys(40000);
  for (auto& key : keys) key = rng() % 3 == 0 ? specials[rng() % specials.size()] : static_cast<F>(rng() % 1000) - F(500);
  for (Order order : {Order::Descending, Order::Ascending}) {
    for (size_t k : {size_t{1}, size_t{5}, size_t{3000}, size_t{20000}, size_t{39999}}) {
      check_top_k(keys, k, order, "special floats");
    }
  }
}

TEST(TopK, LargeInput) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 26;
  const std::vector<float> keys = prims::test::random_values<float>(n, 21);
  for (size_t k : {size_t{100}, size_t{1} << 16}) check_top_k(keys, k, Order::Descending, "2^26 floats");
  const std::vector<uint32_t> words = prims::test::random_keys<uint32_t>(n, 23);
  check_top_k(words, size_t{1} << 20, Order::Ascending, "2^26 u32");
}

/// Runs segmented_top_k_keys and _pairs (values: each item's index in its row) on rows [begins[i], ends[i]) of
/// `keys` and checks every row's k slots against the reference: its first min(k, length) keys of the stable sort,
/// then the poison.
template <class K>
void check_segmented_top_k(const std::vector<K>& keys, const std::vector<uint32_t>& begins,
                           const std::vector<uint32_t>& ends, size_t k, Order order, const char* what) {
  const size_t rows = begins.size();
  const K poison_key = [] {
    K key;
    std::memset(&key, 0xAB, sizeof(K));
    return key;
  }();
  std::vector<K> expected_keys(rows * k, poison_key);
  std::vector<uint32_t> expected_values(rows * k, 0xABABABABu);
  std::vector<uint32_t> values(keys.size());
  for (size_t r = 0; r < rows; ++r) {
    const std::vector<K> row(keys.begin() + begins[r], keys.begin() + ends[r]);
    for (size_t i = 0; i < row.size(); ++i) values[begins[r] + i] = static_cast<uint32_t>(i);
    const std::vector<size_t> permutation = prims::test::reference_sort_permutation(row, order, 0, 8 * sizeof(K));
    for (size_t i = 0; i < std::min(k, row.size()); ++i) {
      expected_keys[r * k + i] = row[permutation[i]];
      expected_values[r * k + i] = static_cast<uint32_t>(permutation[i]);
    }
  }
  DeviceBuffer<K> d_keys(keys.size());
  d_keys.upload(keys);
  DeviceBuffer<uint32_t> d_values(keys.size());
  d_values.upload(values);
  DeviceBuffer<uint32_t> d_begins(rows), d_ends(rows);
  d_begins.upload(begins);
  d_ends.upload(ends);
  for (const bool pairs : {false, true}) {
    SCOPED_TRACE(::testing::Message() << what << ": " << rows << " rows, k = " << k
                                      << (order == Order::Descending ? ", descending" : ", ascending")
                                      << (pairs ? ", pairs" : ", keys"));
    DeviceBuffer<K> d_out(rows * k + kGuard);
    d_out.fill_bytes(0xAB);
    DeviceBuffer<uint32_t> d_out_values(rows * k + kGuard);
    d_out_values.fill_bytes(0xAB);
    prims::test::run_two_phase([&](void* temp, size_t& bytes) {
      return pairs ? prims::device::segmented_top_k_pairs(temp, bytes, d_keys.data(), d_out.data(), d_values.data(),
                                                          d_out_values.data(), rows, d_begins.data(), d_ends.data(),
                                                          k, order)
                   : prims::device::segmented_top_k_keys(temp, bytes, d_keys.data(), d_out.data(), rows,
                                                         d_begins.data(), d_ends.data(), k, order);
    });
    std::vector<K> want = expected_keys;
    want.insert(want.end(), kGuard, poison_key);
    const std::vector<K> got = d_out.download(rows * k + kGuard);
    for (size_t r = 0; r <= rows; ++r) {
      const size_t from = r * k;
      const size_t count = r < rows ? k : kGuard;
      const std::vector<K> got_row(got.begin() + from, got.begin() + from + count);
      const std::vector<K> want_row(want.begin() + from, want.begin() + from + count);
      ASSERT_EQ(bytes_of(got_row, count), bytes_of(want_row, count))
          << (r < rows ? "row " + std::to_string(r) + " (length " + std::to_string(ends[r] - begins[r]) + ")"
                       : std::string("past the last row"));
    }
    if (pairs) {
      std::vector<uint32_t> want_values = expected_values;
      want_values.insert(want_values.end(), kGuard, 0xABABABABu);
      ASSERT_EQ(d_out_values.download(rows * k + kGuard), want_values) << "values differ";
    }
  }
}

/// Rows of the given lengths laid out with a gap of `gap` keys before each, listed in reverse order when `reversed`.
struct Rows {
  std::vector<uint32_t> begins;
  std::vector<uint32_t> ends;
  size_t total = 0;
};
Rows rows_of(const std::vector<size_t>& lengths, size_t gap, bool reversed) {
  Rows rows;
  for (size_t length : lengths) {
    rows.total += gap;
    rows.begins.push_back(static_cast<uint32_t>(rows.total));
    rows.total += length;
    rows.ends.push_back(static_cast<uint32_t>(rows.total));
  }
  if (reversed) {
    std::reverse(rows.begins.begin(), rows.begins.end());
    std::reverse(rows.ends.begin(), rows.ends.end());
  }
  return rows;
}

template <class K>
class SegmentedTopKTyped : public ::testing::Test {};
TYPED_TEST_SUITE(SegmentedTopKTyped, prims::test::RadixKeyTypes);

TYPED_TEST(SegmentedTopKTyped, RowsOfEveryLength) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const std::vector<size_t> lengths = {0,    1,    49,   50,   51,   64,   300,  1023,  1024,
                                       1025, 2047, 2048, 2049, 4095, 4096, 4097, 9000, 131072};
  for (const bool reversed : {false, true}) {
    const Rows rows = rows_of(lengths, reversed ? 3 : 0, reversed);
    const std::vector<K> keys = prims::test::random_keys<K>(rows.total, 31 + rows.total);
    // k up to a block's threads is sorted in the block, up to the shared buffer less a chunk kept in it, and
    // larger k kept in temporary storage.
    for (size_t k : {size_t{1}, size_t{50}, size_t{64}, size_t{256}, size_t{257}, size_t{3000}}) {
      for (Order order : {Order::Descending, Order::Ascending}) {
        check_segmented_top_k(keys, rows.begins, rows.ends, k, order, "random bits");
      }
    }
  }
}

TYPED_TEST(SegmentedTopKTyped, EveryKeyBeatsTheOnesBefore) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  // Rows in sorted order, each key better than the ones before it (or equal): no threshold holds a key back, and
  // the buffer fills and is reduced again and again.
  const Rows rows = rows_of({131072, 9000, 4097}, 5, false);
  std::vector<K> keys = prims::test::random_keys<K>(rows.total, 17);
  for (size_t r = 0; r < rows.begins.size(); ++r) {
    std::vector<K> row(keys.begin() + rows.begins[r], keys.begin() + rows.ends[r]);
    const std::vector<size_t> ascending = prims::test::reference_sort_permutation(row, Order::Ascending, 0, 8 * sizeof(K));
    for (size_t i = 0; i < row.size(); ++i) keys[rows.begins[r] + i] = row[ascending[i]];
  }
  std::vector<K> reversed = keys;
  for (size_t r = 0; r < rows.begins.size(); ++r) {
    std::reverse(reversed.begin() + rows.begins[r], reversed.begin() + rows.ends[r]);
  }
  for (size_t k : {size_t{50}, size_t{700}, size_t{3000}}) {
    check_segmented_top_k(keys, rows.begins, rows.ends, k, Order::Descending, "ascending rows");
    check_segmented_top_k(reversed, rows.begins, rows.ends, k, Order::Ascending, "descending rows");
  }
}

TYPED_TEST(SegmentedTopKTyped, Ties) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const Rows rows = rows_of({5000, 700, 131072, 3, 4096}, 1, false);
  std::mt19937_64 rng(7);
  std::vector<K> few(rows.total);
  for (auto& key : few) key = static_cast<K>(rng() % 5);
  const std::vector<K> equal(rows.total, static_cast<K>(3));
  std::vector<K> half = prims::test::random_keys<K>(rows.total, 13);
  for (size_t i = 0; i < rows.total; i += 2) half[i] = static_cast<K>(5);
  for (Order order : {Order::Descending, Order::Ascending}) {
    for (size_t k : {size_t{1}, size_t{64}, size_t{699}, size_t{2500}}) {
      check_segmented_top_k(few, rows.begins, rows.ends, k, order, "five distinct keys");
      check_segmented_top_k(equal, rows.begins, rows.ends, k, order, "all keys equal");
      check_segmented_top_k(half, rows.begins, rows.ends, k, order, "half the keys equal");
    }
  }
}

TYPED_TEST(TopKFloat, SegmentedSpecialValuesAndUnitInterval) {
  PRIMS_REQUIRE_GPU();
  using F = TypeParam;
  const std::vector<F> specials = prims::test::special_floats<F>();
  const Rows rows = rows_of({40000, 4096, 17, 131072}, 0, false);
  std::mt19937_64 rng(5);
  std::vector<F> keys(rows.total);
  for (auto& key : keys) key = rng() % 3 == 0 ? specials[rng() % specials.size()] : static_cast<F>(rng() % 1000) - F(500);
  // Scores in [0, 1): their top digits crowd into a few exponents.
  std::vector<F> unit(rows.total);
  std::uniform_real_distribution<double> unit_interval(0.0, 1.0);
  for (auto& key : unit) key = static_cast<F>(unit_interval(rng));
  for (Order order : {Order::Descending, Order::Ascending}) {
    for (size_t k : {size_t{1}, size_t{50}, size_t{5000}}) {
      check_segmented_top_k(keys, rows.begins, rows.ends, k, order, "special floats");
      check_segmented_top_k(unit, rows.begins, rows.ends, k, order, "floats in [0, 1)");
    }
  }
}

TEST(SegmentedTopK, NoRowsAndKZero) {
  PRIMS_REQUIRE_GPU();
  const std::vector<uint32_t> keys = prims::test::random_keys<uint32_t>(1000, 3);
  check_segmented_top_k(keys, {0, 500}, {500, 1000}, 0, Order::Descending, "k = 0");
  check_segmented_top_k(keys, {}, {}, 10, Order::Descending, "no rows");
}

TEST(SegmentedTopK, ManyRows) {
  PRIMS_REQUIRE_GPU();
  // The benchmark's second shape, fewer rows.
  const std::vector<size_t> lengths(2000, 4096);
  const Rows rows = rows_of(lengths, 0, false);
  const std::vector<float> keys = prims::test::random_values<float>(rows.total, 41);
  check_segmented_top_k(keys, rows.begins, rows.ends, 64, Order::Descending, "2000 rows of 4096");
}

}  // namespace
