#pragma once
// Segmented top-k (device/top_k.cuh has the contract): one block a segment selects its min(k, length) winners, equal
// keys in input order, into k slots of a buffer in temporary storage; then the segmented radix sort sorts each
// segment's winners into keys_out[i * k ...] (stable, so equal keys stay in input order).
//
// A block's select is a radix select on the selection bits (top_k_kernels.cuh's top_k_bits), a digit (8 bits) a
// round from the top: the digits of the keys that match the threshold's digits so far (the candidates) are counted
// in shared memory, and the digit that holds the next winner joins the threshold; the candidates of lower digits
// are winners. The rounds read the segment from global memory until its candidates fit a shared buffer; then one
// pass in input order writes the winners found so far and copies the candidates (with their positions) into the
// buffer, and the later rounds read only the buffer, which each round compacts in place to its new candidates. A
// segment that fits is copied before the first round. Last, a pass in input order over the buffer (or the segment,
// where it never fitted) writes the candidates below the threshold and the first ones equal to it. Segments hold
// fewer than 2^32 keys.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "prims/block/scan.cuh"
#include "prims/device/detail/segmented_radix_sort_dispatch.cuh"
#include "prims/device/detail/top_k_kernels.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/warp/scan.cuh"

namespace prims::detail {

/// Where a select pass reads: the segment in global memory, or the block's buffer of candidates.
template <class K>
struct SelectSource {
  const K* keys;                // the segment's keys, or the buffer's
  const unsigned* positions;    // the buffer's positions in the segment; null for the segment itself
  unsigned count;

  __device__ K key(unsigned i) const { return keys[i]; }
  __device__ unsigned position(unsigned i) const { return positions == nullptr ? i : positions[i]; }
};

template <class Policy, class K, class V>
struct SegmentedTopKBlock {
  using Bits = typename RadixKey<K>::Bits;
  using Counts = TopKCounts<unsigned>;
  using BlockScan = block::Scan<Counts, Policy::block_threads>;
  static constexpr int kThreads = Policy::block_threads;
  static constexpr int kItems = Policy::items_per_thread;
  static constexpr int kDigits = 1 << Policy::radix_bits;
  static constexpr int kBufferKeys = Policy::buffer_keys;
  static constexpr bool kValues = kHasValues<V>;

  struct Storage {
    K buffer_keys[kBufferKeys];
    unsigned buffer_positions[kBufferKeys];
    unsigned histogram[kDigits];
    typename BlockScan::TempStorage scan;
    Bits prefix;
    Bits mask;
    unsigned need;        // winners still to take among the candidates
    unsigned candidates;  // keys that match the prefix
    unsigned buffered;    // keys in the buffer (the candidates when they were copied)
    unsigned written;     // winners written so far
    bool done;
  };

  Storage& storage;
  const K* keys;      // the segment's
  const V* values;    // the segment's (NoValues: unused)
  K* winner_keys;     // its k slots
  V* winner_values;
  Order order;

  __device__ Bits bits_of(K key) const { return top_k_bits(key, order); }

