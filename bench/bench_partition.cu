// bench_partition: prims::device::radix_partition_keys / radix_partition_pairs (256 buckets by the top byte; the
// plain call, and each pass algorithm explicitly)
// against the same digit done by cub::DeviceRadixSort with begin_bit = 24, end_bit = 32 (one pass of CUB's sort:
// the same stable partition) and thrust::stable_sort_by_key on the top byte (Thrust's way to a stable partition
// into many buckets), same data, same run. Keys u32 and u32/u32 pairs, 2^16..2^28, key bit entropy 1.0 and 0.201.
// Every output is compared bitwise with CUB's. GB/s counts what a partition must move: keys (and values) read
// once and written once, plus the keys read once more for the histogram.
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sort.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "harness.cuh"
#include "prims/device/radix_partition.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::Distribution;
using prims::device::RadixSortAlgorithm;

constexpr int kBeginBit = 24;
constexpr int kEndBit = 32;
constexpr int kBuckets = 1 << (kEndBit - kBeginBit);

struct TopByte {
  __host__ __device__ uint32_t operator()(uint32_t key) const { return key >> kBeginBit; }
};

/// Marks the plain partition call, which picks its algorithm.
struct Default {};

struct Buffers {
  prims::DeviceBuffer<uint32_t> pristine, in, default_out, onesweep_out, tile_counts_out, cub_out, thrust_keys, thrust_digits;
  prims::DeviceBuffer<uint32_t> values, values_in, default_values, onesweep_values, tile_counts_values, cub_values, thrust_values;
  prims::DeviceBuffer<size_t> default_offsets, onesweep_offsets, tile_counts_offsets;

  Buffers(size_t n, bool pairs)
      : pristine(n), in(n), default_out(n), onesweep_out(n), tile_counts_out(n), cub_out(n), thrust_keys(n), thrust_digits(n),
        values(pairs ? n : 0), values_in(pairs ? n : 0), default_values(pairs ? n : 0),
        onesweep_values(pairs ? n : 0),
        tile_counts_values(pairs ? n : 0), cub_values(pairs ? n : 0), thrust_values(n),
        default_offsets(kBuckets + 1), onesweep_offsets(kBuckets + 1), tile_counts_offsets(kBuckets + 1) {}
};

