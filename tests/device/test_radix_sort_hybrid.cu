// RadixSortAlgorithm::Hybrid against the CPU reference, bitwise, with the checks every algorithm runs
// (sort_check.cuh): every key type, both orders, sizes around every tile edge, stable pairs, bit ranges, in place,
// value widths with 4- and 8-byte keys, special floats; and key distributions that put buckets in every class of
// the segmented sort (all equal, few distinct, one dominant prefix, low entropy, sizes following a power law). Its
// top-bit arithmetic is checked without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test.cuh"
#include "key_distributions.cuh"
#include "prims/device/radix_sort.cuh"
#include "sort_check.cuh"

namespace {

using prims::device::Order;
using prims::device::RadixSortAlgorithm;
using prims::test::check_sort;
using prims::test::index_values;
using prims::test::kNoValues;
namespace detail = prims::detail;
constexpr auto kHybrid = RadixSortAlgorithm::Hybrid;

// ---- Host only: how many top bits the Onesweep passes take.

TEST(RadixSortHybrid, TopBitsLeaveBucketsOfSixteenKeysOrAPassFewer) {
  using Policy = detail::TuningSm90::Hybrid<uint64_t, detail::NoValues>;
  static_assert(Policy::bucket_items_log2 == 4 && Policy::max_bucket_items_log2 == 5, "the test assumes the policy");
  EXPECT_EQ(16, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 20, 0, 64));
  // 17 bits would take a third pass; two leave buckets of 32.
  EXPECT_EQ(16, detail::radix::hybrid_msd_bits<Policy>((size_t{1} << 20) + 1, 0, 64));
  // 18 bits: two passes would leave buckets of 64.
  EXPECT_EQ(18, detail::radix::hybrid_msd_bits<Policy>((size_t{1} << 21) + 1, 0, 64));
  EXPECT_EQ(23, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 27, 0, 64));
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 28, 0, 64));
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 29, 0, 64));
  EXPECT_EQ(1, detail::radix::hybrid_msd_bits<Policy>(1, 0, 64));
  EXPECT_EQ(1, detail::radix::hybrid_msd_bits<Policy>(32, 0, 64));
  EXPECT_EQ(8, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 13, 0, 64));
  // Up to four passes for 64-bit keys (below 2^30 keys, where the hybrid stops), a pass fewer than LSD for 16-
  // and 32-bit keys.
  EXPECT_EQ(26, detail::radix::hybrid_msd_bits<Policy>((size_t{1} << 29) + 1, 0, 64));
  // Pairs: buckets of 8, or a pass fewer.
  using Pairs = detail::TuningSm90::Hybrid<uint64_t, uint32_t>;
  EXPECT_EQ(21, detail::radix::hybrid_msd_bits<Pairs>(size_t{1} << 24, 0, 64));
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Pairs>(size_t{1} << 27, 0, 64));
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Pairs>(size_t{1} << 28, 0, 64));
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Pairs>(size_t{1} << 29, 0, 64));
  using Policy32 = detail::TuningSm90::Hybrid<uint32_t, detail::NoValues>;
  EXPECT_EQ(24, detail::radix::hybrid_msd_bits<Policy32>(size_t{1} << 28, 0, 32));
  using Policy16 = detail::TuningSm90::Hybrid<uint16_t, detail::NoValues>;
  EXPECT_EQ(8, detail::radix::hybrid_msd_bits<Policy16>(size_t{1} << 20, 0, 16));
  // Never more than the range: the whole range is Onesweep alone.
  EXPECT_EQ(8, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 20, 0, 8));
  EXPECT_EQ(5, detail::radix::hybrid_msd_bits<Policy>(size_t{1} << 20, 27, 32));
}

// ---- GPU.

template <class K>
class RadixSortHybridTyped : public ::testing::Test {};
TYPED_TEST_SUITE(RadixSortHybridTyped, prims::test::RadixKeyTypes);

TYPED_TEST(RadixSortHybridTyped, KeysEverySize) {
  PRIMS_REQUIRE_GPU();
  prims::test::check_keys_every_size<kHybrid, TypeParam>();
}

TYPED_TEST(RadixSortHybridTyped, PairsStable) {
  PRIMS_REQUIRE_GPU();
  prims::test::check_pairs_stable<kHybrid, TypeParam>();
}

TYPED_TEST(RadixSortHybridTyped, BitRangesAndInPlace) {
  PRIMS_REQUIRE_GPU();
  prims::test::check_bit_ranges<kHybrid, TypeParam>();
}

TEST(RadixSortHybrid, Distributions) {
  PRIMS_REQUIRE_GPU();
  for (const char* name :
       {"uniform", "all_equal", "sorted", "reversed", "few_distinct", "low_entropy", "dominant_prefix", "power_law"}) {
    const bool skewed = std::string(name) != "uniform" && std::string(name) != "sorted" &&
                        std::string(name) != "reversed";
    std::vector<size_t> sizes = {size_t{70001}, size_t{1} << 20};
    if (skewed) sizes.push_back((size_t{3} << 19) + 7);  // skewed buckets past 2^20 keys
    for (size_t n : sizes) {
      const auto keys = prims::test::key_bits_of(name, n, n);
      const auto index = index_values<uint32_t>(n);
      std::vector<uint32_t> narrow(n);
      for (size_t i = 0; i < n; ++i) narrow[i] = static_cast<uint32_t>(keys[i] >> 32);
      for (Order order : {Order::Ascending, Order::Descending}) {
        SCOPED_TRACE(std::string(name) + ", n = " + std::to_string(n));
        check_sort<kHybrid>(keys, &index, {order});
        check_sort<kHybrid>(keys, kNoValues, {order});
        check_sort<kHybrid>(narrow, &index, {order});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(RadixSortHybrid, EveryValueWidth) {
  PRIMS_REQUIRE_GPU();
  prims::test::for_each_value_width([](auto width) {
    using V = typename decltype(width)::type;
    prims::test::check_value_type<uint64_t, V, kHybrid>();
    prims::test::check_value_type<uint32_t, V, kHybrid>();
  });
}

TEST(RadixSortHybrid, NansZerosInfinitiesDenormals) {
  PRIMS_REQUIRE_GPU();
  prims::test::check_special_floats<float, kHybrid>();
  prims::test::check_special_floats<double, kHybrid>();
}

}  // namespace
