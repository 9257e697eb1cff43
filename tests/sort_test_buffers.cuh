#pragma once
// The device buffers of one sort or partition test: inputs uploaded, outputs poisoned, a poisoned guard region past
// the n items of every buffer, and where the sort writes (the inputs themselves when it sorts in place).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "prims/util/device_buffer.cuh"

namespace prims::test {

/// Items past n in every buffer that a sort must leave alone.
inline constexpr size_t kGuardItems = 64;
inline constexpr unsigned char kPoisonByte = 0xCD;

/// Whether every byte of `items` is the poison byte.
template <class T>
bool all_poison(const std::vector<T>& items) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(items.data());
  return std::all_of(bytes, bytes + items.size() * sizeof(T), [](unsigned char b) { return b == kPoisonByte; });
}

template <class K, class V>
struct SortTestBuffers {
  /// Uploads `keys` (and `values`, when given); fills both outputs, and every guard region, with poison bytes, so
  /// that a key or value the sort did not write, or one written out of bounds, shows.
  SortTestBuffers(const std::vector<K>& keys, const std::vector<V>* values, bool in_place_)
      : n(keys.size()),
        in_place(in_place_),
        keys_in(n + kGuardItems),
        keys_out(n + kGuardItems),
        values_in(n + kGuardItems),
        values_out(n + kGuardItems) {
    for (auto* buffer : {&keys_in, &keys_out}) buffer->fill_bytes(kPoisonByte);
    for (auto* buffer : {&values_in, &values_out}) buffer->fill_bytes(kPoisonByte);
    if (n > 0) keys_in.upload(keys);
    if (values != nullptr && n > 0) values_in.upload(*values);
  }

  K* keys_destination() { return in_place ? keys_in.data() : keys_out.data(); }
  V* values_destination() { return in_place ? values_in.data() : values_out.data(); }
  std::vector<K> sorted_keys() const { return (in_place ? keys_in : keys_out).download(n); }
  std::vector<V> sorted_values() const { return (in_place ? values_in : values_out).download(n); }

  /// Fails the test when an out-of-place run changed its input (`keys`, `values`: what was uploaded) or when any
  /// buffer's guard region past n was written.
  void expect_inputs_and_guards_untouched(const std::vector<K>& keys, const std::vector<V>* values,
                                          const std::string& where) const {
    const auto keys_now = keys_in.download();
    const auto values_now = values_in.download();
    if (!in_place) {
      EXPECT_EQ(0, n == 0 ? 0 : std::memcmp(keys_now.data(), keys.data(), n * sizeof(K))) << "keys_in changed, " << where;
      if (values != nullptr) {
        EXPECT_EQ(0, n == 0 ? 0 : std::memcmp(values_now.data(), values->data(), n * sizeof(V)))
            << "values_in changed, " << where;
      }
    }
    auto guard = [&](const auto& all) {
      using T = typename std::decay_t<decltype(all)>::value_type;
      return all_poison(std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(n), all.end()));
    };
    EXPECT_TRUE(guard(keys_now)) << "written past n in keys_in, " << where;
    EXPECT_TRUE(guard(values_now)) << "written past n in values_in, " << where;
    EXPECT_TRUE(guard(keys_out.download())) << "written past n in keys_out, " << where;
    EXPECT_TRUE(guard(values_out.download())) << "written past n in values_out, " << where;
    if (in_place) {
      EXPECT_TRUE(all_poison(keys_out.download(n))) << "keys_out written by an in-place run, " << where;
      EXPECT_TRUE(all_poison(values_out.download(n))) << "values_out written by an in-place run, " << where;
    }
  }

  size_t n;
  bool in_place;
  prims::DeviceBuffer<K> keys_in, keys_out;
  prims::DeviceBuffer<V> values_in, values_out;
};

}  // namespace prims::test
