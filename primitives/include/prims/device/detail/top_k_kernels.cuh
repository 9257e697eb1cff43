#pragma once
// Kernels and dispatch of top-k (prims::device::top_k_keys and top_k_pairs; device/top_k.cuh).
//
// The winners are the k smallest "selection bits" (the sort's ordered key bits, complemented for Descending),
// ties going to the earlier input position. A radix select finds the k-th smallest selection bits T a digit at a
// time from the top, on the device (no host synchronization):
//   rounds             top_k_count_kernel counts the next digit of the keys that match the threshold's digits so
//                      far, top_k_digit_kernel picks the digit that holds the k-th key and how many of its keys
//                      are needed, until a digit's keys are all needed or the last digit is picked;
//   first split        after the first round whose matching keys (the candidates) fit a buffer of `capacity`
//                      keys (round 0 for uniform keys; a later one where the top digits are crowded, as floats in
//                      [0, 1) are), top_k_split_kernel, one read of the input: the keys below the threshold so far
//                      are winners, written in input order; the candidates are copied, in input order, into the
//                      buffer, where the later rounds read them (every round reads the input while none fit);
//   last split         over the candidates (the input where no round's fit): those below the threshold, and the
//                      first ones equal to it, are winners, written after the others in input order;
//   sort               the k winners, stably by key: the first split's and the last's hold no equal keys and each
//                      is in input order, so equal keys end in input order.
// The splits are single-pass compactions on the look-back agent (lookback.cuh) whose tiles carry two counts (keys
// below the threshold, keys equal to it). Bytes moved for uniform keys: two reads of the input, then about
// n / 256 keys a round, and the sort of k.

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include "prims/block/scan.cuh"
#include "prims/device/detail/lookback.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_dispatch.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/device_properties.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"

namespace prims::detail {

/// Keys below the threshold and keys equal to it: what a split's tile counts. 32-bit counts where n < 2^32, so that
/// a tile's status (flag and both counts) is one 16-byte word.
template <class Count>
struct TopKCounts {
  Count below;
  Count equal;
  __host__ __device__ TopKCounts operator+(const TopKCounts& other) const {
    return {static_cast<Count>(below + other.below), static_cast<Count>(equal + other.equal)};
  }
};

/// The radix select's state, in temporary storage.
template <class K>
struct TopKState {
  using Bits = typename RadixKey<K>::Bits;
  static constexpr int kDigits = 256;
  /// The threshold's digits found so far and the bits they cover.
  Bits prefix;
  Bits mask;
  /// Winners still to take among the keys that match the prefix, and the keys below the prefix (all winners).
  unsigned long long need;
  unsigned long long below;
  /// The round after which the first split runs (-1: none yet; the rounds read the input until then), the
  /// winners it writes (the keys below the prefix then) and the candidates it copies.
  int split_round;
  unsigned long long first_below;
  unsigned long long split_candidates;
  /// Whether the threshold is settled (every key that matches the prefix is needed, or every digit is known).
  unsigned done;
  unsigned long long counts[kDigits];
};

/// The selection bits of a key: the sort's ordered bits, complemented for Descending.
template <class K>
__device__ __forceinline__ typename RadixKey<K>::Bits top_k_bits(K key, Order order) {
  using Bits = typename RadixKey<K>::Bits;
  const Bits bits = RadixKey<K>::ordered_bits(key);
  return order == Order::Descending ? static_cast<Bits>(~bits) : bits;
}

/// What the kernels read: the input, and the candidates' buffer once the first split has filled it.
template <class K, class V>
struct TopKSource {
  const K* keys;
  const V* values;
  size_t n;
  const K* candidate_keys;
  const V* candidate_values;
  size_t capacity;

