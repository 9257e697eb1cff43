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

#include <cstddef>

#include "prims/device/algorithms.cuh"
#include "prims/device/detail/scan_dispatch.cuh"
#include "prims/device/detail/staged_input.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// out[i] = in[0] op in[1] op ... op in[i], with the algorithm chosen explicitly.
/// Example: `prims::device::inclusive_scan<prims::device::ScanAlgorithm::ReduceThenScan>(temp, bytes, in, out, n, prims::Max{});`
template <ScanAlgorithm ALGORITHM, class T, class Op>
cudaError_t inclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op,
                           cudaStream_t stream = 0) {
  return detail::scan::scan<ALGORITHM, false>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{T{}, false}, stream);
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
  return detail::scan::scan_default<false>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{T{}, false}, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i - 1], with the algorithm chosen explicitly.
/// Example: `prims::device::exclusive_scan<prims::device::ScanAlgorithm::SinglePass>(temp, bytes, in, out, n, prims::Sum{}, 0);`
template <ScanAlgorithm ALGORITHM, class T, class Op>
cudaError_t exclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                           cudaStream_t stream = 0) {
  return detail::scan::scan<ALGORITHM, true>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{init, true}, stream);
}

/// out[0] = init, out[i] = init op in[0] op ... op in[i - 1].
/// Example: `prims::device::exclusive_scan(temp, bytes, d_in, d_out, n, prims::Sum{}, 0, stream);`
template <class T, class Op>
cudaError_t exclusive_scan(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                           cudaStream_t stream = 0) {
  return detail::scan::scan_default<true>(temp, temp_bytes, in, out, n, op, detail::Maybe<T>{init, true}, stream);
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
