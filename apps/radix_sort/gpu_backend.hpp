#pragma once
// The GPU backend: CUDA set-up, staging and memory here; its calls into the library's device algorithms are in
// gpu_calls.hpp, a translation unit a key type.

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
