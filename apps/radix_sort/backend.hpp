#pragma once
// What a sorting backend (CPU or GPU) is asked to do, and how data reach it: the backend pulls the input through
// readers and pushes the sorted output through writers, chunk by chunk, so it can overlap copies with file I/O.

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
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
  /// Sort by the ordered key bits below this one: the bits above are the same in every key (a bucket of the
  /// out-of-core sort), so a backend may skip them. At or past the key's width: all bits.
  int end_bit = all_key_bits;
  static constexpr int all_key_bits = 64;
};

/// Fills `destination` with elements [first, first + count) of an input.
using ChunkReader = std::function<void(size_t first, size_t count, void* destination)>;
/// Takes elements [first, first + count) of an output; called in order of `first`.
using ChunkWriter = std::function<void(size_t first, size_t count, const void* source)>;

/// Where a backend reads and writes. `write_keys` takes the keys, or the permutation for argsort; left empty (keys
/// with values only) the sorted keys are not wanted and not copied back.
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
  double setup_seconds = 0;  // allocating and freeing the backend's memory
  double staging_alloc_seconds = 0;   // allocating the out-of-core staging buffers (pinned for the GPU)
  double bucket_release_seconds = 0;  // freeing the buckets' host memory once sorted
  double to_device_copy_seconds = 0;
  double to_host_copy_seconds = 0;
  double gpu_context_seconds = 0;  // creating the CUDA context, and the pinned staging buffers, at start-up
  double gpu_staging_seconds = 0;
  size_t bytes_to_device = 0;
  size_t bytes_to_host = 0;
  std::array<unsigned char, 8> smallest_key{};  // the first and last keys of the ascending order, as raw bytes
  std::array<unsigned char, 8> largest_key{};
  double partition_seconds = 0;  // the out-of-core plan's partitioning: starting it, and waiting for it
  // The partitioning pipeline's other two stages, busy time on their own threads (they overlap the partitioning):
  // reading chunks into staging, and storing partitioned chunks as buckets.
  double partition_read_seconds = 0;
  double bucket_store_seconds = 0;
  /// The plan, for --stats: how the data were sorted.
  std::string plan = "in core";
  size_t buckets = 0;          // buckets sorted (or written as they were)
  size_t sorts = 0;            // sorts on the backend: consecutive buckets that fit together are sorted as one
  size_t repartitioned = 0;    // buckets too large for one sort, partitioned again on the next digit
  size_t constant_buckets = 0; // buckets whose keys are all equal in the sort bits, written as they were
  size_t spilled_bytes = 0;    // bytes written to spill files
};

/// One chunk to partition: `count` keys (and values of `value_bytes` each, 0 without) by the digit
/// [begin_bit, end_bit) of the ordered key bits, at most 8 bits; descending reverses the buckets.
struct PartitionRequest {
  KeyType key_type = KeyType::I32;
  size_t count = 0;
  bool descending = false;
  size_t value_bytes = 0;
  int begin_bit = 0;
  int end_bit = 0;
  size_t buckets() const { return size_t(1) << (end_bit - begin_bit); }
};

/// One chunk being partitioned, from SortBackend::partition_start to partition_finish: what the backend keeps of it
/// (the GPU: the chunk's completion event and its bucket offsets in pinned memory).
struct PartitionTicket {
  std::shared_ptr<void> state;
};

/// One top selection (--top): the first min(k, count) keys of `count` keys in the sort's order (descending: the
/// largest first), equal keys in input order.
struct TopRequest {
  KeyType key_type = KeyType::I32;
  size_t count = 0;
  size_t k = 0;
  bool descending = false;
  unsigned threads = 1;  // for host copies of the keys (into the GPU's pinned staging buffers)
};

/// Host memory for staging chunks, allocated once: page-locked for the GPU so copies from and to it run
/// asynchronously at full speed.
struct HostBuffer {
  std::shared_ptr<void> owner;
  char* data = nullptr;
  size_t bytes = 0;
};

/// What the out-of-core pipeline asks of a backend (the CPU and the GPU are two implementations): sort a whole
/// request through readers and writers, or partition one chunk that is in host memory.
class SortBackend {
 public:
  virtual ~SortBackend() = default;
  /// The device's name for --stats.
  virtual std::string device() const = 0;
  /// Memory of the backend that sorting `request` takes (keys, values and scratch).
  virtual size_t sort_bytes(const SortRequest& request) = 0;
  /// Memory of the backend that partitioning a chunk of `request.count` elements takes.
  virtual size_t partition_bytes(const PartitionRequest& request) = 0;
  /// Memory of the backend free now.
  virtual size_t free_bytes() = 0;
  /// True where the backend's memory is host memory (the CPU backend), so its sorts count against the host budget.
  virtual bool sorts_in_host_memory() const = 0;
  /// Sorts as SortRequest and SortIo say.
  virtual void sort(const SortRequest& request, const SortIo& io, SortStats& stats) = 0;
  /// Partitions of chunks that may be in flight at once: how many chunks the caller should have started and not yet
  /// finished to keep the backend busy. 1 where partitioning runs on the calling thread (the CPU).
  virtual size_t partition_lanes() const = 0;
  /// Starts partitioning a chunk stably: keys_out (values_out) hold bucket 0's elements, then bucket 1's, ..., each
  /// in input order; bucket_offsets (request.buckets() + 1 entries) receives each bucket's first index and, last,
  /// the count. All pointers are host memory; values are null without values. keys_out may be keys_in (and
  /// values_out values_in) where partitions_in_place() says so. The output is there once partition_finish(ticket)
  /// returns; the ticket, the caller's for this chunk, keeps what the backend needs until then.
  virtual void partition_start(PartitionTicket& ticket, const PartitionRequest& request, const void* keys_in,
                               const void* values_in, void* keys_out, void* values_out, size_t* bucket_offsets,
                               SortStats& stats) = 0;
  /// Waits for the chunk partition_start began with `ticket`; may be called on another thread than the start.
  virtual void partition_finish(PartitionTicket& ticket, SortStats& stats) = 0;
  /// True where a partition may write the partitioned chunk over its input: the backend partitions a copy of it in
  /// memory of its own (the GPU's), so one staging buffer a chunk is enough.
  virtual bool partitions_in_place() const = 0;
  /// A staging buffer of `bytes` bytes.
  virtual HostBuffer allocate_staging(size_t bytes) = 0;
  /// Memory of the backend that a top selection of `request` takes (its keys, the winners and scratch).
  virtual size_t top_bytes(const TopRequest& request) = 0;
  /// Writes the first min(request.k, request.count) keys of keys[0, count) in the sort's order, sorted, to keys_out.
  /// Both are host memory.
  virtual void top(const TopRequest& request, const void* keys, void* keys_out, SortStats& stats) = 0;
};

/// The CPU backend (cpu_sort.hpp's radix sort and a counting partition on the same ordered bits).
std::unique_ptr<SortBackend> make_cpu_backend();

/// The memory the system could give this process now (MemAvailable), or 0 where unknown.
size_t available_host_memory();

}  // namespace radix_sort
