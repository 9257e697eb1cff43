#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "gpu_backend.hpp"
#include "gpu_calls.hpp"
#include "host_memory.hpp"
#include "parallel.hpp"
#include "prims/util/cuda_handles.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"
#include "progress.hpp"
#include "slot_pipeline.hpp"
#include "timing.hpp"

namespace radix_sort {

namespace {

/// Large enough to run copies near full PCIe speed, small enough that two stay cheap to pin.
constexpr size_t staging_bytes = size_t(32) << 20;

/// One timed copy of a chunk between a staging buffer and the GPU.
struct ChunkCopy {
  prims::Event start;
  prims::Event stop;
};

}  // namespace

struct GpuResources {
  std::string device;
  prims::Stream stream;
  prims::PinnedBuffer staging[2] = {prims::PinnedBuffer(staging_bytes), prims::PinnedBuffer(staging_bytes)};
  double context_seconds = 0;
  double staging_seconds = 0;
};

namespace {

/// Moves arrays between host readers/writers and the GPU through the two pinned staging buffers, on a SlotPipeline
/// (the one staging model of radix_sort): the host side of one chunk (reading, parsing, writing) overlaps the copy
/// of the next.
class StagedTransfer {
 public:
  StagedTransfer(cudaStream_t stream, prims::PinnedBuffer (&buffers)[2]) : stream_(stream) {
    for (size_t i = 0; i < 2; ++i) slots_[i].buffer = buffers[i].data();
  }

  /// Copies `count` elements of `element_bytes` from `read` to `device`; returns the copy time (GPU-timed). The
  /// caller reads into a free buffer; a stage copies it up and frees it once the copy is done.
  double upload(const ChunkReader& read, void* device, size_t count, size_t element_bytes, double& read_seconds) {
    double copy_seconds = 0;
    SlotPipeline<Slot> pipeline(slot_pointers(), {[&](Slot& slot) {
                                  on_this_thread();
                                  slot.copy.start.record(stream_);
                                  prims::check(cudaMemcpyAsync(static_cast<char*>(device) + slot.first * element_bytes,
                                                               slot.buffer, slot.items * element_bytes,
                                                               cudaMemcpyHostToDevice, stream_),
                                               "copying to the GPU");
                                  slot.copy.stop.record(stream_);
                                  copy_seconds += prims::Event::seconds_between(slot.copy.start, slot.copy.stop);
                                }});
    const size_t chunk_items = staging_bytes / element_bytes;
    for (size_t first = 0; first < count; first += chunk_items) {
      Slot& slot = pipeline.acquire();
      slot.first = first;
      slot.items = std::min(chunk_items, count - first);
      const auto read_start = Clock::now();
      read(first, slot.items, slot.buffer);
      read_seconds += seconds_since(read_start);
      pipeline.submit(slot);
    }
    pipeline.finish();
    return copy_seconds;
  }

  /// Copies `count` elements from `device` to `write`, chunk by chunk; returns the copy time (GPU-timed). The
  /// caller copies down into a free buffer; a stage waits for the copy, writes the chunk out and frees the buffer.
  double download(const void* device, size_t count, size_t element_bytes, const ChunkWriter& write,
                  double& write_seconds) {
    double copy_seconds = 0;
    SlotPipeline<Slot> pipeline(slot_pointers(), {[&](Slot& slot) {
                                  on_this_thread();
                                  copy_seconds += prims::Event::seconds_between(slot.copy.start, slot.copy.stop);
                                  const auto write_start = Clock::now();
                                  write(slot.first, slot.items, slot.buffer);
                                  write_seconds += seconds_since(write_start);
                                }});
    const size_t chunk_items = staging_bytes / element_bytes;
    for (size_t first = 0; first < count; first += chunk_items) {
      Slot& slot = pipeline.acquire();
      slot.first = first;
      slot.items = std::min(chunk_items, count - first);
      slot.copy.start.record(stream_);
      prims::check(cudaMemcpyAsync(slot.buffer, static_cast<const char*>(device) + first * element_bytes,
                                   slot.items * element_bytes, cudaMemcpyDeviceToHost, stream_),
                   "copying from the GPU");
      slot.copy.stop.record(stream_);
      pipeline.submit(slot);
    }
    pipeline.finish();
    return copy_seconds;
  }

