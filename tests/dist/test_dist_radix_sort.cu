// prims::dist::radix_sort_keys / radix_sort_pairs on 1, 2 and 4 GPUs of one process: ncclCommInitAll over the first
// GPUs, one host thread per rank (the call synchronizes its stream, so one thread cannot drive two ranks). Every
// output is compared bitwise with a CPU stable sort of the concatenated shards (tests/sort_reference.cuh); the
// 2^30-keys-a-rank case is validated on the GPUs. Tests skip where there are fewer GPUs than ranks.
// One process a rank: started by a launcher with RANK, WORLD_SIZE and LOCAL_RANK set and PRIMS_TEST_NCCL_ID_FILE
// naming a file every process sees (rank 0 writes NCCL's id there), e.g.
//   for r in 0 1; do RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r PRIMS_TEST_NCCL_ID_FILE=/tmp/id test_dist_radix_sort & done
// each process takes its own rank (GPU LOCAL_RANK) of the tests of WORLD_SIZE ranks and checks its own output (the
// 2^30 case all-gathers its checks); the tests of other rank counts skip.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.cuh"
#include "prims/device/detail/radix_sort_tile_counts.cuh"
#include "prims/dist.cuh"
#include "prims/dist/unique_id_file.cuh"
#include "prims/util/cuda_handles.cuh"
#include "prims/util/mix_bits.cuh"
#include "sort_reference.cuh"

namespace {

using prims::device::Order;
using prims::test::bit_patterns;
using prims::test::random_keys;

constexpr size_t kTile =
    prims::detail::radix::SortTile<prims::detail::TuningSm90::TileCounts<uint32_t, prims::detail::NoValues>, uint32_t,
                                   prims::detail::NoValues, size_t>::kTileItems;

int gpu_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

void check_nccl(ncclResult_t result, const std::string& what) {
  if (result != ncclSuccess) throw std::runtime_error(what + ": " + ncclGetErrorString(result));
}

/// Where this process is one rank of several (see the file comment): world 0 where one process drives every rank.
struct Launch {
  int world = 0;
  int rank = 0;
  int local_rank = 0;
  std::string id_file;

  static const Launch& get() {
    static const Launch launch = [] {
      Launch l;
      const char* world = std::getenv("WORLD_SIZE");
      const char* id_file = std::getenv("PRIMS_TEST_NCCL_ID_FILE");
      if (world == nullptr || id_file == nullptr || std::atoi(world) < 2) return l;
      l.world = std::atoi(world);
      const char* rank = std::getenv("RANK");
      const char* local_rank = std::getenv("LOCAL_RANK");
      l.rank = rank != nullptr ? std::atoi(rank) : 0;
      l.local_rank = local_rank != nullptr ? std::atoi(local_rank) : l.rank;
      l.id_file = id_file;
      return l;
    }();
    return launch;
  }
  bool several_processes() const { return world > 0; }
  /// Whether this process runs rank r (every rank where one process drives them all).
  bool runs(int r) const { return world == 0 || r == rank; }
};

/// Communicators over GPUs 0 .. ranks - 1, one set per rank count, made on first use and destroyed after the
/// last test. With one process a rank, only this process's entry is made (the others are null).
class Communicators : public ::testing::Environment {
 public:
  static const std::vector<ncclComm_t>& over(int ranks) {
    auto& comms = instance().comms_[ranks];
    if (comms.empty()) {
      comms.resize(static_cast<size_t>(ranks));
      // NCCL_NVLS_ENABLE=0 turns off NVLink SHARP (NVLS, NVLink multicast), which some systems cannot set up
      // (no fabric manager or multicast support, or a container without access to it). A value already set wins.
      setenv("NCCL_NVLS_ENABLE", "0", 0);
      const Launch& launch = Launch::get();
      if (launch.several_processes()) {
        if (ranks != launch.world) throw std::runtime_error("this process is one rank of " + std::to_string(launch.world));
        prims::check(cudaSetDevice(launch.local_rank), "cudaSetDevice");
        ncclUniqueId id{};
        if (launch.rank == 0) {
          check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
          prims::dist::write_unique_id_file(launch.id_file, id);
        } else {
          id = prims::dist::read_unique_id_file(launch.id_file, 120.0);
        }
        check_nccl(ncclCommInitRank(&comms[static_cast<size_t>(launch.rank)], ranks, id, launch.rank),
                   "ncclCommInitRank");
        if (launch.rank == 0) std::remove(launch.id_file.c_str());  // every rank has joined
      } else {
        std::vector<int> devices(static_cast<size_t>(ranks));
        std::iota(devices.begin(), devices.end(), 0);
        check_nccl(ncclCommInitAll(comms.data(), ranks, devices.data()), "ncclCommInitAll");
      }
    }
    return comms;
  }
  static Communicators& instance() {
    static Communicators* const environment =
        static_cast<Communicators*>(::testing::AddGlobalTestEnvironment(new Communicators));
    return *environment;
  }
  void TearDown() override {
    for (auto& [ranks, comms] : comms_) {
      for (ncclComm_t comm : comms) {
        if (comm != nullptr) ncclCommDestroy(comm);
      }
    }
    comms_.clear();
  }

