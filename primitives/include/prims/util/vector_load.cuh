#pragma once
// 16-byte vector access for element types that tile 16 bytes (1, 2, 4, 8 and 16-byte types); other types fall
// back to one element per access. Accesses may carry a cache hint (CacheHint) for data touched for the last time.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace prims::detail {

inline constexpr size_t kVectorBytes = 16;

/// How many T one vector access moves.
template <class T>
inline constexpr int kVectorItems = (sizeof(T) <= kVectorBytes && kVectorBytes % sizeof(T) == 0)
                                        ? static_cast<int>(kVectorBytes / sizeof(T))
                                        : 1;

template <class T>
struct alignas(kVectorItems<T> == 1 ? alignof(T) : kVectorBytes) Vector {
  T items[kVectorItems<T>];
};

/// How a global access may use the caches.
///   Normal   the default.
///   LastUse  the data is not touched again soon: loads and stores are cached evict-first (ld.global.cs and
///            st.global.cs, through __ldcs/__stcs), so they do not push out lines that are still to be read.
/// Hints change speed only, never results. Accesses of 4, 8 and 16 bytes carry them; others are plain.
enum class CacheHint { Normal, LastUse };

namespace hint_detail {
// The built-in type that __ldcs/__stcs move for an access of sizeof(U) bytes aligned like U (void: none).
template <class U>
using Word = std::conditional_t<sizeof(U) == 16 && alignof(U) >= 16, uint4,
                                std::conditional_t<sizeof(U) == 8 && alignof(U) >= 8, unsigned long long,
                                                   std::conditional_t<sizeof(U) == 4 && alignof(U) >= 4, unsigned,
                                                                      void>>>;
}  // namespace hint_detail

/// Asks the L2 cache to fetch the 128-byte line holding *p (a hint: no fault, no result).
__device__ __forceinline__ void prefetch_l2_line(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
}

/// *p, cached as HINT says.
template <CacheHint HINT, class U>
__device__ __forceinline__ U load_with_hint(const U* p) {
  using Word = hint_detail::Word<U>;
  if constexpr (HINT == CacheHint::LastUse && !std::is_void_v<Word>) {
    const Word bits = __ldcs(reinterpret_cast<const Word*>(p));
    U value;
    memcpy(&value, &bits, sizeof(U));
    return value;
  } else {
    return *p;
  }
}

/// *p = value, cached as HINT says.
template <CacheHint HINT, class U>
__device__ __forceinline__ void store_with_hint(U* p, const U& value) {
  using Word = hint_detail::Word<U>;
  if constexpr (HINT == CacheHint::LastUse && !std::is_void_v<Word>) {
    Word bits;
    memcpy(&bits, &value, sizeof(U));
    __stcs(reinterpret_cast<Word*>(p), bits);
  } else {
    *p = value;
  }
}

/// What elements_to_vector_alignment returns when no whole number of elements reaches a vector boundary.
inline constexpr size_t kNoVectorAlignment = ~size_t{0};

/// Elements to skip from `p` before the address is vector-aligned: 0 when T is not vectorized, and
/// kNoVectorAlignment when no whole number of elements gets there (a type aligned less than its size, such as a
/// struct of two floats at an address that is 4 mod 8): such input must be read element by element.
template <class T>
size_t elements_to_vector_alignment(const T* p) {
  if constexpr (kVectorItems<T> == 1) {
    return 0;
  } else {
    const auto misalignment = reinterpret_cast<std::uintptr_t>(p) % kVectorBytes;
    if (misalignment % sizeof(T) != 0) {
      return kNoVectorAlignment;
    }
    return ((kVectorBytes - misalignment) % kVectorBytes) / sizeof(T);
  }
}

}  // namespace prims::detail
