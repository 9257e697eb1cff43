// bench_select: prims::device::select_if (half the items kept), select_flagged (half the flags set), unique and
// unique_by_key (runs of 4) against cub::DeviceSelect::If / Flagged / Unique / UniqueByKey and thrust::copy_if /
// unique_copy / unique_by_key_copy, and partition_if (half kept) against cub::DevicePartition::If and
// thrust::stable_partition_copy, same data, same run, i32 items (and values) 2^16..2^28. Every contender's
// count and kept items are compared bitwise with a reference: CUB's result, whose count is itself checked (against
// the n/4 runs the input is built with for the unique ones, against thrust::count_if for the others). GB/s counts
// what a selection must move: the items read once (and the flags, or the values), the kept ones written once.
#include <cub/device/device_partition.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/reverse_iterator.h>
#include <thrust/partition.h>
#include <thrust/unique.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/select.cuh"

namespace {

using prims::bench::Contender;

struct Odd {
  __host__ __device__ bool operator()(int32_t x) const { return (x & 1) != 0; }
};
struct FlagSet {
  __host__ __device__ bool operator()(uint8_t flag) const { return flag != 0; }
};

enum class Kind { If, Flagged, Unique, UniqueByKey };

struct Buffers {
  prims::DeviceBuffer<int32_t> random, runs, prims_out, cub_out, thrust_out, reference;
  prims::DeviceBuffer<int32_t> prims_values, cub_values, thrust_values, reference_values;
  prims::DeviceBuffer<uint8_t> flags;
  prims::DeviceBuffer<size_t> prims_count;
  prims::DeviceBuffer<int> cub_count, reference_count;
  explicit Buffers(size_t n)
      : random(n), runs(n), prims_out(n), cub_out(n), thrust_out(n), reference(n), prims_values(n), cub_values(n),
        thrust_values(n), reference_values(n), flags(n), prims_count(1), cub_count(1), reference_count(1) {}
};

void bench_case(prims::bench::Harness& harness, Buffers& b, size_t n, Kind kind) {
  const char* variant = kind == Kind::If        ? "select_if 50%"
                        : kind == Kind::Flagged ? "select_flagged 50%"
                        : kind == Kind::Unique  ? "unique runs of 4"
                                                : "unique_by_key runs of 4";
  const bool by_key = kind == Kind::UniqueByKey;
  if (!harness.selected({"select", "i32", variant})) return;
  const cudaStream_t stream = harness.stream();
  const int32_t* in = kind == Kind::Unique || by_key ? b.runs.data() : b.random.data();
  const int32_t* values = b.random.data();
  const int num_items = static_cast<int>(n);
  auto prims_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    if (kind == Kind::If) return prims::device::select_if(temp, bytes, in, b.prims_out.data(), b.prims_count.data(), n, Odd{}, s);
    if (kind == Kind::Flagged) {
      return prims::device::select_flagged(temp, bytes, in, b.flags.data(), b.prims_out.data(), b.prims_count.data(), n, s);
    }
    if (by_key) {
      return prims::device::unique_by_key(temp, bytes, in, values, b.prims_out.data(), b.prims_values.data(),
                                          b.prims_count.data(), n, prims::Equal{}, s);
    }
    return prims::device::unique(temp, bytes, in, b.prims_out.data(), b.prims_count.data(), n, prims::Equal{}, s);
  };
  auto cub_call = [&](void* temp, size_t& bytes, int32_t* out, int32_t* out_values, int* count, cudaStream_t s) {
    if (kind == Kind::If) return cub::DeviceSelect::If(temp, bytes, in, out, count, num_items, Odd{}, s);
    if (kind == Kind::Flagged) return cub::DeviceSelect::Flagged(temp, bytes, in, b.flags.data(), out, count, num_items, s);
    if (by_key) return cub::DeviceSelect::UniqueByKey(temp, bytes, in, values, out, out_values, count, num_items, s);
    return cub::DeviceSelect::Unique(temp, bytes, in, out, count, num_items, s);
  };
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, stream), "prims size");
  prims::check(cub_call(nullptr, cub_bytes, nullptr, nullptr, nullptr, stream), "cub size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);

  // The reference: CUB's selection, whose count must be the one the input was built for.
  prims::check(cub_call(cub_temp.data(), cub_bytes, b.reference.data(), b.reference_values.data(),
                        b.reference_count.data(), stream),
               "reference");
  prims::check(cudaStreamSynchronize(stream), "reference");
  const int expected = b.reference_count.download(1)[0];
  const size_t built = kind == Kind::Unique || by_key ? (n + 3) / 4
                       : kind == Kind::If    ? static_cast<size_t>(thrust::count_if(thrust::device, in, in + n, Odd{}))
                                             : static_cast<size_t>(thrust::count_if(thrust::device, b.flags.data(),
                                                                                    b.flags.data() + n, FlagSet{}));
  if (static_cast<size_t>(expected) != built) {
    throw std::runtime_error("the reference kept " + std::to_string(expected) + " items, not " + std::to_string(built));
  }
  size_t thrust_count = 0;
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, s), "prims"); }},
      {"CUB", [&](cudaStream_t s) {
         prims::check(cub_call(cub_temp.data(), cub_bytes, b.cub_out.data(), b.cub_values.data(), b.cub_count.data(), s),
                      "cub");
       }},
      {"Thrust", [&](cudaStream_t s) {
         int32_t* end = nullptr;
         if (kind == Kind::If) {
           end = thrust::copy_if(harness.thrust_on(s), in, in + n, b.thrust_out.data(), Odd{});
         } else if (kind == Kind::Flagged) {
           end = thrust::copy_if(harness.thrust_on(s), in, in + n, b.flags.data(), b.thrust_out.data(), FlagSet{});
         } else if (by_key) {
           end = thrust::unique_by_key_copy(harness.thrust_on(s), in, in + n, values, b.thrust_out.data(),
                                            b.thrust_values.data())
                     .first;
         } else {
           end = thrust::unique_copy(harness.thrust_on(s), in, in + n, b.thrust_out.data());
         }
         thrust_count = static_cast<size_t>(end - b.thrust_out.data());
       }},
  };
  const size_t k = static_cast<size_t>(expected);
  auto same_values = [&, k](const int32_t* got) {
    return !by_key || prims::bench::same_bits(got, b.reference_values.data(), k);
  };
  contenders[0].check = [&, k] {
    return b.prims_count.download(1)[0] == k && prims::bench::same_bits(b.prims_out.data(), b.reference.data(), k) &&
           same_values(b.prims_values.data());
  };
  contenders[0].outputs = {prims::bench::output(b.prims_out.data(), n), prims::bench::output(b.prims_count.data(), 1),
                           prims::bench::output(b.prims_values.data(), n)};
  contenders[1].check = [&, k] {
    return static_cast<size_t>(b.cub_count.download(1)[0]) == k &&
           prims::bench::same_bits(b.cub_out.data(), b.reference.data(), k) && same_values(b.cub_values.data());
  };
  contenders[1].outputs = {prims::bench::output(b.cub_out.data(), n), prims::bench::output(b.cub_count.data(), 1),
                           prims::bench::output(b.cub_values.data(), n)};
  contenders[2].check = [&, k] {
    return thrust_count == k && prims::bench::same_bits(b.thrust_out.data(), b.reference.data(), k) &&
           same_values(b.thrust_values.data());
  };
  contenders[2].outputs = {prims::bench::output(b.thrust_out.data(), n), prims::bench::output(b.thrust_values.data(), n)};

  const double kept = static_cast<double>(k) / static_cast<double>(n);
  const double bytes_per_item =
      sizeof(int32_t) * (1.0 + kept) * (by_key ? 2.0 : 1.0) + (kind == Kind::Flagged ? 1.0 : 0.0);
  harness.run_case({"select", "i32", variant}, n, bytes_per_item, contenders, [] {});
}

