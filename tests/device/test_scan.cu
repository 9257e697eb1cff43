// prims::device scans against CPU references: both algorithms, inclusive and exclusive, every type, every size
// edge (tiles, look-back windows, spans), unaligned and in-place layouts, custom ops (max, and affine-map
// composition, which is not commutative), float sums against a double reference, and large inputs validated on
// the GPU (2^28 items, and more than 2^32 items).
//
// Outputs are poisoned before each run, and the poison must survive around the n outputs (before an offset
// output and past its end): n == 0 writes nothing. Out of place, the input is read back unchanged.
//
// Float sums: every partial sum the scan forms is a sum of a contiguous range of inputs (with init), so it is at most
// R = |init| + 2 max |exact prefix| + (the largest sum of |x| over one tile) in magnitude, and output i is formed
// through at most D = (items a thread + log2 of the block + 1) + 2 (tiles up to i) + log2 n roundings on a path:
// |got - exact| <= D * epsilon * R (scan_tolerance), with `exact` from a long double reference. It bounds one path's
// roundings, not the sum over every addition that feeds output i (the worst case, which grows with the sum of |x|),
// so it is a tolerance for inputs whose rounding errors cancel as those of the tests' random inputs do: a few
// hundred epsilons of R at 2^20, where 1e-5 of the sum of |x| was about 5. Integers are exact
// (wrapping for unsigned and for the GPU-validated large tests).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <cstring>
#include <type_traits>

#include "affine.cuh"
#include "gpu_test.cuh"
#include "late_stream.cuh"
#include "prims/device/scan.cuh"

namespace {

using prims::device::ScanAlgorithm;
using prims::test::Affine;
using prims::test::Compose;

constexpr unsigned char kPoison = 0xAB;
constexpr size_t kGuard = 5;  // poisoned items past the end of the output that must stay poisoned

template <class T>
size_t tile_items(ScanAlgorithm algorithm) {
  using namespace prims::detail;
  return algorithm == ScanAlgorithm::SinglePass ? scan::ScanTile<TuningSm90::SinglePassScan<T>, T>::tile_items
                                                : scan::ScanTile<TuningSm90::ReduceThenScan, T>::tile_items;
}

/// Sizes at the edges that matter: edge_sizes (0, 1, warp, block, tile edges, primes), look-back windows of 32
/// tiles, the span count of reduce-then-scan (a grid of blocks_per_sm per SM), and 2^20 + 7.
template <class T>
std::vector<size_t> scan_sizes(ScanAlgorithm algorithm) {
  const size_t tile = tile_items<T>(algorithm);
  std::vector<size_t> sizes = prims::test::edge_sizes(tile);
  int multiprocessors = 0;
  prims::check(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0), "SM count");
  const size_t spans =
      static_cast<size_t>(multiprocessors) * prims::detail::TuningSm90::ReduceThenScan::blocks_per_sm;
  for (size_t tiles : {size_t{32}, size_t{33}, size_t{65}, spans, spans + 1}) {
    for (long delta : {-1, 0, 1}) sizes.push_back(tiles * tile + delta);
  }
  sizes.push_back((size_t{1} << 20) + 7);
  return sizes;
}

/// a op b on the host, with integer sums wrapping (as on the GPU) instead of overflowing.
template <class T, class Op>
T host_op(Op op, const T& a, const T& b) {
  if constexpr (std::is_integral_v<T> && std::is_same_v<Op, prims::Sum>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return op(a, b);
  }
}

template <bool EXCLUSIVE, class T, class Op>
std::vector<T> cpu_scan(const std::vector<T>& in, Op op, T init) {
  std::vector<T> out(in.size());
  if (in.empty()) return out;
  T running = EXCLUSIVE ? init : in[0];
  for (size_t i = 0; i < in.size(); ++i) {
    if (EXCLUSIVE) {
      out[i] = running;
      running = host_op(op, running, in[i]);
    } else {
      if (i > 0) running = host_op(op, running, in[i]);
      out[i] = running;
    }
  }
  return out;
}

