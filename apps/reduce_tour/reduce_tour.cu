// reduce_tour: the classic reduction ladder, one small kernel per step, timed on today's GPU.
//
// Every step changes one thing from the step before; its comment says what and its lesson is printed in the
// table. All steps sum the same n = 2^log2_n int32 values drawn from 0..7. With n <= 2^28 every partial sum and
// the total stay below 7 * 2^28 < 2^31, so int32 arithmetic is exact and each result is compared exactly with
// a CPU sum accumulated in int64.

#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <cub/device/device_reduce.cuh>
#include <fmt/core.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "prims/device/reduce.cuh"
#include "prims/util/cuda_handles.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"

namespace {

constexpr int kBlockThreads = 256;
constexpr int kWarpThreads = 32;
constexpr int kWarpsPerBlock = kBlockThreads / kWarpThreads;
constexpr int kMaxValue = 7;
constexpr int kMaxLog2N = 28;
static_assert((static_cast<long long>(kMaxValue) << kMaxLog2N) <= INT_MAX, "int32 sums must stay exact");
static_assert(kBlockThreads % kWarpThreads == 0 && kWarpsPerBlock <= kWarpThreads && kBlockThreads >= 2 * kWarpThreads,
              "the block sums below assume whole warps, at most 32 of them, and at least two");

__device__ size_t global_thread() { return blockIdx.x * size_t{kBlockThreads} + threadIdx.x; }
__device__ size_t grid_threads() { return gridDim.x * size_t{kBlockThreads}; }

// ---- Step 1: one atomic per element -----------------------------------------------------------------------

// Every element is one atomicAdd on the same counter. Correct, and the slowest way: all updates of one
// address are serialized where that address lives, in L2.
__global__ void atomic_per_element_kernel(const int* __restrict__ in, int* total, size_t n) {
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    atomicAdd(total, in[i]);
  }
}

// ---- Steps 2 to 7: the classic two-kernel form ------------------------------------------------------------
// Each block sums its slice into block_sums[blockIdx.x]; the host launches the same kernel again over those
// sums until one value is left (reduce_in_passes below). Elements past the end load as 0, the identity of +,
// so the tree needs no bounds tests.

// Step 2. A tree in shared memory with interleaved addressing: at stride s, each thread whose id is a multiple
// of 2*s adds the partial s places away. The active threads are scattered over every warp, so all warps keep
// running with most of their lanes idle: divergence.
__global__ void interleaved_divergent_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  __shared__ int partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const size_t i = global_thread();
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned s = 1; s < kBlockThreads; s *= 2) {
    if (tid % (2 * s) == 0) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    block_sums[blockIdx.x] = partial[0];
  }
}

// Step 3. The same tree, but thread tid works at index 2*s*tid: the active threads are now the first ones and
// whole warps finish early. The price: at stride s, neighbouring threads touch words 2*s apart, so several lanes
// of a warp hit the same shared-memory bank and wait for each other (bank conflicts).
__global__ void strided_index_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  __shared__ int partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const size_t i = global_thread();
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned s = 1; s < kBlockThreads; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < kBlockThreads) {
      partial[index] += partial[index + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    block_sums[blockIdx.x] = partial[0];
  }
}

// Step 4. Sequential addressing: halve the active range at each step, thread tid adds partial[tid + s]. Active
// threads are contiguous and read consecutive words: no divergence inside busy warps, no bank conflicts. Still,
// half the threads do nothing but load.
__global__ void sequential_addressing_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  __shared__ int partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const size_t i = global_thread();
  partial[tid] = i < n ? in[i] : 0;
  __syncthreads();
  for (unsigned s = kBlockThreads / 2; s > 0; s /= 2) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    block_sums[blockIdx.x] = partial[0];
  }
}

// Step 5. First add during load: each block covers 2 * kBlockThreads elements and each thread adds its two
// while loading, so every thread does useful work and half as many blocks run the tree.
__global__ void first_add_during_load_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  __shared__ int partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const size_t i = blockIdx.x * size_t{2 * kBlockThreads} + tid;
  partial[tid] = (i < n ? in[i] : 0) + (i + kBlockThreads < n ? in[i + kBlockThreads] : 0);
  __syncthreads();
  for (unsigned s = kBlockThreads / 2; s > 0; s /= 2) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    block_sums[blockIdx.x] = partial[0];
  }
}

