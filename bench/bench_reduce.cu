// bench_reduce: prims::device::reduce against thrust::reduce and cub::DeviceReduce, same data, same run.
// Sums of i32, f32, i64, f64 with both block algorithms (i32), and i32 min/max, over 2^16..2^30 items.
#include <cub/device/device_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include <cmath>

#include "harness.cuh"
#include "prims/device/reduce.cuh"

namespace {

using prims::bench::Contender;
using prims::block::ReduceAlgorithm;

template <class T>
bool agree(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(double(a) - double(b)) <= 1e-4 * std::fabs(double(b)) + 1e-6;
  } else {
    return a == b;
  }
}

enum class Kind { Sum, Min, Max };

template <class T, ReduceAlgorithm ALGORITHM, Kind KIND>
void bench_case(prims::bench::Harness& harness, const T* in, size_t n, const char* variant) {
  using Op = std::conditional_t<KIND == Kind::Sum, prims::Sum, std::conditional_t<KIND == Kind::Min, prims::Min, prims::Max>>;
  const T init = KIND == Kind::Sum ? T(0)
                 : KIND == Kind::Min ? std::numeric_limits<T>::max()
                                     : std::numeric_limits<T>::lowest();
  prims::DeviceBuffer<T> out(2);
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims::device::reduce<ALGORITHM>(nullptr, prims_bytes, in, out.data(), n, Op{}, init), "prims size");
  if constexpr (KIND == Kind::Sum) {
    prims::check(cub::DeviceReduce::Sum(nullptr, cub_bytes, in, out.data() + 1, n), "cub size");
  } else if constexpr (KIND == Kind::Min) {
    prims::check(cub::DeviceReduce::Min(nullptr, cub_bytes, in, out.data() + 1, n), "cub size");
  } else {
    prims::check(cub::DeviceReduce::Max(nullptr, cub_bytes, in, out.data() + 1, n), "cub size");
  }
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);
  T thrust_result{};

  const Contender ours{"prims", [&](cudaStream_t s) {
    prims::check(prims::device::reduce<ALGORITHM>(prims_temp.data(), prims_bytes, in, out.data(), n, Op{}, init, s),
                 "prims::device::reduce");
  }};
  const Contender thrust_contender{"Thrust", [&](cudaStream_t s) {
    auto policy = thrust::cuda::par.on(s);
    if constexpr (KIND == Kind::Sum) thrust_result = thrust::reduce(policy, in, in + n, init, thrust::plus<T>());
    if constexpr (KIND == Kind::Min) thrust_result = thrust::reduce(policy, in, in + n, init, thrust::minimum<T>());
    if constexpr (KIND == Kind::Max) thrust_result = thrust::reduce(policy, in, in + n, init, thrust::maximum<T>());
  }};
  const Contender cub_contender{"CUB", [&](cudaStream_t s) {
    if constexpr (KIND == Kind::Sum) prims::check(cub::DeviceReduce::Sum(cub_temp.data(), cub_bytes, in, out.data() + 1, n, s), "cub");
    if constexpr (KIND == Kind::Min) prims::check(cub::DeviceReduce::Min(cub_temp.data(), cub_bytes, in, out.data() + 1, n, s), "cub");
    if constexpr (KIND == Kind::Max) prims::check(cub::DeviceReduce::Max(cub_temp.data(), cub_bytes, in, out.data() + 1, n, s), "cub");
  }};
  std::vector<Contender> contenders = {ours, thrust_contender, cub_contender};
  // Every contender's answer must agree with CUB's.
  auto results = [&] { return out.download(); };
  contenders[0].check = [&] { const auto r = results(); return agree(r[0], r[1]); };
  contenders[1].check = [&] { return agree(thrust_result, results()[1]); };
  const char* bench = KIND == Kind::Sum ? "sum" : KIND == Kind::Min ? "min" : "max";
  harness.run_case({bench, prims::bench::type_name<T>(), variant}, n, sizeof(T), contenders);
}

template <class T>
void bench_type(prims::bench::Harness& harness, bool with_variants) {
  const size_t max_n = size_t{1} << harness.max_log2();
  prims::DeviceBuffer<T> in(max_n);
  prims::bench::generate_small_values(in.data(), max_n, 7);
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Sum>(harness, in.data(), n, "WarpShuffle");
    if (with_variants) {
      bench_case<T, ReduceAlgorithm::SmemTree, Kind::Sum>(harness, in.data(), n, "SmemTree");
      bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Min>(harness, in.data(), n, "WarpShuffle");
      bench_case<T, ReduceAlgorithm::WarpShuffle, Kind::Max>(harness, in.data(), n, "WarpShuffle");
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