  /// Whether a kernel queued after round `round` reads the candidates' buffer.
  __device__ bool from_candidates(const TopKState<K>& state, int round) const {
    return state.split_round >= 0 && state.split_round < round;
  }
};

template <class K>
__global__ void top_k_init_kernel(TopKState<K>* state, unsigned long long k) {
  wait_for_prior_grids();
  allow_dependent_grids();
  if (threadIdx.x == 0) {
    state->prefix = 0;
    state->mask = 0;
    state->need = k;
    state->below = 0;
    state->split_round = -1;
    state->first_below = 0;
    state->split_candidates = 0;
    state->done = 0;
  }
  for (int d = threadIdx.x; d < TopKState<K>::kDigits; d += blockDim.x) state->counts[d] = 0;
}

/// Round `round`: counts digit `shift` of the keys whose selection bits match the prefix, into state->counts; every
/// block a share of the source (the candidates once split, else the input), a copy of the counters a lane in
/// shared memory ([digit][lane]: lane l's counters in bank l).
template <class Policy, class K, class V>
__global__ void __launch_bounds__(Policy::count_threads)
    top_k_count_kernel(TopKSource<K, V> source, TopKState<K>* state, Order order, int round, int shift) {
  constexpr int kDigits = TopKState<K>::kDigits;
  constexpr int kLanes = warp::kWarpThreads;
  __shared__ unsigned counters[kDigits][kLanes];
  wait_for_prior_grids();
  allow_dependent_grids();
  if (state->done != 0) return;
  for (int i = threadIdx.x; i < kDigits * kLanes; i += Policy::count_threads) (&counters[0][0])[i] = 0;
  __syncthreads();
  using Bits = typename RadixKey<K>::Bits;
  const Bits prefix = state->prefix;
  const Bits mask = state->mask;
  const unsigned lane = threadIdx.x % kLanes;
  auto count_key = [&](K key) {
    const Bits bits = top_k_bits(key, order);
    if ((bits & mask) == prefix) atomicAdd(&counters[(bits >> shift) & (kDigits - 1)][lane], 1u);
  };
  const bool candidates = source.from_candidates(*state, round);
  const K* keys = candidates ? source.candidate_keys : source.keys;
  const size_t n = candidates ? static_cast<size_t>(state->split_candidates) : source.n;
  radix::count_keys_in_vectors<Policy::count_threads, Policy::count_items>(keys, n, blockIdx.x, gridDim.x, count_key);
  __syncthreads();
  for (int d = threadIdx.x; d < kDigits; d += Policy::count_threads) {
    unsigned total = 0;
    for (int l = 0; l < kLanes; ++l) total += counters[d][(l + d) % kLanes];  // threads of a warp in distinct banks
    if (total != 0) atomicAdd(&state->counts[d], static_cast<unsigned long long>(total));
  }
}

/// One block of a thread a digit, after round `round`: the digit at `shift` that holds the next winner (the
/// `need`-th smallest among the keys matching the prefix), added to the prefix; the keys of lower digits become
/// winners, the digit's keys the candidates. The threshold is settled when that digit's keys are all needed or it
/// was the last. The first split follows the first round whose candidates fit `capacity`. Clears the counts for the
/// next round.
template <class K>
__global__ void __launch_bounds__(TopKState<K>::kDigits)
    top_k_digit_kernel(TopKState<K>* state, int round, int shift, unsigned long long capacity) {
  constexpr int kDigits = TopKState<K>::kDigits;
  using Bits = typename RadixKey<K>::Bits;
  using DigitScan = block::Scan<unsigned long long, kDigits>;
  __shared__ typename DigitScan::TempStorage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  const unsigned long long count = state->counts[threadIdx.x];
  const unsigned long long need = state->need;
  const bool done = state->done != 0;
  unsigned long long total = 0;
  const unsigned long long before = DigitScan(storage).exclusive_scan(count, Sum{}, 0ull, total);
  __syncthreads();  // every thread has read the state
  if (!done && before < need && need <= before + count) {
    state->prefix = static_cast<Bits>(state->prefix | (static_cast<Bits>(threadIdx.x) << shift));
    state->mask = static_cast<Bits>(state->mask | (static_cast<Bits>(kDigits - 1) << shift));
    state->need = need - before;
    state->below += before;
    if (state->split_round < 0 && count <= capacity) {
      state->split_round = round;
      state->first_below = state->below;
      state->split_candidates = count;
    }
    if (count == need - before || shift == 0) state->done = 1;
  }
  state->counts[threadIdx.x] = 0;
}

/// A split (FIRST: the first, queued after round `round`, which runs only if that round is state->split_round, over
/// the input; else the last, over the candidates, or the input where none were split): each key whose selection
/// bits, under the mask, are below the prefix goes to the winners (from 0 for the input, after the first split's
/// winners for the candidates), in input order; each equal one, in input order, to the candidates' buffer (the
/// first split) or after the winners below (the last: the first `need` of them). A persistent grid taking tiles in
/// order from the counter.
template <class Policy, class K, class V, bool FIRST, class Count, class Status>
__global__ void __launch_bounds__(Policy::block_threads, Policy::split_min_blocks_per_sm)
    top_k_split_kernel(TopKSource<K, V> source, TopKState<K>* state, Order order, int round, K* winner_keys,
                       V* winner_values, K* candidate_keys, V* candidate_values, Status status,
                       unsigned* tile_counter) {
  constexpr int kThreads = Policy::block_threads;
  constexpr int kItems = Policy::items_per_thread;
  constexpr int kTileItems = kThreads * kItems;
  constexpr bool kValues = kHasValues<V>;
  using Bits = typename RadixKey<K>::Bits;
  using Counts = TopKCounts<Count>;
  using BlockScan = block::Scan<Counts, kThreads>;
  struct Storage {
    alignas(16) unsigned char keys[kBlockedLoadBytes<K, kThreads, kItems> > 0 ? kBlockedLoadBytes<K, kThreads, kItems>
                                                                              : 1];
    alignas(16) unsigned char values[kValues && kBlockedLoadBytes<std::conditional_t<kValues, V, char>, kThreads,
                                                                    kItems> > 0
                                         ? kBlockedLoadBytes<std::conditional_t<kValues, V, char>, kThreads, kItems>
                                         : 1];
    typename BlockScan::TempStorage scan;
    Counts prefix;
  };
  __shared__ Storage storage;
  wait_for_prior_grids();
  allow_dependent_grids();
  if (FIRST && state->split_round != round) return;
  const bool from_candidates = !FIRST && source.from_candidates(*state, round);
  const K* keys = from_candidates ? source.candidate_keys : source.keys;
  const V* values = from_candidates ? source.candidate_values : source.values;
  const size_t n = from_candidates ? static_cast<size_t>(state->split_candidates) : source.n;
  const Bits prefix = state->prefix;
  const Bits mask = state->mask;
  const unsigned long long need = state->need;
  const unsigned long long below_begin = from_candidates ? state->first_below : 0;
  // The last split's equal winners follow every winner below the threshold.
  const unsigned long long equal_begin = state->below;
  const size_t num_tiles = (n + kTileItems - 1) / kTileItems;
  for (;;) {
    __syncthreads();  // the tile's shared memory and the taken slot are reused
    const TakenTile taken = take_tile<kTileItems>(tile_counter, n);
    if (taken.tile >= num_tiles) return;
    K items[kItems];
    load_blocked<kThreads>(keys, taken.begin, taken.valid, items, storage.keys);
    std::conditional_t<kValues, V, char> item_values[kItems];
    if constexpr (kValues) load_blocked<kThreads>(values, taken.begin, taken.valid, item_values, storage.values);
    bool is_below[kItems];
    bool is_equal[kItems];
    Counts count{0, 0};
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const bool valid = static_cast<int>(threadIdx.x) * kItems + i < taken.valid;
      const Bits bits = static_cast<Bits>(top_k_bits(items[i], order) & mask);
      is_below[i] = valid && bits < prefix;
      is_equal[i] = valid && bits == prefix;
      count.below += is_below[i] ? 1 : 0;
      count.equal += is_equal[i] ? 1 : 0;
    }
    Counts tile_total;
    Counts offset = BlockScan(storage.scan).exclusive_scan(count, Sum{}, Counts{0, 0}, tile_total);
    if (threadIdx.x < warp::kWarpThreads) {
      LookBackPrefix<Policy, Counts, Sum, Status> look_back{status, taken.tile, Sum{}, Maybe<Counts>{Counts{0, 0}, true}};
      const Counts before = look_back(tile_total);
      if (threadIdx.x == 0) storage.prefix = before;
    }
    __syncthreads();
    offset = storage.prefix + offset;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (is_below[i]) {
        const unsigned long long at = below_begin + offset.below;
        ++offset.below;
        winner_keys[at] = items[i];
        if constexpr (kValues) winner_values[at] = item_values[i];
      } else if (is_equal[i]) {
        const unsigned long long rank = offset.equal;
        ++offset.equal;
        if constexpr (FIRST) {
          if (rank < source.capacity) {
            candidate_keys[rank] = items[i];
            if constexpr (kValues) candidate_values[rank] = item_values[i];
          }
        } else if (rank < need) {
          winner_keys[equal_begin + rank] = items[i];
          if constexpr (kValues) winner_values[equal_begin + rank] = item_values[i];
        }
      }
    }
  }
}

