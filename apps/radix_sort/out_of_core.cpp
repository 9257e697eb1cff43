#include "out_of_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "bucket_store.hpp"
#include "errors.hpp"
#include "parallel.hpp"
#include "slot_pipeline.hpp"
#include "timing.hpp"

namespace radix_sort {

namespace {

/// A partition is one 8-bit digit: 256 buckets, as many as one pass of the radix sort makes.
constexpr int digit_bits = 8;
/// Staging chunks of up to this many bytes (keys and values) run copies and file I/O near full speed.
constexpr size_t max_chunk_bytes = size_t(64) << 20;
/// Fewer elements than this per chunk would spend the time on per-chunk overheads.
constexpr size_t min_chunk_elements = 256;
/// Chunks in flight: one being read, one appended to the buckets, and one for each of the backend's partition lanes.
size_t staging_slots(const SortBackend& backend) { return 2 + backend.partition_lanes(); }
/// Pieces of buckets of up to this many bytes make spill writes large enough to run at the disk's speed.
constexpr size_t max_piece_bytes = size_t(4) << 20;
/// Chunk-sized buffers of output waiting to be written while the next bucket is read and sorted.
constexpr size_t write_behind_buffers = 2;
/// Host buffers of one chunk each: a staging slot holds its chunk as read and, partitioned, a second time, except on
/// a backend that partitions in place; the write-behind has buffers of its own.
size_t chunk_buffers(const SortBackend& backend) {
  return staging_slots(backend) * (backend.partitions_in_place() ? 1 : 2) + write_behind_buffers;
}

size_t value_size(const SortRequest& request) { return request.argsort ? sizeof(uint64_t) : request.value_bytes; }

/// One chunk's staging buffers: the input as read, and the same elements partitioned (the same buffers where the
/// backend partitions in place).
struct StagingSlot {
  HostBuffer keys_in;
  HostBuffer values_in;
  HostBuffer keys_out;
  HostBuffer values_out;
  size_t count = 0;
  std::vector<size_t> offsets;
  // The backend's, while the chunk is partitioned; declared after the buffers, so it goes first (a chunk an error
  // left in flight is waited for before they go).
  PartitionTicket partition;
};

/// Writes the output on a thread of its own, in the order given, so that reading and sorting the next bucket
/// overlap writing the last one. Data are copied into a few buffers of its own; a write waits for a free one.
/// Writers that only copy into memory (a mapped output) are called directly: a copy to a buffer would cost as much.
class WriteBehind {
 public:
  WriteBehind(SortBackend& backend, size_t buffer_bytes, unsigned threads, bool direct)
      : buffer_bytes_(buffer_bytes), threads_(threads), direct_(direct) {
    if (direct_) return;
    std::vector<Piece*> pieces;
    for (Piece& piece : pieces_) {
      piece.buffer = backend.allocate_staging(buffer_bytes);
      pieces.push_back(&piece);
    }
    pipeline_.emplace(pieces, std::vector<SlotPipeline<Piece>::Stage>{
                                  [](Piece& piece) { (*piece.writer)(piece.first, piece.count, piece.buffer.data); }});
  }

  /// Queues elements [first, first + count) for `writer`. Rethrows the error of an earlier write.
  void write(const ChunkWriter& writer, size_t first, size_t count, size_t element_bytes, const void* source) {
    if (direct_) {
      writer(first, count, source);
      return;
    }
    const size_t items_a_piece = std::max<size_t>(buffer_bytes_ / element_bytes, 1);
    for (size_t done = 0; done < count; done += items_a_piece) {
      const size_t items = std::min(items_a_piece, count - done);
      Piece& piece = pipeline_->acquire();
      parallel_copy(piece.buffer.data, static_cast<const char*>(source) + done * element_bytes, items * element_bytes,
                    threads_);
      piece.writer = &writer;
      piece.first = first + done;
      piece.count = items;
      pipeline_->submit(piece);
    }
  }

