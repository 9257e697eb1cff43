// bench_scan: prims::device inclusive and exclusive sums, both algorithms (SinglePass, ReduceThenScan), against
// thrust::inclusive_scan / thrust::exclusive_scan and cub::DeviceScan, same data, same run. i32, f32, i64 and f64 over
// 2^16..2^30 items; GB/s counts what a scan must move: one read and one write of every item.
// No contender writes its input, so every run reads the same items (no prepare step); every check verifies the input
// against its fingerprint too. Integer outputs are checked exactly (each output less the one before it is the next
// input item, modulo 2^bits); float outputs against a double-double reference scan, each within summation_tolerance
// (checks.cuh) of the magnitudes it sums.
#include <cub/device/device_scan.cuh>
#include <thrust/scan.h>

#include <optional>
#include <type_traits>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/scan.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::output;
using prims::device::ScanAlgorithm;

/// The input of one type at the largest size, its fingerprint, and (floats) its reference inclusive scan, whose
/// first n sums are those of the first n items.
template <class T>
struct Input {
  prims::DeviceBuffer<T> items;
  uint64_t fingerprint;
  std::optional<prims::bench::ReferenceScan> reference;
};

/// Whether got[0..n) is the exclusive (or inclusive) sum of the input's first n items, and the input is intact.
template <bool EXCLUSIVE, class T>
bool is_scan(const T* got, const Input<T>& input, size_t n) {
  const T* in = input.items.data();
  size_t wrong = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double* sums = input.reference->sums.data();
    const float* magnitudes = input.reference->magnitudes.data();
    wrong = prims::bench::count_if(n, [=] __device__(size_t i) {
      const size_t items = EXCLUSIVE ? i : i + 1;  // the items summed into output i
      const double sum = items == 0 ? 0.0 : sums[items - 1];
      const double magnitude = items == 0 ? 0.0 : magnitudes[items - 1];
      return !(fabs(static_cast<double>(got[i]) - sum) <= prims::bench::summation_tolerance<T>(magnitude, items));
    });
  } else {
    using Unsigned = std::make_unsigned_t<T>;
    wrong = prims::bench::count_if(n, [=] __device__(size_t i) {
      const Unsigned before = i == 0 ? Unsigned{0} : static_cast<Unsigned>(got[i - 1]);
      const Unsigned item = !EXCLUSIVE ? static_cast<Unsigned>(in[i])
                            : i == 0   ? Unsigned{0}
                                       : static_cast<Unsigned>(in[i - 1]);
      return static_cast<Unsigned>(static_cast<Unsigned>(got[i]) - before) != item;
    });
  }
  return wrong == 0 && prims::bench::fingerprint(in, input.items.size()) == input.fingerprint;
}

template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T>
cudaError_t prims_scan(void* temp, size_t& bytes, const T* in, T* out, size_t n, cudaStream_t s) {
  if constexpr (EXCLUSIVE) {
    return prims::device::exclusive_scan<ALGORITHM>(temp, bytes, in, out, n, prims::Sum{}, T(0), s);
  } else {
    return prims::device::inclusive_scan<ALGORITHM>(temp, bytes, in, out, n, prims::Sum{}, s);
  }
}

template <class T>
struct Outputs {
  prims::DeviceBuffer<T> prims_out, thrust_out, cub_out;
};

template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T>
void bench_case(prims::bench::Harness& harness, const Input<T>& input, Outputs<T>& outputs, size_t n) {
  const T* in = input.items.data();
  T* prims_out = outputs.prims_out.data();
  T* thrust_out = outputs.thrust_out.data();
  T* cub_out = outputs.cub_out.data();
  const int cub_n = static_cast<int>(n);
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_scan<ALGORITHM, EXCLUSIVE>(nullptr, prims_bytes, in, prims_out, n, 0), "prims size");
  if constexpr (EXCLUSIVE) {
    prims::check(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, in, cub_out, cub_n), "cub size");
  } else {
    prims::check(cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, in, cub_out, cub_n), "cub size");
  }
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);

  const std::vector<Contender> contenders = {
      {"prims",
       [&](cudaStream_t s) {
         prims::check(prims_scan<ALGORITHM, EXCLUSIVE>(prims_temp.data(), prims_bytes, in, prims_out, n, s), "prims");
       },
       [&] { return is_scan<EXCLUSIVE>(prims_out, input, n); }, {output(prims_out, n)}},
      {"Thrust",
       [&](cudaStream_t s) {
         if constexpr (EXCLUSIVE) {
           thrust::exclusive_scan(harness.thrust_on(s), in, in + n, thrust_out, T(0));
         } else {
           thrust::inclusive_scan(harness.thrust_on(s), in, in + n, thrust_out);
         }
       },
       [&] { return is_scan<EXCLUSIVE>(thrust_out, input, n); }, {output(thrust_out, n)}},
      {"CUB",
       [&](cudaStream_t s) {
         if constexpr (EXCLUSIVE) {
           prims::check(cub::DeviceScan::ExclusiveSum(cub_temp.data(), cub_bytes, in, cub_out, cub_n, s), "cub");
         } else {
           prims::check(cub::DeviceScan::InclusiveSum(cub_temp.data(), cub_bytes, in, cub_out, cub_n, s), "cub");
         }
       },
       [&] { return is_scan<EXCLUSIVE>(cub_out, input, n); }, {output(cub_out, n)}},
  };
  const char* variant = ALGORITHM == ScanAlgorithm::SinglePass ? "SinglePass" : "ReduceThenScan";
  harness.run_case({EXCLUSIVE ? "excl_sum" : "incl_sum", prims::bench::type_name<T>(), variant}, n, 2.0 * sizeof(T), contenders);
}

template <class T>
void bench_type(prims::bench::Harness& harness) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Input<T> input{prims::DeviceBuffer<T>(max_n), 0, std::nullopt};
  prims::bench::generate_small_values(input.items.data(), max_n, 11);
  input.fingerprint = prims::bench::fingerprint(input.items.data(), max_n);
  if constexpr (std::is_floating_point_v<T>) {
    input.reference = prims::bench::reference_inclusive_scan(input.items.data(), max_n);
  }
  Outputs<T> outputs{prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n)};
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    bench_case<ScanAlgorithm::SinglePass, true>(harness, input, outputs, n);
    bench_case<ScanAlgorithm::ReduceThenScan, true>(harness, input, outputs, n);
    bench_case<ScanAlgorithm::SinglePass, false>(harness, input, outputs, n);
    bench_case<ScanAlgorithm::ReduceThenScan, false>(harness, input, outputs, n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_scan", 16, 30, 2);
    bench_type<int32_t>(harness);
    bench_type<float>(harness);
    bench_type<int64_t>(harness);
    bench_type<double>(harness);
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_scan: error: {}\n", e.what());
    return 1;
  }
}
