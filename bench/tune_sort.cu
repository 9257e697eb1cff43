// tune_sort: the tuning sweeps behind the Onesweep policy in device/detail/radix_sort_onesweep.cuh (cases named
// "tune_sort") and the hybrid policy in device/detail/radix_sort_hybrid.cuh ("tune_hybrid", against the shipped
// Onesweep). Sorts random keys (u32, u32/u32 pairs, f32, u64) with several policies against cub::DeviceRadixSort,
// same data, same run, fresh input before every timed run; the ratio columns are each policy's time over CUB's
// (below 1: faster). Every output, CUB's too, is checked after the contender's last timed run: sorted, the input's
// keys, and with values (the input indices) each pointing at its key, all different, equal keys in input order.
#include <cub/device/device_radix_sort.cuh>

#include <string>
#include <type_traits>
#include <vector>

#include "harness.cuh"
#include "prims/device/detail/radix_sort_hybrid.cuh"
#include "prims/device/radix_sort.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::output;
namespace detail = prims::detail;

/// The shipped policy with the pass kernel's block shape, blocks an SM and (for pairs) values' fetch replaced.
template <int THREADS, int ITEMS, int BLOCKS_PER_SM = 2,
          detail::OnesweepValuesFetch FETCH = detail::OnesweepValuesFetch::Registers>
struct Variant {
  template <class K, class V>
  struct Policy : detail::TuningSm90::Onesweep<K, V> {
    static constexpr int block_threads = THREADS;
    static constexpr int items_per_thread = ITEMS;
    static constexpr int min_blocks_per_sm = BLOCKS_PER_SM;
    static constexpr detail::OnesweepValuesFetch values_fetch = FETCH;
  };
  static std::string name() {
    const char* fetch = FETCH == detail::OnesweepValuesFetch::L2BeforeLookBack ? "L2l" : "";
    return std::to_string(THREADS) + "x" + std::to_string(ITEMS) + "b" + std::to_string(BLOCKS_PER_SM) + fetch;
  }
  template <class K, class V>
  static cudaError_t sort(void* temp, size_t& bytes, detail::PassBuffers<K, V> io, size_t n, cudaStream_t s) {
    return detail::radix::onesweep_sort<detail::TuningSm90, K, V, Policy<K, V>>(
        temp, bytes, io, n, prims::Order::Ascending, 0, 8 * int{sizeof(K)}, nullptr, s);
  }
};

/// Onesweep as shipped (its policy chosen by n), the hybrid's baseline.
struct ShippedOnesweep {
  static std::string name() { return "Onesweep"; }
  template <class K, class V>
  static cudaError_t sort(void* temp, size_t& bytes, detail::PassBuffers<K, V> io, size_t n, cudaStream_t s) {
    return detail::radix::onesweep_sort_for_size<detail::TuningSm90>(temp, bytes, io, n, prims::Order::Ascending, 0,
                                                                     8 * int{sizeof(K)}, nullptr, s);
  }
};

/// The hybrid sort with buckets of 2^BUCKET_LOG2 keys on average, sorted on the whole range or the low bits only.
template <int BUCKET_LOG2, bool WHOLE_RANGE = true, int MAX_MSD_BITS = 24>
struct Hybrid {
  template <class K, class V>
  struct Policy : detail::TuningSm90::Hybrid<K, V> {
    static constexpr int bucket_items_log2 = BUCKET_LOG2;
    static constexpr bool buckets_on_whole_range = WHOLE_RANGE;
    static constexpr int max_msd_bits = MAX_MSD_BITS;
  };
  static std::string name() {
    return "hyb" + std::to_string(BUCKET_LOG2) + (WHOLE_RANGE ? "w" : "l") + std::to_string(MAX_MSD_BITS);
  }
  template <class K, class V>
  static cudaError_t sort(void* temp, size_t& bytes, detail::PassBuffers<K, V> io, size_t n, cudaStream_t s) {
    return detail::radix::hybrid_sort<detail::TuningSm90, K, V, Policy<K, V>>(
        temp, bytes, io, n, prims::Order::Ascending, 0, 8 * int{sizeof(K)}, s);
  }
};

template <class K, class V>
struct Buffers {
  prims::DeviceBuffer<K> pristine, in, out, cub_out;
  prims::DeviceBuffer<V> values, values_in, values_out, cub_values;
  std::vector<prims::DeviceBuffer<unsigned char>> temps;
};

