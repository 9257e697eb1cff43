// prims::device::histogram_even and histogram_range against CPU references: 8-, 16- and 32-bit and float samples,
// 1 to 4096 bins (and more bins than shared memory holds), samples outside the bins and NaNs, one bin holding every
// sample, 4- and 8-byte counters, iterator inputs, every size edge and 2^28 samples. The output is poisoned first:
// every counter must be written.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/histogram.cuh"

namespace {

using prims::DeviceBuffer;

std::vector<size_t> histogram_sizes() {
  std::vector<size_t> sizes = prims::test::edge_sizes(256 * 16);
  sizes.push_back((size_t{1} << 20) + 7);
  return sizes;
}

/// Runs histogram_even on a device copy of `samples` and compares every counter with the CPU's counts by the
/// binning's own definition (EvenBinning::bin; integer bins are checked against plain division below too).
/// The samples start `offset` items past a 16-byte boundary of the device buffer.
template <class Sample, class Counter, class Level>
void check_even(const std::vector<Sample>& samples, int num_bins, Level lower, Level upper, size_t offset = 0) {
  std::vector<Counter> expected(static_cast<size_t>(num_bins), 0);
  const auto binning = prims::detail::EvenBinning<Level>::make(lower, upper, num_bins);
  for (const Sample& x : samples) {
    const int bin = binning.bin(x);
    ASSERT_LT(bin, num_bins);
    if constexpr (std::is_integral_v<Sample> && std::is_integral_v<Level>) {
      if (binning.exact) {
        // Integer bins are exact there: a 128-bit product and division give the same.
        const bool inside = x >= lower && x < upper;
        const auto offset = static_cast<unsigned __int128>(static_cast<unsigned long long>(x) -
                                                           static_cast<unsigned long long>(lower));
        const auto width = static_cast<unsigned __int128>(binning.width);
        const int exact = inside ? static_cast<int>(offset * static_cast<unsigned>(num_bins) / width) : -1;
        ASSERT_EQ(bin, exact) << "sample " << static_cast<long long>(x);
      }
    }
    if (bin >= 0) ++expected[static_cast<size_t>(bin)];
  }
  const size_t n = samples.size();
  DeviceBuffer<Sample> d_samples(std::max<size_t>(n + offset, 1));
  if (n > 0) {
    ASSERT_EQ(cudaMemcpy(d_samples.data() + offset, samples.data(), n * sizeof(Sample), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  DeviceBuffer<Counter> d_histogram(static_cast<size_t>(num_bins));
  d_histogram.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::histogram_even(temp, bytes, d_samples.data() + offset, d_histogram.data(), num_bins, lower,
                                         upper, n);
  });
  const std::vector<Counter> got = d_histogram.download(static_cast<size_t>(num_bins));
  for (int b = 0; b < num_bins; ++b) ASSERT_EQ(got[b], expected[b]) << "bin " << b << " of " << num_bins;
}

TEST(Histogram, EvenBytesOneBinAValueEverySize) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : histogram_sizes()) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    const std::vector<uint8_t> samples = prims::test::random_values<uint8_t>(n, n + 1, false);
    check_even<uint8_t, unsigned>(samples, 256, 0, 256);
    check_even<uint8_t, unsigned long long>(samples, 64, 0, 256);
  }
}

/// A block keeps 32 copies of up to 256 bins, fewer copies of more bins and one copy from 4097 bins on (32 KB),
/// each with an extra bin for samples outside; samples that start short of a 16-byte boundary are read one by one
/// up to it, then as vectors. Power-of-two bins of 8- and 16-bit samples take the shift binning, the others the
/// general one.
TEST(Histogram, EvenEveryCopyCountAndStart) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : {size_t{15}, size_t{4096 * 16 + 5}, size_t{300001}}) {
    const std::vector<uint8_t> bytes = prims::test::random_values<uint8_t>(n, n + 2, false);
    const std::vector<uint16_t> shorts = prims::test::random_values<uint16_t>(n, n + 3, false);
    for (const int num_bins : {1, 3, 255, 256, 257, 1000, 4096, 8191}) {
      for (const size_t offset : {size_t{0}, size_t{1}, size_t{7}, size_t{15}}) {
        SCOPED_TRACE(::testing::Message() << "n = " << n << ", " << num_bins << " bins, offset " << offset);
        check_even<uint8_t, unsigned>(bytes, num_bins, 0, 256, offset);
        check_even<uint16_t, unsigned>(shorts, num_bins, 0, 65536, offset);
      }
    }
  }
}

