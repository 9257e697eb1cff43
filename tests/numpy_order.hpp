#pragma once
// numpy's sort order written directly from the values, for the references the sort tests compare with.

#include <cmath>
#include <type_traits>

namespace prims::test {

/// a < b in numpy's ascending order: integers as usual; floats with every NaN after +inf and equal to every other
/// NaN, and -0.0 equal to +0.0 (IEEE comparison does that).
template <class K>
bool numpy_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

}  // namespace prims::test
