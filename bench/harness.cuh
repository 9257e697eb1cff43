#pragma once
// The one benchmark harness: every bench times prims, Thrust and CUB on the same device data in the same process,
// interleaving the contenders run by run (in an order that rotates each round), and reports medians of CUDA-event
// timings.
//
//   prims::bench::Harness harness(argc, argv, "bench_reduce");
//   harness.run_case({"sum", "i32", "WarpShuffle"}, n, bytes_per_item, {contender...}, prepare);
//   return harness.finish();   // prints the table, writes the JSON
//
// Honest timing: a warm-up run of each contender first; before every timed run the `prepare` step restores fresh
// input (a sort must get unsorted input every run), the contender's outputs are poisoned, and the L2 cache is flushed
// (by reading a buffer twice its size: a read leaves no dirty lines whose write-back would be charged to the run);
// none of it is timed. Thrust's temporary storage comes from a cache (thrust_allocator.cuh), as prims and CUB get
// theirs allocated before the timing. Every contender's check runs on the output of its last timed run. Bandwidth is
// reported against the device-to-device copy bandwidth measured at start-up.

#include <cub/version.cuh>
#include <cuda_runtime.h>
#include <thrust/execution_policy.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "prims/util/cuda_handles.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"
#include "prims/util/mix_bits.cuh"
#include "thrust_allocator.cuh"

namespace prims::bench {

/// A device range a contender writes. The harness poisons it (every byte 0xff: NaN for floats) before each run of
/// the contender, outside the timing, so that a check sees what the last timed run wrote and nothing older.
struct Output {
  void* data;
  size_t bytes;
};

template <class T>
Output output(T* data, size_t count) {
  return {data, count * sizeof(T)};
}

/// One contender in a case: a name ("prims", "Thrust", "CUB") and the work to time on the given stream.
/// `check` runs right after the contender's last timed run and returns false when that run's output is wrong;
/// every contender has one. `outputs` are poisoned before each run. `measured_ms`, for work the harness's events
/// on its stream cannot time (several GPUs), returns the milliseconds of the run just made. `compared_with` names
/// the contender its ratio column divides by (default: the first).
struct Contender {
  std::string name;
  std::function<void(cudaStream_t)> run;
  std::function<bool()> check = nullptr;
  std::vector<Output> outputs = {};
  std::function<double()> measured_ms = nullptr;
  std::string compared_with = {};
};

/// What a case measures: the algorithm family, the element type, and the variant of prims being timed.
struct CaseName {
  std::string bench;
  std::string type;
  std::string variant;
};

/// One contender's result in a case: the median of its timed runs, and whether its check passed.
struct Timing {
  double median_ms;
  bool correct;
};

struct Measurement {
  CaseName name;
  size_t n;
  double bytes_per_item;
  std::vector<std::string> contenders;
  std::vector<double> median_ms;
  std::vector<bool> correct;
  /// For each contender, the index of the contender its ratio divides by.
  std::vector<size_t> compared_with;
};

/// The short name of an element type in tables and JSON: i32, u64, f32, ...
template <class T>
const char* type_name() {
  if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? "f32" : "f64";
  } else {
    constexpr bool is_signed = std::is_signed_v<T>;
    switch (sizeof(T)) {
      case 1: return is_signed ? "i8" : "u8";
      case 2: return is_signed ? "i16" : "u16";
      case 4: return is_signed ? "i32" : "u32";
      default: return is_signed ? "i64" : "u64";
    }
  }
}

template <class T, class Make>
__global__ void generate_kernel(T* out, size_t n, uint64_t seed, Make make) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    out[i] = make(mix_bits(i * 0x9e3779b97f4a7c15ull + seed), i);
  }
}

/// Fills out[0..n) with make(random_bits, index) on the device.
template <class T, class Make>
void generate(T* out, size_t n, uint64_t seed, Make make) {
  if (n == 0) return;
  generate_kernel<<<1024, 256>>>(out, n, seed, make);
  check(cudaGetLastError(), "generate_kernel");
  check(cudaDeviceSynchronize(), "generating input");
}

/// Reads the whole buffer so that the L2 cache holds none of the data a timed run will touch. Reading (rather than
/// writing) leaves no dirty lines behind whose write-back would be charged to the next timed run.
template <class Word>
__global__ void flush_l2_kernel(const Word* buffer, size_t count, unsigned* sink) {
  unsigned x = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const Word v = buffer[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9e3779b9u) *sink = x;  // keeps the loads; practically never taken
}

