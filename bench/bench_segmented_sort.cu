// bench_segmented_sort: prims::device::segmented_radix_sort_keys / segmented_radix_sort_pairs against
// cub::DeviceSegmentedSort::SortKeys / SortPairs and cub::DeviceSegmentedRadixSort::SortKeys / SortPairs, same data,
// same run, contenders interleaved (bench/harness.cuh).
// Cases (u32 keys of entropy 1.0, and u32/u32 pairs whose values are the input index), every segment the same size,
// back to back (the offsets array serves as begins and, one further, as ends):
//   2^20 segments of 64 keys, 2^8 segments of 2^20 keys, and a grid of segment sizes 16, 32, 256, 4096 and 65536
//   at 2^26 keys in all; and u64 and f64 keys (entropy 1.0) in the three shapes of the smallest segments, where
//   the sort keeps a word per key whose width depends on the key's.
// No contender writes its input, so every run reads the same pristine keys (no prepare step); every check verifies
// the keys, values and offsets against their fingerprints too. Every contender's output is checked on its own after
// its last timed run: each segment sorted and holding the input segment's keys (a fingerprint), and with values (the
// input indices) each value pointing at an input key of its segment with the output key's bits, all different, and
// equal keys in input order, except for DeviceSegmentedSort::SortPairs, which CUB does not promise to be stable.
// GB/s counts each key (and value) read once and written once.
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/segmented_radix_sort.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::output;

/// One case: num_segments segments of segment_items keys each.
struct Shape {
  int log2_segments;
  int log2_segment_items;
};

constexpr Shape kShapes[] = {{20, 6},  {8, 20},  {22, 4},  {21, 5},  {18, 8},
                              {16, 10}, {14, 12}, {12, 14}, {10, 16}, {4, 24}};
/// The shapes for 8-byte keys.
constexpr Shape kWideKeyShapes[] = {{20, 6}, {22, 4}, {21, 5}, {14, 11}, {12, 13}};

template <class K>
const char* type_name();
template <>
const char* type_name<uint32_t>() { return "u32"; }
template <>
const char* type_name<uint64_t>() { return "u64"; }
template <>
const char* type_name<double>() { return "f64"; }

/// The buffers at the largest size: pristine keys and values (the indices) with their fingerprints, and one output
/// per contender.
template <class K>
struct Buffers {
  prims::DeviceBuffer<K> keys, prims_keys, sort_keys, radix_keys;
  prims::DeviceBuffer<uint32_t> values, prims_values, sort_values, radix_values;
  prims::DeviceBuffer<int> offsets;
  uint64_t keys_fingerprint = 0;
  uint64_t values_fingerprint = 0;

  Buffers(size_t n, size_t max_segments)
      : keys(n), prims_keys(n), sort_keys(n), radix_keys(n), values(n), prims_values(n), sort_values(n),
        radix_values(n), offsets(max_segments + 1) {}
};

__global__ void offsets_kernel(int* offsets, size_t num_segments, int segment_items) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i <= num_segments;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    offsets[i] = static_cast<int>(i) * segment_items;
  }
}

std::string variant_name(const Shape& shape) {
  return "2^" + std::to_string(shape.log2_segments) + " x " +
         (shape.log2_segment_items <= 12 ? std::to_string(1 << shape.log2_segment_items)
                                         : "2^" + std::to_string(shape.log2_segment_items));
}

