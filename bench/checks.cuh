#pragma once
// What the benches check their contenders' outputs with: counts and sums over an index range computed on the device,
// fingerprints of arrays, bitwise comparison, and float references (exact sums, prefix sums and the rounding a float
// sum may carry).
//
// The counts and sums allocate nothing: a check runs between timed runs, and memory freed there would leave the
// next contender cold address translations.

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"
#include "prims/util/host_device.cuh"
#include "prims/util/mix_bits.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::bench {

namespace detail {

/// The one accumulator of sum_over: a device variable, so that a check allocates nothing.
static __device__ unsigned long long check_accumulator;

template <class Term>
__global__ void accumulate_kernel(size_t n, Term term) {
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    sum += term(i);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0 && sum != 0) atomicAdd(&check_accumulator, sum);
}

template <class Predicate>
struct OneIf {
  Predicate predicate;
  __device__ uint64_t operator()(size_t i) const { return predicate(i) ? 1 : 0; }
};

}  // namespace detail

/// The sum modulo 2^64 of term(i) (a __device__ callable returning an unsigned 64-bit word) over i in [0, n), on
/// the current device.
template <class Term>
uint64_t sum_over(size_t n, Term term) {
  unsigned long long sum = 0;
  check(cudaMemcpyToSymbol(detail::check_accumulator, &sum, sizeof sum), "clearing the check's sum");
  if (n > 0) {
    detail::accumulate_kernel<<<1024, 256>>>(n, term);
    check(cudaGetLastError(), "accumulate_kernel");
  }
  check(cudaMemcpyFromSymbol(&sum, detail::check_accumulator, sizeof sum), "reading the check's sum");
  return sum;
}

/// How many i in [0, n) satisfy predicate(i) (a __device__ callable).
template <class Predicate>
size_t count_if(size_t n, Predicate predicate) {
  return sum_over(n, detail::OneIf<Predicate>{predicate});
}

/// The bits of an integer or float item as an unsigned word (floats compared as bits, so NaNs and signed zeros count).
template <class T>
PRIMS_HOST_DEVICE uint64_t bits_of(T value) {
  return static_cast<uint64_t>(RadixKey<T>::raw_bits(value));
}

/// A 64-bit fingerprint of data[0..n) that changes when any item changes or two items swap: every item's bits are
/// hashed with its index. Taken before and after the timed runs, it shows whether an input stayed intact.
template <class T>
uint64_t fingerprint(const T* data, size_t n) {
  return sum_over(n, [=] __device__(size_t i) { return mix_bits(bits_of(data[i]) ^ mix_bits(i)); });
}

/// Whether a[0..n) and b[0..n) hold the same bits.
template <class T>
bool same_bits(const T* a, const T* b, size_t n) {
  return count_if(n, [=] __device__(size_t i) { return bits_of(a[i]) != bits_of(b[i]); }) == 0;
}

/// A sum of doubles to about 106 bits, hi + lo (Knuth's two-sum): the float references stay exact far below the
/// contenders' rounding, for double inputs too.
struct DoubleDouble {
  double hi = 0;
  double lo = 0;

  PRIMS_HOST_DEVICE void add(double x) {
    const double sum = hi + x;
    const double x_part = sum - hi;
    const double error = (hi - (sum - x_part)) + (x - x_part);
    const double low = lo + error;
    hi = sum + low;
    lo = low - (hi - sum);
  }
  PRIMS_HOST_DEVICE void add(const DoubleDouble& other) {
    add(other.hi);
    add(other.lo);
  }
  PRIMS_HOST_DEVICE double value() const { return hi + lo; }
};

/// How far a sum computed in T of `items` terms whose magnitudes add up to `magnitude` may lie from the exact sum, in
/// any order a GPU reduction or scan adds them: 32 eps * magnitude for the roundings inside a tile (a thread's
/// sequential sum, warp and block trees: fewer than 64, each within eps/2 of the magnitude), plus sqrt(items) / 32
/// eps * magnitude for the chain across tiles of at least 1024 items (look-back, carried prefixes, partial sums
/// of blocks). Along a chain of t steps the roundings, each within eps/2 of a partial sum that grows along it, add up
/// like a random walk of standard deviation eps * magnitude * sqrt(t) / 6: the bound allows six of them.
template <class T>
PRIMS_HOST_DEVICE double summation_tolerance(double magnitude, size_t items) {
  constexpr double kEpsilon = std::numeric_limits<T>::epsilon();
  return kEpsilon * magnitude * (32.0 + ::sqrt(static_cast<double>(items)) / 32.0);
}

