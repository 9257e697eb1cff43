#pragma once
// The out-of-core sort: for inputs larger than the backend's memory. The input is partitioned, chunk by chunk and in
// input order, by the top digit of the ordered key bits into buckets kept in host memory or in a spill file; then
// each bucket is sorted on the backend and written, in bucket order: the buckets written in order are the sorted
// file, with no merge. A bucket too large for one sort is partitioned again on the next digit; one whose keys agree
// in every sort bit is written as it is. Plain host code: the backend does the partitioning and sorting.

#include <cstddef>
#include <functional>
#include <string>

#include "backend.hpp"
#include "input_stream.hpp"
#include "progress.hpp"

namespace radix_sort {

/// The memory the sort may use.
struct MemoryBudget {
  size_t device_bytes = 0;  // the backend's sorting memory (GPU memory, or host memory for the CPU backend)
  size_t host_bytes = 0;    // host memory for staging and buckets
};

/// How an input will be sorted.
struct SortPlan {
  bool in_core = true;
  bool spill = false;         // buckets in a spill file rather than host memory
  size_t chunk_elements = 0;  // elements partitioned at a time
  size_t staging_bytes = 0;   // host memory of the staging ring
  size_t piece_elements = 0;  // elements a bucket gathers before it stores them as one piece
  /// Host memory that buckets kept in host memory may take, all levels together: a bucket partitioned again goes to
  /// a spill file where its parent's memory and its own would not fit.
  size_t host_bucket_bytes = 0;
};

/// Decides the plan for sorting up to `request.count` elements (an upper bound where the count is not known) of
/// `element_bytes` each (key and value) whose input takes `in_core_host_bytes` of host memory when loaded whole.
/// Throws AppError where the budget cannot hold even a small chunk.
SortPlan plan_sort(SortBackend& backend, const SortRequest& request, size_t in_core_host_bytes,
                   const MemoryBudget& budget);

/// Where the out-of-core sort's inputs come from and its outputs go.
struct OutOfCoreIo {
  ElementStream* keys = nullptr;
  ElementStream* values = nullptr;  // null without values
  ChunkWriter write_keys;           // the keys, or the permutation for argsort
  ChunkWriter write_values;
  std::string spill_directory;
  /// Called, where set, once the sort has allocated its pinned staging memory and before it writes: the place to
  /// start mapping and faulting in a large output, which would hold up pinning memory while it runs.
  std::function<void()> staging_allocated;
  /// True where the writers only copy into memory (a mapped output): they are then called on the sorting thread.
  bool writes_to_memory = false;
  unsigned threads = 1;  // for large copies in and out of the buckets
};

/// Sorts by `plan` (not in core); returns the number of elements sorted (`request.count` is ignored: the streams say
/// where they end). Throws AppError.
size_t sort_out_of_core(SortBackend& backend, const SortRequest& request, const SortPlan& plan,
                      const MemoryBudget& budget, const OutOfCoreIo& io, Progress& progress, SortStats& stats);

}  // namespace radix_sort
