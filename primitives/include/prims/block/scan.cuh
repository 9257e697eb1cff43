#pragma once
// Block scan: inclusive and exclusive scans across a 1-D block, of one item per thread or of ITEMS_PER_THREAD
// items per thread in blocked arrangement (thread t holds items t * ITEMS_PER_THREAD ... + ITEMS_PER_THREAD - 1).
// Any associative op: earlier items always sit on the left of op, so commutativity is never assumed.
//
// Layered on the warp scan: each warp scans its threads' totals, the warp totals meet in shared memory, and
// every warp scans the warp totals itself (one barrier, no second pass through shared memory). Items per
// thread are folded serially first and scanned serially last.
//
// Seeds: exclusive scans take an `init` that goes in front of everything, and the *_with_prefix forms take a
// prefix callback (CUB's BlockPrefixCallbackOp): a functor `T operator()(const T& block_aggregate)` that the
// first warp calls, all 32 lanes with the block's total, and whose return value in lane 0 is put in front of the
// whole block. Device algorithms compose through it (a running carry over tiles, or a decoupled look-back).
//
// The caller owns the shared memory: declare `__shared__ typename Scan::TempStorage storage;` and pass it to the
// constructor. Between two uses of the same storage, the block must __syncthreads().

#include "prims/util/shuffle.cuh"
#include "prims/warp/scan.cuh"

namespace prims::block {

/// Example (one item per thread):
///   using BlockScan = prims::block::Scan<int, 256>;
///   __shared__ BlockScan::TempStorage storage;
///   int total;
///   int offset = BlockScan(storage).exclusive_scan(count, prims::Sum{}, 0, total);
/// Example (blocked items):
///   int items[8];  // this thread's items threadIdx.x * 8 ... + 7
///   BlockScan(storage).inclusive_scan(items, items, prims::Sum{});
template <class T, int BLOCK_THREADS>
class Scan {
  static_assert(BLOCK_THREADS % warp::kWarpThreads == 0 && BLOCK_THREADS <= 1024,
                "block scan needs whole warps, at most 1024 threads");
  static constexpr int kWarps = BLOCK_THREADS / warp::kWarpThreads;

 public:
  struct TempStorage {
    T warp_totals[kWarps];
    T block_prefix;
  };

  __device__ explicit Scan(TempStorage& storage) : storage_(storage) {}

  // ---- Blocked arrangement: ITEMS_PER_THREAD items per thread. `input` and `output` may be the same array.

  /// output[i] = every item of the block up to and including this one, combined in order; the block's total
  /// goes to every thread.
  /// Example: `int total; BlockScan(storage).inclusive_scan(items, items, prims::Sum{}, total);`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ void inclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], Op op,
                                 T& block_aggregate) {
    const T before = thread_prefix(thread_reduce(input, op), op, block_aggregate);
    thread_inclusive_scan(input, output, op, before, threadIdx.x != 0);
  }

