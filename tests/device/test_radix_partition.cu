// prims::device::radix_partition_keys / radix_partition_pairs against a CPU reference: a stable sort on the
// digit's sort bits is the stable partition, and the bucket offsets are the digit counts scanned. Every key type,
// both orders, both pass algorithms, bit ranges, sizes around the tiles, pairs (stability), in place, skewed data.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.cuh"
#include "late_stream.cuh"
#include "prims/device/radix_partition.cuh"
#include "sort_check.cuh"
#include "sort_reference.cuh"
#include "sort_test_buffers.cuh"

namespace {

using prims::device::Order;
using prims::device::RadixSortAlgorithm;
namespace detail = prims::detail;

constexpr int kOnesweepTile = detail::radix::OnesweepTile<detail::TuningSm90::Onesweep<uint32_t, detail::NoValues>,
                                                          uint32_t, detail::NoValues>::kTileItems;
constexpr int kTileCountsTile = detail::radix::SortTile<detail::TuningSm90::TileCounts<uint32_t, detail::NoValues>,
                                                        uint32_t, detail::NoValues, size_t>::kTileItems;

using prims::test::bit_patterns;
using prims::test::random_keys;

struct PartitionCase {
  int begin_bit;
  int end_bit;
  Order order = Order::Ascending;
  bool in_place = false;
};

/// Partitions `keys` (with their input indices as values when `pairs`) and checks keys, values and offsets.
template <RadixSortAlgorithm ALGORITHM, class K, class V = uint32_t>
void check_partition(const std::vector<K>& keys, bool pairs, PartitionCase c) {
  const size_t n = keys.size();
  const size_t num_buckets = size_t{1} << (c.end_bit - c.begin_bit);
  const auto permutation = prims::test::reference_sort_permutation(keys, c.order, c.begin_bit, c.end_bit);
  std::vector<size_t> expected_offsets(num_buckets + 1, 0);
  for (const K& key : keys) ++expected_offsets[prims::test::reference_digit(key, c.order, c.begin_bit, c.end_bit) + 1];
  for (size_t b = 1; b <= num_buckets; ++b) expected_offsets[b] += expected_offsets[b - 1];
  const std::vector<V> index = prims::test::index_values<V>(n);

  prims::test::SortTestBuffers<K, V> buffers(keys, &index, c.in_place);
  prims::DeviceBuffer<size_t> offsets(num_buckets + 1);
  offsets.fill_bytes(0xCD);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    if (!pairs) {
      return prims::device::radix_partition_keys<ALGORITHM>(temp, bytes, buffers.keys_in.data(),
                                                            buffers.keys_destination(), n, offsets.data(),
                                                            c.begin_bit, c.end_bit, c.order);
    }
    return prims::device::radix_partition_pairs<ALGORITHM>(
        temp, bytes, buffers.keys_in.data(), buffers.keys_destination(), buffers.values_in.data(),
        buffers.values_destination(), n, offsets.data(), c.begin_bit, c.end_bit, c.order);
  });
  const std::string where = "n = " + std::to_string(n) + ", bits [" + std::to_string(c.begin_bit) + ", " +
                            std::to_string(c.end_bit) + ")" + (c.order == Order::Descending ? ", descending" : "") +
                            (c.in_place ? ", in place" : "") + (pairs ? ", pairs" : "");
  buffers.expect_inputs_and_guards_untouched(keys, &index, where);
  ASSERT_EQ(offsets.download(), expected_offsets) << "bucket offsets, " << where;
  ASSERT_EQ(bit_patterns(buffers.sorted_keys()), bit_patterns(prims::test::permuted(keys, permutation))) << where;
  if (pairs) {
    const auto got = buffers.sorted_values();
    const auto expected = prims::test::permuted(index, permutation);
    ASSERT_EQ(0, n == 0 ? 0 : std::memcmp(got.data(), expected.data(), n * sizeof(V))) << "values, " << where;
  }
}

template <class K>
class RadixPartitionTyped : public ::testing::Test {};
using KeyTypes =
    ::testing::Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(RadixPartitionTyped, KeyTypes);

/// The top digit, a full 8-bit digit in the middle, a narrow one at the bottom, one bit, and no bit at all.
template <class K>
std::vector<std::pair<int, int>> bit_ranges() {
  constexpr int bits = prims::RadixKey<K>::kBits;
  return {{bits - 8, bits}, {bits / 2 - 4, bits / 2 + 4}, {0, 4}, {bits - 1, bits}, {3, 3}};
}

