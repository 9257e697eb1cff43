// Host-only tests of the key order and the CPU sort against std::stable_sort with a numpy-order comparator.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu_sort.hpp"
#include "key_type.hpp"
#include "reference_sort.hpp"

namespace radix_sort {
namespace {

template <class K>
std::vector<K> random_keys(size_t count, uint64_t seed, bool few_distinct) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(count);
  for (auto& key : keys) {
    const uint64_t bits = few_distinct ? rng() % 5 : rng();
    if constexpr (std::is_floating_point_v<K>) {
      key = static_cast<K>(few_distinct ? static_cast<double>(bits) - 2.0 : static_cast<double>(int64_t(bits)) * 1e-10);
    } else {
      key = static_cast<K>(bits);
    }
  }
  if constexpr (std::is_floating_point_v<K>) {
    // The awkward values, sprinkled in: both zeros, infinities, NaNs of both signs and another payload.
    const K nan = std::numeric_limits<K>::quiet_NaN();
    const K specials[] = {K(-0.0), K(0.0), std::numeric_limits<K>::infinity(),   -std::numeric_limits<K>::infinity(),
                          nan,     -nan,   std::numeric_limits<K>::denorm_min(), std::numeric_limits<K>::lowest()};
    for (size_t i = 0; i < count; i += 7) keys[i] = specials[(i / 7) % std::size(specials)];
  }
  return keys;
}

template <class K>
void expect_sorts_like_stable_sort(size_t count, bool few_distinct) {
  for (bool descending : {false, true}) {
    const std::vector<K> input = random_keys<K>(count, count * 31 + few_distinct, few_distinct);
    const std::vector<uint64_t> expected_order = test::stable_order(input, descending);
    const std::vector<K> expected_keys = test::gather(input, expected_order);

    std::vector<K> keys = input;
    radix_sort_cpu(keys.data(), static_cast<NoValues*>(nullptr), count, descending);
    EXPECT_TRUE(test::same_bits(keys, expected_keys)) << key_type_name(key_type_of<K>()) << " n=" << count;

    keys = input;
    std::vector<uint64_t> order(count);
    std::iota(order.begin(), order.end(), uint64_t{0});
    radix_sort_cpu(keys.data(), order.data(), count, descending);
    EXPECT_TRUE(test::same_bits(keys, expected_keys));
    EXPECT_EQ(order, expected_order) << key_type_name(key_type_of<K>()) << " n=" << count;

    keys = input;
    std::vector<uint16_t> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<uint16_t>(i * 7);
    radix_sort_cpu(keys.data(), values.data(), count, descending);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(values[i], static_cast<uint16_t>(expected_order[i] * 7));
  }
}

TEST(CpuSort, MatchesStableSortForEveryType) {
  for (KeyType type : all_key_types) {
    visit_key_type(type, [](auto tag) {
      using K = typename decltype(tag)::type;
      for (size_t count : {0, 1, 2, 3, 100, 4097, 100003}) {
        expect_sorts_like_stable_sort<K>(count, false);
        expect_sorts_like_stable_sort<K>(count, true);
      }
    });
  }
}

template <class K>
auto ordered_bits(K key) {
  return prims::RadixKey<K>::ordered_bits(key);
}

// The library's key map, compiled here by the host compiler alone.
TEST(KeyOrder, FloatsFollowNumpy) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_LT(ordered_bits(-inf), ordered_bits(-1.0f));
  EXPECT_LT(ordered_bits(-1.0f), ordered_bits(-0.0f));
  EXPECT_EQ(ordered_bits(-0.0f), ordered_bits(0.0f));
  EXPECT_LT(ordered_bits(0.0f), ordered_bits(std::numeric_limits<float>::denorm_min()));
  EXPECT_LT(ordered_bits(inf), ordered_bits(nan));
  EXPECT_EQ(ordered_bits(nan), ordered_bits(-nan));
  EXPECT_LT(ordered_bits(int8_t(-128)), ordered_bits(int8_t(127)));
  EXPECT_LT(ordered_bits(int64_t(-1)), ordered_bits(int64_t(0)));
}

TEST(KeyOrder, ZerosAndNansKeepInputOrderBothWays) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> keys = {0.0, nan, -0.0, 1.0, -nan, 0.0, -0.0};
  std::vector<uint64_t> order = {0, 1, 2, 3, 4, 5, 6};
  radix_sort_cpu(keys.data(), order.data(), keys.size(), false);
  EXPECT_EQ(order, (std::vector<uint64_t>{0, 2, 5, 6, 3, 1, 4}));
  EXPECT_TRUE(std::signbit(keys[1]));  // -0.0 kept its bits
  EXPECT_TRUE(std::signbit(keys[6]));  // -nan kept its sign

  keys = {0.0, nan, -0.0, 1.0, -nan, 0.0, -0.0};
  order = {0, 1, 2, 3, 4, 5, 6};
  radix_sort_cpu(keys.data(), order.data(), keys.size(), true);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 4, 3, 0, 2, 5, 6}));
}

TEST(KeyOrder, FindsTheFirstDisorder) {
  const int32_t ascending[] = {1, 2, 2, 5};
  EXPECT_FALSE(first_disorder(ascending, 4, false));
  EXPECT_EQ(first_disorder(ascending, 4, true), 1u);
  const float with_nan[] = {-1.0f, 0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f};
  EXPECT_EQ(first_disorder(with_nan, 5, false), 4u);
  EXPECT_FALSE(first_disorder(with_nan, 4, false));
  EXPECT_FALSE(first_disorder(ascending, 0, false));
}

}  // namespace
}  // namespace radix_sort
