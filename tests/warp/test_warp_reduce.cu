// Warp reduce: the shuffle and shared-memory forms against a CPU sum, over several warps of a block.
#include "gpu_test.cuh"
#include "prims/util/ops.cuh"
#include "prims/warp/reduce.cuh"

namespace {

constexpr int kWarps = 4;

template <class T, class Op>
__global__ void warp_reduce_kernel(const T* in, T* shuffle_out, T* smem_out, Op op) {
  __shared__ prims::warp::ReduceSmemStorage<T> storage[kWarps];
  const T value = in[blockIdx.x * blockDim.x + threadIdx.x];
  const int warp_id = threadIdx.x / 32;
  const T by_shuffle = prims::warp::reduce_shuffle(value, op);
  const T by_smem = prims::warp::reduce_smem(value, op, storage[warp_id]);
  // Reusing the storage right away must be safe.
  const T again = prims::warp::reduce_smem(value, op, storage[warp_id]);
  if (threadIdx.x % 32 == 0) {
    const int slot = blockIdx.x * kWarps + warp_id;
    shuffle_out[slot] = by_shuffle;
    smem_out[slot] = by_smem == again ? by_smem : T(-1);
  }
}

template <class T, class Op>
void check_warp_reduce(Op op, uint64_t seed) {
  constexpr int blocks = 3;
  const size_t n = blocks * kWarps * 32;
  const std::vector<T> host = prims::test::random_values<T>(n, seed);
  prims::DeviceBuffer<T> in(n), shuffle_out(blocks * kWarps), smem_out(blocks * kWarps);
  in.upload(host);
  shuffle_out.fill_bytes(0xCD);
  smem_out.fill_bytes(0xCD);
  warp_reduce_kernel<<<blocks, kWarps * 32>>>(in.data(), shuffle_out.data(), smem_out.data(), op);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const auto by_shuffle = shuffle_out.download();
  const auto by_smem = smem_out.download();
  for (size_t w = 0; w < blocks * kWarps; ++w) {
    // The halving order of both forms: lane i takes lane i + offset for offset = 16, 8, ..., 1.
    std::vector<T> lanes(host.begin() + w * 32, host.begin() + (w + 1) * 32);
    for (int offset = 16; offset > 0; offset /= 2) {
      for (int lane = 0; lane < offset; ++lane) lanes[lane] = op(lanes[lane], lanes[lane + offset]);
    }
    const T expected = lanes[0];
    EXPECT_EQ(by_shuffle[w], expected) << "warp " << w;
    EXPECT_EQ(by_smem[w], expected) << "warp " << w;
  }
}

TEST(WarpReduce, SumInt) {
  PRIMS_REQUIRE_GPU();
  check_warp_reduce<int>(prims::Sum{}, 1);
}
TEST(WarpReduce, MaxInt64) {
  PRIMS_REQUIRE_GPU();
  check_warp_reduce<long long>(prims::Max{}, 2);
}
TEST(WarpReduce, MinDouble) {
  PRIMS_REQUIRE_GPU();
  check_warp_reduce<double>(prims::Min{}, 3);
}
TEST(WarpReduce, ShuffleAndSmemAgreeBitwiseOnFloatSum) {
  PRIMS_REQUIRE_GPU();
  // Both forms combine lanes in the same order, so float sums match the CPU's halving order exactly.
  check_warp_reduce<float>(prims::Sum{}, 4);
}

}  // namespace
