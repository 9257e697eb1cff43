#pragma once
// An associative op that is not commutative, for catching scans that combine items out of order: composition
// of affine maps x -> a * x + b over the integers mod 2^32. compose(f, g) applies f first, then g.

#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

namespace prims::test {

struct Affine {
  uint32_t a;
  uint32_t b;
  __host__ __device__ friend bool operator==(const Affine& f, const Affine& g) { return f.a == g.a && f.b == g.b; }
  friend std::ostream& operator<<(std::ostream& os, const Affine& f) { return os << "{" << f.a << ", " << f.b << "}"; }
};

struct Compose {
  __host__ __device__ Affine operator()(const Affine& f, const Affine& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};

/// Random maps with odd multipliers (so no product collapses to 0 and hides an order mistake).
inline std::vector<Affine> random_affine(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Affine> maps(n);
  for (auto& f : maps) {
    f.a = static_cast<uint32_t>(rng()) | 1u;
    f.b = static_cast<uint32_t>(rng());
  }
  return maps;
}

}  // namespace prims::test