  /// Waits until everything queued is written; rethrows a write's error.
  void finish() {
    if (pipeline_) pipeline_->finish();
  }

 private:
  struct Piece {
    HostBuffer buffer;
    const ChunkWriter* writer = nullptr;
    size_t first = 0;
    size_t count = 0;
  };

  size_t buffer_bytes_;
  unsigned threads_;
  bool direct_;
  Piece pieces_[write_behind_buffers];
  std::optional<SlotPipeline<Piece>> pipeline_;  // after the pieces: its threads end before they go
};

/// Fills the keys (and values) of a chunk with up to `max` elements; returns how many, 0 at the end.
using ChunkSource = std::function<size_t(size_t max, void* keys, void* values)>;

class OutOfCoreSort {
 public:
  OutOfCoreSort(SortBackend& backend, const SortRequest& request, const SortPlan& plan, const MemoryBudget& budget,
                const OutOfCoreIo& io, Progress& progress, SortStats& stats)
      : backend_(backend),
        request_(request),
        plan_(plan),
        budget_(budget),
        io_(io),
        progress_(progress),
        stats_(stats),
        key_bytes_(key_type_size(request.key_type)),
        value_bytes_(value_size(request)),
        key_bits_(static_cast<int>(8 * key_bytes_)),
        allocation_start_(Clock::now()),
        slots_(staging_slots(backend)),
        write_behind_(backend, plan.chunk_elements * (key_bytes_ + value_bytes_), io.threads, io.writes_to_memory) {
    const bool in_place = backend.partitions_in_place();
    for (StagingSlot& slot : slots_) {
      slot.keys_in = backend.allocate_staging(plan.chunk_elements * key_bytes_);
      slot.keys_out = in_place ? slot.keys_in : backend.allocate_staging(plan.chunk_elements * key_bytes_);
      if (value_bytes_ > 0) {
        slot.values_in = backend.allocate_staging(plan.chunk_elements * value_bytes_);
        slot.values_out = in_place ? slot.values_in : backend.allocate_staging(plan.chunk_elements * value_bytes_);
      }
    }
    stats_.staging_alloc_seconds += seconds_since(allocation_start_);
  }

  size_t run() {
    if (io_.staging_allocated) io_.staging_allocated();
    stats_.device = backend_.device();
    stats_.plan = plan_.spill ? "out of core, buckets in spill files" : "out of core, buckets in host memory";
    const size_t input_bytes = io_.keys->file_bytes() + (io_.values ? io_.values->file_bytes() : 0);
    size_t next_index = 0;  // argsort: the index of the next key read
    const ChunkSource read_input = [&](size_t max, void* keys, void* values) {
      const size_t got = io_.keys->read(max, keys);
      if (request_.argsort) {
        std::iota(static_cast<uint64_t*>(values), static_cast<uint64_t*>(values) + got, uint64_t(next_index));
      } else if (io_.values) {
        const size_t values_got = io_.values->read(got, values);
        unsigned char probe[8];
        if (values_got < got || (got == 0 && io_.values->read(1, probe) > 0)) {
          throw AppError(fmt::format("{} has {} values than {} has keys", io_.values->name(),
                                     values_got < got ? "fewer" : "more", io_.keys->name()));
        }
      }
      next_index += got;
      progress_.update("partitioning", io_.keys->bytes_read() + (io_.values ? io_.values->bytes_read() : 0),
                       input_bytes);
      return got;
    };
    total_elements_ = 0;
    const int top_begin = std::max(0, key_bits_ - digit_bits);
    std::unique_ptr<BucketStore> top = partition(read_input, top_begin, key_bits_, !plan_.spill);
    for (size_t b = 0; b < top->buckets(); ++b) total_elements_ += top->count(b);
    emit(*top, top_begin);
    const auto finish_start = Clock::now();
    write_behind_.finish();
    stats_.write_seconds += seconds_since(finish_start);
    return total_elements_;
  }

