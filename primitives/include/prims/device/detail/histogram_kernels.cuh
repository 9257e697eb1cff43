#pragma once
// Kernels and dispatch of the histograms (prims::device::histogram_even, histogram_range; device/histogram.cuh).
//
// Privatized bins: each block of a persistent grid counts its share of the samples into its own bins in shared
// memory (shared-memory atomics, 32-bit: a block counts at most 2^32 - 1 samples into one bin, which holds for
// inputs below about 2^42 samples), then adds its nonzero bins to the output with one global atomic each. The block
// keeps several copies of its bins where they fit (SharedBins): lane l adds to copy l % copies, and with 32 copies a
// warp's atomics fall in 32 different banks whatever bins its samples take. The output is zeroed first. Where the
// bins (and, for histogram_range, the levels) do not fit a block's shared memory, every sample is added to the
// output straight away.

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

  /// The bin of x, or num_bins (the kernel's uncounted extra bin) outside.
  template <class Sample>
  __device__ int operator()(const Sample& x, const Level*) const {
    const int b = bin(x);
    return b < 0 ? num_bins : b;
  }
};

/// histogram_even's binning where samples and levels lie in one window of 2^32 integers and the bins' width is a
/// power of two (EvenBinning::kOneWindow and shift >= 0: 8-bit samples in 256 bins, say): one subtraction, one
/// compare and one shift a sample, no branch; num_bins for samples outside.
struct ShiftBinning {
  unsigned lower;
  unsigned width;
  int shift;
  int num_bins;
  static constexpr bool kSharedLevels = false;

  template <class Level>
  static ShiftBinning of(const EvenBinning<Level>& even) {
    return {static_cast<unsigned>(even.lower), static_cast<unsigned>(even.width), even.shift, even.num_bins};
  }
  template <class Sample>
  __device__ int operator()(const Sample& x, const unsigned*) const {
    const unsigned offset = static_cast<unsigned>(x) - lower;
    return offset < width ? static_cast<int>(offset >> shift) : num_bins;
  }
};

