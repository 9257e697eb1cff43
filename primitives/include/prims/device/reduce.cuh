#pragma once
// Device-wide reduce: prims::device::reduce, sum, min, max.
//
// Every function follows the two-phase temporary-storage protocol: call with temp == nullptr to learn
// temp_bytes, allocate, call again to run. They launch on `stream`, never synchronize it, and return the first
// CUDA error they meet. `op` must be associative and commutative (the order of combination is fixed for a
// given device, so float results are bitwise the same run to run, but it is not left to right).
// `in` is a pointer or any random-access iterator (thrust::counting_iterator, transform iterators, ...); an iterator's
// items, converted to T, are staged in temporary storage first (detail/staged_input.cuh: one extra pass).

#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <type_traits>

#include "prims/device/detail/reduce_dispatch.cuh"
#include "prims/device/detail/staged_input.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// op(init, in[0] op in[1] op ... op in[n-1]) into *out, with the block algorithm chosen explicitly
/// (the overload without it uses the fastest, WarpShuffle). n == 0 writes init.
/// Example: `prims::device::reduce<prims::block::ReduceAlgorithm::SmemTree>(temp, bytes, in, out, n, prims::Sum{}, 0);`
template <block::ReduceAlgorithm ALGORITHM, class T, class Op>
cudaError_t reduce(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                   cudaStream_t stream = 0) {
  return detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::Reduce;
    return detail::dispatch_reduce<Policy, ALGORITHM>(temp, temp_bytes, in, out, n, op, init, stream);
  });
}

/// op(init, in[0] op ... op in[n-1]) into *out. n == 0 writes init.
/// Example:
///   size_t bytes = 0;
///   prims::device::reduce(nullptr, bytes, d_in, d_out, n, prims::Max{}, INT_MIN);
///   cudaMalloc(&temp, bytes);
///   prims::device::reduce(temp, bytes, d_in, d_out, n, prims::Max{}, INT_MIN, stream);
template <class T, class Op>
cudaError_t reduce(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                   cudaStream_t stream = 0) {
  return reduce<block::ReduceAlgorithm::WarpShuffle>(temp, temp_bytes, in, out, n, op, init, stream);
}

/// The sum of in[0..n) into *out (0 when n == 0).
/// Example: `prims::device::sum(temp, bytes, d_in, d_out, n);`
template <class T>
cudaError_t sum(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, cudaStream_t stream = 0) {
  return reduce(temp, temp_bytes, in, out, n, Sum{}, T(0), stream);
}

/// The smallest of in[0..n) into *out (the type's largest value, +inf for floats, when n == 0).
/// Example: `prims::device::min(temp, bytes, d_in, d_out, n);`
template <class T>
cudaError_t min(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, cudaStream_t stream = 0) {
  constexpr T identity =
      std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  return reduce(temp, temp_bytes, in, out, n, Min{}, identity, stream);
}

/// The largest of in[0..n) into *out (the type's lowest value, -inf for floats, when n == 0).
/// Example: `prims::device::max(temp, bytes, d_in, d_out, n);`
template <class T>
cudaError_t max(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, cudaStream_t stream = 0) {
  constexpr T identity =
      std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  return reduce(temp, temp_bytes, in, out, n, Max{}, identity, stream);
}

// ---- Iterator inputs (pointers take the overloads above).

/// reduce over a random-access iterator: its items, converted to T, staged in temporary storage, then reduced.
/// Example: `prims::device::reduce(temp, bytes, thrust::make_counting_iterator(0), d_out, n, prims::Sum{}, 0);`
template <class InIt, class T, class Op, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t reduce(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, Op op, T init,
                   cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return reduce(t, bytes, items, out, n, op, init, stream);
  });
}

/// sum over a random-access iterator (as reduce's iterator overload).
template <class InIt, class T, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t sum(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return sum(t, bytes, items, out, n, stream);
  });
}

/// min over a random-access iterator (as reduce's iterator overload).
template <class InIt, class T, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t min(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return min(t, bytes, items, out, n, stream);
  });
}

/// max over a random-access iterator (as reduce's iterator overload).
template <class InIt, class T, std::enable_if_t<!std::is_pointer_v<InIt>, int> = 0>
cudaError_t max(void* temp, size_t& temp_bytes, InIt in, T* out, size_t n, cudaStream_t stream = 0) {
  return detail::with_staged_input<T>(temp, temp_bytes, in, n, stream, [&](void* t, size_t& bytes, const T* items) {
    return max(t, bytes, items, out, n, stream);
  });
}

}  // namespace prims::device
