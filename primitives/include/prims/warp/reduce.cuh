#pragma once
// Warp reduce: one value per lane of a full warp in, the warp's total out (in lane 0).
// Two forms with the same result for any associative op, combining lanes in the same order:
//   reduce_shuffle  registers only, through shuffles;
//   reduce_smem     through a 32-slot shared-memory buffer, with __syncwarp() between steps (never relying on
//                   implicit warp-synchronous execution, which is a race on Volta and later).

#include "prims/util/shuffle.cuh"

namespace prims::warp {

inline constexpr int kWarpThreads = 32;

/// The warp's total in lane 0 (other lanes hold partial totals). All 32 lanes must call it.
/// Example: `int total = prims::warp::reduce_shuffle(x, prims::Sum{}); if (lane == 0) out[w] = total;`
template <class T, class Op>
__device__ __forceinline__ T reduce_shuffle(T value, Op op) {
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
    const T other = detail::shuffle_down(value, offset);
    value = op(value, other);
  }
  return value;
}

/// Shared memory for reduce_smem: one slot a lane. Put it in __shared__ memory, one per warp.
template <class T>
struct ReduceSmemStorage {
  T slots[kWarpThreads];
};

/// The warp's total in lane 0, through shared memory; lane i combines slot i with slot i + offset while
/// offset halves, the same order as reduce_shuffle. All 32 lanes must call it. The storage may be reused
/// right after the call returns.
/// Example:
///   __shared__ prims::warp::ReduceSmemStorage<float> storage[4];
///   float total = prims::warp::reduce_smem(x, prims::Sum{}, storage[threadIdx.x / 32]);
template <class T, class Op>
__device__ __forceinline__ T reduce_smem(T value, Op op, ReduceSmemStorage<T>& storage) {
  const int lane = threadIdx.x % kWarpThreads;
  storage.slots[lane] = value;
  __syncwarp();
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
    if (lane < offset) {
      value = op(value, storage.slots[lane + offset]);
      storage.slots[lane] = value;
    }
    __syncwarp();
  }
  return value;
}

}  // namespace prims::warp
