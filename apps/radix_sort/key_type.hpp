#pragma once
// The ten element types the program sorts, and the one dispatch from a runtime type to a template.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace radix_sort {

enum class KeyType { I8, U8, I16, U16, I32, U32, I64, U64, F32, F64 };

/// Carries a type through a generic lambda: `visit_key_type(t, [](auto tag) { using K = typename decltype(tag)::type;
/// })`.
template <class T>
struct TypeTag {
  using type = T;
};

/// Calls `f(TypeTag<K>{})` with the C++ type K of `type`; the only switch over the ten types.
template <class F>
decltype(auto) visit_key_type(KeyType type, F&& f) {
  switch (type) {
    case KeyType::I8:
      return f(TypeTag<int8_t>{});
    case KeyType::U8:
      return f(TypeTag<uint8_t>{});
    case KeyType::I16:
      return f(TypeTag<int16_t>{});
    case KeyType::U16:
      return f(TypeTag<uint16_t>{});
    case KeyType::I32:
      return f(TypeTag<int32_t>{});
    case KeyType::U32:
      return f(TypeTag<uint32_t>{});
    case KeyType::I64:
      return f(TypeTag<int64_t>{});
    case KeyType::U64:
      return f(TypeTag<uint64_t>{});
    case KeyType::F32:
      return f(TypeTag<float>{});
    case KeyType::F64:
      break;
  }
  return f(TypeTag<double>{});
}

/// Calls `f(TypeTag<U>{})` with the unsigned integer type U of `bytes` (1, 2, 4 or 8): values travel as plain bits.
template <class F>
decltype(auto) visit_value_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    default:
      break;
  }
  return f(TypeTag<uint64_t>{});
}

/// Every type, for loops in tests and option tables.
inline constexpr KeyType all_key_types[] = {KeyType::I8,  KeyType::U8,  KeyType::I16, KeyType::U16, KeyType::I32,
                                            KeyType::U32, KeyType::I64, KeyType::U64, KeyType::F32, KeyType::F64};

/// The short name used on the command line: "i8" .. "f64".
std::string_view key_type_name(KeyType type);

/// The type named `name` ("i32", ...), or nothing.
std::optional<KeyType> parse_key_type(std::string_view name);

/// Bytes per element.
size_t key_type_size(KeyType type);

/// The KeyType of the C++ type T (a compile-time lookup).
template <class T>
constexpr KeyType key_type_of() {
  if constexpr (std::is_same_v<T, int8_t>)
    return KeyType::I8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return KeyType::U8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return KeyType::I16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return KeyType::U16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return KeyType::I32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return KeyType::U32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return KeyType::I64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return KeyType::U64;
  else if constexpr (std::is_same_v<T, float>)
    return KeyType::F32;
  else {
    static_assert(std::is_same_v<T, double>, "not one of the ten key types");
    return KeyType::F64;
  }
}

}  // namespace radix_sort
