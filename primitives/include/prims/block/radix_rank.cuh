#pragma once
// Block radix rank: every thread holds ITEMS_PER_THREAD digits of a tile in a warp-striped arrangement (item i of
// lane l in warp w is tile element (w * ITEMS_PER_THREAD + i) * 32 + l), and gets back each item's stable rank:
// its position in the tile ordered by (digit, tile element).
//
// Three steps:
//   1. Each warp counts its digits in its own row of shared-memory counters. For item i, the lanes holding the
//      same digit find each other with RADIX_BITS ballots; the lowest of them adds the group's size with one
//      shared atomic and hands the old count to its peers, so a lane's rank within its warp is that count plus
//      the number of peers below it. Items are taken in tile order, so this rank is stable.
//   2. Thread d (one per digit) turns its digit's column of per-warp counts into exclusive offsets and a total;
//      a block::Scan over the digit totals gives every digit's first position in the tile.
//   3. Each item adds its (digit, warp) offset to its rank within the warp.
// The caller owns the TempStorage (put it in __shared__ memory) and must __syncthreads() before reusing it.

#include "prims/block/scan.cuh"
#include "prims/util/ops.cuh"
#include "prims/warp/match.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::block {

/// Example (256 threads, 8 items each, 8-bit digits; `digits` warp-striped as described above):
///   using Rank = prims::block::RadixRank<256, 8, 8>;
///   __shared__ Rank::TempStorage storage;
///   unsigned ranks[8], digit_count, digit_prefix;
///   Rank(storage).rank(digits, ranks, digit_count, digit_prefix);
///   // Thread d < 256: digit_count = how many items have digit d, digit_prefix = how many have a smaller digit.
template <int BLOCK_THREADS, int ITEMS_PER_THREAD, int RADIX_BITS>
class RadixRank {
 public:
  static constexpr int kDigits = 1 << RADIX_BITS;
  static constexpr int kWarps = BLOCK_THREADS / warp::kWarpThreads;
  static constexpr int kTileItems = BLOCK_THREADS * ITEMS_PER_THREAD;

 private:
  static_assert(BLOCK_THREADS % warp::kWarpThreads == 0, "RadixRank needs whole warps");
  static_assert(kDigits <= BLOCK_THREADS, "RadixRank needs a thread per digit");
  static_assert(RADIX_BITS >= 1 && RADIX_BITS <= 8, "RadixRank handles 1 to 8-bit digits");
  using DigitScan = Scan<unsigned, BLOCK_THREADS>;

 public:
  struct TempStorage {
    /// warp_counts[w][d]: first how many of warp w's items have digit d, then where they start in the tile.
    /// A warp's row is contiguous, so the lanes of a warp hit banks by digit.
    unsigned warp_counts[kWarps][kDigits];
    typename DigitScan::TempStorage scan;
  };

  __device__ explicit RadixRank(TempStorage& storage) : storage_(storage) {}

  /// Ranks the block's digits (each < kDigits). On return, ranks[i] is item i's position in the stably sorted
  /// tile; thread d < kDigits gets digit_count (items with digit d) and digit_prefix (items with a smaller
  /// digit); other threads get a digit_count of 0 and an unspecified digit_prefix.
  __device__ void rank(const unsigned (&digits)[ITEMS_PER_THREAD], unsigned (&ranks)[ITEMS_PER_THREAD],
                       unsigned& digit_count, unsigned& digit_prefix) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    unsigned* counts = storage_.warp_counts[warp_id];

    // Each warp clears and uses only its own row, so a warp barrier is enough here.
#pragma unroll
    for (int d = lane; d < kDigits; d += warp::kWarpThreads) {
      counts[d] = 0;
    }
    __syncwarp();

    const unsigned lanes_below = (1u << lane) - 1;
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      const unsigned peers = warp::lanes_with_same_value<RADIX_BITS>(digits[i]);
      const int leader = __ffs(peers) - 1;
      unsigned before = 0;
      if (lane == leader) {
        before = atomicAdd(&counts[digits[i]], static_cast<unsigned>(__popc(peers)));
      }
      // The shuffle also orders this item's atomic before the next item's: the leader's old count feeds it.
      ranks[i] = __shfl_sync(detail::kFullWarpMask, before, leader) + __popc(peers & lanes_below);
    }
    __syncthreads();

    digit_count = 0;
    unsigned column[kWarps];
    if (threadIdx.x < kDigits) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        column[w] = storage_.warp_counts[w][threadIdx.x];
        digit_count += column[w];
      }
    }
    digit_prefix = DigitScan(storage_.scan).exclusive_scan(digit_count, Sum{}, 0u);
    if (threadIdx.x < kDigits) {
      unsigned start = digit_prefix;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        storage_.warp_counts[w][threadIdx.x] = start;
        start += column[w];
      }
    }
    __syncthreads();

#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      ranks[i] += counts[digits[i]];
    }
  }

 private:
  TempStorage& storage_;
};

}  // namespace prims::block