/// Evicts the current GPU's L2 cache before a timed run: reads a buffer twice the cache's size (64 MiB at least).
class L2Flush {
 public:
  L2Flush() : buffer_(buffer_bytes()) { check(cudaMemset(buffer_.data(), 0x5a, buffer_.bytes()), "cudaMemset"); }

  void flush(cudaStream_t stream) const {
    flush_l2_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const uint4*>(buffer_.data()),
                                              buffer_.bytes() / sizeof(uint4), sink_.data());
    check(cudaGetLastError(), "flushing L2");
  }

 private:
  static size_t buffer_bytes() {
    int device = 0, l2_bytes = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
    return std::max<size_t>(2 * static_cast<size_t>(l2_bytes), size_t{64} << 20);
  }

  DeviceBuffer<unsigned char> buffer_;
  DeviceBuffer<unsigned> sink_{1};
};

/// Fills out[0..n) with small values: integers in [0, 255], floats in [0, 1). Sums and scans of them stay exact
/// (integers) or well conditioned (floats), so every contender's output can be compared.
template <class T>
void generate_small_values(T* out, size_t n, uint64_t seed) {
  generate(out, n, seed, [] __device__(uint64_t bits, size_t) {
    if constexpr (std::is_floating_point_v<T>) {
      return T(double(bits >> 11) * 0x1.0p-53);
    } else {
      return T(bits & 0xff);
    }
  });
}

class Harness {
 public:
  /// Parses the common options: --json FILE, --min-log2, --max-log2, --step-log2, --repeats, --filter TEXT;
  /// `add_options` adds a bench's own.
  Harness(int argc, char** argv, std::string bench_name, int default_min_log2 = 16, int default_max_log2 = 30,
          int default_step_log2 = 1, int default_repeats = 30,
          const std::function<void(CLI::App&)>& add_options = nullptr)
      : bench_name_(std::move(bench_name)),
        min_log2_(default_min_log2),
        max_log2_(default_max_log2),
        step_log2_(default_step_log2),
        repeats_(default_repeats) {
    CLI::App app{bench_name_ + ": prims against Thrust and CUB"};
    app.add_option("--json", json_path_, "write the results as JSON to this file");
    app.add_option("--min-log2", min_log2_, "smallest size, as a power of two");
    app.add_option("--max-log2", max_log2_, "largest size, as a power of two");
    app.add_option("--step-log2", step_log2_, "sizes step by this power of two (benches that sweep sizes)")
        ->check(CLI::PositiveNumber);
    app.add_option("--repeats", repeats_, "timed runs per contender (the median is reported)")
        ->check(CLI::PositiveNumber);
    app.add_option("--filter", filter_, "run only the cases whose \"bench type variant\" name contains this text");
    if (add_options) add_options(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      std::exit(app.exit(e));
    }
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    device_name_ = props.name;
    copy_gbs_ = measure_copy_bandwidth();
    fmt::print("{} on {} ({} SMs); device-to-device copy {:.0f} GB/s (read + write, 2^28 ints); CUB and Thrust {}\n",
               bench_name_, device_name_, props.multiProcessorCount, copy_gbs_, cccl_version());
  }

  /// The CUB (and Thrust) release this bench was compiled against (CUB_VERSION is MAJOR * 100000 + MINOR * 100 +
  /// PATCH).
  static std::string cccl_version() {
    return fmt::format("{}.{}.{}", CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100);
  }