/// histogram_range's binning: bin i is [levels[i], levels[i + 1]), found by binary search over the levels (in
/// shared memory where they fit, else in global memory).
template <class Level>
struct RangeBinning {
  const Level* levels;
  int num_bins;
  static constexpr bool kSharedLevels = true;
  /// The bin of x, or num_bins outside.
  template <class Sample>
  __device__ int operator()(const Sample& x, const Level* shared_levels) const {
    const Level* at = shared_levels != nullptr ? shared_levels : levels;
    if (!(x >= at[0] && x < at[num_bins])) return num_bins;
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
template <>
struct LevelOf<ShiftBinning> {
  using type = unsigned;
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

/// Whether the samples are read as 16-byte vectors (pointers to samples narrower than 16 bytes, from the first
/// 16-byte boundary on).
template <class SampleIt, class Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>>
inline constexpr bool kVectorSamples = std::is_pointer_v<SampleIt> && kVectorItems<Sample> > 1;
/// Vectors a thread loads before it counts them.
inline constexpr int kVectorLoads = 4;
/// The most copies of the bins a block keeps: one a lane.
inline constexpr int kMaxBinCopies = 32;

/// Sample k of a 16-byte vector held as four words (Sample of 1, 2, 4 or 8 bytes), by shifts in registers.
template <class Sample>
__device__ __forceinline__ Sample sample_in_vector(const uint4& vector, int k) {
  static_assert(sizeof(Sample) == 1 || sizeof(Sample) == 2 || sizeof(Sample) == 4 || sizeof(Sample) == 8,
                "vectors hold samples of 1, 2, 4 or 8 bytes");
  const unsigned words[4] = {vector.x, vector.y, vector.z, vector.w};
  Sample x;
  if constexpr (sizeof(Sample) == 8) {
    const unsigned long long bits =
        static_cast<unsigned long long>(words[2 * k]) | static_cast<unsigned long long>(words[2 * k + 1]) << 32;
    memcpy(&x, &bits, sizeof(x));
  } else {
    constexpr int kPerWord = 4 / sizeof(Sample);
    using Bits = std::conditional_t<sizeof(Sample) == 1, unsigned char,
                                    std::conditional_t<sizeof(Sample) == 2, unsigned short, unsigned>>;
    const Bits bits = static_cast<Bits>(words[k / kPerWord] >> (8 * sizeof(Sample) * (k % kPerWord)));
    memcpy(&x, &bits, sizeof(x));
  }
  return x;
}

/// Whether every sample of a 16-byte vector (Sample of 1, 2, 4 or 8 bytes) has the same bits.
template <class Sample>
__device__ __forceinline__ bool one_value_in_vector(const uint4& v) {
  const bool words_equal = sizeof(Sample) == 8 ? (v.x == v.z && v.y == v.w) : (v.x == v.y && v.y == v.z && v.z == v.w);
  if constexpr (sizeof(Sample) == 1) return words_equal && v.x == __byte_perm(v.x, 0, 0x0000);
  if constexpr (sizeof(Sample) == 2) return words_equal && v.x == __byte_perm(v.x, 0, 0x1010);
  return words_equal;
}

/// A block's bins in shared memory, `copies` (a power of two) of each: bin b's copy c at counts[b * copies + c],
/// with one more bin (num_bins) for the samples outside, never added to the output, so that counting takes no
/// branch. Lane l adds to copy l % copies.
struct SharedBins {
  unsigned* counts;
  int num_bins;
  int copy_shift;  // log2(copies)

  /// The most copies (at most kMaxBinCopies, at least one) of num_bins counters that fit `bytes`.
  static int copy_shift_for(int num_bins, size_t bytes) {
    int shift = 0;
    while ((1 << (shift + 1)) <= kMaxBinCopies &&
           static_cast<size_t>(num_bins) * sizeof(unsigned) << (shift + 1) <= bytes) {
      ++shift;
    }
    return shift;
  }
  /// The counters' bytes, the extra bin included.
  __host__ __device__ static size_t bytes(int num_bins, int copy_shift) {
    return (static_cast<size_t>(num_bins) + 1) * sizeof(unsigned) << copy_shift;
  }

  __device__ int copies() const { return 1 << copy_shift; }
  __device__ void clear() const {
    for (int i = threadIdx.x; i < (num_bins + 1) << copy_shift; i += blockDim.x) counts[i] = 0;
  }
  /// The shared-window address of this thread's copy of bin 0; bin b's is b * copies * 4 bytes on.
  __device__ unsigned my_copy() const {
    return static_cast<unsigned>(__cvta_generic_to_shared(counts)) + (threadIdx.x & (copies() - 1)) * 4u;
  }
  /// One more sample in `bin` (num_bins for one outside): a 32-bit shared address made by one multiply-add from the
  /// bin (a shift and an add by the copy count cost more at 8-bit samples), and no returned value (cheaper than the
  /// generic atomicAdd; docs/design-notes.md, "Histograms").
  __device__ void add(unsigned my_copy, unsigned bin_stride, int bin) const {
    asm volatile("red.shared.add.u32 [%0], 1;" : : "r"(my_copy + static_cast<unsigned>(bin) * bin_stride) : "memory");
  }
  /// `count` more samples in `bin`.
  __device__ void add(unsigned my_copy, unsigned bin_stride, int bin, unsigned count) const {
    asm volatile("red.shared.add.u32 [%0], %1;" : : "r"(my_copy + static_cast<unsigned>(bin) * bin_stride),
                 "r"(count) : "memory");
  }

  /// Adds every bin's copies to histogram[bin], one global atomic a nonzero bin. The block must be synchronized
  /// before (every count made). Each thread starts its sum at a different copy, so that a warp's reads fall in
  /// different banks.
  template <class Counter>
  __device__ void flush(Counter* histogram) const {
    const int mask = copies() - 1;
    for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
      const unsigned* copies_of_b = counts + (b << copy_shift);
      unsigned total = 0;
      for (int c = 0; c <= mask; ++c) total += copies_of_b[(c + b) & mask];
      if (total != 0) add_count(&histogram[b], total);
    }
  }
};

/// A persistent grid over the samples; PRIVATIZED: the block's bins (SharedBins; then the levels, for range
/// binning) in dynamic shared memory, else every sample counted in the output at once. Pointers to narrow samples
/// are read as 16-byte vectors from samples + head on (head < 16 samples, or n where no vector boundary is
/// reached), kVectorLoads a thread in flight, each load striding over the whole grid, so that even a small input
/// spreads over every block; iterators item by item, kItems in flight.
template <class Policy, bool PRIVATIZED, class SampleIt, class Binning, class Counter>
__global__ void __launch_bounds__(Policy::block_threads)
    histogram_kernel(SampleIt samples, size_t n, size_t head, Binning binning, int copy_shift, Counter* histogram) {
  using Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>;
  using Level = typename LevelOf<Binning>::type;
  constexpr int kThreads = Policy::block_threads;
  constexpr int kItems = Policy::items_per_thread;
  extern __shared__ unsigned long long shared_words[];
  const SharedBins bins{reinterpret_cast<unsigned*>(shared_words), binning.num_bins, copy_shift};
  const Level* shared_levels = nullptr;
  if constexpr (Binning::kSharedLevels && PRIVATIZED) {
    // After the bins, aligned for the levels.
    const size_t offset = (SharedBins::bytes(bins.num_bins, copy_shift) + alignof(Level) - 1) / alignof(Level) *
                          alignof(Level);
    shared_levels = reinterpret_cast<const Level*>(reinterpret_cast<const unsigned char*>(shared_words) + offset);
  }
  wait_for_prior_grids();
  allow_dependent_grids();
  if constexpr (PRIVATIZED) {
    bins.clear();
    if constexpr (Binning::kSharedLevels) {
      Level* levels = const_cast<Level*>(shared_levels);
      for (int b = threadIdx.x; b <= bins.num_bins; b += kThreads) levels[b] = binning.levels[b];
    }
    __syncthreads();
  }
  const unsigned my_copy = PRIVATIZED ? bins.my_copy() : 0u;
  const unsigned bin_stride = 4u << copy_shift;  // bytes from a bin's copies to the next bin's
  auto count = [&](const Sample& x) {
    const int bin = binning(x, shared_levels);
    if constexpr (PRIVATIZED) {
      bins.add(my_copy, bin_stride, bin);
    } else if (bin < bins.num_bins) {
      add_count(&histogram[bin], 1u);
    }
  };
  const size_t grid_threads = static_cast<size_t>(gridDim.x) * kThreads;
  const size_t thread = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x;
  size_t scalar_begin = 0;
  if constexpr (kVectorSamples<SampleIt>) {
    if (head < n) {
      // Raw 16-byte words, samples taken out only once every load of the step is issued (loaded as Vector<Sample>,
      // each load's samples were unpacked inside its bounds branch, before the next load went out).
      constexpr int kPerVector = kVectorItems<Sample>;
      const size_t vectors = (n - head) / kPerVector;
      const uint4* vectors_in = reinterpret_cast<const uint4*>(samples + head);
      for (size_t base = thread; base < vectors; base += grid_threads * kVectorLoads) {
        uint4 loaded[kVectorLoads];
#pragma unroll
        for (int j = 0; j < kVectorLoads; ++j) {
          const size_t v = base + j * grid_threads;
          if (v < vectors) loaded[j] = vectors_in[v];
        }
#pragma unroll
        for (int j = 0; j < kVectorLoads; ++j) {
          if (base + j * grid_threads < vectors) {
            if constexpr (PRIVATIZED) {
              // A vector of one value (flat regions of an image, say) is one atomic of kPerVector.
              if (one_value_in_vector<Sample>(loaded[j])) {
                bins.add(my_copy, bin_stride, binning(sample_in_vector<Sample>(loaded[j], 0), shared_levels),
                         kPerVector);
                continue;
              }
            }
#pragma unroll
            for (int k = 0; k < kPerVector; ++k) count(sample_in_vector<Sample>(loaded[j], k));
          }
        }
      }
      if (blockIdx.x == 0 && threadIdx.x < head) count(samples[threadIdx.x]);
      scalar_begin = head + vectors * kPerVector;
    }
  }
  // The rest (every sample of an iterator).
  for (size_t base = scalar_begin + thread; base < n; base += grid_threads * kItems) {
    Sample items[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const size_t i = base + j * grid_threads;
      if (i < n) items[j] = samples[i];
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (base + j * grid_threads < n) count(items[j]);
    }
  }
  if constexpr (PRIVATIZED) {
    __syncthreads();
    bins.flush(histogram);
  }
}

/// A histogram with its policy given: the output zeroed, then one persistent pass over the samples. temp holds
/// nothing (the two-phase protocol still asks for a few bytes).
template <class Policy, class SampleIt, class Binning, class Counter>
cudaError_t dispatch_histogram(void* temp, size_t& temp_bytes, SampleIt samples, Counter* histogram, size_t n,
                               Binning binning, cudaStream_t stream, const char* name) {
  using Level = typename LevelOf<Binning>::type;
  using Sample = std::remove_cv_t<typename std::iterator_traits<SampleIt>::value_type>;
  void* parts[1] = {nullptr};
  PRIMS_TRY(carve_temp(temp, temp_bytes, {0}, parts));
  if (temp == nullptr) return cudaSuccess;
  const int num_bins = binning.num_bins;
  if (num_bins <= 0) return invalid_value("%s: num_bins = %d (at least 1)", name, num_bins);
  if (histogram == nullptr) return invalid_value("%s: histogram is null", name);
  // The output holds anything on entry.
  PRIMS_TRY(cudaMemsetAsync(histogram, 0, static_cast<size_t>(num_bins) * sizeof(Counter), stream));
  if (n == 0) return cudaSuccess;
  size_t head = n;  // no vectors
  size_t per_thread = Policy::items_per_thread;
  if constexpr (kVectorSamples<SampleIt>) {
    const size_t to_boundary = elements_to_vector_alignment(samples);
    if (to_boundary != kNoVectorAlignment && to_boundary < n) {
      head = to_boundary;
      per_thread = kVectorItems<Sample>;
    }
  }
  // As many blocks as fit, but no more than give each thread a vector (or, for iterators, kItems samples) and each
  // block four samples a bin: a small input is spread thin, so that its time is one load's and a few atomics',
  // while the blocks' flushes (a global atomic a bin) stay a small part of the work.
  const size_t by_threads = (n + Policy::block_threads * per_thread - 1) / (Policy::block_threads * per_thread);
  const size_t by_bins = (n + 4 * static_cast<size_t>(num_bins) - 1) / (4 * static_cast<size_t>(num_bins));
  const size_t max_blocks = by_threads < by_bins ? by_threads : by_bins;
  const int copy_shift = SharedBins::copy_shift_for(num_bins, Policy::bin_copy_bytes);
  size_t shared_bytes = SharedBins::bytes(num_bins, copy_shift);
  if constexpr (Binning::kSharedLevels) {
    shared_bytes = (shared_bytes + alignof(Level) - 1) / alignof(Level) * alignof(Level) +
                   (static_cast<size_t>(num_bins) + 1) * sizeof(Level);
  }
  size_t shared_limit = 0;
  PRIMS_TRY(shared_memory_per_block(shared_limit));
  if (shared_bytes > shared_limit) {
    return launch_persistent(histogram_kernel<Policy, false, SampleIt, Binning, Counter>, max_blocks,
                             Policy::block_threads, 0, stream, samples, n, head, binning, 0, histogram);
  }
  return launch_persistent(histogram_kernel<Policy, true, SampleIt, Binning, Counter>, max_blocks,
                           Policy::block_threads, shared_bytes, stream, samples, n, head, binning, copy_shift,
                           histogram);
}

}  // namespace prims::detail
