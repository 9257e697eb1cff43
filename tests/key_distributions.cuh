#pragma once
// 64-bit key patterns of named distributions, for the sorts' tests: evenly spread, skewed in the ways that move a
// sort between its paths (few distinct top bits, one dominant prefix, one value many keys share), and ordered.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace prims::test {

/// n 64-bit patterns of the distribution `name`:
///   uniform             random bits
///   top_B               random bits with the top B bits zero (B a number)
///   low_entropy         each bit set with chance 1/8 (three random words ANDed)
///   all_equal           one value
///   sorted, reversed    multiples of 3, ascending or descending
///   few_distinct        four values, differing in bits 45 and 46
///   dominant_prefix     90% of the keys share their top 32 bits
///   five_percent_zeros  5% zeros, the rest random
///   power_law           the top bits of u^4 (u uniform in [0, 1)), crowded near zero
inline std::vector<uint64_t> key_bits_of(const std::string& name, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys(n);
  const int top_zeros = name.rfind("top_", 0) == 0 ? std::stoi(name.substr(4)) : 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    if (name == "uniform") keys[i] = r;
    if (top_zeros > 0) keys[i] = r >> top_zeros;
    if (name == "low_entropy") keys[i] = r & rng() & rng();
    if (name == "all_equal") keys[i] = 0x9E3779B97F4A7C15ull;
    if (name == "sorted") keys[i] = i * 3;
    if (name == "reversed") keys[i] = (n - i) * 3;
    if (name == "few_distinct") keys[i] = (r % 4) << 45;
    if (name == "dominant_prefix") keys[i] = r % 10 != 0 ? (0xABCDull << 48) | (rng() >> 32) : rng();
    if (name == "five_percent_zeros") keys[i] = r % 20 == 0 ? 0 : rng();
    if (name == "power_law") {
      const double u = static_cast<double>(r >> 11) / 9007199254740992.0;
      keys[i] = static_cast<uint64_t>(u * u * u * u * 18446744073709549568.0);
    }
  }
  return keys;
}

}  // namespace prims::test
