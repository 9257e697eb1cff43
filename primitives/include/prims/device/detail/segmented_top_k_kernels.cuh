#pragma once
// Segmented top-k (device/top_k.cuh has the contract): one block a segment reads it once, in chunks of
// block_threads * items_per_thread keys, and keeps in a buffer, in input order, the selection bits (top_k_kernels.cuh's
// top_k_bits: smaller wins) of only the keys that can still win, with their positions.
//
// Until the first reduction every key is kept (its position is its index, and the top digits are counted as the
// keys come in). The buffer is reduced to its min(k, length) winners when the next chunk might not fit, or, where
// the rest of the segment cannot fit, as soon as it holds early_reduce_factor times k keys: a radix select, a digit
// (8 bits) a round from the top, counts the candidates' digits in shared memory (two histograms in turn, the other
// cleared for the next round) and adds the digit that holds the next winner to the threshold, until a digit's
// candidates are all needed or the last digit is known; then one pass in input order compacts the buffer to the keys
// below the threshold and the first ones equal to it. From then on a key is kept only if it could beat the k-th of
// those winners: below the threshold, or equal to it where the threshold stopped short of the last digit (a later
// key equal to a settled k-th key loses the tie). A segment read to its end is reduced once more.
//
// So a long segment is read once from global memory, and after its first chunks few keys pass the threshold. The
// buffer is shared memory while k leaves room in it for a chunk; for larger k it is a slice of temporary storage a
// block (the blocks are persistent then, so slices are few).
//
// A segment of up to two chunks whose winners the block sorts skips the buffer: its selection bits stay in registers,
// and the rounds and the listing read them there (the buffer takes them only where a tie crosses the k-th key).
//
// Winners of k up to block_threads are sorted in the block: where every key equal to the threshold wins (no tie at
// the k-th key) they are listed in no order; a group of threads a winner counts the winners before it (by selection
// bits, then position). Larger k writes the winners in input order into k slots a segment, which the segmented radix
// sort then sorts (stable, so equal keys stay in input order). The keys written are read again from the input by
// their positions. Segments hold fewer than 2^32 keys.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "prims/device/detail/segmented_radix_sort_dispatch.cuh"
#include "prims/device/detail/top_k_kernels.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/warp/scan.cuh"

namespace prims::detail {

/// The keys a segment keeps after its first reduction: those whose masked selection bits are below `prefix`, or
/// equal to it where the mask stops short of the last bit.
template <class Bits>
struct TopKThreshold {
  Bits prefix;
  Bits mask;

  __device__ bool keeps(Bits bits) const {
    const Bits masked = static_cast<Bits>(bits & mask);
    return masked < prefix || (masked == prefix && mask != static_cast<Bits>(~Bits{0}));
  }
};

template <class Policy, class K, class V, bool SHARED_BUFFER>
struct SegmentedTopKBlock {
  using Bits = typename RadixKey<K>::Bits;
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr unsigned kChunk = static_cast<unsigned>(kThreads) * kItems;
  static constexpr int kWarps = kThreads / warp::kWarpThreads;
  static constexpr int kRadixBits = Policy::radix_bits;
  static constexpr int kDigits = 1 << kRadixBits;
  static constexpr unsigned kSharedBuffer = Policy::buffer_keys;
  static constexpr bool kValues = kHasValues<V>;
  static_assert(kThreads % warp::kWarpThreads == 0 && kWarps >= 2, "two warps or more a block");
  static_assert(kSharedBuffer >= 2 * kChunk, "the shared buffer holds two chunks");
  static_assert(RadixKey<K>::kBits % kRadixBits == 0, "whole digits");

