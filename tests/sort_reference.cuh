#pragma once
// The CPU reference for the radix sort tests: a stable sort on the sort bits of each key (prims::sort_bits),
// which is what the GPU sort must produce bit for bit, and the special float values the tests mix in.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "prims/util/radix_key.cuh"

namespace prims::test {

/// The permutation that stably sorts `keys` by their sort bits in [begin_bit, end_bit).
template <class K>
std::vector<size_t> reference_sort_permutation(const std::vector<K>& keys, Order order, int begin_bit, int end_bit) {
  std::vector<size_t> permutation(keys.size());
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  std::stable_sort(permutation.begin(), permutation.end(), [&](size_t a, size_t b) {
    return sort_bits(keys[a], order, begin_bit, end_bit) < sort_bits(keys[b], order, begin_bit, end_bit);
  });
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
