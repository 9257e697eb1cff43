// The look-back agent of lookback.cuh on its own: tiles with many counts (TileCountRows, the radix sort's passes)
// publishing out of order, the tagged word's limits, clearing from garbage; and PingPong's finishing copy, which
// every radix sort finishes through (host-only, runs everywhere).

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"

namespace {

using prims::detail::TileCountRows;
using prims::detail::radix::PingPong;

constexpr int kLanes = 64;
using Rows = TileCountRows<kLanes>;

/// Block b takes tile t from the counter and, lane by lane (thread = lane), publishes counts[t][lane] (tile 0 as
/// inclusive), waits a pseudo-random while so that neighbours publish out of order, looks back, publishes its
/// inclusive count and writes what it found before itself to before[t][lane].
__global__ void look_back_kernel(Rows rows, unsigned* tile_counter, const unsigned* counts, unsigned* before,
                                 unsigned num_tiles) {
  __shared__ unsigned slot;
  const unsigned tile = prims::detail::take_work(tile_counter, slot);
  if (tile >= num_tiles) return;
  const int lane = threadIdx.x;
  const unsigned count = counts[static_cast<size_t>(tile) * kLanes + lane];
  // Some tiles publish late (their successors find them unpublished and wait), some at once.
  const unsigned delay = (tile * 2654435761u) >> 22;  // 0 .. 1023
  if (delay % 3 == 0) __nanosleep(delay * 8);
  rows.publish(tile, lane, tile == 0 ? prims::detail::kTileInclusive : prims::detail::kTileAggregate, count);
  unsigned found = 0;
  if (tile != 0) {
    found = rows.look_back<4>(tile, lane);
    if (delay % 5 == 0) __nanosleep(delay * 4);  // the inclusive word comes late too
    rows.publish(tile, lane, prims::detail::kTileInclusive, found + count);
  }
  before[static_cast<size_t>(tile) * kLanes + lane] = found;
}

__global__ void reset_kernel(Rows rows, size_t num_tiles) {
  const size_t worker = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  prims::detail::reset_statuses(rows.words(), num_tiles * kLanes, worker, static_cast<size_t>(gridDim.x) * blockDim.x);
}

__global__ void read_kernel(Rows rows, size_t num_words, unsigned* flags, unsigned* values) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < num_words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const auto state = rows.words().read(i);
    flags[i] = state.flag;
    values[i] = state.value;
  }
}

__global__ void publish_kernel(Rows rows, unsigned tile, int lane, unsigned flag, unsigned count) {
  rows.publish(tile, lane, static_cast<prims::detail::TileFlag>(flag), count);
}

TEST(TileCountRows, EveryLaneFindsItsExclusivePrefixWhateverTheOrderOfPublishing) {
  PRIMS_REQUIRE_GPU();
  for (const unsigned num_tiles : {1u, 2u, 33u, 5000u}) {
    std::mt19937 rng(num_tiles);
    // Counts small enough that 5000 tiles stay below 2^30, with zeros (a digit a tile lacks).
    std::uniform_int_distribution<unsigned> pick(0, 3000);
    std::vector<unsigned> counts(static_cast<size_t>(num_tiles) * kLanes);
    for (auto& c : counts) c = pick(rng) < 600 ? 0u : pick(rng);

    prims::DeviceBuffer<unsigned> words(static_cast<size_t>(num_tiles) * kLanes);
    prims::DeviceBuffer<unsigned> counter(1);
    prims::DeviceBuffer<unsigned> d_counts(counts.size());
    prims::DeviceBuffer<unsigned> d_before(counts.size());
    ASSERT_EQ(cudaMemset(words.data(), 0xff, words.size() * sizeof(unsigned)), cudaSuccess);  // garbage
    ASSERT_EQ(cudaMemset(counter.data(), 0, sizeof(unsigned)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_counts.data(), counts.data(), counts.size() * sizeof(unsigned), cudaMemcpyHostToDevice),
              cudaSuccess);
    const Rows rows(words.data());
    reset_kernel<<<7, 96>>>(rows, num_tiles);  // an odd grid: workers do not line up with rows
    look_back_kernel<<<num_tiles, kLanes>>>(rows, counter.data(), d_counts.data(), d_before.data(), num_tiles);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<unsigned> before(counts.size());
    ASSERT_EQ(cudaMemcpy(before.data(), d_before.data(), before.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
              cudaSuccess);
    std::vector<unsigned> running(kLanes, 0);
    for (unsigned t = 0; t < num_tiles; ++t) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const size_t i = static_cast<size_t>(t) * kLanes + lane;
        ASSERT_EQ(before[i], running[lane]) << num_tiles << " tiles, tile " << t << ", lane " << lane;
        running[lane] += counts[i];
      }
    }
  }
}