 private:
  struct Slot {
    void* buffer = nullptr;
    size_t first = 0;
    size_t items = 0;
    ChunkCopy copy;
  };

  std::vector<Slot*> slot_pointers() { return {&slots_[0], &slots_[1]}; }

  /// The CUDA runtime uses the device of the calling thread, and a stage runs on a thread of its own.
  static void on_this_thread() { prims::check(cudaSetDevice(0), "cudaSetDevice"); }

  cudaStream_t stream_;
  Slot slots_[2];
};

__global__ void fill_indices(uint64_t* indices, size_t count) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) indices[i] = i;
}

/// A device allocation that turns "out of memory" into a one-line message naming the size.
prims::DeviceBuffer<std::byte> allocate(size_t bytes, const char* what) {
  try {
    return prims::DeviceBuffer<std::byte>(bytes);
  } catch (const prims::CudaError& error) {
    if (error.code() != cudaErrorMemoryAllocation) throw;
    // The failed cudaMalloc also left its error in the last-error slot; clear it so later checks see their own.
    cudaGetLastError();
    throw AppError(fmt::format("out of GPU memory allocating {} for the {}", human_bytes(bytes), what));
  }
}

/// The library's sort for the request's key and value types: `temp == nullptr` asks for the scratch size.
cudaError_t device_sort(const SortRequest& request, void* temp, size_t& temp_bytes, void* keys, void* values,
                        cudaStream_t stream) {
  return visit_key_type(request.key_type, [&](auto key_tag) {
    return GpuCalls<typename decltype(key_tag)::type>::sort(request, temp, temp_bytes, keys, values, stream);
  });
}

/// The library's top-k for the request's key type: `temp == nullptr` asks for the scratch size.
cudaError_t device_top(const TopRequest& request, void* temp, size_t& temp_bytes, const void* keys, void* keys_out,
                       cudaStream_t stream) {
  return visit_key_type(request.key_type, [&](auto key_tag) {
    return GpuCalls<typename decltype(key_tag)::type>::top(request, temp, temp_bytes, keys, keys_out, stream);
  });
}

}  // namespace

std::shared_ptr<GpuResources> gpu_initialize() {
  int devices = 0;
  // No driver or no device both mean "no GPU here": the caller falls back to the CPU.
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return nullptr;
  // The device's name (for messages) is looked up beside the context's creation: both take a while.
  auto name = std::async(std::launch::async, [] {
    cudaDeviceProp properties{};
    prims::check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
    return std::string(properties.name);
  });
  const auto start = Clock::now();
  prims::check(cudaSetDevice(0), "cudaSetDevice");
  prims::check(cudaFree(nullptr), "creating the CUDA context");
  const double context_seconds = seconds_since(start);
  const auto staging_start = Clock::now();
  auto gpu = std::make_shared<GpuResources>();
  gpu->staging_seconds = seconds_since(staging_start);
  gpu->context_seconds = context_seconds;
  gpu->device = name.get();
  return gpu;
}

namespace {

/// Device memory that grows to the largest size asked for and is then reused (chunks are all about one size).
class GrowingDeviceBuffer {
 public:
  std::byte* get(size_t bytes, const char* what) {
    if (bytes == 0) return nullptr;
    if (!buffer_ || capacity_ < bytes) {
      buffer_.reset();
      buffer_.emplace(allocate(bytes, what));
      capacity_ = bytes;
    }
    return buffer_->data();
  }
  /// Device memory that get(bytes) would allocate beyond what the buffer holds now.
  size_t growth(size_t bytes) const { return bytes > capacity_ ? bytes - capacity_ : 0; }
  void release() {
    buffer_.reset();
    capacity_ = 0;
  }

