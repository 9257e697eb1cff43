#pragma once
// Device-wide scans: prims::device::inclusive_scan, exclusive_scan, inclusive_sum, exclusive_sum.
//
// Every function follows the two-phase temporary-storage protocol: call with temp == nullptr to learn
// temp_bytes, allocate, call again (with the same n) to run. They launch on `stream`, never synchronize it, and
// return the first CUDA error they meet. `op` must be associative; it need not be commutative (earlier items are
// always on the left). T is any trivially copyable, default-constructible type. `in == out` is allowed (in
// place); n == 0 writes nothing. Float results depend on the grouping, which is fixed for a given algorithm, n
// and device. `in` is a pointer or any random-access iterator (thrust::counting_iterator, transform iterators, ...);
// an iterator's items, converted to T, are staged in temporary storage first (detail/staged_input.cuh: one extra
// pass).
//
// Two algorithms, selected by the template argument of the overloads that take one:
//   ScanAlgorithm::SinglePass      reads n items and writes n (decoupled look-back); the default.
//   ScanAlgorithm::ReduceThenScan  reads the input twice (reduce, then scan): three kernels, no inter-block waits.
// detail/scan_kernels.cuh describes both.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "prims/device/detail/scan_kernels.cuh"
#include "prims/device/detail/staged_input.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::device {

enum class ScanAlgorithm {
  /// Each block reduces a span of tiles, one block scans the span totals, each block scans its span behind its
  /// scanned total: 3 passes over n items (2 reads, 1 write).
  ReduceThenScan,
  /// Decoupled look-back: each tile's prefix comes from its predecessors' published statuses: 2 passes.
  SinglePass,
};

}  // namespace prims::device

namespace prims::detail {

/// The algorithm that the overloads without one run: the one place to retune. The single pass reads and writes
/// each item once, reduce-then-scan reads it twice, and the single pass is the faster at every size. A constant,
/// so the default call compiles only the algorithm it runs.
/// Chosen with bench/bench_scan (docs/design-notes.md, "Scan").
inline constexpr device::ScanAlgorithm kDefaultScanAlgorithm = device::ScanAlgorithm::SinglePass;

/// The single-pass scan with its tuning policy given.
template <class Policy, bool EXCLUSIVE, class T, class Op>
cudaError_t dispatch_single_pass(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, Maybe<T> seed,
                                 cudaStream_t stream) {
  using Status = TileStatus<T, Policy::status_slot_bytes>;
  const size_t num_tiles = ScanTile<Policy, T>::count(n);
  void* parts[2] = {nullptr, nullptr};
  PRIMS_TRY(LookBackTemp<Status>::carve(temp, temp_bytes, num_tiles, "scan", n, parts));
  if (temp == nullptr || n == 0) {
    return cudaSuccess;
  }
  const LookBackTemp<Status> look_back(parts, num_tiles);
  PRIMS_TRY(look_back.clear(num_tiles, stream));
  const Status& status = look_back.status;
  unsigned* tile_counter = look_back.tile_counter;
  return prims::detail::launch(single_pass_scan_kernel<Policy, EXCLUSIVE, T, Op, Status>,
                               static_cast<unsigned>(num_tiles), Policy::block_threads, 0, stream, in, out, n, op,
                               seed, status, tile_counter);
}

/// The reduce-then-scan with its tuning policy given.
template <class Policy, bool EXCLUSIVE, class T, class Op>
cudaError_t dispatch_reduce_then_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op,
                                      Maybe<T> seed, cudaStream_t stream) {
  Spans spans{ScanTile<Policy, T>::count(n), 1, 0};
  if (spans.num_tiles > 0) {
    int multiprocessors = 0;
    PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
    const size_t max_spans = std::min(spans.num_tiles, static_cast<size_t>(multiprocessors) * Policy::blocks_per_sm);
    spans.tiles_per_span = (spans.num_tiles + max_spans - 1) / max_spans;
    spans.count = (spans.num_tiles + spans.tiles_per_span - 1) / spans.tiles_per_span;
  }
  // The last span's total is never needed: everything before span b is in totals[0, b).
  const size_t num_totals = spans.count > 0 ? spans.count - 1 : 0;
  void* buffers[1];
  PRIMS_TRY(prims::detail::carve_temp(temp, temp_bytes, {num_totals * sizeof(T)}, buffers));
  if (temp == nullptr || n == 0) {
    return cudaSuccess;
  }
  T* totals = static_cast<T*>(buffers[0]);

  constexpr int threads = Policy::block_threads;
  if (num_totals > 0) {
    PRIMS_TRY(prims::detail::launch(reduce_spans_kernel<Policy, T, Op>, static_cast<unsigned>(num_totals), threads, 0,
                                    stream, in, n, spans, totals, op));
    PRIMS_TRY(prims::detail::launch(scan_totals_kernel<Policy, T, Op>, 1, threads, 0, stream, totals, num_totals, op,
                                    seed));
  }
  return prims::detail::launch(scan_spans_kernel<Policy, EXCLUSIVE, T, Op>, static_cast<unsigned>(spans.count),
                               threads, 0, stream, in, out, n, spans, static_cast<const T*>(totals), op, seed);
}

