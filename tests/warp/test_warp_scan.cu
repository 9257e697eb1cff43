// Warp scan: inclusive (with the warp aggregate), exclusive with and without init, against a CPU scan over
// several warps of a block, for sums, max, and an op that is not commutative.
#include "affine.cuh"
#include "gpu_test.cuh"
#include "prims/util/ops.cuh"
#include "prims/warp/scan.cuh"

namespace {

constexpr int kWarps = 4;
constexpr int kBlocks = 3;
constexpr size_t kItems = kBlocks * kWarps * 32;

template <class T, class Op>
__global__ void warp_scan_kernel(const T* in, T* inclusive, T* aggregates, T* exclusive_init, T* exclusive, Op op,
                                 T init) {
  const size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  T aggregate;
  inclusive[i] = prims::warp::inclusive_scan_shuffle(in[i], op, aggregate);
  aggregates[i] = aggregate;
  T aggregate_again;
  exclusive_init[i] = prims::warp::exclusive_scan_shuffle(in[i], op, init, aggregate_again);
  if (!(aggregate_again == aggregate)) aggregates[i] = init;  // both forms must agree on the aggregate
  exclusive[i] = prims::warp::exclusive_scan_shuffle(in[i], op);
}

template <class T, class Op>
void check_warp_scan(const std::vector<T>& host, Op op, T init) {
  prims::DeviceBuffer<T> in(kItems), inclusive(kItems), aggregates(kItems), exclusive_init(kItems), exclusive(kItems);
  in.upload(host);
  for (auto* buffer : {&inclusive, &aggregates, &exclusive_init, &exclusive}) buffer->fill_bytes(0xAB);
  warp_scan_kernel<<<kBlocks, kWarps * 32>>>(in.data(), inclusive.data(), aggregates.data(), exclusive_init.data(),
                                             exclusive.data(), op, init);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const auto got_inclusive = inclusive.download();
  const auto got_aggregates = aggregates.download();
  const auto got_exclusive_init = exclusive_init.download();
  const auto got_exclusive = exclusive.download();
  for (size_t warp = 0; warp < kItems / 32; ++warp) {
    const size_t first = warp * 32;
    T running = host[first];
    T total = host[first];
    for (int lane = 1; lane < 32; ++lane) total = op(total, host[first + lane]);
    for (int lane = 0; lane < 32; ++lane) {
      const size_t i = first + lane;
      if (lane > 0) {
        EXPECT_EQ(got_exclusive[i], running) << "exclusive, warp " << warp << " lane " << lane;
        EXPECT_EQ(got_exclusive_init[i], op(init, running)) << "exclusive with init, warp " << warp << " lane " << lane;
        running = op(running, host[i]);
      } else {
        EXPECT_EQ(got_exclusive_init[i], init) << "exclusive with init, warp " << warp;
      }
      EXPECT_EQ(got_inclusive[i], running) << "inclusive, warp " << warp << " lane " << lane;
      EXPECT_EQ(got_aggregates[i], total) << "aggregate, warp " << warp << " lane " << lane;
    }
  }
}

TEST(WarpScan, SumInt) {
  PRIMS_REQUIRE_GPU();
  check_warp_scan(prims::test::random_values<int>(kItems, 1), prims::Sum{}, 7);
}

TEST(WarpScan, MaxInt64) {
  PRIMS_REQUIRE_GPU();
  check_warp_scan(prims::test::random_values<int64_t>(kItems, 2, /*small=*/false), prims::Max{},
                  std::numeric_limits<int64_t>::min());
}

TEST(WarpScan, SumDoubleOfIntegers) {
  PRIMS_REQUIRE_GPU();
  // Integer-valued doubles: every grouping gives the same exact sum.
  const auto ints = prims::test::random_values<int>(kItems, 3);
  check_warp_scan(std::vector<double>(ints.begin(), ints.end()), prims::Sum{}, 0.5);
}

TEST(WarpScan, AffineCompositionKeepsOrder) {
  PRIMS_REQUIRE_GPU();
  check_warp_scan(prims::test::random_affine(kItems, 4), prims::test::Compose{}, prims::test::Affine{3, 5});
}

}  // namespace
