#pragma once
// Radix-sort key bits: every key type maps to an unsigned integer of the same width whose unsigned order is the
// sort order. The map is used for ranking only: the sort moves the original keys, so a map that is not a
// bijection (floats send -0.0 and +0.0, and every NaN, to one value each) still preserves every key's bits.
//
//   unsigned   the bits themselves
//   signed     the sign bit flipped: INT_MIN .. -1, 0 .. INT_MAX
//   floating   numpy's order: -inf .. -0.0 == +0.0 .. +inf, then every NaN (either sign, any payload) last.
//              Negative numbers have all bits flipped, non-negative ones the sign bit set; -0.0 first becomes
//              +0.0 and NaNs become all ones.
// Descending order complements the mapped bits: the exact reverse order, and equal keys stay equal (stable).
// Plain C++ compilers can include this header too (the apps' host code orders keys with it).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "prims/util/host_device.cuh"

namespace prims {

/// Whether `K` can be a radix-sort key: the built-in integers of 1 to 8 bytes (not bool), float and double.
template <class K>
inline constexpr bool kIsRadixKey =
    (std::is_integral_v<K> && !std::is_same_v<K, bool> && sizeof(K) <= 8) || std::is_same_v<K, float> ||
    std::is_same_v<K, double>;

namespace detail {

template <int BYTES>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = std::uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = std::uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = std::uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = std::uint64_t;
};

}  // namespace detail

/// The ordered bits of a key type.
/// Example:
///   using Key = prims::RadixKey<float>;
///   Key::Bits a = Key::ordered_bits(-1.0f), b = Key::ordered_bits(2.0f);   // a < b
///   Key::ordered_bits(-0.0f) == Key::ordered_bits(0.0f);                    // true
template <class K>
struct RadixKey {
  static_assert(kIsRadixKey<K>, "radix-sort keys are 1 to 8-byte integers, float or double");
  using Bits = typename detail::UnsignedOfSize<sizeof(K)>::type;
  static constexpr int kBits = 8 * static_cast<int>(sizeof(K));
  /// Whether some keys of this type are special (see is_special): floats, for their NaNs and -0.0.
  static constexpr bool kHasSpecialKeys = std::is_floating_point_v<K>;
  static constexpr Bits kSignBit = static_cast<Bits>(Bits{1} << (kBits - 1));
  /// +inf for float and double (all exponent bits set); magnitudes above it are NaNs.
  static constexpr Bits kInfinityBits =
      sizeof(K) == 4 ? static_cast<Bits>(0x7F800000u) : static_cast<Bits>(0x7FF0000000000000ull);

  /// The key's bits as stored (a bit cast).
  PRIMS_HOST_DEVICE static Bits raw_bits(K key) {
    Bits bits;
    memcpy(&bits, &key, sizeof(K));
    return bits;
  }

  /// Whether ordered_bits treats the key specially: a NaN or -0.0 (never for integers). Every other key's ordered
  /// bits are its plain_ordered_bits.
  PRIMS_HOST_DEVICE static bool is_special(K key) {
    if constexpr (std::is_floating_point_v<K>) {
      const Bits bits = raw_bits(key);
      return static_cast<Bits>(bits & ~kSignBit) > kInfinityBits || bits == kSignBit;
    } else {
      return false;
    }
  }

  /// ordered_bits for keys that are not special, in fewer instructions (for floats, no NaN or -0.0 test).
  PRIMS_HOST_DEVICE static Bits plain_ordered_bits(K key) {
    const Bits bits = raw_bits(key);
    if constexpr (std::is_floating_point_v<K>) {
      using Signed = std::make_signed_t<Bits>;
      // Negative: every bit flipped; otherwise the sign bit set.
      const Bits negative = static_cast<Bits>(static_cast<Signed>(bits) >> (kBits - 1));
      return static_cast<Bits>(bits ^ (negative | kSignBit));
    } else {
      return ordered_bits(key);
    }
  }

  /// The key whose plain_ordered_bits are `bits`: its inverse, for keys that are not special (a sort that keeps
  /// only the ordered bits of its keys rebuilds them with it).
  PRIMS_HOST_DEVICE static K from_plain_ordered_bits(Bits bits) {
    if constexpr (std::is_floating_point_v<K>) {
      bits = (bits & kSignBit) ? static_cast<Bits>(bits ^ kSignBit) : static_cast<Bits>(~bits);
    } else if constexpr (std::is_signed_v<K>) {
      bits = static_cast<Bits>(bits ^ kSignBit);
    }
    K key;
    memcpy(&key, &bits, sizeof(K));
    return key;
  }

