// bench_reduce: prims::device::reduce against thrust::reduce and cub::DeviceReduce, same data, same run.
// Sums of i32, f32, i64, f64 with both block algorithms (i32), and i32 min/max, over 2^16..2^30 items.
// thrust::reduce returns its result to the host: it copies the value and synchronizes inside the timing, and Thrust
// (CCCL 3.0) has no reduction that leaves its result in device memory. So it is timed as "Thrust (returns to host)"
// beside "prims (returns to host)", prims' reduction followed by the same copy to the host, which Thrust's ratio
// divides by; prims and CUB write their result to device memory.
// Every result is checked: integer sums exactly against a sum modulo 2^64 (the contenders' sums wrap the same way),
// float sums within summation_tolerance (checks.cuh) of a double-double sum, min and max exactly; and the input,
// which no contender may write, against its fingerprint.
#include <cub/device/device_reduce.cuh>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/reduce.cuh"

namespace {

using prims::bench::Contender;
using prims::bench::output;
using prims::block::ReduceAlgorithm;

enum class Kind { Sum, Min, Max };

/// The input of one type at the largest size, its fingerprint, and the reference sum of its first n items.
template <class T>
struct Input {
  prims::DeviceBuffer<T> items;
  uint64_t fingerprint;
  /// Integers: the sum modulo 2^64 of the items as unsigned words. Floats: a double-double sum.
  uint64_t integer_sum;
  prims::bench::ReferenceSum float_sum;
};

/// Whether `got` is the reduction of in[0..n) of kind KIND.
template <class T, Kind KIND>
bool is_reduction(T got, const Input<T>& input, size_t n) {
  const T* in = input.items.data();
  if constexpr (KIND == Kind::Sum) {
    if constexpr (std::is_floating_point_v<T>) {
      const prims::bench::ReferenceSum& reference = input.float_sum;
      return std::fabs(double(got) - reference.sum) <=
             prims::bench::summation_tolerance<T>(reference.magnitude, n);
    } else {
      using Unsigned = std::make_unsigned_t<T>;
      return static_cast<Unsigned>(got) == static_cast<Unsigned>(input.integer_sum);
    }
  } else {
    // The minimum: no item below it, and some item equal to it (the maximum likewise).
    const size_t beyond = prims::bench::count_if(n, [=] __device__(size_t i) {
      return KIND == Kind::Min ? in[i] < got : in[i] > got;
    });
    const size_t equal = prims::bench::count_if(n, [=] __device__(size_t i) { return in[i] == got; });
    return beyond == 0 && equal > 0;
  }
}

template <class T, ReduceAlgorithm ALGORITHM, Kind KIND>
void bench_case(prims::bench::Harness& harness, const Input<T>& input, size_t n, const char* variant) {
  using Op = std::conditional_t<KIND == Kind::Sum, prims::Sum, std::conditional_t<KIND == Kind::Min, prims::Min, prims::Max>>;
  using ThrustOp = std::conditional_t<KIND == Kind::Sum, thrust::plus<T>,
                                      std::conditional_t<KIND == Kind::Min, thrust::minimum<T>, thrust::maximum<T>>>;
  const T init = KIND == Kind::Sum ? T(0)
                 : KIND == Kind::Min ? std::numeric_limits<T>::max()
                                     : std::numeric_limits<T>::lowest();
  const T* in = input.items.data();
  // Device results: prims, CUB, and prims before its copy to the host.
  prims::DeviceBuffer<T> out(3);
  T* prims_out = out.data();
  T* cub_out = out.data() + 1;
  T* prims_to_host_out = out.data() + 2;
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims::device::reduce<ALGORITHM>(nullptr, prims_bytes, in, prims_out, n, Op{}, init), "prims size");
  if constexpr (KIND == Kind::Sum) {
    prims::check(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, cub_out, n), "cub size");
  } else if constexpr (KIND == Kind::Min) {
    prims::check(cub::DeviceReduce::Min(nullptr, cub_bytes, in, cub_out, n), "cub size");
  } else {
    prims::check(cub::DeviceReduce::Max(nullptr, cub_bytes, in, cub_out, n), "cub size");
  }
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);
  T thrust_result{}, prims_host_result{};

  auto prims_reduce = [&](T* result, cudaStream_t s) {
    prims::check(prims::device::reduce<ALGORITHM>(prims_temp.data(), prims_bytes, in, result, n, Op{}, init, s),
                 "prims::device::reduce");
  };
  auto correct = [&](T got) {
    return is_reduction<T, KIND>(got, input, n) &&
           prims::bench::fingerprint(in, input.items.size()) == input.fingerprint;
  };
  auto device_result = [](const T* result) {
    T value;
    prims::check(cudaMemcpy(&value, result, sizeof(T), cudaMemcpyDeviceToHost), "reading a result");
    return value;
  };
  const std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims_reduce(prims_out, s); },
       [&] { return correct(device_result(prims_out)); }, {output(prims_out, 1)}},
      {"Thrust (returns to host)",
       [&](cudaStream_t s) { thrust_result = thrust::reduce(harness.thrust_on(s), in, in + n, init, ThrustOp{}); },
       [&] { return correct(thrust_result); }, {}, nullptr, "prims (returns to host)"},
      {"CUB",
       [&](cudaStream_t s) {
         if constexpr (KIND == Kind::Sum) {
           prims::check(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, in, cub_out, n, s), "cub");
         } else if constexpr (KIND == Kind::Min) {
           prims::check(cub::DeviceReduce::Min(cub_temp.data(), cub_bytes, in, cub_out, n, s), "cub");
         } else {
           prims::check(cub::DeviceReduce::Max(cub_temp.data(), cub_bytes, in, cub_out, n, s), "cub");
         }
       },
       [&] { return correct(device_result(cub_out)); }, {output(cub_out, 1)}},
      // What thrust::reduce does after its reduction: copy the value to the host and wait for it.
      {"prims (returns to host)",
       [&](cudaStream_t s) {
         prims_reduce(prims_to_host_out, s);
         prims::check(cudaMemcpyAsync(&prims_host_result, prims_to_host_out, sizeof(T), cudaMemcpyDeviceToHost, s),
                      "copying the result to the host");
         prims::check(cudaStreamSynchronize(s), "waiting for the result");
       },
       [&] { return correct(prims_host_result); }, {output(prims_to_host_out, 1)}},
  };
  const char* bench = KIND == Kind::Sum ? "sum" : KIND == Kind::Min ? "min" : "max";
  harness.run_case({bench, prims::bench::type_name<T>(), variant}, n, sizeof(T), contenders);
}