  /// Inclusive scan of blocked items.
  /// Example: `BlockScan(storage).inclusive_scan(items, items, prims::Max{});`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ void inclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], Op op) {
    T block_aggregate;
    inclusive_scan(input, output, op, block_aggregate);
  }

  /// Inclusive scan of blocked items with the callback's prefix (see the file comment) in front of all of them.
  /// Example:
  ///   RunningPrefix carry{0};  // T operator()(const T& block_total) { T p = sum; sum += block_total; return p; }
  ///   BlockScan(storage).inclusive_scan_with_prefix(items, items, prims::Sum{}, carry);
  template <int ITEMS_PER_THREAD, class Op, class PrefixOp>
  __device__ void inclusive_scan_with_prefix(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                             Op op, PrefixOp& prefix_op) {
    T block_aggregate;
    const T before = thread_prefix(thread_reduce(input, op), op, block_aggregate);
    const T block_prefix = call_prefix_op(prefix_op, block_aggregate);
    thread_inclusive_scan(input, output, op, seeded(block_prefix, before, op), true);
  }

  /// output[i] = init op every item of the block before this one, combined in order; the block's total
  /// (without init) goes to every thread.
  /// Example: `int total; BlockScan(storage).exclusive_scan(counts, offsets, prims::Sum{}, 0, total);`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ void exclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], Op op, T init,
                                 T& block_aggregate) {
    const T before = thread_prefix(thread_reduce(input, op), op, block_aggregate);
    thread_exclusive_scan(input, output, op, seeded(init, before, op), true);
  }

  /// Exclusive scan of blocked items seeded with init.
  /// Example: `BlockScan(storage).exclusive_scan(counts, offsets, prims::Sum{}, 0);`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ void exclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], Op op, T init) {
    T block_aggregate;
    exclusive_scan(input, output, op, init, block_aggregate);
  }

  /// Exclusive scan of blocked items without a seed: the first output of thread 0 is unspecified.
  /// Example: `BlockScan(storage).exclusive_scan(items, items, op);  // items[0] of thread 0 meaningless`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ void exclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], Op op) {
    T block_aggregate;
    const T before = thread_prefix(thread_reduce(input, op), op, block_aggregate);
    thread_exclusive_scan(input, output, op, before, threadIdx.x != 0);
  }

  /// Exclusive scan of blocked items with the callback's prefix in front: thread 0's first output is the prefix.
  /// Example: `BlockScan(storage).exclusive_scan_with_prefix(counts, offsets, prims::Sum{}, carry);`
  template <int ITEMS_PER_THREAD, class Op, class PrefixOp>
  __device__ void exclusive_scan_with_prefix(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                             Op op, PrefixOp& prefix_op) {
    T block_aggregate;
    const T before = thread_prefix(thread_reduce(input, op), op, block_aggregate);
    const T block_prefix = call_prefix_op(prefix_op, block_aggregate);
    thread_exclusive_scan(input, output, op, seeded(block_prefix, before, op), true);
  }

  /// The block's total of blocked items, combined in order, in every thread. Unlike block::Reduce, whose tree
  /// pairs lane i with lane i + 16, the order is kept, so ops that are not commutative work.
  /// Example: `Affine total = BlockScan(storage).reduce(maps, Compose{});`
  template <int ITEMS_PER_THREAD, class Op>
  __device__ T reduce(const T (&input)[ITEMS_PER_THREAD], Op op) {
    T block_aggregate;
    thread_prefix(thread_reduce(input, op), op, block_aggregate);
    return block_aggregate;
  }

  // ---- One item per thread.

  /// Inclusive scan of one item per thread; the block's total goes to every thread.
  /// Example: `int total; int running = BlockScan(storage).inclusive_scan(x, prims::Sum{}, total);`
  template <class Op>
  __device__ T inclusive_scan(T input, Op op, T& block_aggregate) {
    T items[1] = {input};
    inclusive_scan(items, items, op, block_aggregate);
    return items[0];
  }

  /// Inclusive scan of one item per thread.
  /// Example: `int running = BlockScan(storage).inclusive_scan(x, prims::Sum{});`
  template <class Op>
  __device__ T inclusive_scan(T input, Op op) {
    T block_aggregate;
    return inclusive_scan(input, op, block_aggregate);
  }

  /// Inclusive scan of one item per thread with the callback's prefix in front.
  /// Example: `int running = BlockScan(storage).inclusive_scan_with_prefix(x, prims::Sum{}, carry);`
  template <class Op, class PrefixOp>
  __device__ T inclusive_scan_with_prefix(T input, Op op, PrefixOp& prefix_op) {
    T items[1] = {input};
    inclusive_scan_with_prefix(items, items, op, prefix_op);
    return items[0];
  }

  /// Exclusive scan of one item per thread seeded with init (thread 0 gets init); the block's total
  /// (without init) goes to every thread.
  /// Example: `int total; int offset = BlockScan(storage).exclusive_scan(count, prims::Sum{}, 0, total);`
  template <class Op>
  __device__ T exclusive_scan(T input, Op op, T init, T& block_aggregate) {
    T items[1] = {input};
    exclusive_scan(items, items, op, init, block_aggregate);
    return items[0];
  }

  /// Exclusive scan of one item per thread seeded with init.
  /// Example: `int offset = BlockScan(storage).exclusive_scan(count, prims::Sum{}, 0);`
  template <class Op>
  __device__ T exclusive_scan(T input, Op op, T init) {
    T block_aggregate;
    return exclusive_scan(input, op, init, block_aggregate);
  }

  /// Exclusive scan of one item per thread without a seed: thread 0's result is unspecified.
  /// Example: `T before = BlockScan(storage).exclusive_scan(x, op);  // meaningful from thread 1 on`
  template <class Op>
  __device__ T exclusive_scan(T input, Op op) {
    T items[1] = {input};
    exclusive_scan(items, items, op);
    return items[0];
  }

  /// Exclusive scan of one item per thread with the callback's prefix in front (thread 0 gets the prefix).
  /// Example: `int offset = BlockScan(storage).exclusive_scan_with_prefix(count, prims::Sum{}, carry);`
  template <class Op, class PrefixOp>
  __device__ T exclusive_scan_with_prefix(T input, Op op, PrefixOp& prefix_op) {
    T items[1] = {input};
    exclusive_scan_with_prefix(items, items, op, prefix_op);
    return items[0];
  }

 private:
  // The combination of the totals of all threads before this one (unspecified in thread 0), and the block's
  // total in every thread.
  template <class Op>
  __device__ T thread_prefix(T thread_total, Op op, T& block_aggregate) {
    const int lane = threadIdx.x % warp::kWarpThreads;
    const int warp_id = threadIdx.x / warp::kWarpThreads;
    T warp_total;
    const T inclusive = warp::inclusive_scan_shuffle(thread_total, op, warp_total);
    const T before_in_warp = detail::shuffle_up(inclusive, 1);  // lane 0: unspecified
    if constexpr (kWarps == 1) {
      block_aggregate = warp_total;
      return before_in_warp;
    } else {
      if (lane == 0) {
        storage_.warp_totals[warp_id] = warp_total;
      }
      __syncthreads();
      // Lanes past the last warp repeat the last total: a scan never looks right, so they change nothing.
      const T totals_inclusive =
          warp::inclusive_scan_shuffle(storage_.warp_totals[lane < kWarps ? lane : kWarps - 1], op);
      block_aggregate = detail::shuffle_index(totals_inclusive, kWarps - 1);
      const T before_warp = detail::shuffle_index(totals_inclusive, warp_id > 0 ? warp_id - 1 : 0);
      if (warp_id == 0) {
        return before_in_warp;
      }
      return lane == 0 ? before_warp : op(before_warp, before_in_warp);
    }
  }

  // The first warp asks the callback for the block's prefix; lane 0's answer goes to every thread.
  template <class PrefixOp>
  __device__ T call_prefix_op(PrefixOp& prefix_op, const T& block_aggregate) {
    if (threadIdx.x < warp::kWarpThreads) {
      const T block_prefix = prefix_op(block_aggregate);
      if (threadIdx.x == 0) {
        storage_.block_prefix = block_prefix;
      }
    }
    __syncthreads();
    return storage_.block_prefix;
  }

  // `seed` in front of this thread's prefix: thread 0, which has nothing before it, gets the seed alone.
  template <class Op>
  __device__ static T seeded(const T& seed, const T& before, Op op) {
    return threadIdx.x == 0 ? seed : op(seed, before);
  }

  template <int ITEMS_PER_THREAD, class Op>
  __device__ static T thread_reduce(const T (&items)[ITEMS_PER_THREAD], Op op) {
    T total = items[0];
#pragma unroll
    for (int i = 1; i < ITEMS_PER_THREAD; ++i) {
      total = op(total, items[i]);
    }
    return total;
  }

  // output[i] = before op input[0] op ... op input[i]; `before` is left out where has_before is false.
  template <int ITEMS_PER_THREAD, class Op>
  __device__ static void thread_inclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                               Op op, const T& before, bool has_before) {
    T running = has_before ? op(before, input[0]) : input[0];
    output[0] = running;
#pragma unroll
    for (int i = 1; i < ITEMS_PER_THREAD; ++i) {
      running = op(running, input[i]);
      output[i] = running;
    }
  }

  // output[i] = before op input[0] op ... op input[i - 1]; where has_before is false, output[0] is unspecified
  // and output[i] = input[0] op ... op input[i - 1]. Each input is read before its output is written (in place).
  template <int ITEMS_PER_THREAD, class Op>
  __device__ static void thread_exclusive_scan(const T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD],
                                               Op op, const T& before, bool has_before) {
    T running = has_before ? before : input[0];
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
      const T item = input[i];
      output[i] = running;
      if (has_before || i > 0) {
        running = op(running, item);
      }
    }
  }

  TempStorage& storage_;
};

}  // namespace prims::block
