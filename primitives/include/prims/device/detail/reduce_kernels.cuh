#pragma once
// Kernels of prims::device::reduce.
//
// The input is split into an unaligned head, full tiles read with 16-byte vector loads, and a tail.
// Large inputs: reduce_tiles_kernel runs a persistent grid (a few blocks per multiprocessor) in which block b
// folds tiles b, b + grid, b + 2*grid, ... and writes one partial; reduce_finish_kernel, one block, folds the
// partials, the head and the tail, then applies init. Small inputs: reduce_finish_kernel alone folds
// everything. No atomics anywhere, and the grid depends only on the device: float results are bitwise the
// same run to run.

#include <cstddef>

#include "prims/block/reduce.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/maybe.cuh"
#include "prims/util/vector_load.cuh"

namespace prims::detail {

template <class Policy, class T>
struct ReduceTile {
  static constexpr int vector_items = prims::detail::kVectorItems<T>;
  static constexpr int items_per_thread = Policy::vectors_per_thread * vector_items;
  static constexpr int tile_items = Policy::block_threads * items_per_thread;
};

/// This thread's share of one full tile: all vector loads issued first, then folded.
template <class Policy, class T, class Op>
__device__ __forceinline__ T reduce_thread_tile(const T* tile, Op op) {
  using Vec = prims::detail::Vector<T>;
  const Vec* vectors = reinterpret_cast<const Vec*>(tile);
  Vec loaded[Policy::vectors_per_thread];
#pragma unroll
  for (int v = 0; v < Policy::vectors_per_thread; ++v) {
    loaded[v] = vectors[threadIdx.x + v * Policy::block_threads];
  }
  T per_vector[Policy::vectors_per_thread];
#pragma unroll
  for (int v = 0; v < Policy::vectors_per_thread; ++v) {
    per_vector[v] = loaded[v].items[0];
#pragma unroll
    for (int i = 1; i < ReduceTile<Policy, T>::vector_items; ++i) {
      per_vector[v] = op(per_vector[v], loaded[v].items[i]);
    }
  }
  // Pairwise tree over the vectors: short dependency chains.
#pragma unroll
  for (int width = Policy::vectors_per_thread / 2; width > 0; width /= 2) {
#pragma unroll
    for (int v = 0; v < width; ++v) {
      per_vector[v] = op(per_vector[v], per_vector[v + width]);
    }
  }
  return per_vector[0];
}

/// Block b folds full tiles b, b + gridDim.x, ... (each block has at least one) into partials[b].
template <class Policy, block::ReduceAlgorithm ALGORITHM, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    reduce_tiles_kernel(const T* __restrict__ tiles, size_t num_tiles, T* __restrict__ partials, Op op) {
  constexpr size_t tile_items = ReduceTile<Policy, T>::tile_items;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  T acc = reduce_thread_tile<Policy>(tiles + blockIdx.x * tile_items, op);
  for (size_t tile = blockIdx.x + gridDim.x; tile < num_tiles; tile += gridDim.x) {
    acc = op(acc, reduce_thread_tile<Policy>(tiles + tile * tile_items, op));
  }
  using BlockReduce = block::Reduce<T, Policy::block_threads, ALGORITHM>;
  __shared__ typename BlockReduce::TempStorage storage;
  const T total = BlockReduce(storage).reduce(acc, op);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
  }
}

/// What the single finishing block folds: `num_tiles` full tiles starting at `tiles`, `num_partials` partials,
/// and the scalar elements [0, head) and [tail_begin, n) of `in`.
template <class T>
struct FinishWork {
  const T* in;
  size_t n;
  size_t head;
  size_t tail_begin;
  const T* tiles;
  size_t num_tiles;
  const T* partials;
  size_t num_partials;
};

/// One block: folds everything in `work`, then writes op(init, total) to *out (init alone when empty).
template <class Policy, block::ReduceAlgorithm ALGORITHM, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    reduce_finish_kernel(FinishWork<T> work, T* __restrict__ out, Op op, T init) {
  constexpr int threads = Policy::block_threads;
  constexpr size_t tile_items = ReduceTile<Policy, T>::tile_items;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  Maybe<T> acc{init, false};
  for (size_t tile = 0; tile < work.num_tiles; ++tile) {
    fold_into(acc, reduce_thread_tile<Policy>(work.tiles + tile * tile_items, op), op);
  }
  for (size_t i = threadIdx.x; i < work.num_partials; i += threads) {
    fold_into(acc, work.partials[i], op);
  }
  for (size_t i = threadIdx.x; i < work.head; i += threads) {
    fold_into(acc, work.in[i], op);
  }
  for (size_t i = work.tail_begin + threadIdx.x; i < work.n; i += threads) {
    fold_into(acc, work.in[i], op);
  }
  using BlockReduce = block::Reduce<Maybe<T>, threads, ALGORITHM>;
  __shared__ typename BlockReduce::TempStorage storage;
  const Maybe<T> total = BlockReduce(storage).reduce(acc, MaybeOp<T, Op>{op});
  if (threadIdx.x == 0) {
    *out = total.valid ? op(init, total.value) : init;
  }
}

}  // namespace prims::detail