template <class K, class V, class... Variants>
void sweep(prims::bench::Harness& harness, const char* bench, const char* type, const char* distribution,
           Buffers<K, V>& b, size_t n) {
  constexpr bool kPairs = !std::is_same_v<V, detail::NoValues>;
  const cudaStream_t stream = harness.stream();
  auto cub_sort = [&b, n](void* temp, size_t& bytes, cudaStream_t s) {
    if constexpr (kPairs) {
      return cub::DeviceRadixSort::SortPairs(temp, bytes, b.in.data(), b.cub_out.data(), b.values_in.data(),
                                             b.cub_values.data(), n, 0, 8 * int{sizeof(K)}, s);
    } else {
      return cub::DeviceRadixSort::SortKeys(temp, bytes, b.in.data(), b.cub_out.data(), n, 0, 8 * int{sizeof(K)}, s);
    }
  };
  size_t cub_bytes = 0;
  prims::check(cub_sort(nullptr, cub_bytes, stream), "cub size");
  b.temps.clear();
  b.temps.reserve(sizeof...(Variants) + 1);
  b.temps.emplace_back(cub_bytes);
  unsigned char* cub_temp = b.temps.back().data();
  K* cub_out = b.cub_out.data();
  V* cub_values = b.cub_values.data();
  // Every variant writes the one output, poisoned before each run: a check sees this variant's last timed output.
  K* out = b.out.data();
  V* values_out = b.values_out.data();
  auto sorted = [&b, n](const K* keys, const V* values) {
    if constexpr (kPairs) {
      return prims::bench::is_sorted_permutation(b.pristine.data(), keys, values, n, n, true);
    } else {
      return prims::bench::is_sorted_permutation(b.pristine.data(), keys, n, n);
    }
  };
  auto outputs = [n](K* keys, V* values) {
    std::vector<prims::bench::Output> written = {output(keys, n)};
    if constexpr (kPairs) written.push_back(output(values, n));
    return written;
  };
  std::vector<Contender> contenders = {
      {"CUB",
       [=](cudaStream_t s) {
         size_t bytes = cub_bytes;
         prims::check(cub_sort(cub_temp, bytes, s), "cub");
       },
       [=] { return sorted(cub_out, cub_values); }, outputs(cub_out, cub_values)}};
  auto add = [&](auto variant) {
    using Variant = decltype(variant);
    const detail::PassBuffers<K, V> io{b.in.data(), out, kPairs ? b.values_in.data() : nullptr,
                                       kPairs ? values_out : nullptr};
    size_t bytes = 0;
    prims::check(Variant::template sort<K, V>(nullptr, bytes, io, n, stream), "size");
    b.temps.emplace_back(bytes);
    unsigned char* temp = b.temps.back().data();
    const std::string name = Variant::name();
    contenders.push_back({name,
                          [=](cudaStream_t s) {
                            size_t size = bytes;
                            prims::check(Variant::template sort<K, V>(temp, size, io, n, s), name.c_str());
                          },
                          [=] { return sorted(out, values_out); }, outputs(out, values_out)});
  };
  (add(Variants{}), ...);
  auto prepare = [&] {
    prims::check(cudaMemcpyAsync(b.in.data(), b.pristine.data(), n * sizeof(K), cudaMemcpyDeviceToDevice, stream),
                 "restoring keys");
    if constexpr (kPairs) {
      prims::check(cudaMemcpyAsync(b.values_in.data(), b.values.data(), n * sizeof(V), cudaMemcpyDeviceToDevice,
                                   stream),
                   "restoring values");
    }
  };
  harness.run_case({bench, type, distribution}, n, 2.0 * (sizeof(K) + (kPairs ? sizeof(V) : 0)), contenders,
                   prepare);
}