  struct Storage {
    Bits bits[SHARED_BUFFER ? kSharedBuffer : 1];  // the kept keys' selection bits
    unsigned positions[SHARED_BUFFER ? kSharedBuffer : 1];
    /// Rounds count into the two in turn: a round clears the other one for the next. Keys that do not match the
    /// prefix count in the extra bin, so that counting has no branch.
    unsigned histograms[2][kDigits + 1];
    /// The winners in no order, with their positions, when the block sorts them (k up to kThreads).
    Bits list_bits[kThreads];
    unsigned list_positions[kThreads];
    unsigned list_count;
    /// rank(): each warp's count of flagged items, by kind and item, then their exclusive scan; two sets, used in
    /// turn, so that a call's counts are not overwritten while a slower thread still reads the previous call's.
    unsigned warp_counts[2][2][kItems][kWarps];
    unsigned totals[2][2];
    Bits prefix;
    Bits mask;
    unsigned need;  // winners still to take among the keys that match the prefix
    bool done;
    bool all_equal_win;  // every key that matches the settled prefix is a winner
  };

  Storage& storage;
  Bits* buffer_bits;  // storage.bits, or the block's slice of temporary storage
  unsigned* buffer_positions;
  unsigned capacity;
  Order order;
  int rank_set = 0;
  /// Until the first reduction the buffer holds every key read, in order: histogram 0 holds their top digits (the
  /// first round's counts), and a key's position is its index (positions are written from the first compaction).
  bool every_key_kept = true;

  __device__ Bits bits_of(K key) const { return top_k_bits(key, order); }
  __device__ Bits& bits_at(unsigned i) const { return SHARED_BUFFER ? storage.bits[i] : buffer_bits[i]; }
  __device__ unsigned position(unsigned i) const { return every_key_kept ? i : position_at(i); }
  __device__ unsigned& position_at(unsigned i) const {
    return SHARED_BUFFER ? storage.positions[i] : buffer_positions[i];
  }