template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T, class Op>
cudaError_t device_scan(void* temp, size_t& bytes, const T* in, T* out, size_t n, Op op, T init) {
  if constexpr (EXCLUSIVE) {
    return prims::device::exclusive_scan<ALGORITHM>(temp, bytes, in, out, n, op, init);
  } else {
    return prims::device::inclusive_scan<ALGORITHM>(temp, bytes, in, out, n, op);
  }
}

template <class T>
bool is_poison(const T& value) {
  unsigned char poison[sizeof(T)];
  std::memset(poison, kPoison, sizeof(T));
  return std::memcmp(&value, poison, sizeof(T)) == 0;
}

/// Where the scan reads and writes: offsets in items from 16-byte aligned allocations, or one shared buffer.
struct Layout {
  size_t in_offset;
  size_t out_offset;
  bool in_place;
};

/// Roundings on the path of one item through a tile of one algorithm: its thread's sequential sum, the block scan's
/// tree, the carry in.
template <class Tile>
double tile_levels() {
  return Tile::items_per_thread + std::ceil(std::log2(static_cast<double>(Tile::block_threads))) + 1;
}

/// The bound of the file comment on |got[i] - exact[i]| for a float sum scan of n items, for the tiles of both
/// algorithms (the smaller counts tiles, the deeper one's levels count).
template <class T>
std::vector<double> scan_tolerance(const std::vector<T>& host, T init, size_t n) {
  using SinglePassTile = prims::detail::scan::ScanTile<prims::detail::TuningSm90::SinglePassScan<T>, T>;
  using ReduceThenScanTile = prims::detail::scan::ScanTile<prims::detail::TuningSm90::ReduceThenScan, T>;
  const size_t small_tile = std::min<size_t>(SinglePassTile::tile_items, ReduceThenScanTile::tile_items);
  const double levels = std::max(tile_levels<SinglePassTile>(), tile_levels<ReduceThenScanTile>());
  const double log_n = std::ceil(std::log2(static_cast<double>(n) + 1));
  double tile_magnitude = 0, running = 0;
  for (size_t i = 0; i < n; ++i) {
    running = (i % small_tile == 0 ? 0 : running) + std::fabs(static_cast<double>(host[i]));
    tile_magnitude = std::max(tile_magnitude, running);
  }
  std::vector<double> tolerance(n);
  double prefix = 0, largest_prefix = 0;
  for (size_t i = 0; i < n; ++i) {
    prefix += host[i];
    largest_prefix = std::max(largest_prefix, std::fabs(prefix));
    const double range_bound = std::fabs(static_cast<double>(init)) + 2 * largest_prefix + tile_magnitude;
    const double depth = levels + 2 * static_cast<double>(i / small_tile + 1) + log_n;
    tolerance[i] = depth * std::numeric_limits<T>::epsilon() * range_bound;
  }
  return tolerance;
}

/// The first i where got[i] is off the double reference by more than scan_tolerance, or -1.
template <bool EXCLUSIVE, class T>
long first_float_scan_error(const std::vector<T>& got, const std::vector<T>& host, T init, size_t n) {
  const std::vector<double> tolerance = scan_tolerance(host, init, n);  // exclusive outputs hold fewer items
  long double exact = EXCLUSIVE ? static_cast<long double>(init) : 0.0L;
  for (size_t i = 0; i < n; ++i) {
    if (!EXCLUSIVE) exact += host[i];
    if (!(std::fabs(static_cast<long double>(got[i]) - exact) <= tolerance[i])) return static_cast<long>(i);
    if (EXCLUSIVE) exact += host[i];
  }
  return -1;
}