template <class K, class V, class... Variants>
void tune_type(prims::bench::Harness& harness, const char* bench, const char* type) {
  constexpr bool kPairs = !std::is_same_v<V, detail::NoValues>;
  const size_t max_n = size_t{1} << harness.max_log2();
  const size_t value_n = kPairs ? max_n : 0;
  Buffers<K, V> b{prims::DeviceBuffer<K>(max_n), prims::DeviceBuffer<K>(max_n), prims::DeviceBuffer<K>(max_n),
                  prims::DeviceBuffer<K>(max_n),  prims::DeviceBuffer<V>(value_n), prims::DeviceBuffer<V>(value_n),
                  prims::DeviceBuffer<V>(value_n), prims::DeviceBuffer<V>(value_n), {}};
  if constexpr (kPairs) {
    prims::bench::generate(b.values.data(), max_n, 5, [] __device__(uint64_t, size_t i) { return static_cast<V>(i); });
  }
  for (const prims::bench::Distribution& distribution : prims::bench::kDistributions) {
    if (distribution.words == 0) continue;  // all-equal keys only copy: nothing to tune
    prims::bench::generate_keys(b.pristine.data(), max_n, distribution.words);
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      sweep<K, V, Variants...>(harness, bench, type, distribution.name, b, size_t{1} << log2n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "tune_sort", 20, 28, 4);
    tune_type<uint32_t, detail::NoValues, Variant<384, 24>, Variant<256, 4, 4>, Variant<256, 8, 4>,
              Variant<256, 16, 3>, Variant<384, 8, 3>, Variant<384, 12, 3>>(harness, "tune_sort", "u32");
    using Fetch = detail::OnesweepValuesFetch;
    tune_type<uint32_t, uint32_t, Variant<384, 20>, Variant<384, 20, 2, Fetch::L2BeforeLookBack>,
              Variant<384, 24, 2, Fetch::L2BeforeLookBack>, Variant<256, 20, 3, Fetch::L2BeforeLookBack>,
              Variant<256, 24, 3, Fetch::L2BeforeLookBack>, Variant<512, 16, 2, Fetch::L2BeforeLookBack>>(
        harness, "tune_sort", "u32/u32");
    // Pairs between OnesweepSmall's and OnesweepPairs' ranges (2^19): few tiles of the default shape fill the GPU.
    tune_type<uint32_t, uint32_t, Variant<384, 20>, Variant<256, 8, 4>, Variant<256, 12, 3>, Variant<256, 16, 3>,
              Variant<384, 12, 3>, Variant<384, 16, 2>, Variant<256, 12, 3, Fetch::L2BeforeLookBack>,
              Variant<384, 12, 3, Fetch::L2BeforeLookBack>>(harness, "tune_small", "u32/u32");
    tune_type<uint32_t, detail::NoValues, Variant<384, 24>, Variant<256, 16, 3>, Variant<512, 16, 2>,
              Variant<512, 20, 2>>(harness, "tune_small", "u32");
    tune_type<float, detail::NoValues, Variant<384, 24>, Variant<256, 16, 3>, Variant<512, 16, 2>,
              Variant<512, 20, 2>>(harness, "tune_small", "f32");
    tune_type<uint64_t, detail::NoValues, Variant<384, 15>, Variant<256, 12, 3>, Variant<512, 8, 2>,
              Variant<512, 10, 2>>(harness, "tune_small", "u64");
    tune_type<uint64_t, uint32_t, Variant<384, 15>, Variant<256, 8, 3>, Variant<256, 12, 3>, Variant<512, 8, 2>>(
        harness, "tune_small", "u64/u32");
    tune_type<uint64_t, uint64_t, Variant<384, 15>, Variant<256, 8, 3>, Variant<512, 8, 2>>(harness, "tune_small",
                                                                                           "u64/u64");
    tune_type<uint32_t, uint64_t, Variant<384, 15>, Variant<256, 8, 3>, Variant<512, 8, 2>>(harness, "tune_small",
                                                                                           "u32/u64");
    tune_type<uint64_t, uint32_t, Variant<384, 15>, Variant<384, 15, 2, Fetch::L2BeforeLookBack>>(harness, "tune_sort",
                                                                                                "u64/u32");
    tune_type<float, detail::NoValues, Variant<384, 24>, Variant<256, 8, 4>, Variant<384, 12, 3>>(harness, "tune_sort", "f32");
    tune_type<uint64_t, detail::NoValues, Variant<384, 15>, Variant<256, 4, 4>, Variant<256, 8, 4>,
              Variant<384, 8, 3>>(harness, "tune_sort", "u64");
    tune_type<uint64_t, detail::NoValues, ShippedOnesweep, Hybrid<3>, Hybrid<4>, Hybrid<5>, Hybrid<6>,
              Hybrid<11, false>, Hybrid<4, false>, Hybrid<4, true, 16>>(harness, "tune_hybrid", "u64");
    tune_type<uint32_t, detail::NoValues, ShippedOnesweep, Hybrid<4>, Hybrid<6>, Hybrid<11, false>,
              Hybrid<4, true, 16>>(harness, "tune_hybrid", "u32");
    tune_type<uint32_t, uint32_t, ShippedOnesweep, Hybrid<4>, Hybrid<6>, Hybrid<11, false>>(harness, "tune_hybrid",
                                                                                           "u32/u32");
    tune_type<uint64_t, uint64_t, ShippedOnesweep, Hybrid<4>, Hybrid<6>, Hybrid<11, false>>(harness, "tune_hybrid",
                                                                                           "u64/u64");
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tune_sort: error: {}\n", e.what());
    return 1;
  }
}