 private:
  std::unique_ptr<BucketStore> make_store(bool in_host_memory) {
    const size_t buckets = size_t(1) << digit_bits;
    if (!in_host_memory) {
      return make_spill_bucket_store(buckets, key_bytes_, value_bytes_, plan_.piece_elements, io_.threads,
                                     io_.spill_directory, stats_.spilled_bytes);
    }
    return make_host_bucket_store(buckets, key_bytes_, value_bytes_, io_.threads);
  }

  /// Partitions everything `source` gives by the digit [begin_bit, end_bit) into a new store: reading, partitioning
  /// on the backend and appending to the buckets run as three stages over the staging slots.
  std::unique_ptr<BucketStore> partition(const ChunkSource& source, int begin_bit, int end_bit, bool in_host_memory) {
    // The wall time less the backend's partitioning counts as reading (waiting on the stages included).
    const auto start = Clock::now();
    const double partition_seconds_before = stats_.partition_seconds;
    std::unique_ptr<BucketStore> store = make_store(in_host_memory);
    PartitionRequest chunk_request;
    chunk_request.key_type = request_.key_type;
    chunk_request.descending = request_.descending;
    chunk_request.value_bytes = value_bytes_;
    chunk_request.begin_bit = begin_bit;
    chunk_request.end_bit = end_bit;

    // This thread reads; one stage starts the backend's partitions (several may be in flight), and the next waits
    // for each and appends it to the buckets.
    double reading_seconds = 0;  // busy time of the reading and of the appending, for --stats
    double storing_seconds = 0;
    SortStats finish_stats;  // the waiting stage's own: the starting stage adds to stats_ meanwhile
    std::vector<StagingSlot*> slots;
    for (StagingSlot& slot : slots_) slots.push_back(&slot);
    SlotPipeline<StagingSlot> pipeline(
        slots, {[&](StagingSlot& s) {
                  chunk_request.count = s.count;
                  s.offsets.assign(chunk_request.buckets() + 1, 0);
                  backend_.partition_start(s.partition, chunk_request, s.keys_in.data, s.values_in.data,
                                           s.keys_out.data, s.values_out.data, s.offsets.data(), stats_);
                },
                [&](StagingSlot& s) {
                  backend_.partition_finish(s.partition, finish_stats);
                  const auto store_start = Clock::now();
                  store->add_partitioned(s.offsets.data(), s.keys_out.data,
                                         value_bytes_ > 0 ? s.values_out.data : nullptr);
                  storing_seconds += seconds_since(store_start);
                }});
    while (true) {
      StagingSlot& s = pipeline.acquire();
      const auto read_start = Clock::now();
      s.count = source(plan_.chunk_elements, s.keys_in.data, s.values_in.data);
      reading_seconds += seconds_since(read_start);
      if (s.count == 0) break;
      pipeline.submit(s);
    }
    pipeline.finish();
    stats_.partition_seconds += finish_stats.partition_seconds;
    const auto finish_start = Clock::now();
    store->finish_appending();
    storing_seconds += seconds_since(finish_start);
    stats_.partition_read_seconds += reading_seconds;
    stats_.bucket_store_seconds += storing_seconds;
    stats_.read_seconds += seconds_since(start) - (stats_.partition_seconds - partition_seconds_before);
    return store;
  }

