#include "app.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend.hpp"
#include "bucket_store.hpp"
#include "cpu_sort.hpp"
#include "errors.hpp"
#include "file_io.hpp"
#include "formats.hpp"
#include "gpu_backend.hpp"
#include "input_stream.hpp"
#include "out_of_core.hpp"
#include "parallel.hpp"
#include "progress.hpp"
#include "timing.hpp"

namespace radix_sort {

namespace {

/// Auto sorts inputs of up to this many bytes a thread (keys and values files together) on the CPU: it finishes them
/// before the GPU's driver and context would have started. Chosen by timing radix_sort on each backend
/// (bench/results/2026-11-27-H100-radix_sort-backend-crossover.txt).
constexpr size_t cpu_first_bytes_per_thread = size_t(2) << 20;

/// The backend asked for, with auto made the CPU for small regular files (streams' sizes are not known in advance).
Backend choose_backend(const Options& options) {
  if (options.backend != Backend::Auto || options.check) return options.backend;
  size_t bytes = 0;
  for (const std::string* path : {&options.input, &options.values_input}) {
    if (path->empty()) continue;
    std::error_code error;
    if (*path == "-" || !std::filesystem::is_regular_file(*path, error)) return Backend::Auto;
    const auto size = std::filesystem::file_size(*path, error);
    if (error) return Backend::Auto;
    bytes += static_cast<size_t>(size);
  }
  return bytes <= cpu_first_bytes_per_thread * options.threads ? Backend::Cpu : Backend::Auto;
}

/// The GPU to sort on, once `gpu` is known: none when the CPU is asked for or (for auto) when there is no GPU.
std::shared_ptr<GpuResources> use_gpu(Backend backend, std::future<std::shared_ptr<GpuResources>>& gpu) {
  if (backend == Backend::Cpu) return nullptr;
  std::shared_ptr<GpuResources> found = gpu.get();
  if (found) return found;
  if (backend == Backend::Gpu) throw AppError("--backend gpu: no CUDA GPU found");
  fmt::print(stderr, "radix_sort: no CUDA GPU found; sorting on the CPU\n");
  return nullptr;
}

/// An input opened and described; its elements are loaded only for a sort in core, and only text's: binary and npy
/// elements are read from the file (with pread) straight into the backend's buffers.
struct LoadedInput {
  InputFile file;
  ColumnShape shape;
  Column column;  // text: the parsed elements, once loaded; binary and npy: the count and type only
  bool loaded = false;
  Format format() const { return shape.format; }
  /// The most elements it can hold: the count, or for text one per two bytes (a digit and a newline).
  size_t max_count() const { return shape.count.value_or(file.size() / 2 + 1); }
};

/// Text is parsed a block at a time; larger blocks parse on more threads at once.
constexpr size_t in_core_text_block_bytes = size_t(64) << 20;

LoadedInput open_input(const std::string& path, Format format, std::optional<KeyType> type, size_t max_stream_bytes,
                       const std::string& limit_name) {
  InputFile file = InputFile::open(path, max_stream_bytes, limit_name);
  const ColumnShape shape = describe_column(file.head(), file.size(), format, type, file.name());
  return {std::move(file), shape, Column{}, false};
}

void load(LoadedInput& input, unsigned threads) {
  if (input.format() == Format::Text) {
    input.column = read_column(input.file, Format::Text, input.shape.type, threads, in_core_text_block_bytes);
  } else {
    input.column = Column{input.shape.type, *input.shape.count, nullptr, nullptr};
  }
  input.loaded = true;
}

/// The 1-based line of the `index`-th value of a text file (blank lines hold no value), read again block by block.
size_t text_line_of_value(const InputFile& file, size_t index) {
  const auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  std::string block(std::min(file.size(), size_t(16) << 20), '\0');
  size_t line = 1;
  size_t values_seen = 0;
  bool content = false;  // the line so far holds more than blanks
  for (size_t offset = 0; offset < file.size(); offset += block.size()) {
    block.resize(std::min(block.size(), file.size() - offset));
    file.read(offset, block.size(), block.data());
    for (const char c : block) {
      if (c == '\n') {
        if (content && values_seen++ == index) return line;
        ++line;
        content = false;
      } else if (!is_blank(c)) {
        content = true;
      }
    }
  }
  return line;
}

std::string format_key(KeyType type, const void* bytes) {
  return visit_key_type(type, [&](auto tag) {
    using K = typename decltype(tag)::type;
    K key;
    std::memcpy(&key, bytes, sizeof key);
    // Print small integers as numbers, not characters.
    return fmt::format("{}", +key);
  });
}

/// --check: 0 when sorted, else 1 after naming the first out-of-order element like sort -c. Reads the input in chunks
/// (text parsed block by block), so that checking takes little memory however large the file.
int check_sorted(const LoadedInput& input, bool descending, unsigned threads) {
  const KeyType type = input.shape.type;
  const size_t element = key_type_size(type);
  ElementStream stream(input.file, input.format(), type, threads, in_core_text_block_bytes);
  const size_t chunk = std::max<size_t>((size_t(16) << 20) / element, 1);
  // One element more: the last of the chunk before, to compare the first of the next with.
  std::vector<uint64_t> buffer(((chunk + 1) * element + 7) / 8);
  char* const data = reinterpret_cast<char*>(buffer.data());
  size_t kept = 0;  // elements carried over at data's start
  size_t base = 0;  // the input index of data's first element
  for (;;) {
    const size_t got = stream.read(chunk, data + kept * element);
    if (got == 0) return 0;
    const auto disorder = visit_key_type(type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      return first_disorder(reinterpret_cast<const K*>(data), kept + got, descending);
    });
    if (disorder) {
      const size_t index = base + *disorder;
      const std::string value = format_key(type, data + *disorder * element);
      if (input.format() == Format::Text) {
        fmt::print(stderr, "radix_sort: {}:{}: disorder: {}\n", input.file.name(),
                   text_line_of_value(input.file, index), value);
      } else {
        fmt::print(stderr, "radix_sort: {}: disorder at index {}: {}\n", input.file.name(), index, value);
      }
      return 1;
    }
    std::memmove(data, data + (kept + got - 1) * element, element);
    base += kept + got - 1;
    kept = 1;
  }
}

/// Reads elements of a loaded input into a backend's buffer: parsed text from memory, binary and npy elements from
/// the file.
ChunkReader column_reader(const LoadedInput& input, unsigned threads, Progress& progress) {
  const size_t element = key_type_size(input.shape.type);
  return [&input, element, threads, &progress](size_t first, size_t count, void* destination) {
    if (input.format() == Format::Text) {
      parallel_copy(destination, static_cast<const char*>(input.column.data) + first * element, count * element,
                    threads);
    } else {
      input.file.read(input.shape.data_offset + first * element, count * element, destination, threads);
    }
    progress.update("reading", (first + count) * element, input.column.count * element);
  };
}

/// Below this size an output is simply appended to; above it, it is mapped and filled by several threads.
constexpr size_t min_mapped_output = size_t(4) << 20;

/// Writes the sorted elements of one output in its format, chunk by chunk and in order. Large outputs are mapped
/// (disk space reserved, pages faulted in) on a thread of their own while the input is sorted, and each chunk is then
/// copied, or printed, into the mapping by several threads.
class OutputWriter {
 public:
  /// `count` elements will be written (the npy header says it); `map_output` maps a large output, else it is
  /// appended to (an out-of-core sort writes at the disk's pace, and a text output's size is not known).
  OutputWriter(AtomicOutput& output, Format format, KeyType type, size_t count, bool map_output, unsigned threads,
               Progress* progress)
      : output_(output),
        format_(format),
        type_(type),
        count_(count),
        threads_(threads),
        progress_(progress),
        printer_(type, threads) {
    const size_t element = format == Format::Text ? max_text_line(type) : key_type_size(type);
    if (format == Format::Npy) header_ = make_npy_header(type, count);
    const size_t capacity = header_.size() + count * element;
    if (map_output && capacity >= min_mapped_output) {
      mapping_ = std::async(std::launch::async, [&output, capacity, threads] { return output.map(capacity, threads); });
    }
  }
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  /// Takes elements [first, first + count) (called in order).
  void write(size_t first, size_t count, const void* source) {
    start();
    if (format_ == Format::Text) {
      const std::vector<std::string_view>& pieces = printer_.print(source, count);
      if (mapped_) {
        std::vector<size_t> offsets(pieces.size());
        for (size_t i = 0; i < pieces.size(); ++i) {
          offsets[i] = cursor_;
          cursor_ += pieces[i].size();
        }
        if (cursor_ > output_.mapped_bytes()) throw std::logic_error("printed text overran its bound");
        parallel_for(pieces.size(), threads_, [&](size_t i) {
          std::memcpy(output_.mapped() + offsets[i], pieces[i].data(), pieces[i].size());
        });
      } else {
        for (std::string_view piece : pieces) output_.write(piece);
      }
    } else {
      const size_t bytes = count * key_type_size(type_);
      if (mapped_) {
        parallel_copy(output_.mapped() + cursor_, source, bytes, threads_);
        cursor_ += bytes;
      } else {
        output_.write(source, bytes, threads_);
      }
    }
    if (progress_) progress_->update("writing", (first + count) * key_type_size(type_), count_ * key_type_size(type_));
  }

