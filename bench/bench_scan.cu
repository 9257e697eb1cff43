// bench_scan: prims::device inclusive and exclusive sums, both algorithms (SinglePass, ReduceThenScan), against
// thrust::inclusive_scan / thrust::exclusive_scan and cub::DeviceScan, same data, same run. i32, f32, i64 and f64 over
// 2^16..2^30 items; GB/s counts what a scan must move: one read and one write of every item.
#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include <cmath>

#include "harness.cuh"
#include "prims/device/scan.cuh"

namespace {

using prims::bench::Contender;
using prims::device::ScanAlgorithm;

/// Counts the items where `got` and `reference` disagree: exactly for integers; for floats within 1e-3 of the
/// magnitude (the contenders group a long float sum differently).
template <class T>
__global__ void count_disagreements_kernel(const T* got, const T* reference, size_t n, unsigned long long* count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    bool agree;
    if constexpr (std::is_floating_point_v<T>) {
      agree = fabs(double(got[i]) - double(reference[i])) <= 1e-3 * fabs(double(reference[i])) + 1e-3;
    } else {
      agree = got[i] == reference[i];
    }
    if (!agree) atomicAdd(count, 1ull);
  }
}

template <class T>
bool agrees(const T* got, const T* reference, size_t n) {
  prims::DeviceBuffer<unsigned long long> count(1);
  count.fill_bytes(0);
  count_disagreements_kernel<<<1024, 256>>>(got, reference, n, count.data());
  prims::check(cudaGetLastError(), "count_disagreements_kernel");
  return count.download()[0] == 0;
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
struct Buffers {
  prims::DeviceBuffer<T> in, prims_out, thrust_out, cub_out;
};

template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T>
void bench_case(prims::bench::Harness& harness, Buffers<T>& buffers, size_t n) {
  const T* in = buffers.in.data();
  T* prims_out = buffers.prims_out.data();
  T* thrust_out = buffers.thrust_out.data();
  T* cub_out = buffers.cub_out.data();
  const int cub_n = static_cast<int>(n);
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_scan<ALGORITHM, EXCLUSIVE>(nullptr, prims_bytes, in, prims_out, n, 0), "prims size");
  if constexpr (EXCLUSIVE) {
    prims::check(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, in, cub_out, cub_n), "cub size");
  } else {
    prims::check(cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, in, cub_out, cub_n), "cub size");
  }
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);

  std::vector<Contender> contenders = {
      {"prims",
       [&](cudaStream_t s) {
         prims::check(prims_scan<ALGORITHM, EXCLUSIVE>(prims_temp.data(), prims_bytes, in, prims_out, n, s), "prims");
       }},
      {"Thrust",
       [&](cudaStream_t s) {
         auto policy = thrust::cuda::par.on(s);
         if constexpr (EXCLUSIVE) {
           thrust::exclusive_scan(policy, in, in + n, thrust_out, T(0));
         } else {
           thrust::inclusive_scan(policy, in, in + n, thrust_out);
         }
       }},
      {"CUB",
       [&](cudaStream_t s) {
         if constexpr (EXCLUSIVE) {
           prims::check(cub::DeviceScan::ExclusiveSum(cub_temp.data(), cub_bytes, in, cub_out, cub_n, s), "cub");
         } else {
           prims::check(cub::DeviceScan::InclusiveSum(cub_temp.data(), cub_bytes, in, cub_out, cub_n, s), "cub");
         }
       }},
  };
  // Every contender's output must agree with CUB's.
  contenders[0].check = [&] { return agrees(prims_out, cub_out, n); };
  contenders[1].check = [&] { return agrees(thrust_out, cub_out, n); };
  const char* variant = ALGORITHM == ScanAlgorithm::SinglePass ? "SinglePass" : "ReduceThenScan";
  harness.run_case({EXCLUSIVE ? "excl_sum" : "incl_sum", prims::bench::type_name<T>(), variant}, n, 2.0 * sizeof(T), contenders);
}

template <class T>
void bench_type(prims::bench::Harness& harness) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Buffers<T> buffers{prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n),
                     prims::DeviceBuffer<T>(max_n)};
  prims::bench::generate_small_values(buffers.in.data(), max_n, 11);
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    bench_case<ScanAlgorithm::SinglePass, true>(harness, buffers, n);
    bench_case<ScanAlgorithm::ReduceThenScan, true>(harness, buffers, n);
    bench_case<ScanAlgorithm::SinglePass, false>(harness, buffers, n);
    bench_case<ScanAlgorithm::ReduceThenScan, false>(harness, buffers, n);
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
