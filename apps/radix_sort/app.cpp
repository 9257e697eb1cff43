#include "app.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <string>

#include "backend.hpp"
#include "errors.hpp"
#include "file_io.hpp"
#include "formats.hpp"
#include "gpu_backend.hpp"
#include "key_order.hpp"
#include "parallel.hpp"

namespace radix_sort {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// A one-line progress report on stderr, shown only on a terminal and only for inputs large enough to take a while.
class Progress {
 public:
  explicit Progress(size_t total_bytes)
      : enabled_(::isatty(STDERR_FILENO) && total_bytes >= (size_t(256) << 20)), last_(Clock::now()) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() {
    if (shown_) fmt::print(stderr, "\r\033[K");
  }

  /// Reports `done` of `total` elements of a phase, at most ten times a second.
  void update(const char* phase, size_t done, size_t total) {
    if (!enabled_ || total == 0 || seconds_since(last_) < 0.1) return;
    last_ = Clock::now();
    shown_ = true;
    fmt::print(stderr, "\rradix_sort: {} {:3.0f}%\033[K", phase, 100.0 * static_cast<double>(done) / total);
  }

 private:
  bool enabled_;
  bool shown_ = false;
  Clock::time_point last_;
};

/// Whether the GPU sorts, once `gpu_found` is known: the CPU when asked, or (for auto) when there is no GPU.
bool use_gpu(Backend backend, std::future<bool>& gpu_found) {
  if (backend == Backend::Cpu) return false;
  if (gpu_found.get()) return true;
  if (backend == Backend::Gpu) throw AppError("--backend gpu: no CUDA GPU found");
  fmt::print(stderr, "radix_sort: no CUDA GPU found; sorting on the CPU\n");
  return false;
}

/// An input read and decoded: the file stays mapped while the column points into it.
struct LoadedInput {
  InputFile file;
  Format format;
  Column column;
};

LoadedInput load_input(const std::string& path, Format format, std::optional<KeyType> type, unsigned threads) {
  InputFile file = InputFile::open(path);
  const Format resolved = resolve_format(format, file.name(), file.bytes());
  Column column = load_column(file.bytes(), resolved, type, threads, file.name());
  return {std::move(file), resolved, std::move(column)};
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

/// --check: 0 when sorted, else 1 after naming the first out-of-order element like sort -c.
int check_sorted(const LoadedInput& input, bool descending) {
  const Column& column = input.column;
  const auto disorder = visit_key_type(column.type, [&](auto tag) {
    using K = typename decltype(tag)::type;
    return first_disorder(column.as<K>(), column.count, descending);
  });
  if (!disorder) return 0;
  const size_t element = key_type_size(column.type);
  const std::string value = format_key(column.type, static_cast<const char*>(column.data) + *disorder * element);
  if (input.format == Format::Text) {
    fmt::print(stderr, "radix_sort: {}:{}: disorder: {}\n", input.file.name(),
               text_line_of_value(input.file.bytes(), *disorder), value);
  } else {
    fmt::print(stderr, "radix_sort: {}: disorder at index {}: {}\n", input.file.name(), *disorder, value);
  }
  return 1;
}

/// Reads elements of a loaded column into a backend's buffer.
ChunkReader column_reader(const Column& column, unsigned threads, Progress& progress) {
  const size_t element = key_type_size(column.type);
  return [&column, element, threads, &progress](size_t first, size_t count, void* destination) {
    parallel_copy(destination, static_cast<const char*>(column.data) + first * element, count * element, threads);
    progress.update("reading", first + count, column.count);
  };
}

/// Writes elements of `type` to an output in `format` (an npy header must already be written).
ChunkWriter output_writer(AtomicOutput& output, Format format, KeyType type, size_t total, unsigned threads,
                          Progress& progress) {
  const size_t element = key_type_size(type);
  return [&output, format, type, element, total, threads, &progress](size_t first, size_t count, const void* source) {
    if (format == Format::Text) {
      format_text(source, type, count, threads, [&output](std::string_view text) { output.write(text); });
    } else {
      output.write(source, count * element);
    }
    progress.update("writing", first + count, total);
  };
}

void print_stats(const LoadedInput& keys, const SortRequest& request, const SortStats& stats, double load_seconds,
                 double commit_seconds, double total_seconds) {
  const size_t key_bytes = keys.column.bytes();
  const size_t file_bytes = keys.file.bytes().size();
  auto rate = [](size_t bytes, double seconds) {
    return seconds > 0 ? fmt::format("{:7.2f} GB/s", static_cast<double>(bytes) / seconds / 1e9)
                       : std::string("      -");
  };
  fmt::print(stderr, "radix_sort: {} {} keys ({:.1f} MB) from {} ({}), sorted {} on {}\n", request.count,
             key_type_name(request.key_type), static_cast<double>(key_bytes) / 1e6, keys.file.name(),
             format_name(keys.format), request.descending ? "descending" : "ascending", stats.device);
  if (request.count > 0) {
    fmt::print(stderr, "radix_sort: min {}, max {}\n", format_key(request.key_type, stats.smallest_key.data()),
               format_key(request.key_type, stats.largest_key.data()));
  }
  const double read_seconds = load_seconds + stats.read_seconds;
  const double write_seconds = stats.write_seconds + commit_seconds;
  fmt::print(stderr, "  read    {:8.3f} s  {}  (file {:.1f} MB)\n", read_seconds, rate(file_bytes, read_seconds),
             static_cast<double>(file_bytes) / 1e6);
  fmt::print(stderr, "  to GPU  {:8.3f} s  {}\n", stats.to_device_seconds,
             rate(stats.bytes_to_device, stats.to_device_seconds));
  fmt::print(stderr, "  sort    {:8.3f} s  {}  ({:.0f} Mkeys/s)\n", stats.sort_seconds,
             rate(key_bytes, stats.sort_seconds),
             stats.sort_seconds > 0 ? static_cast<double>(request.count) / stats.sort_seconds / 1e6 : 0.0);
  fmt::print(stderr, "  back    {:8.3f} s  {}\n", stats.to_host_seconds,
             rate(stats.bytes_to_host, stats.to_host_seconds));
  fmt::print(stderr, "  write   {:8.3f} s  {}\n", write_seconds, rate(key_bytes, write_seconds));
  fmt::print(stderr, "  total   {:8.3f} s  {}  (wall, end to end; copies overlap reading and writing)\n", total_seconds,
             rate(file_bytes, total_seconds));
}

}  // namespace

int run(const Options& options) {
  const auto start = Clock::now();
  // Starting the CUDA driver and context takes a while; let it happen while the input is read.
  std::future<bool> gpu_found;
  if (!options.check && options.backend != Backend::Cpu) gpu_found = std::async(std::launch::async, gpu_initialize);

  // Open the outputs first, so an unwritable target fails before any work.
  std::optional<AtomicOutput> output;
  std::optional<AtomicOutput> values_output;
  if (!options.check) output.emplace(options.output);
  if (!options.values_output.empty()) values_output.emplace(options.values_output);

  LoadedInput keys = load_input(options.input, options.format, options.type, options.threads);
  if (options.check) return check_sorted(keys, options.descending);
  std::optional<LoadedInput> values;
  if (!options.values_input.empty()) {
    values = load_input(options.values_input, options.format, options.values_type, options.threads);
    if (values->column.count != keys.column.count) {
      throw AppError(fmt::format("{} has {} values but {} has {} keys", values->file.name(), values->column.count,
                                 keys.file.name(), keys.column.count));
    }
  }
  const double load_seconds = seconds_since(start);

  SortRequest request;
  request.key_type = keys.column.type;
  request.count = keys.column.count;
  request.descending = options.descending;
  request.argsort = options.argsort;
  request.value_bytes = values ? key_type_size(values->column.type) : 0;

  Progress progress(keys.column.bytes());
  const KeyType output_type = options.argsort ? KeyType::U64 : request.key_type;
  if (keys.format == Format::Npy) output->write(make_npy_header(output_type, request.count));
  SortIo io;
  io.read_keys = column_reader(keys.column, options.threads, progress);
  io.write_keys = output_writer(*output, keys.format, output_type, request.count, options.threads, progress);
  if (values) {
    if (values->format == Format::Npy) values_output->write(make_npy_header(values->column.type, request.count));
    io.read_values = column_reader(values->column, options.threads, progress);
    io.write_values =
        output_writer(*values_output, values->format, values->column.type, request.count, options.threads, progress);
  }

  SortStats stats;
  if (use_gpu(options.backend, gpu_found)) {
    gpu_sort(request, io, stats);
  } else {
    cpu_sort(request, io, stats);
  }
  const auto commit_start = Clock::now();
  output->commit();
  if (values_output) values_output->commit();
  const double commit_seconds = seconds_since(commit_start);
  if (options.stats) print_stats(keys, request, stats, load_seconds, commit_seconds, seconds_since(start));
  return 0;
}

}  // namespace radix_sort
