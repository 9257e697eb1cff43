// bench_by_key: prims::device::reduce_by_key, run_length_encode, non_trivial_runs, inclusive_scan_by_key and
// exclusive_scan_by_key against cub::DeviceReduce::ReduceByKey, cub::DeviceRunLengthEncode::Encode /
// NonTrivialRuns, cub::DeviceScan::InclusiveSumByKey / ExclusiveSumByKey and thrust::reduce_by_key /
// inclusive_scan_by_key / exclusive_scan_by_key (Thrust has no non-trivial runs),
// same data, same run, i32 keys and values 2^16..2^28. The keys come in runs of 1, 2, ..., 7 items in turn (4 on
// average), the values are random. Every contender's output is compared bitwise with a reference: CUB's result,
// whose number of runs is itself checked against the one the keys are built with. GB/s counts what each must
// move: keys and values read once, the runs' keys and reductions (or every scanned value) written once.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/by_key.cuh"
#include "prims/device/run_length.cuh"

namespace {

using prims::bench::Contender;

/// Runs of 1, 2, ..., 7 items in turn: 7 runs every 28 items.
constexpr size_t kCycleItems = 28;
constexpr size_t kCycleRuns = 7;

__host__ __device__ inline size_t run_of(size_t i) {
  const size_t at = i % kCycleItems;
  size_t run = 0;
  size_t end = 1;  // run r of a cycle ends (exclusive) at 1 + 2 + ... + (r + 1)
  while (end <= at) {
    ++run;
    end += run + 1;
  }
  return kCycleRuns * (i / kCycleItems) + run;
}

size_t runs_in(size_t n) { return n == 0 ? 0 : run_of(n - 1) + 1; }

/// The runs longer than one among the first n items: 6 a cycle, and those of the last cycle's part.
size_t long_runs_in(size_t n) {
  size_t runs = 6 * (n / kCycleItems);
  size_t left = n % kCycleItems;
  for (size_t length = 1; left > 0; ++length) {
    const size_t taken = length < left ? length : left;
    runs += taken > 1 ? 1 : 0;
    left -= taken;
  }
  return runs;
}

enum class Kind { Reduce, RunLength, NonTrivialRuns, InclusiveScan, ExclusiveScan };

struct Buffers {
  prims::DeviceBuffer<int32_t> keys, values;
  prims::DeviceBuffer<int32_t> prims_keys, cub_keys, thrust_keys, reference_keys;
  prims::DeviceBuffer<int32_t> prims_values, cub_values, thrust_values, reference_values;
  prims::DeviceBuffer<size_t> prims_count;
  prims::DeviceBuffer<int> cub_count, reference_count;
  explicit Buffers(size_t n)
      : keys(n), values(n), prims_keys(n), cub_keys(n), thrust_keys(n), reference_keys(n), prims_values(n),
        cub_values(n), thrust_values(n), reference_values(n), prims_count(1), cub_count(1), reference_count(1) {}
};

const char* variant_of(Kind kind) {
  switch (kind) {
    case Kind::Reduce: return "reduce_by_key runs of 4";
    case Kind::RunLength: return "run_length_encode runs of 4";
    case Kind::NonTrivialRuns: return "non_trivial_runs runs of 4";
    case Kind::InclusiveScan: return "inclusive_scan_by_key runs of 4";
    default: return "exclusive_scan_by_key runs of 4";
  }
}

void bench_case(prims::bench::Harness& harness, Buffers& b, size_t n, Kind kind) {
  const char* variant = variant_of(kind);
  if (!harness.selected({"by_key", "i32", variant})) return;
  const cudaStream_t stream = harness.stream();
  const int32_t* keys = b.keys.data();
  const int32_t* values = b.values.data();
  const int num_items = static_cast<int>(n);
  const bool reduces = kind != Kind::InclusiveScan && kind != Kind::ExclusiveScan;
  auto prims_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    switch (kind) {
      case Kind::Reduce:
        return prims::device::reduce_by_key(temp, bytes, keys, b.prims_keys.data(), values, b.prims_values.data(),
                                            b.prims_count.data(), n, prims::Sum{}, prims::Equal{}, s);
      case Kind::RunLength:
        return prims::device::run_length_encode(temp, bytes, keys, b.prims_keys.data(), b.prims_values.data(),
                                                b.prims_count.data(), n, s);
      case Kind::NonTrivialRuns:
        return prims::device::non_trivial_runs(temp, bytes, keys, b.prims_keys.data(), b.prims_values.data(),
                                               b.prims_count.data(), n, s);
      case Kind::InclusiveScan:
        return prims::device::inclusive_scan_by_key(temp, bytes, keys, values, b.prims_values.data(), n,
                                                    prims::Sum{}, prims::Equal{}, s);
      default:
        return prims::device::exclusive_scan_by_key(temp, bytes, keys, values, b.prims_values.data(), n,
                                                    prims::Sum{}, int32_t{0}, prims::Equal{}, s);
    }
  };
  auto cub_call = [&](void* temp, size_t& bytes, int32_t* out_keys, int32_t* out_values, int* count, cudaStream_t s) {
    switch (kind) {
      case Kind::Reduce:
        return cub::DeviceReduce::ReduceByKey(temp, bytes, keys, out_keys, values, out_values, count,
                                              ::cuda::std::plus<>{}, num_items, s);
      case Kind::RunLength:
        return cub::DeviceRunLengthEncode::Encode(temp, bytes, keys, out_keys, out_values, count, num_items, s);
      case Kind::NonTrivialRuns:
        return cub::DeviceRunLengthEncode::NonTrivialRuns(temp, bytes, keys, out_keys, out_values, count, num_items, s);
      case Kind::InclusiveScan:
        return cub::DeviceScan::InclusiveSumByKey(temp, bytes, keys, values, out_values, num_items,
                                                  ::cuda::std::equal_to<>{}, s);
      default:
        return cub::DeviceScan::ExclusiveSumByKey(temp, bytes, keys, values, out_values, num_items,
                                                  ::cuda::std::equal_to<>{}, s);
    }
  };
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, stream), "prims size");
  prims::check(cub_call(nullptr, cub_bytes, nullptr, nullptr, nullptr, stream), "cub size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);

  // The reference: CUB's result, whose number of runs must be the one the keys were built with.
  prims::check(cub_call(cub_temp.data(), cub_bytes, b.reference_keys.data(), b.reference_values.data(),
                        b.reference_count.data(), stream),
               "reference");
  prims::check(cudaStreamSynchronize(stream), "reference");
  const size_t runs = kind == Kind::NonTrivialRuns ? long_runs_in(n) : runs_in(n);
  if (reduces && static_cast<size_t>(b.reference_count.download(1)[0]) != runs) {
    throw std::runtime_error("the reference found " + std::to_string(b.reference_count.download(1)[0]) +
                             " runs, not " + std::to_string(runs));
  }
  size_t thrust_count = 0;
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, s), "prims"); }},
      {"CUB", [&](cudaStream_t s) {
         prims::check(cub_call(cub_temp.data(), cub_bytes, b.cub_keys.data(), b.cub_values.data(), b.cub_count.data(),
                               s),
                      "cub");
       }},
      {"Thrust", [&](cudaStream_t s) {
         switch (kind) {
           case Kind::Reduce: {
             const auto ends = thrust::reduce_by_key(harness.thrust_on(s), keys, keys + n, values, b.thrust_keys.data(),
                                                     b.thrust_values.data());
             thrust_count = static_cast<size_t>(ends.first - b.thrust_keys.data());
             break;
           }
           case Kind::RunLength: {
             const auto ends = thrust::reduce_by_key(harness.thrust_on(s), keys, keys + n,
                                                     thrust::make_constant_iterator<int32_t>(1), b.thrust_keys.data(),
                                                     b.thrust_values.data());
             thrust_count = static_cast<size_t>(ends.first - b.thrust_keys.data());
             break;
           }
           case Kind::NonTrivialRuns:
             break;  // not a contender (Thrust has no such algorithm): removed below
           case Kind::InclusiveScan:
             thrust::inclusive_scan_by_key(harness.thrust_on(s), keys, keys + n, values, b.thrust_values.data());
             break;
           default:
             thrust::exclusive_scan_by_key(harness.thrust_on(s), keys, keys + n, values, b.thrust_values.data());
         }
       }},
  };
  const size_t items = reduces ? runs : n;
  auto matches = [&, items](const int32_t* out_keys, const int32_t* out_values) {
    return (!reduces || prims::bench::same_bits(out_keys, b.reference_keys.data(), items)) &&
           prims::bench::same_bits(out_values, b.reference_values.data(), items);
  };
  contenders[0].check = [&, runs] {
    return (!reduces || b.prims_count.download(1)[0] == runs) && matches(b.prims_keys.data(), b.prims_values.data());
  };
  contenders[0].outputs = {prims::bench::output(b.prims_keys.data(), n), prims::bench::output(b.prims_values.data(), n),
                           prims::bench::output(b.prims_count.data(), 1)};
  contenders[1].check = [&, runs] {
    return (!reduces || static_cast<size_t>(b.cub_count.download(1)[0]) == runs) &&
           matches(b.cub_keys.data(), b.cub_values.data());
  };
  contenders[1].outputs = {prims::bench::output(b.cub_keys.data(), n), prims::bench::output(b.cub_values.data(), n),
                           prims::bench::output(b.cub_count.data(), 1)};
  contenders[2].check = [&, runs] {
    return (!reduces || thrust_count == runs) && matches(b.thrust_keys.data(), b.thrust_values.data());
  };
  contenders[2].outputs = {prims::bench::output(b.thrust_keys.data(), n),
                           prims::bench::output(b.thrust_values.data(), n)};

  if (kind == Kind::NonTrivialRuns) contenders.pop_back();
  const double run_share = static_cast<double>(runs) / static_cast<double>(n);
  const double bytes_per_item = kind == Kind::Reduce      ? 8.0 + 8.0 * run_share
                                : kind != Kind::InclusiveScan && kind != Kind::ExclusiveScan ? 4.0 + 8.0 * run_share
                                                          : 12.0;
  harness.run_case({"by_key", "i32", variant}, n, bytes_per_item, contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_by_key", 16, 28, 2);
    const size_t max_n = size_t{1} << harness.max_log2();
    Buffers buffers(max_n);
    prims::bench::generate(buffers.keys.data(), max_n, 6,
                           [] __device__(uint64_t, size_t i) { return static_cast<int32_t>(run_of(i)); });
    prims::bench::generate(buffers.values.data(), max_n, 7,
                           [] __device__(uint64_t bits, size_t) { return static_cast<int32_t>(bits >> 40); });
    prims::check(cudaDeviceSynchronize(), "inputs");
    for (const Kind kind :
         {Kind::Reduce, Kind::RunLength, Kind::NonTrivialRuns, Kind::InclusiveScan, Kind::ExclusiveScan}) {
      for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
        bench_case(harness, buffers, size_t{1} << log2n, kind);
      }
    }
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_by_key: error: {}\n", e.what());
    return 1;
  }
}
