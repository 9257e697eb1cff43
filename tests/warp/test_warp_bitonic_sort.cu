// Warp bitonic sort: every group of LANES lanes sorts its LANES * ITEMS items (blocked across the lanes), checked
// against std::sort of the same group on the CPU, for group shapes from one lane of 16 items to 32 lanes of 2,
// integers with many ties (min and max) and a struct ordered by one field (ties that are not identical: nothing
// may be lost or duplicated).
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "gpu_test.cuh"
#include "prims/warp/bitonic_sort.cuh"

namespace {

constexpr int kBlockThreads = 128;
constexpr int kBlocks = 3;

/// Ordered by key only: tags of equal keys may come out in any order, but every (key, tag) must come out once.
struct Tagged {
  int key;
  unsigned tag;
};
struct KeyLess {
  __host__ __device__ bool operator()(const Tagged& a, const Tagged& b) const { return a.key < b.key; }
};

template <int LANES, int ITEMS, class T, class Less>
__global__ void bitonic_kernel(T* data, Less less) {
  constexpr int kGroupItems = LANES * ITEMS;
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int member = thread % LANES;
  T* group = data + static_cast<size_t>(thread / LANES) * kGroupItems;
  T items[ITEMS];
  for (int r = 0; r < ITEMS; ++r) items[r] = group[member * ITEMS + r];
  if constexpr (std::is_same_v<Less, std::less<T>>) {
    prims::warp::bitonic_sort<LANES>(items, member);  // the integer form
  } else {
    prims::warp::bitonic_sort<LANES>(items, member, less);
  }
  for (int r = 0; r < ITEMS; ++r) group[member * ITEMS + r] = items[r];
}

template <int LANES, int ITEMS, class T, class Less>
void check_bitonic(const std::vector<T>& input, Less less) {
  constexpr int kGroupItems = LANES * ITEMS;
  ASSERT_EQ(input.size(), static_cast<size_t>(kBlocks * kBlockThreads * ITEMS));
  prims::DeviceBuffer<T> data(input.size());
  data.upload(input);
  bitonic_kernel<LANES, ITEMS><<<kBlocks, kBlockThreads>>>(data.data(), less);
  ASSERT_EQ(cudaSuccess, cudaGetLastError());
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const std::vector<T> output = data.download();
  for (size_t first = 0; first < input.size(); first += kGroupItems) {
    const auto begin = output.begin() + first;
    ASSERT_TRUE(std::is_sorted(begin, begin + kGroupItems, less)) << "group at " << first;
    // The same items: both sides in one total order (the struct's by key, then tag).
    std::vector<T> in(input.begin() + first, input.begin() + first + kGroupItems), out(begin, begin + kGroupItems);
    if constexpr (std::is_same_v<T, Tagged>) {
      auto total = [](const Tagged& a, const Tagged& b) { return std::tie(a.key, a.tag) < std::tie(b.key, b.tag); };
      std::sort(in.begin(), in.end(), total);
      std::sort(out.begin(), out.end(), total);
      for (int i = 0; i < kGroupItems; ++i) {
        ASSERT_EQ(in[i].key, out[i].key) << "group at " << first;
        ASSERT_EQ(in[i].tag, out[i].tag) << "group at " << first;
      }
    } else {
      std::sort(in.begin(), in.end());
      std::sort(out.begin(), out.end());
      ASSERT_EQ(in, out) << "group at " << first;
    }
  }
}

template <class T>
std::vector<T> with_ties(size_t n, uint64_t seed, T modulus) {
  std::vector<T> values = prims::test::random_values<T>(n, seed, false);
  for (auto& v : values) v = static_cast<T>(v % modulus);
  return values;
}

constexpr size_t items_for(int items) { return static_cast<size_t>(kBlocks) * kBlockThreads * items; }

TEST(WarpBitonicSort, UnsignedEveryGroupShape) {
  PRIMS_REQUIRE_GPU();
  check_bitonic<1, 16>(with_ties<uint32_t>(items_for(16), 1, 1000), std::less<uint32_t>{});
  check_bitonic<2, 8>(with_ties<uint32_t>(items_for(8), 2, 7), std::less<uint32_t>{});
  check_bitonic<4, 4>(with_ties<uint32_t>(items_for(4), 3, 1u << 31), std::less<uint32_t>{});
  check_bitonic<8, 8>(with_ties<uint32_t>(items_for(8), 4, 100), std::less<uint32_t>{});
  check_bitonic<16, 4>(with_ties<uint32_t>(items_for(4), 5, 3), std::less<uint32_t>{});
  check_bitonic<32, 2>(with_ties<uint32_t>(items_for(2), 6, 50), std::less<uint32_t>{});
  check_bitonic<32, 1>(with_ties<uint32_t>(items_for(1), 7, 1000), std::less<uint32_t>{});
}

TEST(WarpBitonicSort, NarrowAndWideIntegers) {
  PRIMS_REQUIRE_GPU();
  check_bitonic<4, 4>(with_ties<uint8_t>(items_for(4), 8, 255), std::less<uint8_t>{});
  check_bitonic<2, 8>(with_ties<uint16_t>(items_for(8), 9, 65535), std::less<uint16_t>{});
  check_bitonic<16, 4>(prims::test::random_values<uint64_t>(items_for(4), 10, false), std::less<uint64_t>{});
  check_bitonic<8, 2>(prims::test::random_values<int>(items_for(2), 11, false), std::less<int>{});
}

TEST(WarpBitonicSort, ComparisonWithTiesThatAreNotIdentical) {
  PRIMS_REQUIRE_GPU();
  auto tagged = [](size_t n, uint64_t seed) {
    const std::vector<int> keys = with_ties<int>(n, seed, 5);
    std::vector<Tagged> items(n);
    for (size_t i = 0; i < n; ++i) items[i] = {keys[i], static_cast<unsigned>(i)};
    return items;
  };
  check_bitonic<4, 8>(tagged(items_for(8), 12), KeyLess{});
  check_bitonic<16, 4>(tagged(items_for(4), 13), KeyLess{});
  check_bitonic<1, 4>(tagged(items_for(4), 14), KeyLess{});
}

}  // namespace
