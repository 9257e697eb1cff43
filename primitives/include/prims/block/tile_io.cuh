#pragma once
// Moving a tile between global memory and a block's registers, in the two arrangements the algorithms use. Every
// kernel that loads a tile does it through one of these.
//
//   WarpStripedTileIo  item i of lane l in warp w is tile element (w * ITEMS + i) * 32 + l: each load is
//                      coalesced, and a warp's items in item order are in tile order (the radix sorts rank in
//                      this arrangement, block::RadixRank).
//   BlockedTileIo      thread t holds items [t * ITEMS, (t + 1) * ITEMS) (what a block scan needs), read as
//                      coalesced 16-byte vectors (util/vector_load.cuh) and transposed through shared memory
//                      warp by warp.
//   load_blocked       the blocked arrangement from any random-access iterator, and store_blocked to any output
//   store_blocked      iterator: through BlockedTileIo for pointers to the item type, item by item otherwise.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "prims/util/vector_load.cuh"
#include "prims/warp/reduce.cuh"

namespace prims::detail {

template <int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct WarpStripedTileIo {
  static constexpr int kThreads = BLOCK_THREADS;
  static constexpr int kItems = ITEMS_PER_THREAD;
  static constexpr int kTileItems = BLOCK_THREADS * ITEMS_PER_THREAD;
  static_assert(BLOCK_THREADS % warp::kWarpThreads == 0, "tiles are moved by whole warps");

  /// Where this thread's item i lies in the tile.
  __device__ static int element(int item) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    return (warp_id * kItems + item) * warp::kWarpThreads + lane;
  }

  /// Loads the tile starting at `tile`; items past `valid` are left unset. FULL: the tile is whole (valid is
  /// kTileItems), so no item is bounds-checked.
  template <bool FULL = false, class T>
  __device__ static void load(const T* __restrict__ tile, int valid, T (&items)[kItems]) {
    if (FULL || valid == kTileItems) {
#pragma unroll
      for (int i = 0; i < kItems; ++i) items[i] = tile[element(i)];
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (element(i) < valid) items[i] = tile[element(i)];
      }
    }
  }

  /// Asks the L2 cache for the tile's first `valid` items, a request a 128-byte line spread over the block, so that
  /// a later load() finds them there. Every address asked for lies inside the items.
  template <class T>
  __device__ static void prefetch_l2(const T* tile, int valid) {
    constexpr uintptr_t kLine = 128;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(tile);
    const uintptr_t end = begin + static_cast<uintptr_t>(valid) * sizeof(T);
    for (uintptr_t line = (begin & ~(kLine - 1)) + threadIdx.x * kLine; line < end; line += kThreads * kLine) {
      prefetch_l2_line(reinterpret_cast<const void*>(line < begin ? begin : line));
    }
  }

  /// Stores items back at their own tile positions.
  template <class T>
  __device__ static void store(T* __restrict__ tile, int valid, const T (&items)[kItems]) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (element(i) < valid) tile[element(i)] = items[i];
    }
  }
};

template <class T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockedTileIo {
  static constexpr int block_threads = BLOCK_THREADS;
  static constexpr int items_per_thread = ITEMS_PER_THREAD;
  static constexpr int tile_items = block_threads * items_per_thread;
  static constexpr int vector_items = kVectorItems<T>;
  static constexpr int vectors_per_thread = items_per_thread / vector_items;
  static constexpr int warp_items = warp::kWarpThreads * items_per_thread;
  static_assert(items_per_thread % vector_items == 0, "a thread's items must be whole vectors");
  static_assert(block_threads % warp::kWarpThreads == 0, "tiles are moved by whole warps");

  using Vec = Vector<T>;

  struct Storage {
    // Each warp transposes its own slice, whole vectors at a time, in the swizzled order of slot().
    Vec exchange[block_threads / warp::kWarpThreads][warp_items / vector_items];
  };

  /// Loads tile_in[0, valid) into blocked registers: thread t gets items [t * items_per_thread, ...). Items past
  /// `valid` are copies of tile_in[0]. HINT: how the reads use the caches (util/vector_load.cuh).
  template <CacheHint HINT = CacheHint::Normal>
  __device__ static void load(const T* tile_in, int valid, T (&items)[items_per_thread], Storage& storage) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    const int warp_begin = warp_id * warp_items;
    Vec* exchange = storage.exchange[warp_id];
    __syncwarp();  // lanes may still be reading the exchange for the previous tile's store
    if (vectorized(tile_in, valid)) {
      const Vec* vectors = reinterpret_cast<const Vec*>(tile_in + warp_begin);
      Vec loaded[vectors_per_thread];
#pragma unroll
      for (int v = 0; v < vectors_per_thread; ++v) {
        loaded[v] = load_with_hint<HINT>(vectors + v * warp::kWarpThreads + lane);
      }
#pragma unroll
      for (int v = 0; v < vectors_per_thread; ++v) {
        exchange[slot(v * warp::kWarpThreads + lane)] = loaded[v];
      }
    } else {
#pragma unroll
      for (int i = 0; i < items_per_thread; ++i) {
        const int j = i * warp::kWarpThreads + lane;
        exchange[slot(j / vector_items)].items[j % vector_items] =
            load_with_hint<HINT>(tile_in + (warp_begin + j < valid ? warp_begin + j : 0));
      }
    }
    __syncwarp();
#pragma unroll
    for (int v = 0; v < vectors_per_thread; ++v) {
      const Vec vector = exchange[slot(lane * vectors_per_thread + v)];
#pragma unroll
      for (int k = 0; k < vector_items; ++k) {
        items[v * vector_items + k] = vector.items[k];
      }
    }
  }

  /// Stores blocked registers to tile_out[0, valid), the way load() read them; HINT as for load().
  template <CacheHint HINT = CacheHint::Normal>
  __device__ static void store(T* tile_out, int valid, const T (&items)[items_per_thread], Storage& storage) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    const int warp_begin = warp_id * warp_items;
    Vec* exchange = storage.exchange[warp_id];
    __syncwarp();  // lanes may still be reading the exchange for this tile's load
