// api_tour: the device API in one small program. A sum, a running total, a stream compaction, a sort of key-value
// pairs, the values' totals by key and an arg-top-k, each with the two-phase temporary storage: ask for the bytes,
// allocate, run. Prints what it computed.
#include <prims/prims.cuh>

#include <algorithm>
#include <cstdio>
#include <vector>

// Checks a cudaError_t and leaves with a message naming the call.
#define CHECK(call)                                                                      \
  do {                                                                                   \
    const cudaError_t error_ = (call);                                                   \
    if (error_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "api_tour: %s: %s\n", #call, cudaGetErrorString(error_));     \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

// The predicate of the compaction: any __device__-callable functor (or extended lambda).
struct Positive {
  __host__ __device__ bool operator()(int x) const { return x > 0; }
};

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "api_tour: no CUDA device\n");
    return 77;  // "skipped" to ctest
  }
  const std::vector<int> keys = {5, -3, 8, 0, -3, 12, 7, 1};
  const std::vector<float> values = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
  const size_t n = keys.size();

  const size_t k = 3;
  std::vector<int> positions(n);
  for (size_t i = 0; i < n; ++i) positions[i] = static_cast<int>(i);

  int *d_keys, *d_sum, *d_running, *d_kept, *d_sorted_keys, *d_unique_keys;
  int *d_positions, *d_top_keys, *d_top_positions;
  float *d_values, *d_sorted_values, *d_totals;
  size_t *d_kept_count, *d_unique_count;
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_sum, sizeof(int)));
  CHECK(cudaMalloc(&d_running, n * sizeof(int)));
  CHECK(cudaMalloc(&d_kept, n * sizeof(int)));
  CHECK(cudaMalloc(&d_kept_count, sizeof(size_t)));
  CHECK(cudaMalloc(&d_sorted_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_values, n * sizeof(float)));
  CHECK(cudaMalloc(&d_sorted_values, n * sizeof(float)));
  CHECK(cudaMalloc(&d_unique_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_totals, n * sizeof(float)));
  CHECK(cudaMalloc(&d_unique_count, sizeof(size_t)));
  CHECK(cudaMalloc(&d_positions, n * sizeof(int)));
  CHECK(cudaMalloc(&d_top_keys, k * sizeof(int)));
  CHECK(cudaMalloc(&d_top_positions, k * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_values, values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_positions, positions.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  // One scratch allocation, as large as the largest of the six needs.
  size_t sum_bytes = 0, scan_bytes = 0, select_bytes = 0, sort_bytes = 0, by_key_bytes = 0, top_k_bytes = 0;
  CHECK(prims::device::sum(nullptr, sum_bytes, d_keys, d_sum, n));
  CHECK(prims::device::exclusive_sum(nullptr, scan_bytes, d_keys, d_running, n));
  CHECK(prims::device::select_if(nullptr, select_bytes, d_keys, d_kept, d_kept_count, n, Positive{}));
  CHECK(prims::device::radix_sort_pairs(nullptr, sort_bytes, d_keys, d_sorted_keys, d_values, d_sorted_values, n));
  CHECK(prims::device::reduce_by_key(nullptr, by_key_bytes, d_sorted_keys, d_unique_keys, d_sorted_values, d_totals,
                                     d_unique_count, n, prims::Sum{}));
  CHECK(prims::device::top_k_pairs(nullptr, top_k_bytes, d_keys, d_top_keys, d_positions, d_top_positions, n, k));
  size_t temp_bytes = std::max({sum_bytes, scan_bytes, select_bytes, sort_bytes, by_key_bytes, top_k_bytes});
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(prims::device::sum(temp, temp_bytes, d_keys, d_sum, n, stream));
  CHECK(prims::device::exclusive_sum(temp, temp_bytes, d_keys, d_running, n, stream));
  // The count of kept keys lands in device memory: no synchronization until the host needs it.
  CHECK(prims::device::select_if(temp, temp_bytes, d_keys, d_kept, d_kept_count, n, Positive{}, stream));
  CHECK(prims::device::radix_sort_pairs(temp, temp_bytes, d_keys, d_sorted_keys, d_values, d_sorted_values, n,
                                        prims::device::Order::Descending, 0, 32, stream));
  // Equal keys now sit together: one total a key.
  CHECK(prims::device::reduce_by_key(temp, temp_bytes, d_sorted_keys, d_unique_keys, d_sorted_values, d_totals,
                                     d_unique_count, n, prims::Sum{}, prims::Equal{}, stream));
  // The k largest keys with their positions (an arg-top-k), largest first, without sorting the rest.
  CHECK(prims::device::top_k_pairs(temp, temp_bytes, d_keys, d_top_keys, d_positions, d_top_positions, n, k,
                                   prims::device::Order::Descending, stream));
  CHECK(cudaStreamSynchronize(stream));

  int sum = 0;
  size_t kept_count = 0;
  std::vector<int> running(n), kept(n), sorted_keys(n);
  std::vector<float> sorted_values(n);
  size_t unique_count = 0;
  std::vector<int> unique_keys(n);
  std::vector<float> totals(n);
  std::vector<int> top_keys(k), top_positions(k);
  CHECK(cudaMemcpy(&sum, d_sum, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(running.data(), d_running, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&kept_count, d_kept_count, sizeof(size_t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(kept.data(), d_kept, kept_count * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sorted_keys.data(), d_sorted_keys, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sorted_values.data(), d_sorted_values, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&unique_count, d_unique_count, sizeof(size_t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(unique_keys.data(), d_unique_keys, unique_count * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(totals.data(), d_totals, unique_count * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(top_keys.data(), d_top_keys, k * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(top_positions.data(), d_top_positions, k * sizeof(int), cudaMemcpyDeviceToHost));

  std::printf("sum: %d\nexclusive sum:", sum);
  for (int r : running) std::printf(" %d", r);
  std::printf("\npositive, in input order:");
  for (size_t i = 0; i < kept_count; ++i) std::printf(" %d", kept[i]);
  std::printf("\nsorted, largest first (stable: the two -3 keep their order):");
  for (size_t i = 0; i < n; ++i) std::printf(" %d:%.1f", sorted_keys[i], sorted_values[i]);
  std::printf("\ntotals by key:");
  for (size_t i = 0; i < unique_count; ++i) std::printf(" %d:%.1f", unique_keys[i], totals[i]);
  std::printf("\nthe 3 largest, at positions:");
  for (size_t i = 0; i < k; ++i) std::printf(" %d@%d", top_keys[i], top_positions[i]);
  std::printf("\n");

  CHECK(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(d_keys), static_cast<void*>(d_sum), static_cast<void*>(d_running),
                  static_cast<void*>(d_kept), static_cast<void*>(d_kept_count),
                  static_cast<void*>(d_sorted_keys), static_cast<void*>(d_values),
                  static_cast<void*>(d_sorted_values), static_cast<void*>(d_unique_keys),
                  static_cast<void*>(d_totals), static_cast<void*>(d_unique_count), static_cast<void*>(d_positions),
                  static_cast<void*>(d_top_keys), static_cast<void*>(d_top_positions), temp}) {
    CHECK(cudaFree(p));
  }
  return 0;
}
