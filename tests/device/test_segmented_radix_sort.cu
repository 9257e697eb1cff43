// prims::device::segmented_radix_sort_keys / segmented_radix_sort_pairs against a CPU reference: each segment
// stably sorted on its own by its keys' sort bits (sort_reference.cuh), compared bitwise over the whole output, so
// elements outside every segment must keep the poison the outputs were filled with (or the input, in place).
// Every key type, both orders, every size class and its edges, pairs (values = input index: stability), value
// types of 1 to 16 bytes, bit ranges, in place, empty and unordered and gapped segments, 2^16 and 2^20 tiny
// segments, power-law sizes, one segment covering everything, key distributions that make passes trivial, special
// floats, signed and 64-bit offsets, offsets past 2^32.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.cuh"
#include "late_stream.cuh"
#include "prims/device/segmented_radix_sort.cuh"
#include "sort_check.cuh"
#include "sort_reference.cuh"
#include "sort_test_buffers.cuh"

namespace {

using prims::device::Order;
namespace detail = prims::detail;
using prims::test::bit_patterns;
using prims::test::index_values;
using prims::test::Payload;
using prims::test::random_keys;
using prims::test::SortCase;

/// The size-class edges of the sort of K (with values V): the counted classes' limits, the packed slots, the tile, the
/// local tile and the Onesweep class.
template <class K, class V>
struct Classes {
  using Policy = detail::TuningSm90::SegmentedSort<K, std::conditional_t<std::is_void_v<V>, detail::NoValues, V>>;
  static constexpr size_t tiny = Policy::counting_tiny_items;
  static constexpr size_t small = Policy::counting_small_items;
  static constexpr size_t counted = Policy::counting_max_items;
  static constexpr size_t packed16 = Policy::packed16_slot_items;
  static constexpr size_t packed4 = Policy::packed4_slot_items;
  static constexpr size_t tile = Policy::tile_items;
  static constexpr size_t local = Policy::local_tile_items;
  static constexpr size_t onesweep = Policy::onesweep_min_items;

  /// Sizes on both sides of every class edge, large segments of one and several tiles, and segments sorted by the
  /// shared Onesweep passes.
  static std::vector<size_t> edge_sizes() {
    return {0,        1,           2,           3,           tiny - 1,     tiny,         tiny + 1,
            small - 1, small,      small + 1,   counted - 1, counted,      counted + 1,  packed16 - 1,
            packed16, packed16 + 1, packed4 - 1, packed4,     packed4 + 1,  tile - 1,     tile,
            tile + 1, 2 * tile - 1, 2 * tile + 5, 3 * tile,   local - 1,     local,      local + 1,
            5 * tile + 17, onesweep, onesweep + 1, 3 * onesweep + 4321};
  }
};

/// Where the segments lie: begins[i], ends[i], inside [0, n).
struct Layout {
  std::vector<size_t> begins;
  std::vector<size_t> ends;
  size_t n = 0;
};

/// Segments of the given sizes, one after another with gaps of 0 to max_gap elements before each (and after the
/// last), in a shuffled order when `shuffle`.
Layout layout(const std::vector<size_t>& sizes, size_t max_gap, bool shuffle, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Layout l;
  size_t position = 0;
  for (size_t size : sizes) {
    position += max_gap == 0 ? 0 : rng() % (max_gap + 1);
    l.begins.push_back(position);
    l.ends.push_back(position + size);
    position += size;
  }
  l.n = position + (max_gap == 0 ? 0 : rng() % (max_gap + 1));
  if (shuffle) {
    std::vector<size_t> order(sizes.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    Layout shuffled = l;
    for (size_t i = 0; i < order.size(); ++i) {
      shuffled.begins[i] = l.begins[order[i]];
      shuffled.ends[i] = l.ends[order[i]];
    }
    return shuffled;
  }
  return l;
}

template <class Offset>
std::vector<Offset> as_offsets(const std::vector<size_t>& positions) {
  std::vector<Offset> offsets(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) offsets[i] = static_cast<Offset>(positions[i]);
  return offsets;
}

std::string describe(const SortCase& c, int end_bit, size_t n, size_t segments) {
  return "n = " + std::to_string(n) + ", " + std::to_string(segments) + " segments, bits [" +
         std::to_string(c.begin_bit) + ", " + std::to_string(end_bit) + ")" +
         (c.order == Order::Descending ? ", descending" : "") + (c.in_place ? ", in place" : "");
}

/// The first index where two arrays differ bytewise, or -1.
template <class T>
long first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<long>(i);
  }
  return -1;
}