template <class K>
void bench_case(prims::bench::Harness& harness, Buffers<K>& b, const Shape& shape, bool pairs) {
  const std::string variant = variant_name(shape);
  const std::string type = pairs ? std::string(type_name<K>()) + "/u32" : type_name<K>();
  if (!harness.selected({"segsort", type, variant})) return;
  const size_t num_segments = size_t{1} << shape.log2_segments;
  const int segment_items = 1 << shape.log2_segment_items;
  const size_t n = num_segments * segment_items;
  offsets_kernel<<<1024, 256>>>(b.offsets.data(), num_segments, segment_items);
  prims::check(cudaGetLastError(), "offsets_kernel");
  const int* begins = b.offsets.data();
  const int* ends = b.offsets.data() + 1;
  const auto segments = static_cast<int64_t>(num_segments);
  const auto items = static_cast<int64_t>(n);
  constexpr int kBits = 8 * sizeof(K);

  auto prims_sort = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (pairs) {
      return prims::device::segmented_radix_sort_pairs(temp, bytes, b.keys.data(), b.prims_keys.data(),
                                                       b.values.data(), b.prims_values.data(), n, num_segments,
                                                       begins, ends, prims::device::Order::Ascending, 0, kBits, s);
    }
    return prims::device::segmented_radix_sort_keys(temp, bytes, b.keys.data(), b.prims_keys.data(), n,
                                                    num_segments, begins, ends, prims::device::Order::Ascending, 0,
                                                    kBits, s);
  };
  auto cub_sort = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (pairs) {
      return cub::DeviceSegmentedSort::SortPairs(temp, bytes, b.keys.data(), b.sort_keys.data(), b.values.data(),
                                                 b.sort_values.data(), items, segments, begins, ends, s);
    }
    return cub::DeviceSegmentedSort::SortKeys(temp, bytes, b.keys.data(), b.sort_keys.data(), items, segments,
                                              begins, ends, s);
  };
  auto cub_radix = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (pairs) {
      return cub::DeviceSegmentedRadixSort::SortPairs(temp, bytes, b.keys.data(), b.radix_keys.data(),
                                                      b.values.data(), b.radix_values.data(), items, segments,
                                                      begins, ends, 0, kBits, s);
    }
    return cub::DeviceSegmentedRadixSort::SortKeys(temp, bytes, b.keys.data(), b.radix_keys.data(), items,
                                                   segments, begins, ends, 0, kBits, s);
  };
  const cudaStream_t stream = harness.stream();
  size_t prims_bytes = 0, sort_bytes = 0, radix_bytes = 0;
  prims::check(prims_sort(nullptr, prims_bytes, stream), "prims size");
  prims::check(cub_sort(nullptr, sort_bytes, stream), "cub DeviceSegmentedSort size");
  prims::check(cub_radix(nullptr, radix_bytes, stream), "cub DeviceSegmentedRadixSort size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), sort_temp(sort_bytes), radix_temp(radix_bytes);

  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_sort(prims_temp.data(), prims_bytes, s), "prims"); }},
      {"CUB SegSort",
       [&](cudaStream_t s) { prims::check(cub_sort(sort_temp.data(), sort_bytes, s), "cub DeviceSegmentedSort"); }},
      {"CUB SegRadix",
       [&](cudaStream_t s) {
         prims::check(cub_radix(radix_temp.data(), radix_bytes, s), "cub DeviceSegmentedRadixSort");
       }},
  };
  const uint64_t offsets_fingerprint = prims::bench::fingerprint(b.offsets.data(), num_segments + 1);
  auto inputs_intact = [&] {
    return prims::bench::fingerprint(b.keys.data(), b.keys.size()) == b.keys_fingerprint &&
           prims::bench::fingerprint(b.values.data(), b.values.size()) == b.values_fingerprint &&
           prims::bench::fingerprint(b.offsets.data(), num_segments + 1) == offsets_fingerprint;
  };
  const K* in_keys = b.keys.data();
  auto check_output = [&](Contender& contender, K* keys, uint32_t* values, bool stable) {
    contender.check = [=] {
      return prims::bench::is_sorted_permutation(in_keys, keys, pairs ? values : nullptr, n, segment_items, stable) &&
             inputs_intact();
    };
    contender.outputs = {output(keys, n)};
    if (pairs) contender.outputs.push_back(output(values, n));
  };
  check_output(contenders[0], b.prims_keys.data(), b.prims_values.data(), true);
  check_output(contenders[1], b.sort_keys.data(), b.sort_values.data(), false);
  check_output(contenders[2], b.radix_keys.data(), b.radix_values.data(), true);

  const double bytes_per_item = 2.0 * (sizeof(K) + (pairs ? sizeof(uint32_t) : 0));
  harness.run_case({"segsort", type, variant}, n, bytes_per_item, contenders);
}

/// Every case of key type K: the shapes given, keys only and (if asked) with u32 values.
template <class K, size_t SHAPES>
void bench_type(prims::bench::Harness& harness, const Shape (&shapes)[SHAPES], std::initializer_list<bool> pairs) {
  size_t max_n = 0, max_segments = 0;
  for (const Shape& shape : shapes) {
    max_n = std::max(max_n, size_t{1} << (shape.log2_segments + shape.log2_segment_items));
    max_segments = std::max(max_segments, size_t{1} << shape.log2_segments);
  }
  Buffers<K> buffers(max_n, max_segments);
  prims::bench::generate_keys(buffers.keys.data(), max_n, 1);
  prims::bench::generate(buffers.values.data(), max_n, 5,
                         [] __device__(uint64_t, size_t i) { return static_cast<uint32_t>(i); });
  buffers.keys_fingerprint = prims::bench::fingerprint(buffers.keys.data(), max_n);
  buffers.values_fingerprint = prims::bench::fingerprint(buffers.values.data(), max_n);
  for (bool with_values : pairs) {
    for (const Shape& shape : shapes) bench_case(harness, buffers, shape, with_values);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_segmented_sort");
    bench_type<uint32_t>(harness, kShapes, {false, true});
    bench_type<uint64_t>(harness, kWideKeyShapes, {false});
    bench_type<double>(harness, kWideKeyShapes, {false});
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_segmented_sort: error: {}\n", e.what());
    return 1;
  }
}