  int min_log2() const { return min_log2_; }
  int max_log2() const { return max_log2_; }
  int step_log2() const { return step_log2_; }
  int repeats() const { return repeats_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& device_name() const { return device_name_; }
  double copy_gbs() const { return copy_gbs_; }
  cudaStream_t stream() const { return stream_.get(); }

  /// Thrust's CUDA policy on `stream`, its temporary storage from the harness's cache: a contender's Thrust call.
  auto thrust_on(cudaStream_t stream) { return thrust::cuda::par(thrust_allocator_).on(stream); }

  /// Whether --filter selects this case (every case when no filter was given).
  bool selected(const CaseName& name) const {
    return (name.bench + " " + name.type + " " + name.variant).find(filter_) != std::string::npos;
  }

  /// Times the contenders (see measure), prints a row and keeps it for the JSON.
  void run_case(const CaseName& name, size_t n, double bytes_per_item, const std::vector<Contender>& contenders,
                const std::function<void()>& prepare = [] {}) {
    if (!selected(name)) return;
    const std::vector<Timing> timings = measure(contenders, prepare);
    Measurement m{name, n, bytes_per_item, {}, {}, {}, {}};
    for (size_t c = 0; c < contenders.size(); ++c) {
      m.contenders.push_back(contenders[c].name);
      m.median_ms.push_back(timings[c].median_ms);
      m.correct.push_back(timings[c].correct);
      m.compared_with.push_back(index_of(contenders, contenders[c].compared_with));
    }
    print_row(m);
    results_.push_back(std::move(m));
  }

  /// Times every contender `repeats` times, interleaved, each run after `prepare`, the poisoning of its outputs and
  /// an L2 flush, and checks each on the output of its last timed run. The order rotates from round to round and
  /// runs backwards every other round, so that no contender always follows the same one (a contender that frees
  /// memory leaves the next one cold address translations; a rotation alone kept the first contender after the
  /// last in every round: 2-4% on the plain sort at small n).
  std::vector<Timing> measure(const std::vector<Contender>& contenders, const std::function<void()>& prepare = [] {}) {
    for (const Contender& contender : contenders) {
      if (!contender.check) throw std::logic_error(contender.name + " has no check: its figures would go unverified");
    }
    std::vector<std::vector<double>> times(contenders.size());
    std::vector<Timing> timings(contenders.size(), Timing{0, true});
    size_t thrust_allocations_after_warm_up = 0;
    for (int round = -1; round < repeats_; ++round) {  // round -1 is the warm-up
      if (round == 0) thrust_allocations_after_warm_up = thrust_allocator_.device_allocations();
      for (size_t turn = 0; turn < contenders.size(); ++turn) {
        const size_t step = (turn + static_cast<size_t>(round + 1)) % contenders.size();
        const size_t c = round % 2 == 0 ? step : contenders.size() - 1 - step;
        const Contender& contender = contenders[c];
        prepare();
        for (const Output& output : contender.outputs) {
          check(cudaMemsetAsync(output.data, 0xff, output.bytes, stream_.get()), "poisoning an output");
        }
        l2_flush_.flush(stream_.get());
        start_.record(stream_.get());
        contender.run(stream_.get());
        check(cudaGetLastError(), contender.name.c_str());
        stop_.record(stream_.get());
        stop_.synchronize(contender.name.c_str());
        const double ms =
            contender.measured_ms ? contender.measured_ms() : Event::milliseconds_between(start_, stop_);
        if (round >= 0) times[c].push_back(ms);
        if (round + 1 == repeats_) timings[c].correct = contender.check();
      }
    }
    if (thrust_allocator_.device_allocations() != thrust_allocations_after_warm_up) {
      throw std::runtime_error("Thrust allocated device memory in a timed run: its time would include cudaMalloc");
    }
    thrust_allocator_.release();
    for (size_t c = 0; c < contenders.size(); ++c) {
      std::sort(times[c].begin(), times[c].end());
      timings[c].median_ms = times[c][times[c].size() / 2];
    }
    return timings;
  }

  /// Writes the JSON (when asked for) and returns the exit code: non-zero if any contender's output was wrong.
  int finish() {
    if (!json_path_.empty()) write_json();
    const bool all_correct = std::all_of(results_.begin(), results_.end(), [](const Measurement& m) {
      return std::all_of(m.correct.begin(), m.correct.end(), [](bool ok) { return ok; });
    });
    if (!all_correct) fmt::print("{}: some outputs were WRONG (marked in the table)\n", bench_name_);
    return all_correct ? 0 : 1;
  }

 private:
  /// The index of the contender named `name`; the first for an empty name.
  static size_t index_of(const std::vector<Contender>& contenders, const std::string& name) {
    if (name.empty()) return 0;
    for (size_t c = 0; c < contenders.size(); ++c) {
      if (contenders[c].name == name) return c;
    }
    throw std::logic_error("no contender named " + name);
  }

  double measure_copy_bandwidth() {
    const size_t n = size_t{1} << 28;
    DeviceBuffer<int> a(n), b(n);
    check(cudaMemset(a.data(), 1, a.bytes()), "cudaMemset");
    std::vector<float> times;
    for (int i = 0; i < 11; ++i) {
      start_.record(stream_.get());
      check(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice, stream_.get()), "copy");
      stop_.record(stream_.get());
      times.push_back(Event::milliseconds_between(start_, stop_));
    }
    std::sort(times.begin(), times.end());
    return 2.0 * a.bytes() / (times[times.size() / 2] * 1e6);
  }

