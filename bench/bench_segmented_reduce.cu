// bench_segmented_reduce: prims::device::segmented_reduce (sum) against cub::DeviceSegmentedReduce::Sum (Thrust has
// no segmented reduction), same data, same run: i32 items 2^20..2^28 as segments of 256 items (n / 256 of them) and
// as 256 segments (of n / 256 items). Every contender's sums are compared with a reference: CUB's, itself checked
// on a sample of segments against the CPU. GB/s counts the items read once.
#include <cub/device/device_segmented_reduce.cuh>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/segmented_reduce.cuh"

namespace {

using prims::bench::Contender;

struct Buffers {
  prims::DeviceBuffer<int32_t> items;
  prims::DeviceBuffer<int64_t> offsets;
  prims::DeviceBuffer<int32_t> prims_out, cub_out, reference;
  explicit Buffers(size_t n)
      : items(n), offsets(n / 256 + 1), prims_out(n / 256), cub_out(n / 256), reference(n / 256) {}
};

void bench_case(prims::bench::Harness& harness, Buffers& b, size_t n, size_t segments, const std::string& variant) {
  if (!harness.selected({"segmented_reduce", "i32", variant})) return;
  const cudaStream_t stream = harness.stream();
  const size_t length = n / segments;
  std::vector<int64_t> offsets(segments + 1);
  for (size_t s = 0; s <= segments; ++s) offsets[s] = static_cast<int64_t>(s * length);
  b.offsets.upload(offsets.data(), segments + 1);
  const int64_t* begins = b.offsets.data();
  const int64_t* ends = b.offsets.data() + 1;
  auto prims_call = [&](void* temp, size_t& bytes, int32_t* out, cudaStream_t s) {
    return prims::device::segmented_reduce(temp, bytes, b.items.data(), out, segments, begins, ends, prims::Sum{},
                                           int32_t{0}, s);
  };
  auto cub_call = [&](void* temp, size_t& bytes, int32_t* out, cudaStream_t s) {
    return cub::DeviceSegmentedReduce::Sum(temp, bytes, b.items.data(), out, static_cast<int64_t>(segments), begins,
                                           ends, s);
  };
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, nullptr, stream), "prims size");
  prims::check(cub_call(nullptr, cub_bytes, nullptr, stream), "cub size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);
  prims::check(cub_call(cub_temp.data(), cub_bytes, b.reference.data(), stream), "reference");
  prims::check(cudaStreamSynchronize(stream), "reference");
  // The reference checked on its first and last segments.
  const std::vector<int32_t> sums = b.reference.download(segments);
  for (const size_t s : {size_t{0}, segments - 1}) {
    const std::vector<int32_t> items = b.items.download(s * length + length);
    int32_t sum = 0;
    for (size_t i = s * length; i < s * length + length; ++i) sum += items[i];
    if (sum != sums[s]) throw std::runtime_error("the reference's sum of segment " + std::to_string(s));
  }
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, b.prims_out.data(), s), "prims"); }},
      {"CUB", [&](cudaStream_t s) { prims::check(cub_call(cub_temp.data(), cub_bytes, b.cub_out.data(), s), "cub"); }},
  };
  contenders[0].check = [&, segments] { return prims::bench::same_bits(b.prims_out.data(), b.reference.data(), segments); };
  contenders[0].outputs = {prims::bench::output(b.prims_out.data(), segments)};
  contenders[1].check = [&, segments] { return prims::bench::same_bits(b.cub_out.data(), b.reference.data(), segments); };
  contenders[1].outputs = {prims::bench::output(b.cub_out.data(), segments)};
  harness.run_case({"segmented_reduce", "i32", variant}, n, sizeof(int32_t), contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_segmented_reduce", 20, 28, 2);
    const size_t max_n = size_t{1} << harness.max_log2();
    Buffers buffers(max_n);
    prims::bench::generate(buffers.items.data(), max_n, 12,
                           [] __device__(uint64_t bits, size_t) { return static_cast<int32_t>(bits >> 54); });
    prims::check(cudaDeviceSynchronize(), "inputs");
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      const size_t n = size_t{1} << log2n;
      bench_case(harness, buffers, n, n / 256, "segments of 256");
      bench_case(harness, buffers, n, 256, "256 segments");
    }
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_segmented_reduce: error: {}\n", e.what());
    return 1;
  }
}
