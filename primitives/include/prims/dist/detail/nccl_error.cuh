#pragma once
// Error handling of prims::dist: every call returns an ncclResult_t. NCCL's own errors pass through, CUDA failures
// become ncclUnhandledCudaError, and nothing throws.

#include <cuda_runtime.h>
#include <nccl.h>

/// Evaluates an ncclResult_t expression and returns it from the enclosing function if it failed.
/// Example: `PRIMS_NCCL_TRY(ncclCommCount(comm, &ranks));`
#define PRIMS_NCCL_TRY(expr)                           \
  do {                                                 \
    const ncclResult_t prims_nccl_result_ = (expr);    \
    if (prims_nccl_result_ != ncclSuccess) {           \
      return prims_nccl_result_;                       \
    }                                                  \
  } while (0)

/// Evaluates a cudaError_t expression and returns ncclUnhandledCudaError from the enclosing function if it failed.
/// Example: `PRIMS_NCCL_TRY_CUDA(cudaStreamSynchronize(stream));`
#define PRIMS_NCCL_TRY_CUDA(expr)                      \
  do {                                                 \
    if ((expr) != cudaSuccess) {                       \
      return ncclUnhandledCudaError;                   \
    }                                                  \
  } while (0)

namespace prims::dist::detail {

/// Runs `calls` (NCCL calls returning ncclResult_t) between ncclGroupStart and ncclGroupEnd; the group is closed
/// even when a call fails, and the first error is returned.
/// Example: `PRIMS_NCCL_TRY(grouped([&] { return ncclSend(buffer, bytes, ncclUint8, peer, comm, stream); }));`
template <class Calls>
ncclResult_t grouped(Calls calls) {
  PRIMS_NCCL_TRY(ncclGroupStart());
  const ncclResult_t result = calls();
  const ncclResult_t end = ncclGroupEnd();
  return result != ncclSuccess ? result : end;
}

}  // namespace prims::dist::detail
