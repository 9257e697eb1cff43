// The tuning hub (prims/device/detail/tuning.cuh): which table a GPU gets, what each table holds, and that every
// dispatcher takes the table it is handed, and that a launch over a smaller GPU's shared memory fails under its cap.
// Host-only but the last two tests.
#include <gtest/gtest.h>

#include <type_traits>

#include "gpu_test.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/device/segmented_radix_sort.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/launch.cuh"

namespace {

using prims::detail::Generation;
using prims::detail::generation_for;
using prims::detail::NoValues;
using prims::detail::TuningSm100;
using prims::detail::TuningSm80;
using prims::detail::TuningSm86;
using prims::detail::TuningSm90;
/// A 16-byte value: sorts of it keep Onesweep's tiles.
struct Payload16 {
  unsigned char bytes[16];
};

constexpr size_t kKB = 1024;

TEST(Tuning, EachGenerationGetsItsTable) {
  EXPECT_EQ(Generation::Sm80, generation_for(8, 0, 163 * kKB));    // A100
  EXPECT_EQ(Generation::Sm80, generation_for(8, 7, 163 * kKB));    // Orin
  EXPECT_EQ(Generation::Sm86, generation_for(8, 6, 99 * kKB));     // RTX 3090, A40
  EXPECT_EQ(Generation::Sm86, generation_for(8, 9, 99 * kKB));     // RTX 4090, L40S
  EXPECT_EQ(Generation::Sm90, generation_for(9, 0, 227 * kKB));    // H100, H200
  EXPECT_EQ(Generation::Sm100, generation_for(10, 0, 227 * kKB));  // B200
  EXPECT_EQ(Generation::Sm86, generation_for(12, 0, 99 * kKB));    // RTX 5090: sm_120, 99 KB a block
}

TEST(Tuning, APartWithLessSharedMemoryTakesALargestTableThatFits) {
  EXPECT_EQ(Generation::Sm80, generation_for(9, 0, 200 * kKB));
  EXPECT_EQ(Generation::Sm86, generation_for(9, 0, 99 * kKB));
  EXPECT_EQ(Generation::Sm86, generation_for(8, 0, 100 * kKB));
  EXPECT_EQ(Generation::Sm86, generation_for(8, 0, 8 * kKB));  // below every table: the smallest
  EXPECT_EQ(Generation::Sm100, generation_for(11, 0, 227 * kKB));  // newer than the newest table: the newest
  EXPECT_EQ(Generation::Sm80, generation_for(10, 0, 200 * kKB));
}

TEST(Tuning, TablesShareTheEntriesTheyKeep) {
  // Shared entries are one type, so their kernels are compiled once.
  static_assert(std::is_same_v<TuningSm80::Onesweep<uint32_t, NoValues>, TuningSm90::Onesweep<uint32_t, NoValues>>);
  static_assert(std::is_same_v<TuningSm100::SegmentedSort<uint64_t, uint32_t>,
                               TuningSm90::SegmentedSort<uint64_t, uint32_t>>);
  static_assert(std::is_same_v<TuningSm86::Onesweep<float, NoValues>, TuningSm90::Onesweep<float, NoValues>>);
  static_assert(std::is_same_v<TuningSm86::Reduce, TuningSm90::Reduce>);
  // The 99 KB table's histograms are its own, and fit.
  using Wide86 = TuningSm86::OnesweepHistogram<uint32_t>::Wide;
  using Wide90 = TuningSm90::OnesweepHistogram<uint32_t>::Wide;
  static_assert(!std::is_same_v<Wide86, Wide90>);
  EXPECT_LE(Wide86::shared_bytes<uint32_t>(8), TuningSm86::shared_bytes_per_block);
  EXPECT_LE((TuningSm86::OnesweepHistogram<uint64_t>::Wide::shared_bytes<uint64_t>(8)),
            TuningSm86::shared_bytes_per_block);
  EXPECT_LE((TuningSm86::SegmentedOnesweepHistogram<uint64_t>::shared_bytes<uint64_t>(8)),
            TuningSm86::shared_bytes_per_block);
  EXPECT_GT(Wide90::shared_bytes<uint32_t>(8), TuningSm86::shared_bytes_per_block);
  EXPECT_TRUE(TuningSm90::tuned);
  EXPECT_FALSE(TuningSm80::tuned || TuningSm86::tuned || TuningSm100::tuned);
}

/// The tests size their inputs around tile edges of Hopper's entries (sort_check.cuh, test_scan.cu, test_select.cu,
/// test_by_key.cu, test_segmented_radix_sort.cu): right under every forced table while every table keeps them. A
/// table that changes one of these entries fails here, and those tests must then take the current table's.
template <class Table>
constexpr bool keeps_hoppers_tiles() {
  using H = TuningSm90;
  return std::is_same_v<typename Table::template Onesweep<uint32_t, NoValues>, H::Onesweep<uint32_t, NoValues>> &&
         std::is_same_v<typename Table::template OnesweepSmall<uint32_t, NoValues>,
                        H::OnesweepSmall<uint32_t, NoValues>> &&
         std::is_same_v<typename Table::template TileCounts<uint32_t, NoValues>, H::TileCounts<uint32_t, NoValues>> &&
         std::is_same_v<typename Table::template OneBlock<uint32_t, uint32_t>, H::OneBlock<uint32_t, uint32_t>> &&
         std::is_same_v<typename Table::template SegmentedSort<uint32_t, uint32_t>,
                        H::SegmentedSort<uint32_t, uint32_t>> &&
         std::is_same_v<typename Table::template SinglePassScan<int>, H::SinglePassScan<int>> &&
         std::is_same_v<typename Table::ReduceThenScan, H::ReduceThenScan> &&
         std::is_same_v<typename Table::template Select<int>, H::Select<int>> &&
         std::is_same_v<typename Table::template ByKey<int, int>, H::ByKey<int, int>> && std::is_same_v<typename Table::Reduce, H::Reduce> &&
         std::is_same_v<typename Table::template Hybrid<uint64_t, NoValues>, H::Hybrid<uint64_t, NoValues>>;
}

TEST(Tuning, EveryTableKeepsTheTilesTheTestsSizeAround) {
  static_assert(keeps_hoppers_tiles<TuningSm80>() && keeps_hoppers_tiles<TuningSm86>() &&
                keeps_hoppers_tiles<TuningSm100>());
  EXPECT_TRUE(keeps_hoppers_tiles<TuningSm90>());
}

TEST(Tuning, OneBlockLimitFollowsSharedMemory) {
  using prims::detail::radix::one_block_max_items;
  // Keys alone take the largest shape everywhere; pairs of 4-byte items lose it where 99 KB cannot hold it.
  EXPECT_EQ((one_block_max_items<TuningSm86, uint32_t, NoValues>()),
            (one_block_max_items<TuningSm90, uint32_t, NoValues>()));
  EXPECT_LT((one_block_max_items<TuningSm86, uint32_t, uint32_t>()),
            (one_block_max_items<TuningSm90, uint32_t, uint32_t>()));
  EXPECT_EQ((one_block_max_items<TuningSm90, uint32_t, uint32_t>()),
            (prims::device::kOneBlockMaxItems<uint32_t, uint32_t>));
  EXPECT_LE((prims::detail::radix::one_block_auto_max_items<TuningSm86, uint32_t, uint32_t>()),
            (one_block_max_items<TuningSm86, uint32_t, uint32_t>()));
}

/// The Onesweep tiles a sort of n pairs (or keys) takes: threads, keys a thread, and whether values come through L2.
struct OnesweepTiles {
  int threads = 0;
  int items = 0;
  bool values_through_l2 = false;
  bool operator==(const OnesweepTiles& other) const {
    return threads == other.threads && items == other.items && values_through_l2 == other.values_through_l2;
  }
};
template <class Policy>
OnesweepTiles tiles_of(Policy) {
  return {Policy::block_threads, Policy::items_per_thread,
          Policy::values_fetch == prims::detail::OnesweepValuesFetch::L2BeforeLookBack};
}
template <class K, class V>
OnesweepTiles plain_sort_tiles(size_t n) {
  OnesweepTiles tiles;
  EXPECT_EQ(cudaSuccess, (prims::detail::radix::with_onesweep_policy<TuningSm90, K, V>(n, [&](auto policy) {
              tiles = tiles_of(policy);
              return cudaSuccess;
            })));
  return tiles;
}
template <class K, class V>
OnesweepTiles segmented_sort_tiles(size_t n, size_t segments) {
  OnesweepTiles tiles;
  using Policy = TuningSm90::SegmentedSort<K, V>;
  EXPECT_EQ(cudaSuccess, (prims::detail::segmented::with_segmented_onesweep_tiles<TuningSm90, K, V, Policy>(
                             n, segments, [&](auto policy) {
                               tiles = tiles_of(policy);
                               return cudaSuccess;
                             })));
  return tiles;
}
std::ostream& operator<<(std::ostream& out, const OnesweepTiles& tiles) {
  return out << tiles.threads << " x " << tiles.items << (tiles.values_through_l2 ? ", values through L2" : "");
}

TEST(Tuning, PlainSortTilesBySizeAndItemWidthAndSegmentedPassesKeepOnesweeps) {
  // u32/u32: the small tiles up to 2^18, the medium ones below 2^20, then OnesweepPairs, and its large form from 2^26.
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>(size_t{1} << 18)), (OnesweepTiles{256, 8, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>((size_t{1} << 18) + 1)), (OnesweepTiles{256, 16, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>((size_t{1} << 20) - 1)), (OnesweepTiles{256, 16, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>(size_t{1} << 20)), (OnesweepTiles{512, 16, true}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>((size_t{1} << 26) - 1)), (OnesweepTiles{512, 16, true}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint32_t>(size_t{1} << 26)), (OnesweepTiles{384, 24, true}));
  EXPECT_EQ((plain_sort_tiles<uint16_t, float>(size_t{1} << 22)), (OnesweepTiles{512, 16, true}));
  // Keys alone of up to 4 bytes: 256 x 16 below 2^20, 512 x 16 below 2^24, then Onesweep's tiles, larger from 2^26.
  EXPECT_EQ((plain_sort_tiles<uint32_t, NoValues>((size_t{1} << 18) + 1)), (OnesweepTiles{256, 16, false}));
  EXPECT_EQ((plain_sort_tiles<float, NoValues>((size_t{1} << 20) - 1)), (OnesweepTiles{256, 16, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, NoValues>(size_t{1} << 20)), (OnesweepTiles{512, 16, false}));
  EXPECT_EQ((plain_sort_tiles<uint16_t, NoValues>((size_t{1} << 24) - 1)), (OnesweepTiles{512, 16, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, NoValues>(size_t{1} << 24)), (OnesweepTiles{384, 24, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, NoValues>(size_t{1} << 26)), (OnesweepTiles{384, 28, false}));
  // 8-byte items (8-byte keys or values): 512 x 8 below 2^22, then Onesweep's tiles; 16-byte values keep Onesweep's.
  EXPECT_EQ((plain_sort_tiles<uint64_t, NoValues>((size_t{1} << 18) + 1)), (OnesweepTiles{512, 8, false}));
  EXPECT_EQ((plain_sort_tiles<double, uint32_t>((size_t{1} << 22) - 1)), (OnesweepTiles{512, 8, false}));
  EXPECT_EQ((plain_sort_tiles<uint64_t, uint64_t>((size_t{1} << 18) + 1)), (OnesweepTiles{512, 8, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, uint64_t>((size_t{1} << 22) - 1)), (OnesweepTiles{512, 8, false}));
  EXPECT_EQ((plain_sort_tiles<uint64_t, uint32_t>(size_t{1} << 22)), (OnesweepTiles{384, 15, false}));
  EXPECT_EQ((plain_sort_tiles<uint64_t, NoValues>(size_t{1} << 22)), (OnesweepTiles{384, 15, false}));
  EXPECT_EQ((plain_sort_tiles<uint32_t, Payload16>((size_t{1} << 18) + 1)), (OnesweepTiles{384, 5, false}));
  // The segmented Onesweep passes keep Onesweep's tiles for pairs, small segments or large.
  EXPECT_EQ((segmented_sort_tiles<uint32_t, uint32_t>(size_t{1} << 26, 1024)), (OnesweepTiles{384, 20, false}));
  EXPECT_EQ((segmented_sort_tiles<uint32_t, uint32_t>(size_t{1} << 28, 16)), (OnesweepTiles{384, 20, false}));
}

using ForcedTable = prims::test::ForcedTuning;

Generation table_taken() {
  Generation taken = Generation::Sm80;
  EXPECT_EQ(cudaSuccess, prims::detail::with_tuning([&](auto table) {
              taken = decltype(table)::generation;
              return cudaSuccess;
            }));
  return taken;
}

TEST(Tuning, DispatchTakesTheForcedTable) {
  for (const Generation generation : prims::test::kEveryGeneration) {
    const ForcedTable forced(static_cast<int>(generation), 0);
    EXPECT_EQ(generation, table_taken());
  }
}

TEST(Tuning, TheDeviceGetsItsGenerationsTableAndA99KBCapTheSmallest) {
  PRIMS_REQUIRE_GPU();
  const ForcedTable device_choice(-1, 0);
  int capability = 0;
  ASSERT_EQ(cudaSuccess, prims::detail::compute_capability(capability));
  size_t shared_bytes = 0;
  ASSERT_EQ(cudaSuccess, prims::detail::shared_memory_per_block(shared_bytes));
  EXPECT_EQ(generation_for(capability / 10, capability % 10, shared_bytes), table_taken());
  if (capability == 90) EXPECT_EQ(Generation::Sm90, table_taken());
  const ForcedTable capped(-1, 99 * kKB);
  EXPECT_EQ(Generation::Sm86, table_taken());
}

/// Takes `bytes` of dynamic shared memory and writes one word, so that it is not optimized away.
__global__ void shared_memory_kernel(unsigned* out) {
  extern __shared__ unsigned words[];
  words[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) *out = words[1];
}

TEST(Tuning, ALaunchOverTheSharedMemoryCapFailsAsOnASmallerGpu) {
  PRIMS_REQUIRE_GPU();
  prims::DeviceBuffer<unsigned> out(1);
  const ForcedTable uncapped(-1, 0);
  ASSERT_EQ(cudaSuccess, prims::detail::launch(shared_memory_kernel, 1, 32, 96 * kKB, 0, out.data()));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  {
    const ForcedTable capped(-1, 64 * kKB);
    EXPECT_EQ(cudaSuccess, prims::detail::launch(shared_memory_kernel, 1, 32, 64 * kKB, 0, out.data()));
    EXPECT_EQ(cudaErrorInvalidValue, prims::detail::launch(shared_memory_kernel, 1, 32, 64 * kKB + 4, 0, out.data()));
    EXPECT_EQ(cudaErrorInvalidValue,
              prims::detail::launch_persistent(shared_memory_kernel, 4, 32, 96 * kKB, 0, out.data()));
  }
  EXPECT_EQ(cudaSuccess, prims::detail::launch(shared_memory_kernel, 1, 32, 96 * kKB, 0, out.data()));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
}

}  // namespace
