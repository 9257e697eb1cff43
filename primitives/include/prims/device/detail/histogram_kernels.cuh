#pragma once
// Kernels and dispatch of the histograms (prims::device::histogram_even, histogram_range; device/histogram.cuh).
//
// Privatized bins: each block of a persistent grid counts its share of the samples into its own copy of the bins in
// shared memory (shared-memory atomics, 32-bit: a block counts at most 2^32 - 1 samples into one bin, which holds
// for inputs below about 2^42 samples), then adds its nonzero bins to the output with one global atomic each. The
// output is zeroed first. Where the bins (and, for histogram_range, the levels) do not fit a block's shared memory,
// every sample is added to the output straight away.

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/util/vector_load.cuh"

namespace prims::detail {

/// histogram_even's binning, set up once on the host (make): the bin of x among num_bins equal bins over
/// [lower, upper), or -1 outside (NaN included). Integer samples and levels: (x - lower) * num_bins / (upper -
/// lower), exactly wherever (upper - lower) * num_bins < 2^64: a shift where the bins' width is a power of two, else
/// a double estimate corrected to the integer quotient (no 64-bit division a sample). Wider integer ranges and
/// floating point: (x - lower) * (num_bins / (upper - lower)) in double, the last bin taking what rounding would
/// push past it.
template <class Level>
struct EvenBinning {
  Level lower;
  Level upper;
  int num_bins;
  int shift;     // >= 0: integer bins of width 2^shift
  bool exact;    // integer levels and width * num_bins < 2^64
  double scale;  // num_bins / (upper - lower)
  unsigned long long width;
  static constexpr bool kSharedLevels = false;

  static EvenBinning make(Level lower, Level upper, int num_bins) {
    EvenBinning b{lower, upper, num_bins, -1, false, 0.0, 0};
    b.scale = static_cast<double>(num_bins) / (static_cast<double>(upper) - static_cast<double>(lower));
    if constexpr (std::is_integral_v<Level>) {
      b.width = static_cast<unsigned long long>(upper) - static_cast<unsigned long long>(lower);
      const auto bins = static_cast<unsigned long long>(num_bins > 0 ? num_bins : 1);
      b.exact = b.width <= ~0ull / bins;
      if (b.exact) b.scale = static_cast<double>(bins) / static_cast<double>(b.width);  // from the exact width
      for (int k = 0; k < 64 && bins <= (~0ull >> k); ++k) {
        if ((bins << k) == b.width) b.shift = k;
      }
    }
    return b;
  }

  /// Whether every sample and level value lies in one window of 2^32 integers (both signed and at most 32 bits,
  /// or both unsigned and at most 32 bits, or narrow unsigned samples with signed levels): then x - lower taken
  /// modulo 2^32 is the distance for samples inside and at least the width for the others.
  template <class Sample>
  static constexpr bool kOneWindow =
      std::is_integral_v<Sample> && std::is_integral_v<Level> && sizeof(Sample) <= 4 && sizeof(Level) <= 4 &&
      (std::is_signed_v<Level> ? (std::is_signed_v<Sample> || sizeof(Sample) < 4) : !std::is_signed_v<Sample>);

  template <class Sample>
  __host__ __device__ int bin(const Sample& x) const {
    if constexpr (kOneWindow<Sample>) {
      // One unsigned compare for the range and, where the bins' width is a power of two, a shift: 32-bit
      // arithmetic for the samples narrow histograms see most.
      const unsigned offset = static_cast<unsigned>(x) - static_cast<unsigned>(lower);
      if (offset >= width) return -1;
      if (shift >= 0) return static_cast<int>(offset >> shift);
    }
    if (!(x >= lower && x < upper)) return -1;
    if constexpr (std::is_integral_v<Sample> && std::is_integral_v<Level>) {
      const auto offset = static_cast<unsigned long long>(x) - static_cast<unsigned long long>(lower);
      if (shift >= 0) return static_cast<int>(offset >> shift);
      if (exact) {
        // The product is exact; the double quotient (from the exact width) is within one of the integer one.
        const unsigned long long product = offset * static_cast<unsigned long long>(num_bins);
        auto quotient = static_cast<unsigned long long>(static_cast<double>(offset) * scale);
        if (quotient >= static_cast<unsigned long long>(num_bins)) quotient = num_bins - 1;
        if (quotient * width > product) --quotient;
        if ((quotient + 1) * width <= product) ++quotient;
        return static_cast<int>(quotient);
      }
      const int b = static_cast<int>(static_cast<double>(offset) * scale);
      return b < num_bins ? b : num_bins - 1;
    } else {
      const int b = static_cast<int>((static_cast<double>(x) - static_cast<double>(lower)) * scale);
      return b < num_bins ? b : num_bins - 1;
    }
  }

