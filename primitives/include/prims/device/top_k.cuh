#pragma once
// Device-wide top-k: prims::device::top_k_keys and top_k_pairs; per segment: segmented_top_k_keys and
// segmented_top_k_pairs.
//
// The min(k, n) winners of n keys, sorted, into keys_out[0, min(k, n)): with Order::Descending (the default) the
// k largest, largest first; with Ascending the k smallest, smallest first. Keys compare as the sort orders them
// (radix_key.cuh: NaNs are the largest floats, -0.0 equals +0.0), and the result is deterministic: among equal
// keys the earlier input position wins and comes first, so it is exactly the first k keys of the stable sort.
// top_k_pairs carries each key's value (values_in holding 0, 1, ..., n - 1 gives an arg-top-k). Two-phase
// temporary storage (call with temp == nullptr to learn temp_bytes, a function of n and k); every call launches
// on `stream`, never synchronizes it, and returns the first CUDA error it meets. k >= n sorts the whole input.
//
// A radix select on the device (detail/top_k_kernels.cuh): the top digit of every key is counted, a single-pass
// split writes the keys below the k-th key's digit (winners) and copies those of its digit (candidates), the
// next digits are picked among the candidates, a last split takes the candidates below the threshold and the first
// ones equal to it, and the k winners are sorted. Uniform keys read the input twice.
//
// Per segment (rows of a batch, of any lengths): segment i's min(k, length) winners, sorted as above, go to
// keys_out[i * k ...]; a segment shorter than k leaves the rest of its k slots untouched (keys_out and values_out
// hold num_segments * k items). One block a segment reads it once and keeps, in shared memory, only the keys that
// can still beat the k-th best found so far (detail/segmented_top_k_kernels.cuh); it sorts the winners itself for k
// up to a block's threads (256), and the segmented radix sort sorts them for larger k. Segments hold fewer than 2^32 keys.

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/segmented_top_k_kernels.cuh"
#include "prims/device/detail/top_k_kernels.cuh"
#include "prims/device/detail/tuning.cuh"

namespace prims::device {

/// The min(k, n) largest keys (Descending) or smallest (Ascending), sorted, equal keys in input order.
/// Example (the 100 largest scores): `top_k_keys(temp, bytes, d_scores, d_best, n, 100);`
template <class K>
cudaError_t top_k_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n, size_t k,
                       Order order = Order::Descending, cudaStream_t s = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::with_tuning([&](auto table) {
    return detail::top_k<decltype(table), K, detail::NoValues>(temp, temp_bytes, io, n, k, order, s);
  });
}

/// top_k_keys with each key's value carried along into values_out.
/// Example (arg-top-k: d_index holds 0, 1, ..., n - 1):
///   `top_k_pairs(temp, bytes, d_scores, d_best, d_index, d_best_index, n, 100);`
template <class K, class V>
cudaError_t top_k_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                        V* values_out, size_t n, size_t k, Order order = Order::Descending, cudaStream_t s = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::with_tuning(
      [&](auto table) { return detail::top_k<decltype(table), K, V>(temp, temp_bytes, io, n, k, order, s); });
}

/// Per segment [begin_offsets[i], end_offsets[i]): its min(k, length) largest keys (Descending) or smallest
/// (Ascending), sorted, equal keys in input order, at keys_out[i * k ...]; the rest of a short segment's k slots
/// are left untouched.
/// Example (the 50 largest logits of every row of a batch of rows of V items, d_begin[i] = i * V,
/// d_end[i] = (i + 1) * V): `segmented_top_k_keys(temp, bytes, d_logits, d_best, rows, d_begin, d_end, 50);`
template <class K, class Offset>
cudaError_t segmented_top_k_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                                 size_t num_segments, const Offset* begin_offsets, const Offset* end_offsets,
                                 size_t k, Order order = Order::Descending, cudaStream_t s = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::with_tuning([&](auto table) {
    return detail::segmented_top_k<decltype(table), K, detail::NoValues, Offset>(temp, temp_bytes, io, num_segments,
                                                                               begin_offsets, end_offsets, k, order, s);
  });
}

/// segmented_top_k_keys with each key's value carried along into values_out (values_in holding each item's index
/// in its row gives every row's arg-top-k).
template <class K, class V, class Offset>
cudaError_t segmented_top_k_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out,
                                  const V* values_in, V* values_out, size_t num_segments,
                                  const Offset* begin_offsets, const Offset* end_offsets, size_t k,
                                  Order order = Order::Descending, cudaStream_t s = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::with_tuning([&](auto table) {
    return detail::segmented_top_k<decltype(table), K, V, Offset>(temp, temp_bytes, io, num_segments, begin_offsets,
                                                                end_offsets, k, order, s);
  });
}

}  // namespace prims::device
