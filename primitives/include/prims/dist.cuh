#pragma once
// prims::dist: the multi-GPU algorithms over NCCL (link prims::dist). Separate from prims/prims.cuh, which needs no
// NCCL.
// Example:
//   #include <prims/dist.cuh>
//   prims::dist::radix_sort_keys(comm, temp, bytes, d_keys, d_sorted, n_local);

#include "prims/dist/each_gpu.cuh"
#include "prims/dist/radix_sort.cuh"