// Sums the block's last 64 partials with the first warp alone: no __syncthreads, no `tid < s` test, the six
// steps unrolled. Each lane keeps its running sum in a register and the warp meets at __syncwarp between reading
// its neighbour and writing its own slot. Since Volta the lanes of a warp may run apart, so the classic
// version that relies on volatile and implicit lockstep alone is a data race. The result is valid in lane 0.
__device__ int warp_sum_shared(int* partial, unsigned lane) {
  int sum = partial[lane];
#pragma unroll
  for (unsigned offset = kWarpThreads; offset > 0; offset /= 2) {
    sum += partial[lane + offset];
    __syncwarp();
    partial[lane] = sum;
    __syncwarp();
  }
  return sum;
}

// Step 6. Unrolled last warp: the tree runs with __syncthreads only while more than one warp is needed.
__global__ void unrolled_last_warp_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  __shared__ int partial[kBlockThreads];
  const unsigned tid = threadIdx.x;
  const size_t i = blockIdx.x * size_t{2 * kBlockThreads} + tid;
  partial[tid] = (i < n ? in[i] : 0) + (i + kBlockThreads < n ? in[i + kBlockThreads] : 0);
  __syncthreads();
  for (unsigned s = kBlockThreads / 2; s > kWarpThreads; s /= 2) {
    if (tid < s) {
      partial[tid] += partial[tid + s];
    }
    __syncthreads();
  }
  if (tid < kWarpThreads) {
    const int sum = warp_sum_shared(partial, tid);
    if (tid == 0) {
      block_sums[blockIdx.x] = sum;
    }
  }
}

// Sums `value` over the 32 lanes of a warp in registers: __shfl_down_sync reads the value of the lane `offset`
// higher, with no shared memory and no separate synchronization. The result is valid in lane 0.
__device__ int warp_sum_shuffle(int value) {
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
    value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

// Sums `value` over the block: each warp by shuffle, then lane 0 of each warp stores its warp's total and the
// first warp sums those totals the same way. One __syncthreads in all. The result is valid in thread 0.
__device__ int block_sum_shuffle(int value) {
  __shared__ int warp_totals[kWarpsPerBlock];
  const unsigned lane = threadIdx.x % kWarpThreads;
  const unsigned warp = threadIdx.x / kWarpThreads;
  value = warp_sum_shuffle(value);
  if (lane == 0) {
    warp_totals[warp] = value;
  }
  __syncthreads();
  if (warp == 0) {
    value = warp_sum_shuffle(lane < kWarpsPerBlock ? warp_totals[lane] : 0);
  }
  return value;
}

// Step 7. Warp shuffle: the same load as step 5, then the whole block sum through registers.
__global__ void warp_shuffle_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  const size_t i = blockIdx.x * size_t{2 * kBlockThreads} + threadIdx.x;
  const int sum = block_sum_shuffle((i < n ? in[i] : 0) + (i + kBlockThreads < n ? in[i + kBlockThreads] : 0));
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = sum;
  }
}

// ---- Steps 8 to 10: a grid that just fills the GPU ---------------------------------------------------------

// Step 8. Several elements per thread: launch only as many blocks as the GPU runs at once and let each thread
// walk the input with a grid-stride loop, summing in a register. The tree runs once per block instead of once
// per 512 elements. A second launch of the same kernel, with one block, sums the block sums.
__global__ void grid_stride_kernel(const int* __restrict__ in, int* block_sums, size_t n) {
  int sum = 0;
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    sum += in[i];
  }
  sum = block_sum_shuffle(sum);
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = sum;
  }
}

// Step 9. One atomic per block: the same kernel, but each block adds its sum straight into the total. A
// thousand atomics cost nothing and the second launch is gone (the total must be zeroed first).
__global__ void atomic_per_block_kernel(const int* __restrict__ in, int* total, size_t n) {
  int sum = 0;
  for (size_t i = global_thread(); i < n; i += grid_threads()) {
    sum += in[i];
  }
  sum = block_sum_shuffle(sum);
  if (threadIdx.x == 0) {
    atomicAdd(total, sum);
  }
}

