#pragma once
// The GPU backend: the one translation unit that uses CUDA and the library's device sort.

#include <memory>

#include "backend.hpp"

namespace radix_sort {

/// What the GPU backend sets up before it knows the input: the device's context, a stream and pinned staging buffers.
struct GpuResources;

/// Finds a CUDA device, creates its context and allocates the staging buffers; returns null where there is no device.
/// Run it on a thread of its own at start-up so that this set-up overlaps reading the input. Throws prims::CudaError.
std::shared_ptr<GpuResources> gpu_initialize();

/// Sorts on the GPU: streams the input up through pinned staging buffers (reading the next chunk while the last one
/// copies), sorts with prims::device::radix_sort_keys/pairs, and streams the output back the same way. Throws
/// AppError when the data do not fit in free GPU memory, prims::CudaError for any other CUDA failure.
void gpu_sort(GpuResources& gpu, const SortRequest& request, const SortIo& io, SortStats& stats);

}  // namespace radix_sort
