// prims::block::RadixRank against a CPU stable counting sort: ranks, digit counts and digit prefixes for several
// block shapes and digit widths, over uniform, all-equal, few-distinct and sorted digits.
#include <algorithm>
#include <random>
#include <vector>

#include "gpu_test.cuh"
#include "prims/block/radix_rank.cuh"

namespace {

constexpr int kWarpThreads = 32;

/// One block: loads `digits` warp-striped, ranks them, writes each item's rank at its tile position, and the
/// digit counts and prefixes.
template <int THREADS, int ITEMS, int BITS>
__global__ void rank_kernel(const unsigned* digits_in, unsigned* ranks_out, unsigned* counts_out,
                            unsigned* prefixes_out) {
  using Rank = prims::block::RadixRank<THREADS, ITEMS, BITS>;
  __shared__ typename Rank::TempStorage storage;
  const int lane = threadIdx.x % kWarpThreads;
  const int warp_id = threadIdx.x / kWarpThreads;
  unsigned digits[ITEMS];
  for (int i = 0; i < ITEMS; ++i) digits[i] = digits_in[(warp_id * ITEMS + i) * kWarpThreads + lane];
  unsigned ranks[ITEMS];
  unsigned count = 0;
  unsigned prefix = 0;
  Rank(storage).rank(digits, ranks, count, prefix);
  for (int i = 0; i < ITEMS; ++i) ranks_out[(warp_id * ITEMS + i) * kWarpThreads + lane] = ranks[i];
  if (threadIdx.x < Rank::kDigits) {
    counts_out[threadIdx.x] = count;
    prefixes_out[threadIdx.x] = prefix;
  }
}

template <int THREADS, int ITEMS, int BITS>
void check_rank(const std::vector<unsigned>& digits) {
  constexpr int kDigits = 1 << BITS;
  const size_t tile = static_cast<size_t>(THREADS) * ITEMS;
  ASSERT_EQ(digits.size(), tile);
  prims::DeviceBuffer<unsigned> in(tile), ranks(tile), counts(kDigits), prefixes(kDigits);
  in.upload(digits);
  ranks.fill_bytes(0xCD);
  counts.fill_bytes(0xCD);
  prefixes.fill_bytes(0xCD);
  rank_kernel<THREADS, ITEMS, BITS><<<1, THREADS>>>(in.data(), ranks.data(), counts.data(), prefixes.data());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());

  std::vector<unsigned> expected_counts(kDigits, 0), expected_prefixes(kDigits, 0), expected_ranks(tile);
  for (unsigned d : digits) ++expected_counts[d];
  for (int d = 1; d < kDigits; ++d) expected_prefixes[d] = expected_prefixes[d - 1] + expected_counts[d - 1];
  std::vector<unsigned> next = expected_prefixes;
  for (size_t i = 0; i < tile; ++i) expected_ranks[i] = next[digits[i]]++;
  EXPECT_EQ(counts.download(), expected_counts);
  EXPECT_EQ(prefixes.download(), expected_prefixes);
  EXPECT_EQ(ranks.download(), expected_ranks);
}

template <int THREADS, int ITEMS, int BITS>
void check_distributions() {
  constexpr unsigned kDigits = 1u << BITS;
  const size_t tile = static_cast<size_t>(THREADS) * ITEMS;
  std::mt19937 rng(THREADS * 131 + ITEMS * 7 + BITS);
  std::vector<unsigned> digits(tile);
  for (auto& d : digits) d = rng() % kDigits;
  check_rank<THREADS, ITEMS, BITS>(digits);
  std::fill(digits.begin(), digits.end(), kDigits - 1);
  check_rank<THREADS, ITEMS, BITS>(digits);
  for (auto& d : digits) d = (rng() % 3) * (kDigits / 3);
  check_rank<THREADS, ITEMS, BITS>(digits);
  for (size_t i = 0; i < tile; ++i) digits[i] = static_cast<unsigned>(i * kDigits / tile);
  check_rank<THREADS, ITEMS, BITS>(digits);
  std::reverse(digits.begin(), digits.end());
  check_rank<THREADS, ITEMS, BITS>(digits);
}

TEST(BlockRadixRank, Threads256Items16Bits8) {
  PRIMS_REQUIRE_GPU();
  check_distributions<256, 16, 8>();
}

TEST(BlockRadixRank, Threads512Items15Bits8) {
  PRIMS_REQUIRE_GPU();
  check_distributions<512, 15, 8>();
}

TEST(BlockRadixRank, Threads512Items5Bits8) {
  PRIMS_REQUIRE_GPU();
  check_distributions<512, 5, 8>();
}

TEST(BlockRadixRank, Threads128Items3Bits4) {
  PRIMS_REQUIRE_GPU();
  check_distributions<128, 3, 4>();
}

TEST(BlockRadixRank, Threads32Items1Bits1) {
  PRIMS_REQUIRE_GPU();
  check_distributions<32, 1, 1>();
}

}  // namespace