// Step 10. Batched 16-byte loads: each thread issues kLoadsInFlight independent int4 loads before adding any of
// them, so more bytes are in flight per thread and fewer instructions move each byte. The input comes from
// cudaMalloc, so it is 16-byte aligned; the last n % 4 elements are summed one by one.
constexpr int kLoadsInFlight = 4;

__global__ void batched_vector_kernel(const int* __restrict__ in, int* total, size_t n) {
  const int4* in4 = reinterpret_cast<const int4*>(in);
  const size_t n4 = n / 4;
  const size_t threads = grid_threads();
  int sum = 0;
  size_t i = global_thread();
  for (; i + (kLoadsInFlight - 1) * threads < n4; i += kLoadsInFlight * threads) {
    int4 batch[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      batch[k] = in4[i + k * threads];
    }
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      sum += batch[k].x + batch[k].y + batch[k].z + batch[k].w;
    }
  }
  for (; i < n4; i += threads) {
    const int4 v = in4[i];
    sum += v.x + v.y + v.z + v.w;
  }
  for (size_t j = 4 * n4 + global_thread(); j < n; j += threads) {
    sum += in[j];
  }
  sum = block_sum_shuffle(sum);
  if (threadIdx.x == 0) {
    atomicAdd(total, sum);
  }
}

// ---- Host side --------------------------------------------------------------------------------------------

using ReduceKernel = void (*)(const int*, int*, size_t);

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Steps 2 to 7: runs a block-sum kernel pass after pass, n values -> one per block -> ... -> one, into total.
// Passes alternate between the two scratch buffers, each large enough for the first pass's block sums.
void reduce_in_passes(ReduceKernel kernel, size_t items_per_block, const int* in, int* total, size_t n,
                      int* const (&scratch)[2]) {
  for (int pass = 0;; ++pass) {
    const size_t blocks = ceil_div(n, items_per_block);
    int* pass_out = blocks == 1 ? total : scratch[pass % 2];
    kernel<<<static_cast<unsigned>(blocks), kBlockThreads>>>(in, pass_out, n);
    prims::check(cudaGetLastError(), "launching a reduction pass");
    if (blocks == 1) {
      return;
    }
    in = pass_out;
    n = blocks;
  }
}

// Steps 1 and 8 to 10: as many blocks as fit on the GPU at once, but no more blocks than the input can fill.
unsigned filling_grid(ReduceKernel kernel, size_t n) {
  int device = 0;
  int multiprocessors = 0;
  int blocks_per_multiprocessor = 0;
  prims::check(cudaGetDevice(&device), "cudaGetDevice");
  prims::check(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
               "reading the multiprocessor count");
  prims::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, kernel, kBlockThreads, 0),
               "reading the occupancy");
  const size_t resident = static_cast<size_t>(multiprocessors) * blocks_per_multiprocessor;
  return static_cast<unsigned>(std::min(resident, ceil_div(n, kBlockThreads)));
}

// The median time in microseconds of `repeat` runs of `work` (all on the default stream), after one warm-up
// run that pays for lazy module loading and first allocations. Each run is timed alone between two events.
double median_microseconds(const std::function<void()>& work, int repeat) {
  work();
  prims::check(cudaDeviceSynchronize(), "the warm-up run");
  prims::Event start;
  prims::Event stop;
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    start.record(0);
    work();
    stop.record(0);
    stop.synchronize("a timed run");
    times.push_back(prims::Event::milliseconds_between(start, stop) * 1000.0);
  }
  std::sort(times.begin(), times.end());
  const size_t mid = times.size() / 2;
  return times.size() % 2 == 1 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

struct Step {
  std::string name;
  std::string lesson;
  std::function<void()> run;    // one complete sum of the input, from nothing to the result
  std::function<int()> result;  // the sum the last run produced
};

