// The plain call's choice between Onesweep and the hybrid, made on the device (detail/radix_sort_auto.cuh): the
// estimate's arithmetic and where the choice applies, without a GPU; on the GPU, 8-byte keys of distributions on
// each side of the choice (and near it) sorted with the choice and checked against the CPU reference, with the
// path the device took compared with the one the estimate, computed here from the keys, says it must take; and
// the plain call itself from the size where it chooses.
#include <cmath>
#include <cstdint>
#include <cstring>
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
using prims::test::check_sort_with;
using prims::test::index_values;
using prims::test::kNoValues;
namespace detail = prims::detail;
namespace radix = prims::detail::radix;
using Table = detail::TuningSm90;
constexpr auto kAuto = RadixSortAlgorithm::Auto;

template <class K>
using Choice = Table::AutoChoice<K, detail::NoValues>;

// ---- Host only.

TEST(RadixSortAuto, ExpectedBucketOfEvenAndSkewedDigits) {
  const double n = 1 << 20;
  // Three evenly spread 8-bit digits: n / 2^24 keys share a key's top 24 bits.
  const double even = n * n / 256;
  const double evens[3] = {even, even, even};
  EXPECT_DOUBLE_EQ(std::log2(n) - 24, radix::log2_expected_bucket(evens, 3, n));
  // One digit that every key shares: the others decide.
  const double one_shared[3] = {n * n, even, even};
  EXPECT_DOUBLE_EQ(std::log2(n) - 16, radix::log2_expected_bucket(one_shared, 3, n));
  // All keys equal: every key is in one bucket.
  const double all[2] = {n * n, n * n};
  EXPECT_DOUBLE_EQ(std::log2(n), radix::log2_expected_bucket(all, 2, n));
  // Half the keys on one digit, the rest spread: (1/2)^2 + (1/2)^2 / 256.
  const double half[1] = {n * n * (0.25 + 0.25 / 256)};
  EXPECT_NEAR(std::log2(n * (0.25 + 0.25 / 256)), radix::log2_expected_bucket(half, 1, n), 1e-12);
}

TEST(RadixSortAuto, AppliesToEightByteKeysOfWholeDigitRangesFromItsSize) {
  const size_t min = Choice<uint64_t>::min_items;
  EXPECT_TRUE((radix::auto_choice_applies<Table, uint64_t, detail::NoValues>(min, 0, 64)));
  EXPECT_FALSE((radix::auto_choice_applies<Table, uint64_t, detail::NoValues>(min - 1, 0, 64)));
  EXPECT_TRUE((radix::auto_choice_applies<Table, double, detail::NoValues>(min, 0, 64)));
  EXPECT_TRUE((radix::auto_choice_applies<Table, int64_t, detail::NoValues>(min, 8, 40)));
  // Not a whole number of digits: the hybrid's digits would not be coarser LSD digits.
  EXPECT_FALSE((radix::auto_choice_applies<Table, uint64_t, detail::NoValues>(min, 0, 60)));
  // No bits left below the hybrid's top bits.
  EXPECT_FALSE((radix::auto_choice_applies<Table, uint64_t, detail::NoValues>(min, 0, 16)));
  // Past one Onesweep portion, and 4-byte keys: Onesweep alone.
  EXPECT_FALSE((radix::auto_choice_applies<Table, uint64_t, detail::NoValues>(size_t{1} << 30, 0, 64)));
  EXPECT_FALSE((radix::auto_choice_applies<Table, uint32_t, detail::NoValues>(min, 0, 32)));
}

// ---- GPU.

// The distributions (key_distributions.cuh) and the expected bucket E each gives at n just over 2^20 (16 top bits:
// 17 would take a third pass), keys alone and pairs alike: uniform E = 16, top_B 16 * 2^B, five_percent_zeros
// about 38 (the hybrid, with one bucket of 5% of the keys); the others thousands or more.

template <class K>
std::vector<K> keys_of(const std::vector<uint64_t>& bits) {
  std::vector<K> keys(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&keys[i], &bits[i], sizeof(K));
  return keys;
}

/// Whether the estimate, computed here from the keys' sort bits as the choice kernel does, takes the hybrid.
template <class K>
bool estimate_takes_hybrid(const std::vector<K>& keys, Order order) {
  using Hybrid = Table::Hybrid<K, detail::NoValues>;
  const size_t n = keys.size();
  const int msd_bits = radix::hybrid_msd_bits<Hybrid>(n, 0, 64);
  const int top_passes = (msd_bits + 7) / 8;
  double squares[8] = {};
  for (int j = 0; j < top_passes; ++j) {
    // The hybrid's digit j: bits [max(64 - msd_bits, 64 - 8 (top_passes - j)), 64 - 8 (top_passes - j - 1)).
    const int high = 64 - 8 * (top_passes - j - 1);
    const int low = std::max(64 - msd_bits, high - 8);
    std::vector<double> counts(256, 0.0);
    for (const K& key : keys) counts[prims::sort_bits(key, order, low, high)] += 1;
    for (double c : counts) squares[j] += c * c;
  }
  return radix::log2_expected_bucket(squares, top_passes, static_cast<double>(n)) <=
         std::log2(Table::AutoChoice<K, detail::NoValues>::max_expected_bucket);
}

