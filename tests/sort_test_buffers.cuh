#pragma once
// The device buffers of one sort or partition test: inputs uploaded, outputs poisoned, and where the sort writes
// (the inputs themselves when it sorts in place).

#include <algorithm>
#include <cstddef>
#include <vector>

#include "prims/util/device_buffer.cuh"

namespace prims::test {

template <class K, class V>
struct SortTestBuffers {
  /// Uploads `keys` (and `values`, when given); fills both outputs with 0xCD bytes, so that a key or value the
  /// sort did not write shows.
  SortTestBuffers(const std::vector<K>& keys, const std::vector<V>* values, bool in_place_)
      : n(keys.size()),
        in_place(in_place_),
        keys_in(std::max<size_t>(n, 1)),
        keys_out(std::max<size_t>(n, 1)),
        values_in(std::max<size_t>(n, 1)),
        values_out(std::max<size_t>(n, 1)) {
    if (n > 0) keys_in.upload(keys);
    if (values != nullptr && n > 0) values_in.upload(*values);
    keys_out.fill_bytes(0xCD);
    values_out.fill_bytes(0xCD);
  }

  K* keys_destination() { return in_place ? keys_in.data() : keys_out.data(); }
  V* values_destination() { return in_place ? values_in.data() : values_out.data(); }
  std::vector<K> sorted_keys() const { return (in_place ? keys_in : keys_out).download(n); }
  std::vector<V> sorted_values() const { return (in_place ? values_in : values_out).download(n); }

  size_t n;
  bool in_place;
  prims::DeviceBuffer<K> keys_in, keys_out;
  prims::DeviceBuffer<V> values_in, values_out;
};

}  // namespace prims::test