void bench_case(prims::bench::Harness& harness, Buffers& b, size_t n, bool pairs, const char* variant) {
  const char* type = pairs ? "u32/u32" : "u32";
  if (!harness.selected({"partition", type, variant})) return;
  const cudaStream_t stream = harness.stream();
  // The plain call (it picks the algorithm by n), or one algorithm explicitly.
  auto partition = [&](auto algorithm, void* temp, size_t& bytes, uint32_t* keys_out, uint32_t* values_out,
                       size_t* offsets, cudaStream_t s) {
    if constexpr (std::is_same_v<decltype(algorithm), Default>) {
      if (pairs) {
        return prims::device::radix_partition_pairs(temp, bytes, b.in.data(), keys_out, b.values_in.data(),
                                                    values_out, n, offsets, kBeginBit, kEndBit,
                                                    prims::device::Order::Ascending, s);
      }
      return prims::device::radix_partition_keys(temp, bytes, b.in.data(), keys_out, n, offsets, kBeginBit, kEndBit,
                                                 prims::device::Order::Ascending, s);
    } else {
      constexpr RadixSortAlgorithm kAlgorithm = decltype(algorithm)::value;
      if (pairs) {
        return prims::device::radix_partition_pairs<kAlgorithm>(temp, bytes, b.in.data(), keys_out, b.values_in.data(),
                                                                values_out, n, offsets, kBeginBit, kEndBit,
                                                                prims::device::Order::Ascending, s);
      }
      return prims::device::radix_partition_keys<kAlgorithm>(temp, bytes, b.in.data(), keys_out, n, offsets, kBeginBit,
                                                             kEndBit, prims::device::Order::Ascending, s);
    }
  };
  using Onesweep = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::Onesweep>;
  using TileCounts = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::TileCounts>;
  auto cub_pass = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (pairs) {
      return cub::DeviceRadixSort::SortPairs(temp, bytes, b.in.data(), b.cub_out.data(), b.values_in.data(),
                                             b.cub_values.data(), n, kBeginBit, kEndBit, s);
    }
    return cub::DeviceRadixSort::SortKeys(temp, bytes, b.in.data(), b.cub_out.data(), n, kBeginBit, kEndBit, s);
  };
  size_t default_bytes = 0, onesweep_bytes = 0, tile_counts_bytes = 0, cub_bytes = 0;
  prims::check(partition(Default{}, nullptr, default_bytes, nullptr, nullptr, nullptr, stream), "prims size");
  prims::check(partition(Onesweep{}, nullptr, onesweep_bytes, nullptr, nullptr, nullptr, stream), "prims size");
  prims::check(partition(TileCounts{}, nullptr, tile_counts_bytes, nullptr, nullptr, nullptr, stream), "prims size");
  prims::check(cub_pass(nullptr, cub_bytes, stream), "cub size");
  prims::DeviceBuffer<unsigned char> default_temp(default_bytes), onesweep_temp(onesweep_bytes), tile_counts_temp(tile_counts_bytes),
      cub_temp(cub_bytes);

  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) {
         prims::check(partition(Default{}, default_temp.data(), default_bytes, b.default_out.data(),
                                b.default_values.data(), b.default_offsets.data(), s),
                      "prims");
       }},
      {"Onesweep", [&](cudaStream_t s) {
         prims::check(partition(Onesweep{}, onesweep_temp.data(), onesweep_bytes, b.onesweep_out.data(),
                                b.onesweep_values.data(), b.onesweep_offsets.data(), s),
                      "prims Onesweep");
       }},
      {"TileCounts", [&](cudaStream_t s) {
         prims::check(partition(TileCounts{}, tile_counts_temp.data(), tile_counts_bytes, b.tile_counts_out.data(),
                                b.tile_counts_values.data(), b.tile_counts_offsets.data(), s),
                      "prims TileCounts");
       }},
      {"CUB", [&](cudaStream_t s) { prims::check(cub_pass(cub_temp.data(), cub_bytes, s), "cub"); }},
      {"Thrust", [&](cudaStream_t s) {
         // Sorts (top byte, key[, value]) by the top byte, stably: the keys (and values) ride along as values.
         const auto digits = thrust::make_transform_iterator(b.in.data(), TopByte{});
         thrust::copy(thrust::cuda::par.on(s), digits, digits + n, b.thrust_digits.data());
         if (pairs) {
           const auto items = thrust::make_zip_iterator(b.thrust_keys.data(), b.thrust_values.data());
           thrust::stable_sort_by_key(thrust::cuda::par.on(s), b.thrust_digits.data(), b.thrust_digits.data() + n,
                                      items);
         } else {
           thrust::stable_sort_by_key(thrust::cuda::par.on(s), b.thrust_digits.data(), b.thrust_digits.data() + n,
                                      b.thrust_keys.data());
         }
       }},
  };
  auto agrees_with_cub = [&](const uint32_t* keys, const uint32_t* values) {
    return prims::bench::same_bits(keys, b.cub_out.data(), n) &&
           (!pairs || prims::bench::same_bits(values, b.cub_values.data(), n));
  };
  contenders[0].check = [&] { return agrees_with_cub(b.default_out.data(), b.default_values.data()); };
  contenders[1].check = [&] { return agrees_with_cub(b.onesweep_out.data(), b.onesweep_values.data()); };
  contenders[2].check = [&] { return agrees_with_cub(b.tile_counts_out.data(), b.tile_counts_values.data()); };
  contenders[4].check = [&] { return agrees_with_cub(b.thrust_keys.data(), b.thrust_values.data()); };

  auto prepare = [&] {
    prims::bench::restore_inputs(b.in.data(), b.thrust_keys.data(), b.pristine.data(), b.values_in.data(),
                                 b.thrust_values.data(), b.values.data(), n, pairs, stream);
  };

  const double bytes_per_item = 3.0 * sizeof(uint32_t) + (pairs ? 2.0 * sizeof(uint32_t) : 0.0);
  harness.run_case({"partition", type, variant}, n, bytes_per_item, contenders, prepare);
}

void bench_type(prims::bench::Harness& harness, bool pairs) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Buffers buffers(max_n, pairs);
  if (pairs) {
    prims::bench::generate(buffers.values.data(), max_n, 5,
                           [] __device__(uint64_t, size_t i) { return static_cast<uint32_t>(i); });
  }
  for (const Distribution& distribution : {Distribution{"entropy 1.0", 1}, Distribution{"entropy 0.201", 5}}) {
    prims::bench::generate_keys(buffers.pristine.data(), max_n, distribution.words);
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      bench_case(harness, buffers, size_t{1} << log2n, pairs, distribution.name);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_partition", 16, 28, 2);
    bench_type(harness, false);
    bench_type(harness, true);
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_partition: error: {}\n", e.what());
    return 1;
  }
}
