// bench_segmented_top_k: prims::device::segmented_top_k_keys (every row's k largest, sorted, ties to the earlier
// key) against cub::DeviceBatchedTopK::MaxKeys (unsorted, not deterministic: the only guarantees it offers) where
// the CCCL the bench is built with has it (3.5 and later; the toolkit's does not: see PRIMS_BENCH_CCCL_INCLUDE_DIR in
// CMakeLists.txt), and against what users do without one: cub::DeviceSegmentedSort::SortKeysDescending of every
// row, whose first k keys a row are the reference every contender is checked against (bitwise; CUB's top-k,
// unsorted, as a multiset a row). Rows of equal length of f32 scores in [0, 1): 1024 rows of 131072 with k = 50
// (a batch of vocabulary-sized logits), 16384 and 1024 rows of 4096 and 4096 rows of 16384 with k = 64. GB/s counts
// the input read once.
#include <cub/device/device_segmented_sort.cuh>
#if __has_include(<cub/device/device_batched_topk.cuh>)
#include <cub/device/device_batched_topk.cuh>
#include <cuda/argument>
#include <cuda/iterator>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#define PRIMS_BENCH_CUB_BATCHED_TOPK 1
#endif

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/top_k.cuh"

namespace {

using prims::bench::Contender;

/// Row i's first item: rows of `length` items back to back.
template <class T>
struct RowStart {
  T* base;
  size_t length;
  __host__ __device__ T* operator()(int i) const { return base + static_cast<size_t>(i) * length; }
};

/// Whether every row's k keys of a and b are the same keys, in any order (bit patterns compared).
bool same_rows_as_multisets(const float* a, const float* b, size_t rows, size_t k) {
  std::vector<float> x(rows * k), y(rows * k);
  prims::check(cudaMemcpy(x.data(), a, x.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy");
  prims::check(cudaMemcpy(y.data(), b, y.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy");
  for (size_t r = 0; r < rows; ++r) {
    std::vector<uint64_t> bx(k), by(k);
    for (size_t i = 0; i < k; ++i) {
      bx[i] = prims::bench::bits_of(x[r * k + i]);
      by[i] = prims::bench::bits_of(y[r * k + i]);
    }
    std::sort(bx.begin(), bx.end());
    std::sort(by.begin(), by.end());
    if (bx != by) return false;
  }
  return true;
}

/// Copies the first k keys of every row of `sorted` (rows of `length`) to `out` (rows of k).
__global__ void first_k_kernel(const float* sorted, float* out, size_t rows, size_t length, size_t k) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < rows * k; i += size_t{gridDim.x} * blockDim.x) {
    out[i] = sorted[(i / k) * length + i % k];
  }
}

template <int LENGTH, int K>
void bench_shape(prims::bench::Harness& harness, size_t rows) {
  const size_t length = LENGTH;
  const size_t k = K;
  const size_t n = rows * length;
  const std::string variant = std::to_string(rows) + " rows of " + std::to_string(length) + ", k = " + std::to_string(k);
  if (!harness.selected({"segmented_top_k", "f32", variant})) return;
  const cudaStream_t stream = harness.stream();
  prims::DeviceBuffer<float> keys(n), sorted(n), reference(rows * k), prims_out(rows * k), cub_out(rows * k);
  prims::bench::generate(keys.data(), n, 37, [] __device__(uint64_t bits, size_t) {
    return static_cast<float>(static_cast<double>(bits >> 40) * 0x1p-24);
  });
  std::vector<uint64_t> offsets(rows + 1);
  for (size_t r = 0; r <= rows; ++r) offsets[r] = r * length;
  prims::DeviceBuffer<uint64_t> d_offsets(rows + 1);
  d_offsets.upload(offsets);
  const uint64_t* begins = d_offsets.data();
  const uint64_t* ends = d_offsets.data() + 1;

  auto prims_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return prims::device::segmented_top_k_keys(temp, bytes, keys.data(), prims_out.data(), rows, begins, ends, k,
                                               prims::Order::Descending, s);
  };
  auto sort_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return cub::DeviceSegmentedSort::SortKeysDescending(temp, bytes, keys.data(), sorted.data(), n,
                                                        static_cast<int64_t>(rows), begins, ends, s);
  };
  size_t prims_bytes = 0, sort_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, stream), "prims size");
  prims::check(sort_call(nullptr, sort_bytes, stream), "cub sort size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), sort_temp(sort_bytes);
  // The reference: every row's first k keys of CUB's segmented sort (timed below as a contender too).
  prims::check(sort_call(sort_temp.data(), sort_bytes, stream), "reference");
  first_k_kernel<<<1024, 256, 0, stream>>>(sorted.data(), reference.data(), rows, length, k);
  prims::check(cudaGetLastError(), "first_k_kernel");
  prims::check(cudaStreamSynchronize(stream), "reference");

  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, s), "prims"); }},
  };
  contenders.back().check = [&] { return prims::bench::same_bits(prims_out.data(), reference.data(), rows * k); };
  contenders.back().outputs = {prims::bench::output(prims_out.data(), rows * k)};
