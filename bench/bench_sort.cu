// bench_sort: prims::device::radix_sort_keys / radix_sort_pairs (the plain call, Auto: OneBlock up to its limit,
// else Onesweep, or for 8-byte keys Onesweep or Hybrid as the device chooses; and Onesweep, TileCounts and Hybrid
// explicitly) against thrust::sort, thrust::sort_by_key and cub::DeviceRadixSort, same data, same run.
// Keys u32, u64, i64, f32, f64, and u32/u32 and u64/u32 pairs, every power of two in [--min-log2, --max-log2]
// (default 2^16..2^28), over key bit entropies 1.0, 0.544 and 0.201 (each key the AND of 1, 3 and 5 random words: a
// bit is set with probability 1/2, 1/8, 1/32) and all-equal keys (entropy 0). Floats are uniform in (-1, 1), and
// also of random bits (finite: "float bits", spread evenly over the key order).
// Every timed run sorts fresh unsorted input: the harness's prepare step copies the pristine keys (and values)
// into the input buffers before each run, outside the timed region; Thrust sorts in place, in its own input copy.
// Every contender's output, CUB's and Thrust's too, is checked on its own after its last timed run: sorted, the
// input's keys (a fingerprint), and with values (the input indices) each value pointing at its key, all different,
// equal keys in input order. GB/s counts each key (and value) read once and written once.
#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "harness.cuh"
#include "prims/device/radix_sort.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::Distribution;
using prims::bench::generate_keys;
using prims::bench::kDistributions;
using prims::device::RadixSortAlgorithm;

template <class K>
const char* type_name(bool pairs) {
  if constexpr (std::is_same_v<K, uint32_t>) return pairs ? "u32/u32" : "u32";
  if constexpr (std::is_same_v<K, uint64_t>) return pairs ? "u64/u32" : "u64";
  if constexpr (std::is_same_v<K, int64_t>) return "i64";
  if constexpr (std::is_same_v<K, double>) return "f64";
  return "f32";
}

/// The buffers of one key type at the largest size: pristine input, the input every contender reads, Thrust's
/// in-place copy, one output per contender, and the same for values (pairs only).
template <class K>
struct Buffers {
  prims::DeviceBuffer<K> pristine, in, thrust_keys, auto_out, onesweep_out, tile_counts_out, hybrid_out, cub_out;
  prims::DeviceBuffer<uint32_t> values, values_in, thrust_values, auto_values, onesweep_values, tile_counts_values,
      hybrid_values, cub_values;

  Buffers(size_t n, bool pairs)
      : pristine(n), in(n), thrust_keys(n), auto_out(n), onesweep_out(n), tile_counts_out(n), hybrid_out(n),
        cub_out(n), values(pairs ? n : 0), values_in(pairs ? n : 0), thrust_values(pairs ? n : 0),
        auto_values(pairs ? n : 0), onesweep_values(pairs ? n : 0), tile_counts_values(pairs ? n : 0),
        hybrid_values(pairs ? n : 0), cub_values(pairs ? n : 0) {}
};