TEST(TileCountRows, WordsHoldTheLargestCountWithItsFlagAndClearToInvalid) {
  PRIMS_REQUIRE_GPU();
  constexpr size_t kTiles = 3;
  prims::DeviceBuffer<unsigned> words(kTiles * kLanes);
  prims::DeviceBuffer<unsigned> flags(kTiles * kLanes);
  prims::DeviceBuffer<unsigned> values(kTiles * kLanes);
  ASSERT_EQ(cudaMemset(words.data(), 0xab, words.size() * sizeof(unsigned)), cudaSuccess);
  const Rows rows(words.data());
  reset_kernel<<<1, 32>>>(rows, kTiles);
  publish_kernel<<<1, 1>>>(rows, 1, 5, prims::detail::kTileAggregate, Rows::kMaxCount);
  publish_kernel<<<1, 1>>>(rows.from(2), 0, kLanes - 1, prims::detail::kTileInclusive, Rows::kMaxCount - 1);
  read_kernel<<<2, 64>>>(rows, kTiles * kLanes, flags.data(), values.data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned> f(kTiles * kLanes), v(kTiles * kLanes);
  ASSERT_EQ(cudaMemcpy(f.data(), flags.data(), f.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(v.data(), values.data(), v.size() * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(Rows::kMaxCount, (1u << 30) - 1);
  for (size_t i = 0; i < f.size(); ++i) {
    if (i == 1 * kLanes + 5) {
      EXPECT_EQ(f[i], prims::detail::kTileAggregate);
      EXPECT_EQ(v[i], Rows::kMaxCount);
    } else if (i == 2 * kLanes + kLanes - 1) {  // tile 0 of the rows from tile 2 on
      EXPECT_EQ(f[i], prims::detail::kTileInclusive);
      EXPECT_EQ(v[i], Rows::kMaxCount - 1);
    } else {
      EXPECT_EQ(f[i], prims::detail::kTileInvalid) << "word " << i;
      EXPECT_EQ(v[i], 0u) << "word " << i;
    }
  }
}

TEST(PingPong, TheResultIsCopiedOnlyWhenItDidNotLandInTheOutput) {
  int in[1], out[1], alternate[1];
  // Not in place: every number of passes ends in `out`; no pass at all leaves the input to copy.
  EXPECT_EQ(PingPong<int>(in, out, alternate, 0).result_to_copy(), in);
  for (int passes = 1; passes <= 5; ++passes) {
    const PingPong<int> p(in, out, alternate, passes);
    EXPECT_EQ(p.result_to_copy(), nullptr) << passes;
    EXPECT_EQ(p.destination(passes - 1), out) << passes;
    EXPECT_EQ(p.source(0), in);
  }
  // In place: the first pass never writes the input; an odd number of passes ends in the alternate buffer.
  EXPECT_EQ(PingPong<int>(out, out, alternate, 0).result_to_copy(), nullptr);
  for (int passes = 1; passes <= 5; ++passes) {
    const PingPong<int> p(out, out, alternate, passes);
    EXPECT_EQ(p.destination(0), alternate) << passes;
    EXPECT_EQ(p.result_to_copy(), passes % 2 == 1 ? alternate : nullptr) << passes;
    EXPECT_EQ(p.destination(passes - 1), passes % 2 == 1 ? alternate : out) << passes;
  }
  // Keys-only sorts carry an empty value array: nothing to copy.
  EXPECT_EQ(PingPong<int>(nullptr, nullptr, nullptr, 3).result_to_copy(), nullptr);
  EXPECT_EQ(PingPong<int>(nullptr, nullptr, nullptr, 0).result_to_copy(), nullptr);
}

}  // namespace
