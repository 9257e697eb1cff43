#pragma once
// A tile sorted entirely in registers and shared memory: up to kSlots independent runs of keys (slots of
// SLOT_ITEMS keys each), loaded once, ranked and exchanged through shared memory for every digit of the bit range,
// then written once. The segmented sort packs small segments into its slots (device/detail/
// segmented_tile_sort.cuh); the one-block sort gives the whole input to one slot
// (device/detail/radix_sort_one_block.cuh).

#include <cuda_runtime.h>

#include "prims/block/radix_rank.cuh"
#include "prims/block/tile_io.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/shuffle.cuh"
#include "prims/util/sort_shapes.cuh"

namespace prims::detail {

/// Sorts groups of up to kSlots segments of at most SLOT_ITEMS keys, one group per tile of Shape; `Policy` gives
/// radix_bits and rank_with_match_any. The keys stay in registers between passes; each pass ranks them
/// (block::RadixRank) and exchanges them through shared memory into rank order. Where a key started in the tile
/// (its origin) is needed only to find its slot (packed tiles) and to gather values at the end, so it never sits in
/// registers: each pass moves the origins from one shared array to the other, and a tile of one slot without values
/// keeps none. A thread reads only its own elements' origins. Padding (slot elements past the slot's keys) takes the
/// largest digit in every pass, so it stays behind its slot's keys; a last pass by slot number brings each slot's
/// keys together again (LSD: the slot is the most significant digit).
template <class Policy, class Shape, int SLOT_ITEMS, class K, class V>
struct TileSort {
  using Io = WarpStripedTileIo<Shape::threads, Shape::items_per_thread>;
  static constexpr int kThreads = Io::kThreads;
  static constexpr int kItems = Io::kItems;
  static constexpr int kTileItems = Io::kTileItems;
  static constexpr int kSlots = kTileItems / SLOT_ITEMS;
  static constexpr int kDigits = 1 << Policy::radix_bits;
  static constexpr bool kOrigins = kSlots > 1 || kHasValues<V>;
  using Rank = block::RadixRank<kThreads, kItems, Policy::radix_bits, Policy::rank_with_match_any>;
  static_assert(kTileItems % SLOT_ITEMS == 0 && kSlots <= kDigits, "slots divide the tile; one digit a slot");
  static_assert(kTileItems <= 65536, "origins are tile elements of 16 bits");

  struct TempStorage {
    /// Apart from the keys, so a pass needs no barrier between ranking and exchanging.
    typename Rank::TempStorage rank;
    union {
      /// The tile in rank order, between a pass's exchange and its reading back.
      K keys[kTileItems];
      /// The group's values by origin, at the end.
      alignas(16) unsigned char values[kHasValues<V> ? kTileItems * sizeof(V) : 1];
    };
    /// origins[p % 2][e]: where tile element e started, after p passes.
    unsigned short origins[2][kOrigins ? kTileItems : 1];
    size_t slot_begin[kSlots];
    unsigned slot_size[kSlots];
    unsigned work;
    /// One slot: the ordered bits of the tile's first key, and those in which some key differs from it.
    unsigned long long first_bits;
    unsigned long long differing_bits;
  };