template <class K>
void bench_case(prims::bench::Harness& harness, Buffers<K>& b, size_t n, bool pairs, const char* variant) {
  if (!harness.selected({"sort", type_name<K>(pairs), variant})) return;
  const cudaStream_t stream = harness.stream();
  auto prims_sort = [&](auto algorithm, void* temp, size_t& bytes, K* keys_out, uint32_t* values_out,
                        cudaStream_t s) {
    constexpr RadixSortAlgorithm kAlgorithm = decltype(algorithm)::value;
    if (pairs) {
      return prims::device::radix_sort_pairs<kAlgorithm>(temp, bytes, b.in.data(), keys_out, b.values_in.data(),
                                                         values_out, n, prims::device::Order::Ascending, 0,
                                                         8 * int{sizeof(K)}, s);
    }
    return prims::device::radix_sort_keys<kAlgorithm>(temp, bytes, b.in.data(), keys_out, n,
                                                      prims::device::Order::Ascending, 0, 8 * int{sizeof(K)}, s);
  };
  using Auto = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::Auto>;
  using Onesweep = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::Onesweep>;
  using TileCounts = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::TileCounts>;
  using Hybrid = std::integral_constant<RadixSortAlgorithm, RadixSortAlgorithm::Hybrid>;
  auto cub_sort = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (pairs) {
      return cub::DeviceRadixSort::SortPairs(temp, bytes, b.in.data(), b.cub_out.data(), b.values_in.data(),
                                             b.cub_values.data(), n, 0, 8 * int{sizeof(K)}, s);
    }
    return cub::DeviceRadixSort::SortKeys(temp, bytes, b.in.data(), b.cub_out.data(), n, 0, 8 * int{sizeof(K)}, s);
  };

  size_t auto_bytes = 0, onesweep_bytes = 0, tile_counts_bytes = 0, hybrid_bytes = 0, cub_bytes = 0;
  prims::check(prims_sort(Auto{}, nullptr, auto_bytes, nullptr, nullptr, stream), "prims size");
  prims::check(prims_sort(Onesweep{}, nullptr, onesweep_bytes, nullptr, nullptr, stream), "prims size");
  prims::check(prims_sort(TileCounts{}, nullptr, tile_counts_bytes, nullptr, nullptr, stream), "prims size");
  prims::check(prims_sort(Hybrid{}, nullptr, hybrid_bytes, nullptr, nullptr, stream), "prims size");
  prims::check(cub_sort(nullptr, cub_bytes, stream), "cub size");
  prims::DeviceBuffer<unsigned char> auto_temp(auto_bytes), onesweep_temp(onesweep_bytes),
      tile_counts_temp(tile_counts_bytes), hybrid_temp(hybrid_bytes), cub_temp(cub_bytes);

  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) {
         prims::check(prims_sort(Auto{}, auto_temp.data(), auto_bytes, b.auto_out.data(), b.auto_values.data(), s),
                      "prims Auto");
       }},
      {"Onesweep", [&](cudaStream_t s) {
         prims::check(prims_sort(Onesweep{}, onesweep_temp.data(), onesweep_bytes, b.onesweep_out.data(),
                                 b.onesweep_values.data(), s),
                      "prims Onesweep");
       }},
      {"TileCounts", [&](cudaStream_t s) {
         prims::check(prims_sort(TileCounts{}, tile_counts_temp.data(), tile_counts_bytes, b.tile_counts_out.data(),
                                 b.tile_counts_values.data(), s),
                      "prims TileCounts");
       }},
      {"Hybrid", [&](cudaStream_t s) {
         prims::check(prims_sort(Hybrid{}, hybrid_temp.data(), hybrid_bytes, b.hybrid_out.data(),
                                 b.hybrid_values.data(), s),
                      "prims Hybrid");
       }},
      {"CUB", [&](cudaStream_t s) { prims::check(cub_sort(cub_temp.data(), cub_bytes, s), "cub"); }},
      {"Thrust", [&](cudaStream_t s) {
         if (pairs) {
           thrust::sort_by_key(harness.thrust_on(s), b.thrust_keys.data(), b.thrust_keys.data() + n,
                               b.thrust_values.data());
         } else {
           thrust::sort(harness.thrust_on(s), b.thrust_keys.data(), b.thrust_keys.data() + n);
         }
       }},
  };
  auto sorted = [&](const K* keys, const uint32_t* values) {
    return prims::bench::is_sorted_permutation(b.pristine.data(), keys, pairs ? values : nullptr, n, n, true);
  };
  auto check_output = [&](Contender& contender, K* keys, uint32_t* values) {
    contender.check = [=] { return sorted(keys, values); };
    contender.outputs = {prims::bench::output(keys, n)};
    if (pairs) contender.outputs.push_back(prims::bench::output(values, n));
  };
  check_output(contenders[0], b.auto_out.data(), b.auto_values.data());
  check_output(contenders[1], b.onesweep_out.data(), b.onesweep_values.data());
  check_output(contenders[2], b.tile_counts_out.data(), b.tile_counts_values.data());
  check_output(contenders[3], b.hybrid_out.data(), b.hybrid_values.data());
  check_output(contenders[4], b.cub_out.data(), b.cub_values.data());
  // Thrust sorts its input copy in place: nothing to poison.
  contenders[5].check = [&] { return sorted(b.thrust_keys.data(), b.thrust_values.data()); };

  auto prepare = [&] {
    prims::bench::restore_inputs(b.in.data(), b.thrust_keys.data(), b.pristine.data(), b.values_in.data(),
                                 b.thrust_values.data(), b.values.data(), n, pairs, stream);
  };

  const double bytes_per_item = 2.0 * (sizeof(K) + (pairs ? sizeof(uint32_t) : 0));
  harness.run_case({"sort", type_name<K>(pairs), variant}, n, bytes_per_item, contenders, prepare);
}

template <class K>
void bench_type(prims::bench::Harness& harness, bool pairs) {
  std::vector<Distribution> distributions(std::begin(kDistributions), std::end(kDistributions));
  if (std::is_floating_point_v<K>) distributions.push_back(prims::bench::kFloatBits);
  const bool any_selected =
      std::any_of(distributions.begin(), distributions.end(),
                  [&](const Distribution& d) { return harness.selected({"sort", type_name<K>(pairs), d.name}); });
  if (!any_selected) return;
  const size_t max_n = size_t{1} << harness.max_log2();
  Buffers<K> buffers(max_n, pairs);
  if (pairs) {
    prims::bench::generate(buffers.values.data(), max_n, 5,
                           [] __device__(uint64_t, size_t i) { return static_cast<uint32_t>(i); });
  }
  for (const Distribution& distribution : distributions) {
    generate_keys(buffers.pristine.data(), max_n, distribution.words);
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      bench_case(harness, buffers, size_t{1} << log2n, pairs, distribution.name);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_sort", 16, 28);
    bench_type<uint32_t>(harness, false);
    bench_type<uint32_t>(harness, true);
    bench_type<uint64_t>(harness, false);
    bench_type<uint64_t>(harness, true);
    bench_type<int64_t>(harness, false);
    bench_type<float>(harness, false);
    bench_type<double>(harness, false);
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_sort: error: {}\n", e.what());
    return 1;
  }
}
