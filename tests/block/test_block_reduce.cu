// Block reduce: both algorithms, several block sizes and types, against a CPU reference.
#include <gtest/gtest-spi.h>

#include <cmath>
#include <limits>

#include "gpu_test.cuh"
#include "prims/block/reduce.cuh"
#include "prims/util/ops.cuh"

namespace {

using prims::block::ReduceAlgorithm;

template <class T, int THREADS, ReduceAlgorithm ALGORITHM, class Op>
__global__ void block_reduce_kernel(const T* in, T* out, Op op, bool drop_one) {
  using BlockReduce = prims::block::Reduce<T, THREADS, ALGORITHM>;
  __shared__ typename BlockReduce::TempStorage storage;
  // drop_one: block 0 leaves its last item out, a wrong result the check must catch.
  const bool dropped = drop_one && blockIdx.x == 0 && threadIdx.x == THREADS - 1;
  const T value = dropped ? T(0) : in[blockIdx.x * THREADS + threadIdx.x];
  T total = BlockReduce(storage).reduce(value, op);
  __syncthreads();
  // A second use of the same storage after a barrier gives the same total.
  const T again = BlockReduce(storage).reduce(value, op);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = total == again ? total : T(-12345);
  }
}

template <class T, int THREADS, ReduceAlgorithm ALGORITHM, class Op>
void check_block_reduce(Op op, uint64_t seed, bool drop_one = false) {
  constexpr int blocks = 5;
  const std::vector<T> host = prims::test::random_values<T>(blocks * THREADS, seed);
  prims::DeviceBuffer<T> in(host.size()), out(blocks);
  in.upload(host);
  out.fill_bytes(0xAB);
  block_reduce_kernel<T, THREADS, ALGORITHM><<<blocks, THREADS>>>(in.data(), out.data(), op, drop_one);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const auto totals = out.download();
  for (int b = 0; b < blocks; ++b) {
    double expected = host[b * THREADS];
    for (int i = 1; i < THREADS; ++i) expected = op(expected, static_cast<double>(host[b * THREADS + i]));
    if constexpr (std::is_floating_point_v<T>) {
      // A tree over THREADS items rounds each item's path at most log2(THREADS) times, each by at most epsilon
      // times the sum of |x| below that level.
      double magnitude = 0;
      for (int i = 0; i < THREADS; ++i) magnitude += std::fabs(static_cast<double>(host[b * THREADS + i]));
      const double depth = std::ceil(std::log2(static_cast<double>(THREADS)));
      EXPECT_NEAR(totals[b], expected, depth * std::numeric_limits<T>::epsilon() * magnitude) << "block " << b;
    } else {
      EXPECT_EQ(totals[b], static_cast<T>(expected)) << "block " << b;
    }
  }
}

template <ReduceAlgorithm ALGORITHM>
void check_algorithm() {
  check_block_reduce<int, 64, ALGORITHM>(prims::Sum{}, 10);
  check_block_reduce<int, 128, ALGORITHM>(prims::Max{}, 11);
  check_block_reduce<unsigned, 256, ALGORITHM>(prims::Sum{}, 12);
  check_block_reduce<long long, 512, ALGORITHM>(prims::Min{}, 13);
  check_block_reduce<float, 1024, ALGORITHM>(prims::Sum{}, 14);
  check_block_reduce<double, 256, ALGORITHM>(prims::Sum{}, 15);
}

/// The float tolerance catches a sum of 1024 items that leaves one out (the earlier 1e-4 x threads let any item
/// of magnitude below 0.1 go).
TEST(BlockReduce, ToleranceCatchesAMissingItem) {
  PRIMS_REQUIRE_GPU();
  EXPECT_NONFATAL_FAILURE((check_block_reduce<float, 1024, ReduceAlgorithm::WarpShuffle>(prims::Sum{}, 14, true)),
                          "block 0");
}

TEST(BlockReduce, SmemTree) {
  PRIMS_REQUIRE_GPU();
  check_algorithm<ReduceAlgorithm::SmemTree>();
}

TEST(BlockReduce, WarpShuffle) {
  PRIMS_REQUIRE_GPU();
  check_algorithm<ReduceAlgorithm::WarpShuffle>();
  // Whole warps that are not a power of two.
  check_block_reduce<int, 96, ReduceAlgorithm::WarpShuffle>(prims::Sum{}, 16);
  check_block_reduce<int, 32, ReduceAlgorithm::WarpShuffle>(prims::Sum{}, 17);
  check_block_reduce<double, 992, ReduceAlgorithm::WarpShuffle>(prims::Max{}, 18);
}

}  // namespace