/// Checks got[i] against the CPU scan: within scan_tolerance for float sums, exactly otherwise.
template <bool EXCLUSIVE, class T, class Op>
void expect_scan_matches(const std::vector<T>& got, const std::vector<T>& host, Op op, T init, size_t n) {
  if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, prims::Sum>) {
    const long i = first_float_scan_error<EXCLUSIVE>(got, host, init, n);
    ASSERT_EQ(-1, i) << "n = " << n << ", got[i] = " << (i >= 0 ? got[i] : T(0));
  } else {
    const std::vector<T> expected = cpu_scan<EXCLUSIVE>(host, op, init);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], expected[i]) << "n = " << n << ", i = " << i;
    }
  }
}

/// The float tolerance catches one item of 2^20 (of magnitude at least 0.95) left out of the scan, which the
/// earlier bound of 1e-5 times the sum of |x| (about 2.6 there) let pass; a double reference rounded to float passes.
TEST(ScanTolerance, CatchesOneMissingItem) {
  using T = float;
  const size_t n = (size_t{1} << 20) + 7;
  const std::vector<T> host = prims::test::random_values<T>(n, 31);
  size_t dropped = n / 2;
  while (std::fabs(host[dropped]) < 0.95f) ++dropped;
  std::vector<T> rounded(n), missing(n);
  double exact = 0;
  for (size_t i = 0; i < n; ++i) {
    exact += host[i];
    rounded[i] = static_cast<T>(exact);
    missing[i] = static_cast<T>(i >= dropped ? exact - host[dropped] : exact);
  }
  EXPECT_LT(scan_tolerance(host, T(0), n).back(), 0.9);
  EXPECT_EQ(-1, first_float_scan_error<false>(rounded, host, T(0), n));
  EXPECT_EQ(static_cast<long>(dropped), first_float_scan_error<false>(missing, host, T(0), n));
}

