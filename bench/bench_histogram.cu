// bench_histogram: prims::device::histogram_even against cub::DeviceHistogram::HistogramEven (Thrust has no
// histogram), same data, same run: 256 bins of uniform 8-bit samples, 256 and 4096 bins of uniform 32-bit samples,
// and 256 bins of 8-bit samples that all fall in one bin, 2^16..2^28 samples. Every contender's counters are
// compared with a reference: CUB's, whose counts are checked to add up to the number of samples. GB/s counts the
// samples read once.
#include <cub/device/device_histogram.cuh>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/histogram.cuh"

namespace {

using prims::bench::Contender;

struct Buffers {
  prims::DeviceBuffer<uint8_t> bytes, same_bytes;
  prims::DeviceBuffer<int32_t> words;
  prims::DeviceBuffer<unsigned> prims_bins, cub_bins, reference_bins;
  explicit Buffers(size_t n)
      : bytes(n), same_bytes(n), words(n), prims_bins(4096), cub_bins(4096), reference_bins(4096) {}
};

/// One case: samples (8- or 32-bit), num_bins equal bins over [0, upper).
template <class Sample>
void bench_case(prims::bench::Harness& harness, Buffers& b, const Sample* samples, size_t n, int num_bins,
                int upper, const char* type, const std::string& variant) {
  if (!harness.selected({"histogram", type, variant})) return;
  const cudaStream_t stream = harness.stream();
  const int num_samples = static_cast<int>(n);
  auto prims_call = [&](void* temp, size_t& bytes, unsigned* bins, cudaStream_t s) {
    return prims::device::histogram_even(temp, bytes, samples, bins, num_bins, 0, upper, n, s);
  };
  auto cub_call = [&](void* temp, size_t& bytes, unsigned* bins, cudaStream_t s) {
    return cub::DeviceHistogram::HistogramEven(temp, bytes, samples, bins, num_bins + 1, 0, upper, num_samples, s);
  };
  size_t prims_bytes = 0, cub_bytes = 0;
  prims::check(prims_call(nullptr, prims_bytes, nullptr, stream), "prims size");
  prims::check(cub_call(nullptr, cub_bytes, nullptr, stream), "cub size");
  prims::DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);
  prims::check(cub_call(cub_temp.data(), cub_bytes, b.reference_bins.data(), stream), "reference");
  prims::check(cudaStreamSynchronize(stream), "reference");
  const std::vector<unsigned> reference = b.reference_bins.download(static_cast<size_t>(num_bins));
  if (std::accumulate(reference.begin(), reference.end(), size_t{0}) != n) {
    throw std::runtime_error("the reference's counts do not add up to the samples");
  }
  std::vector<Contender> contenders = {
      {"prims", [&](cudaStream_t s) { prims::check(prims_call(prims_temp.data(), prims_bytes, b.prims_bins.data(), s), "prims"); }},
      {"CUB", [&](cudaStream_t s) { prims::check(cub_call(cub_temp.data(), cub_bytes, b.cub_bins.data(), s), "cub"); }},
  };
  const size_t bins = static_cast<size_t>(num_bins);
  contenders[0].check = [&, bins] { return prims::bench::same_bits(b.prims_bins.data(), b.reference_bins.data(), bins); };
  contenders[0].outputs = {prims::bench::output(b.prims_bins.data(), bins)};
  contenders[1].check = [&, bins] { return prims::bench::same_bits(b.cub_bins.data(), b.reference_bins.data(), bins); };
  contenders[1].outputs = {prims::bench::output(b.cub_bins.data(), bins)};
  harness.run_case({"histogram", type, variant}, n, static_cast<double>(sizeof(Sample)), contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "bench_histogram", 16, 28, 2);
    const size_t max_n = size_t{1} << harness.max_log2();
    Buffers buffers(max_n);
    prims::bench::generate(buffers.bytes.data(), max_n, 8,
                           [] __device__(uint64_t bits, size_t) { return static_cast<uint8_t>(bits >> 56); });
    prims::bench::generate(buffers.same_bytes.data(), max_n, 9, [] __device__(uint64_t, size_t) { return uint8_t{77}; });
    prims::bench::generate(buffers.words.data(), max_n, 10,
                           [] __device__(uint64_t bits, size_t) { return static_cast<int32_t>(bits >> 34); });
    prims::check(cudaDeviceSynchronize(), "inputs");
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      const size_t n = size_t{1} << log2n;
      bench_case(harness, buffers, buffers.bytes.data(), n, 256, 256, "u8", "even 256 bins");
      bench_case(harness, buffers, buffers.same_bytes.data(), n, 256, 256, "u8", "even 256 bins, one value");
      bench_case(harness, buffers, buffers.words.data(), n, 256, 1 << 30, "i32", "even 256 bins");
      bench_case(harness, buffers, buffers.words.data(), n, 4096, 1 << 30, "i32", "even 4096 bins");
    }
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_histogram: error: {}\n", e.what());
    return 1;
  }
}