  /// Ranks the flagged items of a chunk held striped (item j of thread t is the chunk's key j * kThreads + t) in
  /// input order: `before` gets, for every item and kind, how many items of that kind come before it in the chunk,
  /// `total` how many the chunk has.
  template <int KINDS, int ITEMS>
  __device__ void rank(const bool (&flags)[KINDS][ITEMS], unsigned (&before)[KINDS][ITEMS],
                       unsigned (&total)[KINDS]) {
    static_assert(ITEMS <= kItems, "the counts hold kItems items a thread");
    static_assert(KINDS <= 2, "one warp scans each kind");
    const unsigned lane = threadIdx.x % warp::kWarpThreads;
    const unsigned warp_id = threadIdx.x / warp::kWarpThreads;
    auto& counts = storage.warp_counts[rank_set];
#pragma unroll
    for (int kind = 0; kind < KINDS; ++kind) {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const unsigned ballot = __ballot_sync(~0u, flags[kind][j]);
        before[kind][j] = __popc(ballot & ((1u << lane) - 1u));
        if (lane == 0) counts[kind][j][warp_id] = __popc(ballot);
      }
    }
    __syncthreads();
    if (warp_id < KINDS) {
      // Warp `kind` scans its kind's counts in (item, warp) order: input order.
      constexpr int kCounts = ITEMS * kWarps;
      constexpr int kPerLane = (kCounts + warp::kWarpThreads - 1) / warp::kWarpThreads;
      unsigned* list = &counts[warp_id][0][0];
      unsigned mine[kPerLane];
      unsigned sum = 0;
#pragma unroll
      for (int p = 0; p < kPerLane; ++p) {
        const unsigned i = lane * kPerLane + p;
        mine[p] = i < kCounts ? list[i] : 0u;
        sum += mine[p];
      }
      unsigned all = 0;
      unsigned running = warp::inclusive_scan_shuffle(sum, Sum{}, all) - sum;
#pragma unroll
      for (int p = 0; p < kPerLane; ++p) {
        const unsigned i = lane * kPerLane + p;
        if (i < kCounts) list[i] = running;
        running += mine[p];
      }
      if (lane == 0) storage.totals[rank_set][warp_id] = all;
    }
    __syncthreads();
#pragma unroll
    for (int kind = 0; kind < KINDS; ++kind) {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) before[kind][j] += counts[kind][j][warp_id];
      total[kind] = storage.totals[rank_set][kind];
    }
    rank_set ^= 1;
  }

  /// Adds one key to a round's histogram: its digit at `shift` where it matches the prefix, else the extra bin.
  /// An increment whose result is unused: the hardware adds a warp's lanes of one bin at once (ATOMS.POPC.INC), so
  /// keys that crowd into few digits (floats share their exponents) cost no more.
  __device__ static void count_digit(unsigned* histogram, Bits bits, Bits prefix, Bits mask, int shift, bool valid) {
    const bool candidate = valid && static_cast<Bits>(bits & mask) == prefix;
    atomicAdd(&histogram[candidate ? static_cast<unsigned>(bits >> shift) & (kDigits - 1) : kDigits], 1u);
  }

  /// Counts a key's top digit into histogram 0 (the first round's counts) as the keys of a segment arrive.
  __device__ void count_top_digit(Bits bits, bool valid) {
    count_digit(storage.histograms[0], bits, 0, 0, RadixKey<K>::kBits - kRadixBits, valid);
  }

  /// Zeroes histogram h (the caller's barrier orders it before the counting).
  __device__ static void clear_histogram(Storage& storage, int h) {
    for (int d = threadIdx.x; d <= kDigits; d += kThreads) storage.histograms[h][d] = 0;
  }

  /// Round r: count_candidates(histogram, prefix, mask, shift) counts digit `shift` of the candidates (the keys
  /// that match the prefix) into histogram r % 2, cleared before (or does nothing: it holds them); then the
  /// threshold moves to the digit that holds the next winner.
  template <class CountCandidates>
  __device__ void round(int shift, int r, CountCandidates count_candidates) {
    unsigned* histogram = storage.histograms[r & 1];
    clear_histogram(storage, (r + 1) & 1);
    count_candidates(histogram, static_cast<Bits>(storage.prefix), static_cast<Bits>(storage.mask), shift);
    __syncthreads();
    if (threadIdx.x < warp::kWarpThreads) {
      constexpr int kPerLane = kDigits / warp::kWarpThreads;
      const int lane = static_cast<int>(threadIdx.x);
      unsigned counts[kPerLane];
      unsigned sum = 0;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        counts[j] = histogram[lane * kPerLane + j];
        sum += counts[j];
      }
      unsigned total = 0;
      const unsigned inclusive = warp::inclusive_scan_shuffle(sum, Sum{}, total);
      unsigned before = inclusive - sum;
      const unsigned need = storage.need;
      const Bits prefix = storage.prefix;
      const Bits mask = storage.mask;
      __syncwarp();  // every lane has read `need` before one writes it
      if (before < need && need <= inclusive) {
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
          if (before < need && need <= before + counts[j]) {
            const Bits digit = static_cast<Bits>(lane * kPerLane + j);
            storage.prefix = static_cast<Bits>(prefix | (digit << shift));
            storage.mask = static_cast<Bits>(mask | (static_cast<Bits>(kDigits - 1) << shift));
            storage.need = need - before;
            storage.all_equal_win = counts[j] == need - before;
            storage.done = counts[j] == need - before || shift == 0;
          }
          before += counts[j];
        }
      }
    }
    __syncthreads();
  }

  /// The threshold of the `need` winners among the keys that count_candidates (as in round()) counts, in
  /// storage.prefix, mask, need (the winners among the keys equal to the prefix) and all_equal_win. COUNTED:
  /// histogram 0 holds the top digits already.
  template <class CountCandidates>
  __device__ void find_threshold(unsigned need, bool counted, CountCandidates count_candidates) {
    if (!counted) {
      clear_histogram(storage, 0);
    }
    if (threadIdx.x == 0) {
      storage.prefix = 0;
      storage.mask = 0;
      storage.need = need;
      storage.done = false;
      storage.list_count = 0;
    }
    __syncthreads();  // also orders the keys' last writes before the rounds read them
    int shift = RadixKey<K>::kBits - kRadixBits;
    if (counted) {
      round(shift, 0, [](unsigned*, Bits, Bits, int) {});
    } else {
      round(shift, 0, count_candidates);
    }
    for (int r = 1; !storage.done; ++r) {
      shift -= kRadixBits;
      round(shift, r, count_candidates);
    }
  }

  /// find_threshold() over the buffer's `count` keys (count > need).
  __device__ void find_threshold(unsigned count, unsigned need) {
    find_threshold(need, every_key_kept, [&](unsigned* histogram, Bits prefix, Bits mask, int shift) {
#pragma unroll 4
      for (unsigned i = threadIdx.x; i < count; i += kThreads) {
        count_digit(histogram, bits_at(i), prefix, mask, shift, true);
      }
    });
  }

  /// Reduces the buffer's `count` keys (more than `need`) to their `need` winners, kept at its front in input
  /// order, and returns the threshold that later keys must pass.
  __device__ TopKThreshold<Bits> reduce(unsigned count, unsigned need) {
    find_threshold(count, need);
    return compact(count);
  }

  /// The compaction of reduce(), after find_threshold().
  __device__ TopKThreshold<Bits> compact(unsigned count) {
    const Bits prefix = storage.prefix;
    const Bits mask = storage.mask;
    const unsigned need_equal = storage.need;
    // In place: a chunk's keys are read before its ranks' barriers, and a kept key's new index is never above its
    // old one, so no write reaches a key not yet read.
    unsigned below_seen = 0;
    unsigned equal_seen = 0;
    constexpr int kCompactItems = Policy::compact_items_per_thread;
    for (unsigned chunk = 0; chunk < count; chunk += kThreads * kCompactItems) {
      Bits items[kCompactItems];
      unsigned positions[kCompactItems];
      bool flags[2][kCompactItems];
#pragma unroll
      for (int j = 0; j < kCompactItems; ++j) {
        const unsigned i = chunk + j * kThreads + threadIdx.x;
        flags[0][j] = false;
        flags[1][j] = false;
        if (i < count) {
          items[j] = bits_at(i);
          positions[j] = position(i);
          const Bits masked = static_cast<Bits>(items[j] & mask);
          flags[0][j] = masked < prefix;
          flags[1][j] = masked == prefix;
        }
      }
      unsigned before[2][kCompactItems];
      unsigned total[2];
      rank(flags, before, total);
#pragma unroll
      for (int j = 0; j < kCompactItems; ++j) {
        const unsigned equal_before = equal_seen + before[1][j];
        if (flags[0][j] || (flags[1][j] && equal_before < need_equal)) {
          // Every winner before it: the keys below, and the first need_equal equal ones.
          const unsigned slot = below_seen + before[0][j] + min(equal_before, need_equal);
          bits_at(slot) = items[j];
          position_at(slot) = positions[j];
        }
      }
      below_seen += total[0];
      equal_seen += total[1];
    }
    __syncthreads();  // the compacted buffer is read next
    every_key_kept = false;
    return {prefix, mask};
  }

  /// One step of listing the winners (every key that matches the threshold wins): each lane offers one key, and
  /// the warp's winners take consecutive list slots.
  __device__ void list_if_winner(bool valid, Bits bits, unsigned position) {
    const unsigned lane = threadIdx.x % warp::kWarpThreads;
    const bool wins = valid && static_cast<Bits>(bits & storage.mask) <= storage.prefix;
    const unsigned ballot = __ballot_sync(~0u, wins);
    if (ballot == 0) return;
    unsigned first = 0;
    if (lane == 0) first = atomicAdd(&storage.list_count, static_cast<unsigned>(__popc(ballot)));
    first = __shfl_sync(~0u, first, 0);
    if (wins) {
      const unsigned slot = first + __popc(ballot & ((1u << lane) - 1u));
      storage.list_bits[slot] = bits;
      storage.list_positions[slot] = position;
    }
  }

  /// The buffer's `need` winners (of `count`, count > need, every key that matches the threshold a winner) into
  /// the list, in no order.
  __device__ void list_winners(unsigned count) {
#pragma unroll 4
    for (unsigned base = 0; base < count; base += kThreads) {
      const unsigned i = base + threadIdx.x;
      list_if_winner(i < count, i < count ? bits_at(i) : Bits{0}, i < count ? position(i) : 0u);
    }
  }

  /// A segment of up to kRowItems * kThreads keys whose winners the block sorts is held in registers, striped
  /// (item j of thread t is key j * kThreads + t): its selection bits, with its top digits counted into histogram 0.
  static constexpr int kRowItems = 2 * kItems;
  __device__ void load_row(const K* keys, unsigned length, Bits (&items)[kRowItems]) {
#pragma unroll
    for (int j = 0; j < kRowItems; ++j) {
      const bool valid = j * kThreads + threadIdx.x < length;
      items[j] = valid ? bits_of((keys + threadIdx.x)[j * kThreads]) : Bits{0};
    }
#pragma unroll
    for (int j = 0; j < kRowItems; ++j) count_top_digit(items[j], j * kThreads + threadIdx.x < length);
  }

  /// A row held by load_row into the buffer, as select() leaves it when every key is kept.
  __device__ void store_row(const Bits (&items)[kRowItems], unsigned length) {
#pragma unroll
    for (int j = 0; j < kRowItems; ++j) {
      if (j * kThreads + threadIdx.x < length) bits_at(j * kThreads + threadIdx.x) = items[j];
    }
  }

  /// Reads the segment [keys, keys + length) and returns how many keys the buffer keeps, in input order: all of
  /// them (at most capacity), or its `need` winners and the later keys that passed their threshold.
  __device__ unsigned select(const K* keys, unsigned length, unsigned need) {
    TopKThreshold<Bits> threshold{0, 0};  // read once every_key_kept is false
    unsigned count = 0;
    K next[kItems];
    auto load = [&](unsigned chunk) {
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        // One pointer a chunk: each load's offset is a constant.
        if (chunk + j * kThreads + threadIdx.x < length) next[j] = (keys + chunk + threadIdx.x)[j * kThreads];
      }
    };
    load(0);
    // Where the rest of the segment cannot fit, a buffer of many more keys than k is reduced before the next chunk:
    // the sooner a threshold holds keys back, the fewer keys every later round and pass visits.
    const unsigned early = need < capacity / Policy::early_reduce_factor ? need * Policy::early_reduce_factor : capacity;
    for (unsigned chunk = 0; chunk < length; chunk += kChunk) {
      const unsigned valid = min(kChunk, length - chunk);
      if (count + valid > capacity || (count > early && count + (length - chunk) > capacity)) {
        // The chunk might not fit, or the buffer holds many more keys than k: it keeps its winners only
        // (capacity - kChunk >= k and early >= k, so count > need).
        threshold = reduce(count, need);
        count = need;
      }
      Bits items[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) items[j] = bits_of(next[j]);
      if (every_key_kept) {
        // Every key is kept, and counted for the first round (the chunk's tail in the extra bin).
#pragma unroll
        for (int j = 0; j < kItems; ++j) count_top_digit(items[j], j * kThreads + threadIdx.x < valid);
      }
      // The next chunk's loads are in flight while this one is placed.
      if (chunk + kChunk < length) load(chunk + kChunk);
      bool kept[1][kItems];
      unsigned before[1][kItems];
      unsigned total[1] = {valid};
      if (!every_key_kept) {
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          kept[0][j] = j * kThreads + threadIdx.x < valid && threshold.keeps(items[j]);
        }
        rank(kept, before, total);
      } else {
        // Every key is kept: the chunk goes in as it is.
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          kept[0][j] = j * kThreads + threadIdx.x < valid;
          before[0][j] = j * kThreads + threadIdx.x;
        }
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (kept[0][j]) {
          bits_at(count + before[0][j]) = items[j];
          if (!every_key_kept) position_at(count + before[0][j]) = chunk + j * kThreads + threadIdx.x;
        }
      }
      count += total[0];
    }
    return count;
  }
};