/// Runs one scan of `host` in `layout` and checks every output and the poison around them.
template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T, class Op>
void check_scan(const std::vector<T>& host, Op op, T init, Layout layout) {
  const size_t n = host.size();
  SCOPED_TRACE(::testing::Message() << (ALGORITHM == ScanAlgorithm::SinglePass ? "SinglePass" : "ReduceThenScan")
                                    << (EXCLUSIVE ? " exclusive" : " inclusive") << ", n = " << n << ", offsets "
                                    << layout.in_offset << "/" << layout.out_offset
                                    << (layout.in_place ? ", in place" : ""));
  prims::DeviceBuffer<T> out(layout.out_offset + n + kGuard);
  prims::DeviceBuffer<T> separate_in(layout.in_place ? 0 : layout.in_offset + n);
  out.fill_bytes(kPoison);
  T* out_ptr = out.data() + layout.out_offset;
  const T* in_ptr = out_ptr;
  if (!layout.in_place) {
    in_ptr = separate_in.data() + layout.in_offset;
  }
  if (n > 0) {
    prims::check(cudaMemcpy(const_cast<T*>(in_ptr), host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return device_scan<ALGORITHM, EXCLUSIVE>(temp, bytes, in_ptr, out_ptr, n, op, init);
  });
  if (!layout.in_place && n > 0) {
    std::vector<T> input_after(n);
    prims::check(cudaMemcpy(input_after.data(), in_ptr, n * sizeof(T), cudaMemcpyDeviceToHost), "download");
    ASSERT_EQ(0, std::memcmp(input_after.data(), host.data(), n * sizeof(T))) << "input changed";
  }
  const std::vector<T> all = out.download();
  for (size_t i = 0; i < layout.out_offset; ++i) ASSERT_TRUE(is_poison(all[i])) << "written before the output: " << i;
  for (size_t i = 0; i < kGuard; ++i) {
    ASSERT_TRUE(is_poison(all[layout.out_offset + n + i])) << "written past the end: n + " << i;
  }
  expect_scan_matches<EXCLUSIVE>(std::vector<T>(all.begin() + layout.out_offset, all.end() - kGuard), host, op, init,
                                 n);
}

template <ScanAlgorithm ALGORITHM, class T, class Op>
void check_both_kinds(const std::vector<T>& host, Op op, T init, Layout layout) {
  check_scan<ALGORITHM, false>(host, op, init, layout);
  check_scan<ALGORITHM, true>(host, op, init, layout);
}

template <class T>
class DeviceScanTyped : public ::testing::Test {};
using ScanTypes = ::testing::Types<int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(DeviceScanTyped, ScanTypes);

template <ScanAlgorithm ALGORITHM, class T>
void check_sum_every_size() {
  for (size_t n : scan_sizes<T>(ALGORITHM)) {
    check_both_kinds<ALGORITHM>(prims::test::random_values<T>(n, n + 17), prims::Sum{}, T(3), Layout{0, 0, false});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TYPED_TEST(DeviceScanTyped, SumEverySizeSinglePass) {
  PRIMS_REQUIRE_GPU();
  check_sum_every_size<ScanAlgorithm::SinglePass, TypeParam>();
}

TYPED_TEST(DeviceScanTyped, SumEverySizeReduceThenScan) {
  PRIMS_REQUIRE_GPU();
  check_sum_every_size<ScanAlgorithm::ReduceThenScan, TypeParam>();
}

template <ScanAlgorithm ALGORITHM, class T>
void check_layouts() {
  const size_t tile = tile_items<T>(ALGORITHM);
  for (size_t n : {size_t{1}, size_t{33}, tile - 1, tile + 1, 3 * tile + 17, 40 * tile + 3}) {
    for (Layout layout : {Layout{1, 0, false}, Layout{0, 3, false}, Layout{1, 3, false}, Layout{2, 2, false},
                          Layout{0, 0, true}, Layout{1, 1, true}}) {
      check_both_kinds<ALGORITHM>(prims::test::random_values<T>(n, n * 3 + layout.in_offset), prims::Sum{}, T(1),
                                  layout);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TYPED_TEST(DeviceScanTyped, UnalignedAndInPlaceSinglePass) {
  PRIMS_REQUIRE_GPU();
  check_layouts<ScanAlgorithm::SinglePass, TypeParam>();
}

TYPED_TEST(DeviceScanTyped, UnalignedAndInPlaceReduceThenScan) {
  PRIMS_REQUIRE_GPU();
  check_layouts<ScanAlgorithm::ReduceThenScan, TypeParam>();
}

template <ScanAlgorithm ALGORITHM, class T>
void check_max() {
  for (size_t n : {size_t{1}, size_t{1000}, 5 * tile_items<T>(ALGORITHM) + 3, size_t{1} << 20}) {
    check_both_kinds<ALGORITHM>(prims::test::random_values<T>(n, n + 5, /*small=*/false), prims::Max{},
                                std::numeric_limits<T>::lowest(), Layout{0, 0, false});
  }
}

TYPED_TEST(DeviceScanTyped, RunningMaxBothAlgorithms) {
  PRIMS_REQUIRE_GPU();
  check_max<ScanAlgorithm::SinglePass, TypeParam>();
  check_max<ScanAlgorithm::ReduceThenScan, TypeParam>();
}

TYPED_TEST(DeviceScanTyped, SumsThroughTheDefaultAlgorithm) {
  PRIMS_REQUIRE_GPU();
  using T = TypeParam;
  for (size_t n : {size_t{0}, size_t{1}, size_t{4097}, (size_t{1} << 20) + 7}) {
    const std::vector<T> host = prims::test::random_values<T>(n, n + 99);
    prims::DeviceBuffer<T> in(n + 1), out(n + 1);
    if (n > 0) in.upload(host);
    out.fill_bytes(kPoison);
    prims::test::run_two_phase(
        [&](void* temp, size_t& bytes) { return prims::device::inclusive_sum(temp, bytes, in.data(), out.data(), n); });
    expect_scan_matches<false>(out.download(), host, prims::Sum{}, T(0), n);
    out.fill_bytes(kPoison);
    prims::test::run_two_phase(
        [&](void* temp, size_t& bytes) { return prims::device::exclusive_sum(temp, bytes, in.data(), out.data(), n); });
    expect_scan_matches<true>(out.download(), host, prims::Sum{}, T(0), n);
    // In place, as the radix sort uses it for its digit offsets.
    prims::test::run_two_phase(
        [&](void* temp, size_t& bytes) { return prims::device::exclusive_sum(temp, bytes, in.data(), in.data(), n); });
    expect_scan_matches<true>(in.download(), host, prims::Sum{}, T(0), n);
  }
}

/// Affine-map composition is associative but not commutative: any item combined out of order shows.
template <ScanAlgorithm ALGORITHM>
void check_affine() {
  for (size_t n : scan_sizes<Affine>(ALGORITHM)) {
    check_both_kinds<ALGORITHM>(prims::test::random_affine(n, n + 1), Compose{}, Affine{7, 9}, Layout{0, 0, false});
    if (::testing::Test::HasFatalFailure()) return;
  }
  const size_t tile = tile_items<Affine>(ALGORITHM);
  for (Layout layout : {Layout{1, 2, false}, Layout{1, 1, true}}) {
    check_both_kinds<ALGORITHM>(prims::test::random_affine(70 * tile + 5, 3), Compose{}, Affine{7, 9}, layout);
  }
}

TEST(DeviceScan, AffineCompositionKeepsOrderSinglePass) {
  PRIMS_REQUIRE_GPU();
  check_affine<ScanAlgorithm::SinglePass>();
}

TEST(DeviceScan, AffineCompositionKeepsOrderReduceThenScan) {
  PRIMS_REQUIRE_GPU();
  check_affine<ScanAlgorithm::ReduceThenScan>();
}

/// A 12-byte item (not a vector size): the scalar load path and the separate flag/value tile status.
struct Triple {
  int x, y, z;
  friend bool operator==(const Triple& a, const Triple& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
  friend std::ostream& operator<<(std::ostream& os, const Triple& t) {
    return os << "{" << t.x << ", " << t.y << ", " << t.z << "}";
  }
};
struct TripleSum {
  __host__ __device__ Triple operator()(const Triple& a, const Triple& b) const {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
  }
};

TEST(DeviceScan, TwelveByteStruct) {
  PRIMS_REQUIRE_GPU();
  for (size_t n : {size_t{1}, size_t{1281}, size_t{100003}}) {
    const std::vector<int> values = prims::test::random_values<int>(3 * n, n);
    std::vector<Triple> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = {values[3 * i], values[3 * i + 1], values[3 * i + 2]};
    check_both_kinds<ScanAlgorithm::SinglePass>(host, TripleSum{}, Triple{1, 2, 3}, Layout{0, 0, false});
    check_both_kinds<ScanAlgorithm::ReduceThenScan>(host, TripleSum{}, Triple{1, 2, 3}, Layout{0, 1, false});
  }
}

TEST(DeviceScan, Large2To24) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 24;
  check_both_kinds<ScanAlgorithm::SinglePass>(prims::test::random_values<int32_t>(n, 24), prims::Sum{}, 0,
                                              Layout{0, 0, false});
  check_both_kinds<ScanAlgorithm::ReduceThenScan>(prims::test::random_values<int32_t>(n, 25), prims::Sum{}, 0,
                                                  Layout{0, 0, true});
  check_both_kinds<ScanAlgorithm::SinglePass>(prims::test::random_values<float>(n, 26), prims::Sum{}, 0.0f,
                                              Layout{0, 0, true});
  check_both_kinds<ScanAlgorithm::ReduceThenScan>(prims::test::random_values<uint64_t>(n, 27), prims::Sum{},
                                                  uint64_t{0}, Layout{1, 0, false});
}

// ---- Large inputs, generated and validated on the GPU. With wrapping unsigned sums, out is the exact scan
// when out[0] is right and every difference out[i] - out[i - 1] is the item that scan adds at i.

__host__ __device__ inline uint32_t item_at(size_t i) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x >> 17);
}

template <class T>
__global__ void fill_kernel(T* data, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    data[i] = static_cast<T>(item_at(i));
  }
}

template <bool EXCLUSIVE, class T>
__global__ void count_mismatches_kernel(const T* out, size_t n, T init, unsigned long long* mismatches) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    bool ok;
    if (i == 0) {
      ok = out[0] == (EXCLUSIVE ? init : static_cast<T>(item_at(0)));
    } else {
      ok = static_cast<T>(out[i] - out[i - 1]) == static_cast<T>(item_at(EXCLUSIVE ? i - 1 : i));
    }
    if (!ok) atomicAdd(mismatches, 1ull);
  }
}

template <ScanAlgorithm ALGORITHM, bool EXCLUSIVE, class T>
void check_large_on_gpu(size_t n, bool in_place) {
  SCOPED_TRACE(::testing::Message() << (ALGORITHM == ScanAlgorithm::SinglePass ? "SinglePass" : "ReduceThenScan")
                                    << (EXCLUSIVE ? " exclusive" : " inclusive") << ", n = " << n
                                    << (in_place ? ", in place" : ""));
  constexpr unsigned blocks = 1024, threads = 256;
  prims::DeviceBuffer<T> in(n), separate_out(in_place ? 0 : n);
  T* out = in_place ? in.data() : separate_out.data();
  fill_kernel<<<blocks, threads>>>(in.data(), n);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  if (!in_place) separate_out.fill_bytes(kPoison);
  const T init = T(77);
  prims::test::run_two_phase([&](void* temp, size_t& bytes) {
    return device_scan<ALGORITHM, EXCLUSIVE>(temp, bytes, in.data(), out, n, prims::Sum{}, init);
  });
  prims::DeviceBuffer<unsigned long long> mismatches(1);
  mismatches.fill_bytes(0);
  count_mismatches_kernel<EXCLUSIVE><<<blocks, threads>>>(out, n, init, mismatches.data());
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  EXPECT_EQ(mismatches.download()[0], 0ull);
}

TEST(DeviceScan, Large2To28ValidatedOnGpu) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 28;
  check_large_on_gpu<ScanAlgorithm::SinglePass, true, uint32_t>(n, false);
  check_large_on_gpu<ScanAlgorithm::SinglePass, false, uint32_t>(n, true);
  check_large_on_gpu<ScanAlgorithm::ReduceThenScan, true, uint32_t>(n, true);
  check_large_on_gpu<ScanAlgorithm::ReduceThenScan, false, uint32_t>(n, false);
  check_large_on_gpu<ScanAlgorithm::SinglePass, true, uint64_t>(n + 3, true);
}

