#pragma once
// Device-wide histograms: prims::device::histogram_even (num_bins equal bins over [lower, upper)) and
// histogram_range (bin i is [levels[i], levels[i + 1]), levels in device memory). Samples outside the bins (and
// NaNs) are not counted. The counters (4- or 8-byte integers, num_bins of them) are overwritten.
//
// Samples come from any random-access iterator. Two-phase temporary storage (call with temp == nullptr to learn
// temp_bytes; a few bytes); they launch on `stream`, never synchronize it, and return the first CUDA error they
// meet.
//
// One pass (detail/histogram_kernels.cuh): each block counts its share of the samples into bins in shared memory,
// then adds them to the output.

#include <cuda_runtime.h>

#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/device/detail/histogram_kernels.cuh"
#include "prims/device/detail/tuning.cuh"

namespace prims::device {

/// num_bins equal-width bins over [lower, upper): sample x goes to bin (x - lower) * num_bins / (upper - lower),
/// exact for integer samples and levels where (upper - lower) * num_bins < 2^64, else (x - lower) * (num_bins /
/// (upper - lower)) in double (detail::EvenBinning).
/// Example: `histogram_even(temp, bytes, d_pixels, d_counts, 256, 0, 256, n);  // one bin a byte value`
template <class SampleIt, class Counter, class Level>
cudaError_t histogram_even(void* temp, size_t& temp_bytes, SampleIt samples, Counter* histogram, int num_bins,
                           Level lower, Level upper, size_t n, cudaStream_t s = 0) {
  if (temp != nullptr && !(lower < upper)) return prims::detail::invalid_value("histogram_even: lower >= upper");
  using Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>;
  using Even = prims::detail::EvenBinning<Level>;
  const Even binning = Even::make(lower, upper, num_bins);
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::Histogram;
    if constexpr (Even::template kOneWindow<Sample>) {
      if (binning.shift >= 0) {
        return prims::detail::dispatch_histogram<Policy>(temp, temp_bytes, samples, histogram, n,
                                                         prims::detail::ShiftBinning::of(binning), s,
                                                         "histogram_even");
      }
    }
    return prims::detail::dispatch_histogram<Policy>(temp, temp_bytes, samples, histogram, n, binning, s,
                                                     "histogram_even");
  });
}

/// Bin i is [levels[i], levels[i + 1]) for num_bins + 1 ascending levels in device memory.
template <class SampleIt, class Counter, class Level>
cudaError_t histogram_range(void* temp, size_t& temp_bytes, SampleIt samples, Counter* histogram, int num_bins,
                            const Level* levels, size_t n, cudaStream_t s = 0) {
  if (temp != nullptr && levels == nullptr) return prims::detail::invalid_value("histogram_range: levels is null");
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::Histogram;
    return prims::detail::dispatch_histogram<Policy>(
        temp, temp_bytes, samples, histogram, n, prims::detail::RangeBinning<Level>{levels, num_bins}, s,
        "histogram_range");
  });
}

}  // namespace prims::device
