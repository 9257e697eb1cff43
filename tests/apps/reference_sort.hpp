#pragma once
// The reference the radix_sort tests compare with: std::stable_sort in numpy's order.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "numpy_order.hpp"

namespace radix_sort::test {

using prims::test::numpy_less;

/// The stable sorting permutation of `keys`; descending is the exact reverse order, equal keys in input order.
template <class K>
std::vector<uint64_t> stable_order(const std::vector<K>& keys, bool descending) {
  std::vector<uint64_t> order(keys.size());
  std::iota(order.begin(), order.end(), uint64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return descending ? numpy_less(keys[b], keys[a]) : numpy_less(keys[a], keys[b]);
  });
  return order;
}

/// `values` permuted by `order`.
template <class T>
std::vector<T> gather(const std::vector<T>& values, const std::vector<uint64_t>& order) {
  std::vector<T> result(order.size());
  for (size_t i = 0; i < order.size(); ++i) result[i] = values[order[i]];
  return result;
}

/// True where `a` and `b` hold the same bytes (so -0.0 differs from 0.0, and NaNs compare by their payload).
template <class K>
bool same_bits(const std::vector<K>& a, const std::vector<K>& b) {
  // memcmp must not see the null pointer of an empty vector, even for zero bytes.
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(K)) == 0);
}

}  // namespace radix_sort::test
