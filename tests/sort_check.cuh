#pragma once
// The sort tests' check: sort on the GPU through the two-phase protocol, then compare with the CPU reference
// (sort_reference.cuh) bitwise, keys and values. Used by the radix sort tests of every algorithm.

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/radix_sort.cuh"
#include "sort_reference.cuh"
#include "sort_test_buffers.cuh"

namespace prims::test {

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
  ASSERT_EQ(bit_patterns(buffers.sorted_keys()), bit_patterns(permuted(keys, permutation))) << where;
  if (values != nullptr) {
    const std::vector<V> got = buffers.sorted_values();
    const std::vector<V> expected = permuted(*values, permutation);
    ASSERT_EQ(0, n == 0 ? 0 : std::memcmp(got.data(), expected.data(), n * sizeof(V))) << "values, " << where;
  }
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

}  // namespace prims::test
