#pragma once
// The sort tests' check: sort on the GPU through the two-phase protocol, then compare with the CPU reference
// (sort_reference.cuh) bitwise, keys and values. Used by the radix sort tests of every algorithm.

#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_test.cuh"
#include "late_stream.cuh"
#include "prims/device/radix_sort.cuh"
#include "sort_reference.cuh"
#include "sort_test_buffers.cuh"

namespace prims::test {

/// The one-block sort's limit on the current device, under the table it takes (a table forced for tests too).
template <class K, class V = prims::detail::NoValues>
size_t one_block_limit() {
  size_t items = 0;
  EXPECT_EQ(cudaSuccess, (prims::device::one_block_max_items<K, V>(items)));
  return items;
}

/// Where Auto stops taking the one-block sort: the same under every table.
template <class K, class V>
inline constexpr size_t kAutoOneBlockLimit =
    prims::detail::radix::one_block_auto_max_items<prims::detail::TuningSm90, K, V>();

using prims::device::Order;
using prims::device::RadixSortAlgorithm;

/// Every key type the sorts take.
using RadixKeyTypes =
    ::testing::Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float, double>;

struct SortCase {
  Order order = Order::Ascending;
  int begin_bit = 0;
  int end_bit = -1;  // -1: all bits of the key
  bool in_place = false;
};

/// Sorts `keys` (and `values`, when given) on the GPU with `sort(temp, bytes, io, n, order, begin_bit, end_bit)`
/// and checks against the reference, bitwise.
template <class K, class V, class Sort>
void check_sort_with(const std::vector<K>& keys, const std::vector<V>* values, SortCase c, Sort sort) {
  const size_t n = keys.size();
  const int end_bit = c.end_bit < 0 ? prims::RadixKey<K>::kBits : c.end_bit;
  const auto permutation = reference_sort_permutation(keys, c.order, c.begin_bit, end_bit);
  SortTestBuffers<K, V> buffers(keys, values, c.in_place);
  run_two_phase([&](void* temp, size_t& bytes) {
    if (values == nullptr) {
      return sort(temp, bytes,
                  prims::detail::PassBuffers<K, prims::detail::NoValues>{buffers.keys_in.data(),
                                                                         buffers.keys_destination(), nullptr, nullptr},
                  n, c.order, c.begin_bit, end_bit);
    }
    return sort(temp, bytes,
                prims::detail::PassBuffers<K, V>{buffers.keys_in.data(), buffers.keys_destination(),
                                                 buffers.values_in.data(), buffers.values_destination()},
                n, c.order, c.begin_bit, end_bit);
  });
  const std::string where = "n = " + std::to_string(n) + ", bits [" + std::to_string(c.begin_bit) + ", " +
                            std::to_string(end_bit) + ")" + (c.order == Order::Descending ? ", descending" : "") +
                            (c.in_place ? ", in place" : "");
  buffers.expect_inputs_and_guards_untouched(keys, values, where);
  ASSERT_EQ(bit_patterns(buffers.sorted_keys()), bit_patterns(permuted(keys, permutation))) << where;
  if (values != nullptr) {
    const std::vector<V> got = buffers.sorted_values();
    const std::vector<V> expected = permuted(*values, permutation);
    ASSERT_EQ(0, n == 0 ? 0 : std::memcmp(got.data(), expected.data(), n * sizeof(V))) << "values, " << where;
  }
}

/// Sorts `keys` with `values` ascending on a LateStream (late_stream.cuh) with `sort(temp, bytes, keys_in, keys_out,
/// values_in, values_out, n, stream)` and checks both outputs against the reference: the sort waits for the work
/// queued before it on its stream, and the work queued after it waits for the sort.
template <class K, class V, class Sort>
void check_sort_on_late_stream(const std::vector<K>& keys, const std::vector<V>& values, Sort sort) {
  const size_t n = keys.size();
  DeviceBuffer<K> keys_in(n), keys_out(n);
  DeviceBuffer<V> values_in(n), values_out(n);
  auto call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return sort(temp, bytes, keys_in.data(), keys_out.data(), values_in.data(), values_out.data(), n, s);
  };
  auto temp = temp_for(call);
  keys_out.fill_bytes(0xCD);
  values_out.fill_bytes(0xCD);
  // The reference first: nothing may stand between the call and the reads queued after it.
  const auto permutation = reference_sort_permutation(keys, Order::Ascending, 0, RadixKey<K>::kBits);
  const auto expected_keys = bit_patterns(permuted(keys, permutation));
  const auto expected_values = permuted(values, permutation);
  LateStream late;
  late.upload_late(keys_in.data(), keys);
  late.upload_late(values_in.data(), values);
  late.run(temp, call);
  ASSERT_EQ(bit_patterns(late.download(keys_out.data(), n)), expected_keys);
  const auto got = late.download(values_out.data(), n);
  ASSERT_EQ(0, std::memcmp(got.data(), expected_values.data(), n * sizeof(V))) << "values";
}

