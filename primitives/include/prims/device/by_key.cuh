#pragma once
// Device-wide reductions and scans by key: prims::device::reduce_by_key, inclusive_scan_by_key and
// exclusive_scan_by_key. A run is a stretch of consecutive keys equal under eq (eq(earlier, later)); each
// restarts the reduction or the scan.
//
// Inputs are random-access iterators (pointers, thrust::counting_iterator, thrust::transform_iterator, ...),
// outputs pointers or output iterators. Values are combined in the input's value type with op, which must be
// associative (not necessarily commutative: the order is kept). Two-phase temporary storage (call with
// temp == nullptr to learn temp_bytes); they launch on `stream`, never synchronize it, and return the first CUDA
// error they meet. Keys and values must be default-constructible.
//
// One pass each (detail/by_key_kernels.cuh): the segmented scan's operator on the decoupled look-back of
// detail/lookback.cuh, as the scan's.

#include <cuda_runtime.h>

#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/device/detail/by_key_kernels.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// For every run of consecutive equal keys, in order: its first key to unique_keys_out and the op-reduction of
/// its values to aggregates_out; the number of runs to *num_runs (device memory). n == 0 writes a count of 0.
/// Example: `reduce_by_key(temp, bytes, d_keys, d_unique, d_values, d_sums, d_num_runs, n, prims::Sum{});`
template <class KeyIt, class KeyOut, class ValIt, class ValOut, class Op, class Eq = prims::Equal>
cudaError_t reduce_by_key(void* temp, size_t& temp_bytes, KeyIt keys_in, KeyOut unique_keys_out, ValIt values_in,
                          ValOut aggregates_out, size_t* num_runs, size_t n, Op op, Eq eq = {},
                          cudaStream_t s = 0) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  using V = std::remove_cv_t<typename std::iterator_traits<ValIt>::value_type>;
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template ByKey<K, V>;
    return prims::detail::scan::dispatch_by_key<Policy, prims::detail::scan::ByKeyMode::Reduce, V>(
        temp, temp_bytes, keys_in, values_in, unique_keys_out, aggregates_out, num_runs, n, op, eq, V{}, s,
        "reduce_by_key");
  });
}

/// values_out[i] = the op-reduction of values_in over i's run up to and including i. values_out may be
/// values_in (in place).
template <class KeyIt, class ValIt, class OutIt, class Op, class Eq = prims::Equal>
cudaError_t inclusive_scan_by_key(void* temp, size_t& temp_bytes, KeyIt keys, ValIt values_in, OutIt values_out,
                                  size_t n, Op op, Eq eq = {}, cudaStream_t s = 0) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  using V = std::remove_cv_t<typename std::iterator_traits<ValIt>::value_type>;
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template ByKey<K, V>;
    return prims::detail::scan::dispatch_by_key<Policy, prims::detail::scan::ByKeyMode::ScanInclusive, V>(
        temp, temp_bytes, keys, values_in, static_cast<V*>(nullptr), values_out, nullptr, n, op, eq, V{}, s,
        "inclusive_scan_by_key");
  });
}

/// values_out[i] = init op (the op-reduction of values_in over i's run before i): init where i starts its run.
/// values_out may be values_in (in place).
template <class KeyIt, class ValIt, class OutIt, class Op, class T, class Eq = prims::Equal>
cudaError_t exclusive_scan_by_key(void* temp, size_t& temp_bytes, KeyIt keys, ValIt values_in, OutIt values_out,
                                  size_t n, Op op, T init, Eq eq = {}, cudaStream_t s = 0) {
  using K = std::remove_cv_t<typename std::iterator_traits<KeyIt>::value_type>;
  using V = std::remove_cv_t<typename std::iterator_traits<ValIt>::value_type>;
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template ByKey<K, V>;
    return prims::detail::scan::dispatch_by_key<Policy, prims::detail::scan::ByKeyMode::ScanExclusive, V>(
        temp, temp_bytes, keys, values_in, static_cast<V*>(nullptr), values_out, nullptr, n, op, eq,
        static_cast<V>(init), s, "exclusive_scan_by_key");
  });
}

}  // namespace prims::device