  /// Writes the buckets of `store` (whose keys agree on every bit from `end_bit` up) in order, each sorted.
  /// Consecutive buckets that fit one sort together are sorted as one group: a few large sorts rather than many
  /// small ones.
  void emit(BucketStore& store, int end_bit) {
    // Keys of several buckets differ in this store's digit too.
    const int group_end_bit = std::min(key_bits_, end_bit + digit_bits);
    const auto fits = [&](size_t count, int bits) {
      return backend_.sort_bytes(bucket_request(count, bits)) <= budget_.device_bytes;
    };
    for (size_t b = 0; b < store.buckets();) {
      const size_t count = store.count(b);
      if (count == 0) {
        ++b;
      } else if (end_bit == 0) {
        ++stats_.constant_buckets;
        ++stats_.buckets;
        copy_through(store, b);
        release(store, b++);
      } else if (!fits(count, end_bit)) {
        ++stats_.repartitioned;
        const int begin_bit = std::max(0, end_bit - digit_bits);
        size_t cursor = 0;
        const ChunkSource read_bucket = [&](size_t max, void* keys, void* values) {
          const size_t got = std::min(max, count - cursor);
          store.read(b, BucketStore::keys, cursor, got, keys);
          if (value_bytes_ > 0) store.read(b, BucketStore::values, cursor, got, values);
          cursor += got;
          return got;
        };
        // The parent keeps its memory while the child is filled and emptied: the child stays in host memory only
        // where both fit beside what the levels above hold.
        const size_t parent_bytes = store.resident_bytes();
        const bool child_in_host_memory =
            !plan_.spill && held_bytes_ + parent_bytes + count * (key_bytes_ + value_bytes_) <= plan_.host_bucket_bytes;
        held_bytes_ += parent_bytes;
        std::unique_ptr<BucketStore> child = partition(read_bucket, begin_bit, end_bit, child_in_host_memory);
        release(store, b++);
        emit(*child, begin_bit);
        held_bytes_ -= parent_bytes;
      } else {
        size_t end = b + 1;
        size_t total = count;
        while (end < store.buckets() && fits(total + store.count(end), group_end_bit)) total += store.count(end++);
        ++stats_.sorts;
        sort_buckets(store, b, end, bucket_request(total, end - b == 1 ? end_bit : group_end_bit));
        for (; b < end; ++b) {
          if (store.count(b) == 0) continue;
          ++stats_.buckets;
          release(store, b);
        }
      }
    }
  }

  void release(BucketStore& store, size_t bucket) {
    const auto start = Clock::now();
    store.release(bucket);
    stats_.bucket_release_seconds += seconds_since(start);
  }

  /// A sort of `count` elements of buckets whose keys agree on every bit from `end_bit` up.
  SortRequest bucket_request(size_t count, int end_bit) const {
    SortRequest request = request_;
    request.count = count;
    request.end_bit = end_bit;
    if (request_.argsort) {
      // The indices travel as values: the bucket's own positions are not the input's.
      request.argsort = false;
      request.value_bytes = sizeof(uint64_t);
    }
    return request;
  }