template <RadixSortAlgorithm ALGORITHM, class K>
void check_every_size() {
  std::vector<size_t> sizes = {0, 1, 2, 31, 33, 1025, 65537};
  for (size_t tile : {size_t{kOnesweepTile}, size_t{kTileCountsTile}}) {
    for (size_t tiles : {1, 3}) {
      for (long delta : {-1, 0, 1}) sizes.push_back(tiles * tile + delta);
    }
  }
  for (size_t n : sizes) {
    const auto keys = random_keys<K>(n, n * 7 + sizeof(K));
    for (auto [begin_bit, end_bit] : bit_ranges<K>()) {
      for (Order order : {Order::Ascending, Order::Descending}) {
        check_partition<ALGORITHM>(keys, false, {begin_bit, end_bit, order});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TYPED_TEST(RadixPartitionTyped, KeysEverySizeOnesweep) {
  PRIMS_REQUIRE_GPU();
  check_every_size<RadixSortAlgorithm::Onesweep, TypeParam>();
}

TYPED_TEST(RadixPartitionTyped, KeysEverySizeTileCounts) {
  PRIMS_REQUIRE_GPU();
  check_every_size<RadixSortAlgorithm::TileCounts, TypeParam>();
}

/// Few distinct keys with their indices as values: each bucket must keep the input order, in place too.
TYPED_TEST(RadixPartitionTyped, PairsStableAndInPlace) {
  PRIMS_REQUIRE_GPU();
  using K = TypeParam;
  for (size_t n : {size_t{kOnesweepTile} + 1, size_t{3} * kOnesweepTile - 1, size_t{100003}}) {
    auto keys = random_keys<K>(n, n + 5);
    for (auto& key : keys) key = keys[static_cast<size_t>(prims::RadixKey<K>::raw_bits(key)) % 9];
    for (auto [begin_bit, end_bit] : bit_ranges<K>()) {
      for (Order order : {Order::Ascending, Order::Descending}) {
        for (bool in_place : {false, true}) {
          const PartitionCase c{begin_bit, end_bit, order, in_place};
          check_partition<RadixSortAlgorithm::Onesweep>(keys, true, c);
          check_partition<RadixSortAlgorithm::TileCounts>(keys, true, c);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

/// Values of every width, few distinct keys (stability), in place and not, on one tile and several.
TEST(RadixPartitionValues, EveryWidth) {
  PRIMS_REQUIRE_GPU();
  prims::test::for_each_value_width([](auto width) {
    using V = typename decltype(width)::type;
    for (size_t n : {size_t{1000}, size_t{3} * kOnesweepTile + 11}) {
      auto keys = random_keys<uint64_t>(n, n + sizeof(V));
      for (auto& key : keys) key = keys[key % 9];
      for (bool in_place : {false, true}) {
        const PartitionCase c{56, 64, in_place ? Order::Descending : Order::Ascending, in_place};
        check_partition<RadixSortAlgorithm::Onesweep, uint64_t, V>(keys, true, c);
        check_partition<RadixSortAlgorithm::TileCounts, uint64_t, V>(keys, true, c);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
}

/// Both pass algorithms on a non-blocking stream with work queued before and after them.
TEST(RadixPartition, RunsOnItsStream) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 300007;
  const auto keys = random_keys<uint32_t>(n, 8);
  const auto index = prims::test::index_values<uint32_t>(n);
  const auto permutation = prims::test::reference_sort_permutation(keys, Order::Ascending, 24, 32);
  const auto expected_keys = prims::test::permuted(keys, permutation);
  const auto expected_values = prims::test::permuted(index, permutation);
  std::vector<size_t> expected_offsets(257, 0);
  for (uint32_t key : keys) ++expected_offsets[(key >> 24) + 1];
  for (size_t b = 1; b <= 256; ++b) expected_offsets[b] += expected_offsets[b - 1];
  auto check = [&](auto algorithm) {
    constexpr RadixSortAlgorithm kAlgorithm = decltype(algorithm)::value;
    prims::DeviceBuffer<uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
    prims::DeviceBuffer<size_t> offsets(257);
    auto call = [&](void* temp, size_t& bytes, cudaStream_t s) {
      return prims::device::radix_partition_pairs<kAlgorithm>(temp, bytes, keys_in.data(), keys_out.data(),
                                                              values_in.data(), values_out.data(), n, offsets.data(),
                                                              24, 32, Order::Ascending, s);
    };
    auto temp = prims::test::temp_for(call);
    offsets.fill_bytes(0xCD);
    keys_out.fill_bytes(0xCD);
    values_out.fill_bytes(0xCD);
    prims::test::LateStream late;
    late.upload_late(keys_in.data(), keys);
    late.upload_late(values_in.data(), index);
    late.run(temp, call);
    EXPECT_EQ(late.download(keys_out.data(), n), expected_keys);
    EXPECT_EQ(late.download(values_out.data(), n), expected_values);
    EXPECT_EQ(late.download(offsets.data(), 257), expected_offsets);
  };
  check(std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::Onesweep>{});
  check(std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::TileCounts>{});
}

/// Buckets of very uneven sizes: 90% of the keys in one top digit, all keys equal, keys that differ only in the
/// low byte (every key in one top bucket: the pass only copies).
TEST(RadixPartitionSkew, TopDigitOfUint32) {
  PRIMS_REQUIRE_GPU();
  std::mt19937 rng(17);
  for (size_t n : {size_t{kOnesweepTile} - 1, size_t{1000003}}) {
    std::vector<uint32_t> dominant(n), equal(n, 0xA5A5A5A5u), low_byte(n);
    for (size_t i = 0; i < n; ++i) {
      dominant[i] = rng() % 10 != 0 ? (0x7Bu << 24) | (rng() & 0xFFFFFFu) : rng();
      low_byte[i] = 0x12345600u | (rng() & 0xFFu);
    }
    for (const auto* keys : {&dominant, &equal, &low_byte}) {
      for (Order order : {Order::Ascending, Order::Descending}) {
        check_partition<RadixSortAlgorithm::Onesweep>(*keys, true, {24, 32, order});
        check_partition<RadixSortAlgorithm::TileCounts>(*keys, false, {24, 32, order});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// Floats by their top digit: NaNs, infinities, signed zeros and denormals land in numpy's order of buckets.
TEST(RadixPartitionFloats, SpecialValuesTopDigit) {
  PRIMS_REQUIRE_GPU();
  const auto specials = prims::test::special_floats<float>();
  std::mt19937 rng(5);
  std::vector<float> keys(200001);
  for (auto& key : keys) {
    key = rng() % 2 ? specials[rng() % specials.size()] : static_cast<float>(static_cast<int>(rng() % 2001) - 1000);
  }
  for (Order order : {Order::Ascending, Order::Descending}) {
    check_partition<RadixSortAlgorithm::Onesweep>(keys, true, {24, 32, order});
    check_partition<RadixSortAlgorithm::Onesweep>(keys, false, {28, 32, order, true});
  }
}

TEST(RadixPartition, InvalidArguments) {
  uint32_t* keys = nullptr;
  size_t* offsets = nullptr;
  size_t bytes = 0;
  // Wider than one digit, outside the key, reversed.
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_partition_keys(nullptr, bytes, keys, keys, 10, offsets, 0, 9));
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::radix_partition_keys(nullptr, bytes, keys, keys, 10, offsets, 28, 33));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_partition_keys(nullptr, bytes, keys, keys, 10, offsets, 8, 4));
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::radix_partition_pairs(nullptr, bytes, keys, keys, keys, keys, 10, offsets, -1, 4));
  // A valid size query needs no offsets; a run does.
  EXPECT_EQ(cudaSuccess, prims::device::radix_partition_keys(nullptr, bytes, keys, keys, 10, offsets, 24, 32));
  EXPECT_GT(bytes, 0u);
  unsigned char storage[16];
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::radix_partition_keys(storage, bytes, keys, keys, 10, offsets, 24, 32));
}

/// 2^26 + 3 pairs by the top digit, checked on the host in one linear sweep: every key sits in its bucket, each
/// bucket holds its keys in input order (values are input indices), and each input index appears once.
TEST(RadixPartitionLarge, Pairs2To26TopDigit) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 26) + 3;
  const auto keys = random_keys<uint32_t>(n, 99);
  std::vector<uint32_t> index(n);
  for (size_t i = 0; i < n; ++i) index[i] = static_cast<uint32_t>(i);
  prims::DeviceBuffer<uint32_t> keys_in(n), keys_out(n), values_in(n), values_out(n);
  prims::DeviceBuffer<size_t> offsets(257);
  keys_in.upload(keys);
  values_in.upload(index);
  keys_out.fill_bytes(0xCD);
  values_out.fill_bytes(0xCD);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::radix_partition_pairs(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(),
                                                values_out.data(), n, offsets.data(), 24, 32);
  });
  const auto got_keys = keys_out.download();
  const auto got_values = values_out.download();
  const auto got_offsets = offsets.download();
  EXPECT_EQ(keys_in.download(), keys) << "input changed";
  EXPECT_EQ(values_in.download(), index) << "input changed";
  ASSERT_EQ(got_offsets.front(), 0u);
  ASSERT_EQ(got_offsets.back(), n);
  std::vector<bool> seen(n, false);
  size_t misplaced = 0, unstable = 0, wrong_value = 0, repeated = 0;
  for (size_t bucket = 0; bucket < 256; ++bucket) {
    for (size_t i = got_offsets[bucket]; i < got_offsets[bucket + 1]; ++i) {
      const uint32_t v = got_values[i];
      misplaced += (got_keys[i] >> 24) != bucket;
      unstable += i > got_offsets[bucket] && got_values[i - 1] >= v;
      if (v >= n) {
        ++wrong_value;
        continue;
      }
      wrong_value += keys[v] != got_keys[i];
      repeated += seen[v];
      seen[v] = true;
    }
  }
  EXPECT_EQ(misplaced, 0u);
  EXPECT_EQ(unstable, 0u);
  EXPECT_EQ(wrong_value, 0u);
  EXPECT_EQ(repeated, 0u);
}

}  // namespace
