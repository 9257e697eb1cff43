#pragma once
// Error handling. Device algorithms return the first cudaError_t they meet and never throw;
// host programs (apps, benches, tests) turn errors into exceptions with check().

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
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

namespace detail {

/// Every misuse a device algorithm rejects goes through here: it returns cudaErrorInvalidValue and, where the
/// program is compiled with PRIMS_DEBUG_LOG defined, first prints "prims: " and the printf-style reason (bit range,
/// temporary storage too small, n over an algorithm's limit) as one line on stderr.
/// Example: `return invalid_value("radix_sort: bit range [%d, %d) outside a %d-bit key", begin, end, bits);`
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
inline cudaError_t invalid_value(const char* format, ...) {
#ifdef PRIMS_DEBUG_LOG
  std::va_list arguments;
  va_start(arguments, format);
  std::fputs("prims: ", stderr);
  std::vfprintf(stderr, format, arguments);
  std::fputc('\n', stderr);
  va_end(arguments);
#else
  (void)format;
#endif
  return cudaErrorInvalidValue;
}

}  // namespace detail

}  // namespace prims
