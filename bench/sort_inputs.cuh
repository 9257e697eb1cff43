#pragma once
// The inputs of the sort benches (bench_sort, tune_sort): key distributions by bit entropy, and a bitwise
// comparison of device arrays.
#include <thrust/equal.h>
#include <thrust/execution_policy.h>

#include <cstdint>
#include <type_traits>

#include "harness.cuh"

namespace prims::bench {

/// A key distribution: `words` random words ANDed together (0 words: every key the same). A bit is set with
/// probability 1/2, 1/8, 1/32 for 1, 3, 5 words: entropy 1.0, 0.544, 0.201 bits a bit.
struct Distribution {
  const char* name;
  int words;
};
inline constexpr Distribution kDistributions[] = {
    {"entropy 1.0", 1}, {"entropy 0.544", 3}, {"entropy 0.201", 5}, {"all equal", 0}};

/// Fills keys[0..n) with the distribution of `words` words. Floats are normal numbers in (-1, 1): the key's top
/// 32 bits as a signed fraction (doubles: all 64 bits).
template <class K>
void generate_keys(K* keys, size_t n, int words) {
  generate(keys, n, 11 + words, [words] __device__(uint64_t bits, size_t) {
    uint64_t key = words == 0 ? 0x5bd1e9955bd1e995ull : ~uint64_t{0};
    for (int w = 0; w < words; ++w) key &= prims::mix_bits(bits + w);
    if constexpr (std::is_same_v<K, float>) {
      return static_cast<float>(static_cast<int32_t>(key >> 32)) * 0x1.0p-31f;
    } else if constexpr (std::is_same_v<K, double>) {
      return static_cast<double>(static_cast<int64_t>(key)) * 0x1.0p-63;
    } else {
      return static_cast<K>(key);
    }
  });
}

/// Bitwise equality of two device arrays (floats compared as bits, so NaNs and signed zeros count).
template <class T>
bool same_bits(const T* a, const T* b, size_t n) {
  using Word = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(T) == sizeof(Word), "benched keys and values are 4 or 8 bytes");
  const Word* wa = reinterpret_cast<const Word*>(a);
  const Word* wb = reinterpret_cast<const Word*>(b);
  return thrust::equal(thrust::device, wa, wa + n, wb);
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
