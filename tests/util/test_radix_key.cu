// Host-only: the key bit transforms of the radix sort. Every key type's ordered bits must sort like the key
// itself (numpy's order for floats), -0.0 and +0.0 and all NaNs must tie, and descending must be the exact
// reverse; the CPU reference built on them must be stable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "prims/util/radix_key.cuh"
#include "sort_reference.cuh"

namespace {

using prims::Order;
using prims::RadixKey;

using prims::test::numpy_less;

template <class K>
std::vector<K> sample_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  for (auto& key : keys) {
    const uint64_t word = rng();
    if constexpr (std::is_floating_point_v<K>) {
      // Random bits cover every exponent, sign, denormals and NaNs.
      typename RadixKey<K>::Bits bits = static_cast<typename RadixKey<K>::Bits>(word);
      std::memcpy(&key, &bits, sizeof(K));
    } else {
      key = static_cast<K>(word);
    }
  }
  if constexpr (std::is_floating_point_v<K>) {
    for (K special : prims::test::special_floats<K>()) keys.push_back(special);
  } else {
    for (K extreme : {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), K(0), K(1)}) {
      keys.push_back(extreme);
    }
  }
  return keys;
}

template <class K>
class RadixKeyTyped : public ::testing::Test {};
using KeyTypes =
    ::testing::Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(RadixKeyTyped, KeyTypes);

TYPED_TEST(RadixKeyTyped, FromPlainOrderedBitsRebuildsEveryKeyThatIsNotSpecial) {
  using K = TypeParam;
  size_t rebuilt = 0;
  for (const K key : sample_keys<K>(5000, 17 + sizeof(K))) {
    if (RadixKey<K>::is_special(key)) continue;
    const K back = RadixKey<K>::from_plain_ordered_bits(RadixKey<K>::plain_ordered_bits(key));
    ASSERT_EQ(RadixKey<K>::raw_bits(key), RadixKey<K>::raw_bits(back)) << +key;
    ++rebuilt;
  }
  EXPECT_GT(rebuilt, 4000u);
}

TYPED_TEST(RadixKeyTyped, OrderedBitsOrderLikeTheKeys) {
  using K = TypeParam;
  const std::vector<K> keys = sample_keys<K>(2000, sizeof(K));
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = 0; j < keys.size(); j += 7) {
      const K a = keys[i], b = keys[(i + j) % keys.size()];
      const auto bits_a = RadixKey<K>::ordered_bits(a), bits_b = RadixKey<K>::ordered_bits(b);
      if constexpr (std::is_floating_point_v<K>) {
        ASSERT_EQ(bits_a < bits_b, numpy_less(a, b)) << a << " vs " << b;
        ASSERT_EQ(bits_a == bits_b, !numpy_less(a, b) && !numpy_less(b, a)) << a << " vs " << b;
      } else {
        ASSERT_EQ(bits_a < bits_b, a < b) << +a << " vs " << +b;
        ASSERT_EQ(bits_a == bits_b, a == b) << +a << " vs " << +b;
      }
    }
  }
}

TYPED_TEST(RadixKeyTyped, SmallTypesMapEveryValueInOrder) {
  using K = TypeParam;
  if constexpr (sizeof(K) <= 2 && std::is_integral_v<K>) {
    using Limits = std::numeric_limits<K>;
    for (long v = Limits::min(); v < Limits::max(); ++v) {
      ASSERT_EQ(RadixKey<K>::ordered_bits(static_cast<K>(v)) + 1, RadixKey<K>::ordered_bits(static_cast<K>(v + 1)));
    }
    EXPECT_EQ(RadixKey<K>::ordered_bits(Limits::min()), 0u);
  }
}

TYPED_TEST(RadixKeyTyped, DescendingIsTheExactReverse) {
  using K = TypeParam;
  const std::vector<K> keys = sample_keys<K>(500, 99);
  for (K a : keys) {
    for (K b : keys) {
      const auto up_a = prims::sort_bits(a, Order::Ascending, 0, RadixKey<K>::kBits);
      const auto up_b = prims::sort_bits(b, Order::Ascending, 0, RadixKey<K>::kBits);
      const auto down_a = prims::sort_bits(a, Order::Descending, 0, RadixKey<K>::kBits);
      const auto down_b = prims::sort_bits(b, Order::Descending, 0, RadixKey<K>::kBits);
      ASSERT_EQ(up_a < up_b, down_b < down_a);
      ASSERT_EQ(up_a == up_b, down_a == down_b);
    }
  }
}

TYPED_TEST(RadixKeyTyped, DigitsReassembleTheSortBits) {
  using K = TypeParam;
  constexpr int bits = RadixKey<K>::kBits;
  const std::vector<K> keys = sample_keys<K>(300, 5);
  for (Order order : {Order::Ascending, Order::Descending}) {
    for (auto [begin_bit, end_bit] : {std::pair{0, bits}, std::pair{1, bits - 1}, std::pair{3, 3 + (bits + 1) / 2}}) {
      for (K key : keys) {
        uint64_t assembled = 0;
        for (int shift = begin_bit; shift < end_bit; shift += 8) {
          const int width = std::min(8, end_bit - shift);
          const unsigned digit = prims::DigitExtractor<K>(order, shift, width)(key);
          ASSERT_LT(digit, 1u << width);
          assembled |= uint64_t{digit} << (shift - begin_bit);
        }
        ASSERT_EQ(assembled, uint64_t{prims::sort_bits(key, order, begin_bit, end_bit)});
      }
    }
  }
}

