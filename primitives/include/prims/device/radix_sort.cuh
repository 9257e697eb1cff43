#pragma once
// Device-wide LSD radix sort: prims::device::radix_sort_keys and radix_sort_pairs.
//
// Keys: 1 to 8-byte integers, float and double (order in prims/util/radix_key.cuh: numpy's for floats, -0.0 equal
// to +0.0, NaNs last). Values: any trivially copyable type of up to 16 bytes. Both orders are stable. Only bits
// [begin_bit, end_bit) of the ordered key bits count; keys equal there keep their input order.
//
// Two algorithms, each a digit pass per `radix_bits` of the range, ping-ponging between the output and a buffer
// in the temporary storage (keys_in is only read, unless it is keys_out):
//   TileCounts   reduce-then-scan: per pass, tile digit counts, device::exclusive_sum, rank and scatter.
//   Onesweep     one histogram read for all passes, then one kernel a pass with decoupled look-back (default).
//                Inputs of 2^30 keys or more run as TileCounts.
// Every function follows the two-phase protocol (temp == nullptr asks for temp_bytes), launches on `stream`,
// never synchronizes it, and returns the first CUDA error; an invalid bit range is cudaErrorInvalidValue.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "prims/device/detail/radix_sort_kernels.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/device/detail/radix_sort_tile_counts.cuh"
#include "prims/device/scan.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::device {

/// Ascending or descending, both stable. Example: `radix_sort_keys(t, b, in, out, n, Order::Descending);`
using Order = prims::Order;

/// How the sort finds each digit's output positions in a pass.
/// Example: `prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(t, b, in, out, n);`
enum class RadixSortAlgorithm {
  /// Reduce-then-scan: count digits per tile, scan the counts with device::exclusive_sum, rank and scatter.
  /// Three launches a pass, the keys read twice a pass.
  TileCounts,
  /// Onesweep: all digit histograms in one read, then one launch a pass that ranks, looks back across tiles for
  /// its offsets and scatters. Passes whose keys all share a digit only copy.
  Onesweep,
};

namespace detail {

/// Where pass p of one array (keys or values) reads and writes. Passes alternate between `out` and
/// `alternate` so that the last lands in `out`; when in == out the first pass must not write `in`, and an odd
/// number of passes then ends in `alternate` and needs one copy back.
template <class T>
class PingPong {
 public:
  PingPong(const T* in, T* out, T* alternate, int num_passes)
      : in_(in), buffers_{out, alternate}, first_(in == out || num_passes % 2 == 0 ? 1 : 0), last_(num_passes - 1) {}

  const T* source(int pass) const { return pass == 0 ? in_ : buffers_[(first_ + pass - 1) % 2]; }
  T* destination(int pass) const { return buffers_[(first_ + pass) % 2]; }
  bool ends_in_alternate() const { return (first_ + last_) % 2 == 1; }

 private:
  const T* in_;
  T* buffers_[2];
  int first_;
  int last_;
};

/// The buffers of a whole sort: keys, and values unless V is NoValues.
template <class K, class V>
class SortBuffers {
 public:
  SortBuffers(PassBuffers<K, V> io, K* alternate_keys, V* alternate_values, int num_passes)
      : io_(io),
        keys_(io.keys_in, io.keys_out, alternate_keys, num_passes),
        values_(io.values_in, io.values_out, alternate_values, num_passes) {}

  PassBuffers<K, V> pass(int p) const {
    return {keys_.source(p), keys_.destination(p), values_.source(p), values_.destination(p)};
  }

