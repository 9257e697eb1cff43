#pragma once
// Kernels and dispatch of prims::device::segmented_reduce (device/segmented_reduce.cuh).
//
// Up to a few times as many segments as blocks fit the device at once: one launch of segmented_reduce_blocks_kernel,
// a block a segment, whatever their lengths. More segments: two kernels, chosen segment by segment on the device (the host
// never sees the lengths):
//   segmented_reduce_warps_kernel  one warp a segment: segments of up to kWarpSegmentItems items are reduced by
//                                  their warp and written; longer ones are marked long.
//   segmented_reduce_blocks_kernel the blocks take groups of segments through a counter (zeroed by the warps
//                                  kernel) and reduce the group's long segments one at a time, a block a segment,
//                                  reading a pointer's aligned middle as 16-byte vectors.
// Many short segments thus cost a warp each, not a block each, and long ones get a whole block's loads in flight;
// nothing needs clearing before the first kernel, so there are never more than two launches.
// The op must be associative and commutative (the lanes' partial results are combined in a tree).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "prims/util/device_properties.cuh"
#include "prims/util/error.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/util/temp_storage.cuh"
#include "prims/util/vector_load.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail {

/// A lane's partial result: whether it saw any item, and their op-reduction.
template <class T>
struct Partial {
  bool any;
  T value;
};

/// Adds in[i] for i in [from, to), `step` apart, loads_per_thread loads in flight, to `partial`.
template <int LOADS, class InIt, class T, class Op>
__device__ inline void accumulate(InIt in, size_t from, size_t to, size_t step, Op op, Partial<T>& partial) {
  for (size_t base = from; base < to; base += step * LOADS) {
    T items[LOADS];
#pragma unroll
    for (int j = 0; j < LOADS; ++j) {
      const size_t i = base + static_cast<size_t>(j) * step;
      if (i < to) items[j] = static_cast<T>(in[i]);
    }
#pragma unroll
    for (int j = 0; j < LOADS; ++j) {
      if (base + static_cast<size_t>(j) * step < to) {
        partial.value = partial.any ? static_cast<T>(op(partial.value, items[j])) : items[j];
        partial.any = true;
      }
    }
  }
}

/// Adds in[from, to) to the calling thread's `partial`, the block's threads `threads` apart: where `in` is a pointer
/// to items whose 16-byte vectors hold several, the aligned middle as vectors (LOADS a thread in flight), the ends
/// item by item.
template <int LOADS, class InIt, class T, class Op>
__device__ inline void accumulate_block(InIt in, size_t from, size_t to, int threads, Op op, Partial<T>& partial) {
  using Item = std::remove_cv_t<typename std::iterator_traits<InIt>::value_type>;
  const size_t step = static_cast<size_t>(threads);
  if constexpr (std::is_pointer_v<InIt> && kVectorItems<Item> > 1) {
    constexpr size_t kPer = kVectorItems<Item>;
    const auto address = reinterpret_cast<uintptr_t>(in + from);
    if (address % sizeof(Item) == 0 && to - from >= 2 * kPer) {
      // Items before the first 16-byte boundary, the vectors, the items after the last.
      const size_t head = ((kVectorBytes - address % kVectorBytes) % kVectorBytes) / sizeof(Item);
      const size_t vectors = (to - from - head) / kPer;
      const size_t middle = from + head;
      const size_t tail = middle + vectors * kPer;
      accumulate<1>(in, from + threadIdx.x, middle, step, op, partial);
      const Vector<Item>* vector_in = reinterpret_cast<const Vector<Item>*>(in + middle);
      for (size_t base = threadIdx.x; base < vectors; base += step * LOADS) {
        Vector<Item> loaded[LOADS];
#pragma unroll
        for (int j = 0; j < LOADS; ++j) {
          const size_t v = base + static_cast<size_t>(j) * step;
          if (v < vectors) loaded[j] = vector_in[v];
        }
#pragma unroll
        for (int j = 0; j < LOADS; ++j) {
          if (base + static_cast<size_t>(j) * step < vectors) {
#pragma unroll
            for (size_t k = 0; k < kPer; ++k) {
              const T item = static_cast<T>(loaded[j].items[k]);
              partial.value = partial.any ? static_cast<T>(op(partial.value, item)) : item;
              partial.any = true;
            }
          }
        }
      }
      accumulate<1>(in, tail + threadIdx.x, to, step, op, partial);
      return;
    }
  }
  accumulate<LOADS>(in, from + threadIdx.x, to, step, op, partial);
}