/// top_k for k < n under a table, with the splits' counts in Count.
template <class Table, class K, class V, class Policy, class Count>
cudaError_t top_k_select(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, size_t k, Order order,
                         cudaStream_t stream) {
  using Status = TileStatus<TopKCounts<Count>, Policy::status_slot_bytes>;
  constexpr size_t kTileItems = static_cast<size_t>(Policy::block_threads) * Policy::items_per_thread;
  constexpr bool kValues = kHasValues<V>;
  const size_t capacity = std::min(n, n / Policy::candidates_share + 4096);
  const size_t num_tiles = (n + kTileItems - 1) / kTileItems;
  const PassBuffers<K, V> none{nullptr, nullptr, nullptr, nullptr};
  size_t sort_bytes = 0;
  PRIMS_TRY((radix::radix_sort_with<device::RadixSortAlgorithm::Auto, Table>(nullptr, sort_bytes, none, k, order, 0,
                                                                             RadixKey<K>::kBits, nullptr, stream)));
  const size_t value_bytes = kValues ? sizeof(std::conditional_t<kValues, V, char>) : 0;
  // The first split and the last each have their look-back words and tile counter, both cleared once before the
  // rounds: at most one of the first split's attempts runs (the others return at once, touching neither).
  const size_t sizes[] = {sizeof(TopKState<K>),   Status::bytes(num_tiles), Status::bytes(num_tiles),
                          2 * sizeof(unsigned),   k * sizeof(K),            k * value_bytes,
                          capacity * sizeof(K),   capacity * value_bytes,   sort_bytes};
  void* parts[9];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr || k == 0) return cudaSuccess;
  auto* state = static_cast<TopKState<K>*>(parts[0]);
  const Status first_status(parts[1], num_tiles);
  const Status last_status(parts[2], num_tiles);
  auto* first_counter = static_cast<unsigned*>(parts[3]);
  unsigned* last_counter = first_counter + 1;
  K* winner_keys = static_cast<K*>(parts[4]);
  V* winner_values = static_cast<V*>(parts[5]);
  K* candidate_keys = static_cast<K*>(parts[6]);
  V* candidate_values = static_cast<V*>(parts[7]);
  const TopKSource<K, V> source{io.keys_in, io.values_in, n, candidate_keys, candidate_values, capacity};

  int multiprocessors = 0;
  PRIMS_TRY(multiprocessor_count(multiprocessors));
  const size_t count_blocks = static_cast<size_t>(multiprocessors) * Policy::count_blocks_per_sm;
  const size_t split_blocks = std::min(num_tiles, static_cast<size_t>(multiprocessors) * 8);
  constexpr int kDigitBits = Policy::radix_bits;
  constexpr int kRounds = RadixKey<K>::kBits / kDigitBits;
  auto clear = [&](const Status& status, unsigned* counter) {
    return launch(init_tile_status_kernel<Status>, static_cast<unsigned>((num_tiles + 255) / 256), 256, 0, stream,
                  status, num_tiles, counter, static_cast<unsigned long long*>(nullptr));
  };
  PRIMS_TRY(clear(first_status, first_counter));
  PRIMS_TRY(clear(last_status, last_counter));
  auto split = [&](auto kernel, int r, const Status& status, unsigned* counter) -> cudaError_t {
    return launch_persistent(kernel, split_blocks, Policy::block_threads, 0, stream, source, state, order, r,
                             winner_keys, winner_values, candidate_keys, candidate_values, status, counter);
  };
  PRIMS_TRY(launch(top_k_init_kernel<K>, 1, TopKState<K>::kDigits, 0, stream, state,
                   static_cast<unsigned long long>(k)));
  for (int r = 0; r < kRounds; ++r) {
    // Round r, then the first split if this round's candidates are the first to fit (it returns at once if not).
    const int shift = RadixKey<K>::kBits - (r + 1) * kDigitBits;
    PRIMS_TRY(launch_persistent(top_k_count_kernel<Policy, K, V>, count_blocks, Policy::count_threads, 0, stream,
                                source, state, order, r, shift));
    PRIMS_TRY(launch(top_k_digit_kernel<K>, 1, TopKState<K>::kDigits, 0, stream, state, r, shift,
                     static_cast<unsigned long long>(capacity)));
    PRIMS_TRY(split(top_k_split_kernel<Policy, K, V, true, Count, Status>, r, first_status, first_counter));
  }
  PRIMS_TRY(split(top_k_split_kernel<Policy, K, V, false, Count, Status>, kRounds, last_status, last_counter));
  const PassBuffers<K, V> winners{winner_keys, io.keys_out, kValues ? winner_values : nullptr, io.values_out};
  size_t bytes = sort_bytes;
  return radix::radix_sort_with<device::RadixSortAlgorithm::Auto, Table>(parts[8], bytes, winners, k, order, 0,
                                                                         RadixKey<K>::kBits, nullptr, stream);
}

/// The whole top-k: the two-phase protocol, then the radix select, the splits and the sort of the winners
/// (device/top_k.cuh has the contract). k >= n sorts the whole input.
template <class Table, class K, class V, class Policy = typename Table::template TopK<K, V>>
cudaError_t top_k(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, size_t k, Order order,
                  cudaStream_t stream) {
  if (k >= n) {
    return radix::radix_sort_with<device::RadixSortAlgorithm::Auto, Table>(temp, temp_bytes, io, n, order, 0,
                                                                           RadixKey<K>::kBits, nullptr, stream);
  }
  if (n <= UINT_MAX) return top_k_select<Table, K, V, Policy, unsigned>(temp, temp_bytes, io, n, k, order, stream);
  return top_k_select<Table, K, V, Policy, unsigned long long>(temp, temp_bytes, io, n, k, order, stream);
}

}  // namespace prims::detail