#pragma unroll
    for (int v = 0; v < vectors_per_thread; ++v) {
      Vec vector;
#pragma unroll
      for (int k = 0; k < vector_items; ++k) {
        vector.items[k] = items[v * vector_items + k];
      }
      exchange[slot(lane * vectors_per_thread + v)] = vector;
    }
    __syncwarp();
    if (vectorized(tile_out, valid)) {
      Vec* vectors = reinterpret_cast<Vec*>(tile_out + warp_begin);
#pragma unroll
      for (int v = 0; v < vectors_per_thread; ++v) {
        const int p = v * warp::kWarpThreads + lane;
        store_with_hint<HINT>(vectors + p, exchange[slot(p)]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < items_per_thread; ++i) {
        const int j = i * warp::kWarpThreads + lane;
        if (warp_begin + j < valid) {
          store_with_hint<HINT>(tile_out + warp_begin + j,
                                exchange[slot(j / vector_items)].items[j % vector_items]);
        }
      }
    }
  }

 private:
  // Where vector p of a warp's slice lives. When vectors_per_thread is a power of two from 2 on, the low 3 bits of
  // p are XORed with (p / vectors_per_thread) % 8, the thread that owns p in the blocked arrangement: a
  // permutation of each aligned group of 8 vectors. 16-byte accesses are served 8 lanes (128 bytes) at a time, and
  // with the swizzle those 8 lanes hit 8 different 16-byte bank groups both in the warp-striped order
  // (v * 32 + lane) and in the blocked order (lane * vectors_per_thread + v): no bank conflicts either way, one
  // 128-bit shared access per vector. One vector per thread needs no swizzle (both orders are the same); other
  // counts keep p, correct but with some conflicts.
  __device__ static constexpr int slot(int p) {
    if constexpr (vectors_per_thread >= 2 && (vectors_per_thread & (vectors_per_thread - 1)) == 0) {
      return p ^ ((p / vectors_per_thread) % 8);
    } else {
      return p;
    }
  }

  // Tile starts are whole multiples of 16 bytes from the array start, so the array's alignment decides.
  __device__ static bool vectorized(const T* tile, int valid) {
    if constexpr (vector_items == 1) {
      return false;
    } else {
      return valid == tile_items && reinterpret_cast<std::uintptr_t>(tile) % kVectorBytes == 0;
    }
  }
};

/// Whether load_blocked and store_blocked move `It` through BlockedTileIo: a pointer to T whose vectors divide a thread's items.
template <class It, class T, int ITEMS_PER_THREAD>
inline constexpr bool kBlockedVectorAccess =
    std::is_pointer_v<It> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, T> &&
    ITEMS_PER_THREAD % kVectorItems<T> == 0;

/// The shared memory load_blocked and store_blocked need for T: BlockedTileIo's exchange where its vectors divide
/// a thread's items (whether a given iterator takes that form or not), none otherwise.
template <class T, int BLOCK_THREADS, int ITEMS_PER_THREAD, bool VECTORS = ITEMS_PER_THREAD % kVectorItems<T> == 0>
struct BlockedExchangeBytes {
  static constexpr size_t value = sizeof(typename BlockedTileIo<T, BLOCK_THREADS, ITEMS_PER_THREAD>::Storage);
};
template <class T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockedExchangeBytes<T, BLOCK_THREADS, ITEMS_PER_THREAD, false> {
  static constexpr size_t value = 0;
};
template <class T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
inline constexpr size_t kBlockedLoadBytes = BlockedExchangeBytes<T, BLOCK_THREADS, ITEMS_PER_THREAD>::value;

/// Loads items [begin, begin + valid) of `in` into blocked registers (thread t: items [t * ITEMS, (t + 1) *
/// ITEMS)): pointers to T through BlockedTileIo (coalesced vectors; `exchange` holds kBlockedLoadBytes), other
/// iterators item by item. Items past `valid` are copies of in[begin].
template <int BLOCK_THREADS, CacheHint HINT = CacheHint::Normal, class It, class T, int ITEMS>
__device__ void load_blocked(It in, size_t begin, int valid, T (&items)[ITEMS], void* exchange) {
  if constexpr (kBlockedVectorAccess<It, T, ITEMS>) {
    using Io = BlockedTileIo<T, BLOCK_THREADS, ITEMS>;
    Io::template load<HINT>(in + begin, valid, items, *static_cast<typename Io::Storage*>(exchange));
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int item = static_cast<int>(threadIdx.x) * ITEMS + i;
      items[i] = in[begin + static_cast<size_t>(item < valid ? item : 0)];
    }
  }
}

/// Stores blocked registers to out[begin, begin + valid), the way load_blocked reads them.
template <int BLOCK_THREADS, CacheHint HINT = CacheHint::Normal, class It, class T, int ITEMS>
__device__ void store_blocked(It out, size_t begin, int valid, const T (&items)[ITEMS], void* exchange) {
  if constexpr (kBlockedVectorAccess<It, T, ITEMS>) {
    using Io = BlockedTileIo<T, BLOCK_THREADS, ITEMS>;
    Io::template store<HINT>(out + begin, valid, items, *static_cast<typename Io::Storage*>(exchange));
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const int item = static_cast<int>(threadIdx.x) * ITEMS + i;
      if (item < valid) out[begin + static_cast<size_t>(item)] = items[i];
    }
  }
}

}  // namespace prims::detail