/// The warp's partial results combined, in lane 0. Where every lane holds a value (a segment of at least a warp's
/// items, the common case) the tree shuffles values alone; where none does, there is nothing to combine.
template <class T, class Op>
__device__ inline Partial<T> warp_combine(Partial<T> partial, Op op) {
  const unsigned holding = __ballot_sync(kFullWarpMask, partial.any);
  if (holding == 0) return partial;
  if (holding == kFullWarpMask) {
    partial.value = warp::reduce_shuffle(partial.value, op);
    return partial;
  }
#pragma unroll
  for (int offset = warp::kWarpThreads / 2; offset > 0; offset /= 2) {
    const T other = shuffle_down(partial.value, offset);
    const bool other_any = __shfl_down_sync(kFullWarpMask, partial.any, offset);
    if (other_any) {
      partial.value = partial.any ? static_cast<T>(op(partial.value, other)) : other;
      partial.any = true;
    }
  }
  return partial;
}

/// init op (the segment's reduction), or init for an empty segment.
template <class T, class Op>
__device__ inline T finish(const Partial<T>& partial, Op op, const T& init) {
  return partial.any ? static_cast<T>(op(init, partial.value)) : init;
}

template <class Policy, class InIt, class OutIt, class Offset, class Op, class T>
__global__ void __launch_bounds__(Policy::block_threads)
    segmented_reduce_warps_kernel(InIt in, OutIt out, size_t num_segments, const Offset* begin_offsets,
                                  const Offset* end_offsets, Op op, T init, unsigned char* is_long,
                                  unsigned long long* taken) {
  wait_for_prior_grids();
  allow_dependent_grids();
  if (blockIdx.x == 0 && threadIdx.x == 0) *taken = 0;  // read by the blocks kernel once this grid is done
  constexpr int kWarps = Policy::block_threads / warp::kWarpThreads;
  const int lane = threadIdx.x % warp::kWarpThreads;
  const size_t warps = static_cast<size_t>(gridDim.x) * kWarps;
  for (size_t s = static_cast<size_t>(blockIdx.x) * kWarps + threadIdx.x / warp::kWarpThreads; s < num_segments;
       s += warps) {
    const size_t begin = static_cast<size_t>(begin_offsets[s]);
    const size_t end = static_cast<size_t>(end_offsets[s]);
    const size_t length = end > begin ? end - begin : 0;
    const bool long_segment = length > Policy::warp_segment_items;
    if (lane == 0) is_long[s] = long_segment;
    if (long_segment) continue;
    Partial<T> partial{false, init};
    accumulate<Policy::loads_per_thread>(in, begin + lane, begin + length, warp::kWarpThreads, op, partial);
    partial = warp_combine(partial, op);
    if (lane == 0) out[s] = finish(partial, op, init);
  }
}

/// One segment reduced by the whole block of THREADS into out[s], LOADS vectors a thread in flight.
/// `warp_partials` is reused: the block must be synchronized before the next call.
template <int THREADS, int LOADS, class InIt, class OutIt, class Offset, class Op, class T>
__device__ void reduce_segment_in_block(InIt in, OutIt out, size_t s, const Offset* begin_offsets,
                                        const Offset* end_offsets, Op op, const T& init, Partial<T>* warp_partials) {
  constexpr int kWarps = THREADS / warp::kWarpThreads;
  const int lane = threadIdx.x % warp::kWarpThreads;
  const int warp_id = threadIdx.x / warp::kWarpThreads;
  const size_t begin = static_cast<size_t>(begin_offsets[s]);
  const size_t end = static_cast<size_t>(end_offsets[s]);
  Partial<T> partial{false, init};
  if (end > begin) accumulate_block<LOADS>(in, begin, end, THREADS, op, partial);
  partial = warp_combine(partial, op);
  if (lane == 0) warp_partials[warp_id] = partial;
  __syncthreads();
  if (warp_id == 0) {
    Partial<T> block = lane < kWarps ? warp_partials[lane] : Partial<T>{false, init};
    block = warp_combine(block, op);
    if (lane == 0) out[s] = finish(block, op, init);
  }
}