/// check_sort_with through the public API and ALGORITHM.
template <RadixSortAlgorithm ALGORITHM, class K, class V = uint32_t>
void check_sort(const std::vector<K>& keys, const std::vector<V>* values, SortCase c) {
  check_sort_with(
      keys, values, c, [](void* temp, size_t& bytes, auto io, size_t n, Order order, int begin_bit, int end_bit) {
        if constexpr (!prims::detail::kHasValues<std::remove_pointer_t<decltype(io.values_out)>>) {
          return prims::device::radix_sort_keys<ALGORITHM>(temp, bytes, io.keys_in, io.keys_out, n, order, begin_bit,
                                                           end_bit);
        } else {
          return prims::device::radix_sort_pairs<ALGORITHM>(temp, bytes, io.keys_in, io.keys_out, io.values_in,
                                                            io.values_out, n, order, begin_bit, end_bit);
        }
      });
}


/// Tile sizes the size lists straddle: Onesweep's small, medium and own tiles, TileCounts', and Onesweep's switches.
inline constexpr int kOnesweepTile =
    prims::detail::radix::SortTile<prims::detail::TuningSm90::Onesweep<uint32_t, prims::detail::NoValues>, uint32_t,
                                   prims::detail::NoValues, unsigned>::kTileItems;
inline constexpr int kTileCountsTile =
    prims::detail::radix::SortTile<prims::detail::TuningSm90::TileCounts<uint32_t, prims::detail::NoValues>, uint32_t,
                                   prims::detail::NoValues, size_t>::kTileItems;
inline constexpr int kOnesweepSmallTile =
    prims::detail::radix::SortTile<prims::detail::TuningSm90::OnesweepSmall<uint32_t, prims::detail::NoValues>,
                                   uint32_t, prims::detail::NoValues, unsigned>::kTileItems;
inline constexpr size_t kOnesweepSmallMax =
    prims::detail::TuningSm90::OnesweepSmall<uint32_t, prims::detail::NoValues>::max_items;
/// The tiles just above kOnesweepSmallMax (4096 items for 4- and 8-byte keys alike).
inline constexpr int kOnesweepMediumTile =
    prims::detail::radix::SortTile<prims::detail::TuningSm90::OnesweepMedium<uint32_t, prims::detail::NoValues>,
                                   uint32_t, prims::detail::NoValues, unsigned>::kTileItems;

/// Sizes around the edges of every algorithm's tiles, and around Onesweep's switch from its small tiles to the next.
inline std::vector<size_t> sort_sizes() {
  std::vector<size_t> sizes = {0, 1, 2, 31, 33, 1023, 1025, 65537, kOnesweepSmallMax, kOnesweepSmallMax + 1};
  for (size_t tile : {size_t{kOnesweepSmallTile}, size_t{kOnesweepTile}, size_t{kTileCountsTile}}) {
    for (size_t tiles : {1, 3}) {
      for (long delta : {-1, 0, 1}) sizes.push_back(tiles * tile + delta);
    }
  }
  // Whole and partial last tiles of Onesweep's tiles past the small ones.
  const size_t medium_tiles = kOnesweepSmallMax / kOnesweepMediumTile + 1;
  for (long delta : {-1, 0, 1}) sizes.push_back(medium_tiles * kOnesweepMediumTile + delta);
  return sizes;
}

inline const std::vector<uint32_t>* const kNoValues = nullptr;