/// The scan under a table (with_tuning, detail/tuning.cuh): what an algorithm that scans as one of its steps
/// calls with the table it runs under.
template <device::ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class Table, class T, class Op>
cudaError_t scan_with(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, Maybe<T> seed,
                      cudaStream_t stream) {
  if constexpr (ALGORITHM == device::ScanAlgorithm::SinglePass) {
    using Policy = typename Table::template SinglePassScan<T>;
    return dispatch_single_pass<Policy, EXCLUSIVE>(temp, temp_bytes, in, out, n, op, seed, stream);
  } else {
    using Policy = typename Table::ReduceThenScan;
    return dispatch_reduce_then_scan<Policy, EXCLUSIVE>(temp, temp_bytes, in, out, n, op, seed, stream);
  }
}

template <device::ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T, class Op>
cudaError_t scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, Maybe<T> seed,
                 cudaStream_t stream) {
  return with_tuning([&](auto table) {
    return scan_with<ALGORITHM, EXCLUSIVE, decltype(table)>(temp, temp_bytes, in, out, n, op, seed, stream);
  });
}

template <bool EXCLUSIVE, class T, class Op>
cudaError_t scan_default(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, Maybe<T> seed,
                         cudaStream_t stream) {
  return scan<kDefaultScanAlgorithm, EXCLUSIVE>(temp, temp_bytes, in, out, n, op, seed, stream);
}

}  // namespace prims::detail

namespace prims::device {

/// out[i] = in[0] op in[1] op ... op in[i], with the algorithm chosen explicitly.
/// Example: `prims::device::inclusive_scan<prims::device::ScanAlgorithm::ReduceThenScan>(temp, bytes, in, out, n, prims::Max{});`
template <ScanAlgorithm ALGORITHM, class T, class Op>
cudaError_t inclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op,
                           cudaStream_t stream = 0) {
  return detail::scan<ALGORITHM, false>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{T{}, false}, stream);
}

/// out[i] = in[0] op in[1] op ... op in[i].
/// Example:
///   size_t bytes = 0;
///   prims::device::inclusive_scan(nullptr, bytes, d_in, d_out, n, prims::Max{});
///   cudaMalloc(&temp, bytes);
///   prims::device::inclusive_scan(temp, bytes, d_in, d_out, n, prims::Max{}, stream);  // running maximum
template <class T, class Op>
cudaError_t inclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op,
                           cudaStream_t stream = 0) {
  return detail::scan_default<false>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{T{}, false}, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i - 1], with the algorithm chosen explicitly.
/// Example: `prims::device::exclusive_scan<prims::device::ScanAlgorithm::SinglePass>(temp, bytes, in, out, n, prims::Sum{}, 0);`
template <ScanAlgorithm ALGORITHM, class T, class Op>
cudaError_t exclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                           cudaStream_t stream = 0) {
  return detail::scan<ALGORITHM, true>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{init, true}, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i - 1].
/// Example: `prims::device::exclusive_scan(temp, bytes, d_in, d_out, n, prims::Sum{}, 0, stream);`
template <class T, class Op>
cudaError_t exclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                           cudaStream_t stream = 0) {
  return detail::scan_default<true>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{init, true}, stream);
}

/// Running sums: out[i] = in[0] + ... + in[i].
/// Example: `prims::device::inclusive_sum(temp, bytes, d_in, d_out, n);`
template <class T>
cudaError_t inclusive_sum(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, cudaStream_t stream = 0) {
  return inclusive_scan(temp, temp_bytes, in, out, n, Sum{}, stream);
}

/// Offsets: out[0] = 0, out[i] = in[0] + ... + in[i - 1].
/// Example: `prims::device::exclusive_sum(temp, bytes, d_counts, d_offsets, n);`
template <class T>
cudaError_t exclusive_sum(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, cudaStream_t stream = 0) {
  return exclusive_scan(temp, temp_bytes, in, out, n, Sum{}, T(0), stream);
}

// ---- Iterator inputs (pointers take the overloads above): the items, converted to T, staged in temporary storage,
// then scanned.

/// inclusive_scan over a random-access iterator.
/// Example: `prims::device::inclusive_scan(temp, bytes, thrust::make_counting_iterator(1), d_out, n, prims::Sum{});`
template <class InIt, class T, class Op, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t inclusive_scan(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, Op op,
                           cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return inclusive_scan(t, bytes, items, out, n, op, stream);
  });
}

/// exclusive_scan over a random-access iterator.
template <class InIt, class T, class Op, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t exclusive_scan(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, Op op, T init,
                           cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return exclusive_scan(t, bytes, items, out, n, op, init, stream);
  });
}

/// inclusive_sum over a random-access iterator.
template <class InIt, class T, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t inclusive_sum(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return inclusive_sum(t, bytes, items, out, n, stream);
  });
}

/// exclusive_sum over a random-access iterator.
template <class InIt, class T, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t exclusive_sum(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return exclusive_sum(t, bytes, items, out, n, stream);
  });
}

}  // namespace prims::device