#ifdef PRIMS_BENCH_CUB_BATCHED_TOPK
  const auto in = cuda::make_transform_iterator(cuda::counting_iterator<int>{0}, RowStart<const float>{keys.data(), length});
  const auto out = cuda::make_transform_iterator(cuda::counting_iterator<int>{0}, RowStart<float>{cub_out.data(), k});
  // Unsorted, with no guarantee: CUB's deterministic set (ties to the smaller index) is served by its cluster backend
  // only, which rows of 4096 do not take.
  auto cub_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    namespace ex = ::cuda::execution;
    const auto env = ::cuda::std::execution::env{
        ::cuda::stream_ref{s}, ex::require(ex::determinism::not_guaranteed, ex::tie_break::unspecified,
                                           ex::output_ordering::unsorted)};
    return cub::DeviceBatchedTopK::MaxKeys(temp, bytes, in, out, cuda::args::constant<LENGTH>{},
                                           cuda::args::constant<K>{}, static_cast<int>(rows), env);
  };
  size_t topk_bytes = 0;
  prims::check(cub_call(nullptr, topk_bytes, stream), "cub top-k size");
  prims::DeviceBuffer<unsigned char> topk_temp(topk_bytes);
  contenders.push_back({"CUB top-k", [&](cudaStream_t s) { prims::check(cub_call(topk_temp.data(), topk_bytes, s), "cub top-k"); }});
  contenders.back().check = [&] { return same_rows_as_multisets(cub_out.data(), reference.data(), rows, k); };
  contenders.back().outputs = {prims::bench::output(cub_out.data(), rows * k)};
#endif
  contenders.push_back({"CUB sort", [&](cudaStream_t s) { prims::check(sort_call(sort_temp.data(), sort_bytes, s), "cub sort"); }});
  contenders.back().check = [&] {
    // Every row's first k keys again, against the reference taken from the first run.
    first_k_kernel<<<1024, 256>>>(sorted.data(), cub_out.data(), rows, length, k);
    prims::check(cudaDeviceSynchronize(), "first_k_kernel");
    return prims::bench::same_bits(cub_out.data(), reference.data(), rows * k);
  };
  contenders.back().outputs = {prims::bench::output(sorted.data(), n)};
  harness.run_case({"segmented_top_k", "f32", variant}, n, sizeof(float), contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_segmented_top_k", 20, 28, 4);
    bench_shape<131072, 50>(harness, 1024);
    bench_shape<4096, 64>(harness, 16384);
    bench_shape<4096, 64>(harness, 1024);
    bench_shape<16384, 64>(harness, 4096);
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_segmented_top_k: error: {}\n", e.what());
    return 1;
  }
}