  /// Completes the output (an empty one still gets its npy header); then it can be committed.
  void finish() {
    start();
    if (mapped_) output_.set_size(cursor_);
  }

  ChunkWriter chunk_writer() {
    return [this](size_t first, size_t count, const void* source) { write(first, count, source); };
  }

 private:
  /// Waits for the mapping (it reports a full disk) and writes the header.
  void start() {
    if (started_) return;
    started_ = true;
    if (mapping_.valid()) mapped_ = mapping_.get();
    if (mapped_) {
      std::memcpy(output_.mapped(), header_.data(), header_.size());
      cursor_ = header_.size();
    } else if (!header_.empty()) {
      output_.write(header_);
    }
  }

  AtomicOutput& output_;
  Format format_;
  KeyType type_;
  size_t count_;
  unsigned threads_;
  Progress* progress_;  // null where the caller reports progress
  TextPrinter printer_;
  std::string header_;
  std::future<bool> mapping_;
  bool started_ = false;
  bool mapped_ = false;
  size_t cursor_ = 0;  // bytes written into the mapping
};

/// Runs a job on a thread of its own, joined when leaving scope (also when leaving by an exception).
class BackgroundJob {
 public:
  BackgroundJob() = default;
  template <class F>
  explicit BackgroundJob(F&& job) : thread_(std::forward<F>(job)) {}
  BackgroundJob(BackgroundJob&&) = default;
  BackgroundJob& operator=(BackgroundJob&& other) {
    join();
    thread_ = std::move(other.thread_);
    return *this;
  }
  ~BackgroundJob() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

/// What --stats says about the keys' input, kept apart so that the input itself can go before the end.
struct InputSummary {
  std::string name;
  Format format;
  size_t file_bytes;
  size_t key_bytes;
};

/// Wall time of the phases of a run, on the main thread; they add up to the total.
struct Timings {
  double read = 0;
  double partition = 0;
  double to_gpu = 0;
  double sort = 0;
  double back = 0;
  double write = 0;
  double setup = 0;   // the rest: waiting for the GPU's start, allocating and freeing
  double gpu_wait = 0;  // part of setup: waiting for the CUDA context and staging buffers
  double total = 0;
};

void print_stats(const InputSummary& keys, const SortRequest& request, const SortStats& stats, const Timings& t) {
  const size_t key_bytes = keys.key_bytes;
  const size_t file_bytes = keys.file_bytes;
  auto rate = [](size_t bytes, double seconds) {
    return seconds > 0 ? fmt::format("{:7.2f} GB/s", static_cast<double>(bytes) / seconds / 1e9)
                       : std::string("      -");
  };
  fmt::print(stderr, "radix_sort: {} {} keys ({:.1f} MB) from {} ({}), sorted {} on {}\n", request.count,
             key_type_name(request.key_type), static_cast<double>(key_bytes) / 1e6, keys.name,
             format_name(keys.format), request.descending ? "descending" : "ascending", stats.device);
  if (request.count > 0) {
    fmt::print(stderr, "radix_sort: min {}, max {}\n", format_key(request.key_type, stats.smallest_key.data()),
               format_key(request.key_type, stats.largest_key.data()));
  }
  if (stats.plan != "in core") {
    fmt::print(stderr, "radix_sort: plan: {}: {} buckets sorted in {} sorts, {} partitioned again, {} of equal keys",
               stats.plan, stats.buckets, stats.sorts, stats.repartitioned, stats.constant_buckets);
    if (stats.spilled_bytes > 0) fmt::print(stderr, ", {} spilled", human_bytes(stats.spilled_bytes));
    fmt::print(stderr, "\n");
  } else {
    fmt::print(stderr, "radix_sort: plan: in core\n");
  }
  fmt::print(stderr, "  read    {:8.3f} s  {}  (file {:.1f} MB)\n", t.read, rate(file_bytes, t.read),
             static_cast<double>(file_bytes) / 1e6);
  if (t.partition > 0) {
    fmt::print(stderr,
               "  split   {:8.3f} s             (partitioning into buckets; busy beside it: reading {:.3f} s, "
               "storing buckets {:.3f} s)\n",
               t.partition, stats.partition_read_seconds, stats.bucket_store_seconds);
  }
  fmt::print(stderr, "  to GPU  {:8.3f} s  {}  (copies {:.3f} s at {}, the rest overlaps reading)\n", t.to_gpu,
             rate(stats.bytes_to_device, t.to_gpu), stats.to_device_copy_seconds,
             rate(stats.bytes_to_device, stats.to_device_copy_seconds));
  fmt::print(stderr, "  sort    {:8.3f} s  {}  ({:.0f} Mkeys/s)\n", t.sort, rate(key_bytes, t.sort),
             t.sort > 0 ? static_cast<double>(request.count) / t.sort / 1e6 : 0.0);
  fmt::print(stderr, "  back    {:8.3f} s  {}  (copies {:.3f} s at {}, the rest overlaps writing)\n", t.back,
             rate(stats.bytes_to_host, t.back), stats.to_host_copy_seconds,
             rate(stats.bytes_to_host, stats.to_host_copy_seconds));
  fmt::print(stderr, "  write   {:8.3f} s  {}\n", t.write, rate(key_bytes, t.write));
  std::string setup;
  if (stats.gpu_context_seconds > 0) {
    setup = fmt::format("waited {:.3f} s for the GPU: driver start, context {:.3f} s, staging buffers {:.3f} s; ",
                        t.gpu_wait, stats.gpu_context_seconds, stats.gpu_staging_seconds);
  }
  if (stats.plan != "in core") {
    setup += fmt::format("chunk buffers {:.3f} s, releasing buckets {:.3f} s; ", stats.staging_alloc_seconds,
                         stats.bucket_release_seconds);
  }
  fmt::print(stderr, "  setup   {:8.3f} s             ({}sorts' memory {:.3f} s; allocating, freeing)\n", t.setup,
             setup, stats.setup_seconds);
  fmt::print(stderr, "  total   {:8.3f} s  {}  (wall, end to end)\n", t.total, rate(file_bytes, t.total));
}

/// The memory a run may use: the caps given, else what is free less headroom for the rest of the system.
MemoryBudget memory_budget(const Options& options, SortBackend& backend) {
  MemoryBudget budget;
  const size_t available = available_host_memory();
  budget.host_bytes = options.host_memory.value_or(available / 2);
  size_t device_free = backend.free_bytes();
  if (backend.sorts_in_host_memory()) {
    // The rest of the host budget goes to staging and the buckets' pieces and index.
    device_free = budget.host_bytes / 4;
  } else {
    // The driver and other programs need some of the GPU's memory too.
    const size_t headroom = std::max(size_t(256) << 20, device_free / 20);
    device_free = device_free > headroom ? device_free - headroom : 0;
  }
  budget.device_bytes = std::min(options.gpu_memory.value_or(device_free), device_free);
  if (options.gpu_memory && backend.sorts_in_host_memory()) budget.device_bytes = *options.gpu_memory;
  return budget;
}

/// Spill files go to --tmpdir, else beside the output (on the same disk, which has room for the output anyway).
std::string spill_directory(const Options& options) {
  if (!options.tmpdir.empty()) return options.tmpdir;
  if (is_standard_stream(options.output)) return ".";
  const size_t slash = options.output.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : options.output.substr(0, slash);
}

/// The host-memory budget, and how an error names it.
struct HostBudget {
  size_t bytes;
  std::string limit_name;
};

HostBudget host_budget(const Options& options) {
  const size_t bytes = options.host_memory.value_or(available_host_memory() / 2);
  return {bytes, options.host_memory
                     ? fmt::format("--host-memory {}; raise --host-memory, or give a regular file", human_bytes(bytes))
                     : fmt::format("the host-memory budget of {} (half the available memory); raise it with "
                                   "--host-memory, or give a regular file",
                                   human_bytes(bytes))};
}

/// The keys' input and the values' (if any).
struct Inputs {
  LoadedInput keys;
  std::optional<LoadedInput> values;

