#pragma once
// The inputs of the sort benches (bench_sort, tune_sort, bench_partition, bench_segmented_sort, bench_dist_sort):
// key distributions by bit entropy, and the check of a sort's output.
#include <cstdint>
#include <type_traits>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::bench {

/// A key distribution: `words` random words ANDed together (0 words: every key the same; -1: kFloatBits). A bit is
/// set with probability 1/2, 1/8, 1/32 for 1, 3, 5 words: entropy 1.0, 0.544, 0.201 bits a bit.
struct Distribution {
  const char* name;
  int words;
};
inline constexpr Distribution kDistributions[] = {
    {"entropy 1.0", 1}, {"entropy 0.544", 3}, {"entropy 0.201", 5}, {"all equal", 0}};

/// Floats of random bits, the exponent's largest value (infinities and NaNs) excepted: spread evenly over the sort's
/// key order, as random integers are (where floats in (-1, 1) share a few exponents, so their top bits crowd).
/// bench_sort runs it for float keys.
inline constexpr Distribution kFloatBits = {"float bits", -1};

/// Fills keys[0..n) with the distribution of `words` words. Floats are normal numbers in (-1, 1): the key's top
/// 32 bits as a signed fraction (doubles: all 64 bits); with `words` < 0 (kFloatBits) they are the key's bits.
template <class K>
void generate_keys(K* keys, size_t n, int words) {
  generate(keys, n, 11 + words, [words] __device__(uint64_t bits, size_t) {
    uint64_t key = words == 0 ? 0x5bd1e9955bd1e995ull : ~uint64_t{0};
    for (int w = 0; w < (words < 0 ? 1 : words); ++w) key &= prims::mix_bits(bits + w);
    if constexpr (std::is_floating_point_v<K>) {
      if (words < 0) {
        // Where the exponent is all ones, its top bit cleared: finite, and nearly uniform over the key order.
        if constexpr (std::is_same_v<K, float>) {
          uint32_t raw = static_cast<uint32_t>(key >> 32);
          if ((raw & 0x7F800000u) == 0x7F800000u) raw &= ~(1u << 30);
          return __uint_as_float(raw);
        } else {
          uint64_t raw = key;
          if ((raw & 0x7FF0000000000000ull) == 0x7FF0000000000000ull) raw &= ~(uint64_t{1} << 62);
          return __longlong_as_double(static_cast<long long>(raw));
        }
      }
    }
    if constexpr (std::is_same_v<K, float>) {
      return static_cast<float>(static_cast<int32_t>(key >> 32)) * 0x1.0p-31f;
    } else if constexpr (std::is_same_v<K, double>) {
      return static_cast<double>(static_cast<int64_t>(key)) * 0x1.0p-63;
    } else {
      return static_cast<K>(key);
    }
  });
}

/// A sort's order of keys: their ordered bits (prims/util/radix_key.cuh), the order of every benched sort.
template <class K>
struct WholeKey {
  __host__ __device__ auto operator()(K key) const { return RadixKey<K>::ordered_bits(key); }
};

/// A fingerprint of the multiset of (segment, key) pairs in keys[0..n), the segments being runs of segment_items
/// keys: equal for two arrays whose every segment holds the same keys in any order.
template <class K>
uint64_t multiset_fingerprint(const K* keys, size_t n, size_t segment_items) {
  return sum_over(n, [=] __device__(size_t i) {
    return mix_bits(bits_of(keys[i]) ^ mix_bits(~(i / segment_items)));
  });
}

/// Whether out_keys[0..n) is in_keys[0..n) sorted ascending by order_of(key), every run of segment_items keys
/// (a segment) on its own. With values (out_values not null; the input's values are its indices 0, 1, ...): every
/// output value is the index of an input key in the same segment, that key's bits are the output key's, the
/// values are all different (fingerprint), and with `stable` equal keys keep their input order. Keys alone: every
/// segment holds the input segment's keys (fingerprint); a stable sort of keys alone is unobservable unless
/// order_of leaves out some of the key's bits, for which a bench compares with a checked reference instead.
template <class K, class V, class OrderOf = WholeKey<K>>
bool is_sorted_permutation(const K* in_keys, const K* out_keys, const V* out_values, size_t n, size_t segment_items,
                           bool stable, OrderOf order_of = {}) {
  const size_t unsorted = count_if(n, [=] __device__(size_t o) {
    return o + 1 < n && (o + 1) % segment_items != 0 && order_of(out_keys[o + 1]) < order_of(out_keys[o]);
  });
  if (unsorted != 0) return false;
  if (out_values == nullptr) {
    return multiset_fingerprint(out_keys, n, segment_items) == multiset_fingerprint(in_keys, n, segment_items);
  }
  const size_t misplaced = count_if(n, [=] __device__(size_t o) {
    const V v = out_values[o];
    if (static_cast<size_t>(v) >= n || static_cast<size_t>(v) / segment_items != o / segment_items) return true;
    if (bits_of(out_keys[o]) != bits_of(in_keys[v])) return true;
    const bool next_ties =
        o + 1 < n && (o + 1) % segment_items != 0 && order_of(out_keys[o + 1]) == order_of(out_keys[o]);
    return stable && next_ties && out_values[o + 1] <= v;
  });
  const uint64_t values =
      sum_over(n, [=] __device__(size_t o) { return mix_bits(static_cast<uint64_t>(out_values[o])); });
  const uint64_t indices = sum_over(n, [=] __device__(size_t i) { return mix_bits(i); });
  return misplaced == 0 && values == indices;
}

/// Keys alone: no values to check.
template <class K, class OrderOf = WholeKey<K>>
bool is_sorted_permutation(const K* in_keys, const K* out_keys, size_t n, size_t segment_items,
                           OrderOf order_of = {}) {
  return is_sorted_permutation(in_keys, out_keys, static_cast<const uint32_t*>(nullptr), n, segment_items, true,
                               order_of);
}

/// A sort bench's fresh input before each timed run: the shared input and Thrust's in-place copy get the pristine
/// keys again, and with pairs the values likewise.
template <class K, class V>
void restore_inputs(K* in, K* thrust_keys, const K* pristine, V* values_in, V* thrust_values, const V* values,
                    size_t n, bool pairs, cudaStream_t stream) {
  check(cudaMemcpyAsync(in, pristine, n * sizeof(K), cudaMemcpyDeviceToDevice, stream), "restoring keys");
  check(cudaMemcpyAsync(thrust_keys, pristine, n * sizeof(K), cudaMemcpyDeviceToDevice, stream), "restoring keys");
  if (!pairs) return;
  check(cudaMemcpyAsync(values_in, values, n * sizeof(V), cudaMemcpyDeviceToDevice, stream), "restoring values");
  check(cudaMemcpyAsync(thrust_values, values, n * sizeof(V), cudaMemcpyDeviceToDevice, stream), "restoring values");
}

}  // namespace prims::bench