/// Block b takes segments b, b + gridDim.x, ...: segment s's min(k, length) winners, sorted, into
/// keys_out[s * k ...] (SORT: k is at most a block's threads), or in input order into winner_keys[s * k ...] with
/// the segmented sort's segment [s * k, s * k + min(k, length)) (values alike). `buffers` holds a slice of
/// `capacity` keys a block, then as many positions, where the buffer is not shared memory.
template <class Policy, class K, class V, class Offset, bool SHARED_BUFFER, bool SORT>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    segmented_top_k_kernel(const K* __restrict__ keys, const V* __restrict__ values,
                           const Offset* __restrict__ begin_offsets, const Offset* __restrict__ end_offsets,
                           size_t num_segments, size_t k, Order order, unsigned capacity, void* buffers,
                           K* __restrict__ out_keys, V* __restrict__ out_values, size_t* __restrict__ sort_begins,
                           size_t* __restrict__ sort_ends) {
  using Block = SegmentedTopKBlock<Policy, K, V, SHARED_BUFFER>;
  __shared__ typename Block::Storage storage;
  using Bits = typename Block::Bits;
  Bits* slice_bits = nullptr;
  unsigned* slice_positions = nullptr;
  if constexpr (!SHARED_BUFFER) {
    // Every slice's positions, then every slice's keys (capacity is a multiple of 2: 8-byte keys stay aligned).
    slice_positions = static_cast<unsigned*>(buffers) + size_t{blockIdx.x} * capacity;
    slice_bits = reinterpret_cast<Bits*>(static_cast<unsigned*>(buffers) + size_t{gridDim.x} * capacity) +
                 size_t{blockIdx.x} * capacity;
  }
  // Histogram 0 counts a segment's top digits as its keys are read (cleared again after each segment).
  Block::clear_histogram(storage, 0);
  __syncthreads();
  wait_for_prior_grids();
  allow_dependent_grids();
  for (size_t s = blockIdx.x; s < num_segments; s += gridDim.x) {
    const auto begin = static_cast<size_t>(begin_offsets[s]);
    const auto end = static_cast<size_t>(end_offsets[s]);
    const auto length = static_cast<unsigned>(end > begin ? end - begin : 0);
    const auto taken = static_cast<unsigned>(length < k ? length : k);
    if (!SORT && threadIdx.x == 0) {
      sort_begins[s] = s * k;
      sort_ends[s] = s * k + taken;
    }
    Block block{storage, slice_bits, slice_positions, capacity, order};
    if constexpr (SORT) {
      // The winners, sorted: each takes a group of threads, which count the winners before it (by selection bits,
      // then position) between them.
      const Bits* list_bits = storage.bits;
      const unsigned* list_positions = storage.positions;
      bool listed = false;
      unsigned count = 0;
      if (length <= Block::kRowItems * Policy::block_threads) {
        // A row that fits the registers: its rounds and its listing read them, not the buffer.
        typename Block::Bits items[Block::kRowItems];
        block.load_row(keys + begin, length, items);
        if (length > taken) {
          block.find_threshold(taken, true, [&](unsigned* histogram, Bits prefix, Bits mask, int shift) {
#pragma unroll
            for (int j = 0; j < Block::kRowItems; ++j) {
              Block::count_digit(histogram, items[j], prefix, mask, shift,
                                 j * Policy::block_threads + threadIdx.x < length);
            }
          });
          if (storage.all_equal_win) {
#pragma unroll
            for (int j = 0; j < Block::kRowItems; ++j) {
              const unsigned i = j * Policy::block_threads + threadIdx.x;
              block.list_if_winner(i < length, items[j], i);
            }
            listed = true;
          }
        }
        if (!listed) {
          block.store_row(items, length);  // a tie at the k-th key, or k >= length: the buffer's ways
          count = length;
          if (length > taken) {
            __syncthreads();
            block.compact(count);
          }
        }
      } else {
        count = block.select(keys + begin, length, taken);
        if (count > taken) {
          block.find_threshold(count, taken);
          if (storage.all_equal_win) {
            block.list_winners(count);
            listed = true;
          } else {
            block.compact(count);  // the first of the keys equal to the threshold, by position
          }
        }
      }
      if (listed) {
        list_bits = storage.list_bits;
        list_positions = storage.list_positions;
      } else if (block.every_key_kept && threadIdx.x < count) {
        storage.positions[threadIdx.x] = threadIdx.x;  // count <= k <= a block's threads
      }
      __syncthreads();
      unsigned group = warp::kWarpThreads;  // threads a winner: a power of 2, at most a warp
      while (group > 1 && group * taken > static_cast<unsigned>(Policy::block_threads)) group /= 2;
      const unsigned winner = threadIdx.x / group;
      const unsigned part = threadIdx.x % group;
      unsigned position = 0;
      unsigned rank = 0;
      if (winner < taken) {
        const Bits bits = list_bits[winner];
        position = list_positions[winner];
        if constexpr (sizeof(Bits) <= 4) {
          // Selection bits, then position, in one 64-bit word.
          const unsigned long long mine = static_cast<unsigned long long>(bits) << 32 | position;
          for (unsigned j = part; j < taken; j += group) {
            rank += (static_cast<unsigned long long>(list_bits[j]) << 32 | list_positions[j]) < mine ? 1u : 0u;
          }
        } else {
          for (unsigned j = part; j < taken; j += group) {
            const Bits other = list_bits[j];
            rank += (other < bits || (other == bits && list_positions[j] < position)) ? 1u : 0u;
          }
        }
      }
      for (unsigned offset = group / 2; offset > 0; offset /= 2) rank += __shfl_xor_sync(~0u, rank, offset);
      if (winner < taken && part == 0) {
        out_keys[s * k + rank] = keys[begin + position];
        if constexpr (Block::kValues) out_values[s * k + rank] = values[begin + position];
      }
    } else {
      const unsigned count = block.select(keys + begin, length, taken);
      if (count > taken) {
        block.reduce(count, taken);
      } else {
        __syncthreads();  // the buffer's last writes
      }
      for (unsigned i = threadIdx.x; i < taken; i += Policy::block_threads) {
        const unsigned position = block.position(i);
        out_keys[s * k + i] = keys[begin + position];
        if constexpr (Block::kValues) out_values[s * k + i] = values[begin + position];
      }
    }
    Block::clear_histogram(storage, 0);
    __syncthreads();  // the next segment reuses the buffer and histogram 0
  }
}

