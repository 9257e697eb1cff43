#pragma once
// Warp scan: one value per lane of a full warp in, the running combination across lanes out, by shuffles.
// Lane i's inclusive result is value[0] op value[1] op ... op value[i]: lower lanes always sit on the left of op,
// so any associative op works, commutative or not (2x2 matrix products, affine-map composition, ...).
// The warp aggregate (the inclusive result of lane 31) is handed to every lane.

#include "prims/util/shuffle.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::warp {

/// Inclusive scan across the warp (Kogge-Stone: five shuffle steps), with the warp's total in every lane.
/// All 32 lanes must call it.
/// Example:
///   int total;
///   int running = prims::warp::inclusive_scan_shuffle(x, prims::Sum{}, total);  // lane i: x[0] + ... + x[i]
template <class T, class Op>
__device__ __forceinline__ T inclusive_scan_shuffle(T value, Op op, T& warp_aggregate) {
  const int lane = threadIdx.x % kWarpThreads;
#pragma unroll
  for (int offset = 1; offset < kWarpThreads; offset *= 2) {
    const T lower = detail::shuffle_up(value, offset);
    if (lane >= offset) {
      value = op(lower, value);
    }
  }
  warp_aggregate = detail::shuffle_index(value, kWarpThreads - 1);
  return value;
}

/// Inclusive scan across the warp. All 32 lanes must call it.
/// Example: `float running_max = prims::warp::inclusive_scan_shuffle(x, prims::Max{});`
template <class T, class Op>
__device__ __forceinline__ T inclusive_scan_shuffle(T value, Op op) {
  T warp_aggregate;
  return inclusive_scan_shuffle(value, op, warp_aggregate);
}

/// Exclusive scan across the warp seeded with `init`: lane 0 gets init, lane i gets init op x[0] op ... op x[i-1].
/// The warp aggregate (without init) goes to every lane. All 32 lanes must call it.
/// Example:
///   int total;
///   int offset = prims::warp::exclusive_scan_shuffle(count, prims::Sum{}, 0, total);  // write position
template <class T, class Op>
__device__ __forceinline__ T exclusive_scan_shuffle(T value, Op op, T init, T& warp_aggregate) {
  const T inclusive = inclusive_scan_shuffle(value, op, warp_aggregate);
  const T previous = detail::shuffle_up(inclusive, 1);
  return threadIdx.x % kWarpThreads == 0 ? init : op(init, previous);
}

/// Exclusive scan across the warp seeded with `init`. All 32 lanes must call it.
/// Example: `int offset = prims::warp::exclusive_scan_shuffle(count, prims::Sum{}, 0);`
template <class T, class Op>
__device__ __forceinline__ T exclusive_scan_shuffle(T value, Op op, T init) {
  T warp_aggregate;
  return exclusive_scan_shuffle(value, op, init, warp_aggregate);
}

/// Exclusive scan across the warp without a seed: lane i gets x[0] op ... op x[i-1]; lane 0's result is
/// unspecified (use the overload with init where an identity exists). All 32 lanes must call it.
/// Example: `T before = prims::warp::exclusive_scan_shuffle(x, op);  // meaningful in lanes 1..31`
template <class T, class Op>
__device__ __forceinline__ T exclusive_scan_shuffle(T value, Op op) {
  T warp_aggregate;
  const T inclusive = inclusive_scan_shuffle(value, op, warp_aggregate);
  return detail::shuffle_up(inclusive, 1);
}

}  // namespace prims::warp