 private:
  std::map<int, std::vector<ncclComm_t>> comms_;
};
/// Registered before the tests run, so that gtest tears it down after the last one.
[[maybe_unused]] const Communicators& kCommunicators = Communicators::instance();

/// Runs body(rank) on one host thread per rank with the rank's GPU current; fails the test for every rank that threw.
/// With one process a rank, body(this process's rank) on this thread, with GPU LOCAL_RANK current.
template <class Body>
void on_every_rank(int ranks, Body body) {
  const Launch& launch = Launch::get();
  if (launch.several_processes()) {
    std::string error;
    try {
      prims::check(cudaSetDevice(launch.local_rank), "cudaSetDevice");
      body(launch.rank);
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_EQ(error, "") << "rank " << launch.rank;
    return;
  }
  const std::vector<std::string> errors = prims::dist::on_each_gpu(ranks, body);
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

/// Every rank's `value`, in rank order: an all-gather over `comm` where each process runs one rank, else the values
/// the ranks of this process left in `values`.
template <class T>
std::vector<T> from_every_rank(const std::vector<ncclComm_t>& comms, std::vector<T> values) {
  static_assert(std::is_trivially_copyable_v<T>, "all-gathered as bytes");
  const Launch& launch = Launch::get();
  if (!launch.several_processes()) return values;
  prims::check(cudaSetDevice(launch.local_rank), "cudaSetDevice");
  const prims::Stream stream;
  prims::DeviceBuffer<T> mine(1), all(values.size());
  mine.upload(std::vector<T>{values[static_cast<size_t>(launch.rank)]});
  check_nccl(ncclAllGather(mine.data(), all.data(), sizeof(T), ncclUint8, comms[static_cast<size_t>(launch.rank)],
                           stream.get()),
             "ncclAllGather");
  stream.synchronize("the all-gather");
  prims::check(cudaMemcpy(values.data(), all.data(), values.size() * sizeof(T), cudaMemcpyDeviceToHost), "back");
  return values;
}

/// Where `actual` differs from expected[begin ..], if anywhere.
template <class T>
::testing::AssertionResult same_as_slice(const std::vector<T>& actual, const std::vector<T>& expected, size_t begin) {
  if (begin + actual.size() > expected.size()) return ::testing::AssertionFailure() << "slice past the end";
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(actual[i] == expected[begin + i])) {
      return ::testing::AssertionFailure() << "first difference at local index " << i << " of " << actual.size()
                                           << ": got " << +actual[i] << ", expected " << +expected[begin + i];
    }
  }
  return ::testing::AssertionSuccess();
}

struct SortOptions {
  Order order = Order::Ascending;
  bool pairs = false;
  bool in_place = false;
};

/// A value of type V that carries `index` (its low bytes, as many as fit).
template <class V>
V value_of(size_t index) {
  V value;
  std::memset(&value, 0, sizeof(V));
  const uint64_t wide = index;
  std::memcpy(&value, &wide, std::min(sizeof(V), sizeof(wide)));
  return value;
}

/// The index a value of type V carries (value_of's inverse, up to the bytes that fit).
template <class V>
uint64_t index_of(const V& value) {
  uint64_t wide = 0;
  std::memcpy(&wide, &value, std::min(sizeof(V), sizeof(wide)));
  return wide;
}

/// Sorts the shards (shard r on GPU r) with the distributed sort and compares every rank's output with its slice
/// of the CPU stable sort of the concatenation. Pairs carry each key's global index as its value (as many bytes of
/// it as V holds), so the values show the tie order across ranks.
template <class K, class V = uint32_t>
void check_sort(const std::vector<std::vector<K>>& shards, SortOptions options) {
  const int ranks = static_cast<int>(shards.size());
  const auto& comms = Communicators::over(ranks);
  std::vector<size_t> starts = {0};
  std::vector<K> all;
  for (const auto& shard : shards) {
    all.insert(all.end(), shard.begin(), shard.end());
    starts.push_back(all.size());
  }
  ASSERT_LT(all.size(), size_t{1} << 32);

  // The size queries run one rank at a time from this thread: they must not communicate.
  std::vector<size_t> temp_bytes(static_cast<size_t>(ranks));
  const Launch& launch = Launch::get();
  for (int r = 0; r < ranks; ++r) {
    if (!launch.runs(r)) continue;
    ASSERT_EQ(cudaSuccess, cudaSetDevice(launch.several_processes() ? launch.local_rank : r));
    const size_t n = shards[static_cast<size_t>(r)].size();
    const ncclResult_t sized =
        options.pairs
            ? prims::dist::radix_sort_pairs<K, V>(comms[r], nullptr, temp_bytes[r], nullptr, nullptr, nullptr,
                                                  nullptr, n, options.order)
            : prims::dist::radix_sort_keys<K>(comms[r], nullptr, temp_bytes[r], nullptr, nullptr, n, options.order);
    ASSERT_EQ(ncclSuccess, sized) << "rank " << r;
  }

  std::vector<std::vector<K>> sorted_keys(static_cast<size_t>(ranks));
  std::vector<std::vector<V>> sorted_values(static_cast<size_t>(ranks));
  on_every_rank(ranks, [&](int r) {
    const size_t rank = static_cast<size_t>(r);
    const size_t n = shards[rank].size();
    prims::DeviceBuffer<K> keys(n), keys_out(options.in_place ? 0 : n);
    prims::DeviceBuffer<V> values(options.pairs ? n : 0), values_out(options.pairs && !options.in_place ? n : 0);
    keys.upload(shards[rank]);
    keys_out.fill_bytes(0xa5);  // poison: unwritten outputs show
    if (options.pairs) {
      std::vector<V> index(n);
      for (size_t i = 0; i < n; ++i) index[i] = value_of<V>(starts[rank] + i);
      values.upload(index);
      values_out.fill_bytes(0xa5);
    }
    K* k_out = options.in_place ? keys.data() : keys_out.data();
    V* v_out = options.in_place ? values.data() : values_out.data();
    prims::DeviceBuffer<unsigned char> temp(temp_bytes[rank]);
    const prims::Stream stream;
    size_t bytes = temp_bytes[rank];
    check_nccl(options.pairs ? prims::dist::radix_sort_pairs(comms[r], temp.data(), bytes, keys.data(), k_out,
                                                             values.data(), v_out, n, options.order, stream.get())
                             : prims::dist::radix_sort_keys(comms[r], temp.data(), bytes, keys.data(), k_out, n,
                                                            options.order, stream.get()),
               "prims::dist::radix_sort");
    stream.synchronize("the distributed sort");
    sorted_keys[rank].resize(n);
    prims::check(cudaMemcpy(sorted_keys[rank].data(), k_out, n * sizeof(K), cudaMemcpyDeviceToHost), "keys back");
    if (options.pairs) {
      sorted_values[rank].resize(n);
      prims::check(cudaMemcpy(sorted_values[rank].data(), v_out, n * sizeof(V), cudaMemcpyDeviceToHost),
                   "values back");
    }
  });

  const auto permutation = prims::test::reference_sort_permutation(all, options.order, 0, 8 * int{sizeof(K)});
  const auto expected_keys = bit_patterns(prims::test::permuted(all, permutation));
  for (int r = 0; r < ranks; ++r) {
    if (!launch.runs(r)) continue;
    const size_t rank = static_cast<size_t>(r);
    EXPECT_TRUE(same_as_slice(bit_patterns(sorted_keys[rank]), expected_keys, starts[rank])) << "keys of rank " << r;
    if (options.pairs) {
      std::vector<uint64_t> got_values, expected_values;
      for (const V& value : sorted_values[rank]) got_values.push_back(index_of(value));
      for (size_t index : permutation) expected_values.push_back(index_of(value_of<V>(index)));
      EXPECT_TRUE(same_as_slice(got_values, expected_values, starts[rank])) << "values of rank " << r;
    }
  }
}

/// Keys drawn by `make(rng)` for every shard size.
template <class K, class Make>
std::vector<std::vector<K>> make_shards(const std::vector<size_t>& sizes, uint64_t seed, Make make) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<K>> shards;
  for (size_t n : sizes) {
    std::vector<K> shard(n);
    for (auto& key : shard) key = make(rng);
    shards.push_back(std::move(shard));
  }
  return shards;
}