/// Integer bins must be exact: with 256 equal bins over [0, 256) each count is that of one byte value, counted
/// here without the binning.
TEST(Histogram, EvenBytesMatchValueCounts) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 3 * 4096 + 17;
  const std::vector<uint8_t> samples = prims::test::random_values<uint8_t>(n, 5, false);
  std::vector<int> expected(256, 0);
  for (uint8_t x : samples) ++expected[x];
  DeviceBuffer<uint8_t> d_samples(n);
  d_samples.upload(samples.data(), n);
  DeviceBuffer<int> d_histogram(256);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::histogram_even(temp, bytes, d_samples.data(), d_histogram.data(), 256, 0, 256, n);
  });
  EXPECT_EQ(d_histogram.download(256), expected);
}

TEST(Histogram, EvenSixteenAndThirtyTwoBitSamples) {
  PRIMS_REQUIRE_GPU();
  for (const size_t n : {size_t{1}, size_t{4095}, size_t{100003}}) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    check_even<uint16_t, unsigned>(prims::test::random_values<uint16_t>(n, n, false), 4096, 0, 65536);
    check_even<uint16_t, unsigned>(prims::test::random_values<uint16_t>(n, n + 1, false), 100, 1000, 60000);
    std::vector<int32_t> ints(n);
    std::mt19937 rng(static_cast<unsigned>(n));
    for (auto& x : ints) x = static_cast<int32_t>(rng() % (1u << 22)) - (1 << 21);
    check_even<int32_t, int>(ints, 4096, -(1 << 20), 1 << 20);  // a quarter of the samples fall outside
    check_even<int32_t, size_t>(ints, 256, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  }
}

/// 64-bit levels: a narrow range far from zero (exact), and ranges too wide for an exact product (the double
/// formula), one whose width is 5 * 2^60 bins' worth: no bin may fall outside and none may be counted twice.
TEST(Histogram, EvenSixtyFourBitLevels) {
  PRIMS_REQUIRE_GPU();
  std::mt19937_64 rng(21);
  const int64_t far = 1000000000000000000;
  std::vector<int64_t> near_far(100003);
  for (auto& x : near_far) x = far - 200 + static_cast<int64_t>(rng() % 3500);
  check_even<int64_t, unsigned>(near_far, 1000, far, far + 3000);
  check_even<int64_t, unsigned>(near_far, 100, far + 700, far + 1700);
  std::vector<int64_t> wide(100003);
  for (auto& x : wide) x = static_cast<int64_t>(rng());
  check_even<int64_t, unsigned long long>(wide, 6, -(int64_t{1} << 62), int64_t{1} << 62);
  check_even<int64_t, unsigned long long>(wide, 5, int64_t{0}, int64_t{1} << 62);
  check_even<int64_t, unsigned long long>(wide, 7, int64_t{0}, int64_t{8000000000000000000});
}