  /// Bits whose unsigned order is the ascending key order described at the top of this file.
  PRIMS_HOST_DEVICE static Bits ordered_bits(K key) {
    const Bits bits = raw_bits(key);
    if constexpr (std::is_floating_point_v<K>) {
      // Selects, no branches: kernels that turn every key (top-k's selects) take a few instructions a key.
      const Bits magnitude = static_cast<Bits>(bits & ~kSignBit);
      const Bits ordered = magnitude == 0 ? kSignBit : plain_ordered_bits(key);
      return magnitude > kInfinityBits ? static_cast<Bits>(~Bits{0}) : ordered;
    } else if constexpr (std::is_signed_v<K>) {
      return static_cast<Bits>(bits ^ kSignBit);
    } else {
      return bits;
    }
  }
};

/// Ascending or descending; both are stable (equal keys keep their input order).
enum class Order { Ascending, Descending };

/// Extracts one radix digit of a key's ordered bits for one sort pass: the `num_bits` bits from `shift` up, after
/// complementing for descending order.
/// Example:
///   const prims::DigitExtractor<int> digit_of(prims::Order::Descending, 8, 8);   // bits [8, 16)
///   unsigned d = digit_of(key);                                                 // 0 .. 255
template <class K>
struct DigitExtractor {
  using Bits = typename RadixKey<K>::Bits;
  /// The digit's bits are complemented (XORed with this) for descending order.
  unsigned flip;
  int shift;
  unsigned mask;

  /// The empty digit (no bits): always 0.
  PRIMS_HOST_DEVICE DigitExtractor() : flip(0), shift(0), mask(0) {}

  PRIMS_HOST_DEVICE DigitExtractor(Order order, int shift_, int num_bits)
      : flip(order == Order::Descending ? static_cast<unsigned>((std::uint64_t{1} << num_bits) - 1) : 0u),
        shift(shift_),
        mask(static_cast<unsigned>((std::uint64_t{1} << num_bits) - 1)) {}

  /// Shift, mask and flip: two instructions for integer keys.
  PRIMS_HOST_DEVICE unsigned operator()(K key) const { return of_bits(RadixKey<K>::ordered_bits(key)); }

  /// The digit of a key whose ordered bits (RadixKey<K>::ordered_bits) are `bits`.
  PRIMS_HOST_DEVICE unsigned of_bits(Bits bits) const { return (static_cast<unsigned>(bits >> shift) & mask) ^ flip; }

  /// The same digit for a key that is not special (RadixKey<K>::is_special), in fewer instructions for floats.
  PRIMS_HOST_DEVICE unsigned plain(K key) const { return of_bits(RadixKey<K>::plain_ordered_bits(key)); }
};

namespace detail {

/// The digit of pass `pass` of a radix sort: bits [begin_bit + pass * radix_bits, ...), fewer in the last pass.
template <class K>
PRIMS_HOST_DEVICE DigitExtractor<K> pass_digit(Order order, int begin_bit, int end_bit, int radix_bits, int pass) {
  const int shift = begin_bit + pass * radix_bits;
  const int width = end_bit - shift < radix_bits ? end_bit - shift : radix_bits;
  return DigitExtractor<K>(order, shift, width);
}

}  // namespace detail

/// The bits in [begin_bit, end_bit) of a key's ordered bits (complemented for descending): the value the sort
/// orders by. Two keys are equal for the sort exactly when their sort bits are equal. Handy for references.
/// Example: `prims::sort_bits(-0.0f, prims::Order::Ascending, 0, 32) == prims::sort_bits(0.0f, ...)` is true.
template <class K>
PRIMS_HOST_DEVICE typename RadixKey<K>::Bits sort_bits(K key, Order order, int begin_bit, int end_bit) {
  using Bits = typename RadixKey<K>::Bits;
  const int width = end_bit - begin_bit;
  const Bits mask = width >= RadixKey<K>::kBits ? static_cast<Bits>(~Bits{0})
                                                 : static_cast<Bits>((std::uint64_t{1} << width) - 1);
  const Bits flip = order == Order::Descending ? static_cast<Bits>(~Bits{0}) : Bits{0};
  const Bits bits = static_cast<Bits>(RadixKey<K>::ordered_bits(key) ^ flip);
  return width <= 0 ? Bits{0} : static_cast<Bits>(static_cast<Bits>(bits >> begin_bit) & mask);
}

/// Whether [begin_bit, end_bit) is a valid bit range for key type K: 0 <= begin_bit <= end_bit <= bits of K.
/// Example: `prims::valid_bit_range<uint32_t>(0, 32)` is true, `(8, 40)` is false.
template <class K>
constexpr bool valid_bit_range(int begin_bit, int end_bit) {
  return 0 <= begin_bit && begin_bit <= end_bit && end_bit <= RadixKey<K>::kBits;
}

}  // namespace prims
