#pragma once
// A deterministic 64-bit hash for making data on the device: test inputs, bench inputs, examples.

#include <cstdint>

#include "prims/util/host_device.cuh"

namespace prims {

/// SplitMix64's finalizer: every input bit changes about half of the output bits, so mix_bits(index ^ seed) gives
/// uniform-looking keys at any size, the same on the host and the device.
/// Example: keys[i] = static_cast<uint32_t>(mix_bits(i + seed * 0x9e3779b97f4a7c15ull));
PRIMS_HOST_DEVICE inline uint64_t mix_bits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace prims
