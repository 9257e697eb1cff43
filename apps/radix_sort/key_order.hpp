#pragma once
// The order keys sort in, the same as the library's device sort: integers by value; floats in numpy's order
// (-inf .. +inf, then every NaN last; -0.0 and +0.0 equal). Descending is the exact reverse, equal keys keeping
// their input order either way.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

namespace radix_sort {

/// The unsigned integer type as wide as K.
template <class K>
using OrderedBits = std::conditional_t<
    sizeof(K) == 1, uint8_t,
    std::conditional_t<sizeof(K) == 2, uint16_t, std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>>>;

/// Maps a key to unsigned bits whose integer order is the key order: a before b iff bits(a) < bits(b).
/// -0.0 maps like +0.0 and every NaN to the largest value, so they tie (a stable sort keeps their input order).
template <class K>
OrderedBits<K> ordered_bits(K key) {
  using Bits = OrderedBits<K>;
  constexpr Bits sign_bit = Bits(1) << (8 * sizeof(K) - 1);
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(key)) return static_cast<Bits>(~Bits(0));
    if (key == K(0)) key = K(0);
    Bits bits;
    std::memcpy(&bits, &key, sizeof bits);
    return (bits & sign_bit) ? static_cast<Bits>(~bits) : static_cast<Bits>(bits | sign_bit);
  } else if constexpr (std::is_signed_v<K>) {
    return static_cast<Bits>(static_cast<Bits>(key) ^ sign_bit);
  } else {
    return key;
  }
}

/// The bits a sort in the given direction orders by: descending flips them, so ties stay ties.
template <class K>
OrderedBits<K> sort_bits(K key, bool descending) {
  const OrderedBits<K> bits = ordered_bits(key);
  return descending ? static_cast<OrderedBits<K>>(~bits) : bits;
}

/// True where `first` may come before `second` in a sorted output of the given direction.
template <class K>
bool in_order(K first, K second, bool descending) {
  return sort_bits(first, descending) <= sort_bits(second, descending);
}

/// The index of the first key that is out of order with the key before it, or nothing when all are sorted.
template <class K>
std::optional<size_t> first_disorder(const K* keys, size_t count, bool descending) {
  for (size_t i = 1; i < count; ++i) {
    if (!in_order(keys[i - 1], keys[i], descending)) return i;
  }
  return std::nullopt;
}

}  // namespace radix_sort