/// Float samples, some outside [lower, upper), NaNs (never counted), and the upper edge (not counted).
TEST(Histogram, EvenFloatsWithNaNsAndEdges) {
  PRIMS_REQUIRE_GPU();
  const size_t n = 200003;
  std::vector<float> samples = prims::test::random_values<float>(n, 9);
  for (size_t i = 0; i < n; i += 97) samples[i] = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 5; i < n; i += 101) samples[i] = 0.5f;    // the upper edge
  for (size_t i = 7; i < n; i += 103) samples[i] = -0.5f;   // the lower edge
  size_t inside = 0;
  for (float x : samples) inside += x >= -0.5f && x < 0.5f ? 1 : 0;
  check_even<float, unsigned>(samples, 100, -0.5f, 0.5f);
  check_even<float, unsigned>(samples, 7, -0.5, 0.5);  // double levels
  // The counts add up to the samples inside, whatever the binning.
  DeviceBuffer<float> d_samples(n);
  d_samples.upload(samples.data(), n);
  DeviceBuffer<unsigned long long> d_histogram(1000);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::histogram_even(temp, bytes, d_samples.data(), d_histogram.data(), 1000, -0.5f, 0.5f, n);
  });
  const std::vector<unsigned long long> got = d_histogram.download(1000);
  unsigned long long total = 0;
  for (auto c : got) total += c;
  EXPECT_EQ(total, inside);
}

/// histogram_range against std::upper_bound over the levels.
template <class Sample, class Level>
void check_range(const std::vector<Sample>& samples, const std::vector<Level>& levels) {
  const int num_bins = static_cast<int>(levels.size()) - 1;
  std::vector<unsigned> expected(static_cast<size_t>(num_bins), 0);
  for (const Sample& x : samples) {
    if (!(x >= levels.front() && x < levels.back())) continue;
    const auto above = std::upper_bound(levels.begin(), levels.end(), static_cast<Level>(x));
    ++expected[static_cast<size_t>(above - levels.begin() - 1)];
  }
  const size_t n = samples.size();
  DeviceBuffer<Sample> d_samples(std::max<size_t>(n, 1));
  if (n > 0) d_samples.upload(samples.data(), n);
  DeviceBuffer<Level> d_levels(levels.size());
  d_levels.upload(levels.data(), levels.size());
  DeviceBuffer<unsigned> d_histogram(static_cast<size_t>(num_bins));
  d_histogram.fill_bytes(0xAB);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::histogram_range(temp, bytes, d_samples.data(), d_histogram.data(), num_bins,
                                          d_levels.data(), n);
  });
  const std::vector<unsigned> got = d_histogram.download(static_cast<size_t>(num_bins));
  for (int b = 0; b < num_bins; ++b) ASSERT_EQ(got[b], expected[b]) << "bin " << b << " of " << num_bins;
}

TEST(Histogram, RangeEverySizeAndLevels) {
  PRIMS_REQUIRE_GPU();
  for (const int num_bins : {1, 7, 256, 4096}) {
    std::vector<float> levels = prims::test::random_values<float>(static_cast<size_t>(num_bins) + 1, num_bins);
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    for (const size_t n : histogram_sizes()) {
      SCOPED_TRACE(::testing::Message() << "bins " << levels.size() - 1 << ", n = " << n);
      std::vector<float> samples = prims::test::random_values<float>(n, n * 3 + 1);
      for (size_t i = 0; i < n; i += 89) samples[i] = std::numeric_limits<float>::quiet_NaN();
      check_range(samples, levels);
    }
  }
  // Integer samples, double levels.
  const std::vector<double> levels = {-100.0, -10.5, 0.0, 3.0, 3.5, 1000.0};
  std::vector<int> samples(50021);
  std::mt19937 rng(3);
  for (auto& x : samples) x = static_cast<int>(rng() % 2400) - 1200;
  check_range(samples, levels);
}