/// Random keys of every bit pattern, with the special floats mixed in for float types.
template <class K>
std::vector<std::vector<K>> random_shards(const std::vector<size_t>& sizes, uint64_t seed) {
  std::vector<std::vector<K>> shards;
  for (size_t n : sizes) {
    auto shard = random_keys<K>(n, seed++);
    if constexpr (std::is_floating_point_v<K>) {
      const auto specials = prims::test::special_floats<K>();
      for (size_t i = 0; i < n; i += 7) shard[i] = specials[(i / 7) % specials.size()];
    }
    shards.push_back(std::move(shard));
  }
  return shards;
}

/// A test's ranks, and how they exchange keys: by stores straight into the peers' buffers where the GPUs reach
/// each other (the default), or through NCCL's sends and receives (PRIMS_DIST_EXCHANGE=nccl).
struct Setup {
  int ranks;
  bool through_nccl;
};

/// The test's rank count and exchange are its parameter; it skips without that many GPUs.
class DistRadixSort : public ::testing::TestWithParam<Setup> {
 protected:
  void SetUp() override {
    const Launch& launch = Launch::get();
    if (launch.several_processes() && ranks() != launch.world) {
      GTEST_SKIP() << "this process is one rank of " << launch.world;
    }
    const int needed = launch.several_processes() ? launch.local_rank + 1 : ranks();
    if (gpu_count() < needed) GTEST_SKIP() << "needs " << needed << " GPUs, found " << gpu_count();
    if (GetParam().through_nccl) setenv("PRIMS_DIST_EXCHANGE", "nccl", 1);
  }
  void TearDown() override { unsetenv("PRIMS_DIST_EXCHANGE"); }
  int ranks() const { return GetParam().ranks; }