/// MARKED: the blocks take groups of THREADS segments through `taken` and reduce those the warps kernel marked
/// long, one at a time; otherwise block b reduces segment b (a grid of a block a segment). LOADS vectors a thread
/// in flight.
template <int THREADS, bool MARKED, int LOADS, class InIt, class OutIt, class Offset, class Op, class T>
__global__ void __launch_bounds__(THREADS)
    segmented_reduce_blocks_kernel(InIt in, OutIt out, size_t num_segments, const Offset* begin_offsets,
                                   const Offset* end_offsets, Op op, T init, const unsigned char* is_long,
                                   unsigned long long* taken) {
  constexpr int kThreads = THREADS;
  constexpr int kWarps = kThreads / warp::kWarpThreads;
  __shared__ Partial<T> warp_partials[kWarps];
  wait_for_prior_grids();
  allow_dependent_grids();
  if constexpr (!MARKED) {
    reduce_segment_in_block<kThreads, LOADS>(in, out, blockIdx.x, begin_offsets, end_offsets, op, init,
                                             warp_partials);
  } else {
    __shared__ unsigned long long group;
    __shared__ unsigned listed[kThreads];
    __shared__ int num_listed;
    for (;;) {
      if (threadIdx.x == 0) {
        group = atomicAdd(taken, 1ull) * kThreads;
        num_listed = 0;
      }
      __syncthreads();
      const size_t first = group;
      if (first >= num_segments) break;
      const size_t s = first + threadIdx.x;
      if (s < num_segments && is_long[s]) listed[atomicAdd(&num_listed, 1)] = threadIdx.x;
      __syncthreads();
      const int count = num_listed;
      for (int i = 0; i < count; ++i) {
        reduce_segment_in_block<kThreads, LOADS>(in, out, first + listed[i], begin_offsets, end_offsets, op, init,
                                                 warp_partials);
        __syncthreads();  // the partials are reused
      }
      __syncthreads();  // every thread has read the group before thread 0 takes the next
    }
  }
}

/// segmented_reduce with its policy given. temp: a long-segment mark a segment and the group counter.
template <class Policy, class InIt, class OutIt, class Offset, class Op, class T>
cudaError_t dispatch_segmented_reduce(void* temp, size_t& temp_bytes, InIt in, OutIt out, size_t num_segments,
                                      const Offset* begin_offsets, const Offset* end_offsets, Op op, T init,
                                      cudaStream_t stream) {
  void* parts[2] = {nullptr, nullptr};
  PRIMS_TRY(carve_temp(temp, temp_bytes, {num_segments, sizeof(unsigned long long)}, parts));
  if (temp == nullptr || num_segments == 0) return cudaSuccess;
  if (begin_offsets == nullptr || end_offsets == nullptr) {
    return invalid_value("segmented_reduce: %zu segments and no offsets", num_segments);
  }
  constexpr int kLoads = Policy::loads_per_thread;
  constexpr int kThreads = Policy::block_threads;
  constexpr int kPackedThreads = Policy::packed_block_threads;
  const auto blocks_kernel = segmented_reduce_blocks_kernel<kThreads, false, kLoads, InIt, OutIt, Offset, Op, T>;
  size_t resident = 0;
  PRIMS_TRY(resident_blocks(blocks_kernel, kThreads, 0, resident));
  // A block a segment costs one launch, the warps' way two: the warps pay only where the segments take several of
  // the device's fills of blocks (docs/design-notes.md, "Segmented reduce"). Segments that all fit at once get many
  // loads a thread in flight; more take blocks of fewer loads and registers, so that more of them fit at once.
  if (num_segments <= Policy::block_a_segment_fills * resident) {
    if (num_segments <= resident) {
      return launch(blocks_kernel, static_cast<unsigned>(num_segments), kThreads, 0, stream, in, out, num_segments,
                    begin_offsets, end_offsets, op, init, nullptr, nullptr);
    }
    return launch(segmented_reduce_blocks_kernel<kPackedThreads, false, Policy::packed_loads_per_thread, InIt, OutIt,
                                                 Offset, Op, T>,
                  static_cast<unsigned>(num_segments), kPackedThreads, 0, stream, in, out, num_segments,
                  begin_offsets, end_offsets, op, init, nullptr, nullptr);
  }
  auto* is_long = static_cast<unsigned char*>(parts[0]);
  auto* taken = static_cast<unsigned long long*>(parts[1]);
  constexpr int kWarps = kThreads / warp::kWarpThreads;
  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  const size_t warp_blocks = std::min((num_segments + kWarps - 1) / kWarps, static_cast<size_t>(multiprocessors) * 64);
  PRIMS_TRY(launch(segmented_reduce_warps_kernel<Policy, InIt, OutIt, Offset, Op, T>,
                   static_cast<unsigned>(warp_blocks), kThreads, 0, stream, in, out, num_segments,
                   begin_offsets, end_offsets, op, init, is_long, taken));
  const size_t groups = (num_segments + kThreads - 1) / kThreads;
  return launch_persistent(segmented_reduce_blocks_kernel<kThreads, true, kLoads, InIt, OutIt, Offset, Op, T>,
                           groups, kThreads, 0, stream, in, out, num_segments, begin_offsets,
                           end_offsets, op, init, static_cast<const unsigned char*>(is_long), taken);
}

}  // namespace prims::detail
