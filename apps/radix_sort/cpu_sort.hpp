#pragma once
// The CPU sort: a stable least-significant-digit radix sort over the ordered key bits of prims/util/radix_key.cuh
// (the same header the device sort uses), so it orders keys exactly like the device sort and keeps every key's
// original bits. Also the sortedness check of --check, in the same order.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "prims/util/radix_key.cuh"

namespace radix_sort {

/// The bits a sort in the given direction orders by: descending complements them, so ties stay ties.
template <class K>
typename prims::RadixKey<K>::Bits sort_bits(K key, bool descending) {
  return prims::sort_bits(key, descending ? prims::Order::Descending : prims::Order::Ascending, 0,
                          prims::RadixKey<K>::kBits);
}

/// The index of the first key that is out of order with the key before it, or nothing when all are sorted.
template <class K>
std::optional<size_t> first_disorder(const K* keys, size_t count, bool descending) {
  for (size_t i = 1; i < count; ++i) {
    if (sort_bits(keys[i - 1], descending) > sort_bits(keys[i], descending)) return i;
  }
  return std::nullopt;
}

/// Marks a sort without values.
struct NoValues {};

/// Sorts `keys[0, count)` stably in place, permuting `values[0, count)` along with them (pass nullptr of
/// NoValues for keys alone). One pass per byte, skipping the bytes all keys share.
/// Example: `radix_sort_cpu(keys.data(), indices.data(), keys.size(), false);`
template <class K, class V = NoValues>
void radix_sort_cpu(K* keys, V* values, size_t count, bool descending) {
  constexpr bool has_values = !std::is_same_v<V, NoValues>;
  constexpr int digit_bits = 8;
  constexpr int radix = 1 << digit_bits;
  constexpr int passes = sizeof(K);
  if (count < 2) return;

  // Every pass's digit histogram in one read of the keys.
  std::vector<std::array<size_t, radix>> counts(passes);
  for (size_t i = 0; i < count; ++i) {
    const auto bits = sort_bits(keys[i], descending);
    for (int pass = 0; pass < passes; ++pass) ++counts[pass][(bits >> (pass * digit_bits)) & (radix - 1)];
  }

  std::vector<K> key_buffer(count);
  std::vector<std::conditional_t<has_values, V, char>> value_buffer(has_values ? count : 0);
  K* key_from = keys;
  K* key_to = key_buffer.data();
  [[maybe_unused]] V* value_from = values;
  [[maybe_unused]] V* value_to = nullptr;
  if constexpr (has_values) value_to = value_buffer.data();

  for (int pass = 0; pass < passes; ++pass) {
    auto& histogram = counts[pass];
    const int shift = pass * digit_bits;
    // A byte that every key shares moves nothing.
    if (histogram[(sort_bits(key_from[0], descending) >> shift) & (radix - 1)] == count) continue;
    size_t offset = 0;
    for (auto& bucket : histogram) offset += std::exchange(bucket, offset);
    for (size_t i = 0; i < count; ++i) {
      const size_t destination = histogram[(sort_bits(key_from[i], descending) >> shift) & (radix - 1)]++;
      key_to[destination] = key_from[i];
      if constexpr (has_values) value_to[destination] = value_from[i];
    }
    std::swap(key_from, key_to);
    if constexpr (has_values) std::swap(value_from, value_to);
  }
  if (key_from != keys) {
    std::copy(key_from, key_from + count, keys);
    if constexpr (has_values) std::copy(value_from, value_from + count, values);
  }
}

/// The digit [begin_bit, end_bit) of a key's ordered bits: its bucket in a partition (descending reverses them).
template <class K>
size_t partition_digit(K key, bool descending, int begin_bit, int end_bit) {
  using Bits = typename prims::RadixKey<K>::Bits;
  const Bits mask = static_cast<Bits>((Bits(1) << (end_bit - begin_bit)) - 1);
  return static_cast<size_t>((sort_bits(key, descending) >> begin_bit) & mask);
}

/// Partitions `count` keys (and values; nullptr of NoValues without) stably by a digit of their ordered bits, as
/// prims::device::radix_partition_pairs does: bucket 0's elements first, each bucket in input order.
/// `bucket_offsets` receives 2^(end_bit - begin_bit) + 1 entries: each bucket's first index, then `count`.
template <class K, class V = NoValues>
void radix_partition_cpu(const K* keys_in, const V* values_in, K* keys_out, V* values_out, size_t count,
                         int begin_bit, int end_bit, bool descending, size_t* bucket_offsets) {
  const size_t buckets = size_t(1) << (end_bit - begin_bit);
  std::vector<size_t> next(buckets + 1, 0);
  for (size_t i = 0; i < count; ++i) ++next[partition_digit(keys_in[i], descending, begin_bit, end_bit) + 1];
  for (size_t b = 0; b < buckets; ++b) next[b + 1] += next[b];
  std::copy(next.begin(), next.end(), bucket_offsets);
  for (size_t i = 0; i < count; ++i) {
    const size_t destination = next[partition_digit(keys_in[i], descending, begin_bit, end_bit)]++;
    keys_out[destination] = keys_in[i];
    if constexpr (!std::is_same_v<V, NoValues>) values_out[destination] = values_in[i];
  }
}

}  // namespace radix_sort
