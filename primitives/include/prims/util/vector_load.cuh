#pragma once
// 16-byte vector access for element types that tile 16 bytes (1, 2, 4, 8 and 16-byte types); other types fall
// back to one element per access.

#include <cstddef>
#include <cstdint>

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
