#pragma once
// What a sorting backend (CPU or GPU) is asked to do, and how data reach it: the backend pulls the input through
// readers and pushes the sorted output through writers, chunk by chunk, so it can overlap copies with file I/O.

#include <array>
#include <cstddef>
#include <functional>
#include <string>

#include "key_type.hpp"

namespace radix_sort {

/// One sort: keys alone, keys with values, or the permutation (argsort).
struct SortRequest {
  KeyType key_type = KeyType::I32;
  size_t count = 0;
  bool descending = false;
  size_t value_bytes = 0;  // bytes per value, 0 without values
  bool argsort = false;    // write the u64 permutation instead of the keys
};

/// Fills `destination` with elements [first, first + count) of an input.
using ChunkReader = std::function<void(size_t first, size_t count, void* destination)>;
/// Takes elements [first, first + count) of an output; called in order of `first`.
using ChunkWriter = std::function<void(size_t first, size_t count, const void* source)>;

/// Where a backend reads and writes. `write_keys` takes the keys, or the permutation for argsort.
struct SortIo {
  ChunkReader read_keys;
  ChunkReader read_values;
  ChunkWriter write_keys;
  ChunkWriter write_values;
  /// Called, where set, once every input element has been read: the inputs may be released from then on.
  std::function<void()> inputs_read;
};

/// What a backend measured, as wall time on the calling thread: reader and writer time count as read and write, and
/// copies count only where the caller waits for them (the rest overlaps reading and writing). The copies' own
/// duration, timed on the GPU, is kept apart for their rates.
struct SortStats {
  std::string device;
  double read_seconds = 0;
  double to_device_seconds = 0;
  double sort_seconds = 0;
  double to_host_seconds = 0;
  double write_seconds = 0;
  double setup_seconds = 0;  // allocating and freeing memory
  double to_device_copy_seconds = 0;
  double to_host_copy_seconds = 0;
  double gpu_context_seconds = 0;  // creating the CUDA context, and the pinned staging buffers, at start-up
  double gpu_staging_seconds = 0;
  size_t bytes_to_device = 0;
  size_t bytes_to_host = 0;
  std::array<unsigned char, 8> smallest_key{};  // the first and last keys of the ascending order, as raw bytes
  std::array<unsigned char, 8> largest_key{};
};

/// Sorts on the CPU with a stable radix sort (cpu_sort.hpp): the same order as the GPU.
void cpu_sort(const SortRequest& request, const SortIo& io, SortStats& stats);

}  // namespace radix_sort
