#pragma once
// PRIMS_HOST_DEVICE marks functions that run on both sides. Under nvcc it is __host__ __device__; a plain C++
// compiler (the host-only code of the apps and tests) sees nothing, so headers such as util/radix_key.cuh compile
// there too.

#if defined(__CUDACC__)
#define PRIMS_HOST_DEVICE __host__ __device__
#else
#define PRIMS_HOST_DEVICE
#endif
