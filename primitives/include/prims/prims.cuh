#pragma once
// prims: GPU primitives built in layers on reduction. This header brings in every public layer, and the owning
// host handles (DeviceBuffer, Stream, Event, PinnedBuffer) that the examples use.

#include "prims/util/cuda_handles.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/warp/match.cuh"
#include "prims/warp/reduce.cuh"
#include "prims/warp/scan.cuh"
#include "prims/block/reduce.cuh"
#include "prims/block/scan.cuh"
#include "prims/block/radix_rank.cuh"
#include "prims/device/reduce.cuh"
#include "prims/device/scan.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/device/radix_partition.cuh"
#include "prims/device/segmented_radix_sort.cuh"
#include "prims/device/by_key.cuh"
#include "prims/device/histogram.cuh"
#include "prims/device/run_length.cuh"
#include "prims/device/select.cuh"