  /// Sorts buckets [first_bucket, end_bucket) as one on the backend, reading them from the store and writing them
  /// after the buckets before them.
  void sort_buckets(BucketStore& store, size_t first_bucket, size_t end_bucket, const SortRequest& group_request) {
    const size_t base = written_;
    // Elements [first, first + count) of the buckets' concatenation, bucket by bucket.
    const auto read_column = [&](BucketStore::Column column, size_t first, size_t count, void* destination) {
      char* out = static_cast<char*>(destination);
      size_t start = 0;  // of bucket b within the group
      for (size_t b = first_bucket; b < end_bucket && count > 0; start += store.count(b++)) {
        const size_t end = start + store.count(b);
        if (first >= end) continue;
        const size_t items = std::min(count, end - first);
        store.read(b, column, first - start, items, out);
        out += items * store.element_bytes(column);
        first += items;
        count -= items;
      }
    };
    SortIo io;
    io.read_keys = [&](size_t first, size_t count, void* destination) {
      read_column(BucketStore::keys, first, count, destination);
    };
    io.read_values = [&](size_t first, size_t count, void* destination) {
      read_column(BucketStore::values, first, count, destination);
    };
    if (request_.argsort) {
      io.write_values = [&](size_t first, size_t count, const void* source) {
        write_behind_.write(io_.write_keys, base + first, count, value_bytes_, source);
        report_written(base + first + count);
      };
    } else {
      io.write_keys = [&](size_t first, size_t count, const void* source) {
        write_behind_.write(io_.write_keys, base + first, count, key_bytes_, source);
        report_written(base + first + count);
      };
      if (value_bytes_ > 0) {
        io.write_values = [&](size_t first, size_t count, const void* source) {
          write_behind_.write(io_.write_values, base + first, count, value_bytes_, source);
        };
      }
    }
    SortStats bucket_stats;
    backend_.sort(group_request, io, bucket_stats);
    stats_.device = bucket_stats.device;
    stats_.read_seconds += bucket_stats.read_seconds;
    stats_.to_device_seconds += bucket_stats.to_device_seconds;
    stats_.sort_seconds += bucket_stats.sort_seconds;
    stats_.to_host_seconds += bucket_stats.to_host_seconds;
    stats_.write_seconds += bucket_stats.write_seconds;
    stats_.setup_seconds += bucket_stats.setup_seconds;
    stats_.to_device_copy_seconds += bucket_stats.to_device_copy_seconds;
    stats_.to_host_copy_seconds += bucket_stats.to_host_copy_seconds;
    stats_.bytes_to_device += bucket_stats.bytes_to_device;
    stats_.bytes_to_host += bucket_stats.bytes_to_host;
    stats_.gpu_context_seconds = bucket_stats.gpu_context_seconds;
    stats_.gpu_staging_seconds = bucket_stats.gpu_staging_seconds;
    record_extremes(bucket_stats.smallest_key.data(), bucket_stats.largest_key.data());
    written_ = base + group_request.count;
  }

  /// Writes a bucket whose keys are all equal in the sort bits as it is: stable, so already in order.
  void copy_through(BucketStore& store, size_t bucket) {
    const size_t count = store.count(bucket);
    StagingSlot& slot = slots_[0];
    for (size_t first = 0; first < count; first += plan_.chunk_elements) {
      const size_t items = std::min(plan_.chunk_elements, count - first);
      store.read(bucket, BucketStore::keys, first, items, slot.keys_in.data);
      if (value_bytes_ > 0) store.read(bucket, BucketStore::values, first, items, slot.values_in.data);
      if (first == 0) record_extremes(slot.keys_in.data, slot.keys_in.data);
      if (request_.argsort) {
        write_behind_.write(io_.write_keys, written_, items, value_bytes_, slot.values_in.data);
      } else {
        write_behind_.write(io_.write_keys, written_, items, key_bytes_, slot.keys_in.data);
        if (value_bytes_ > 0) write_behind_.write(io_.write_values, written_, items, value_bytes_, slot.values_in.data);
      }
      written_ += items;
      report_written(written_);
    }
  }

  /// Keeps the smallest and largest keys of the whole output from those of each bucket, in output order.
  void record_extremes(const void* smallest, const void* largest) {
    const bool first_bucket = !have_extremes_;
    have_extremes_ = true;
    // Ascending: the first bucket holds the smallest key and the last the largest; descending the reverse.
    if (first_bucket || request_.descending) std::memcpy(stats_.smallest_key.data(), smallest, key_bytes_);
    if (first_bucket || !request_.descending) std::memcpy(stats_.largest_key.data(), largest, key_bytes_);
  }

  void report_written(size_t elements) {
    const size_t element = key_bytes_ + value_bytes_;
    progress_.update("sorting", elements * element, total_elements_ * element);
  }

