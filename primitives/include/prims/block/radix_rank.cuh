#pragma once
// Block radix rank: every thread holds ITEMS_PER_THREAD digits of a tile in a warp-striped arrangement (item i of
// lane l in warp w is tile element (w * ITEMS_PER_THREAD + i) * 32 + l), and gets back each item's stable rank:
// its position in the tile ordered by (digit, tile element). Every radix sort ranks its tiles with this one
// collective (TileCounts, Onesweep, the partition).
//
// Three steps:
//   1. Each warp counts its digits in its own row of shared-memory counters. For item i, the lanes holding the
//      same digit find each other (warp::lanes_with_same_value: one ballot per digit bit); the highest of them adds
//      the group's size with one predicated shared atomic and hands the old count to its peers, so a lane's rank
//      within its warp is that count plus the number of peers below it. Items are taken in tile order, so this
//      rank is stable. The rank is kept packed with its digit (16 bits each), so no digit array stays live.
//   2. Thread d (one per digit) turns its digit's column of per-warp counts into exclusive offsets and a total,
//      hands the total to the caller's callback (Onesweep publishes it to later tiles from here, before the block
//      scan, as CUB's early-counts ranking does), then a block::Scan over the totals gives every digit's first
//      position in the tile, which is added to the column.
//   3. Each item adds its (digit, warp) offset to its rank within the warp.
// The caller owns the TempStorage (put it in __shared__ memory) and must __syncthreads() before reusing it.

#include "prims/block/scan.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/warp/match.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail {

/// Where `leader` holds: atomically adds `amount` to the shared word at `address` (a shared-window address) and
/// returns the old value; elsewhere returns 0 and touches nothing. Predicated, so no branch splits the warp.
__device__ __forceinline__ unsigned shared_add_if(bool leader, unsigned address, unsigned amount) {
  unsigned old;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tmov.u32 %0, 0;\n\t"
      "@p atom.shared.add.u32 %0, [%2], %3;\n\t}"
      : "=r"(old)
      : "r"(static_cast<unsigned>(leader)), "r"(address), "r"(amount)
      : "memory");
  return old;
}

/// The callback of a ranking that publishes nothing.
struct IgnoreDigitCounts {
  __device__ void operator()(unsigned) const {}
};

}  // namespace prims::detail

namespace prims::block {

/// MATCH_ANY finds a lane's peers with __match_any_sync instead of ballots (see warp/match.cuh).
/// Example (256 threads, 8 items each, 8-bit digits; `digits` warp-striped as described above):
///   using Rank = prims::block::RadixRank<256, 8, 8>;
///   __shared__ Rank::TempStorage storage;
///   unsigned ranks[8], digit_count, digit_prefix;
///   Rank(storage).rank(digits, ranks, digit_count, digit_prefix);
///   // Thread d < 256: digit_count = how many items have digit d, digit_prefix = how many have a smaller digit.
template <int BLOCK_THREADS, int ITEMS_PER_THREAD, int RADIX_BITS, bool MATCH_ANY = false>
class RadixRank {
 public:
  static constexpr int kDigits = 1 << RADIX_BITS;
  static constexpr int kWarps = BLOCK_THREADS / warp::kWarpThreads;
  static constexpr int kTileItems = BLOCK_THREADS * ITEMS_PER_THREAD;

 private:
  static_assert(BLOCK_THREADS % warp::kWarpThreads == 0, "RadixRank needs whole warps");
  static_assert(kDigits <= BLOCK_THREADS, "RadixRank needs a thread per digit");
  static_assert(RADIX_BITS >= 1 && RADIX_BITS <= 8, "RadixRank handles 1 to 8-bit digits");
  /// A rank word packs the rank in its low 16 bits and the item's digit above them.
  static constexpr int kRankBits = 16;
  static constexpr unsigned kRankMask = (1u << kRankBits) - 1;
  static_assert(kTileItems <= (1 << kRankBits), "packed ranks hold 16 bits");
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
    rank(digits, ranks, digit_count, digit_prefix, 0, detail::IgnoreDigitCounts{});
  }

  /// The same, for a tile whose last `padding` elements are not items: they must carry digit kDigits - 1 (so
  /// they rank after every item) and are left out of that digit's count. Thread d < kDigits calls
  /// `on_counts(digit_count)` before the block scan, with every other rank still to come. `ranks` may be
  /// `digits` itself (ranking in place saves registers).
  /// Example: `Rank(storage).rank(slots, slots, count, prefix, tile_items - valid, [&](unsigned c) { ... });`
  template <class OnCounts>
  __device__ __forceinline__ void rank(const unsigned (&digits)[ITEMS_PER_THREAD],
                                       unsigned (&ranks)[ITEMS_PER_THREAD], unsigned& digit_count,
                                       unsigned& digit_prefix, int padding, OnCounts&& on_counts) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    const bool digit_thread = threadIdx.x < kDigits;

    // Each warp clears and uses only its own row, so a warp barrier is enough here. The barrier also keeps the
    // compiler from moving the caller's key loads into the ranking loop, where each would stall it.
#pragma unroll
    for (int d = lane; d < kDigits; d += warp::kWarpThreads) storage_.warp_counts[warp_id][d] = 0;
    __syncwarp();

    const unsigned lanes_below = detail::lanes_below_mask();
    const unsigned counts_address =
        static_cast<unsigned>(__cvta_generic_to_shared(storage_.warp_counts[warp_id]));
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      const unsigned digit = digits[i];
      const unsigned peers = warp::lanes_with_same_value<RADIX_BITS, MATCH_ANY>(digit);
      const int leader = 31 - __clz(peers);
      const unsigned before =
          detail::shared_add_if(lane == leader, counts_address + digit * 4u, static_cast<unsigned>(__popc(peers)));
      // The shuffle also orders this item's atomic before the next item's: the leader's old count feeds it.
      ranks[i] = (__shfl_sync(detail::kFullWarpMask, before, leader) + __popc(peers & lanes_below)) |
                 (digit << kRankBits);
    }
    __syncthreads();

    digit_count = 0;
    if (digit_thread) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const unsigned count = storage_.warp_counts[w][threadIdx.x];
        storage_.warp_counts[w][threadIdx.x] = digit_count;
        digit_count += count;
      }
      if (threadIdx.x == kDigits - 1) digit_count -= static_cast<unsigned>(padding);
      on_counts(digit_count);
    }
    digit_prefix = DigitScan(storage_.scan).exclusive_scan(digit_count, Sum{}, 0u);
    if (digit_thread) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) storage_.warp_counts[w][threadIdx.x] += digit_prefix;
    }
    __syncthreads();

    const unsigned* counts = storage_.warp_counts[warp_id];
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) ranks[i] = (ranks[i] + counts[ranks[i] >> kRankBits]) & kRankMask;
  }

 private:
  TempStorage& storage_;
};

}  // namespace prims::block