template <class T>
void bench_type(prims::bench::Harness& harness, bool with_variants) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Input<T> input{prims::DeviceBuffer<T>(max_n), 0, 0, {0, 0}};
  prims::bench::generate_small_values(input.items.data(), max_n, 7);
  input.fingerprint = prims::bench::fingerprint(input.items.data(), max_n);
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    const T* in = input.items.data();
    if constexpr (std::is_floating_point_v<T>) {
      input.float_sum = prims::bench::reference_sum(in, n);
    } else {
      using Unsigned = std::make_unsigned_t<T>;
      input.integer_sum = prims::bench::sum_over(n, [=] __device__(size_t i) {
        return static_cast<uint64_t>(static_cast<Unsigned>(in[i]));
      });
    }
    bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Sum>(harness, input, n, "WarpShuffle");
    if (with_variants) {
      bench_case<T, ReduceAlgorithm::SmemTree, Kind::Sum>(harness, input, n, "SmemTree");
      bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Min>(harness, input, n, "WarpShuffle");
      bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Max>(harness, input, n, "WarpShuffle");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_reduce", 16, 30, 2);
    bench_type<int32_t>(harness, true);
    bench_type<float>(harness, false);
    bench_type<int64_t>(harness, false);
    bench_type<double>(harness, false);
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_reduce: error: {}\n", e.what());
    return 1;
  }
}