  SortBackend& backend_;
  const SortRequest& request_;
  const SortPlan& plan_;
  const MemoryBudget& budget_;
  const OutOfCoreIo& io_;
  Progress& progress_;
  SortStats& stats_;
  size_t key_bytes_;
  size_t value_bytes_;
  int key_bits_;
  Clock::time_point allocation_start_;  // of the staging buffers, for --stats
  std::vector<StagingSlot> slots_;
  WriteBehind write_behind_;
  size_t held_bytes_ = 0;  // host memory of the stores at the levels above the one being emitted
  size_t total_elements_ = 0;
  size_t written_ = 0;
  bool have_extremes_ = false;
};

}  // namespace

SortPlan plan_sort(SortBackend& backend, const SortRequest& request, size_t in_core_host_bytes,
                   const MemoryBudget& budget) {
  SortPlan plan;
  if (backend.sort_bytes(request) <= budget.device_bytes && in_core_host_bytes <= budget.host_bytes) return plan;
  plan.in_core = false;
  const size_t element_bytes = key_type_size(request.key_type) + value_size(request);
  // The chunk buffers take at most an eighth of the host budget, and a chunk's partition must fit the backend's
  // memory.
  // A file not much larger than the budget needs no more staging than half its size.
  const size_t data_bytes = request.count * element_bytes;
  const size_t staging_share = std::max(data_bytes / (2 * chunk_buffers(backend)), size_t(1) << 20);
  size_t chunk =
      std::min({max_chunk_bytes, budget.host_bytes / (8 * chunk_buffers(backend)), staging_share}) / element_bytes;
  PartitionRequest partition_request;
  partition_request.key_type = request.key_type;
  partition_request.value_bytes = value_size(request);
  partition_request.end_bit = std::min(8, static_cast<int>(8 * key_type_size(request.key_type)));
  for (;;) {
    partition_request.count = chunk;
    if (chunk < min_chunk_elements || backend.partition_bytes(partition_request) <= budget.device_bytes) break;
    chunk /= 2;
  }
  if (chunk < min_chunk_elements) {
    throw AppError(fmt::format("the memory budget (--gpu-memory {}, --host-memory {}) cannot hold a chunk of {} "
                               "elements to partition",
                               human_bytes(budget.device_bytes), human_bytes(budget.host_bytes), min_chunk_elements));
  }
  plan.chunk_elements = chunk;
  plan.staging_bytes = chunk_buffers(backend) * chunk * element_bytes;
  // The pieces the buckets gather take a quarter of the budget, and so may their index: the index grows with the
  // data, so a budget too small for the file is an error rather than a budget overrun.
  const size_t buckets = size_t(1) << digit_bits;
  plan.piece_elements =
      std::max<size_t>(std::min(max_piece_bytes, budget.host_bytes / 4 / buckets) / element_bytes, 1);
  const size_t pieces = data_bytes / (plan.piece_elements * element_bytes) + buckets;
  const size_t index_bytes = pieces * bucket_piece_index_bytes;
  if (index_bytes > budget.host_bytes / 4) {
    // index = data * buckets * 4 * entry / budget <= budget / 4: the budget must be at least this.
    const double least = std::sqrt(static_cast<double>(data_bytes) * buckets * 16 * bucket_piece_index_bytes);
    throw AppError(fmt::format("--host-memory {} is too small to sort {} out of core; give it at least {}",
                               human_bytes(budget.host_bytes), human_bytes(data_bytes),
                               human_bytes(static_cast<size_t>(least) + (size_t(1) << 20))));
  }
  // The CPU backend sorts each bucket in host memory too.
  const size_t bucket_sort_bytes = backend.sorts_in_host_memory() ? budget.device_bytes : 0;
  const size_t reserved = plan.staging_bytes + budget.host_bytes / 4 + index_bytes + bucket_sort_bytes;
  plan.spill = data_bytes + reserved > budget.host_bytes;
  // What host buckets may take leaves the spill pieces and their index reserved, for a bucket that spills later.
  plan.host_bucket_bytes = plan.spill ? 0 : budget.host_bytes - reserved;
  return plan;
}

size_t sort_out_of_core(SortBackend& backend, const SortRequest& request, const SortPlan& plan,
                      const MemoryBudget& budget, const OutOfCoreIo& io, Progress& progress, SortStats& stats) {
  OutOfCoreSort sort(backend, request, plan, budget, io, progress, stats);
  return sort.run();
}

}  // namespace radix_sort