/// `poisoned` with every segment sorted: what the outputs must hold afterwards (keys, and values when given).
template <class K, class V, class Offset>
void reference(const std::vector<K>& keys, const std::vector<V>* values, const std::vector<Offset>& begins,
               const std::vector<Offset>& ends, Order order, int begin_bit, int end_bit, std::vector<K>& out_keys,
               std::vector<V>* out_values) {
  for (size_t s = 0; s < begins.size(); ++s) {
    if (!(ends[s] > begins[s])) continue;
    const auto begin = static_cast<size_t>(begins[s]);
    const auto end = static_cast<size_t>(ends[s]);
    const std::vector<K> segment(keys.begin() + begin, keys.begin() + end);
    const auto permutation = prims::test::reference_sort_permutation(segment, order, begin_bit, end_bit);
    for (size_t i = 0; i < permutation.size(); ++i) {
      out_keys[begin + i] = segment[permutation[i]];
      if (values != nullptr) (*out_values)[begin + i] = (*values)[begin + permutation[i]];
    }
  }
}

template <class T>
std::vector<T> poison(size_t n) {
  std::vector<T> items(n);
  if (n > 0) std::memset(static_cast<void*>(items.data()), 0xCD, n * sizeof(T));
  return items;
}

/// Sorts the segments of `keys` (and `values`, when given) on the GPU and checks the whole outputs bitwise.
template <class K, class V, class Offset>
void check_segmented(const std::vector<K>& keys, const std::vector<V>* values, const std::vector<Offset>& begins,
                     const std::vector<Offset>& ends, SortCase c) {
  const size_t n = keys.size();
  const size_t num_segments = begins.size();
  const int end_bit = c.end_bit < 0 ? prims::RadixKey<K>::kBits : c.end_bit;
  std::vector<K> expected_keys = c.in_place ? keys : poison<K>(n);
  std::vector<V> expected_values;
  if (values != nullptr) expected_values = c.in_place ? *values : poison<V>(n);
  reference(keys, values, begins, ends, c.order, c.begin_bit, end_bit, expected_keys,
            values != nullptr ? &expected_values : nullptr);

  prims::test::SortTestBuffers<K, V> buffers(keys, values, c.in_place);
  prims::DeviceBuffer<Offset> d_begins(std::max<size_t>(num_segments, 1)), d_ends(std::max<size_t>(num_segments, 1));
  if (num_segments > 0) {
    d_begins.upload(begins);
    d_ends.upload(ends);
  }
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    if (values == nullptr) {
      return prims::device::segmented_radix_sort_keys(temp, bytes, buffers.keys_in.data(),
                                                      buffers.keys_destination(), n, num_segments, d_begins.data(),
                                                      d_ends.data(), c.order, c.begin_bit, end_bit);
    }
    return prims::device::segmented_radix_sort_pairs(
        temp, bytes, buffers.keys_in.data(), buffers.keys_destination(), buffers.values_in.data(),
        buffers.values_destination(), n, num_segments, d_begins.data(), d_ends.data(), c.order, c.begin_bit, end_bit);
  });
  const std::string where = describe(c, end_bit, n, num_segments);
  buffers.expect_inputs_and_guards_untouched(keys, values, where);
  const auto got_keys = buffers.sorted_keys();
  ASSERT_EQ(-1, first_difference(bit_patterns(got_keys), bit_patterns(expected_keys))) << "keys, " << where;
  if (values != nullptr) {
    const auto got_values = buffers.sorted_values();
    ASSERT_EQ(-1, first_difference(got_values, expected_values)) << "values, " << where;
  }
}

template <class K, class Offset = int>
void check_keys(const std::vector<K>& keys, const Layout& l, SortCase c) {
  check_segmented(keys, static_cast<const std::vector<uint32_t>*>(nullptr), as_offsets<Offset>(l.begins),
                  as_offsets<Offset>(l.ends), c);
}

/// Values 0, 1, ..., n - 1.
std::vector<uint32_t> iota_values(size_t n) {
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0u);
  return index;
}

template <class K, class Offset = int>
void check_pairs(const std::vector<K>& keys, const Layout& l, SortCase c) {
  const auto index = iota_values(keys.size());
  check_segmented(keys, &index, as_offsets<Offset>(l.begins), as_offsets<Offset>(l.ends), c);
}

/// Keys with few distinct values (many equal keys: stability shows), drawn from `keys` themselves.
template <class K>
std::vector<K> few_distinct(std::vector<K> keys, int distinct) {
  for (auto& key : keys) key = keys[static_cast<size_t>(prims::RadixKey<K>::raw_bits(key)) % distinct];
  return keys;
}

