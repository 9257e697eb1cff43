#pragma once
// Warp shuffles for any trivially copyable type: values are moved as 32-bit words, so structs
// (e.g. a value with a flag) travel through the same collectives as int and double.

#include <cstring>
#include <type_traits>

namespace prims::detail {

inline constexpr unsigned kFullWarpMask = 0xffffffffu;

/// The mask of the lanes below this one.
__device__ __forceinline__ unsigned lanes_below_mask() {
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

template <class T>
struct ShuffleWords {
  static constexpr int count = (sizeof(T) + sizeof(unsigned) - 1) / sizeof(unsigned);
  unsigned words[count];
};

template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(const T& value, Shuffle shuffle) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffled types must be trivially copyable");
  ShuffleWords<T> in{};
  memcpy(&in, &value, sizeof(T));
  ShuffleWords<T> out;
#pragma unroll
  for (int i = 0; i < ShuffleWords<T>::count; ++i) {
    out.words[i] = shuffle(in.words[i]);
  }
  T result;
  memcpy(&result, &out, sizeof(T));
  return result;
}

/// The value of lane (this lane + delta); lanes past the end keep their own value.
template <class T>
__device__ __forceinline__ T shuffle_down(const T& value, unsigned delta) {
  return shuffle_words(value, [delta](unsigned word) { return __shfl_down_sync(kFullWarpMask, word, delta); });
}

/// The value of lane (this lane - delta); lanes before the start keep their own value.
template <class T>
__device__ __forceinline__ T shuffle_up(const T& value, unsigned delta) {
  return shuffle_words(value, [delta](unsigned word) { return __shfl_up_sync(kFullWarpMask, word, delta); });
}

/// The value of lane (this lane ^ mask).
template <class T>
__device__ __forceinline__ T shuffle_xor(const T& value, int mask) {
  return shuffle_words(value, [mask](unsigned word) { return __shfl_xor_sync(kFullWarpMask, word, mask); });
}

/// The value of lane `source`.
template <class T>
__device__ __forceinline__ T shuffle_index(const T& value, int source) {
  return shuffle_words(value, [source](unsigned word) { return __shfl_sync(kFullWarpMask, word, source); });
}

}  // namespace prims::detail