  /// Shard sizes for this rank count: every size alone on one rank; uneven, empty and tile-edge pairs on two;
  /// on four, empty ranks between full ones, one rank holding everything, and tile edges.
  std::vector<std::vector<size_t>> shard_size_sets() const {
    if (ranks() == 1) {
      return {{0}, {1}, {2}, {31}, {255}, {257}, {kTile - 1}, {kTile + 1}, {4093}, {65537}, {1000003}, {(1 << 20) + 7}};
    }
    if (ranks() == 2) {
      return {{0, 0},         {1, 0},         {0, 1},          {1, 1},         {2, 31},
              {4093, 0},      {0, 65537},     {31, 257},       {kTile - 1, kTile + 1},
              {3 * kTile, 7 * kTile - 1},     {1000003, 17},   {255, (1 << 20) + 7},
              {65537, 65535}, {1 << 20, 1 << 20}};
    }
    return {{0, 0, 0, 0},
            {0, 0, 1, 0},
            {1, 1, 1, 1},
            {2, 31, 0, 257},
            {0, 65537, 0, 4093},
            {1000003, 0, 0, 0},
            {0, 0, 0, 1000003},
            {kTile - 1, kTile + 1, kTile, 1},
            {3 * kTile, 7 * kTile - 1, 0, 5 * kTile + 3},
            {255, (1 << 20) + 7, 17, 65535},
            {1 << 20, 1 << 20, 1 << 20, 1 << 20}};
  }
};

/// Shard sizes a and b on two ranks (their sum on one); on more, the pair again with other sizes beside it, so that
/// a = 0 leaves some ranks empty and the others uneven.
std::vector<size_t> uneven(int ranks, size_t a, size_t b) {
  if (ranks == 1) return {a + b};
  std::vector<size_t> sizes{a, b};
  for (int r = 2; r < ranks; ++r) sizes.push_back(r % 2 == 0 ? a / 2 + static_cast<size_t>(r) : b / 3);
  return sizes;
}

TEST_P(DistRadixSort, UnevenShardsU32) {
  uint64_t seed = 1;
  for (const auto& sizes : shard_size_sets()) {
    SCOPED_TRACE("shard sizes " + ::testing::PrintToString(sizes));
    check_sort(random_shards<uint32_t>(sizes, seed++), {});
  }
}