template <class K>
class SegmentedSortTyped : public ::testing::Test {};
TYPED_TEST_SUITE(SegmentedSortTyped, prims::test::RadixKeyTypes);

/// One segment of every size around every class edge, in order without gaps, then shuffled with gaps.
TYPED_TEST(SegmentedSortTyped, KeysEveryClassEdge) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const auto sizes = Classes<K, void>::edge_sizes();
  for (bool gaps : {false, true}) {
    const Layout l = layout(sizes, gaps ? 7 : 0, gaps, 1 + sizeof(K));
    const auto keys = random_keys<K>(l.n, l.n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_keys(keys, l, {order});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Few distinct keys, values = input index: equal keys keep their input order, in every class, both orders.
TYPED_TEST(SegmentedSortTyped, PairsStableEveryClassEdge) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const Layout l = layout(Classes<K, uint32_t>::edge_sizes(), 5, true, 7);
  const auto keys = few_distinct(random_keys<K>(l.n, 3), 5);
  for (Order order : {Order::Ascending, Order::Descending}) {
    check_pairs(keys, l, {order});
    check_pairs(keys, l, {order, 0, -1, /*in_place=*/true});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

template <class K, class V>
cudaError_t local_class_fits(bool& fits) {
  return detail::segmented::segmented_local_class_fits<detail::TuningSm90, K, V,
                                                       detail::TuningSm90::SegmentedSort<K, V>>(fits);
}

/// The shared memory a block of the local class takes for keys K alone.
template <class K>
constexpr size_t local_class_keys_bytes() {
  using Policy = detail::TuningSm90::SegmentedSort<K, detail::NoValues>;
  return sizeof(typename detail::segmented::SegmentedLocalTile<K, detail::NoValues, Policy>::TempStorage);
}

/// Shared memory capped at the 99 KB a block of sm_86, sm_89 and sm_120 parts gets (keys alone still fit the local
/// class there, pairs of 4-byte keys and values ask for 160 KB), then 1 KB below what the local class takes for keys
/// alone (no local class at all; every other launch still fits, as a launch over the cap fails): segments the local
/// class cannot take go to the large class, and every class edge still sorts, keys and stable pairs.
TYPED_TEST(SegmentedSortTyped, EveryClassEdgeUnderASharedMemoryCap) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  const prims::test::ForcedTuning device_table(-1, 0);  // the device's table, uncapped, whatever the test run forces
  bool fits = false;
  ASSERT_EQ(cudaSuccess, (local_class_fits<K, uint32_t>(fits)));
  ASSERT_TRUE(fits) << "the local class fits an H100's block";
  const Layout l = layout(Classes<K, uint32_t>::edge_sizes(), 5, true, 11);
  const auto keys = random_keys<K>(l.n, l.n);
  const auto few = few_distinct(random_keys<K>(l.n, 3), 5);
  constexpr size_t kBelowLocal = local_class_keys_bytes<K>() - 1024;
  for (size_t cap : {size_t{99} * 1024, kBelowLocal}) {
    SCOPED_TRACE("shared memory cap " + std::to_string(cap));
    const prims::test::ForcedTuning capped(-1, cap);
    if (cap == kBelowLocal) {
      ASSERT_EQ(cudaSuccess, (local_class_fits<K, detail::NoValues>(fits)));
      ASSERT_FALSE(fits) << "under the cap the local class is off";
      ASSERT_EQ(cudaSuccess, (local_class_fits<K, uint32_t>(fits)));
      ASSERT_FALSE(fits);
    }
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_keys(keys, l, {order});
      check_pairs(few, l, {order});
      check_pairs(few, l, {order, 0, -1, /*in_place=*/true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Bit subranges (one pass, an odd number, a partial last digit, none at all) and in place.
TYPED_TEST(SegmentedSortTyped, BitRangesAndInPlace) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  constexpr int bits = prims::RadixKey<K>::kBits;
  const Layout l = layout(Classes<K, uint32_t>::edge_sizes(), 3, true, 11);
  const auto keys = random_keys<K>(l.n, 77);
  for (auto [begin_bit, end_bit] : {std::pair{0, 0}, std::pair{0, 1}, std::pair{1, bits}, std::pair{3, bits - 2},
                                    std::pair{bits / 2, bits}, std::pair{0, bits / 2 + 1}}) {
    for (bool in_place : {false, true}) {
      for (Order order : {Order::Ascending, Order::Descending}) {
        const SortCase c{order, begin_bit, end_bit, in_place};
        check_keys(keys, l, c);
        check_pairs(keys, l, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// 2^16 segments of 1 to 64 keys (many groups per block in the packed classes), with gaps and shuffled.
TYPED_TEST(SegmentedSortTyped, ManyTinySegments) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  std::mt19937 rng(5);
  std::vector<size_t> sizes(size_t{1} << 16);
  for (auto& size : sizes) size = 1 + rng() % 64;
  const Layout l = layout(sizes, 2, true, 13);
  const auto keys = random_keys<K>(l.n, 21);
  check_keys(keys, l, {Order::Ascending});
  check_pairs(few_distinct(keys, 3), l, {Order::Descending});
}

TEST(SegmentedSort, InvalidArguments) {
  uint32_t* keys = nullptr;
  int* offsets = nullptr;
  size_t bytes = 0;
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::segmented_radix_sort_keys(nullptr, bytes, keys, keys, 10, 2, offsets,
                                                                            offsets, Order::Ascending, -1, 8));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::segmented_radix_sort_keys(nullptr, bytes, keys, keys, 10, 2, offsets,
                                                                            offsets, Order::Ascending, 0, 33));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::segmented_radix_sort_pairs(nullptr, bytes, keys, keys, keys, keys, 10,
                                                                             2, offsets, offsets, Order::Ascending,
                                                                             9, 8));
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::segmented_radix_sort_keys(nullptr, bytes, keys, keys, 10, size_t{1} << 32, offsets,
                                                     offsets));
  // The counted classes' lists hold begin * 64 + size - 1 in 64 bits.
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::segmented_radix_sort_keys(nullptr, bytes, keys, keys,
                                                                            (size_t{1} << 58) + 1, 2, offsets, offsets));
  bytes = 0;
  EXPECT_EQ(cudaSuccess, prims::device::segmented_radix_sort_keys(nullptr, bytes, keys, keys, size_t{1} << 20, 2,
                                                                  offsets, offsets));
  EXPECT_GT(bytes, 0u);
}

/// The temporary storage depends on n and the number of segments only, and a too small one is refused.
TEST(SegmentedSort, TempStorageSizing) {
  PRIMS_REQUIRE_GPU();
  uint32_t* keys = nullptr;
  int* offsets = nullptr;
  size_t small = 0, large = 0;
  ASSERT_EQ(cudaSuccess, prims::device::segmented_radix_sort_keys(nullptr, small, keys, keys, 1000, 10, offsets,
                                                                  offsets));
  ASSERT_EQ(cudaSuccess, prims::device::segmented_radix_sort_keys(nullptr, large, keys, keys, 100000, 10, offsets,
                                                                  offsets));
  EXPECT_GT(small, 0u);
  EXPECT_GT(large, small);  // room for large segments' passes
  prims::DeviceBuffer<unsigned char> temp(small);
  size_t too_small = small - 1;
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::segmented_radix_sort_keys(temp.data(), too_small, keys, keys, 1000,
                                                                            10, offsets, offsets));
}

/// No keys, no segments, only empty segments (end == begin and, with signed offsets, end < begin): nothing is
/// written.
TEST(SegmentedSort, EmptySegments) {
  PRIMS_REQUIRE_GPU();
  const auto keys = random_keys<uint32_t>(5000, 1);
  check_keys(std::vector<uint32_t>{}, Layout{}, {});
  check_keys(keys, Layout{{}, {}, keys.size()}, {});
  check_segmented(keys, static_cast<const std::vector<uint32_t>*>(nullptr), std::vector<int>{0, 10, 4000, 4999, 3},
                  std::vector<int>{0, 10, 4000, 4999, 1}, SortCase{});
  check_segmented(keys, static_cast<const std::vector<uint32_t>*>(nullptr), std::vector<int64_t>{7, 100, 300},
                  std::vector<int64_t>{-5, 50, 300}, SortCase{Order::Descending});
  // Empty segments among others of every class.
  std::vector<size_t> sizes = Classes<uint32_t, uint32_t>::edge_sizes();
  for (size_t i = 0; i < sizes.size(); i += 2) sizes.insert(sizes.begin() + i, 0);
  const Layout l = layout(sizes, 4, true, 3);
  const auto more_keys = random_keys<uint32_t>(l.n, 2);
  check_keys(more_keys, l, {});
  check_pairs(more_keys, l, {Order::Descending});
}

/// One segment covering the whole input, around tile multiples and at 2^20 + 17.
TEST(SegmentedSort, OneSegmentCoveringEverything) {
  PRIMS_REQUIRE_GPU();
  const size_t tile = Classes<uint32_t, void>::tile;
  for (size_t n : {tile - 1, tile, tile + 1, 2 * tile, 3 * tile + 1, (size_t{1} << 20) + 17}) {
    const Layout l = layout({n}, 0, false, 0);
    const auto keys = random_keys<uint32_t>(n, n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_keys(keys, l, {order});
      check_pairs(keys, l, {order});
      check_keys(keys, l, {order, 0, -1, true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  const size_t n = (size_t{1} << 20) + 17;
  const Layout l = layout({n}, 0, false, 0);
  check_keys(random_keys<float>(n, 4), l, {Order::Descending});
  check_pairs(random_keys<uint64_t>(n, 5), l, {Order::Ascending, 0, -1, true});
  check_pairs(few_distinct(random_keys<double>(n, 6), 9), l, {Order::Descending});
}

/// 2^20 segments of 1 to 64 keys, keys and pairs.
TEST(SegmentedSort, MillionTinySegments) {
  PRIMS_REQUIRE_GPU();
  std::mt19937 rng(9);
  std::vector<size_t> sizes(size_t{1} << 20);
  for (auto& size : sizes) size = 1 + rng() % 64;
  const Layout l = layout(sizes, 0, false, 0);
  const auto keys = random_keys<uint32_t>(l.n, 10);
  check_keys(keys, l, {});
  check_pairs(few_distinct(keys, 1000), l, {Order::Descending});
}

/// Sizes from a power law (many tiny segments, a few large ones), shuffled with gaps: every class at once.
TEST(SegmentedSort, PowerLawSizes) {
  PRIMS_REQUIRE_GPU();
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<size_t> sizes;
  size_t total = 0;
  while (total < (size_t{1} << 22)) {
    // P(size > s) ~ s^-0.8, capped at 2^18.
    const auto size = static_cast<size_t>(std::min(std::pow(1.0 - uniform(rng), -1.25), 262144.0)) - 1;
    sizes.push_back(size);
    total += size;
  }
  const Layout l = layout(sizes, 3, true, 19);
  const auto keys = random_keys<uint32_t>(l.n, 23);
  check_keys(keys, l, {});
  check_pairs(keys, l, {Order::Descending});
  check_pairs(few_distinct(keys, 4), l, {Order::Ascending, 0, -1, true});
  check_keys(random_keys<double>(l.n, 29), l, {Order::Descending, 0, -1, true});
}

/// Key distributions that make some, all or no passes of large segments trivial (one digit for every key: the
/// pass is skipped, which changes where the passes ping-pong): all equal, only the low byte varying (one pass:
/// odd, so in place ends with a copy back), the low two bytes (two passes), sorted, reversed.
TEST(SegmentedSort, TrivialPassesInLargeSegments) {
  PRIMS_REQUIRE_GPU();
  const size_t tile = Classes<uint32_t, void>::tile;
  const Layout l = layout({3 * tile + 7, 200, tile + 1, 20 * tile}, 9, true, 31);
  std::mt19937 rng(37);
  for (int kind = 0; kind < 5; ++kind) {
    std::vector<uint32_t> keys(l.n);
    for (size_t i = 0; i < l.n; ++i) {
      const uint32_t r = rng();
      keys[i] = kind == 0   ? 0x12345678u
                : kind == 1 ? 0xABCD0000u | (r & 0xFFu)
                : kind == 2 ? 0x77000000u | (r & 0xFFFFu)
                : kind == 3 ? static_cast<uint32_t>(i)
                            : static_cast<uint32_t>(l.n - i);
    }
    for (Order order : {Order::Ascending, Order::Descending}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE("distribution " + std::to_string(kind));
        check_keys(keys, l, {order, 0, -1, in_place});
        check_pairs(keys, l, {order, 0, -1, in_place});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// The shared Onesweep passes over many segments, so that each block of the histogram counts a run of tiles that
/// crosses segments (shuffled, with gaps, of sizes that end in partial tiles), in both orders.
TEST(SegmentedSort, OnesweepSegmentsAcrossHistogramBlocks) {
  PRIMS_REQUIRE_GPU();
  const size_t onesweep = Classes<uint32_t, uint32_t>::onesweep;
  std::vector<size_t> sizes;
  for (size_t s = 0; s < 400; ++s) sizes.push_back(onesweep + 1 + (s * 7919) % 20000);
  const Layout many = layout(sizes, 9, true, 61);
  std::mt19937 rng(67);
  std::vector<uint32_t> keys(many.n);
  for (auto& key : keys) key = rng();
  for (Order order : {Order::Ascending, Order::Descending}) {
    check_keys(keys, many, {order, 0, -1, false});
    check_pairs(keys, many, {order, 0, -1, false});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// The shared Onesweep passes on Onesweep's large tiles: 2^26 keys and more, in segments of 2^20 keys and more on
/// average (40 of 1.7 to 1.9 million keys).
TEST(SegmentedSort, OnesweepSegmentsOnLargeTiles) {
  PRIMS_REQUIRE_GPU();
  std::vector<size_t> sizes;
  for (size_t s = 0; s < 40; ++s) sizes.push_back((size_t{13} << 17) + (s * 104729) % 200000);
  const Layout large = layout(sizes, 0, true, 71);
  ASSERT_GE(large.n, size_t{1} << 26);
  std::mt19937 rng(71);
  std::vector<uint32_t> keys(large.n);
  for (auto& key : keys) key = rng();
  check_keys(keys, large, {Order::Ascending, 0, -1, false});
  check_keys(keys, large, {Order::Descending, 0, -1, true});
}

/// Segments sorted by the shared Onesweep passes, each with its own distribution, so that a pass is trivial for
/// some of them (their tiles are copied through) and not for others, in every order and in place: all equal,
/// only the low byte varying, random, sorted, reversed, two distinct keys.
TEST(SegmentedSort, OnesweepSegmentsOwnTrivialPasses) {
  PRIMS_REQUIRE_GPU();
  const size_t onesweep = Classes<uint32_t, uint32_t>::onesweep;
  const Layout l = layout({onesweep + 1, 3 * onesweep + 11, 100, 2 * onesweep, onesweep + 4097, 5 * onesweep, 7000,
                           onesweep + 2},
                          13, true, 43);
  std::mt19937 rng(47);
  std::vector<uint32_t> keys(l.n, 0xFEEDu);
  for (size_t s = 0; s < l.begins.size(); ++s) {
    for (size_t i = l.begins[s]; i < l.ends[s]; ++i) {
      const uint32_t r = rng();
      const size_t kind = s % 6;
      keys[i] = kind == 0   ? 0x12345678u
                : kind == 1 ? 0xABCD0000u | (r & 0xFFu)
                : kind == 2 ? r
                : kind == 3 ? static_cast<uint32_t>(i)
                : kind == 4 ? static_cast<uint32_t>(l.n - i)
                            : (r & 1u) << 31;
    }
  }
  for (Order order : {Order::Ascending, Order::Descending}) {
    for (bool in_place : {false, true}) {
      check_keys(keys, l, {order, 0, -1, in_place});
      check_pairs(keys, l, {order, 0, -1, in_place});
      check_pairs(keys, l, {order, 4, 20, in_place});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  for (bool in_place : {false, true}) check_pairs(keys, l, {Order::Ascending, 9, 9, in_place});  // no bits
}

/// n float keys, about one in `one_in` of them special (NaNs, zeros of both signs, infinities, denormals), the
/// others eighths from -125 to 125 (many ties).
template <class F>
std::vector<F> keys_with_specials(size_t n, unsigned one_in, unsigned seed) {
  const auto specials = prims::test::special_floats<F>();
  std::mt19937 rng(seed);
  std::vector<F> keys(n);
  for (auto& key : keys) {
    key = rng() % one_in == 0 ? specials[rng() % specials.size()]
                              : static_cast<F>(static_cast<int>(rng() % 2001) - 1000) / 8;
  }
  return keys;
}

template <class F>
void check_special_floats() {
  const Layout l = layout(Classes<F, uint32_t>::edge_sizes(), 4, true, 41);
  const auto keys = keys_with_specials<F>(l.n, 2, 3);
  for (Order order : {Order::Ascending, Order::Descending}) {
    check_keys(keys, l, {order});
    check_pairs(keys, l, {order});
    check_pairs(keys, l, {order, 0, -1, true});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(SegmentedSortFloats, NansZerosInfinitiesDenormalsFloat) {
  PRIMS_REQUIRE_GPU();
  check_special_floats<float>();
}

TEST(SegmentedSortFloats, NansZerosInfinitiesDenormalsDouble) {
  PRIMS_REQUIRE_GPU();
  check_special_floats<double>();
}

/// Small segments of float keys, a few of them holding a -0.0 or a NaN: keys-only sorts on every bit rebuild the
/// keys of the others from their sort bits and sort those few again with the keys' indices, in the same call.
template <class F>
void check_few_special_floats() {
  std::vector<size_t> sizes;
  for (int round = 0; round < 40; ++round) {
    for (size_t size : {1, 2, 5, 15, 16, 17, 33, 63, 64}) sizes.push_back(size);
  }
  const Layout l = layout(sizes, 3, true, 43);
  const auto keys = keys_with_specials<F>(l.n, 64, 4);
  for (Order order : {Order::Ascending, Order::Descending}) {
    for (bool in_place : {false, true}) {
      check_keys(keys, l, {order, 0, -1, in_place});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(SegmentedSortFloats, FewSmallSegmentsWithSpecialKeysFloat) {
  PRIMS_REQUIRE_GPU();
  check_few_special_floats<float>();
}

TEST(SegmentedSortFloats, FewSmallSegmentsWithSpecialKeysDouble) {
  PRIMS_REQUIRE_GPU();
  check_few_special_floats<double>();
}

/// Offsets of every integer type, signed and unsigned, 8 to 64 bits.
TEST(SegmentedSort, OffsetTypes) {
  PRIMS_REQUIRE_GPU();
  const Layout tiny = layout({0, 1, 7, 33, 64, 5}, 2, true, 43);
  const auto tiny_keys = random_keys<uint32_t>(tiny.n, 44);
  check_keys<uint32_t, int8_t>(tiny_keys, tiny, {});
  check_keys<uint32_t, uint8_t>(tiny_keys, tiny, {Order::Descending});
  const Layout l = layout(Classes<uint32_t, uint32_t>::edge_sizes(), 3, true, 45);
  const auto keys = random_keys<uint32_t>(l.n, 46);
  check_pairs<uint32_t, int32_t>(keys, l, {});
  check_pairs<uint32_t, uint32_t>(keys, l, {Order::Descending});
  check_pairs<uint32_t, int64_t>(keys, l, {});
  check_pairs<uint32_t, uint64_t>(keys, l, {Order::Descending, 0, -1, true});
  const Layout short_layout = layout({100, 5000, 20000, 3}, 1, true, 47);
  check_keys<uint32_t, int16_t>(random_keys<uint32_t>(short_layout.n, 48), short_layout, {});
  check_keys<uint32_t, uint16_t>(random_keys<uint32_t>(short_layout.n, 49), short_layout, {Order::Descending});
}

template <class K, class V>
void check_value_type() {
  const Layout l = layout(Classes<K, V>::edge_sizes(), 3, true, sizeof(V));
  const auto keys = few_distinct(random_keys<K>(l.n, sizeof(K) + sizeof(V)), 7);
  const auto values = index_values<V>(l.n);
  const auto begins = as_offsets<int64_t>(l.begins);
  const auto ends = as_offsets<int64_t>(l.ends);
  check_segmented(keys, &values, begins, ends, SortCase{Order::Ascending});
  check_segmented(keys, &values, begins, ends, SortCase{Order::Descending, 0, -1, true});
}

TEST(SegmentedSortValues, EveryWidth) {
  PRIMS_REQUIRE_GPU();
  prims::test::for_each_value_width(
      [](auto width) { check_value_type<uint32_t, typename decltype(width)::type>(); });
  check_value_type<uint8_t, Payload<16>>();
  check_value_type<double, Payload<16>>();
  check_value_type<int16_t, uint64_t>();
}

/// Segments of every size class on a non-blocking stream with work queued before and after the sort.
TEST(SegmentedSort, RunsOnItsStream) {
  PRIMS_REQUIRE_GPU();
  using C = Classes<uint32_t, uint32_t>;
  const Layout l = layout({0, 1, 7, C::counted + 1, C::packed4, C::tile + 3, C::local + 1, C::onesweep + 5, 40, 2},
                          9, /*shuffle=*/true, 12);
  const auto keys = random_keys<uint32_t>(l.n, 6);
  const auto index = iota_values(l.n);
  const auto begins = as_offsets<int>(l.begins), ends = as_offsets<int>(l.ends);
  std::vector<uint32_t> expected_keys = poison<uint32_t>(l.n), expected_values = poison<uint32_t>(l.n);
  reference(keys, &index, begins, ends, Order::Ascending, 0, 32, expected_keys, &expected_values);
  prims::DeviceBuffer<uint32_t> keys_in(l.n), keys_out(l.n), values_in(l.n), values_out(l.n);
  prims::DeviceBuffer<int> d_begins(begins.size()), d_ends(ends.size());
  auto call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return prims::device::segmented_radix_sort_pairs(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                                     values_out.data(), l.n, begins.size(), d_begins.data(),
                                                     d_ends.data(), Order::Ascending, 0, 32, s);
  };
  auto temp = prims::test::temp_for(call);
  keys_out.fill_bytes(0xCD);
  values_out.fill_bytes(0xCD);
  prims::test::LateStream late;
  late.upload_late(keys_in.data(), keys);
  late.upload_late(values_in.data(), index);
  late.upload_late(d_begins.data(), begins);
  late.upload_late(d_ends.data(), ends);
  late.run(temp, call);
  EXPECT_EQ(-1, first_difference(late.download(keys_out.data(), l.n), expected_keys)) << "keys";
  EXPECT_EQ(-1, first_difference(late.download(values_out.data(), l.n), expected_values)) << "values";
}

// ---- Offsets past 2^32: 1-byte keys in an array of 2^32 + 2^20 elements, segments near and past 2^32.

__device__ uint8_t generated_byte(size_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  return static_cast<uint8_t>(x >> 24);
}

__global__ void fill_bytes_kernel(uint8_t* keys, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    keys[i] = generated_byte(i);
  }
}

/// Adds to *count the bytes of [begin, end) that differ from `expected` (>= 0: that byte; -1: generated_byte(i)).
__global__ void count_differences_kernel(const uint8_t* bytes, size_t begin, size_t end, int expected,
                                         unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = begin + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < end;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    local += bytes[i] != (expected >= 0 ? static_cast<uint8_t>(expected) : generated_byte(i));
  }
  if (local != 0) atomicAdd(count, local);
}

/// The bytes of [begin, end) that differ from `expected` (see count_differences_kernel), counted on the GPU.
unsigned long long count_differences(const uint8_t* bytes, size_t begin, size_t end, int expected) {
  prims::DeviceBuffer<unsigned long long> count(1);
  count.fill_bytes(0);
  if (end > begin) count_differences_kernel<<<1024, 256>>>(bytes, begin, end, expected, count.data());
  prims::check(cudaDeviceSynchronize(), "count_differences_kernel");
  return count.download()[0];
}

TEST(SegmentedSortLarge, OffsetsPast2To32) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 32) + (size_t{1} << 20);
  const size_t base = (size_t{1} << 32) - 3000;
  const size_t tile = Classes<uint8_t, uint32_t>::tile;
  // Segments of every class straddling and following 2^32, unordered; the rest of the array is in no segment.
  const size_t onesweep = Classes<uint8_t, uint32_t>::onesweep;
  const std::vector<size_t> begins = {base + 100000, base,         base + 2 * tile + 10, base + 50000, base + 60000,
                                      base + 121000};
  const std::vector<size_t> ends = {base + 100000 + 5 * tile + 3, base + 2 * tile + 1, base + 2 * tile + 40,
                                    base + 50000 + 300,           base + 60000 + tile,  base + 121000 + onesweep + 5};
  const size_t window = 200000;  // [base - 100, base + window) holds every segment
  prims::DeviceBuffer<uint8_t> keys(n), out(n);
  fill_bytes_kernel<<<1024, 256>>>(keys.data(), n);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  out.fill_bytes(0xCD);
  prims::DeviceBuffer<uint64_t> d_begins(begins.size()), d_ends(ends.size());
  d_begins.upload(as_offsets<uint64_t>(begins));
  d_ends.upload(as_offsets<uint64_t>(ends));
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::segmented_radix_sort_keys(temp, bytes, keys.data(), out.data(), n, begins.size(),
                                                    d_begins.data(), d_ends.data(), Order::Descending);
  });
  std::vector<uint8_t> input(window + 100), got(window + 100);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(input.data(), keys.data() + base - 100, input.size(), cudaMemcpyDeviceToHost));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(got.data(), out.data() + base - 100, got.size(), cudaMemcpyDeviceToHost));
  std::vector<uint8_t> expected = poison<uint8_t>(input.size());
  std::vector<size_t> local_begins, local_ends;
  for (size_t s = 0; s < begins.size(); ++s) {
    local_begins.push_back(begins[s] - base + 100);
    local_ends.push_back(ends[s] - base + 100);
  }
  reference(input, static_cast<const std::vector<uint32_t>*>(nullptr), local_begins, local_ends, Order::Descending,
            0, 8, expected, static_cast<std::vector<uint32_t>*>(nullptr));
  EXPECT_EQ(-1, first_difference(got, expected));
  // Outside the window that holds every segment nothing was written, over the whole 4.3 GB output; the input is
  // as generated.
  EXPECT_EQ(0u, count_differences(out.data(), 0, base - 100, 0xCD)) << "written before the segments";
  EXPECT_EQ(0u, count_differences(out.data(), base + window, n, 0xCD)) << "written after the segments";
  EXPECT_EQ(0u, count_differences(keys.data(), 0, n, -1)) << "input changed";
}

}  // namespace