/// partition_if (half kept) against cub::DevicePartition::If and thrust::stable_partition_copy. CUB writes the
/// rejected items backwards from the end: its output is checked against the reference with that part reversed.
void bench_partition_case(prims::bench::Harness& harness, Buffers& b, size_t n) {
  const char* variant = "partition_if 50%";
  if (!harness.selected({"select", "i32", variant})) return;
  const cudaStream_t stream = harness.stream();
  const int32_t* in = b.random.data();
  const int num_items = static_cast<int>(n);
  auto prims_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return prims::device::partition_if(temp, bytes, in, b.prims_out.data(), b.prims_count.data(), n, Odd{}, s);
  };
  auto cub_call = [&](void* temp, size_t& bytes, cudaStream_t s) {
    return cub::DevicePartition::If(temp, bytes, in, b.cub_out.data(), b.cub_count.data(), num_items, Odd{}, s);
  };
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, stream), "prims size");
  prims::check(cub_call(nullptr, cub_bytes, stream), "cub size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);
  // The reference: Thrust's stable partition, untimed, its count checked with thrust::count_if.
  const size_t k = static_cast<size_t>(thrust::count_if(thrust::device, in, in + n, Odd{}));
  const auto ends = thrust::stable_partition_copy(thrust::device, in, in + n, b.reference.data(),
                                                  b.reference.data() + k, Odd{});
  if (static_cast<size_t>(ends.first - b.reference.data()) != k) throw std::runtime_error("the reference's count");
  prims::check(cudaDeviceSynchronize(), "reference");
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, s), "prims"); }},
      {"CUB", [&](cudaStream_t s) { prims::check(cub_call(cub_temp.data(), cub_bytes, s), "cub"); }},
      {"Thrust", [&](cudaStream_t s) {
         thrust::stable_partition_copy(harness.thrust_on(s), in, in + n, b.thrust_out.data(), b.thrust_out.data() + k,
                                       Odd{});
       }},
  };
  contenders[0].check = [&, k] {
    return b.prims_count.download(1)[0] == k && prims::bench::same_bits(b.prims_out.data(), b.reference.data(), n);
  };
  contenders[0].outputs = {prims::bench::output(b.prims_out.data(), n), prims::bench::output(b.prims_count.data(), 1)};
  contenders[1].check = [&, k] {
    const int32_t* rejected = b.reference.data() + k;
    return static_cast<size_t>(b.cub_count.download(1)[0]) == k &&
           prims::bench::same_bits(b.cub_out.data(), b.reference.data(), k) &&
           thrust::equal(thrust::device, b.cub_out.data() + k, b.cub_out.data() + n,
                         thrust::make_reverse_iterator(rejected + (n - k)));
  };
  contenders[1].outputs = {prims::bench::output(b.cub_out.data(), n), prims::bench::output(b.cub_count.data(), 1)};
  contenders[2].check = [&] { return prims::bench::same_bits(b.thrust_out.data(), b.reference.data(), n); };
  contenders[2].outputs = {prims::bench::output(b.thrust_out.data(), n)};
  // What a partition must move: every item read once and written once (prims reads twice: it counts first).
  harness.run_case({"select", "i32", variant}, n, 2.0 * sizeof(int32_t), contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_select", 16, 28, 2);
    const size_t max_n = size_t{1} << harness.max_log2();
    Buffers buffers(max_n);
    prims::bench::generate(buffers.random.data(), max_n, 3,
                           [] __device__(uint64_t bits, size_t) { return static_cast<int32_t>(bits >> 32); });
    prims::bench::generate(buffers.runs.data(), max_n, 4,
                           [] __device__(uint64_t, size_t i) { return static_cast<int32_t>(i / 4); });
    prims::bench::generate(buffers.flags.data(), max_n, 5,
                           [] __device__(uint64_t bits, size_t) { return static_cast<uint8_t>(bits >> 63); });
    prims::check(cudaDeviceSynchronize(), "inputs");
    for (const Kind kind : {Kind::If, Kind::Flagged, Kind::Unique, Kind::UniqueByKey}) {
      for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
        bench_case(harness, buffers, size_t{1} << log2n, kind);
      }
    }
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      bench_partition_case(harness, buffers, size_t{1} << log2n);
    }
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_select: error: {}\n", e.what());
    return 1;
  }
}