  /// Bit p set where the keys of a one-slot tile do not all share their digit of pass p: the other passes would
  /// leave the tile as it is (the ranking is stable and the padding already fills the tile's end), so they are
  /// skipped, as Onesweep skips its trivial passes. Two keys share a digit exactly when their ordered bits agree in
  /// its range, so one XOR a key against the first key finds every pass at once.
  __device__ static unsigned differing_passes(const K (&keys)[kItems], unsigned size, Order order, int begin_bit,
                                              int end_bit, TempStorage& storage) {
    using Bits = typename RadixKey<K>::Bits;
    if (threadIdx.x == 0) {
      storage.first_bits = RadixKey<K>::ordered_bits(keys[0]);  // thread 0's first item is tile element 0
      storage.differing_bits = 0;
    }
    __syncthreads();
    const auto first_bits = static_cast<Bits>(storage.first_bits);
    unsigned long long differing = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (static_cast<unsigned>(Io::element(i)) < size) {
        differing |= static_cast<Bits>(RadixKey<K>::ordered_bits(keys[i]) ^ first_bits);
      }
    }
    const unsigned low = __reduce_or_sync(kFullWarpMask, static_cast<unsigned>(differing));
    const unsigned high = __reduce_or_sync(kFullWarpMask, static_cast<unsigned>(differing >> 32));
    if (threadIdx.x % warp::kWarpThreads == 0 && (low | high) != 0) {
      atomicOr(&storage.differing_bits, (static_cast<unsigned long long>(high) << 32) | low);
    }
    __syncthreads();
    differing = storage.differing_bits;
    unsigned passes = 0;
    const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
    for (int pass = 0; pass < num_passes; ++pass) {
      const auto digit = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass);
      if ((static_cast<unsigned>(differing >> digit.shift) & digit.mask) != 0) passes |= 1u << pass;
    }
    return passes;
  }

  /// Whether tile element `origin` (an element of the tile as loaded) is padding: past its slot's segment.
  __device__ static bool is_padding(unsigned origin, const TempStorage& storage) {
    return origin % SLOT_ITEMS >= storage.slot_size[origin / SLOT_ITEMS];
  }

  /// One stable pass: ranks the tile by `ranks` (the digits on entry) and moves the keys into rank order, back
  /// into the warp-striped registers, and the origins from origins[from] to origins[from ^ 1].
  __device__ static void rank_and_exchange(K (&keys)[kItems], unsigned (&ranks)[kItems], int from,
                                           TempStorage& storage) {
    unsigned digit_count;
    unsigned digit_prefix;
    Rank(storage.rank).rank(ranks, ranks, digit_count, digit_prefix, 0, IgnoreDigitCounts{});
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      storage.keys[ranks[i]] = keys[i];
      if constexpr (kOrigins) storage.origins[from ^ 1][ranks[i]] = storage.origins[from][Io::element(i)];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kItems; ++i) keys[i] = storage.keys[Io::element(i)];
    // The next pass writes the keys only after its ranking's barriers, which every thread reaches after reading.
  }

  /// Sorts the group whose slots are set in `storage` (slot_begin, slot_size; empty slots have size 0).
  /// Keys are read from io.keys_in and written to io.keys_out at the slots' positions (values likewise); only the
  /// ordered bits [begin_bit, end_bit) count.
  __device__ static void sort_group(PassBuffers<K, V> io, Order order, int begin_bit, int end_bit,
                                    TempStorage& storage) {
    K keys[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const unsigned element = static_cast<unsigned>(Io::element(i));
      if constexpr (kOrigins) storage.origins[0][element] = static_cast<unsigned short>(element);
      keys[i] = K{};
      if (!is_padding(element, storage)) {
        keys[i] = io.keys_in[storage.slot_begin[element / SLOT_ITEMS] + element % SLOT_ITEMS];
      }
    }
    // Padding takes the largest digit in every pass, so it stays behind its slot's keys (stable ranking); in a
    // tile of one slot it fills the tile's end, elements size .. kTileItems - 1, after every pass.
    const unsigned size = storage.slot_size[0];
    const int num_passes = radix_passes(begin_bit, end_bit, Policy::radix_bits);
    unsigned passes_to_run = ~0u;
    if constexpr (kSlots == 1) passes_to_run = differing_passes(keys, size, order, begin_bit, end_bit, storage);
    int from = 0;
    for (int pass = 0; pass < num_passes; ++pass) {
      if (((passes_to_run >> pass) & 1u) == 0) continue;
      const auto digit_of = pass_digit<K>(order, begin_bit, end_bit, Policy::radix_bits, pass);
      unsigned ranks[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const unsigned element = static_cast<unsigned>(Io::element(i));
        const bool padding =
            kSlots == 1 ? element >= size : is_padding(storage.origins[from][element], storage);
        ranks[i] = padding ? kDigits - 1 : digit_of(keys[i]);
      }
      rank_and_exchange(keys, ranks, from, storage);
      from ^= 1;
    }
    if constexpr (kSlots > 1) {
      // Every slot holds SLOT_ITEMS elements, so slot j ends up at [j * SLOT_ITEMS, (j + 1) * SLOT_ITEMS), its
      // keys first: padding took the largest digit in every pass and follows its slot's keys in the tile.
      unsigned ranks[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) ranks[i] = storage.origins[from][Io::element(i)] / SLOT_ITEMS;
      rank_and_exchange(keys, ranks, from, storage);
      from ^= 1;
    }
    // Tile element p now holds the (p % SLOT_ITEMS)-th key of slot p / SLOT_ITEMS's segment, if the segment has
    // that many.
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const unsigned element = static_cast<unsigned>(Io::element(i));
      if (!is_padding(element, storage)) {
        io.keys_out[storage.slot_begin[element / SLOT_ITEMS] + element % SLOT_ITEMS] = keys[i];
      }
    }
    if constexpr (kHasValues<V>) {
      V* values = reinterpret_cast<V*>(storage.values);
      __syncthreads();  // the values share memory with the keys' exchange, which may still be read
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const unsigned element = static_cast<unsigned>(Io::element(i));
        if (!is_padding(element, storage)) {
          values[element] = io.values_in[storage.slot_begin[element / SLOT_ITEMS] + element % SLOT_ITEMS];
        }
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const unsigned element = static_cast<unsigned>(Io::element(i));
        if (!is_padding(element, storage)) {
          io.values_out[storage.slot_begin[element / SLOT_ITEMS] + element % SLOT_ITEMS] =
              values[storage.origins[from][element]];
        }
      }
    }
  }
};

}  // namespace prims::detail
