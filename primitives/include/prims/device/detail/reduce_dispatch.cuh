#pragma once
// The reduce's dispatch (device/reduce.cuh is the API): its tiles' grid and the finishing block
// (detail/reduce_kernels.cuh has the kernels).

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
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
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