TYPED_TEST(RadixKeyTyped, PlainOrderedBitsAgreeOnEveryKeyButTheSpecialOnes) {
  using K = TypeParam;
  int specials = 0;
  for (K key : sample_keys<K>(3000, 7)) {
    bool expected_special = false;
    if constexpr (std::is_floating_point_v<K>) expected_special = std::isnan(key) || (key == 0 && std::signbit(key));
    ASSERT_EQ(RadixKey<K>::is_special(key), expected_special);
    specials += expected_special;
    if (!expected_special) {
      ASSERT_EQ(RadixKey<K>::plain_ordered_bits(key), RadixKey<K>::ordered_bits(key));
      for (Order order : {Order::Ascending, Order::Descending}) {
        const prims::DigitExtractor<K> digit_of(order, 3, 8);
        ASSERT_EQ(digit_of.plain(key), digit_of(key));
      }
    }
  }
  if constexpr (std::is_floating_point_v<K>) EXPECT_GT(specials, 1);  // the samples hold NaNs and -0.0
}

/// The tests' reference key map (sort_reference.cuh, written from the values) and the library's (from the bits)
/// agree on every key, specials included, and so do their digits of every bit range.
TYPED_TEST(RadixKeyTyped, ReferenceOrderKeyIsTheLibrarysOrderedBits) {
  using K = TypeParam;
  std::vector<K> keys = sample_keys<K>(20000, 41);
  if constexpr (std::is_floating_point_v<K>) {
    const auto specials = prims::test::special_floats<K>();
    keys.insert(keys.end(), specials.begin(), specials.end());
  }
  constexpr int bits = RadixKey<K>::kBits;
  for (const K& key : keys) {
    ASSERT_EQ(prims::test::reference_order_key(key), uint64_t{RadixKey<K>::ordered_bits(key)});
    for (Order order : {Order::Ascending, Order::Descending}) {
      for (auto [begin_bit, end_bit] : {std::pair{0, bits}, std::pair{0, 1}, std::pair{3, bits - 2},
                                        std::pair{bits / 2, bits}, std::pair{5, 5}}) {
        ASSERT_EQ(prims::test::reference_digit(key, order, begin_bit, end_bit),
                  uint64_t{prims::sort_bits(key, order, begin_bit, end_bit)});
      }
    }
  }
}

TEST(RadixKeyFloat, ZerosTieAndNansTieLast) {
  for (Order order : {Order::Ascending, Order::Descending}) {
    EXPECT_EQ(prims::sort_bits(0.0f, order, 0, 32), prims::sort_bits(-0.0f, order, 0, 32));
    EXPECT_EQ(prims::sort_bits(0.0, order, 0, 64), prims::sort_bits(-0.0, order, 0, 64));
  }
  const std::vector<float> specials = prims::test::special_floats<float>();
  const auto nan_bits = RadixKey<float>::ordered_bits(std::numeric_limits<float>::quiet_NaN());
  for (float f : specials) {
    if (std::isnan(f)) {
      EXPECT_EQ(RadixKey<float>::ordered_bits(f), nan_bits);
    } else {
      EXPECT_LT(RadixKey<float>::ordered_bits(f), nan_bits);
    }
  }
  EXPECT_LT(RadixKey<float>::ordered_bits(-std::numeric_limits<float>::infinity()),
            RadixKey<float>::ordered_bits(std::numeric_limits<float>::lowest()));
  EXPECT_LT(RadixKey<double>::ordered_bits(-std::numeric_limits<double>::denorm_min()),
            RadixKey<double>::ordered_bits(0.0));
  EXPECT_LT(RadixKey<double>::ordered_bits(0.0), RadixKey<double>::ordered_bits(std::numeric_limits<double>::denorm_min()));
}

TEST(RadixKeyFloat, ReferenceSortIsStableAndKeepsBits) {
  std::vector<float> keys = prims::test::special_floats<float>();
  const std::vector<float> again = keys;
  keys.insert(keys.end(), again.begin(), again.end());
  for (Order order : {Order::Ascending, Order::Descending}) {
    const auto permutation = prims::test::reference_sort_permutation(keys, order, 0, 32);
    for (size_t i = 1; i < permutation.size(); ++i) {
      const auto previous = prims::sort_bits(keys[permutation[i - 1]], order, 0, 32);
      const auto current = prims::sort_bits(keys[permutation[i]], order, 0, 32);
      ASSERT_LE(previous, current);
      if (previous == current) ASSERT_LT(permutation[i - 1], permutation[i]) << "stable";
    }
    const auto first = prims::test::permuted(keys, permutation).front();
    if (order == Order::Ascending) {
      EXPECT_EQ(first, -std::numeric_limits<float>::infinity());
    } else {
      EXPECT_TRUE(std::isnan(first));
    }
  }
}

TEST(RadixKeyRange, ValidBitRanges) {
  EXPECT_TRUE(prims::valid_bit_range<uint32_t>(0, 32));
  EXPECT_TRUE(prims::valid_bit_range<uint32_t>(5, 5));
  EXPECT_TRUE(prims::valid_bit_range<int8_t>(0, 8));
  EXPECT_FALSE(prims::valid_bit_range<int8_t>(0, 9));
  EXPECT_FALSE(prims::valid_bit_range<uint32_t>(-1, 8));
  EXPECT_FALSE(prims::valid_bit_range<uint64_t>(9, 8));
}

}  // namespace
