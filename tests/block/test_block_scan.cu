// Block scan: every overload (one item and blocked items, inclusive, exclusive with and without init, with a
// prefix callback carried over several tiles) for several block sizes and items per thread, against a CPU scan.
#include "affine.cuh"
#include "gpu_test.cuh"
#include "prims/block/scan.cuh"
#include "prims/util/ops.cuh"

namespace {

enum class Mode { Inclusive, InclusiveAggregate, ExclusiveInit, ExclusiveNoInit, InclusivePrefix, ExclusivePrefix };
constexpr int kBlocks = 3;
constexpr int kTilesPerBlock = 3;

/// The prefix callback of a block walking tiles in order (the device scans' RunningPrefix, rewritten here so the
/// test does not lean on library internals).
template <class T, class Op>
struct Carry {
  T running;
  Op op;
  __device__ T operator()(const T& block_aggregate) {
    const T prefix = running;
    running = op(running, block_aggregate);
    return prefix;
  }
};

/// Block b scans tiles b * kTilesPerBlock ... in order; the prefix modes carry from init across them. Every thread
/// writes the block aggregate it got (where the mode returns one).
template <class T, int THREADS, int ITEMS, Mode MODE, class Op>
__global__ void block_scan_kernel(const T* in, T* out, T* aggregates, Op op, T init) {
  using BlockScan = prims::block::Scan<T, THREADS>;
  __shared__ typename BlockScan::TempStorage storage;
  Carry<T, Op> carry{init, op};
  for (int t = 0; t < kTilesPerBlock; ++t) {
    const size_t tile = static_cast<size_t>(blockIdx.x) * kTilesPerBlock + t;
    const size_t first = (tile * THREADS + threadIdx.x) * ITEMS;
    T items[ITEMS];
    for (int i = 0; i < ITEMS; ++i) items[i] = in[first + i];
    BlockScan scan(storage);
    T aggregate = init;
    if constexpr (ITEMS == 1) {
      // The one-item overloads.
      if constexpr (MODE == Mode::Inclusive) items[0] = scan.inclusive_scan(items[0], op);
      if constexpr (MODE == Mode::InclusiveAggregate) items[0] = scan.inclusive_scan(items[0], op, aggregate);
      if constexpr (MODE == Mode::ExclusiveInit) items[0] = scan.exclusive_scan(items[0], op, init, aggregate);
      if constexpr (MODE == Mode::ExclusiveNoInit) items[0] = scan.exclusive_scan(items[0], op);
      if constexpr (MODE == Mode::InclusivePrefix) items[0] = scan.inclusive_scan_with_prefix(items[0], op, carry);
      if constexpr (MODE == Mode::ExclusivePrefix) items[0] = scan.exclusive_scan_with_prefix(items[0], op, carry);
    } else {
      // The blocked overloads, in place.
      if constexpr (MODE == Mode::Inclusive) scan.inclusive_scan(items, items, op);
      if constexpr (MODE == Mode::InclusiveAggregate) scan.inclusive_scan(items, items, op, aggregate);
      if constexpr (MODE == Mode::ExclusiveInit) scan.exclusive_scan(items, items, op, init, aggregate);
      if constexpr (MODE == Mode::ExclusiveNoInit) scan.exclusive_scan(items, items, op);
      if constexpr (MODE == Mode::InclusivePrefix) scan.inclusive_scan_with_prefix(items, items, op, carry);
      if constexpr (MODE == Mode::ExclusivePrefix) scan.exclusive_scan_with_prefix(items, items, op, carry);
    }
    for (int i = 0; i < ITEMS; ++i) out[first + i] = items[i];
    aggregates[tile * THREADS + threadIdx.x] = aggregate;
    __syncthreads();  // the next tile reuses the storage
  }
}

template <class T, int THREADS, int ITEMS, Mode MODE, class Op>
void check_mode(const std::vector<T>& host, Op op, T init) {
  constexpr size_t tile_items = THREADS * ITEMS;
  constexpr size_t tiles = kBlocks * kTilesPerBlock;
  prims::DeviceBuffer<T> in(host.size()), out(host.size()), aggregates(tiles * THREADS);
  in.upload(host);
  out.fill_bytes(0xAB);
  aggregates.fill_bytes(0xAB);
  block_scan_kernel<T, THREADS, ITEMS, MODE><<<kBlocks, THREADS>>>(in.data(), out.data(), aggregates.data(), op, init);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const auto got = out.download();
  const auto got_aggregates = aggregates.download();
  const bool has_aggregate = MODE == Mode::InclusiveAggregate || MODE == Mode::ExclusiveInit;
  const bool carries = MODE == Mode::InclusivePrefix || MODE == Mode::ExclusivePrefix;
  const bool exclusive = MODE == Mode::ExclusiveInit || MODE == Mode::ExclusiveNoInit || MODE == Mode::ExclusivePrefix;
  const bool seeded = MODE == Mode::ExclusiveInit || carries;
  T carry = init;
  for (size_t tile = 0; tile < tiles; ++tile) {
    if (tile % kTilesPerBlock == 0) carry = init;
    const size_t first = tile * tile_items;
    T running = seeded ? carry : host[first];
    T total = host[first];
    for (size_t i = 1; i < tile_items; ++i) total = op(total, host[first + i]);
    for (size_t i = 0; i < tile_items; ++i) {
      const T item = host[first + i];
      if (exclusive) {
        if (i > 0 || seeded) EXPECT_EQ(got[first + i], running) << "tile " << tile << " item " << i;
        if (i > 0 || seeded) running = op(running, item);
      } else {
        if (i > 0 || seeded) running = op(running, item);
        EXPECT_EQ(got[first + i], running) << "tile " << tile << " item " << i;
      }
      if (::testing::Test::HasFailure()) return;
    }
    if (has_aggregate) {
      for (int t = 0; t < THREADS; ++t) {
        ASSERT_EQ(got_aggregates[tile * THREADS + t], total) << "aggregate, tile " << tile << " thread " << t;
      }
    }
    if (carries) carry = op(carry, total);
  }
}

template <class T, int THREADS, int ITEMS, class Op>
void check_all_modes(const std::vector<T>& host, Op op, T init) {
  ASSERT_EQ(host.size(), size_t{kBlocks} * kTilesPerBlock * THREADS * ITEMS);
  SCOPED_TRACE(::testing::Message() << THREADS << " threads x " << ITEMS << " items");
  check_mode<T, THREADS, ITEMS, Mode::Inclusive>(host, op, init);
  check_mode<T, THREADS, ITEMS, Mode::InclusiveAggregate>(host, op, init);
  check_mode<T, THREADS, ITEMS, Mode::ExclusiveInit>(host, op, init);
  check_mode<T, THREADS, ITEMS, Mode::ExclusiveNoInit>(host, op, init);
  check_mode<T, THREADS, ITEMS, Mode::InclusivePrefix>(host, op, init);
  check_mode<T, THREADS, ITEMS, Mode::ExclusivePrefix>(host, op, init);
}

template <class T, int THREADS, int ITEMS, class Op>
void check_random(Op op, T init, uint64_t seed) {
  check_all_modes<T, THREADS, ITEMS>(
      prims::test::random_values<T>(size_t{kBlocks} * kTilesPerBlock * THREADS * ITEMS, seed), op, init);
}

template <int THREADS, int ITEMS>
void check_affine(uint64_t seed) {
  check_all_modes<prims::test::Affine, THREADS, ITEMS>(
      prims::test::random_affine(size_t{kBlocks} * kTilesPerBlock * THREADS * ITEMS, seed), prims::test::Compose{},
      prims::test::Affine{5, 11});
}

TEST(BlockScan, OneItemPerThread) {
  PRIMS_REQUIRE_GPU();
  check_random<int, 32, 1>(prims::Sum{}, 3, 1);
  check_random<int, 64, 1>(prims::Sum{}, 0, 2);
  check_random<unsigned, 96, 1>(prims::Max{}, 0u, 3);
  check_random<long long, 1024, 1>(prims::Sum{}, -9, 4);
  check_affine<256, 1>(5);
}

TEST(BlockScan, BlockedItems) {
  PRIMS_REQUIRE_GPU();
  check_random<int, 32, 7>(prims::Sum{}, 3, 11);
  check_random<int, 128, 4>(prims::Max{}, std::numeric_limits<int>::min(), 12);
  check_random<uint64_t, 256, 8>(prims::Sum{}, uint64_t{1}, 13);
  check_random<int, 512, 3>(prims::Sum{}, -1, 14);
  check_random<int, 1024, 2>(prims::Sum{}, 0, 15);
  check_affine<64, 5>(16);
  check_affine<256, 16>(17);
}

TEST(BlockScan, DoublesOfIntegersAreExact) {
  PRIMS_REQUIRE_GPU();
  // Integer-valued doubles: every grouping gives the same exact sums.
  const auto ints = prims::test::random_values<int>(size_t{kBlocks} * kTilesPerBlock * 256 * 4, 21);
  check_all_modes<double, 256, 4>(std::vector<double>(ints.begin(), ints.end()), prims::Sum{}, 0.25);
}

}  // namespace
