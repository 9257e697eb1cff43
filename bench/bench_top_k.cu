// bench_top_k: prims::device::top_k_keys (the k largest, sorted, ties to the earlier key) against
// cub::DeviceTopK::MaxKeys (unsorted, not deterministic: the only guarantees it offers) where the CCCL the bench is
// built with has it (3.3 and later; the toolkit's does not: see PRIMS_BENCH_CCCL_INCLUDE_DIR in CMakeLists.txt),
// and against what users do without one: cub::DeviceRadixSort::SortKeysDescending of the whole input, whose first
// k keys are the reference every contender is checked against (bitwise; CUB's top-k, unsorted, as a multiset).
// f32 and u32 keys, every bit random (floats in [0, 1)), n = 2^20 .. 2^28, k = 100, 2^16 and 2^24 (below n). GB/s
// counts the input read once.
#include <cub/device/device_radix_sort.cuh>
#if __has_include(<cub/device/device_topk.cuh>)
#include <cub/device/device_topk.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>
#define PRIMS_BENCH_CUB_TOPK 1
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

template <class K>
struct Buffers {
  prims::DeviceBuffer<K> keys, sorted, prims_out, cub_out;
  explicit Buffers(size_t n, size_t max_k) : keys(n), sorted(n), prims_out(max_k), cub_out(max_k) {}
};

/// Whether a[0, k) and b[0, k) hold the same keys, in any order (bit patterns compared).
template <class K>
bool same_multiset(const K* a, const K* b, size_t k) {
  std::vector<K> x(k), y(k);
  prims::check(cudaMemcpy(x.data(), a, k * sizeof(K), cudaMemcpyDeviceToHost), "copy");
  prims::check(cudaMemcpy(y.data(), b, k * sizeof(K), cudaMemcpyDeviceToHost), "copy");
  std::vector<uint64_t> bx(k), by(k);
  for (size_t i = 0; i < k; ++i) {
    bx[i] = prims::bench::bits_of(x[i]);
    by[i] = prims::bench::bits_of(y[i]);
  }
  std::sort(bx.begin(), bx.end());
  std::sort(by.begin(), by.end());
  return bx == by;
}

template <class K>
void bench_case(prims::bench::Harness& harness, Buffers<K>& b, const char* type, size_t n, size_t k) {
  const std::string variant = "k = " + std::to_string(k);
  if (!harness.selected({"top_k", type, variant})) return;
  const cudaStream_t stream = harness.stream();
  auto prims_call = [&](void* temp, size_t& bytes, K* out, cudaStream_t s) {
    return prims::device::top_k_keys(temp, bytes, b.keys.data(), out, n, k, prims::Order::Descending, s);
  };
  auto sort_call = [&](void* temp, size_t& bytes, K* out, cudaStream_t s) {
    return cub::DeviceRadixSort::SortKeysDescending(temp, bytes, b.keys.data(), out, n, 0, 8 * int{sizeof(K)}, s);
  };
  size_t prims_bytes = 0, sort_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, nullptr, stream), "prims size");
  prims::check(sort_call(nullptr, sort_bytes, nullptr, stream), "cub sort size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), sort_temp(sort_bytes);
  // The reference: the first k keys of the whole input sorted by CUB (timed below as a contender too; its output
  // is rewritten by every run, identically).
  prims::DeviceBuffer<K> reference(k);
  prims::check(sort_call(sort_temp.data(), sort_bytes, b.sorted.data(), stream), "reference");
  prims::check(cudaMemcpyAsync(reference.data(), b.sorted.data(), k * sizeof(K), cudaMemcpyDeviceToDevice, stream),
               "reference");
  prims::check(cudaStreamSynchronize(stream), "reference");
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, b.prims_out.data(), s), "prims"); }},
  };
  contenders.back().check = [&, k] { return prims::bench::same_bits(b.prims_out.data(), reference.data(), k); };
  contenders.back().outputs = {prims::bench::output(b.prims_out.data(), k)};
#ifdef PRIMS_BENCH_CUB_TOPK
  const auto env = ::cuda::std::execution::env{
      ::cuda::stream_ref{stream}, ::cuda::execution::require(::cuda::execution::determinism::not_guaranteed,
                                                             ::cuda::execution::output_ordering::unsorted)};
  size_t topk_bytes = 0;
  prims::check(cub::DeviceTopK::MaxKeys(nullptr, topk_bytes, b.keys.data(), b.cub_out.data(), n, k, env),
               "cub top-k size");
  prims::DeviceBuffer<unsigned char> topk_temp(topk_bytes);
  contenders.push_back({"CUB top-k", [&](cudaStream_t s) {
                          const auto on = ::cuda::std::execution::env{
                              ::cuda::stream_ref{s},
                              ::cuda::execution::require(::cuda::execution::determinism::not_guaranteed,
                                                         ::cuda::execution::output_ordering::unsorted)};
                          prims::check(cub::DeviceTopK::MaxKeys(topk_temp.data(), topk_bytes, b.keys.data(),
                                                                b.cub_out.data(), n, k, on),
                                       "cub top-k");
                        }});
  contenders.back().check = [&, k] { return same_multiset(b.cub_out.data(), reference.data(), k); };
  contenders.back().outputs = {prims::bench::output(b.cub_out.data(), k)};
#endif
  contenders.push_back({"CUB sort", [&](cudaStream_t s) { prims::check(sort_call(sort_temp.data(), sort_bytes, b.sorted.data(), s), "cub sort"); }});
  contenders.back().check = [&, k] { return prims::bench::same_bits(b.sorted.data(), reference.data(), k); };
  contenders.back().outputs = {prims::bench::output(b.sorted.data(), n)};
  harness.run_case({"top_k", type, variant}, n, sizeof(K), contenders, [] {});
}

template <class K>
void bench_type(prims::bench::Harness& harness, const char* type) {
  const size_t max_n = size_t{1} << harness.max_log2();
  const size_t ks[] = {100, size_t{1} << 16, size_t{1} << 24};
  Buffers<K> buffers(max_n, std::min(max_n, ks[2]));
  prims::bench::generate(buffers.keys.data(), max_n, 31, [] __device__(uint64_t bits, size_t) {
    if constexpr (std::is_floating_point_v<K>) {
      return static_cast<K>(static_cast<double>(bits >> 40) * 0x1p-24);
    } else {
      return static_cast<K>(bits >> 32);
    }
  });
  prims::check(cudaDeviceSynchronize(), "inputs");
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    for (size_t k : ks) {
      if (k < n) bench_case(harness, buffers, type, n, k);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_top_k", 20, 28, 4);
    bench_type<float>(harness, "f32");
    bench_type<uint32_t>(harness, "u32");
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_top_k: error: {}\n", e.what());
    return 1;
  }
}
