#pragma once
// Device-wide selections (stream compaction) and partition: prims::device::select_if, select_flagged, unique,
// unique_by_key and partition_if.
//
// Each writes the items it keeps to out[0, k), in input order, and k to *num_selected (device memory): no host
// synchronization. Inputs are random-access iterators (pointers, thrust::counting_iterator,
// thrust::transform_iterator, ...), outputs pointers or output iterators. Two-phase temporary storage (call with
// temp == nullptr to learn temp_bytes); they launch on `stream`, never synchronize it, and return the first CUDA
// error they meet. n == 0 writes a count of 0. Except for partition_if, out may be the input pointer itself (in
// place): every kept item lands at or before its own position, after its tile was read.
//
// One pass each (detail/select_kernels.cuh): a tile is read once, its kept items counted, the count before it
// taken from the decoupled look-back (detail/lookback.cuh, as the scan's), and the kept items written as one
// coalesced run. partition_if counts the kept items in a read before its pass (unlike CUB's, which writes the
// others backwards from the end, its others keep their order too).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/select_kernels.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// Keeps the items with pred(item) true.
/// Example: `select_if(temp, bytes, d_in, d_out, d_count, n, [] __device__(int x) { return x > 0; });`
template <class InIt, class OutIt, class Pred>
cudaError_t select_if(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t* num_selected, size_t n, Pred pred,
                      cudaStream_t s = 0) {
  using T = prims::detail::scan::ItemOf<InIt>;
  return prims::detail::scan::with_select_policy<T>(n, [&](auto policy) {
    using Policy = decltype(policy);
    return prims::detail::scan::dispatch_select<Policy>(temp, temp_bytes, in, out, num_selected, n,
                                                        prims::detail::scan::KeepIf<Pred>{pred},
                                                        prims::detail::scan::NoSelectValues{}, s, "select_if");
  });
}

/// Keeps the items whose flag (flags[i]) differs from a value-initialized flag: nonzero numbers, true.
template <class InIt, class FlagIt, class OutIt>
cudaError_t select_flagged(void* temp, size_t& temp_bytes, InIt in, FlagIt flags, OutIt out, size_t* num_selected,
                           size_t n, cudaStream_t s = 0) {
  using T = prims::detail::scan::ItemOf<InIt>;
  return prims::detail::scan::with_select_policy<T>(n, [&](auto policy) {
    using Policy = decltype(policy);
    return prims::detail::scan::dispatch_select<Policy>(temp, temp_bytes, in, out, num_selected, n,
                                                        prims::detail::scan::KeepFlagged<FlagIt>{flags},
                                                        prims::detail::scan::NoSelectValues{}, s, "select_flagged");
  });
}

/// Partitions by pred, stable on both sides: out[0, k) the items with pred(item) true, out[k, n) the others, each
/// in input order; k to *num_selected. out must not overlap the input. Two passes: the kept items are counted
/// first (a read of the input), so that the others can be written straight to their places.
/// Example: `partition_if(temp, bytes, d_in, d_out, d_count, n, [] __device__(int x) { return x < 0; });`
template <class InIt, class OutIt, class Pred>
cudaError_t partition_if(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t* num_selected, size_t n,
                         Pred pred, cudaStream_t s = 0) {
  using T = prims::detail::scan::ItemOf<InIt>;
  return prims::detail::scan::with_select_policy<T>(n, [&](auto policy) {
    using Policy = decltype(policy);
    return prims::detail::scan::dispatch_partition<Policy>(temp, temp_bytes, in, out, num_selected, n, pred, s,
                                                           "partition_if");
  });
}

/// Keeps the first item of every run of consecutive items equal under eq (eq(earlier, later)).
template <class InIt, class OutIt, class Eq = prims::Equal>
cudaError_t unique(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t* num_selected, size_t n, Eq eq = {},
                   cudaStream_t s = 0) {
  using T = prims::detail::scan::ItemOf<InIt>;
  return prims::detail::scan::with_select_policy<T>(n, [&](auto policy) {
    using Policy = decltype(policy);
    return prims::detail::scan::dispatch_select<Policy>(temp, temp_bytes, in, out, num_selected, n,
                                                        prims::detail::scan::KeepUnique<Eq>{eq},
                                                        prims::detail::scan::NoSelectValues{}, s, "unique");
  });
}

/// Keeps the first key of every run of consecutive keys equal under eq (eq(earlier, later)), and its value: the
/// kept keys to keys_out, their values to values_out, in input order.
/// Example: `unique_by_key(temp, bytes, d_keys, d_values, d_keys_out, d_values_out, d_count, n);`
template <class KeyIt, class ValIt, class KeyOut, class ValOut, class Eq = prims::Equal>
cudaError_t unique_by_key(void* temp, size_t& temp_bytes, KeyIt keys_in, ValIt values_in, KeyOut keys_out,
                          ValOut values_out, size_t* num_selected, size_t n, Eq eq = {}, cudaStream_t s = 0) {
  using K = prims::detail::scan::ItemOf<KeyIt>;
  using V = prims::detail::scan::ItemOf<ValIt>;
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template SelectByKey<K, V>;
    return prims::detail::scan::dispatch_select<Policy>(
        temp, temp_bytes, keys_in, keys_out, num_selected, n, prims::detail::scan::KeepUnique<Eq>{eq},
        prims::detail::scan::SelectValues<ValIt, ValOut>{values_in, values_out}, s, "unique_by_key");
  });
}

}  // namespace prims::device
