#pragma once
// Device-wide segmented reduction: prims::device::segmented_reduce. Segment i is [begin_offsets[i],
// end_offsets[i]) of the input (segments may be empty, leave gaps, overlap or come in any order);
// out[i] = init op in[begin] op ... op in[end - 1], init for an empty segment.
//
// The input is any random-access iterator, the output a pointer or output iterator; the offsets are in device
// memory. op must be associative and commutative; values are combined in init's type. Two-phase temporary storage
// (call with temp == nullptr to learn temp_bytes: a byte a segment); it launches on `stream`, never synchronizes
// it, and returns the first CUDA error it meets.
//
// A block a segment where there are up to a few times as many segments as blocks fit the device; otherwise one warp a segment where it is short, one
// block a segment where it is long (detail/segmented_reduce_kernels.cuh).

#include <cuda_runtime.h>

#include <cstddef>

#include "prims/device/detail/segmented_reduce_kernels.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/ops.cuh"

namespace prims::device {

/// Example: `segmented_reduce(temp, bytes, d_in, d_sums, rows, d_offsets, d_offsets + 1, prims::Sum{}, 0);`
template <class InIt, class OutIt, class Offset, class Op, class T>
cudaError_t segmented_reduce(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t num_segments,
                             const Offset* begin_offsets, const Offset* end_offsets, Op op, T init,
                             cudaStream_t s = 0) {
  return prims::detail::with_tuning([&](auto table) {
    using Policy = typename decltype(table)::SegmentedReduce;
    return prims::detail::dispatch_segmented_reduce<Policy>(
        temp, temp_bytes, in, out, num_segments, begin_offsets, end_offsets, op, init, s);
  });
}

}  // namespace prims::device