/// Random keys of every size in sort_sizes(), both orders.
template <RadixSortAlgorithm ALGORITHM, class K>
void check_keys_every_size() {
  for (size_t n : sort_sizes()) {
    const auto keys = random_keys<K>(n, n * 3 + sizeof(K));
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_sort<ALGORITHM>(keys, kNoValues, {order});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Few distinct keys, values = input index: equal keys must keep their values in input order.
template <RadixSortAlgorithm ALGORITHM, class K>
void check_pairs_stable() {
  for (size_t n : {size_t{1}, size_t{kOnesweepSmallTile} + 1, size_t{kOnesweepTile} + 1,
                   size_t{3} * kOnesweepTile - 1, size_t{100003}, kOnesweepSmallMax + 3}) {
    auto keys = random_keys<K>(n, n + 11);
    for (auto& key : keys) key = keys[static_cast<size_t>(prims::RadixKey<K>::raw_bits(key)) % 5];
    const auto index = index_values<uint32_t>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      check_sort<ALGORITHM>(keys, &index, {order});
      check_sort<ALGORITHM>(keys, &index, {order, 0, -1, /*in_place=*/true});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Keys alone and with their index, on bit ranges from empty to all but a few bits, in place or not, both orders,
/// on Onesweep's small tiles and past them.
template <RadixSortAlgorithm ALGORITHM, class K>
void check_bit_ranges() {
  constexpr int bits = prims::RadixKey<K>::kBits;
  for (size_t n : {size_t{3} * kOnesweepTile + 17, kOnesweepSmallMax + 2 * kOnesweepTile + 5}) {
    const auto keys = random_keys<K>(n, 77);
    const auto index = index_values<uint32_t>(n);
    for (auto [begin_bit, end_bit] : {std::pair{0, 0}, std::pair{0, 1}, std::pair{1, bits}, std::pair{3, bits - 2},
                                      std::pair{bits / 2, bits}, std::pair{0, bits / 2 + 1}}) {
      for (bool in_place : {false, true}) {
        for (Order order : {Order::Ascending, Order::Descending}) {
          const SortCase c{order, begin_bit, end_bit, in_place};
          check_sort<ALGORITHM>(keys, kNoValues, c);
          check_sort<ALGORITHM>(keys, &index, c);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

/// The type a value width stands for.
template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<V>{}) for every value width the tests cover: 1, 2, 8, 3, 12 and 16 bytes.
template <class F>
void for_each_value_width(F f) {
  f(TypeTag<uint8_t>{});
  f(TypeTag<uint16_t>{});
  f(TypeTag<double>{});
  f(TypeTag<Payload<3>>{});
  f(TypeTag<Payload<12>>{});
  f(TypeTag<Payload<16>>{});
}

/// Keys K with values V of one width, on Onesweep's small tiles and past them: few distinct keys (stability), then
/// random keys in place, with each algorithm.
template <class K, class V, RadixSortAlgorithm... ALGORITHMS>
void check_value_type() {
  for (size_t n : {size_t{2} * kOnesweepTile + 5, kOnesweepSmallMax + 2 * kOnesweepTile + 5}) {
    const auto keys = random_keys<K>(n, sizeof(V) + sizeof(K));
    std::vector<K> few(n);
    for (size_t i = 0; i < n; ++i) few[i] = keys[static_cast<size_t>(prims::RadixKey<K>::raw_bits(keys[i])) % 7];
    const auto values = index_values<V>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      (check_sort<ALGORITHMS>(few, &values, {order}), ...);
      (check_sort<ALGORITHMS>(keys, &values, {order, 0, -1, /*in_place=*/true}), ...);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Half special floats (NaNs, zeros of both signs, infinities, denormals), half ordinary ones with many equal, with
/// and without their index, both orders; OneBlock only up to its limit.
template <class F, RadixSortAlgorithm... ALGORITHMS>
void check_special_floats() {
  const auto specials = prims::test::special_floats<F>();
  std::mt19937 rng(3);
  const size_t kOneBlockMax = one_block_limit<F, uint32_t>();
  for (size_t n : {size_t{40}, kOneBlockMax, size_t{kOnesweepTile} + 3, size_t{200001},
                   kOnesweepSmallMax + 2 * kOnesweepTile + 3}) {
    std::vector<F> keys(n);
    for (auto& key : keys) {
      key = rng() % 2 ? specials[rng() % specials.size()] : static_cast<F>(static_cast<int>(rng() % 2001) - 1000) / 8;
    }
    const auto index = index_values<uint32_t>(n);
    for (Order order : {Order::Ascending, Order::Descending}) {
      auto check = [&](auto algorithm) {
        constexpr RadixSortAlgorithm kAlgorithm = decltype(algorithm)::value;
        if (kAlgorithm == RadixSortAlgorithm::OneBlock && n > kOneBlockMax) return;
        check_sort<kAlgorithm>(keys, &index, {order});
        check_sort<kAlgorithm>(keys, kNoValues, {order, 0, -1, /*in_place=*/true});
      };
      (check(std::integral_constant<RadixSortAlgorithm, ALGORITHMS>{}), ...);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace prims::test