TEST_P(DistRadixSort, OneEmptyShardPairs) {
  for (const auto& sizes : {uneven(ranks(), 0, 200003), uneven(ranks(), 200003, 0)}) {
    SCOPED_TRACE("shard sizes " + ::testing::PrintToString(sizes));
    check_sort(random_shards<uint32_t>(sizes, 5), {Order::Ascending, true});
  }
}

TEST_P(DistRadixSort, AllKeysEqualKeepRankAndIndexOrder) {
  for (Order order : {Order::Ascending, Order::Descending}) {
    const auto shards = make_shards<uint32_t>(uneven(ranks(), 50001, 70003), 1, [](auto&) { return 0x5bd1e995u; });
    check_sort(shards, {order, true});
    check_sort(make_shards<uint64_t>(uneven(ranks(), 3, 100000), 2, [](auto&) { return uint64_t{42}; }),
               {order, true});
  }
}

TEST_P(DistRadixSort, AllKeysInOneRanksRange) {
  // Every key that rank 0 holds sorts after every key of the other ranks, and the reverse.
  for (bool high_first : {true, false}) {
    std::vector<std::vector<uint32_t>> shards;
    std::mt19937_64 rng(3);
    for (size_t r = 0; r < static_cast<size_t>(ranks()); ++r) {
      const uint32_t base = (r == 0) == high_first ? 0xf0000000u : 0;
      std::vector<uint32_t> shard(100003 + 1000 * r);
      for (auto& key : shard) key = base + static_cast<uint32_t>(rng() & 0xffffff);
      shards.push_back(std::move(shard));
    }
    check_sort(shards, {Order::Ascending, true});
  }
  // All keys share their top three bytes: the boundary is found in the last digit.
  check_sort(make_shards<uint32_t>(uneven(ranks(), 80000, 90001), 4,
                                   [](auto& rng) { return 0xabcdef00u + static_cast<uint32_t>(rng() & 0xff); }),
             {Order::Ascending, true});
  // i32 keys around zero: the sign bit decides the top bucket.
  check_sort(make_shards<int32_t>(uneven(ranks(), 65536, 65537), 6,
                                  [](auto& rng) { return static_cast<int32_t>(rng() % 2001) - 1000; }),
             {Order::Ascending, true});
}

TEST_P(DistRadixSort, Descending) {
  check_sort(random_shards<uint32_t>(uneven(ranks(), 100000, 150001), 7), {Order::Descending, false});
  check_sort(random_shards<float>(uneven(ranks(), 100000, 150001), 8), {Order::Descending, true});
  check_sort(random_shards<int32_t>(uneven(ranks(), 0, 150001), 9), {Order::Descending, true});
}

TEST_P(DistRadixSort, PairsStableAcrossRanksWithFewDistinctKeys) {
  for (Order order : {Order::Ascending, Order::Descending}) {
    for (uint64_t distinct : {2u, 3u, 17u, 1000u}) {
      SCOPED_TRACE(std::to_string(distinct) + " distinct keys");
      check_sort(make_shards<uint64_t>(uneven(ranks(), 120001, 99999), distinct,
                                       [distinct](auto& rng) { return (rng() % distinct) * 0x0101010101010101ull; }),
                 {order, true});
    }
  }
}

TEST_P(DistRadixSort, KeyTypes) {
  for (const auto& sizes : {uneven(ranks(), 100003, 65536), uneven(ranks(), 4093, 300007)}) {
    SCOPED_TRACE("shard sizes " + ::testing::PrintToString(sizes));
    check_sort(random_shards<uint8_t>(sizes, 10), {Order::Ascending, true});
    check_sort(random_shards<int32_t>(sizes, 11), {Order::Ascending, true});
    check_sort(random_shards<uint64_t>(sizes, 12), {Order::Ascending, true});
    check_sort(random_shards<float>(sizes, 13), {Order::Ascending, true});
    check_sort(random_shards<double>(sizes, 14), {Order::Ascending, false});
    check_sort(random_shards<int16_t>(sizes, 15), {Order::Descending, true});
    check_sort(random_shards<int8_t>(sizes, 18), {Order::Descending, true});
    check_sort(random_shards<uint16_t>(sizes, 19), {Order::Ascending, true});
    check_sort(random_shards<int64_t>(sizes, 20), {Order::Descending, true});
    check_sort(random_shards<int64_t>(sizes, 21), {Order::Ascending, false});
  }
}

