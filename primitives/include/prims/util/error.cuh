#pragma once
// Error handling. Device algorithms return the first cudaError_t they meet and never throw;
// host programs (apps, benches, tests) turn errors into exceptions with check().

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

/// Evaluates a cudaError_t expression and returns it from the enclosing function if it failed.
/// Example: `PRIMS_TRY(cudaMemsetAsync(p, 0, bytes, stream));`
#define PRIMS_TRY(expr)                              \
  do {                                               \
    const cudaError_t prims_try_error_ = (expr);     \
    if (prims_try_error_ != cudaSuccess) {           \
      return prims_try_error_;                       \
    }                                                \
  } while (0)

namespace prims {

/// Thrown by check() in host programs.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what)
      : std::runtime_error(what + ": " + cudaGetErrorString(code)), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// Throws CudaError when `code` is not cudaSuccess. For host programs, not for the library's own paths.
/// Example: `prims::check(cudaMalloc(&p, bytes), "allocating the input");`
inline void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw CudaError(code, what);
  }
}

}  // namespace prims