int run_tour(int log2_n, int repeat) {
  const size_t n = size_t{1} << log2_n;
  const size_t bytes = n * sizeof(int);

  std::vector<int> host(n);
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> value(0, kMaxValue);
  std::generate(host.begin(), host.end(), [&] { return value(rng); });
  const long long expected = std::accumulate(host.begin(), host.end(), 0LL);

  prims::DeviceBuffer<int> input(n);
  input.upload(host);
  prims::DeviceBuffer<int> copy_target(n);
  prims::DeviceBuffer<int> total(1);
  prims::DeviceBuffer<int> scratch_a(ceil_div(n, kBlockThreads));
  prims::DeviceBuffer<int> scratch_b(ceil_div(n, kBlockThreads));
  const int* in = input.data();
  int* out = total.data();
  int* const scratch[2] = {scratch_a.data(), scratch_b.data()};

  size_t prims_temp_bytes = 0;
  prims::check(prims::device::sum(nullptr, prims_temp_bytes, in, out, n), "sizing prims::device::sum");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_temp_bytes);
  // n <= 2^28 fits the int num_items that CUB callers usually pass.
  const int cub_items = static_cast<int>(n);
  size_t cub_temp_bytes = 0;
  prims::check(cub::DeviceReduce::Sum(nullptr, cub_temp_bytes, in, out, cub_items), "sizing cub::DeviceReduce::Sum");
  prims::DeviceBuffer<unsigned char> cub_temp(cub_temp_bytes);

  const unsigned grid_atomic = filling_grid(atomic_per_element_kernel, n);
  const unsigned grid_stride = filling_grid(grid_stride_kernel, n);
  const unsigned grid_per_block = filling_grid(atomic_per_block_kernel, n);
  const unsigned grid_vector = filling_grid(batched_vector_kernel, n);
  const size_t one_per_thread = kBlockThreads;
  const size_t two_per_thread = 2 * kBlockThreads;

  const auto zero_total = [&] { prims::check(cudaMemsetAsync(out, 0, sizeof(int)), "zeroing the total"); };
  const auto read_total = [&] { return total.download(1)[0]; };
  int thrust_total = -1;

  const std::vector<Step> steps = {
      {"1 atomic per element", "one atomicAdd per element on one address: the updates queue up in L2",
       [&] {
         zero_total();
         atomic_per_element_kernel<<<grid_atomic, kBlockThreads>>>(in, out, n);
         prims::check(cudaGetLastError(), "launching step 1");
       },
       read_total},
      {"2 interleaved, divergent", "shared-memory tree, tid % (2*s): active lanes scattered, warps diverge",
       [&] { reduce_in_passes(interleaved_divergent_kernel, one_per_thread, in, out, n, scratch); }, read_total},
      {"3 strided index", "index = 2*s*tid packs active threads, but lanes collide on banks",
       [&] { reduce_in_passes(strided_index_kernel, one_per_thread, in, out, n, scratch); }, read_total},
      {"4 sequential addressing", "tid adds partial[tid + s]: contiguous, no divergence, no bank conflicts",
       [&] { reduce_in_passes(sequential_addressing_kernel, one_per_thread, in, out, n, scratch); }, read_total},
      {"5 first add during load", "each thread adds two elements as it loads: no thread only loads",
       [&] { reduce_in_passes(first_add_during_load_kernel, two_per_thread, in, out, n, scratch); }, read_total},
      {"6 unrolled last warp", "last warp unrolled with __syncwarp: fewer __syncthreads, still race-free",
       [&] { reduce_in_passes(unrolled_last_warp_kernel, two_per_thread, in, out, n, scratch); }, read_total},
      {"7 warp shuffle", "__shfl_down_sync sums in registers; shared memory only for warp totals",
       [&] { reduce_in_passes(warp_shuffle_kernel, two_per_thread, in, out, n, scratch); }, read_total},
      {"8 several per thread", "grid-stride loop on a GPU-filling grid: sum in registers, tree once",
       [&] {
         grid_stride_kernel<<<grid_stride, kBlockThreads>>>(in, scratch[0], n);
         prims::check(cudaGetLastError(), "launching step 8");
         grid_stride_kernel<<<1, kBlockThreads>>>(scratch[0], out, grid_stride);
         prims::check(cudaGetLastError(), "launching step 8's second pass");
       },
       read_total},
      {"9 one atomic per block", "each block atomicAdds its sum: one launch, no second pass",
       [&] {
         zero_total();
         atomic_per_block_kernel<<<grid_per_block, kBlockThreads>>>(in, out, n);
         prims::check(cudaGetLastError(), "launching step 9");
       },
       read_total},
      {"10 batched int4 loads", "four 16-byte loads in flight per thread before any add",
       [&] {
         zero_total();
         batched_vector_kernel<<<grid_vector, kBlockThreads>>>(in, out, n);
         prims::check(cudaGetLastError(), "launching step 10");
       },
       read_total},
      {"prims::device::sum", "the library: tuned tiles of vector loads, deterministic two-kernel finish",
       [&] { prims::check(prims::device::sum(prims_temp.data(), prims_temp_bytes, in, out, n), "prims::device::sum"); },
       read_total},
      {"thrust::reduce", "one call; allocates its scratch and returns the sum to the host each time",
       [&] { thrust_total = thrust::reduce(thrust::device, in, in + n, 0); }, [&] { return thrust_total; }},
      {"cub::DeviceReduce::Sum", "the reference: tuned per architecture, caller-provided scratch",
       [&] {
         prims::check(cub::DeviceReduce::Sum(cub_temp.data(), cub_temp_bytes, in, out, cub_items),
                      "cub::DeviceReduce::Sum");
       },
       read_total},
  };

  cudaDeviceProp properties{};
  int device = 0;
  prims::check(cudaGetDevice(&device), "cudaGetDevice");
  prims::check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  const double copy_us = median_microseconds(
      [&] {
        prims::check(cudaMemcpyAsync(copy_target.data(), in, bytes, cudaMemcpyDeviceToDevice), "the copy");
      },
      repeat);
  // A copy reads and writes every byte; a reduction only reads them.
  const double copy_gbps = 2.0 * static_cast<double>(bytes) / copy_us * 1e-3;

  fmt::print("reduce_tour on {}: n = 2^{} int32 ({:.0f} MiB), median of {} runs\n", properties.name, log2_n,
             static_cast<double>(bytes) / (1 << 20), repeat);
  fmt::print("device-to-device copy of the same bytes: {:.1f} us, {:.0f} GB/s read+write\n", copy_us, copy_gbps);
  fmt::print("CPU sum: {}\n\n", expected);

  size_t lesson_width = 0;
  for (const Step& step : steps) {
    lesson_width = std::max(lesson_width, step.lesson.size());
  }
  fmt::print("{:<24}  {:<{}}  {:>10}  {:>7}  {:>7}  {:>9}  {}\n", "step", "lesson", lesson_width, "time (us)", "GB/s",
             "% copy", "vs step 1", "check");

  bool all_correct = true;
  double step1_us = 0;
  for (const Step& step : steps) {
    // -1 is never a sum of values in 0..7, so a step that writes nothing shows up as FAIL.
    prims::check(cudaMemset(out, 0xFF, sizeof(int)), "poisoning the total");
    thrust_total = -1;
    const double us = median_microseconds(step.run, repeat);
    const int got = step.result();
    const bool correct = got == expected;
    all_correct = all_correct && correct;
    if (step1_us == 0) {
      step1_us = us;
    }
    const double gbps = static_cast<double>(bytes) / us * 1e-3;
    fmt::print("{:<24}  {:<{}}  {:>10.1f}  {:>7.0f}  {:>6.1f}%  {:>8.1f}x  {}\n", step.name, step.lesson, lesson_width,
               us, gbps, 100.0 * gbps / copy_gbps, step1_us / us,
               correct ? std::string("OK") : fmt::format("FAIL (got {})", got));
  }
  return all_correct ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The classic reduction ladder, step by step, timed on this GPU."};
  int log2_n = 26;
  int repeat = 20;
  app.add_option("--log2-n", log2_n, "sum 2^N int32 values")->check(CLI::Range(1, kMaxLog2N));
  app.add_option("--repeat", repeat, "timed runs per step; the median is printed")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fputs("reduce_tour: no CUDA device\n", stderr);
    return 1;
  }
  try {
    return run_tour(log2_n, repeat);
  } catch (const std::exception& error) {
    fmt::print(stderr, "reduce_tour: {}\n", error.what());
    return 1;
  }
}
