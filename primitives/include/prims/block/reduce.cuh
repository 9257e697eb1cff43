#pragma once
// Block reduce: one value per thread of a 1-D block in, the block's total out (in thread 0).
// The caller owns the shared memory: declare `__shared__ typename Reduce::TempStorage storage;` and pass it
// to the constructor. Between two uses of the same storage, the block must __syncthreads().

#include "prims/warp/reduce.cuh"

namespace prims::block {

enum class ReduceAlgorithm {
  /// Shared-memory tree with sequential addressing: the upper half of the block parks its values and the lower
  /// half adds them as it stores its own (the first add during load), then halving strides with __syncthreads()
  /// down to one warp, which finishes through warp::reduce_smem. Conflict-free, no divergent modulo tests.
  /// Needs a power-of-two block of at least 64 threads.
  SmemTree,
  /// Each warp reduces with shuffles, warp totals go through shared memory, and the first warp reduces them.
  /// One __syncthreads(). Any multiple of 32 threads.
  WarpShuffle,
};

/// Example:
///   using BlockReduce = prims::block::Reduce<float, 256>;
///   __shared__ BlockReduce::TempStorage storage;
///   float total = BlockReduce(storage).reduce(x, prims::Sum{});
///   if (threadIdx.x == 0) out[blockIdx.x] = total;
template <class T, int BLOCK_THREADS, ReduceAlgorithm ALGORITHM = ReduceAlgorithm::WarpShuffle>
class Reduce;

template <class T, int BLOCK_THREADS>
class Reduce<T, BLOCK_THREADS, ReduceAlgorithm::WarpShuffle> {
  static_assert(BLOCK_THREADS % warp::kWarpThreads == 0 && BLOCK_THREADS <= 1024,
                "WarpShuffle reduce needs whole warps, at most 1024 threads");
  static constexpr int kWarps = BLOCK_THREADS / warp::kWarpThreads;

 public:
  struct TempStorage {
    T warp_totals[kWarps];
  };

  __device__ explicit Reduce(TempStorage& storage) : storage_(storage) {}

  /// The block's total in thread 0; other threads get an unspecified value.
  template <class Op>
  __device__ T reduce(T value, Op op) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    value = warp::reduce_shuffle(value, op);
    if constexpr (kWarps == 1) {
      return value;
    } else {
      if (lane == 0) {
        storage_.warp_totals[warp_id] = value;
      }
      __syncthreads();
      if (warp_id == 0) {
        // The first warp folds the warp totals: lane i starts from total i, then takes i + 32, ...
        value = storage_.warp_totals[lane < kWarps ? lane : 0];
        if constexpr (kWarps < warp::kWarpThreads) {
          value = reduce_partial_warp(value, op, lane);
        } else {
          value = warp::reduce_shuffle(value, op);
        }
      }
      return value;
    }
  }

 private:
  // Lanes [kWarps, 32) hold nothing: fold only lanes below kWarps, in the same halving order.
  template <class Op>
  __device__ static T reduce_partial_warp(T value, Op op, int lane) {
#pragma unroll
    for (int offset = warp::kWarpThreads / 2; offset > 0; offset /= 2) {
      const T other = detail::shuffle_down(value, offset);
      if (lane + offset < kWarps) {
        value = op(value, other);
      }
    }
    return value;
  }

  TempStorage& storage_;
};

template <class T, int BLOCK_THREADS>
class Reduce<T, BLOCK_THREADS, ReduceAlgorithm::SmemTree> {
  static_assert(BLOCK_THREADS >= 2 * warp::kWarpThreads && BLOCK_THREADS <= 1024 &&
                    (BLOCK_THREADS & (BLOCK_THREADS - 1)) == 0,
                "SmemTree reduce needs a power-of-two block of 64 to 1024 threads");
  static constexpr int kHalf = BLOCK_THREADS / 2;

 public:
  struct TempStorage {
    T values[kHalf];
    warp::ReduceSmemStorage<T> last_warp;
  };

  __device__ explicit Reduce(TempStorage& storage) : storage_(storage) {}

  /// The block's total in thread 0; other threads get an unspecified value.
  template <class Op>
  __device__ T reduce(T value, Op op) {
    const int tid = threadIdx.x;
    // First add during load: the upper half parks its values, the lower half adds them to its own.
    if (tid >= kHalf) {
      storage_.values[tid - kHalf] = value;
    }
    __syncthreads();
    if (tid < kHalf) {
      value = op(value, storage_.values[tid]);
      storage_.values[tid] = value;
    }
    __syncthreads();
    // Sequential addressing: thread i takes i + stride, so active threads stay contiguous and conflict-free.
#pragma unroll
    for (int stride = kHalf / 2; stride >= warp::kWarpThreads; stride /= 2) {
      if (tid < stride) {
        value = op(value, storage_.values[tid + stride]);
        storage_.values[tid] = value;
      }
      __syncthreads();
    }
    if (tid < warp::kWarpThreads) {
      value = warp::reduce_smem(value, op, storage_.last_warp);
    }
    return value;
  }

 private:
  TempStorage& storage_;
};

}  // namespace prims::block