  void check_counts(size_t key_count, size_t value_count) const {
    if (value_count != key_count) {
      throw AppError(fmt::format("{} has {} values but {} has {} keys", values->file.name(), value_count,
                                 keys.file.name(), key_count));
    }
  }
};

/// Opens the values' input beside the keys' (streams held within what the keys leave of the budget), and checks
/// the counts where the headers give them.
void open_values(const Options& options, const HostBudget& budget, Inputs& inputs) {
  if (options.values_input.empty()) return;
  const size_t keys_held = inputs.keys.file.in_memory() ? inputs.keys.file.size() : 0;
  inputs.values = open_input(options.values_input, options.values_format, options.values_type,
                             budget.bytes - std::min(budget.bytes, keys_held), budget.limit_name);
  if (inputs.keys.shape.count && inputs.values->shape.count) {
    inputs.check_counts(*inputs.keys.shape.count, *inputs.values->shape.count);
  }
}

/// Text is parsed into host memory for a sort in core; where that alone would pass the host budget, the sort
/// streams it instead. Binary and npy inputs are read from the file as the sort asks: loading them costs nothing.
void load_text_within(size_t host_bytes, unsigned threads, Inputs& inputs) {
  const auto text_bytes = [](const LoadedInput& input) {
    return input.format() == Format::Text ? input.max_count() * key_type_size(input.shape.type) : 0;
  };
  if (text_bytes(inputs.keys) + (inputs.values ? text_bytes(*inputs.values) : 0) > host_bytes) return;
  load(inputs.keys, threads);
  if (inputs.values) {
    load(*inputs.values, threads);
    inputs.check_counts(inputs.keys.column.count, inputs.values->column.count);
  }
}

SortRequest sort_request(const Options& options, const Inputs& inputs) {
  SortRequest request;
  request.key_type = inputs.keys.shape.type;
  request.count = inputs.keys.loaded ? inputs.keys.column.count : inputs.keys.max_count();
  request.descending = options.descending;
  request.argsort = options.argsort;
  request.value_bytes = inputs.values ? key_type_size(inputs.values->shape.type) : 0;
  return request;
}

/// The outputs, opened before any work (an unwritable target fails first), and their writers once the sort knows
/// how to fill them.
struct Outputs {
  std::optional<AtomicOutput> keys;
  std::optional<AtomicOutput> values;
  std::optional<OutputWriter> key_writer;
  std::optional<OutputWriter> value_writer;