  template <class Sample>
  __device__ int operator()(const Sample& x, const Level*) const {
    return bin(x);
  }
};

/// histogram_range's binning: bin i is [levels[i], levels[i + 1]), found by binary search over the levels (in
/// shared memory where they fit, else in global memory).
template <class Level>
struct RangeBinning {
  const Level* levels;
  int num_bins;
  static constexpr bool kSharedLevels = true;
  template <class Sample>
  __device__ int operator()(const Sample& x, const Level* shared_levels) const {
    const Level* at = shared_levels != nullptr ? shared_levels : levels;
    if (!(x >= at[0] && x < at[num_bins])) return -1;
    int low = 0;  // levels[low] <= x < levels[high]
    int high = num_bins;
    while (high - low > 1) {
      const int middle = (low + high) / 2;
      if (x >= at[middle]) {
        low = middle;
      } else {
        high = middle;
      }
    }
    return low;
  }
};

template <class Binning>
struct LevelOf;
template <class Level>
struct LevelOf<EvenBinning<Level>> {
  using type = Level;
};
template <class Level>
struct LevelOf<RangeBinning<Level>> {
  using type = Level;
};

/// Adds `count` to a counter of 4 or 8 bytes (signed or not: counts are never negative).
template <class Counter>
__device__ inline void add_count(Counter* counter, unsigned count) {
  static_assert(std::is_integral_v<Counter> && (sizeof(Counter) == 4 || sizeof(Counter) == 8),
                "histogram counters are 4- or 8-byte integers");
  if constexpr (sizeof(Counter) == 4) {
    atomicAdd(reinterpret_cast<unsigned*>(counter), count);
  } else {
    atomicAdd(reinterpret_cast<unsigned long long*>(counter), static_cast<unsigned long long>(count));
  }
}

/// Whether the samples are read as 16-byte vectors (where the pointer is aligned).
template <class SampleIt, class Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>>
inline constexpr bool kVectorSamples = std::is_pointer_v<SampleIt> && kVectorItems<Sample> > 1;
/// Vectors a thread loads before it counts them.
inline constexpr int kVectorLoads = 4;

/// A persistent grid over the samples, kItems loads a thread in flight; PRIVATIZED: the block's bins (and the
/// levels, for range binning) in dynamic shared memory, else every sample counted in the output at once.
template <class Policy, bool PRIVATIZED, class SampleIt, class Binning, class Counter>
__global__ void __launch_bounds__(Policy::block_threads)
    histogram_kernel(SampleIt samples, size_t n, Binning binning, Counter* histogram) {
  constexpr bool privatized = PRIVATIZED;
  using Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>;
  using Level = typename LevelOf<Binning>::type;
  constexpr int kThreads = Policy::block_threads;
  constexpr int kItems = Policy::items_per_thread;
  extern __shared__ unsigned long long shared_words[];
  unsigned* bins = reinterpret_cast<unsigned*>(shared_words);
  const int num_bins = binning.num_bins;
  const Level* shared_levels = nullptr;
  if constexpr (Binning::kSharedLevels) {
    if (privatized) {
      // After the bins, aligned for the levels.
      const size_t offset = (static_cast<size_t>(num_bins) * sizeof(unsigned) + alignof(Level) - 1) /
                            alignof(Level) * alignof(Level);
      shared_levels = reinterpret_cast<const Level*>(reinterpret_cast<const unsigned char*>(shared_words) + offset);
    }
  }
  wait_for_prior_grids();
  allow_dependent_grids();
  if (privatized) {
    for (int b = threadIdx.x; b < num_bins; b += kThreads) bins[b] = 0;
    if constexpr (Binning::kSharedLevels) {
      Level* levels = const_cast<Level*>(shared_levels);
      for (int b = threadIdx.x; b <= num_bins; b += kThreads) levels[b] = binning.levels[b];
    }
    __syncthreads();
  }
  auto count = [&](const Sample& x) {
    const int bin = binning(x, shared_levels);
    if (bin < 0) return;
    if constexpr (PRIVATIZED) {
      atomicAdd(&bins[bin], 1u);
    } else {
      add_count(&histogram[bin], 1u);
    }
  };
  size_t scalar_begin = 0;
  if constexpr (kVectorSamples<SampleIt>) {
    // Pointers to samples narrower than 16 bytes, 16-byte aligned: whole vectors, kVectorLoads a thread in flight.
    if (reinterpret_cast<uintptr_t>(samples) % kVectorBytes == 0) {
      using Vec = Vector<Sample>;
      constexpr int kPerVector = kVectorItems<Sample>;
      const size_t vectors = n / kPerVector;
      const Vec* vectors_in = reinterpret_cast<const Vec*>(samples);
      const size_t stride = static_cast<size_t>(gridDim.x) * kThreads * kVectorLoads;
      for (size_t base = static_cast<size_t>(blockIdx.x) * kThreads * kVectorLoads + threadIdx.x; base < vectors;
           base += stride) {
        Vec loaded[kVectorLoads];
#pragma unroll
        for (int j = 0; j < kVectorLoads; ++j) {
          const size_t v = base + static_cast<size_t>(j) * kThreads;
          if (v < vectors) loaded[j] = vectors_in[v];
        }
#pragma unroll
        for (int j = 0; j < kVectorLoads; ++j) {
          if (base + static_cast<size_t>(j) * kThreads < vectors) {
#pragma unroll
            for (int k = 0; k < kPerVector; ++k) count(loaded[j].items[k]);
          }
        }
      }
      scalar_begin = vectors * kPerVector;
    }
  }
  // The rest (every sample of an iterator): kItems loads a thread in flight.
  const size_t stride = static_cast<size_t>(gridDim.x) * kThreads * kItems;
  for (size_t base = scalar_begin + static_cast<size_t>(blockIdx.x) * kThreads * kItems + threadIdx.x; base < n;
       base += stride) {
    Sample items[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const size_t i = base + static_cast<size_t>(j) * kThreads;
      if (i < n) items[j] = samples[i];
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (base + static_cast<size_t>(j) * kThreads < n) count(items[j]);
    }
  }
  if (privatized) {
    __syncthreads();
    for (int b = threadIdx.x; b < num_bins; b += kThreads) {
      const unsigned count = bins[b];
      if (count != 0) add_count(&histogram[b], count);
    }
  }
}

/// A histogram with its policy given: the output zeroed, then one persistent pass over the samples. temp holds
/// nothing (the two-phase protocol still asks for a few bytes).
template <class Policy, class SampleIt, class Binning, class Counter>
cudaError_t dispatch_histogram(void* temp, size_t& temp_bytes, SampleIt samples, Counter* histogram, size_t n,
                               Binning binning, cudaStream_t stream, const char* name) {
  using Level = typename LevelOf<Binning>::type;
  void* parts[1] = {nullptr};
  PRIMS_TRY(carve_temp(temp, temp_bytes, {0}, parts));
  if (temp == nullptr) return cudaSuccess;
  const int num_bins = binning.num_bins;
  if (num_bins <= 0) return invalid_value("%s: num_bins = %d (at least 1)", name, num_bins);
  if (histogram == nullptr) return invalid_value("%s: histogram is null", name);
  // The output holds anything on entry.
  PRIMS_TRY(cudaMemsetAsync(histogram, 0, static_cast<size_t>(num_bins) * sizeof(Counter), stream));
  if (n == 0) return cudaSuccess;
  size_t shared_bytes = static_cast<size_t>(num_bins) * sizeof(unsigned);
  if constexpr (Binning::kSharedLevels) {
    shared_bytes = (shared_bytes + alignof(Level) - 1) / alignof(Level) * alignof(Level) +
                   (static_cast<size_t>(num_bins) + 1) * sizeof(Level);
  }
  size_t shared_limit = 0;
  PRIMS_TRY(shared_memory_per_block(shared_limit));
  const bool privatized = shared_bytes <= shared_limit;
  const size_t tile = static_cast<size_t>(Policy::block_threads) * Policy::items_per_thread;
  if (!privatized) {
    return launch_persistent(histogram_kernel<Policy, false, SampleIt, Binning, Counter>, (n + tile - 1) / tile,
                             Policy::block_threads, 0, stream, samples, n, binning, histogram);
  }
  return launch_persistent(histogram_kernel<Policy, true, SampleIt, Binning, Counter>, (n + tile - 1) / tile,
                           Policy::block_threads, shared_bytes, stream, samples, n, binning, histogram);
}

}  // namespace prims::detail
