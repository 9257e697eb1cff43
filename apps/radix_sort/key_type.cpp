#include "key_type.hpp"

namespace radix_sort {

std::string_view key_type_name(KeyType type) {
  static constexpr std::string_view names[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"};
  return names[static_cast<int>(type)];
}

std::optional<KeyType> parse_key_type(std::string_view name) {
  for (KeyType type : all_key_types) {
    if (key_type_name(type) == name) return type;
  }
  return std::nullopt;
}

size_t key_type_size(KeyType type) {
  return visit_key_type(type, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

}  // namespace radix_sort
