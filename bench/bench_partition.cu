// bench_partition: prims::device::radix_partition_keys / radix_partition_pairs (256 buckets by the top byte; the
// plain call, and each pass algorithm explicitly)
// against the same digit done by cub::DeviceRadixSort with begin_bit = 24, end_bit = 32 (one pass of CUB's sort:
// the same stable partition) and thrust::stable_sort_by_key on the top byte (Thrust's way to a stable partition
// into many buckets), same data, same run. Keys u32 and u32/u32 pairs, 2^16..2^28, key bit entropy 1.0 and 0.201.
// Every contender's keys (and values), CUB's and Thrust's too, are compared bitwise with a reference partition made
// before the case: CUB's one pass over the keys with their indices as values, itself checked (ordered by top byte,
// each index pointing at its key, all different, input order within a bucket). prims' bucket offsets are checked
// against the reference keys. GB/s counts what a partition must move: keys (and values) read once and written
// once, plus the keys read once more for the histogram.
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.cuh"
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

/// The buffers at the largest size: pristine keys and their indices as values, the inputs, one output per
/// contender, and the reference partition.
struct Buffers {
  prims::DeviceBuffer<uint32_t> pristine, in, default_out, onesweep_out, tile_counts_out, cub_out, thrust_keys, thrust_digits;
  prims::DeviceBuffer<uint32_t> values, values_in, default_values, onesweep_values, tile_counts_values, cub_values, thrust_values;
  prims::DeviceBuffer<size_t> default_offsets, onesweep_offsets, tile_counts_offsets;
  prims::DeviceBuffer<uint32_t> reference_keys, reference_values;

  Buffers(size_t n, bool pairs)
      : pristine(n), in(n), default_out(n), onesweep_out(n), tile_counts_out(n), cub_out(n), thrust_keys(n), thrust_digits(n),
        values(n), values_in(pairs ? n : 0), default_values(pairs ? n : 0),
        onesweep_values(pairs ? n : 0),
        tile_counts_values(pairs ? n : 0), cub_values(pairs ? n : 0), thrust_values(pairs ? n : 0),
        default_offsets(kBuckets + 1), onesweep_offsets(kBuckets + 1), tile_counts_offsets(kBuckets + 1),
        reference_keys(n), reference_values(n) {}
};

/// Partitions the first n pristine keys, with their indices, into the reference buffers and checks the result.
void make_reference(Buffers& b, size_t n) {
  auto partition = [&](void* temp, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, b.pristine.data(), b.reference_keys.data(), b.values.data(),
                                           b.reference_values.data(), n, kBeginBit, kEndBit);
  };
  size_t bytes = 0;
  prims::check(partition(nullptr, bytes), "reference size");
  prims::DeviceBuffer<unsigned char> temp(bytes);
  prims::check(partition(temp.data(), bytes), "reference partition");
  if (!prims::bench::is_sorted_permutation(b.pristine.data(), b.reference_keys.data(), b.reference_values.data(), n,
                                           n, true, TopByte{})) {
    throw std::runtime_error("the reference partition is not the stable partition of the keys");
  }
}

/// Whether offsets[0..kBuckets] are the bucket offsets of the partitioned keys[0..n): the ranges run from 0 to n in
/// order, and every key lies in its bucket's.
bool are_bucket_offsets(const size_t* offsets, const uint32_t* keys, size_t n) {
  std::vector<size_t> host(kBuckets + 1);
  prims::check(cudaMemcpy(host.data(), offsets, host.size() * sizeof(size_t), cudaMemcpyDeviceToHost),
               "reading bucket offsets");
  if (host.front() != 0 || host.back() != n || !std::is_sorted(host.begin(), host.end())) return false;
  return prims::bench::count_if(n, [=] __device__(size_t o) {
           const uint32_t bucket = TopByte{}(keys[o]);
           return o < offsets[bucket] || o >= offsets[bucket + 1];
         }) == 0;
}

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
         thrust::copy(harness.thrust_on(s), digits, digits + n, b.thrust_digits.data());
         if (pairs) {
           const auto items = thrust::make_zip_iterator(b.thrust_keys.data(), b.thrust_values.data());
           thrust::stable_sort_by_key(harness.thrust_on(s), b.thrust_digits.data(), b.thrust_digits.data() + n,
                                      items);
         } else {
           thrust::stable_sort_by_key(harness.thrust_on(s), b.thrust_digits.data(), b.thrust_digits.data() + n,
                                      b.thrust_keys.data());
         }
       }},
  };
  auto matches_reference = [&](const uint32_t* keys, const uint32_t* values) {
    return prims::bench::same_bits(keys, b.reference_keys.data(), n) &&
           (!pairs || prims::bench::same_bits(values, b.reference_values.data(), n));
  };
  // prims: keys, values and bucket offsets.
  const uint32_t* reference_keys = b.reference_keys.data();
  auto check_prims = [&](Contender& contender, uint32_t* keys, uint32_t* values, size_t* offsets) {
    contender.check = [=] {
      return matches_reference(keys, values) && are_bucket_offsets(offsets, reference_keys, n);
    };
    contender.outputs = {prims::bench::output(keys, n), prims::bench::output(offsets, kBuckets + 1)};
    if (pairs) contender.outputs.push_back(prims::bench::output(values, n));
  };
  check_prims(contenders[0], b.default_out.data(), b.default_values.data(), b.default_offsets.data());
  check_prims(contenders[1], b.onesweep_out.data(), b.onesweep_values.data(), b.onesweep_offsets.data());
  check_prims(contenders[2], b.tile_counts_out.data(), b.tile_counts_values.data(), b.tile_counts_offsets.data());
  contenders[3].check = [&] { return matches_reference(b.cub_out.data(), b.cub_values.data()); };
  contenders[3].outputs = {prims::bench::output(b.cub_out.data(), n)};
  if (pairs) contenders[3].outputs.push_back(prims::bench::output(b.cub_values.data(), n));
  // Thrust sorts its copy of the input in place: nothing to poison.
  contenders[4].check = [&] { return matches_reference(b.thrust_keys.data(), b.thrust_values.data()); };

  auto prepare = [&] {
    prims::bench::restore_inputs(b.in.data(), b.thrust_keys.data(), b.pristine.data(), b.values_in.data(),
                                 b.thrust_values.data(), b.values.data(), n, pairs, stream);
  };

  make_reference(b, n);
  const double bytes_per_item = 3.0 * sizeof(uint32_t) + (pairs ? 2.0 * sizeof(uint32_t) : 0.0);
  harness.run_case({"partition", type, variant}, n, bytes_per_item, contenders, prepare);
}

void bench_type(prims::bench::Harness& harness, bool pairs) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Buffers buffers(max_n, pairs);
  prims::bench::generate(buffers.values.data(), max_n, 5,
                         [] __device__(uint64_t, size_t i) { return static_cast<uint32_t>(i); });
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