/// Sorts with the choice made on the device (the path the plain call takes from AutoChoice::min_items keys on;
/// called here at any size), under the current device's table (or the one the tests force), noting the path the
/// device took.
template <class K, class V>
void check_auto_path(const std::vector<K>& keys, const std::vector<V>* values, prims::test::SortCase c,
                     bool expect_hybrid) {
  bool took_hybrid = !expect_hybrid;
  check_sort_with(keys, values, c, [&](void* temp, size_t& bytes, auto io, size_t n, Order o, int b, int e) {
    unsigned* skip = nullptr;
    const cudaError_t status = detail::with_tuning([&](auto table) {
      return radix::auto_sort<decltype(table)>(temp, bytes, io, n, o, b, e, nullptr, &skip);
    });
    if (temp != nullptr && status == cudaSuccess) {
      unsigned words[radix::kSkipWords] = {};
      const cudaError_t copied = cudaMemcpy(words, skip, sizeof(words), cudaMemcpyDeviceToHost);
      if (copied != cudaSuccess) return copied;
      EXPECT_NE(words[radix::kSkipHybrid], words[radix::kSkipOnesweep]) << "exactly one path is skipped";
      took_hybrid = words[radix::kSkipHybrid] == 0;
    }
    return status;
  });
  EXPECT_EQ(expect_hybrid, took_hybrid) << (expect_hybrid ? "expected the hybrid" : "expected Onesweep");
}

template <class K>
class RadixSortAutoTyped : public ::testing::Test {};
using EightByteKeys = ::testing::Types<uint64_t, int64_t, double>;
TYPED_TEST_SUITE(RadixSortAutoTyped, EightByteKeys);

/// Each distribution on the side the estimate puts it (checked here), sorted with the path the device must take:
/// keys alone in both orders, pairs, and pairs in place. n is just over 2^20: 16 top bits, E = 16 for evenly spread
/// keys.
TYPED_TEST(RadixSortAutoTyped, DistributionsOnEachSideOfTheChoice) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const size_t n = (size_t{1} << 20) + 4097;
  // The estimate below is the keys' alone: the pairs' hybrid takes as many top bits here.
  ASSERT_EQ((radix::hybrid_msd_bits<Table::Hybrid<K, detail::NoValues>>(n, 0, 64)),
            (radix::hybrid_msd_bits<Table::Hybrid<K, uint32_t>>(n, 0, 64)));
  struct Case {
    const char* name;
    bool hybrid;
  };
  std::vector<Case> cases = {{"uniform", true}, {"low_entropy", false}};
  if (std::is_same_v<K, uint64_t>) {
    // Around the threshold of 64: E = 32 and 128 (top bits 1 and 3), and 64.25 (2: n is a little over 2^20, so
    // just past it).
    cases.insert(cases.end(), {{"top_1", true},
                               {"top_2", false},
                               {"top_3", false},
                               {"all_equal", false},
                               {"dominant_prefix", false},
                               {"five_percent_zeros", true}});
  }
  const auto index = index_values<uint32_t>(n);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto keys = keys_of<K>(prims::test::key_bits_of(c.name, n, 7));
    for (Order order : {Order::Ascending, Order::Descending}) {
      ASSERT_EQ(c.hybrid, estimate_takes_hybrid(keys, order)) << "the distribution is on the side meant";
      check_auto_path(keys, kNoValues, {order}, c.hybrid);
      if (::testing::Test::HasFatalFailure()) return;
    }
    check_auto_path(keys, &index, {Order::Descending}, c.hybrid);
    check_auto_path(keys, &index, {Order::Ascending, 0, -1, /*in_place=*/true}, c.hybrid);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// Bit ranges of whole digits: the hybrid's top bits end at end_bit and its buckets are sorted down to begin_bit;
/// on the Onesweep side, its passes over the range, the first ones in the launches the two paths share (skewed
/// keys, and equal keys whose every pass is trivial).
TEST(RadixSortAuto, BitRanges) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 20) + 4097;
  const auto index = index_values<uint32_t>(n);
  for (auto [name, hybrid] : {std::pair{"uniform", true}, std::pair{"low_entropy", false},
                              std::pair{"all_equal", false}}) {
    SCOPED_TRACE(name);
    const auto keys = keys_of<uint64_t>(prims::test::key_bits_of(name, n, 11));
    for (auto [begin_bit, end_bit] : {std::pair{8, 56}, std::pair{0, 40}, std::pair{16, 64}}) {
      ASSERT_TRUE((radix::auto_choice_applies<Table, uint64_t, uint32_t>(Choice<uint64_t>::min_items, begin_bit,
                                                                         end_bit)));
      for (bool in_place : {false, true}) {
        check_auto_path(keys, &index, {Order::Descending, begin_bit, end_bit, in_place}, hybrid);
        check_auto_path(keys, kNoValues, {Order::Ascending, begin_bit, end_bit, in_place}, hybrid);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// The plain call from AutoChoice::min_items keys on: evenly spread keys and skewed ones, each on its path.
TEST(RadixSortAuto, PlainCallFromItsSize) {
  PRIMS_REQUIRE_GPU();
  const size_t n = Choice<uint64_t>::min_items + 4097;
  for (const char* name : {"uniform", "low_entropy"}) {
    SCOPED_TRACE(name);
    const auto keys = keys_of<uint64_t>(prims::test::key_bits_of(name, n, 13));
    check_sort<kAuto>(keys, kNoValues, {Order::Ascending});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