/// The whole segmented top-k: the two-phase protocol, the select (winners sorted in the block for k up to a
/// block's threads) and, for larger k, the segmented sort of the winners (device/top_k.cuh has the contract).
template <class Table, class K, class V, class Offset, class Policy = typename Table::template SegmentedTopK<K, V>>
cudaError_t segmented_top_k(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t num_segments,
                            const Offset* begin_offsets, const Offset* end_offsets, size_t k, Order order,
                            cudaStream_t stream) {
  static_assert(std::is_integral_v<Offset> && !std::is_same_v<Offset, bool>, "segment offsets are integers");
  constexpr bool kValues = kHasValues<V>;
  using SharedBlock = SegmentedTopKBlock<Policy, K, V, true>;
  constexpr size_t kSharedMaxK = SharedBlock::kSharedBuffer - SharedBlock::kChunk;
  const bool sort_in_block = k <= static_cast<size_t>(Policy::block_threads);
  const bool shared_buffer = k <= kSharedMaxK;
  if (k != 0 && num_segments > SIZE_MAX / k / (sizeof(K) + 16)) {
    return invalid_value("segmented_top_k: %zu segments of k = %zu slots do not fit memory", num_segments, k);
  }
  // Buffers in temporary storage: one a resident block, of k keys (no segment holds 2^32) and a chunk, rounded up
  // to a multiple of 2.
  const size_t buffered_k = std::min<size_t>(k, UINT_MAX - 2 * SharedBlock::kChunk);
  const auto capacity = static_cast<unsigned>(
      shared_buffer ? SharedBlock::kSharedBuffer : (buffered_k + SharedBlock::kChunk + 1) / 2 * 2);
  auto global_kernel = segmented_top_k_kernel<Policy, K, V, Offset, false, false>;
  size_t slices = 0;
  if (!shared_buffer) {
    PRIMS_TRY(resident_blocks(global_kernel, Policy::block_threads, 0, slices));
    slices = std::min(slices, num_segments);
  }
  const size_t slots = sort_in_block ? 0 : num_segments * k;
  const PassBuffers<K, V> none{nullptr, nullptr, nullptr, nullptr};
  size_t sort_bytes = 0;
  if (!sort_in_block) {
    PRIMS_TRY((segmented::segmented_radix_sort<Table, K, V, size_t>(
        nullptr, sort_bytes, none, slots, num_segments, static_cast<const size_t*>(nullptr),
        static_cast<const size_t*>(nullptr), order, 0, RadixKey<K>::kBits, stream)));
  }
  const size_t value_bytes = kValues ? sizeof(std::conditional_t<kValues, V, char>) : 0;
  const size_t sort_offset_bytes = sort_in_block ? 0 : num_segments * sizeof(size_t);
  const size_t sizes[] = {slots * sizeof(K),  slots * value_bytes, sort_offset_bytes, sort_offset_bytes,
                          sort_bytes,         slices * capacity * (sizeof(K) + sizeof(unsigned))};
  void* parts[6];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr || num_segments == 0 || k == 0) return cudaSuccess;
  const int threads = Policy::block_threads;
  if (sort_in_block) {
    // k <= block_threads <= kSharedMaxK: the buffer is shared memory.
    const auto blocks = static_cast<unsigned>(std::min<size_t>(num_segments, INT_MAX));
    return launch(segmented_top_k_kernel<Policy, K, V, Offset, true, true>, blocks, threads, 0, stream, io.keys_in,
                  io.values_in, begin_offsets, end_offsets, num_segments, k, order, capacity,
                  static_cast<void*>(nullptr), io.keys_out, io.values_out, static_cast<size_t*>(nullptr),
                  static_cast<size_t*>(nullptr));
  }
  K* winner_keys = static_cast<K*>(parts[0]);
  V* winner_values = static_cast<V*>(parts[1]);
  auto* sort_begins = static_cast<size_t*>(parts[2]);
  auto* sort_ends = static_cast<size_t*>(parts[3]);
  if (shared_buffer) {
    const auto blocks = static_cast<unsigned>(std::min<size_t>(num_segments, INT_MAX));
    PRIMS_TRY(launch(segmented_top_k_kernel<Policy, K, V, Offset, true, false>, blocks, threads, 0, stream,
                     io.keys_in, io.values_in, begin_offsets, end_offsets, num_segments, k, order, capacity,
                     static_cast<void*>(nullptr), winner_keys, winner_values, sort_begins, sort_ends));
  } else {
    PRIMS_TRY(launch(global_kernel, static_cast<unsigned>(slices), threads, 0, stream, io.keys_in, io.values_in,
                     begin_offsets, end_offsets, num_segments, k, order, capacity, parts[5], winner_keys,
                     winner_values, sort_begins, sort_ends));
  }
  const PassBuffers<K, V> winners{winner_keys, io.keys_out, kValues ? winner_values : nullptr, io.values_out};
  size_t bytes = sort_bytes;
  return segmented::segmented_radix_sort<Table, K, V, size_t>(
      parts[4], bytes, winners, slots, num_segments, static_cast<const size_t*>(sort_begins),
      static_cast<const size_t*>(sort_ends), order, 0, RadixKey<K>::kBits, stream);
}

}  // namespace prims::detail