 private:
  std::optional<prims::DeviceBuffer<std::byte>> buffer_;
  size_t capacity_ = 0;
};

/// The sort's device memory, kept from one sort to the next (the out-of-core plan sorts many groups of buckets of
/// about one size).
struct SortMemory {
  GrowingDeviceBuffer keys;
  GrowingDeviceBuffer values;
  GrowingDeviceBuffer temp;
  void release() {
    temp.release();
    values.release();
    keys.release();
  }
};

/// A lane of the partitions: a stream and its device memory. Chunks on different lanes overlap (one's download with
/// the next one's upload); a lane's chunks run in turn, in its stream's order.
struct PartitionLane {
  std::optional<prims::Stream> stream;
  GrowingDeviceBuffer keys_in;
  GrowingDeviceBuffer keys_out;
  GrowingDeviceBuffer values_in;
  GrowingDeviceBuffer values_out;
  GrowingDeviceBuffer offsets;
  GrowingDeviceBuffer temp;
  void release() {
    keys_in.release();
    keys_out.release();
    values_in.release();
    values_out.release();
    offsets.release();
    temp.release();
  }
};

/// What a chunk's PartitionTicket holds on the GPU: an event after its last copy, and its bucket offsets in pinned
/// memory (a copy into pageable memory would wait for the stream) until they are handed on.
struct PartitionInFlight {
  prims::Event done;
  prims::PinnedBuffer offsets;
  size_t* bucket_offsets = nullptr;
  size_t offsets_bytes = 0;
  PartitionInFlight() = default;
  PartitionInFlight(const PartitionInFlight&) = delete;
  PartitionInFlight& operator=(const PartitionInFlight&) = delete;
  /// A chunk left unfinished by an error elsewhere still lands in its buffers: its ticket goes first (the caller's
  /// slot declares it after them) and waits for it, so they are not freed under the copy.
  ~PartitionInFlight() { cudaEventSynchronize(done.get()); }
};

/// Sorts on the GPU: streams the input up through the pinned staging buffers (reading the next chunk while the last
/// one copies), sorts with prims::device::radix_sort_keys/pairs, and streams the output back the same way.
void gpu_sort(GpuResources& gpu, SortMemory& memory, const SortRequest& request, const SortIo& io,
              SortStats& stats) {
  stats.device = gpu.device;
  stats.gpu_context_seconds = gpu.context_seconds;
  stats.gpu_staging_seconds = gpu.staging_seconds;
  if (request.count == 0) return;
  // The CUDA runtime uses the device of the calling thread, and gpu_initialize ran on another one.
  prims::check(cudaSetDevice(0), "cudaSetDevice");
  const auto setup_start = Clock::now();

  const bool has_values = request.value_bytes > 0 || request.argsort;
  const size_t key_bytes = request.count * key_type_size(request.key_type);
  const size_t value_bytes =
      has_values ? request.count * (request.argsort ? sizeof(uint64_t) : request.value_bytes) : 0;
  const cudaStream_t stream = gpu.stream.get();
  size_t temp_bytes = 0;
  prims::check(device_sort(request, nullptr, temp_bytes, nullptr, nullptr, stream), "sizing the sort's scratch");
  // At least one byte: a null scratch pointer would ask the sort for its size instead of running it.
  temp_bytes = std::max<size_t>(temp_bytes, 1);

  size_t free_bytes = 0;
  size_t total_bytes = 0;
  prims::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const size_t needed = key_bytes + value_bytes + temp_bytes;
  // The plan only sorts what fits; this guards against memory that another program took since.
  if (memory.keys.growth(key_bytes) + memory.values.growth(value_bytes) + memory.temp.growth(temp_bytes) >
      free_bytes) {
    throw AppError(fmt::format(
        "{} {} keys need {} of GPU memory (keys {}, values {}, sort scratch {}) but only {} of the {} {} is free; "
        "retry with a smaller --gpu-memory",
        request.count, key_type_name(request.key_type), human_bytes(needed), human_bytes(key_bytes),
        human_bytes(value_bytes), human_bytes(temp_bytes), human_bytes(free_bytes), human_bytes(total_bytes),
        gpu.device));
  }
  std::byte* const keys = memory.keys.get(key_bytes, "keys");
  std::byte* const values = memory.values.get(value_bytes, "values");
  std::byte* const temp = memory.temp.get(temp_bytes, "sort scratch");
  stats.setup_seconds += seconds_since(setup_start);

  StagedTransfer transfer(stream, gpu.staging);
  // Both directions: wall time the caller waits (less reading and writing), and the copies' own GPU time.
  const auto timed_upload = [&](const ChunkReader& read, void* device, size_t element_bytes) {
    const auto start = Clock::now();
    const double read_before = stats.read_seconds;
    stats.to_device_copy_seconds += transfer.upload(read, device, request.count, element_bytes, stats.read_seconds);
    stats.to_device_seconds += seconds_since(start) - (stats.read_seconds - read_before);
  };
  const auto timed_download = [&](const void* device, size_t element_bytes, const ChunkWriter& write) {
    const auto start = Clock::now();
    const double write_before = stats.write_seconds;
    stats.to_host_copy_seconds += transfer.download(device, request.count, element_bytes, write, stats.write_seconds);
    stats.to_host_seconds += seconds_since(start) - (stats.write_seconds - write_before);
  };
  timed_upload(io.read_keys, keys, key_type_size(request.key_type));
  stats.bytes_to_device += key_bytes;
  if (request.argsort) {
    constexpr int block_threads = 256;
    const int blocks = static_cast<int>(std::min<size_t>((request.count + block_threads - 1) / block_threads, 65536));
    fill_indices<<<blocks, block_threads, 0, stream>>>(reinterpret_cast<uint64_t*>(values), request.count);
    prims::check(cudaGetLastError(), "launching fill_indices");
  } else if (has_values) {
    timed_upload(io.read_values, values, request.value_bytes);
    stats.bytes_to_device += value_bytes;
  }
  if (io.inputs_read) io.inputs_read();

  prims::Event sort_start;
  prims::Event sort_stop;
  sort_start.record(stream);
  prims::check(device_sort(request, temp, temp_bytes, keys, values, stream), "sorting");
  sort_stop.record(stream);
  prims::check(cudaStreamSynchronize(stream), "sorting");
  stats.sort_seconds += prims::Event::seconds_between(sort_start, sort_stop);

  const size_t key_size = key_type_size(request.key_type);
  const std::byte* first_key = keys;
  const std::byte* last_key = keys + (request.count - 1) * key_size;
  if (request.descending) std::swap(first_key, last_key);
  prims::check(cudaMemcpy(stats.smallest_key.data(), first_key, key_size, cudaMemcpyDeviceToHost),
               "copying from the GPU");
  prims::check(cudaMemcpy(stats.largest_key.data(), last_key, key_size, cudaMemcpyDeviceToHost),
               "copying from the GPU");

  if (request.argsort) {
    timed_download(values, sizeof(uint64_t), io.write_keys);
    stats.bytes_to_host += value_bytes;
    return;
  }
  if (io.write_keys) {
    timed_download(keys, key_size, io.write_keys);
    stats.bytes_to_host += key_bytes;
  }
  if (has_values) {
    timed_download(values, request.value_bytes, io.write_values);
    stats.bytes_to_host += value_bytes;
  }
}

/// The library's partition for the request's key and value types: `temp == nullptr` asks for the scratch size.
cudaError_t device_partition(const PartitionRequest& request, void* temp, size_t& temp_bytes, const void* keys_in,
                             void* keys_out, const void* values_in, void* values_out, size_t* offsets,
                             cudaStream_t stream) {
  return visit_key_type(request.key_type, [&](auto key_tag) {
    return GpuCalls<typename decltype(key_tag)::type>::partition(request, temp, temp_bytes, keys_in, keys_out,
                                                                 values_in, values_out, offsets, stream);
  });
}

/// Pinned host memory made by faulting in ordinary memory (huge pages where the system gives them) on several
/// threads and registering it with CUDA: an H100 machine pinned 16-48 GB/s this way against 1.4-2.8 GB/s for
/// cudaHostAlloc (bench/results/2026-11-27-H100-pinning.txt). An empty buffer where the memory cannot be had or
/// registered: the caller then asks cudaHostAlloc.
HostBuffer allocate_registered(size_t bytes) {
  std::shared_ptr<HugePageMemory> memory;
  try {
    memory = std::make_shared<HugePageMemory>(bytes);
  } catch (const std::bad_alloc&) {
    return {};
  }
  fault_in(memory->data(), memory->bytes(), std::max(1u, std::thread::hardware_concurrency()));
  if (cudaHostRegister(memory->data(), memory->bytes(), cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError();  // the failure stays out of later checks
    return {};
  }
  // Unregistered before the memory goes (the deleter holds it).
  std::shared_ptr<void> owner(memory->data(), [memory](void* registered) { cudaHostUnregister(registered); });
  return {std::move(owner), memory->data(), bytes};
}

class GpuBackend final : public SortBackend {
 public:
  explicit GpuBackend(std::shared_ptr<GpuResources> gpu) : gpu_(std::move(gpu)) {}

  std::string device() const override { return gpu_->device; }

  size_t sort_bytes(const SortRequest& request) override {
    size_t temp_bytes = 0;
    prims::check(device_sort(request, nullptr, temp_bytes, nullptr, nullptr, gpu_->stream.get()),
                 "sizing the sort's scratch");
    const size_t value_bytes = request.argsort ? sizeof(uint64_t) : request.value_bytes;
    return request.count * (key_type_size(request.key_type) + value_bytes) + temp_bytes;
  }

  size_t partition_bytes(const PartitionRequest& request) override {
    return partition_lanes() * (2 * request.count * (key_type_size(request.key_type) + request.value_bytes) +
                                offsets_bytes(request) + partition_temp_bytes(request));
  }

  size_t free_bytes() override {
    prims::check(cudaSetDevice(0), "cudaSetDevice");
    size_t free = 0;
    size_t total = 0;
    prims::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }

  bool sorts_in_host_memory() const override { return false; }
  bool partitions_in_place() const override { return true; }

  void sort(const SortRequest& request, const SortIo& io, SortStats& stats) override {
    // Chunk buffers of the partitions give their memory to the sorts of the buckets.
    release_partition_buffers();
    gpu_sort(*gpu_, sort_memory_, request, io, stats);
  }

  /// Two: one chunk's download overlaps the next one's upload (the copy engines work both ways at once).
  size_t partition_lanes() const override { return partition_lane_count; }

  /// Queues the chunk's upload, partition and download on the next lane's stream.
  void partition_start(PartitionTicket& ticket, const PartitionRequest& request, const void* keys_in,
                       const void* values_in, void* keys_out, void* values_out, size_t* bucket_offsets,
                       SortStats& stats) override {
    const auto start = Clock::now();
    prims::check(cudaSetDevice(0), "cudaSetDevice");
    // A bucket partitioned again between sorts: the sorts' memory goes first, so the two never add up.
    sort_memory_.release();
    PartitionLane& lane = lanes_[next_lane_];
    next_lane_ = (next_lane_ + 1) % partition_lane_count;
    if (!lane.stream) lane.stream.emplace();
    if (!ticket.state) ticket.state = std::make_shared<PartitionInFlight>();
    auto& chunk = *static_cast<PartitionInFlight*>(ticket.state.get());
    const cudaStream_t stream = lane.stream->get();
    const size_t key_bytes = request.count * key_type_size(request.key_type);
    const size_t value_bytes = request.count * request.value_bytes;
    size_t temp_bytes = partition_temp_bytes(request);
    // Reallocating a lane's memory frees the old first, which waits for the device: no chunk still uses it.
    std::byte* device_keys_in = lane.keys_in.get(key_bytes, "chunk's keys");
    std::byte* device_keys_out = lane.keys_out.get(key_bytes, "chunk's keys");
    std::byte* device_values_in = value_bytes > 0 ? lane.values_in.get(value_bytes, "chunk's values") : nullptr;
    std::byte* device_values_out = value_bytes > 0 ? lane.values_out.get(value_bytes, "chunk's values") : nullptr;
    auto* device_offsets = reinterpret_cast<size_t*>(lane.offsets.get(offsets_bytes(request), "bucket offsets"));
    std::byte* temp = lane.temp.get(temp_bytes, "partition scratch");
    if (chunk.offsets.bytes() < offsets_bytes(request)) chunk.offsets = prims::PinnedBuffer(offsets_bytes(request));
    chunk.bucket_offsets = bucket_offsets;
    chunk.offsets_bytes = offsets_bytes(request);
    // The staging buffers are pinned, so these copies run at full speed; the stream orders them with the partition.
    prims::check(cudaMemcpyAsync(device_keys_in, keys_in, key_bytes, cudaMemcpyHostToDevice, stream),
                 "copying to the GPU");
    if (value_bytes > 0) {
      prims::check(cudaMemcpyAsync(device_values_in, values_in, value_bytes, cudaMemcpyHostToDevice, stream),
                   "copying to the GPU");
    }
    prims::check(device_partition(request, temp, temp_bytes, device_keys_in, device_keys_out, device_values_in,
                                  device_values_out, device_offsets, stream),
                 "partitioning");
    prims::check(cudaMemcpyAsync(keys_out, device_keys_out, key_bytes, cudaMemcpyDeviceToHost, stream),
                 "copying from the GPU");
    if (value_bytes > 0) {
      prims::check(cudaMemcpyAsync(values_out, device_values_out, value_bytes, cudaMemcpyDeviceToHost, stream),
                   "copying from the GPU");
    }
    prims::check(cudaMemcpyAsync(chunk.offsets.data(), device_offsets, offsets_bytes(request),
                                 cudaMemcpyDeviceToHost, stream),
                 "copying from the GPU");
    chunk.done.record(stream);
    stats.bytes_to_device += key_bytes + value_bytes;
    stats.bytes_to_host += key_bytes + value_bytes;
    stats.partition_seconds += seconds_since(start);
  }

  void partition_finish(PartitionTicket& ticket, SortStats& stats) override {
    const auto start = Clock::now();
    auto& chunk = *static_cast<PartitionInFlight*>(ticket.state.get());
    chunk.done.synchronize("partitioning");
    std::memcpy(chunk.bucket_offsets, chunk.offsets.data(), chunk.offsets_bytes);
    stats.partition_seconds += seconds_since(start);
  }

  size_t top_bytes(const TopRequest& request) override {
    const size_t key_size = key_type_size(request.key_type);
    return (request.count + std::min(request.k, request.count)) * key_size + top_temp_bytes(request);
  }

  /// The keys up through the pinned staging buffers (host copies into one while the other is copied up), then
  /// prims::device::top_k_keys and one download of the winners.
  void top(const TopRequest& request, const void* keys, void* keys_out, SortStats& stats) override {
    stats.device = device();
    stats.gpu_context_seconds = gpu_->context_seconds;
    stats.gpu_staging_seconds = gpu_->staging_seconds;
    const size_t taken = std::min(request.k, request.count);
    if (taken == 0) return;
    prims::check(cudaSetDevice(0), "cudaSetDevice");
    const cudaStream_t stream = gpu_->stream.get();
    const size_t key_size = key_type_size(request.key_type);
    size_t temp_bytes = top_temp_bytes(request);
    const auto setup_start = Clock::now();
    std::byte* device_keys = top_keys_.get(request.count * key_size, "keys");
    std::byte* device_winners = top_winners_.get(taken * key_size, "top keys");
    std::byte* temp = top_temp_.get(std::max<size_t>(temp_bytes, 1), "top-k scratch");
    stats.setup_seconds += seconds_since(setup_start);
    const auto upload_start = Clock::now();
    const auto* source = static_cast<const std::byte*>(keys);
    double host_copy_seconds = 0;  // part of the time to the GPU, not of reading the input
    StagedTransfer transfer(stream, gpu_->staging);
    stats.to_device_copy_seconds += transfer.upload(
        [&](size_t first, size_t count, void* staging) {
          parallel_copy(staging, source + first * key_size, count * key_size, request.threads);
        },
        device_keys, request.count, key_size, host_copy_seconds);
    stats.to_device_seconds += seconds_since(upload_start);
    ChunkCopy select;
    ChunkCopy down;
    select.start.record(stream);
    prims::check(device_top(request, temp, temp_bytes, device_keys, device_winners, stream), "selecting the top keys");
    select.stop.record(stream);
    down.start.record(stream);
    prims::check(cudaMemcpyAsync(keys_out, device_winners, taken * key_size, cudaMemcpyDeviceToHost, stream),
                 "copying from the GPU");
    down.stop.record(stream);
    gpu_->stream.synchronize("selecting the top keys");
    stats.sort_seconds += prims::Event::seconds_between(select.start, select.stop);
    stats.to_host_seconds += prims::Event::seconds_between(down.start, down.stop);
    stats.to_host_copy_seconds += prims::Event::seconds_between(down.start, down.stop);
    stats.bytes_to_device += request.count * key_size;
    stats.bytes_to_host += taken * key_size;
  }

  HostBuffer allocate_staging(size_t bytes) override {
    if (HostBuffer registered = allocate_registered(bytes); registered.data) return registered;
    auto pinned = std::make_shared<prims::PinnedBuffer>(std::max<size_t>(bytes, 1));
    char* data = static_cast<char*>(pinned->data());
    return {std::shared_ptr<void>(pinned, data), data, bytes};
  }

 private:
  static size_t offsets_bytes(const PartitionRequest& request) { return (request.buckets() + 1) * sizeof(size_t); }

  size_t partition_temp_bytes(const PartitionRequest& request) {
    size_t temp_bytes = 0;
    prims::check(device_partition(request, nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, nullptr,
                                  gpu_->stream.get()),
                 "sizing the partition's scratch");
    return temp_bytes;
  }

  size_t top_temp_bytes(const TopRequest& request) {
    size_t temp_bytes = 0;
    prims::check(device_top(request, nullptr, temp_bytes, nullptr, nullptr, gpu_->stream.get()),
                 "sizing the top-k's scratch");
    return temp_bytes;
  }

  void release_partition_buffers() {
    for (PartitionLane& lane : lanes_) lane.release();
  }

  static constexpr size_t partition_lane_count = 2;

  std::shared_ptr<GpuResources> gpu_;
  SortMemory sort_memory_;
  PartitionLane lanes_[partition_lane_count];
  size_t next_lane_ = 0;  // partition_start is called on one thread
  GrowingDeviceBuffer top_keys_;
  GrowingDeviceBuffer top_winners_;
  GrowingDeviceBuffer top_temp_;
};

}  // namespace

std::unique_ptr<SortBackend> make_gpu_backend(std::shared_ptr<GpuResources> gpu) {
  return std::make_unique<GpuBackend>(std::move(gpu));
}

}  // namespace radix_sort