  explicit Outputs(const Options& options) {
    keys.emplace(options.output);
    if (!options.values_output.empty()) values.emplace(options.values_output);
  }

  /// Outputs whose size is known are mapped and filled by several threads, in core and out of core with the
  /// buckets in host memory; with spill files (little host memory) they are appended to at the pace of the sort.
  void make_writers(const Inputs& inputs, KeyType key_type, size_t key_count, size_t value_count, bool map_outputs,
                    unsigned threads, Progress* progress) {
    key_writer.emplace(*keys, inputs.keys.format(), key_type, key_count, map_outputs, threads, progress);
    if (inputs.values) {
      value_writer.emplace(*values, inputs.values->format(), inputs.values->shape.type, value_count, map_outputs,
                           threads, progress);
    }
  }

  /// Completes the files and puts them under their names, then lets the mappings go.
  void commit() {
    key_writer->finish();
    if (value_writer) value_writer->finish();
    keys->commit();
    if (values) values->commit();
    keys->release();
    if (values) values->release();
  }
};

/// The sort in core: the backend reads the inputs and writes the mapped outputs chunk by chunk. `release_inputs`
/// takes the inputs once the backend has read them, and frees them on its thread while the sort goes on.
void sort_in_core(Inputs& inputs, const SortRequest& request, KeyType output_type, bool on_gpu, unsigned threads,
                  SortBackend& backend, Outputs& outputs, Progress& progress, SortStats& stats,
                  BackgroundJob& release_inputs) {
  outputs.make_writers(inputs, output_type, request.count, request.count, true, threads, &progress);
  SortIo io;
  io.read_keys = column_reader(inputs.keys, threads, progress);
  io.write_keys = outputs.key_writer->chunk_writer();
  if (inputs.values) {
    io.read_values = column_reader(*inputs.values, threads, progress);
    io.write_values = outputs.value_writer->chunk_writer();
  }
  // While the GPU starts, the kernel reads binary inputs into the page cache, from which they are then copied.
  BackgroundJob prefault_inputs;
  if (on_gpu) {
    prefault_inputs = BackgroundJob([&] {
      if (inputs.keys.format() != Format::Text) inputs.keys.file.prefetch();
      if (inputs.values && inputs.values->format() != Format::Text) inputs.values->file.prefetch();
    });
  }
  // Once on the GPU, the inputs (a mapped file, parsed text) are released on another thread while the GPU sorts.
  io.inputs_read = [&] {
    prefault_inputs.join();
    release_inputs = BackgroundJob([old = std::move(inputs)] {});
  };
  backend.sort(request, io, stats);
}

/// The sort streamed (out of core): parsed text (if any was loaded) goes, the inputs are read element by element,
/// and the outputs are written as the buckets are sorted. Returns the count of keys sorted.
size_t sort_streamed(const Options& options, Inputs& inputs, const SortRequest& request, KeyType output_type,
                     const SortPlan& plan, const MemoryBudget& budget, SortBackend& backend, Outputs& outputs,
                     Progress& progress, SortStats& stats) {
  inputs.keys.column = Column{};
  if (inputs.values) inputs.values->column = Column{};
  // Text is parsed a block at a time, the blocks a small part of the host budget.
  const size_t text_block_bytes = std::clamp<size_t>(budget.host_bytes / 32, 4096, size_t(16) << 20);
  LoadedInput& keys = inputs.keys;
  ElementStream key_stream(keys.file, keys.format(), keys.shape.type, options.threads, text_block_bytes);
  std::optional<ElementStream> value_stream;
  if (inputs.values) {
    value_stream.emplace(inputs.values->file, inputs.values->format(), inputs.values->shape.type, options.threads,
                         text_block_bytes);
  }
  // The counts known up front go into npy headers.
  const bool map_outputs = keys.shape.count && (!inputs.values || inputs.values->shape.count) && !plan.spill;
  OutOfCoreIo io;
  io.writes_to_memory = map_outputs;
  io.keys = &key_stream;
  io.values = value_stream ? &*value_stream : nullptr;
  // The writers are made once the sort's staging memory is pinned: mapping a large output faults it in on other
  // threads, and pinning memory meanwhile would wait for that.
  io.staging_allocated = [&] {
    outputs.make_writers(inputs, output_type, keys.shape.count.value_or(0),
                         inputs.values ? inputs.values->shape.count.value_or(0) : 0, map_outputs, options.threads,
                         nullptr);
  };
  io.write_keys = [&](size_t first, size_t count, const void* source) {
    outputs.key_writer->write(first, count, source);
  };
  if (inputs.values) {
    io.write_values = [&](size_t first, size_t count, const void* source) {
      outputs.value_writer->write(first, count, source);
    };
  }
  io.spill_directory = spill_directory(options);
  io.threads = options.threads;
  return sort_out_of_core(backend, request, plan, budget, io, progress, stats);
}

Timings phase_timings(double read_seconds, const SortStats& stats, double commit_seconds, double total_seconds,
                      double gpu_wait_seconds) {
  Timings timings;
  timings.read = read_seconds + stats.read_seconds;
  timings.partition = stats.partition_seconds;
  timings.to_gpu = stats.to_device_seconds;
  timings.sort = stats.sort_seconds;
  timings.back = stats.to_host_seconds;
  timings.write = stats.write_seconds + commit_seconds;
  timings.total = total_seconds;
  timings.gpu_wait = gpu_wait_seconds;
  timings.setup = std::max(0.0, timings.total - timings.read - timings.partition - timings.to_gpu - timings.sort -
                                    timings.back - timings.write);
  return timings;
}

/// --top K: the input streams through the backend in chunks, each chunk's top taken together with the winners so
/// far (which come from earlier in the input, so equal keys keep their input order), and the last winners are
/// written. Each key is read once and, on the GPU, copied up once.
int run_top(const Options& options, Backend backend_choice, const LoadedInput& input,
            std::future<std::shared_ptr<GpuResources>>& gpu_found, Clock::time_point start, Outputs& outputs) {
  const size_t k = *options.top;
  const KeyType type = input.shape.type;
  const size_t key_size = key_type_size(type);
  const HostBudget host = host_budget(options);
  std::shared_ptr<GpuResources> gpu = use_gpu(backend_choice, gpu_found);
  std::unique_ptr<SortBackend> backend = gpu ? make_gpu_backend(gpu) : make_cpu_backend();
  const MemoryBudget budget = memory_budget(options, *backend);
  // Winners carried from chunk to chunk, and the largest chunk (the whole input where it fits) whose top, beside
  // them, fits the backend's budget while the chunk, the winners and the new winners fit the host's.
  const size_t max_count = input.max_count();
  const size_t kept = std::min(k, max_count);
  const auto fits = [&](size_t chunk) {
    return backend->top_bytes(TopRequest{type, kept + chunk, k, options.descending}) <= budget.device_bytes &&
           (2 * kept + chunk) * key_size <= host.bytes;
  };
  size_t chunk = std::max<size_t>(max_count, 1);
  constexpr size_t min_chunk = size_t(1) << 16;
  while (chunk > min_chunk && !fits(chunk)) chunk /= 2;
  if (!fits(chunk)) {
    throw AppError(fmt::format("--top {}: the winners and a chunk of {} keys take more than the memory budget ({} "
                               "on the {}, {} of host memory); give a smaller K, or sort the whole file",
                               k, chunk, human_bytes(budget.device_bytes), backend->device(), human_bytes(host.bytes)));
  }
  std::unique_ptr<std::byte[]> pool(new std::byte[(kept + chunk) * key_size]);
  std::unique_ptr<std::byte[]> winners(new std::byte[std::max<size_t>(kept, 1) * key_size]);
  const size_t text_block_bytes = std::clamp<size_t>(host.bytes / 32, 4096, size_t(16) << 20);
  ElementStream stream(input.file, input.format(), type, options.threads, text_block_bytes);
  SortStats stats;
  stats.device = backend->device();
  double read_seconds = 0;
  size_t have = 0;  // winners at the pool's start
  size_t total = 0;
  size_t chunks = 0;
  for (;;) {
    const auto read_start = Clock::now();
    const size_t got = stream.read(chunk, pool.get() + have * key_size);
    read_seconds += seconds_since(read_start);
    if (got == 0) break;
    total += got;
    ++chunks;
    backend->top(TopRequest{type, have + got, k, options.descending, options.threads}, pool.get(), winners.get(),
                 stats);
    have = std::min(k, have + got);
    std::memcpy(pool.get(), winners.get(), have * key_size);
  }
  const auto write_start = Clock::now();
  outputs.key_writer.emplace(*outputs.keys, input.format(), type, have, true, options.threads, nullptr);
  if (have > 0) outputs.key_writer->write(0, have, pool.get());
  outputs.commit();
  const double write_seconds = seconds_since(write_start);
  if (options.stats) {
    fmt::print(stderr, "radix_sort: the {} {} of {} {} keys from {} ({}) on {}, in {} chunk{} of up to {} keys\n",
               have, options.descending ? "largest" : "smallest", total, key_type_name(type), input.file.name(),
               format_name(input.format()), stats.device, chunks, chunks == 1 ? "" : "s", chunk);
    fmt::print(stderr, "  read    {:8.3f} s\n", read_seconds);
    if (gpu) fmt::print(stderr, "  to GPU  {:8.3f} s\n", stats.to_device_seconds);
    fmt::print(stderr, "  select  {:8.3f} s\n", stats.sort_seconds);
    if (gpu) fmt::print(stderr, "  back    {:8.3f} s\n", stats.to_host_seconds);
    fmt::print(stderr, "  write   {:8.3f} s\n  total   {:8.3f} s  (wall, end to end)\n", write_seconds,
               seconds_since(start));
  }
  return 0;
}

}  // namespace

int run(const Options& options) {
  const auto start = Clock::now();
  // Starting the CUDA driver and context takes a while; let it happen while the input is read.
  const Backend backend_choice = choose_backend(options);
  std::future<std::shared_ptr<GpuResources>> gpu_found;
  if (!options.check && backend_choice != Backend::Cpu) gpu_found = std::async(std::launch::async, gpu_initialize);

  // A --tmpdir that cannot take spill files is an error whether or not this input would spill.
  if (!options.tmpdir.empty()) check_spill_directory(options.tmpdir);
  std::optional<Outputs> outputs;
  if (!options.check) outputs.emplace(options);

  // Streams (stdin, pipes, devices) are held in memory whole: within the host budget, so that an endless one
  // (/dev/zero, `yes`) is an error rather than the end of the machine's memory.
  const HostBudget host = host_budget(options);
  Inputs inputs{open_input(options.input, options.format, options.type, host.bytes, host.limit_name), {}};
  if (options.check) return check_sorted(inputs.keys, options.descending, options.threads);
  if (options.top) return run_top(options, backend_choice, inputs.keys, gpu_found, start, *outputs);
  open_values(options, host, inputs);
  load_text_within(host.bytes, options.threads, inputs);
  const double read_seconds = seconds_since(start);

  SortRequest request = sort_request(options, inputs);
  SortStats stats;
  const auto gpu_wait_start = Clock::now();
  std::shared_ptr<GpuResources> gpu = use_gpu(backend_choice, gpu_found);
  const double gpu_wait_seconds = seconds_since(gpu_wait_start);
  std::unique_ptr<SortBackend> backend = gpu ? make_gpu_backend(gpu) : make_cpu_backend();
  const MemoryBudget budget = memory_budget(options, *backend);
  const size_t loaded_bytes =
      inputs.keys.loaded ? inputs.keys.column.bytes() + (inputs.values ? inputs.values->column.bytes() : 0) : 0;
  const SortPlan plan = plan_sort(*backend, request, loaded_bytes, budget);
  Progress progress(options.progress,
                    inputs.keys.file.size() + (inputs.values ? inputs.values->file.size() : 0));

  const KeyType output_type = options.argsort ? KeyType::U64 : request.key_type;
  InputSummary summary{inputs.keys.file.name(), inputs.keys.format(), inputs.keys.file.size(),
                       request.count * key_type_size(request.key_type)};
  BackgroundJob release_inputs;
  if (plan.in_core) {
    sort_in_core(inputs, request, output_type, gpu != nullptr, options.threads, *backend, *outputs, progress, stats,
                 release_inputs);
  } else {
    request.count = sort_streamed(options, inputs, request, output_type, plan, budget, *backend, *outputs, progress,
                                  stats);
    summary.key_bytes = request.count * key_type_size(request.key_type);
  }
  const auto commit_start = Clock::now();
  // The staging buffers are freed while the outputs are completed.
  BackgroundJob release_gpu([old_backend = std::move(backend), old_gpu = std::move(gpu)] {});
  outputs->commit();
  release_gpu.join();
  release_inputs.join();
  const Timings timings =
      phase_timings(read_seconds, stats, seconds_since(commit_start), seconds_since(start), gpu_wait_seconds);
  progress.clear();
  if (options.stats) print_stats(summary, request, stats, timings);
  return 0;
}

}  // namespace radix_sort