  void print_row(const Measurement& m) {
    // Columns as wide as their names; a ratio that does not divide by the first contender names its divisor.
    auto ratio_name = [&](size_t c) {
      const size_t base = m.compared_with[c];
      return "x " + m.contenders[c] + (base == 0 ? "" : " / " + m.contenders[base]);
    };
    auto time_width = [&](size_t c) { return std::max<size_t>(10, m.contenders[c].size() + 3); };
    auto ratio_width = [&](size_t c) { return std::max<size_t>(9, ratio_name(c).size()); };
    if (!header_printed_) {
      std::string header = fmt::format("{:<10} {:<5} {:<14} {:>6}", "bench", "type", "variant", "log2n");
      for (size_t c = 0; c < m.contenders.size(); ++c) {
        header += fmt::format(" {:>{}}", m.contenders[c] + " us", time_width(c));
      }
      for (size_t c = 1; c < m.contenders.size(); ++c) {
        header += fmt::format(" {:>{}}", ratio_name(c), ratio_width(c));
      }
      header += fmt::format(" {:>9} {:>7} {:>9}", "GB/s", "% copy", "Gitems/s");
      fmt::print("{}\n", header);
      header_printed_ = true;
    }
    const double log2n = m.n > 0 ? std::log2(double(m.n)) : 0.0;
    std::string row = fmt::format("{:<10} {:<5} {:<14} {:>6.1f}", m.name.bench, m.name.type, m.name.variant, log2n);
    for (size_t c = 0; c < m.contenders.size(); ++c) {
      const std::string time = fmt::format("{:.1f}{}", m.median_ms[c] * 1e3, m.correct[c] ? "" : "!WRONG");
      row += fmt::format(" {:>{}}", time, time_width(c));
    }
    for (size_t c = 1; c < m.contenders.size(); ++c) {
      row += fmt::format(" {:>{}.2f}", m.median_ms[c] / m.median_ms[m.compared_with[c]], ratio_width(c));
    }
    const double gbs = m.bytes_per_item * m.n / (m.median_ms[0] * 1e6);
    row += fmt::format(" {:>9.0f} {:>6.1f}% {:>9.2f}", gbs, 100.0 * gbs / copy_gbs_, m.n / (m.median_ms[0] * 1e6));
    fmt::print("{}\n", row);
    std::fflush(stdout);
  }

  void write_json() const {
    std::ofstream out(json_path_);
    out << fmt::format(
        "{{\n  \"bench\": \"{}\",\n  \"device\": \"{}\",\n  \"cub_version\": \"{}\",\n  \"copy_gbs\": {:.1f},\n"
        "  \"repeats\": {},\n",
        bench_name_, device_name_, cccl_version(), copy_gbs_, repeats_);
    out << "  \"results\": [\n";
    for (size_t i = 0; i < results_.size(); ++i) {
      const Measurement& m = results_[i];
      out << fmt::format("    {{\"bench\": \"{}\", \"type\": \"{}\", \"variant\": \"{}\", \"n\": {}, \"bytes_per_item\": {}, ",
                         m.name.bench, m.name.type, m.name.variant, m.n, m.bytes_per_item);
      out << "\"median_ms\": {";
      for (size_t c = 0; c < m.contenders.size(); ++c) {
        out << fmt::format("{}\"{}\": {:.6f}", c ? ", " : "", m.contenders[c], m.median_ms[c]);
      }
      out << "}, \"correct\": {";
      for (size_t c = 0; c < m.contenders.size(); ++c) {
        out << fmt::format("{}\"{}\": {}", c ? ", " : "", m.contenders[c], m.correct[c] ? "true" : "false");
      }
      out << "}";
      // Only the ratios that do not divide by the first contender are named (table.py reads them).
      std::string compared_with;
      for (size_t c = 1; c < m.contenders.size(); ++c) {
        if (m.compared_with[c] == 0) continue;
        compared_with += fmt::format("{}\"{}\": \"{}\"", compared_with.empty() ? "" : ", ", m.contenders[c],
                                     m.contenders[m.compared_with[c]]);
      }
      if (!compared_with.empty()) out << ", \"compared_with\": {" << compared_with << "}";
      out << "}" << (i + 1 < results_.size() ? ",\n" : "\n");
    }
    out << "  ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + json_path_);
  }

  std::string bench_name_;
  std::string json_path_;
  int min_log2_;
  int max_log2_;
  int step_log2_;
  int repeats_;
  std::string filter_;
  std::string device_name_;
  L2Flush l2_flush_;
  CachingAllocator thrust_allocator_;
  /// Blocking: the benches' set-up work on the default stream stays ordered with the timed runs.
  Stream stream_{cudaStreamDefault};
  Event start_;
  Event stop_;
  double copy_gbs_ = 0;
  bool header_printed_ = false;
  std::vector<Measurement> results_;
};

}  // namespace prims::bench