  /// After the last pass: copies back whatever ended in the alternate buffer.
  cudaError_t finish(size_t n, cudaStream_t stream) const {
    if (keys_.ends_in_alternate()) {
      PRIMS_TRY(cudaMemcpyAsync(io_.keys_out, keys_.destination(0), n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    }
    if constexpr (kHasValues<V>) {
      if (values_.ends_in_alternate()) {
        PRIMS_TRY(cudaMemcpyAsync(io_.values_out, values_.destination(0), n * sizeof(V), cudaMemcpyDeviceToDevice,
                                  stream));
      }
    }
    return cudaSuccess;
  }

  /// No digit to sort by (begin_bit == end_bit): the input is the output.
  cudaError_t copy_unsorted(size_t n, cudaStream_t stream) const {
    if (io_.keys_out != io_.keys_in) {
      PRIMS_TRY(cudaMemcpyAsync(io_.keys_out, io_.keys_in, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    }
    if constexpr (kHasValues<V>) {
      if (io_.values_out != io_.values_in) {
        PRIMS_TRY(cudaMemcpyAsync(io_.values_out, io_.values_in, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
      }
    }
    return cudaSuccess;
  }

 private:
  PassBuffers<K, V> io_;
  PingPong<K> keys_;
  PingPong<V> values_;
};

/// Bytes of the alternate buffer for n items of T (none for keys-only values).
template <class T>
size_t alternate_bytes(size_t n) {
  return kHasValues<T> ? n * sizeof(T) : 0;
}

template <class K, class V>
cudaError_t tile_counts_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                             int begin_bit, int end_bit, cudaStream_t stream) {
  using Policy = TileCountsPolicy<K, V>;
  using Tile = SortTile<Policy, K, V, size_t>;
  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  const size_t num_tiles = (n + Tile::kTileItems - 1) / Tile::kTileItems;
  const size_t num_counts = num_tiles * Tile::kDigits;
  if (num_tiles > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return cudaErrorInvalidValue;
  }
  size_t scan_bytes = 0;
  PRIMS_TRY(exclusive_sum<size_t>(nullptr, scan_bytes, nullptr, nullptr, num_counts, stream));
  void* parts[4];
  PRIMS_TRY(prims::detail::carve_temp(
      temp, temp_bytes, {alternate_bytes<K>(n), alternate_bytes<V>(n), num_counts * sizeof(size_t), scan_bytes},
      parts));
  if (temp == nullptr || n == 0) {
    return cudaSuccess;
  }
  const SortBuffers<K, V> buffers(io, static_cast<K*>(parts[0]), static_cast<V*>(parts[1]), num_passes);
  if (num_passes == 0) {
    return buffers.copy_unsorted(n, stream);
  }
  size_t* counts = static_cast<size_t*>(parts[2]);
  for (int pass = 0; pass < num_passes; ++pass) {
    const auto digit_of = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass);
    const PassBuffers<K, V> pass_buffers = buffers.pass(pass);
    PRIMS_TRY(prims::detail::launch(tile_counts_kernel<Policy, K>, static_cast<unsigned>(num_tiles),
                                    Policy::block_threads, 0, stream, pass_buffers.keys_in, n, digit_of, counts,
                                    num_tiles));
    PRIMS_TRY(exclusive_sum(parts[3], scan_bytes, counts, counts, num_counts, stream));
    PRIMS_TRY(prims::detail::launch(tile_counts_scatter_kernel<Policy, K, V>, static_cast<unsigned>(num_tiles),
                                    Policy::block_threads, 0, stream, pass_buffers, n, digit_of,
                                    static_cast<const size_t*>(counts), num_tiles));
  }
  return buffers.finish(n, stream);
}

template <class K, class V, class Policy = OnesweepPolicy<K, V>>
cudaError_t onesweep_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                          int begin_bit, int end_bit, cudaStream_t stream) {
  using Shape = OnesweepTile<Policy, K, V>;
  constexpr int kDigits = Shape::kDigits;
  const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
  const size_t num_tiles = (n + Shape::kTileItems - 1) / Shape::kTileItems;
  const size_t lookback_words = num_tiles * kDigits;
  // histograms[pass][digit], the tile counters and the special-key flag sit together so that one memset clears
  // them.
  const size_t histogram_words = static_cast<size_t>(num_passes) * kDigits;
  const size_t counter_words = histogram_words + num_passes + 1;
  const size_t lookback_bytes = lookback_words * sizeof(unsigned);
  void* parts[5];
  PRIMS_TRY(prims::detail::carve_temp(temp, temp_bytes,
                                      {alternate_bytes<K>(n), alternate_bytes<V>(n),
                                       counter_words * sizeof(unsigned),
                                       (histogram_words + num_passes) * sizeof(unsigned), 2 * lookback_bytes},
                                      parts));
  if (temp == nullptr || n == 0) {
    return cudaSuccess;
  }
  const SortBuffers<K, V> buffers(io, static_cast<K*>(parts[0]), static_cast<V*>(parts[1]), num_passes);
  if (num_passes == 0) {
    return buffers.copy_unsorted(n, stream);
  }
  unsigned* histograms = static_cast<unsigned*>(parts[2]);
  unsigned* tile_counters = histograms + histogram_words;
  unsigned* special_keys = tile_counters + num_passes;
  unsigned* digit_starts = static_cast<unsigned*>(parts[3]);
  unsigned* trivial = digit_starts + histogram_words;
  unsigned* lookback[2] = {static_cast<unsigned*>(parts[4]), static_cast<unsigned*>(parts[4]) + lookback_words};

  PRIMS_TRY(cudaMemsetAsync(histograms, 0, counter_words * sizeof(unsigned), stream));
  int multiprocessors = 0;
  PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
  auto count_digits = [&](auto shape) -> cudaError_t {
    using Shape = decltype(shape);
    constexpr size_t kTile = static_cast<size_t>(Shape::threads) * Policy::histogram_items_per_thread;
    const size_t grid = std::min(static_cast<size_t>(multiprocessors) * Shape::blocks_per_sm, (n + kTile - 1) / kTile);
    return prims::detail::launch(onesweep_histogram_kernel<Policy, Shape, K>, static_cast<unsigned>(grid),
                                 Shape::threads, Shape::template shared_bytes<K>(Policy::radix_bits), stream,
                                 io.keys_in, n, order, begin_bit, end_bit, histograms, special_keys, lookback[0],
                                 lookback_words);
  };
  if (n >= Policy::wide_histogram_min_items) {
    PRIMS_TRY(count_digits(typename Policy::WideHistogram{}));
  } else {
    PRIMS_TRY(count_digits(typename Policy::SmallHistogram{}));
  }
  PRIMS_TRY(prims::detail::launch(onesweep_digit_starts_kernel<Policy>, num_passes, kDigits, 0, stream,
                                  static_cast<const unsigned*>(histograms), digit_starts, trivial,
                                  static_cast<unsigned>(n)));

  for (int pass = 0; pass < num_passes; ++pass) {
    const OnesweepPass<K, V> args{buffers.pass(pass),
                                  static_cast<unsigned>(n),
                                  pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass),
                                  digit_starts + pass * kDigits,
                                  trivial + pass,
                                  special_keys,
                                  tile_counters + pass,
                                  lookback[pass % 2],
                                  pass + 1 < num_passes ? lookback[(pass + 1) % 2] : nullptr};
    PRIMS_TRY(prims::detail::launch(onesweep_pass_kernel<Policy, K, V>, static_cast<unsigned>(num_tiles),
                                    Policy::block_threads, 0, stream, args));
  }
  return buffers.finish(n, stream);
}

template <RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order, int begin_bit,
                       int end_bit, cudaStream_t stream) {
  static_assert(kIsRadixKey<K>, "radix-sort keys are 1 to 8-byte integers, float or double");
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 16,
                "radix-sort values are trivially copyable types of up to 16 bytes");
  if (!valid_bit_range<K>(begin_bit, end_bit)) {
    return cudaErrorInvalidValue;
  }
  if (ALGORITHM == RadixSortAlgorithm::Onesweep && n <= kOnesweepMaxItems) {
    using Large = OnesweepLargePolicy<K, V>;
    if constexpr (Large::items_per_thread != OnesweepPolicy<K, V>::items_per_thread) {
      // The choice depends on n alone, so the size query and the sort agree.
      if (n >= Large::min_items) {
        return onesweep_sort<K, V, Large>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
      }
    }
    return onesweep_sort<K, V, OnesweepPolicy<K, V>>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
  }
  return tile_counts_sort(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
}

}  // namespace detail

/// Sorts keys_in[0..n) into keys_out with the algorithm chosen explicitly. keys_in == keys_out sorts in place.
/// Example:
///   size_t bytes = 0;
///   prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(nullptr, bytes, in, out, n);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(temp, bytes, in, out, n);
template <RadixSortAlgorithm ALGORITHM, class K>
cudaError_t radix_sort_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                            Order order = Order::Ascending, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                            cudaStream_t stream = 0) {
  const detail::PassBuffers<K, detail::NoValues> io{keys_in, keys_out, nullptr, nullptr};
  return detail::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
}