  /// Counts digit `shift` of the candidates in `source` and moves the threshold to the digit of the next winner.
  __device__ void round(const SelectSource<K>& source, int shift) const {
    for (int d = threadIdx.x; d < kDigits; d += kThreads) storage.histogram[d] = 0;
    __syncthreads();
    const Bits prefix = storage.prefix;
    const Bits mask = storage.mask;
    // kItems keys a thread in flight, each load striding over the block: a long segment read one key a thread at a
    // time waited on every load (docs/design-notes.md, "Top-k").
    for (unsigned base = 0; base < source.count; base += kThreads * kItems) {
      K items[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const unsigned i = base + j * kThreads + threadIdx.x;
        if (i < source.count) items[j] = source.key(i);
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const unsigned i = base + j * kThreads + threadIdx.x;
        if (i < source.count) {
          const Bits bits = bits_of(items[j]);
          // An increment whose result is unused: the hardware adds a warp's lanes of one digit at once
          // (ATOMS.POPC.INC), so keys that crowd into few digits (floats share their exponents) cost no more.
          const unsigned digit = static_cast<unsigned>(bits >> shift) & (kDigits - 1);
          if ((bits & mask) == prefix) atomicAdd(&storage.histogram[digit], 1u);
        }
      }
    }
    __syncthreads();
    if (threadIdx.x < warp::kWarpThreads) {
      constexpr int kPerLane = kDigits / warp::kWarpThreads;
      const int lane = static_cast<int>(threadIdx.x);
      unsigned counts[kPerLane];
      unsigned sum = 0;
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        counts[j] = storage.histogram[lane * kPerLane + j];
        sum += counts[j];
      }
      unsigned total = 0;
      const unsigned inclusive = warp::inclusive_scan_shuffle(sum, Sum{}, total);
      unsigned before = inclusive - sum;
      const unsigned need = storage.need;
      __syncwarp();  // every lane has read `need` before one writes it
      if (before < need && need <= inclusive) {
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
          if (before < need && need <= before + counts[j]) {
            const Bits digit = static_cast<Bits>(lane * kPerLane + j);
            storage.prefix = static_cast<Bits>(prefix | (digit << shift));
            storage.mask = static_cast<Bits>(mask | (static_cast<Bits>(kDigits - 1) << shift));
            storage.need = need - before;
            storage.candidates = counts[j];
            storage.done = counts[j] == need - before || shift == 0;
          }
          before += counts[j];
        }
      }
    }
    __syncthreads();
  }

  /// One pass in input order over `source`: the candidates below the threshold are written as winners; those equal
  /// to it are kept in the buffer (KEEP: the source may be the buffer itself, compacted in place) or, the first
  /// `need` of them, written as winners. Each chunk's keys are held in registers across the block scan, so in
  /// place no write overtakes a read (a kept key's new index is never above its old one).
  template <bool KEEP>
  __device__ void ordered_pass(const SelectSource<K>& source) const {
    const Bits prefix = storage.prefix;
    const Bits mask = storage.mask;
    const unsigned need = storage.need;
    unsigned written = storage.written;
    unsigned equal_seen = 0;
    constexpr unsigned kChunk = static_cast<unsigned>(kThreads) * kItems;
    for (unsigned chunk = 0; chunk < source.count; chunk += kChunk) {
      const unsigned first = chunk + threadIdx.x * kItems;
      K items[kItems];
      unsigned positions[kItems];
      bool below[kItems];
      bool equal[kItems];
      Counts count{0, 0};
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const unsigned i = first + j;
        below[j] = false;
        equal[j] = false;
        if (i < source.count) {
          items[j] = source.key(i);
          positions[j] = source.position(i);
          const Bits bits = static_cast<Bits>(bits_of(items[j]) & mask);
          below[j] = bits < prefix;
          equal[j] = bits == prefix;
        }
        count.below += below[j] ? 1u : 0u;
        count.equal += equal[j] ? 1u : 0u;
      }
      Counts total;
      Counts offset = BlockScan(storage.scan).exclusive_scan(count, Sum{}, Counts{0, 0}, total);
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (below[j]) {
          write_winner(written + offset.below++, items[j], positions[j]);
        } else if (equal[j]) {
          const unsigned rank = equal_seen + offset.equal++;
          if constexpr (KEEP) {
            storage.buffer_keys[rank] = items[j];
            storage.buffer_positions[rank] = positions[j];
          } else if (rank < need) {
            write_winner(written + total.below + (rank - equal_seen), items[j], positions[j]);
          }
        }
      }
      // The winners below come first in every chunk, then (not KEEP) the equal ones taken.
      written += total.below;
      if constexpr (!KEEP) written += equal_seen < need ? min(total.equal, need - equal_seen) : 0u;
      equal_seen += total.equal;
      __syncthreads();  // the scan storage is reused
    }
    if (threadIdx.x == 0) {
      storage.written = written;
      if constexpr (KEEP) storage.buffered = equal_seen;
    }
    __syncthreads();
  }

  __device__ void write_winner(unsigned slot, K key, unsigned position) const {
    winner_keys[slot] = key;
    if constexpr (kValues) winner_values[slot] = values[position];
  }
};