TEST(DeviceScan, LargeBeyond2To32ItemsValidatedOnGpu) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{1} << 32) + 4099;  // 4 GiB of bytes, in place
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaSuccess, cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < n + (size_t{1} << 28)) GTEST_SKIP() << "needs more than 4 GiB of free device memory";
  check_large_on_gpu<ScanAlgorithm::SinglePass, false, uint8_t>(n, true);
  check_large_on_gpu<ScanAlgorithm::ReduceThenScan, true, uint8_t>(n, true);
}

/// Both algorithms, inclusive and exclusive, on a non-blocking stream with work queued before and after them.
TEST(DeviceScan, RunsOnItsStream) {
  PRIMS_REQUIRE_GPU();
  const size_t n = (size_t{3} << 20) + 5;
  const std::vector<int64_t> host = prims::test::random_values<int64_t>(n, 4);
  auto check = [&](auto algorithm, auto exclusive) {
    constexpr ScanAlgorithm kAlgorithm = decltype(algorithm)::value;
    constexpr bool kExclusive = decltype(exclusive)::value;
    const std::vector<int64_t> expected = cpu_scan<kExclusive>(host, prims::Sum{}, int64_t{7});
    prims::DeviceBuffer<int64_t> in(n), out(n);
    auto call = [&](void* temp, size_t& bytes, cudaStream_t s) {
      if constexpr (kExclusive) {
        return prims::device::exclusive_scan<kAlgorithm>(temp, bytes, in.data(), out.data(), n, prims::Sum{},
                                                         int64_t{7}, s);
      } else {
        return prims::device::inclusive_scan<kAlgorithm>(temp, bytes, in.data(), out.data(), n, prims::Sum{}, s);
      }
    };
    auto temp = prims::test::temp_for(call);
    out.fill_bytes(kPoison);
    prims::test::LateStream late;
    late.upload_late(in.data(), host);
    late.run(temp, call);
    EXPECT_EQ(late.download(out.data(), n), expected)
        << (kAlgorithm == ScanAlgorithm::SinglePass ? "SinglePass" : "ReduceThenScan")
        << (kExclusive ? " exclusive" : " inclusive");
  };
  using SinglePass = std::integral_constant<ScanAlgorithm, ScanAlgorithm::SinglePass>;
  using ReduceThenScan = std::integral_constant<ScanAlgorithm, ScanAlgorithm::ReduceThenScan>;
  check(SinglePass{}, std::false_type{});
  check(SinglePass{}, std::true_type{});
  check(ReduceThenScan{}, std::false_type{});
  check(ReduceThenScan{}, std::true_type{});
}

