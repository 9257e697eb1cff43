#pragma once
// The GPU backend: the one translation unit that uses CUDA and the library's device sort.

#include "backend.hpp"

namespace radix_sort {

/// Finds a CUDA device and creates its context; returns false where there is none. Run it on a thread of its own at
/// start-up so that the driver's and the context's set-up overlap reading the input. Throws prims::CudaError.
bool gpu_initialize();

/// Sorts on the GPU: streams the input up through pinned staging buffers (reading the next chunk while the last one
/// copies), sorts with prims::device::radix_sort_keys/pairs, and streams the output back the same way. Throws
/// AppError when the data do not fit in free GPU memory, prims::CudaError for any other CUDA failure.
void gpu_sort(const SortRequest& request, const SortIo& io, SortStats& stats);

}  // namespace radix_sort