/// Block s (and s + gridDim.x, ...): segment s's min(k, length) winners into winner_keys[s * k ...] (values
/// alike), equal keys in input order, and the sort's segment [s * k, s * k + min(k, length)).
template <class Policy, class K, class V, class Offset>
__global__ void __launch_bounds__(Policy::block_threads)
    segmented_top_k_select_kernel(const K* __restrict__ keys, const V* __restrict__ values,
                                  const Offset* __restrict__ begin_offsets, const Offset* __restrict__ end_offsets,
                                  size_t num_segments, size_t k, Order order, K* __restrict__ winner_keys,
                                  V* __restrict__ winner_values, size_t* __restrict__ sort_begins,
                                  size_t* __restrict__ sort_ends) {
  using Block = SegmentedTopKBlock<Policy, K, V>;
  constexpr int kRounds = RadixKey<K>::kBits / Policy::radix_bits;
  __shared__ typename Block::Storage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  for (size_t s = blockIdx.x; s < num_segments; s += gridDim.x) {
    const auto begin = static_cast<size_t>(begin_offsets[s]);
    const auto end = static_cast<size_t>(end_offsets[s]);
    const size_t length = end > begin ? end - begin : 0;
    const size_t taken = length < k ? length : k;
    if (threadIdx.x == 0) {
      sort_begins[s] = s * k;
      sort_ends[s] = s * k + taken;
    }
    K* out_keys = winner_keys + s * k;
    V* out_values = Block::kValues ? winner_values + s * k : nullptr;
    if (taken == length) {
      // Every key wins.
      for (size_t i = threadIdx.x; i < length; i += Policy::block_threads) {
        out_keys[i] = keys[begin + i];
        if constexpr (Block::kValues) out_values[i] = values[begin + i];
      }
      continue;
    }
    const Block block{storage, keys + begin, Block::kValues ? values + begin : nullptr, out_keys, out_values, order};
    if (threadIdx.x == 0) {
      storage.prefix = 0;
      storage.mask = 0;
      storage.need = static_cast<unsigned>(taken);
      storage.candidates = static_cast<unsigned>(length);
      storage.buffered = 0;
      storage.written = 0;
      storage.done = false;
    }
    __syncthreads();
    const SelectSource<K> segment{keys + begin, nullptr, static_cast<unsigned>(length)};
    bool buffered = false;
    auto source = [&] {
      return buffered ? SelectSource<K>{storage.buffer_keys, storage.buffer_positions, storage.buffered} : segment;
    };
    for (int r = 0; r < kRounds && !storage.done; ++r) {
      if (!buffered && storage.candidates <= static_cast<unsigned>(Block::kBufferKeys)) {
        block.template ordered_pass<true>(segment);
        buffered = true;
      }
      block.round(source(), RadixKey<K>::kBits - (r + 1) * Policy::radix_bits);
      // The buffer keeps only the candidates of the new prefix (the others below it are written as winners).
      if (buffered && !storage.done) block.template ordered_pass<true>(source());
    }
    block.template ordered_pass<false>(source());
  }
}

/// The whole segmented top-k: the two-phase protocol, the select and the segmented sort of the winners
/// (device/top_k.cuh has the contract).
template <class Table, class K, class V, class Offset, class Policy = typename Table::template SegmentedTopK<K, V>>
cudaError_t segmented_top_k(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t num_segments,
                            const Offset* begin_offsets, const Offset* end_offsets, size_t k, Order order,
                            cudaStream_t stream) {
  static_assert(std::is_integral_v<Offset> && !std::is_same_v<Offset, bool>, "segment offsets are integers");
  constexpr bool kValues = kHasValues<V>;
  if (k != 0 && num_segments > SIZE_MAX / k / (sizeof(K) + 16)) {
    return invalid_value("segmented_top_k: %zu segments of k = %zu slots do not fit memory", num_segments, k);
  }
  const size_t slots = num_segments * k;
  const PassBuffers<K, V> none{nullptr, nullptr, nullptr, nullptr};
  size_t sort_bytes = 0;
  PRIMS_TRY((segmented::segmented_radix_sort<Table, K, V, size_t>(
      nullptr, sort_bytes, none, slots, num_segments, static_cast<const size_t*>(nullptr),
      static_cast<const size_t*>(nullptr), order, 0, RadixKey<K>::kBits, stream)));
  const size_t value_bytes = kValues ? sizeof(std::conditional_t<kValues, V, char>) : 0;
  const size_t sizes[] = {slots * sizeof(K), slots * value_bytes, num_segments * sizeof(size_t),
                          num_segments * sizeof(size_t), sort_bytes};
  void* parts[5];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr || num_segments == 0 || k == 0) return cudaSuccess;
  K* winner_keys = static_cast<K*>(parts[0]);
  V* winner_values = static_cast<V*>(parts[1]);
  auto* sort_begins = static_cast<size_t*>(parts[2]);
  auto* sort_ends = static_cast<size_t*>(parts[3]);
  const auto blocks = static_cast<unsigned>(std::min<size_t>(num_segments, INT_MAX));
  PRIMS_TRY(launch(segmented_top_k_select_kernel<Policy, K, V, Offset>, blocks, Policy::block_threads, 0, stream,
                   io.keys_in, io.values_in, begin_offsets, end_offsets, num_segments, k, order, winner_keys,
                   winner_values, sort_begins, sort_ends));
  const PassBuffers<K, V> winners{winner_keys, io.keys_out, kValues ? winner_values : nullptr, io.values_out};
  size_t bytes = sort_bytes;
  return segmented::segmented_radix_sort<Table, K, V, size_t>(
      parts[4], bytes, winners, slots, num_segments, static_cast<const size_t*>(sort_begins),
      static_cast<const size_t*>(sort_ends), order, 0, RadixKey<K>::kBits, stream);
}

}  // namespace prims::detail