/// Values of 1, 2, 8, 12 and 16 bytes with 4- and 8-byte keys, few distinct keys (ties across ranks).
TEST_P(DistRadixSort, ValueTypes) {
  const auto sizes = uneven(ranks(), 70001, 65537);
  const auto few = make_shards<uint32_t>(sizes, 22, [](auto& rng) { return static_cast<uint32_t>(rng() % 5) << 20; });
  const auto wide = random_shards<double>(sizes, 23);
  check_sort<uint32_t, uint8_t>(few, {Order::Ascending, true});
  check_sort<uint32_t, uint16_t>(few, {Order::Descending, true});
  check_sort<uint32_t, uint64_t>(few, {Order::Ascending, true});
  check_sort<double, prims::test::Payload<12>>(wide, {Order::Ascending, true});
  check_sort<double, prims::test::Payload<16>>(wide, {Order::Descending, true, true});
}

TEST_P(DistRadixSort, InPlace) {
  check_sort(random_shards<uint32_t>(uneven(ranks(), 77777, 123457), 16), {Order::Ascending, true, true});
  check_sort(random_shards<float>(uneven(ranks(), 123457, 0), 17), {Order::Descending, false, true});
}

TEST_P(DistRadixSort, BadArguments) {
  // The calls below communicate nothing (sizing, or arguments refused before any collective): one rank may make
  // them alone.
  const Launch& launch = Launch::get();
  const auto& comms = Communicators::over(ranks());
  const int rank = launch.several_processes() ? launch.rank : 0;
  const int device = launch.several_processes() ? launch.local_rank : 0;
  const ncclComm_t comm = comms[static_cast<size_t>(rank)];
  ASSERT_EQ(cudaSuccess, cudaSetDevice(device));
  size_t bytes = 0;
  ASSERT_EQ(ncclSuccess, prims::dist::radix_sort_keys<uint32_t>(comm, nullptr, bytes, nullptr, nullptr, 1000));
  prims::DeviceBuffer<unsigned char> temp(bytes);
  prims::DeviceBuffer<uint32_t> keys(1000);
  size_t too_few = bytes - 1;
  EXPECT_EQ(ncclInvalidArgument, prims::dist::radix_sort_keys(comm, temp.data(), too_few, keys.data(), keys.data(), 1000));
  EXPECT_EQ(ncclInvalidArgument,
            prims::dist::radix_sort_keys<uint32_t>(comm, temp.data(), bytes, nullptr, keys.data(), 1000));
  if (ranks() > 1 && gpu_count() > 1) {
    // A rank's communicator with another GPU current.
    ASSERT_EQ(cudaSuccess, cudaSetDevice(device == 0 ? 1 : 0));
    EXPECT_EQ(ncclInvalidUsage, prims::dist::radix_sort_keys<uint32_t>(comm, nullptr, bytes, nullptr, nullptr, 1000));
    ASSERT_EQ(cudaSuccess, cudaSetDevice(device));
  }
}

// ---- 2^30 keys a rank, validated on the GPUs ----

/// Keys of shard `rank`: uniform 32-bit, or one of `distinct` values (0: uniform).
__global__ void generate_keys_kernel(uint32_t* keys, size_t n, uint64_t rank, uint32_t distinct) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t bits = prims::mix_bits(rank * 0x9e3779b97f4a7c15ull + i);
    keys[i] = distinct == 0 ? static_cast<uint32_t>(bits >> 32) : static_cast<uint32_t>((bits >> 32) % distinct);
  }
}

/// Permutation-invariant fingerprints of the keys (a sum and a xor of hashes), and the number of places where a
/// key is smaller than the one before it.
struct Fingerprint {
  unsigned long long hash_sum;
  unsigned long long hash_xor;
  unsigned long long descents;
};

__global__ void fingerprint_kernel(const uint32_t* keys, size_t n, Fingerprint* out) {
  unsigned long long sum = 0, xor_bits = 0, descents = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t hash = prims::mix_bits(keys[i]);
    sum += hash;
    xor_bits ^= hash;
    if (i > 0 && keys[i] < keys[i - 1]) ++descents;
  }
  atomicAdd(&out->hash_sum, sum);
  atomicXor(&out->hash_xor, xor_bits);
  atomicAdd(&out->descents, descents);
}

