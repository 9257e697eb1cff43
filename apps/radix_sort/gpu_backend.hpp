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

/// The GPU backend on `gpu`: sorts with prims::device::radix_sort_keys/pairs, streaming data through pinned staging
/// buffers, and partitions chunks with prims::device::radix_partition_keys/pairs. Throws AppError when memory runs
/// out, prims::CudaError for any other CUDA failure.
std::unique_ptr<SortBackend> make_gpu_backend(std::shared_ptr<GpuResources> gpu);

}  // namespace radix_sort
