// A program outside the project that uses the installed prims package.
#include <prims/prims.cuh>

#include <cstdio>

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: built against prims, nothing to run\n");
    return 0;
  }
  const int host[5] = {1, 2, 3, 4, 5};
  int *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, sizeof(host)) != cudaSuccess || cudaMalloc(&out, sizeof(int)) != cudaSuccess) return 1;
  if (cudaMemcpy(in, host, sizeof(host), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
  size_t temp_bytes = 0;
  if (prims::device::sum(nullptr, temp_bytes, in, out, 5) != cudaSuccess) return 1;
  void* temp = nullptr;
  if (cudaMalloc(&temp, temp_bytes) != cudaSuccess) return 1;
  if (prims::device::sum(temp, temp_bytes, in, out, 5) != cudaSuccess) return 1;
  int result = 0;
  if (cudaMemcpy(&result, out, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
  std::printf("sum = %d\n", result);
  return result == 15 ? 0 : 1;
}
