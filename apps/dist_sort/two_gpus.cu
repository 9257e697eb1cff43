// two_gpus: the multi-GPU example of docs/multi-gpu.md. Nine keys spread unevenly over two GPUs are sorted across
// both with prims::dist::radix_sort_keys: one communicator per GPU from ncclCommInitAll, one host thread per GPU (the
// call synchronizes its stream, so each rank needs its own thread). Each GPU keeps as many keys as it gave.
#include <nccl.h>
#include <prims/dist.cuh>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

// Checks a cudaError_t or ncclResult_t and leaves with a message naming the call.
#define CHECK(call)                                                         \
  do {                                                                      \
    if (const auto result_ = (call); result_ != decltype(result_){}) {      \
      std::fprintf(stderr, "two_gpus: %s failed (%d)\n", #call, result_);   \
      return false;                                                         \
    }                                                                       \
  } while (0)

// One rank: its keys to its GPU, the distributed sort, its part of the result back.
bool sort_on_gpu(ncclComm_t comm, int gpu, const std::vector<int>& keys, std::vector<int>& sorted) {
  CHECK(cudaSetDevice(gpu));
  const size_t n = keys.size();
  int *d_keys, *d_sorted;
  void* d_temp;
  size_t temp_bytes = 0;
  CHECK(cudaMalloc(&d_keys, n * sizeof(int)));
  CHECK(cudaMalloc(&d_sorted, n * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(prims::dist::radix_sort_keys(comm, nullptr, temp_bytes, d_keys, d_sorted, n));  // size query: no traffic
  CHECK(cudaMalloc(&d_temp, temp_bytes));
  CHECK(prims::dist::radix_sort_keys(comm, d_temp, temp_bytes, d_keys, d_sorted, n));
  sorted.resize(n);
  CHECK(cudaMemcpy(sorted.data(), d_sorted, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d_temp));
  CHECK(cudaFree(d_sorted));
  CHECK(cudaFree(d_keys));
  return true;
}

int main() {
  // NCCL_NVLS_ENABLE=0 turns off NVLink SHARP (NVLS, NVLink multicast), which some systems cannot set up (no
  // fabric manager or multicast support, or a container without access to it). A value already set wins.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2) {
    std::fprintf(stderr, "two_gpus: needs two GPUs\n");
    return 77;  // "skipped" to ctest
  }
  ncclComm_t comms[2];
  const int devices[2] = {0, 1};
  if (ncclCommInitAll(comms, 2, devices) != ncclSuccess) return 1;

  const std::vector<int> keys[2] = {{5, -3, 12, 0}, {7, 1, -3, 8, 2}};
  std::vector<int> sorted[2];
  bool ok[2] = {false, false};
  std::thread rank0([&] { ok[0] = sort_on_gpu(comms[0], 0, keys[0], sorted[0]); });
  std::thread rank1([&] { ok[1] = sort_on_gpu(comms[1], 1, keys[1], sorted[1]); });
  rank0.join();
  rank1.join();
  for (int gpu = 0; gpu < 2; ++gpu) {
    std::printf("GPU %d:", gpu);
    for (int key : sorted[gpu]) std::printf(" %d", key);
    std::printf("\n");
    ncclCommDestroy(comms[gpu]);
  }
  return ok[0] && ok[1] ? 0 : 1;
}