namespace detail {

/// The references work in contiguous chunks, one per thread: a plain sequential sum, nothing like the contenders.
inline constexpr size_t kReferenceChunks = size_t{1} << 16;
inline constexpr int kReferenceThreads = 256;

inline size_t reference_chunk(size_t n) { return (n + kReferenceChunks - 1) / kReferenceChunks; }

template <class T>
__global__ void chunk_sums_kernel(const T* in, size_t n, size_t chunk, DoubleDouble* sums, double* magnitudes) {
  const size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  DoubleDouble sum;
  double magnitude = 0;
  for (size_t i = c * chunk; i < n && i < (c + 1) * chunk; ++i) {
    sum.add(static_cast<double>(in[i]));
    magnitude += fabs(static_cast<double>(in[i]));
  }
  sums[c] = sum;
  magnitudes[c] = magnitude;
}

template <class T>
__global__ void chunk_scan_kernel(const T* in, size_t n, size_t chunk, const DoubleDouble* chunk_offsets,
                                  const double* chunk_magnitude_offsets, double* sums, float* magnitudes) {
  const size_t c = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  DoubleDouble sum = chunk_offsets[c];
  double magnitude = chunk_magnitude_offsets[c];
  for (size_t i = c * chunk; i < n && i < (c + 1) * chunk; ++i) {
    sum.add(static_cast<double>(in[i]));
    magnitude += fabs(static_cast<double>(in[i]));
    sums[i] = sum.value();
    magnitudes[i] = static_cast<float>(magnitude);
  }
}

/// Every chunk's exact sum and sum of magnitudes, on the host.
struct ChunkSums {
  std::vector<DoubleDouble> sums;
  std::vector<double> magnitudes;
};

template <class T>
ChunkSums chunk_sums(const T* in, size_t n) {
  DeviceBuffer<DoubleDouble> sums(kReferenceChunks);
  DeviceBuffer<double> magnitudes(kReferenceChunks);
  chunk_sums_kernel<<<kReferenceChunks / kReferenceThreads, kReferenceThreads>>>(in, n, reference_chunk(n),
                                                                                  sums.data(), magnitudes.data());
  check(cudaGetLastError(), "chunk_sums_kernel");
  return {sums.download(), magnitudes.download()};
}

}  // namespace detail

/// The sum of in[0..n) (floats) to double precision, and the sum of the items' magnitudes.
struct ReferenceSum {
  double sum;
  double magnitude;
};

template <class T>
ReferenceSum reference_sum(const T* in, size_t n) {
  const detail::ChunkSums chunks = detail::chunk_sums(in, n);
  DoubleDouble sum;
  double magnitude = 0;
  for (size_t c = 0; c < detail::kReferenceChunks; ++c) {
    sum.add(chunks.sums[c]);
    magnitude += chunks.magnitudes[c];
  }
  return {sum.value(), magnitude};
}

/// The inclusive prefix sums of in[0..n) (floats) to double precision, and those of the items' magnitudes (the
/// scale of each prefix sum's rounding, see summation_tolerance).
struct ReferenceScan {
  DeviceBuffer<double> sums;
  DeviceBuffer<float> magnitudes;
};

template <class T>
ReferenceScan reference_inclusive_scan(const T* in, size_t n) {
  detail::ChunkSums chunks = detail::chunk_sums(in, n);
  // The chunks' exclusive prefixes, in place.
  DoubleDouble sum;
  double magnitude = 0;
  for (size_t c = 0; c < detail::kReferenceChunks; ++c) {
    const DoubleDouble chunk_sum = chunks.sums[c];
    const double chunk_magnitude = chunks.magnitudes[c];
    chunks.sums[c] = sum;
    chunks.magnitudes[c] = magnitude;
    sum.add(chunk_sum);
    magnitude += chunk_magnitude;
  }
  DeviceBuffer<DoubleDouble> chunk_offsets(detail::kReferenceChunks);
  DeviceBuffer<double> chunk_magnitude_offsets(detail::kReferenceChunks);
  chunk_offsets.upload(chunks.sums);
  chunk_magnitude_offsets.upload(chunks.magnitudes);
  ReferenceScan scan{DeviceBuffer<double>(n), DeviceBuffer<float>(n)};
  detail::chunk_scan_kernel<<<detail::kReferenceChunks / detail::kReferenceThreads, detail::kReferenceThreads>>>(
      in, n, detail::reference_chunk(n), chunk_offsets.data(), chunk_magnitude_offsets.data(), scan.sums.data(),
      scan.magnitudes.data());
  check(cudaGetLastError(), "chunk_scan_kernel");
  check(cudaDeviceSynchronize(), "computing the reference scan");
  return scan;
}

}  // namespace prims::bench