Fingerprint fingerprint(const uint32_t* keys, size_t n, cudaStream_t stream) {
  prims::DeviceBuffer<Fingerprint> result(1);
  prims::check(cudaMemsetAsync(result.data(), 0, sizeof(Fingerprint), stream), "cudaMemset");
  fingerprint_kernel<<<1024, 256, 0, stream>>>(keys, n, result.data());
  prims::check(cudaGetLastError(), "fingerprint_kernel");
  Fingerprint host{};
  prims::check(cudaMemcpyAsync(&host, result.data(), sizeof(host), cudaMemcpyDeviceToHost, stream), "copy back");
  prims::check(cudaStreamSynchronize(stream), "fingerprint");
  return host;
}

TEST_P(DistRadixSort, TwoToThe30KeysARankValidatedOnTheGpu) {
  const size_t n = size_t{1} << 30;
  const int ranks = this->ranks();
  const auto& comms = Communicators::over(ranks);
  for (uint32_t distinct : {0u, 1000u}) {
    SCOPED_TRACE(distinct == 0 ? "uniform keys" : "1000 distinct keys");
    std::vector<Fingerprint> before(static_cast<size_t>(ranks)), after(static_cast<size_t>(ranks));
    std::vector<uint32_t> first(static_cast<size_t>(ranks)), last(static_cast<size_t>(ranks));
    on_every_rank(ranks, [&](int r) {
      const size_t rank = static_cast<size_t>(r);
      prims::DeviceBuffer<uint32_t> keys(n);
      const prims::Stream stream;
      generate_keys_kernel<<<4096, 256, 0, stream.get()>>>(keys.data(), n, rank, distinct);
      prims::check(cudaGetLastError(), "generate_keys_kernel");
      before[rank] = fingerprint(keys.data(), n, stream.get());
      size_t bytes = 0;
      check_nccl(prims::dist::radix_sort_keys<uint32_t>(comms[r], nullptr, bytes, nullptr, nullptr, n), "size");
      prims::DeviceBuffer<unsigned char> temp(bytes);
      // In place, to leave room: the input is the output.
      check_nccl(prims::dist::radix_sort_keys(comms[r], temp.data(), bytes, keys.data(), keys.data(), n,
                                              Order::Ascending, stream.get()),
                 "prims::dist::radix_sort_keys");
      after[rank] = fingerprint(keys.data(), n, stream.get());
      prims::check(cudaMemcpy(&first[rank], keys.data(), sizeof(uint32_t), cudaMemcpyDeviceToHost), "first key");
      prims::check(cudaMemcpy(&last[rank], keys.data() + n - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost),
                   "last key");
    });
    before = from_every_rank(comms, before);
    after = from_every_rank(comms, after);
    first = from_every_rank(comms, first);
    last = from_every_rank(comms, last);
    Fingerprint total_before{}, total_after{};
    for (int r = 0; r < ranks; ++r) {
      const size_t rank = static_cast<size_t>(r);
      EXPECT_EQ(after[rank].descents, 0u) << "rank " << r << " is sorted";
      if (r + 1 < ranks) EXPECT_LE(last[rank], first[rank + 1]) << "ranks " << r << " and " << r + 1 << " in order";
      total_before.hash_sum += before[rank].hash_sum;
      total_before.hash_xor ^= before[rank].hash_xor;
      total_after.hash_sum += after[rank].hash_sum;
      total_after.hash_xor ^= after[rank].hash_xor;
    }
    EXPECT_EQ(total_before.hash_sum, total_after.hash_sum) << "the same keys, rearranged";
    EXPECT_EQ(total_before.hash_xor, total_after.hash_xor) << "the same keys, rearranged";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DistRadixSort,
                         ::testing::Values(Setup{1, false}, Setup{2, false}, Setup{2, true}, Setup{4, false},
                                           Setup{4, true}),
                         [](const ::testing::TestParamInfo<Setup>& info) {
                           return std::to_string(info.param.ranks) + (info.param.ranks == 1 ? "Rank" : "Ranks") +
                                  (info.param.through_nccl ? "ThroughNccl" : "");
                         });

/// The stored exchange's reach, on the host: a rank of another process is out of reach (its addresses mean nothing
/// here), ranks of this process on one device reach each other without asking the driver, and every rank's buffers
/// are handed back as given.
TEST(PeerBuffers, OnlyRanksOfThisProcessAreReached) {
  using prims::dist::detail::PeerBuffers;
  using prims::dist::detail::PeerIdentity;
  const PeerIdentity me{7, 0, {0x1000, 0x2000}};
  const PeerIdentity same_device{7, 0, {0x3000, 0}};
  const PeerIdentity other_process{8, 0, {0x5000, 0x6000}};
  PeerBuffers peers;
  ASSERT_TRUE(peers.open({me, same_device}, 0));
  EXPECT_EQ(peers.keys(0), reinterpret_cast<void*>(0x1000));
  EXPECT_EQ(peers.values(0), reinterpret_cast<void*>(0x2000));
  EXPECT_EQ(peers.keys(1), reinterpret_cast<void*>(0x3000));
  EXPECT_EQ(peers.values(1), nullptr);
  EXPECT_TRUE(peers.open({same_device, me}, 1));
  EXPECT_FALSE(peers.open({me, other_process}, 0));
  EXPECT_FALSE(peers.open({other_process, me, same_device}, 2));
  // A rank's identity names this process, whatever its buffers.
  EXPECT_EQ(PeerBuffers::identify(nullptr, nullptr).process, PeerBuffers::identify(&me, nullptr).process);
}

/// Which exchange two ranks take: stores into the peer's buffers where the GPUs reach each other, NCCL where
/// PRIMS_DIST_EXCHANGE=nccl; every rank takes the same.
/// With one process a rank (two), NCCL always: a peer's buffers in another process are out of reach.
TEST(DistRadixSortExchange, StoresWherePeersReachEachOtherElseNccl) {
  const Launch& launch = Launch::get();
  if (launch.several_processes() && launch.world != 2) GTEST_SKIP() << "this process is one rank of " << launch.world;
  if (gpu_count() < (launch.several_processes() ? launch.local_rank + 1 : 2)) GTEST_SKIP() << "needs 2 GPUs";
  int reach = 0;
  if (!launch.several_processes()) {
    ASSERT_EQ(cudaSuccess, cudaDeviceCanAccessPeer(&reach, 0, 1));
    if (reach == 0) GTEST_SKIP() << "GPUs 0 and 1 cannot access each other's memory";
  }
  using Sort = prims::dist::detail::DistributedRadixSort<uint32_t, prims::detail::NoValues>;
  const auto& comms = Communicators::over(2);
  const auto shards = random_shards<uint32_t>({70001, 65537}, 21);
  for (const bool through_nccl : {false, true}) {
    SCOPED_TRACE(through_nccl ? "PRIMS_DIST_EXCHANGE=nccl" : "default");
    if (through_nccl) setenv("PRIMS_DIST_EXCHANGE", "nccl", 1);
    bool direct[2] = {through_nccl, through_nccl};  // a rank that fails leaves the wrong answer
    on_every_rank(2, [&](int r) {
      const size_t n = shards[static_cast<size_t>(r)].size();
      prims::DeviceBuffer<uint32_t> keys(n), sorted(n);
      keys.upload(shards[static_cast<size_t>(r)]);
      size_t bytes = 0;
      std::optional<Sort> sort;
      const prims::detail::PassBuffers<uint32_t, prims::detail::NoValues> io{keys.data(), sorted.data(), nullptr,
                                                                          nullptr};
      check_nccl(Sort::create(comms[r], nullptr, bytes, io, n, Order::Ascending, nullptr, sort), "size");
      prims::DeviceBuffer<unsigned char> temp(bytes);
      const prims::Stream stream;
      check_nccl(Sort::create(comms[r], temp.data(), bytes, io, n, Order::Ascending, stream.get(), sort), "create");
      check_nccl(sort->run(), "run");
      stream.synchronize("the distributed sort");
      direct[r] = sort->direct_exchange();
    });
    unsetenv("PRIMS_DIST_EXCHANGE");
    for (int r = 0; r < 2; ++r) {
      if (launch.runs(r)) EXPECT_EQ(direct[r], !through_nccl && !launch.several_processes()) << "rank " << r;
    }
  }
}

TEST(DistRadixSortArguments, NullCommunicatorIsInvalidArgument) {
  size_t bytes = 0;
  EXPECT_EQ(ncclInvalidArgument, prims::dist::radix_sort_keys<uint32_t>(nullptr, nullptr, bytes, nullptr, nullptr, 1));
}

}  // namespace
