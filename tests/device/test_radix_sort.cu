// prims::device::radix_sort_keys and radix_sort_pairs, every algorithm, against a CPU stable sort on the ordered
// key bits (sort_reference.cuh), compared bitwise: every key type, both orders, stability of pairs, value types
// of 1 to 16 bytes, bit ranges, sizes around every tile edge, in place, key distributions, special floats,
// Onesweep's look-back portions, and up to 2^32 + 5 keys validated on the GPU. Outputs are poisoned before every run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest-spi.h>

#include "gpu_test.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/util/mix_bits.cuh"
#include "prims/util/ops.cuh"
#include "prims/warp/reduce.cuh"
#include "sort_check.cuh"
#include "sort_reference.cuh"

namespace {

using prims::device::Order;
using prims::device::RadixSortAlgorithm;
namespace detail = prims::detail;

using prims::test::bit_patterns;
using prims::test::check_bit_ranges;
using prims::test::check_keys_every_size;
using prims::test::check_pairs_stable;
using prims::test::check_sort;
using prims::test::check_sort_with;
using prims::test::check_special_floats;
using prims::test::check_value_type;
using prims::test::kOnesweepSmallMax;
using prims::test::kOnesweepSmallTile;
using prims::test::kOnesweepTile;
using prims::test::kTileCountsTile;
using prims::test::index_values;
using prims::test::Payload;
using prims::test::random_keys;
using prims::test::SortCase;

template <class K>
class RadixSortTyped : public ::testing::Test {};
using KeyTypes = prims::test::RadixKeyTypes;
TYPED_TEST_SUITE(RadixSortTyped, KeyTypes);

TYPED_TEST(RadixSortTyped, KeysEverySizeOnesweep) {
  PRIMS_REQUIRE_GPU();
  check_keys_every_size<RadixSortAlgorithm::Onesweep, TypeParam>();
}

TYPED_TEST(RadixSortTyped, KeysEverySizeTileCounts) {
  PRIMS_REQUIRE_GPU();
  check_keys_every_size<RadixSortAlgorithm::TileCounts, TypeParam>();
}

TYPED_TEST(RadixSortTyped, PairsStableOnesweep) {
  PRIMS_REQUIRE_GPU();
  check_pairs_stable<RadixSortAlgorithm::Onesweep, TypeParam>();
}

TYPED_TEST(RadixSortTyped, PairsStableTileCounts) {
  PRIMS_REQUIRE_GPU();
  check_pairs_stable<RadixSortAlgorithm::TileCounts, TypeParam>();
}

TYPED_TEST(RadixSortTyped, BitRangesAndInPlace) {
  PRIMS_REQUIRE_GPU();
  check_bit_ranges<RadixSortAlgorithm::Onesweep, TypeParam>();
  check_bit_ranges<RadixSortAlgorithm::TileCounts, TypeParam>();
}

// ---- OneBlock: the whole sort in one block, on every shape of its ladder.

/// Sizes around the edges of the one-block sort's shapes for keys K and values V, up to its limit.
template <class K, class V>
std::vector<size_t> one_block_sizes() {
  using Policy = detail::TuningSm90::OneBlock<K, V>;
  std::vector<size_t> sizes = {0, 1, 2, 31, 33, 257};
  for (int tile : {Policy::small_shape::tile_items, Policy::medium_shape::tile_items, Policy::large_shape::tile_items,
                   Policy::largest_shape::tile_items}) {
    for (int delta : {-1, 0, 1}) {
      const size_t n = static_cast<size_t>(tile + delta);
      if (n <= prims::test::one_block_limit<K, V>()) sizes.push_back(n);
    }
  }
  return sizes;
}

TYPED_TEST(RadixSortTyped, KeysEverySizeOneBlock) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  for (size_t n : one_block_sizes<K, detail::NoValues>()) {
    const auto keys = random_keys<K>(n, n * 5 + sizeof(K));
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_sort<RadixSortAlgorithm::OneBlock>(keys, static_cast<const std::vector<uint32_t>*>(nullptr), {order});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Five distinct keys, values = input index, at every shape's edges; in place and over part of the bits too.
TYPED_TEST(RadixSortTyped, PairsStableBitRangesInPlaceOneBlock) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  constexpr int bits = prims::RadixKey<K>::kBits;
  for (size_t n : one_block_sizes<K, uint32_t>()) {
    auto keys = random_keys<K>(n, n + 13);
    for (auto& key : keys) key = keys[static_cast<size_t>(prims::RadixKey<K>::raw_bits(key)) % 5];
    const auto index = index_values<uint32_t>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_sort<RadixSortAlgorithm::OneBlock>(keys, &index, {order});
      check_sort<RadixSortAlgorithm::OneBlock>(keys, &index, {order, 0, -1, /*in_place=*/true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  const auto keys = random_keys<K>(prims::test::one_block_limit<K, uint32_t>(), 91);
  const auto index = index_values<uint32_t>(keys.size());
  for (auto [begin_bit, end_bit] :
       {std::pair{0, 0}, std::pair{0, 1}, std::pair{3, bits - 2}, std::pair{bits / 2, bits}}) {
    for (bool in_place : {false, true}) {
      const SortCase c{in_place ? Order::Descending : Order::Ascending, begin_bit, end_bit, in_place};
      check_sort<RadixSortAlgorithm::OneBlock>(keys, &index, c);
      check_sort<RadixSortAlgorithm::OneBlock>(keys, static_cast<const std::vector<uint32_t>*>(nullptr), c);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Keys sharing most of their digits (the one-block sort skips those passes), all-equal keys, and one key apart.
TYPED_TEST(RadixSortTyped, SkippedPassesOneBlock) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  for (size_t n : {size_t{1}, size_t{300}, prims::test::one_block_limit<K, uint32_t>()}) {
    std::vector<K> small(n), equal(n, static_cast<K>(3));
    for (size_t i = 0; i < n; ++i) small[i] = static_cast<K>((i * 5) % 7);
    std::vector<K> one_apart = equal;
    one_apart[n / 2] = static_cast<K>(2);
    const auto index = index_values<uint32_t>(n);
    for (const auto* keys : {&small, &equal, &one_apart}) {
      for (Order order : {Order::Ascending, Order::Descending}) {
        check_sort<RadixSortAlgorithm::OneBlock>(*keys, &index, {order});
        check_sort<RadixSortAlgorithm::OneBlock>(*keys, static_cast<const std::vector<uint32_t>*>(nullptr),
                                                 {order, 0, -1, true});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// Every value width at the one-block limit of its key and value, with 4-byte and 8-byte keys.
template <class K, class V>
void check_value_type_one_block() {
  const size_t n = prims::test::one_block_limit<K, V>();
  const auto keys = random_keys<K>(n, sizeof(V) + sizeof(K));
  std::vector<K> few(n);
  for (size_t i = 0; i < n; ++i) few[i] = keys[i % 7];
  const auto values = index_values<V>(n);
  for (Order order : {Order::Ascending, Order::Descending}) {
    check_sort<RadixSortAlgorithm::OneBlock>(few, &values, {order});
    check_sort<RadixSortAlgorithm::OneBlock>(keys, &values, {order, 0, -1, true});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(RadixSortValues, EveryWidthOneBlock) {
  PRIMS_REQUIRE_GPU();
  prims::test::for_each_value_width([](auto width) {
    check_value_type_one_block<uint32_t, typename decltype(width)::type>();
  });
  check_value_type_one_block<double, Payload<16>>();
  check_value_type_one_block<uint8_t, Payload<16>>();
}

/// Auto (the plain calls' algorithm: they forward to it) on both sides of its one-block limit for keys K and
/// values V (NoValues: keys alone): OneBlock up to it, Onesweep past it.
template <class K, class V>
void check_auto_around_one_block_limit(SortCase c) {
  constexpr size_t kLimit = prims::test::kAutoOneBlockLimit<K, V>;
  for (size_t n : {kLimit, kLimit + 1}) {
    const auto keys = random_keys<K>(n, n);
    if constexpr (detail::kHasValues<V>) {
      const auto values = index_values<V>(n);
      check_sort<RadixSortAlgorithm::Auto>(keys, &values, c);
    } else {
      check_sort<RadixSortAlgorithm::Auto>(keys, static_cast<const std::vector<uint32_t>*>(nullptr), c);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(RadixSort, AutoAroundTheOneBlockLimit) {
  PRIMS_REQUIRE_GPU();
  check_auto_around_one_block_limit<uint32_t, detail::NoValues>({Order::Descending});
  check_auto_around_one_block_limit<uint64_t, detail::NoValues>({Order::Ascending});
  check_auto_around_one_block_limit<uint32_t, uint32_t>({Order::Ascending, 0, -1, true});
}

TEST(RadixSort, OneBlockTakesUpToItsLimit) {
  uint32_t* keys = nullptr;
  size_t bytes = 0;
  const size_t kMax = prims::test::one_block_limit<uint32_t>();
  using Policy = detail::TuningSm90::OneBlock<uint32_t, detail::NoValues>;
  // Keys alone take the largest shape under every table.
  EXPECT_EQ(kMax, static_cast<size_t>(Policy::largest_shape::tile_items));
  EXPECT_EQ(kMax, prims::device::kOneBlockMaxItems<uint32_t>);
  EXPECT_EQ(cudaSuccess,
            prims::device::radix_sort_keys<RadixSortAlgorithm::OneBlock>(nullptr, bytes, keys, keys, kMax));
  EXPECT_GT(bytes, 0u);  // never 0, so a caller's allocation is never null
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::radix_sort_keys<RadixSortAlgorithm::OneBlock>(nullptr, bytes, keys, keys, kMax + 1));
  const size_t kMaxPairs = prims::test::one_block_limit<uint32_t, uint32_t>();
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_sort_pairs<RadixSortAlgorithm::OneBlock>(
                                       nullptr, bytes, keys, keys, keys, keys, kMaxPairs + 1));
}

// ---- Onesweep's look-back portions (fewer than 2^30 keys each), crossed with few keys by a policy whose portions
// hold three tiles and a bit.

template <class K, class V>
struct ThreeTilePortionsPolicy : detail::TuningSm90::Onesweep<K, V> {
  static constexpr size_t portion_max_items =
      3 * static_cast<size_t>(detail::radix::OnesweepTile<detail::TuningSm90::Onesweep<K, V>, K, V>::kTileItems) + 100;
};

template <class K, class V = uint32_t>
void check_three_tile_portions(const std::vector<K>& keys, const std::vector<V>* values, SortCase c) {
  check_sort_with(keys, values, c, [](void* temp, size_t& bytes, auto io, size_t n, Order order, int begin_bit,
                                      int end_bit) {
    using IoV = std::remove_pointer_t<decltype(io.values_out)>;
    return detail::radix::onesweep_sort<detail::TuningSm90, K, IoV, ThreeTilePortionsPolicy<K, IoV>>(
        temp, bytes, io, n, order, begin_bit, end_bit, nullptr, nullptr);
  });
}

TYPED_TEST(RadixSortTyped, OnesweepAcrossPortions) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  for (size_t tiles : {3, 4, 10}) {
    const size_t n = tiles * kOnesweepTile + 17 * (tiles - 3);  // one portion exactly, then 2 and 4 portions
    const auto keys = random_keys<K>(n, n + sizeof(K));
    // Three distinct keys: equal keys in every portion (stability across them) and trivial high-digit passes.
    std::vector<K> few(n);
    for (size_t i = 0; i < n; ++i) few[i] = static_cast<K>((i * 7) % 3);
    const auto values = index_values<uint32_t>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_three_tile_portions(keys, static_cast<const std::vector<uint32_t>*>(nullptr), {order});
      check_three_tile_portions(keys, &values, {order});
      check_three_tile_portions(few, &values, {order});
      if (::testing::Test::HasFatalFailure()) return;
    }
    const int bits = prims::RadixKey<K>::kBits;
    check_three_tile_portions(keys, &values, {Order::Ascending, bits / 4, bits - 1, true});
    check_three_tile_portions(few, static_cast<const std::vector<uint32_t>*>(nullptr), {Order::Descending, 0, bits,
                                                                                        true});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// The plain calls (no algorithm named), keys alone and pairs, on both sides of Auto's one-block limit.
template <class K, class V>
void check_plain_calls() {
  constexpr size_t kLimit = prims::test::kAutoOneBlockLimit<K, V>;
  constexpr size_t kKeysLimit = prims::test::kAutoOneBlockLimit<K, detail::NoValues>;
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, kLimit, kLimit + 1, kKeysLimit, kKeysLimit + 1,
                   size_t{3} * kOnesweepTile + 7, kOnesweepSmallMax + 5}) {
    const auto keys = random_keys<K>(n, n + 3);
    const auto values = index_values<V>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      for (auto [begin_bit, end_bit] : {std::pair{0, prims::RadixKey<K>::kBits}, std::pair{2, 9}}) {
        const SortCase c{order, begin_bit, end_bit};
        check_sort_with(keys, &values, c, [](void* temp, size_t& bytes, auto io, size_t count, Order o, int b,
                                             int e) {
          return prims::device::radix_sort_pairs(temp, bytes, io.keys_in, io.keys_out, io.values_in, io.values_out,
                                                 count, o, b, e);
        });
        check_sort_with(keys, static_cast<const std::vector<V>*>(nullptr), c,
                        [](void* temp, size_t& bytes, auto io, size_t count, Order o, int b, int e) {
                          return prims::device::radix_sort_keys(temp, bytes, io.keys_in, io.keys_out, count, o, b, e);
                        });
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(RadixSort, PlainCalls) {
  PRIMS_REQUIRE_GPU();
  check_plain_calls<uint32_t, uint32_t>();
  check_plain_calls<uint64_t, uint64_t>();
  check_plain_calls<float, uint32_t>();
  check_plain_calls<int16_t, Payload<12>>();
}

/// Onesweep's tiles change with n (with_onesweep_policy): keys alone and with their index on both sides of every
/// size edge the table sets for a key and value width, both orders.
template <class K, class V>
void check_onesweep_size_edges(std::initializer_list<size_t> sizes) {
  for (size_t n : sizes) {
    SCOPED_TRACE(n);
    const auto keys = random_keys<K>(n, n + 29);
    for (Order order : {Order::Ascending, Order::Descending}) {
      if constexpr (std::is_same_v<V, detail::NoValues>) {
        check_sort<RadixSortAlgorithm::Onesweep>(keys, prims::test::kNoValues, {order});
      } else {
        const auto values = index_values<V>(n);
        check_sort<RadixSortAlgorithm::Onesweep>(keys, &values, {order});
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(RadixSort, OnesweepTilesOnBothSidesOfEverySizeEdge) {
  PRIMS_REQUIRE_GPU();
  using Table = detail::TuningSm90;
  constexpr size_t kNarrowMax = Table::OnesweepMedium<uint32_t, detail::NoValues>::max_items;
  constexpr size_t kWideMax = Table::OnesweepMedium<uint64_t, detail::NoValues>::max_items;
  constexpr size_t kKeysMax = Table::OnesweepMediumKeys<uint32_t, detail::NoValues>::max_items;
  check_onesweep_size_edges<uint32_t, detail::NoValues>(
      {kOnesweepSmallMax + 1, kNarrowMax - 1, kNarrowMax, kKeysMax - 1, kKeysMax});
  check_onesweep_size_edges<float, detail::NoValues>({kNarrowMax - 1, kNarrowMax + 1});
  check_onesweep_size_edges<uint32_t, uint32_t>({kOnesweepSmallMax + 1, kNarrowMax - 1, kNarrowMax});
  check_onesweep_size_edges<uint64_t, detail::NoValues>({kOnesweepSmallMax + 1, kWideMax - 1, kWideMax});
  check_onesweep_size_edges<uint64_t, uint32_t>({kOnesweepSmallMax + 1, kWideMax - 1, kWideMax});
  check_onesweep_size_edges<uint64_t, uint64_t>({kOnesweepSmallMax + 1, kWideMax - 1});
  check_onesweep_size_edges<uint32_t, uint64_t>({kWideMax - 1, kWideMax});
  check_onesweep_size_edges<double, detail::NoValues>({kOnesweepSmallMax + 1, kWideMax - 1});
}

/// Every algorithm on a non-blocking stream with work queued before and after it.
TEST(RadixSort, EveryAlgorithmRunsOnItsStream) {
  PRIMS_REQUIRE_GPU();
  auto check = [](auto algorithm, size_t n) {
    constexpr RadixSortAlgorithm kAlgorithm = decltype(algorithm)::value;
    const auto keys = random_keys<uint64_t>(n, n);
    const auto values = index_values<uint32_t>(n);
    SCOPED_TRACE(n);
    prims::test::check_sort_on_late_stream(keys, values, [](void* temp, size_t& bytes, const uint64_t* keys_in,
                                                             uint64_t* keys_out, const uint32_t* values_in,
                                                             uint32_t* values_out, size_t count, cudaStream_t s) {
      return prims::device::radix_sort_pairs<kAlgorithm>(temp, bytes, keys_in, keys_out, values_in, values_out, count,
                                                         Order::Ascending, 0, 64, s);
    });
  };
  using Algorithm = RadixSortAlgorithm;
  check(std::integral_constant<Algorithm, Algorithm::OneBlock>{}, 3000);
  for (size_t n : {size_t{3000}, size_t{300007}, size_t{3} << 20}) {
    check(std::integral_constant<Algorithm, Algorithm::Auto>{}, n);
    check(std::integral_constant<Algorithm, Algorithm::Onesweep>{}, n);
    check(std::integral_constant<Algorithm, Algorithm::TileCounts>{}, n);
    check(std::integral_constant<Algorithm, Algorithm::Hybrid>{}, n);
  }
}

// ---- The checks themselves: each must fail against a sort broken in the way it guards against.

/// Sorts with Onesweep, then breaks the result as `damage(io, n)` says.
template <class Damage>
void check_damaged_sort(Damage damage) {
  const auto keys = random_keys<uint32_t>(5000, 1);
  const auto index = index_values<uint32_t>(keys.size());
  check_sort_with(keys, &index, SortCase{}, [&](void* temp, size_t& bytes, auto io, size_t n, Order order, int b, int e) {
    if constexpr (!detail::kHasValues<std::remove_pointer_t<decltype(io.values_out)>>) {
      return cudaErrorInvalidValue;  // never called: the check has values
    } else {
      const cudaError_t sorted = prims::device::radix_sort_pairs<RadixSortAlgorithm::Onesweep>(
          temp, bytes, io.keys_in, io.keys_out, io.values_in, io.values_out, n, order, b, e);
      if (temp != nullptr && sorted == cudaSuccess) damage(io, n);
      return sorted;
    }
  });
}

/// Changes the first byte of *item on the device to one certain to differ.
template <class T>
void flip_one_byte(const T* item) {
  unsigned char byte = 0;
  prims::check(cudaMemcpy(&byte, item, 1, cudaMemcpyDeviceToHost), "damage");
  prims::check(cudaMemset(const_cast<T*>(item), byte ^ 0xFF, 1), "damage");
}

TEST(SortChecks, CatchAnInputChangedOrAWritePastTheEnd) {
  PRIMS_REQUIRE_GPU();
  EXPECT_NONFATAL_FAILURE(check_damaged_sort([](auto io, size_t) { flip_one_byte(io.keys_in + 7); }),
                          "keys_in changed");
  EXPECT_NONFATAL_FAILURE(check_damaged_sort([](auto io, size_t) { flip_one_byte(io.values_in + 5); }),
                          "values_in changed");
  EXPECT_NONFATAL_FAILURE(check_damaged_sort([](auto io, size_t n) {
                            prims::check(cudaMemset(io.keys_out + n + 3, 0, 1), "damage");
                          }),
                          "written past n in keys_out");
  EXPECT_NONFATAL_FAILURE(check_damaged_sort([](auto io, size_t n) {
                            prims::check(cudaMemset(io.values_out + n, 0, 1), "damage");
                          }),
                          "written past n in values_out");
}

/// A sort that ignores its stream (it runs on the legacy default stream).
void sort_ignoring_the_stream() {
  const auto keys = random_keys<uint64_t>(300007, 2);
  prims::test::check_sort_on_late_stream(keys, index_values<uint32_t>(keys.size()),
                                         [](void* temp, size_t& bytes, const uint64_t* keys_in, uint64_t* keys_out,
                                            const uint32_t* values_in, uint32_t* values_out, size_t n, cudaStream_t) {
                                           return prims::device::radix_sort_pairs(temp, bytes, keys_in, keys_out,
                                                                                  values_in, values_out, n);
                                         });
}

TEST(SortChecks, CatchASortOffItsStream) {
  PRIMS_REQUIRE_GPU();
  EXPECT_FATAL_FAILURE(sort_ignoring_the_stream(), "bit_patterns");
}

TEST(RadixSort, InvalidBitRanges) {
  uint32_t* keys = nullptr;
  size_t bytes = 0;
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_sort_keys(nullptr, bytes, keys, keys, 10, Order::Ascending, -1, 8));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_sort_keys(nullptr, bytes, keys, keys, 10, Order::Ascending, 0, 33));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_sort_keys(nullptr, bytes, keys, keys, 10, Order::Ascending, 9, 8));
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::radix_sort_pairs<RadixSortAlgorithm::TileCounts>(nullptr, bytes, keys, keys, keys, keys, 10,
                                                                             Order::Ascending, 0, 40));
}

TEST(RadixSortValues, EveryWidth) {
  PRIMS_REQUIRE_GPU();
  prims::test::for_each_value_width([](auto width) {
    check_value_type<uint32_t, typename decltype(width)::type, RadixSortAlgorithm::Onesweep,
                     RadixSortAlgorithm::TileCounts>();
  });
}

TEST(RadixSortValues, WideValuesWithWideKeys) {
  PRIMS_REQUIRE_GPU();
  for (size_t n : {size_t{3} * kOnesweepTile + 1, kOnesweepSmallMax + 2 * kOnesweepTile + 1}) {
    const auto keys = random_keys<double>(n, 5);
    const auto values = index_values<Payload<16>>(keys.size());
    check_sort<RadixSortAlgorithm::Onesweep>(keys, &values, {Order::Descending});
    check_sort<RadixSortAlgorithm::TileCounts>(keys, &values, {Order::Ascending, 0, -1, true});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// uint32 keys of a named distribution.
std::vector<uint32_t> distribution(const std::string& name, size_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<uint32_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    if (name == "uniform") keys[i] = rng();
    if (name == "all_equal") keys[i] = 0x9E3779B9u;
    if (name == "sorted") keys[i] = static_cast<uint32_t>(i * 3);
    if (name == "reversed") keys[i] = static_cast<uint32_t>((n - i) * 3);
    if (name == "few_distinct") keys[i] = (rng() % 4) << 13;
    if (name == "low_entropy") keys[i] = rng() & rng() & rng();
  }
  return keys;
}

TEST(RadixSortDistributions, Uint32Pairs) {
  PRIMS_REQUIRE_GPU();
  for (const char* name : {"uniform", "all_equal", "sorted", "reversed", "few_distinct", "low_entropy"}) {
    const auto small = distribution(name, prims::test::one_block_limit<uint32_t, uint32_t>(), 5);
    const auto small_index = index_values<uint32_t>(small.size());
    for (Order order : {Order::Ascending, Order::Descending}) {
      SCOPED_TRACE(name);
      check_sort<RadixSortAlgorithm::OneBlock>(small, &small_index, {order});
      if (::testing::Test::HasFatalFailure()) return;
    }
    // 1000003 pairs take the medium tiles (OnesweepMedium), 2^20 + 4097 the plain sort's own pairs tiles
    // (OnesweepPairs).
    for (size_t n : {size_t{kOnesweepTile} - 1, size_t{1000003}, (size_t{1} << 20) + 4097}) {
      const auto keys = distribution(name, n, n);
      std::vector<uint32_t> index(n);
      for (size_t i = 0; i < n; ++i) index[i] = static_cast<uint32_t>(i);
      for (Order order : {Order::Ascending, Order::Descending}) {
        SCOPED_TRACE(name);
        check_sort<RadixSortAlgorithm::Onesweep>(keys, &index, {order});
        check_sort<RadixSortAlgorithm::TileCounts>(keys, &index, {order});
        check_sort<RadixSortAlgorithm::Onesweep>(keys, static_cast<const std::vector<uint32_t>*>(nullptr), {order});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(RadixSortFloats, NansZerosInfinitiesDenormalsFloat) {
  PRIMS_REQUIRE_GPU();
  check_special_floats<float, RadixSortAlgorithm::Onesweep, RadixSortAlgorithm::TileCounts,
                       RadixSortAlgorithm::OneBlock>();
}

TEST(RadixSortFloats, NansZerosInfinitiesDenormalsDouble) {
  PRIMS_REQUIRE_GPU();
  check_special_floats<double, RadixSortAlgorithm::Onesweep, RadixSortAlgorithm::TileCounts,
                       RadixSortAlgorithm::OneBlock>();
}

/// Full tiles of floats take a faster digit path when the histogram finds no NaN and no -0.0: finite keys of every
/// sign, exponent and denormal, then the same keys with one NaN or one -0.0 in the middle of a full tile (which
/// must send every tile back to the exact path).
template <class F>
void check_floats_plain_and_exact_paths() {
  using Key = prims::RadixKey<F>;
  std::vector<F> keys = random_keys<F>(3 * kOnesweepTile + 5, 19);
  for (auto& key : keys) {
    if (Key::is_special(key)) key = F(1.5);
  }
  keys[7] = std::numeric_limits<F>::infinity();
  keys[8] = -std::numeric_limits<F>::infinity();
  keys[9] = F(0);
  std::vector<uint32_t> index(keys.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<uint32_t>(i);
  for (F special : {F(1.5), std::numeric_limits<F>::quiet_NaN(), -F(0)}) {
    std::vector<F> case_keys = keys;
    case_keys[kOnesweepTile + 100] = special;
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_sort<RadixSortAlgorithm::Onesweep>(case_keys, static_cast<const std::vector<uint32_t>*>(nullptr), {order});
      check_sort<RadixSortAlgorithm::Onesweep>(case_keys, &index, {order});
      check_sort<RadixSortAlgorithm::Onesweep>(case_keys, &index, {order, 5, Key::kBits - 3});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(RadixSortFloats, PlainAndExactDigitPathsFloat) {
  PRIMS_REQUIRE_GPU();
  check_floats_plain_and_exact_paths<float>();
}

TEST(RadixSortFloats, PlainAndExactDigitPathsDouble) {
  PRIMS_REQUIRE_GPU();
  check_floats_plain_and_exact_paths<double>();
}

// ---- Large inputs, generated and validated on the GPU.

__device__ uint32_t hash32(uint64_t i) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return static_cast<uint32_t>(x >> 32);
}

template <class K>
__global__ void generate_kernel(K* keys, uint32_t* index, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    if constexpr (std::is_same_v<K, float>) {
      // Random bits of every sign, exponent and denormal, but no NaN, infinity or -0.0 (the plain digit path).
      uint32_t bits = hash32(i);
      if ((bits & 0x7f800000u) == 0x7f800000u) bits &= ~0x00800000u;
      if (bits == 0x80000000u) bits = 0;
      memcpy(&keys[i], &bits, sizeof(bits));
    } else {
      keys[i] = static_cast<K>(hash32(i));
      // 8-byte keys get random high words too, so that no pass is trivial.
      if constexpr (sizeof(K) == 8) keys[i] |= static_cast<K>(hash32(i + n)) << 32;
    }
    if (index != nullptr) index[i] = static_cast<uint32_t>(i);
  }
}

/// Folds per-thread statistics over the warp and adds them to `stats` with one atomic per warp.
__device__ void add_stats(unsigned long long (&local)[6], unsigned long long* stats) {
  for (int i = 0; i < 6; ++i) {
    const unsigned long long total = prims::warp::reduce_shuffle(local[i], prims::Sum{});
    if (threadIdx.x % 32 == 0 && total != 0) atomicAdd(&stats[i], total);
  }
}

/// Two independent hashes of a key's bits: sums of them over the keys are a fingerprint of the multiset of keys
/// (unlike sums and xors of the bits themselves, which {1, 2} and {0, 3} share).
__device__ unsigned long long key_hash(unsigned long long bits, int which) {
  return prims::mix_bits(bits + (which == 0 ? 0x243F6A8885A308D3ull : 0x13198A2E03707344ull));
}

/// [0], [1] the sums of the two key hashes, [2] out-of-order neighbours; with values (input indices): [3] values
/// that do not point at their key, [4] equal neighbours out of input order, [5] indices seen twice (via `seen`).
/// For 1-byte keys, every value's count too (`in_counts`, `out_counts`: 256 counters each).
template <class K>
__global__ void check_kernel(const K* in, const K* out, const uint32_t* values, unsigned* seen, size_t n,
                             unsigned long long* in_stats, unsigned long long* out_stats,
                             unsigned long long* in_counts, unsigned long long* out_counts) {
  __shared__ unsigned block_counts[2][256];
  if constexpr (sizeof(K) == 1) {
    for (int i = threadIdx.x; i < 512; i += blockDim.x) block_counts[i / 256][i % 256] = 0;
    __syncthreads();
  }
  unsigned long long in_local[6] = {}, out_local[6] = {};
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const auto in_bits = static_cast<unsigned long long>(prims::RadixKey<K>::raw_bits(in[i]));
    const auto out_bits = static_cast<unsigned long long>(prims::RadixKey<K>::raw_bits(out[i]));
    for (int which = 0; which < 2; ++which) {
      in_local[which] += key_hash(in_bits, which);
      out_local[which] += key_hash(out_bits, which);
    }
    if constexpr (sizeof(K) == 1) {
      atomicAdd(&block_counts[0][in_bits], 1u);
      atomicAdd(&block_counts[1][out_bits], 1u);
    }
    if (i + 1 < n) {
      const auto here = prims::RadixKey<K>::ordered_bits(out[i]);
      const auto next = prims::RadixKey<K>::ordered_bits(out[i + 1]);
      out_local[2] += next < here;
      if (values != nullptr) out_local[4] += next == here && values[i + 1] < values[i];
    }
    if (values != nullptr) {
      const uint32_t v = values[i];
      out_local[3] += v >= n || prims::RadixKey<K>::raw_bits(in[v]) != out_bits;
      if (v < n) out_local[5] += (atomicOr(&seen[v / 32], 1u << (v % 32)) >> (v % 32)) & 1u;
    }
  }
  add_stats(in_local, in_stats);
  add_stats(out_local, out_stats);
  if constexpr (sizeof(K) == 1) {
    __syncthreads();
    for (int i = threadIdx.x; i < 512; i += blockDim.x) {
      const unsigned count = block_counts[i / 256][i % 256];
      if (count != 0) atomicAdd(&(i < 256 ? in_counts : out_counts)[i % 256], count);
    }
  }
}

/// What check_kernel found, downloaded.
struct LargeCheck {
  std::vector<unsigned long long> stats;   // in [0, 6), out [6, 12)
  std::vector<unsigned long long> counts;  // 1-byte keys: in [0, 256), out [256, 512)
};

/// Runs check_kernel on a sorted output: `values` (input indices) may be null.
template <class K>
LargeCheck run_large_check(const K* in, const K* out, const uint32_t* values, size_t n) {
  prims::DeviceBuffer<unsigned> seen(values != nullptr ? (n + 31) / 32 : 0);
  prims::DeviceBuffer<unsigned long long> stats(12), counts(512);
  if (values != nullptr) seen.fill_bytes(0);
  stats.fill_bytes(0);
  counts.fill_bytes(0);
  check_kernel<<<1024, 256>>>(in, out, values, seen.data(), n, stats.data(), stats.data() + 6, counts.data(),
                              counts.data() + 256);
  prims::check(cudaDeviceSynchronize(), "check_kernel");
  return {stats.download(), counts.download()};
}

void expect_large_check_passes(const LargeCheck& check, bool one_byte_keys) {
  const auto& s = check.stats;
  EXPECT_EQ(s[0], s[6]) << "key multiset (first hash sum)";
  EXPECT_EQ(s[1], s[7]) << "key multiset (second hash sum)";
  EXPECT_EQ(s[8], 0u) << "neighbours out of order";
  EXPECT_EQ(s[9], 0u) << "values not matching their keys";
  EXPECT_EQ(s[10], 0u) << "equal keys out of input order";
  EXPECT_EQ(s[11], 0u) << "indices repeated";
  if (one_byte_keys) {
    for (int v = 0; v < 256; ++v) EXPECT_EQ(check.counts[v], check.counts[256 + v]) << "count of key " << v;
  }
}

template <RadixSortAlgorithm ALGORITHM, class K>
void check_large(size_t n, bool pairs) {
  prims::DeviceBuffer<K> keys_in(n), keys_out(n);
  prims::DeviceBuffer<uint32_t> index_in(pairs ? n : 0), index_out(pairs ? n : 0);
  generate_kernel<<<1024, 256>>>(keys_in.data(), pairs ? index_in.data() : nullptr, n);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  keys_out.fill_bytes(0xCD);
  if (pairs) index_out.fill_bytes(0xCD);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    if (!pairs) {
      return prims::device::radix_sort_keys<ALGORITHM>(temp, bytes, keys_in.data(), keys_out.data(), n);
    }
    return prims::device::radix_sort_pairs<ALGORITHM>(temp, bytes, keys_in.data(), keys_out.data(), index_in.data(),
                                                      index_out.data(), n);
  });
  expect_large_check_passes(run_large_check(keys_in.data(), keys_out.data(), pairs ? index_out.data() : nullptr, n),
                            sizeof(K) == 1);
}

/// Makes a sorted output wrong in a way that keeps it sorted and keeps the sum and the xor of its keys: the first
/// pair out[i] even < out[i + 1] - 1 odd becomes out[i] + 1, out[i + 1] - 1.
__global__ void swap_one_unit_kernel(uint32_t* out, size_t n) {
  for (size_t i = 0; i + 1 < n; ++i) {
    if (out[i] % 2 == 0 && out[i + 1] % 2 == 1 && out[i] + 1 < out[i + 1]) {
      ++out[i];
      --out[i + 1];
      return;
    }
  }
}

/// The large check itself: it catches a sorted output whose keys keep their sum and xor but not their multiset,
/// and one key's count off by one among 1-byte keys.
TEST(RadixSortLarge, CheckCatchesWrongMultisets) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 20;
  prims::DeviceBuffer<uint32_t> keys(n), sorted(n);
  generate_kernel<<<1024, 256>>>(keys.data(), static_cast<uint32_t*>(nullptr), n);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::radix_sort_keys(temp, bytes, keys.data(), sorted.data(), n);
  });
  const LargeCheck good = run_large_check(keys.data(), sorted.data(), nullptr, n);
  EXPECT_EQ(good.stats[0], good.stats[6]);
  EXPECT_EQ(good.stats[8], 0u);
  swap_one_unit_kernel<<<1, 1>>>(sorted.data(), n);
  const LargeCheck bad = run_large_check(keys.data(), sorted.data(), nullptr, n);
  EXPECT_EQ(bad.stats[8], 0u) << "still sorted";
  EXPECT_NE(bad.stats[0], bad.stats[6]);
  EXPECT_NE(bad.stats[1], bad.stats[7]);

  std::vector<uint8_t> bytes(5000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 / 3);
  std::vector<uint8_t> wrong = bytes;
  std::sort(wrong.begin(), wrong.end());
  size_t step = 100;
  while (wrong[step] == wrong[step - 1]) ++step;
  wrong[step] = wrong[step - 1];  // one key's count up, the next key's down; still sorted
  prims::DeviceBuffer<uint8_t> d_bytes(bytes.size()), d_wrong(wrong.size());
  d_bytes.upload(bytes);
  d_wrong.upload(wrong);
  const LargeCheck counted = run_large_check(d_bytes.data(), d_wrong.data(), nullptr, bytes.size());
  EXPECT_NE(counted.counts, std::vector<unsigned long long>(counted.counts.size(), 0));
  EXPECT_FALSE(std::equal(counted.counts.begin(), counted.counts.begin() + 256, counted.counts.begin() + 256));
}

/// Every tuning table on this GPU where the tables differ: Onesweep's wide digit histogram (from 2^26 keys on; the
/// 99 KB table keeps half the counter copies), for 4- and 8-byte keys, and the hybrid sort.
TEST(RadixSortLarge, EveryTuningTableAtTheWideHistogram) {
  PRIMS_REQUIRE_GPU();
  for (const auto generation : prims::test::kEveryGeneration) {
    SCOPED_TRACE(prims::detail::generation_name(generation));
    const prims::test::ForcedTuning forced(generation);
    check_large<RadixSortAlgorithm::Onesweep, uint32_t>((size_t{1} << 26) + 5, false);
    check_large<RadixSortAlgorithm::Onesweep, uint64_t>((size_t{1} << 26) + 3, false);
    check_large<RadixSortAlgorithm::Hybrid, uint64_t>((size_t{1} << 26) + 1, true);
  }
}

TEST(RadixSortLarge, Keys2To28Onesweep) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint32_t>(size_t{1} << 28, false);
}

TEST(RadixSortLarge, Keys2To28TileCounts) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::TileCounts, uint32_t>(size_t{1} << 28, false);
}

TEST(RadixSortLarge, Pairs2To26BothAlgorithms) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint32_t>((size_t{1} << 26) + 3, true);
  check_large<RadixSortAlgorithm::TileCounts, uint32_t>((size_t{1} << 26) + 3, true);
}

TEST(RadixSortLarge, FloatKeys2To26Onesweep) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, float>((size_t{1} << 26) + 3, false);
}

TEST(RadixSortLarge, Keys64Bit2To26Onesweep) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint64_t>((size_t{1} << 26) + 1, false);
}

// 2^27 + 1 u64 keys take four top passes (25 bits).
TEST(RadixSortLarge, Hybrid2To26And2To27) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Hybrid, uint64_t>((size_t{1} << 27) + 1, false);
  check_large<RadixSortAlgorithm::Hybrid, uint64_t>((size_t{1} << 26) + 3, true);
  check_large<RadixSortAlgorithm::Hybrid, uint32_t>((size_t{1} << 27) + 3, false);
}

// From 2^30 - 1 keys Hybrid is Onesweep alone; just below it, Hybrid's own passes.
TEST(RadixSortLarge, HybridAroundItsOnesweepSwitch) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Hybrid, uint64_t>((size_t{1} << 30) - 2, false);
  check_large<RadixSortAlgorithm::Hybrid, uint64_t>((size_t{1} << 30) - 1, false);
}

// Past 2^30 keys Onesweep's look-back runs in portions; past 2^32 its positions are 64-bit.
TEST(RadixSortLarge, Keys2To31OnesweepPortions) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint32_t>((size_t{1} << 31) + 7, false);
}

TEST(RadixSortLarge, Pairs2To30OnesweepPortions) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint32_t>((size_t{1} << 30) + 3, true);
}

TEST(RadixSortLarge, KeysPast2To32Onesweep64BitPositions) {
  PRIMS_REQUIRE_GPU();
  check_large<RadixSortAlgorithm::Onesweep, uint8_t>((size_t{1} << 32) + 5, false);
}

}  // namespace
