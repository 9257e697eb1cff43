#pragma once
// The CPU reference for the radix sort tests, written apart from the library's key map (prims::sort_bits) so that a
// mistake there cannot hide in both: a stable sort by a comparator on the key values in numpy's order (NaNs last,
// -0.0 equal to +0.0), and, for a part of the bits, a stable sort by those bits of an order key built here from the
// values. Also the special float values the tests mix in.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "numpy_order.hpp"
#include "prims/util/radix_key.cuh"

namespace prims::test {

/// An unsigned integer whose order is numpy_less's order, with the bits the sort's bit ranges are defined on:
/// integers shifted by -min (the smallest maps to 0); floats by sign and magnitude (negative ones count down from
/// just below the middle, as one's complement would), both zeros at the middle, every NaN at the top.
template <class K>
uint64_t reference_order_key(K key) {
  constexpr int bits = 8 * static_cast<int>(sizeof(K));
  constexpr uint64_t middle = uint64_t{1} << (bits - 1);
  if constexpr (std::is_floating_point_v<K>) {
    using Bits = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
    if (std::isnan(key)) return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    if (key == K(0)) return middle;
    Bits raw;
    std::memcpy(&raw, &key, sizeof(K));
    const uint64_t magnitude = static_cast<uint64_t>(raw) & (middle - 1);
    return std::signbit(key) ? middle - 1 - magnitude : middle + magnitude;
  } else if constexpr (std::is_signed_v<K>) {
    return static_cast<uint64_t>(static_cast<int64_t>(key) - static_cast<int64_t>(std::numeric_limits<K>::min()));
  } else {
    return static_cast<uint64_t>(key);
  }
}

/// The bucket of `key` among the 2^(end_bit - begin_bit) that the bits [begin_bit, end_bit) of its order key make,
/// numbered in `order` (descending: the largest digit first).
template <class K>
uint64_t reference_digit(K key, Order order, int begin_bit, int end_bit) {
  const int width = end_bit - begin_bit;
  if (width <= 0) return 0;
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t digit = (reference_order_key(key) >> begin_bit) & mask;
  return order == Order::Descending ? mask - digit : digit;
}

/// The permutation that stably sorts `keys` in `order` by the bits [begin_bit, end_bit) of their order keys (all
/// of the bits: by the values themselves).
template <class K>
std::vector<size_t> reference_sort_permutation(const std::vector<K>& keys, Order order, int begin_bit, int end_bit) {
  std::vector<size_t> permutation(keys.size());
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  if (begin_bit == 0 && end_bit == 8 * static_cast<int>(sizeof(K))) {
    std::stable_sort(permutation.begin(), permutation.end(), [&](size_t a, size_t b) {
      return order == Order::Ascending ? numpy_less(keys[a], keys[b]) : numpy_less(keys[b], keys[a]);
    });
  } else {
    std::stable_sort(permutation.begin(), permutation.end(), [&](size_t a, size_t b) {
      return reference_digit(keys[a], order, begin_bit, end_bit) < reference_digit(keys[b], order, begin_bit, end_bit);
    });
  }
  return permutation;
}

/// Random keys of every bit pattern (floats included: every sign, exponent, NaN and denormal).
template <class K>
std::vector<K> random_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(n);
  for (auto& key : keys) {
    const auto bits = static_cast<typename RadixKey<K>::Bits>(rng());
    std::memcpy(&key, &bits, sizeof(K));
  }
  return keys;
}

/// Bit patterns as integers, so that NaNs compare equal to themselves in EXPECT_EQ.
template <class K>
std::vector<typename RadixKey<K>::Bits> bit_patterns(const std::vector<K>& keys) {
  std::vector<typename RadixKey<K>::Bits> bits(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) bits[i] = RadixKey<K>::raw_bits(keys[i]);
  return bits;
}

/// `items` rearranged by `permutation`.
template <class T>
std::vector<T> permuted(const std::vector<T>& items, const std::vector<size_t>& permutation) {
  std::vector<T> out(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) out[i] = items[permutation[i]];
  return out;
}

/// Floats that the key map must treat with care: signed zeros and infinities, NaNs of both signs and several
/// payloads, denormals, and the extremes of the normal range.
template <class F>
std::vector<F> special_floats() {
  using Limits = std::numeric_limits<F>;
  using Bits = typename RadixKey<F>::Bits;
  auto from_bits = [](Bits bits) {
    F value;
    std::memcpy(&value, &bits, sizeof(F));
    return value;
  };
  const Bits sign = RadixKey<F>::kSignBit;
  const Bits quiet_nan = RadixKey<F>::raw_bits(Limits::quiet_NaN());
  return {F(0),
          -F(0),
          Limits::infinity(),
          -Limits::infinity(),
          Limits::quiet_NaN(),
          from_bits(static_cast<Bits>(quiet_nan | sign)),
          from_bits(static_cast<Bits>(quiet_nan | 1)),
          from_bits(static_cast<Bits>(RadixKey<F>::kInfinityBits | 1)),
          from_bits(static_cast<Bits>(RadixKey<F>::kInfinityBits | 1 | sign)),
          Limits::denorm_min(),
          -Limits::denorm_min(),
          from_bits(static_cast<Bits>(RadixKey<F>::raw_bits(Limits::min()) - 1)),
          Limits::min(),
          -Limits::min(),
          Limits::max(),
          Limits::lowest(),
          F(1),
          F(-1),
          F(0.5),
          F(-0.5)};
}

/// A value of BYTES bytes, for the pairs tests of every value width.
template <int BYTES>
struct Payload {
  unsigned char bytes[BYTES];
};

/// Values of every width that each carry their index (a multiplicative hash of it, as many bytes as fit), so the
/// permutation and its stability show.
template <class V>
std::vector<V> index_values(size_t n) {
  std::vector<V> values(n);
  for (size_t i = 0; i < n; ++i) {
    std::memset(&values[i], 0, sizeof(V));
    const uint64_t index = i * 2654435761u;
    std::memcpy(&values[i], &index, std::min(sizeof(V), sizeof(index)));
  }
  return values;
}

}  // namespace prims::test
