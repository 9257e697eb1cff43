#pragma once
// Segmented radix sort: prims::device::segmented_radix_sort_keys and segmented_radix_sort_pairs.
//
// Segment i is [begin_offsets[i], end_offsets[i]) of the input (device arrays of any integer type; an end at or
// before its begin is an empty segment). Each segment is sorted stably on its own, by the ordered bits
// [begin_bit, end_bit) of its keys, in the order of the plain sort (device/radix_sort.cuh, util/radix_key.cuh:
// floats as numpy orders them, NaNs last, -0.0 equal to +0.0; Order::Descending is the exact reverse, still
// stable). Segments must not overlap and must lie inside [0, n); they need not be in order nor cover the input:
// elements outside every segment are neither read nor written in the outputs. Keys: 1 to 8-byte integers, float
// and double. Values: any trivially copyable type of up to 16 bytes. At most 2^32 - 1 segments and n below 2^58
// (more is cudaErrorInvalidValue, as is an invalid bit range).
//
// Each segment goes to a class chosen by its size on the device (no host synchronization; the offsets stay on the
// device): segments of up to 64 keys (and up to a sixteenth of a tile, where the key fits a word) are sorted by a
// group of a warp's lanes each, a bitonic network in registers (warp/bitonic_sort.cuh); larger ones up to a tile are
// packed 16, 4 or 1 to a tile and radix-sorted in registers and shared memory, up to four tiles by a block of 1024
// threads the same way; segments of up to 2^15 keys are sorted by one block in LSD passes through global memory, and
// bigger ones by Onesweep passes shared by all of them, many blocks a segment (device/detail/segmented_onesweep.cuh). The kernels,
// the size classes and the bytes they move are described in device/detail/segmented_radix_sort_dispatch.cuh.
// Two-phase temporary storage (temp == nullptr asks for temp_bytes); launches on `stream`, never synchronizes it,
// never throws, and returns the first CUDA error. keys_in == keys_out (and values_in == values_out) sorts in place.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/segmented_radix_sort_dispatch.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/device/radix_sort.cuh"

namespace prims::device {

/// Sorts each segment [begin_offsets[i], end_offsets[i]) of keys_in into the same positions of keys_out.
/// Example (rows of a 1000 x 64 matrix, each sorted on its own):
///   // d_begin[i] = 64 * i, d_end[i] = 64 * (i + 1), on the device
///   size_t bytes = 0;
///   prims::device::segmented_radix_sort_keys(nullptr, bytes, d_in, d_out, 64000, 1000, d_begin, d_end);
///   cudaMalloc(&temp, bytes);
///   prims::device::segmented_radix_sort_keys(temp, bytes, d_in, d_out, 64000, 1000, d_begin, d_end);
template <class K, class Offset>
cudaError_t segmented_radix_sort_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                                      size_t num_segments, const Offset* begin_offsets, const Offset* end_offsets,
                                      Order order = Order::Ascending, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                                      cudaStream_t s = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::with_tuning([&](auto table) {
    return detail::segmented::segmented_radix_sort<decltype(table)>(
        temp, temp_bytes, io, n, num_segments, begin_offsets, end_offsets, order, begin_bit, end_bit, s);
  });
}

/// Sorts the (key, value) pairs of each segment by key, stably: equal keys keep their values' input order.
/// Example (a per-segment argsort: d_index holds 0, 1, ..., n - 1; 64-bit offsets, largest first):
///   size_t bytes = 0;
///   prims::device::segmented_radix_sort_pairs(nullptr, bytes, d_keys, d_sorted, d_index, d_order, n, segments,
///                                             d_begin, d_end, prims::device::Order::Descending);
///   cudaMalloc(&temp, bytes);
///   prims::device::segmented_radix_sort_pairs(temp, bytes, d_keys, d_sorted, d_index, d_order, n, segments,
///                                             d_begin, d_end, prims::device::Order::Descending);
template <class K, class V, class Offset>
cudaError_t segmented_radix_sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                                       const V* values_in, V* values_out, size_t n, size_t num_segments,
                                       const Offset* begin_offsets, const Offset* end_offsets,
                                       Order order = Order::Ascending, int begin_bit = 0,
                                       int end_bit = 8 * sizeof(K), cudaStream_t s = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::with_tuning([&](auto table) {
    return detail::segmented::segmented_radix_sort<decltype(table)>(
        temp, temp_bytes, io, n, num_segments, begin_offsets, end_offsets, order, begin_bit, end_bit, s);
  });
}

}  // namespace prims::device
