#pragma once
// Device-wide run-length encoding: prims::device::run_length_encode and non_trivial_runs. A run is a stretch of
// consecutive equal items (operator==).
//
// Inputs are random-access iterators, outputs pointers or output iterators; the number of runs lands in device
// memory. Two-phase temporary storage (call with temp == nullptr to learn temp_bytes); it launches on `stream`,
// never synchronizes it, and returns the first CUDA error it meets.
//
// One pass each (detail/by_key_kernels.cuh): a reduction by key of ones, the items as keys.

#include <cuda_runtime.h>

#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/device/detail/by_key_kernels.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// Run i: unique_out[i] its first item, counts_out[i] its length (in counts_out's value type, size_t where it
/// has none); the number of runs to *num_runs. n == 0 writes a count of 0.
/// Example: `run_length_encode(temp, bytes, d_in, d_items, d_lengths, d_num_runs, n);`
template <class InIt, class UniqueOut, class CountOut>
cudaError_t run_length_encode(void* temp, size_t& temp_bytes, InIt in, UniqueOut unique_out, CountOut counts_out,
                              size_t* num_runs, size_t n, cudaStream_t s = 0) {
  using Item = std::remove_cv_t<typename std::iterator_traits<InIt>::value_type>;
  using Length = prims::detail::scan::RunLengthOf<CountOut>;
  const prims::detail::scan::ConstantIterator<Length> ones{Length{1}};
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template ByKey<Item, Length>;
    return prims::detail::scan::dispatch_by_key<Policy, prims::detail::scan::ByKeyMode::Reduce, Length>(
        temp, temp_bytes, in, ones, unique_out, counts_out, num_runs, n, prims::Sum{}, prims::Equal{}, Length{}, s,
        "run_length_encode");
  });
}

/// The runs longer than one only: run i's start (its first item's position) to offsets_out[i], its length to
/// lengths_out[i] (in their value types, size_t where they have none); their number to *num_runs. n == 0 writes a
/// count of 0.
/// Example: `non_trivial_runs(temp, bytes, d_in, d_offsets, d_lengths, d_num_runs, n);`
template <class InIt, class OffsetOut, class LengthOut>
cudaError_t non_trivial_runs(void* temp, size_t& temp_bytes, InIt in, OffsetOut offsets_out, LengthOut lengths_out,
                             size_t* num_runs, size_t n, cudaStream_t s = 0) {
  using Item = std::remove_cv_t<typename std::iterator_traits<InIt>::value_type>;
  using Length = prims::detail::scan::RunLengthOf<LengthOut>;
  const prims::detail::scan::ConstantIterator<Length> ones{Length{1}};
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::template ByKey<Item, Length>;
    return prims::detail::scan::dispatch_by_key<Policy, prims::detail::scan::ByKeyMode::NonTrivialRuns, Length>(
        temp, temp_bytes, in, ones, offsets_out, lengths_out, num_runs, n, prims::Sum{}, prims::Equal{}, Length{}, s,
        "non_trivial_runs");
  });
}

}  // namespace prims::device
