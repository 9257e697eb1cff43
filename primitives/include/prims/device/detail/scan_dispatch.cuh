#pragma once
// The scan's dispatch (device/scan.cuh is the API): the algorithm under a table, the default algorithm, and the
// two algorithms' launches (detail/scan_kernels.cuh has their kernels).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "prims/device/algorithms.cuh"
#include "prims/device/detail/scan_kernels.cuh"
#include "prims/device/detail/staged_input.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::scan {

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

}  // namespace prims::detail::scan
