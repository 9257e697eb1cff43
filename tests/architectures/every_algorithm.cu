// Compile-only: one instance of every device algorithm (keys and pairs, 4- and 8-byte keys), built for the GPU
// generations prims means to run on (tests/CMakeLists.txt, prims_architectures). A kernel whose shared memory or
// launch bounds do not fit a generation, or code that needs a newer one, fails this build; nothing here runs.
#include <cstdint>

#include "prims/prims.cuh"

namespace {

using prims::device::Order;

struct IsOdd {
  template <class T>
  __host__ __device__ bool operator()(T x) const { return (x & 1) != 0; }
};

template <class K, class V>
cudaError_t every_algorithm(void* temp, size_t& bytes, K* keys, V* values, size_t n, cudaStream_t s) {
  size_t* offsets = nullptr;
  const uint32_t* begins = nullptr;
  const uint32_t* ends = nullptr;
  cudaError_t e = cudaSuccess;
  auto note = [&](cudaError_t r) { e = e == cudaSuccess ? r : e; };
  note(prims::device::sum(temp, bytes, keys, keys, n, s));
  note(prims::device::exclusive_sum(temp, bytes, keys, keys, n, s));
  note(prims::device::inclusive_sum(temp, bytes, keys, keys, n, s));
  note(prims::device::radix_sort_keys(temp, bytes, keys, keys, n, Order::Ascending, 0, 8 * int{sizeof(K)}, s));
  note(prims::device::radix_sort_pairs(temp, bytes, keys, keys, values, values, n, Order::Descending, 0,
                                       8 * int{sizeof(K)}, s));
  note(prims::device::radix_partition_keys(temp, bytes, keys, keys, n, offsets, 0, 8, Order::Ascending, s));
  note(prims::device::radix_partition_pairs(temp, bytes, keys, keys, values, values, n, offsets, 0, 8,
                                            Order::Ascending, s));
  note(prims::device::segmented_radix_sort_keys(temp, bytes, keys, keys, n, 1, begins, ends, Order::Ascending, 0,
                                                8 * int{sizeof(K)}, s));
  note(prims::device::segmented_radix_sort_pairs(temp, bytes, keys, keys, values, values, n, 1, begins, ends,
                                                 Order::Ascending, 0, 8 * int{sizeof(K)}, s));
  note(prims::device::select_if(temp, bytes, keys, keys, offsets, n, IsOdd{}, s));
  note(prims::device::partition_if(temp, bytes, keys, keys, offsets, n, IsOdd{}, s));
  note(prims::device::select_flagged(temp, bytes, keys, values, keys, offsets, n, s));
  note(prims::device::unique(temp, bytes, keys, keys, offsets, n, prims::Equal{}, s));
  note(prims::device::unique_by_key(temp, bytes, keys, values, keys, values, offsets, n, prims::Equal{}, s));
  note(prims::device::reduce_by_key(temp, bytes, keys, keys, values, values, offsets, n, prims::Sum{}, prims::Equal{},
                                    s));
  note(prims::device::inclusive_scan_by_key(temp, bytes, keys, values, values, n, prims::Sum{}, prims::Equal{}, s));
  note(prims::device::exclusive_scan_by_key(temp, bytes, keys, values, values, n, prims::Sum{}, V{}, prims::Equal{},
                                            s));
  note(prims::device::run_length_encode(temp, bytes, keys, keys, values, offsets, n, s));
  note(prims::device::non_trivial_runs(temp, bytes, keys, offsets, values, offsets, n, s));
  note(prims::device::histogram_even(temp, bytes, keys, values, 256, K{0}, K{255}, n, s));
  note(prims::device::segmented_reduce(temp, bytes, keys, keys, 1, begins, ends, prims::Sum{}, K{0}, s));
  note(prims::device::histogram_range(temp, bytes, keys, values, 256, static_cast<const K*>(keys), n, s));
  note(prims::device::top_k_keys(temp, bytes, keys, keys, n, 100, Order::Descending, s));
  note(prims::device::top_k_pairs(temp, bytes, keys, keys, values, values, n, 100, Order::Ascending, s));
  note(prims::device::segmented_top_k_keys(temp, bytes, keys, keys, 1, begins, ends, 50, Order::Descending, s));
  note(prims::device::segmented_top_k_pairs(temp, bytes, keys, keys, values, values, 1, begins, ends, 50,
                                            Order::Ascending, s));
  return e;
}

}  // namespace

int main() {
  size_t bytes = 0;
  const cudaError_t e = every_algorithm<uint32_t, uint32_t>(nullptr, bytes, nullptr, nullptr, 0, nullptr);
  const cudaError_t f = every_algorithm<uint64_t, uint32_t>(nullptr, bytes, nullptr, nullptr, 0, nullptr);
  return e == cudaSuccess && f == cudaSuccess ? 0 : 1;
}