/// Every sample in one bin (the shared-memory atomics all on one address), and zero samples (counters zeroed).
/// Runs of one value (a 16-byte vector of them is counted with one atomic): runs of 1 to 64 samples at any offset,
/// values inside and outside the bins, shift, general and range binning, NaN runs.
TEST(Histogram, RunsOfOneValue) {
  PRIMS_REQUIRE_GPU();
  std::mt19937 rng(17);
  const auto runs = [&](size_t n, auto draw) {
    std::vector<decltype(draw())> samples;
    while (samples.size() < n) samples.insert(samples.end(), 1 + rng() % 64, draw());
    samples.resize(n);
    return samples;
  };
  const size_t n = 300007;
  const auto bytes = runs(n, [&] { return static_cast<uint8_t>(rng()); });
  const auto shorts = runs(n, [&] { return static_cast<uint16_t>(rng() % 3000); });
  const auto ints = runs(n, [&] { return static_cast<int32_t>(rng() % 5000) - 1000; });
  for (const size_t offset : {size_t{0}, size_t{3}}) {
    SCOPED_TRACE(::testing::Message() << "offset " << offset);
    check_even<uint8_t, unsigned>(bytes, 256, 0, 256, offset);    // shift binning
    check_even<uint8_t, unsigned>(bytes, 64, 32, 200, offset);    // general binning, values outside
    check_even<uint16_t, unsigned>(shorts, 1024, 0, 2048, offset);  // shift binning, values outside
    check_even<int32_t, int>(ints, 100, 0, 3000, offset);
  }
  std::vector<float> floats = runs(n, [&] { return static_cast<float>(rng() % 1000) / 100.0f - 2.0f; });
  for (size_t i = 0; i < 64; ++i) floats[1000 + i] = std::numeric_limits<float>::quiet_NaN();
  check_range(floats, std::vector<float>{-1.0f, 0.0f, 0.5f, 2.0f, 7.5f});
}

TEST(Histogram, OneBinHoldsEverySampleAndEmptyInputZeroes) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 22) + 3;
  const std::vector<uint8_t> samples(n, 200);
  check_even<uint8_t, unsigned>(samples, 256, 0, 256);
  check_even<uint8_t, unsigned>(std::vector<uint8_t>{}, 256, 0, 256);
}

/// More bins than a block's shared memory holds: every sample counted straight in the output.
TEST(Histogram, MoreBinsThanSharedMemory) {
  PRIMS_REQUIRE_GPU();
  const int num_bins = 100000;  // 400 KB of counters
  std::vector<uint32_t> samples(1000003);
  std::mt19937 rng(11);
  for (auto& x : samples) x = rng() % 120000;
  check_even<uint32_t, unsigned>(samples, num_bins, 0u, 100000u);
  std::vector<double> levels(static_cast<size_t>(num_bins) + 1);
  for (size_t i = 0; i < levels.size(); ++i) levels[i] = static_cast<double>(i) * 1.1;
  check_range(samples, levels);
}

struct Scramble {
  __host__ __device__ uint8_t operator()(uint32_t i) const { return static_cast<uint8_t>((i * 2654435761u) >> 24); }
};

/// 2^28 samples from an iterator (a hash of the position's top byte), checked against the CPU's counts.
TEST(Histogram, LargeIteratorInput) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 28;
  const auto samples = thrust::make_transform_iterator(thrust::make_counting_iterator<uint32_t>(0), Scramble{});
  DeviceBuffer<unsigned> d_histogram(256);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return prims::device::histogram_even(temp, bytes, samples, d_histogram.data(), 256, 0, 256, n);
  });
  std::vector<unsigned> expected(256, 0);
  for (size_t i = 0; i < n; ++i) ++expected[Scramble{}(static_cast<uint32_t>(i))];
  EXPECT_EQ(d_histogram.download(256), expected);
}

TEST(Histogram, BadArgumentsAreInvalidValue) {
  PRIMS_REQUIRE_GPU();
  DeviceBuffer<uint8_t> samples(16);
  DeviceBuffer<unsigned> histogram(4);
  size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::histogram_even(nullptr, bytes, samples.data(), histogram.data(), 4, 0, 256, 16));
  DeviceBuffer<unsigned char> temp(bytes);
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::histogram_even(temp.data(), bytes, samples.data(), histogram.data(), 0, 0, 256, 16));
  EXPECT_EQ(cudaErrorInvalidValue,
            prims::device::histogram_even(temp.data(), bytes, samples.data(), histogram.data(), 4, 10, 10, 16));
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::histogram_range(temp.data(), bytes, samples.data(),
                                                                  histogram.data(), 4, static_cast<const float*>(nullptr), 16));
  cudaGetLastError();
}

}  // namespace