TEST(DeviceScan, RejectsTooSmallTempStorage) {
  PRIMS_REQUIRE_GPU();
  const size_t n = size_t{1} << 20;
  prims::DeviceBuffer<int> in(n), out(n);
  size_t bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::device::exclusive_sum(nullptr, bytes, in.data(), out.data(), n));
  prims::DeviceBuffer<unsigned char> temp(bytes);
  size_t too_few = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue, prims::device::exclusive_sum(temp.data(), too_few, in.data(), out.data(), n));
}

/// x -> (x % 7) - 3, as a transform iterator's functor.
struct SmallSigned {
  __host__ __device__ long long operator()(int x) const { return static_cast<long long>(x % 7) - 3; }
};

TEST(DeviceScan, IteratorInputs) {
  PRIMS_REQUIRE_GPU();
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{(1 << 20) + 7}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto counting = thrust::make_counting_iterator<int>(0);
    const auto items = thrust::make_transform_iterator(counting, SmallSigned{});
    std::vector<long long> inclusive(n), exclusive(n), running_max(n), counting_sums(n);
    long long sum = 0, best = LLONG_MIN, counted = 0;
    for (size_t i = 0; i < n; ++i) {
      const long long x = SmallSigned{}(static_cast<int>(i));
      exclusive[i] = 10 + sum;
      sum += x;
      inclusive[i] = sum;
      best = std::max(best, x);
      running_max[i] = best;
      counted += static_cast<long long>(i);
      counting_sums[i] = counted;
    }
    prims::DeviceBuffer<long long> out(n + 1);
    auto result = [&](auto call) {
      out.fill_bytes(0xAB);
      prims::test::run_two_phase(call);
      std::vector<long long> got = out.download();
      EXPECT_EQ(got[n], static_cast<long long>(0xABABABABABABABABull)) << "wrote past n";
      got.resize(n);
      return got;
    };
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::inclusive_sum(t, b, items, out.data(), n); }),
              inclusive);
    EXPECT_EQ(result([&](void* t, size_t& b) {
                return prims::device::exclusive_scan(t, b, items, out.data(), n, prims::Sum{}, 10LL);
              }),
              exclusive);
    EXPECT_EQ(result([&](void* t, size_t& b) {
                return prims::device::inclusive_scan(t, b, items, out.data(), n, prims::Max{});
              }),
              running_max);
    // The counting iterator's ints scanned as long long (its value type is not the output's).
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::inclusive_sum(t, b, counting, out.data(), n); }),
              counting_sums);
    std::vector<long long> shifted(n);
    for (size_t i = 0; i < n; ++i) shifted[i] = counting_sums[i] - static_cast<long long>(i);
    EXPECT_EQ(result([&](void* t, size_t& b) { return prims::device::exclusive_sum(t, b, counting, out.data(), n); }),
              shifted);
  }
}

}  // namespace
