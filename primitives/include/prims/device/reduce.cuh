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

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "prims/block/reduce.cuh"
#include "prims/device/detail/reduce_kernels.cuh"
#include "prims/device/detail/staged_input.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail {

/// The reduce with its tuning policy and block algorithm given: what the public overloads call.
template <class Policy, block::ReduceAlgorithm ALGORITHM, class T, class Op>
cudaError_t dispatch_reduce(void* temp, size_t& temp_bytes, const T* in, T* out, size_t n, Op op, T init,
                            cudaStream_t stream) {
  using Tile = ReduceTile<Policy, T>;
  // Elements before the first vector-aligned one are read one by one (all of them when the pointer can never be
  // vector-aligned), as are the elements after the last full tile.
  const size_t head = std::min(n, prims::detail::elements_to_vector_alignment(in));
  const size_t num_tiles = (n - head) / Tile::tile_items;
  const bool single_block = num_tiles <= static_cast<size_t>(Policy::single_block_max_tiles);

  int multiprocessors = 0;
  PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
  const size_t max_grid = static_cast<size_t>(multiprocessors) * Policy::blocks_per_sm;
  const size_t grid = single_block ? 0 : std::min(num_tiles, max_grid);
  // Sized from n alone, so that a query with any pointer covers a run with any other.
  const size_t partials_bytes = std::min(n / Tile::tile_items, max_grid) * sizeof(T);
  void* buffers[1];
  PRIMS_TRY(prims::detail::carve_temp(temp, temp_bytes, {partials_bytes}, buffers));
  if (temp == nullptr) {
    return cudaSuccess;
  }
  T* partials = static_cast<T*>(buffers[0]);

  const T* tiles = in + head;
  FinishWork<T> work{in, n, head, head + num_tiles * Tile::tile_items, tiles, 0, partials, 0};
  if (single_block) {
    work.num_tiles = num_tiles;
  } else {
    PRIMS_TRY(prims::detail::launch(reduce_tiles_kernel<Policy, ALGORITHM, T, Op>, static_cast<unsigned>(grid),
                                    Policy::block_threads, 0, stream, tiles, num_tiles, partials, op));
    work.num_partials = grid;
  }
  return prims::detail::launch(reduce_finish_kernel<Policy, ALGORITHM, T, Op>, 1, Policy::block_threads, 0, stream,
                               work, out, op, init);
}

}  // namespace prims::detail

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