/// Sorts keys_in[0..n) into keys_out, stably, by the ordered bits [begin_bit, end_bit) of each key.
/// Example (floats, largest first, NaNs first):
///   size_t bytes = 0;
///   prims::device::radix_sort_keys(nullptr, bytes, d_in, d_out, n, prims::device::Order::Descending);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_keys(temp, bytes, d_in, d_out, n, prims::device::Order::Descending, 0, 32, stream);
template <class K>
cudaError_t radix_sort_keys(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, size_t n,
                            Order order = Order::Ascending, int begin_bit = 0, int end_bit = 8 * sizeof(K),
                            cudaStream_t stream = 0) {
  return radix_sort_keys<RadixSortAlgorithm::Onesweep>(temp, temp_bytes, keys_in, keys_out, n, order, begin_bit,
                                                       end_bit, stream);
}

/// Sorts (key, value) pairs by key with the algorithm chosen explicitly; equal keys keep their input order.
/// keys_in == keys_out and values_in == values_out sort in place.
/// Example: `radix_sort_pairs<RadixSortAlgorithm::TileCounts>(temp, bytes, k_in, k_out, v_in, v_out, n);`
template <RadixSortAlgorithm ALGORITHM, class K, class V>
cudaError_t radix_sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                             V* values_out, size_t n, Order order = Order::Ascending, int begin_bit = 0,
                             int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  const detail::PassBuffers<K, V> io{keys_in, keys_out, values_in, values_out};
  return detail::radix_sort<ALGORITHM>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream);
}

/// Sorts (key, value) pairs by key, stably: equal keys keep their values' input order.
/// Example (an argsort: values_in holds 0, 1, ..., n - 1):
///   size_t bytes = 0;
///   prims::device::radix_sort_pairs(nullptr, bytes, d_keys, d_sorted, d_index, d_order, n);
///   cudaMalloc(&temp, bytes);
///   prims::device::radix_sort_pairs(temp, bytes, d_keys, d_sorted, d_index, d_order, n);
template <class K, class V>
cudaError_t radix_sort_pairs(void* temp, size_t& temp_bytes, const K* keys_in, K* keys_out, const V* values_in,
                             V* values_out, size_t n, Order order = Order::Ascending, int begin_bit = 0,
                             int end_bit = 8 * sizeof(K), cudaStream_t stream = 0) {
  return radix_sort_pairs<RadixSortAlgorithm::Onesweep>(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                        n, order, begin_bit, end_bit, stream);
}

}  // namespace prims::device
