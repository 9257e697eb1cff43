// bench_dist_sort: keys/s of one GPU against P GPUs on the same total. One GPU: prims::device::radix_sort_keys and
// cub::DeviceRadixSort::SortKeys of the whole input on GPU 0. P GPUs: prims::dist::radix_sort_keys with the input
// split evenly, one host thread per GPU, communicators from ncclCommInitAll. The distributed sort is timed phase by
// phase (CUDA events between the detail phases: partition with the splitters, exchange, local sort); its time is
// the slowest rank's. u32 keys from 2^--min-log2 to 2^--max-log2 in total (default 2^28 .. 2^32, sizes that do not
// fit the GPU are skipped), and u64 keys at 2^--u64-log2 (default 2^30). Uniform keys (every bit random).
// Inputs are only read by every contender, so each timed run sorts the same unsorted input. Median of --repeats
// runs. Both outputs are checked against prims' one-GPU output. --json writes the results in the harness's format.
#include <cub/device/device_radix_sort.cuh>

#include <fmt/format.h>
#include <nccl.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/dist.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::DeviceBuffer;
using prims::Event;
using prims::check;

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(result)));
}

constexpr int kPhases = 3;
constexpr const char* kPhaseNames[kPhases] = {"partition", "exchange", "local sort"};

struct Result {
  std::string type;
  size_t n;
  size_t key_bytes;
  double one_gpu_ms;
  double cub_ms;
  double dist_ms;
  std::array<double, kPhases> phase_ms;
  bool cub_correct;
  bool dist_correct;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Device-to-device copy bandwidth of GPU 0 (read + write), as the harness measures it.
double copy_bandwidth_gbs() {
  const size_t n = size_t{1} << 28;
  DeviceBuffer<int> a(n), b(n);
  check(cudaMemset(a.data(), 1, a.bytes()), "cudaMemset");
  const Event start, stop;
  std::vector<double> times;
  for (int i = 0; i < 11; ++i) {
    start.record(0);
    check(cudaMemcpyAsync(b.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice, 0), "copy");
    stop.record(0);
    times.push_back(Event::milliseconds_between(start, stop));
  }
  return 2.0 * static_cast<double>(a.bytes()) / (median(times) * 1e6);
}

/// One rank of the distributed sort: its shard, output, temporary storage, stream and phase events.
template <class K>
struct Rank {
  int device;
  ncclComm_t comm;
  size_t n;
  DeviceBuffer<K> keys, sorted;
  DeviceBuffer<unsigned char> temp;
  DeviceBuffer<uint64_t> barrier_word{1};
  prims::Stream stream;
  std::array<Event, kPhases + 1> events;

  Rank(int device_, ncclComm_t comm_, size_t n_) : device(device_), comm(comm_), n(n_), keys(n_), sorted(n_) {
    size_t bytes = 0;
    check_nccl(prims::dist::radix_sort_keys<K>(comm, nullptr, bytes, nullptr, nullptr, n), "size query");
    temp = DeviceBuffer<unsigned char>(bytes);
  }

  /// One timed sort, phase by phase; returns the milliseconds of each phase.
  std::array<double, kPhases> sort() {
    using Sort = prims::dist::detail::DistributedRadixSort<K, prims::detail::NoValues>;
    const cudaStream_t s = stream.get();
    // Start together.
    check_nccl(ncclAllReduce(barrier_word.data(), barrier_word.data(), 1, ncclUint64, ncclSum, comm, s), "barrier");
    stream.synchronize("barrier");
    std::optional<Sort> sort;
    size_t bytes = temp.size();
    events[0].record(s);
    check_nccl(Sort::create(comm, temp.data(), bytes, {keys.data(), sorted.data(), nullptr, nullptr}, n,
                            prims::Order::Ascending, s, sort),
               "create");
    check_nccl(sort->partition(), "partition");
    events[1].record(s);
    check_nccl(sort->exchange(), "exchange");
    events[2].record(s);
    check_nccl(sort->local_sort(), "local sort");
    events[3].record(s);
    std::array<double, kPhases> ms{};
    for (int p = 0; p < kPhases; ++p) ms[p] = Event::milliseconds_between(events[p], events[p + 1]);
    return ms;
  }
};

/// Runs body(rank) on one host thread per rank with its GPU current, rethrowing the first failure.
template <class Body>
void on_every_rank(int ranks, Body body) {
  for (const std::string& error : prims::dist::on_each_gpu(ranks, body)) {
    if (!error.empty()) throw std::runtime_error(error);
  }
}

size_t free_bytes(int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

template <class K>
std::optional<Result> bench_case(const std::vector<ncclComm_t>& comms, size_t total, int repeats) {
  const int ranks = static_cast<int>(comms.size());
  const size_t per_rank = total / static_cast<size_t>(ranks);
  const size_t key_bytes = sizeof(K);
  // GPU 0 holds the input, two outputs and the sort's storage (about one more copy) for the one-GPU runs.
  const size_t one_gpu_bytes = total * key_bytes * 5;
  if (one_gpu_bytes > free_bytes(0)) {
    fmt::print("skipped 2^{:.0f} {}: one GPU would need {:.1f} GiB\n", std::log2(double(total)),
               prims::bench::type_name<K>(), one_gpu_bytes / double(1 << 30));
    return std::nullopt;
  }
  Result result{prims::bench::type_name<K>(), total, key_bytes, 0, 0, 0, {}, false, false};

  check(cudaSetDevice(0), "cudaSetDevice");
  DeviceBuffer<K> input(total), reference(total);
  prims::bench::generate_keys(input.data(), total, 1);
  {
    DeviceBuffer<K> cub_out(total);
    size_t prims_bytes = 0, cub_bytes = 0;
    check(prims::device::radix_sort_keys(nullptr, prims_bytes, input.data(), reference.data(), total), "size");
    check(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, input.data(), cub_out.data(), total), "size");
    DeviceBuffer<unsigned char> temp(std::max(prims_bytes, cub_bytes));
    const Event start, stop;
    std::vector<double> prims_ms, cub_ms;
    for (int run = -1; run < repeats; ++run) {  // run -1 warms up
      start.record(0);
      check(prims::device::radix_sort_keys(temp.data(), prims_bytes, input.data(), reference.data(), total), "prims");
      stop.record(0);
      const double prims_run = Event::milliseconds_between(start, stop);
      start.record(0);
      check(cub::DeviceRadixSort::SortKeys(temp.data(), cub_bytes, input.data(), cub_out.data(), total), "CUB");
      stop.record(0);
      const double cub_run = Event::milliseconds_between(start, stop);
      if (run >= 0) {
        prims_ms.push_back(prims_run);
        cub_ms.push_back(cub_run);
      }
    }
    result.one_gpu_ms = median(prims_ms);
    result.cub_ms = median(cub_ms);
    result.cub_correct = prims::bench::same_bits(cub_out.data(), reference.data(), total);
  }

  // The shards: the input split evenly (the last rank takes the remainder).
  std::vector<std::unique_ptr<Rank<K>>> shards;
  for (int r = 0; r < ranks; ++r) {
    const size_t n = r + 1 == ranks ? total - per_rank * static_cast<size_t>(ranks - 1) : per_rank;
    check(cudaSetDevice(r), "cudaSetDevice");
    shards.push_back(std::make_unique<Rank<K>>(r, comms[static_cast<size_t>(r)], n));
    check(cudaMemcpyPeer(shards.back()->keys.data(), r, input.data() + per_rank * static_cast<size_t>(r), 0,
                         n * key_bytes),
          "copying a shard");
  }
  input = DeviceBuffer<K>();  // room for the distributed runs on GPU 0
  std::vector<double> dist_ms;
  std::vector<std::array<double, kPhases>> phase_ms;
  for (int run = -1; run < repeats; ++run) {
    std::vector<std::array<double, kPhases>> rank_phases(static_cast<size_t>(ranks));
    on_every_rank(ranks, [&](int r) { rank_phases[static_cast<size_t>(r)] = shards[static_cast<size_t>(r)]->sort(); });
    if (run < 0) continue;
    // The slowest rank's phases and total.
    std::array<double, kPhases> slowest{};
    double slowest_total = 0;
    for (const auto& phases : rank_phases) {
      double rank_total = 0;
      for (int p = 0; p < kPhases; ++p) {
        slowest[p] = std::max(slowest[p], phases[p]);
        rank_total += phases[p];
      }
      slowest_total = std::max(slowest_total, rank_total);
    }
    dist_ms.push_back(slowest_total);
    phase_ms.push_back(slowest);
  }
  result.dist_ms = median(dist_ms);
  for (int p = 0; p < kPhases; ++p) {
    std::vector<double> values;
    for (const auto& phases : phase_ms) values.push_back(phases[p]);
    result.phase_ms[p] = median(values);
  }

  // Each rank's output is its slice of the one-GPU output.
  check(cudaSetDevice(0), "cudaSetDevice");
  DeviceBuffer<K> staging(per_rank + total % static_cast<size_t>(ranks));
  result.dist_correct = true;
  for (int r = 0; r < ranks; ++r) {
    const Rank<K>& shard = *shards[static_cast<size_t>(r)];
    check(cudaMemcpyPeer(staging.data(), 0, shard.sorted.data(), r, shard.n * key_bytes), "copying back");
    result.dist_correct = result.dist_correct &&
                          prims::bench::same_bits(staging.data(), reference.data() + per_rank * r, shard.n);
  }
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");  // each rank's stream and events go with their own device
    shards[static_cast<size_t>(r)].reset();
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  return result;
}

void print_row(const Result& r) {
  auto rate = [&](double ms) { return r.n / (ms * 1e6); };
  fmt::print("{:<5} {:>6.1f} {:>12.2f} {:>12.2f} {:>13.2f}{:<7} {:>8.2f}x {:>10.2f} {:>10.2f} {:>10.2f}\n", r.type,
             std::log2(double(r.n)), rate(r.one_gpu_ms), rate(r.cub_ms), rate(r.dist_ms),
             r.dist_correct && r.cub_correct ? "" : " WRONG", r.one_gpu_ms / r.dist_ms, r.phase_ms[0], r.phase_ms[1],
             r.phase_ms[2]);
  std::fflush(stdout);
}

void write_json(const std::string& path, const std::string& device, int ranks, double copy_gbs, int repeats,
                const std::vector<Result>& results) {
  std::ofstream out(path);
  out << fmt::format("{{\n  \"bench\": \"bench_dist_sort\",\n  \"device\": \"{}\",\n  \"gpus\": {},\n"
                     "  \"copy_gbs\": {:.1f},\n  \"repeats\": {},\n  \"results\": [\n",
                     device, ranks, copy_gbs, repeats);
  const std::string dist = fmt::format("prims {} GPUs", ranks);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << fmt::format("    {{\"bench\": \"sort\", \"type\": \"{}\", \"variant\": \"{} GPUs\", \"n\": {}, "
                       "\"bytes_per_item\": {}, ",
                       r.type, ranks, r.n, r.key_bytes);
    out << fmt::format("\"median_ms\": {{\"{}\": {:.6f}, \"prims 1 GPU\": {:.6f}, \"CUB 1 GPU\": {:.6f}}}, ", dist,
                       r.dist_ms, r.one_gpu_ms, r.cub_ms);
    out << fmt::format("\"correct\": {{\"{}\": {}, \"prims 1 GPU\": true, \"CUB 1 GPU\": {}}}, ", dist,
                       r.dist_correct ? "true" : "false", r.cub_correct ? "true" : "false");
    out << fmt::format("\"phase_ms\": {{\"{}\": {:.6f}, \"{}\": {:.6f}, \"{}\": {:.6f}}}}}", kPhaseNames[0],
                       r.phase_ms[0], kPhaseNames[1], r.phase_ms[1], kPhaseNames[2], r.phase_ms[2]);
    out << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  // NVLink multicast stays off on the machines this runs on; an explicit setting in the environment wins.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  int min_log2 = 28, max_log2 = 32, u64_log2 = 30, repeats = 10, gpus = 0;
  std::string json_path;
  CLI::App app{"bench_dist_sort: one GPU against several on the same keys"};
  app.add_option("--min-log2", min_log2, "smallest total of u32 keys, as a power of two");
  app.add_option("--max-log2", max_log2, "largest total of u32 keys, as a power of two");
  app.add_option("--u64-log2", u64_log2, "total of u64 keys, as a power of two (0: none)");
  app.add_option("--repeats", repeats, "timed runs per contender (the median is reported)")->check(CLI::PositiveNumber);
  app.add_option("--gpus", gpus, "GPUs of the distributed sort (default: all)");
  app.add_option("--json", json_path, "write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    const int ranks = gpus > 0 ? std::min(gpus, count) : count;
    std::vector<ncclComm_t> comms(static_cast<size_t>(ranks));
    check_nccl(ncclCommInitAll(comms.data(), ranks, nullptr), "ncclCommInitAll");
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    check(cudaSetDevice(0), "cudaSetDevice");
    const double copy_gbs = copy_bandwidth_gbs();
    fmt::print("bench_dist_sort on {} x {}; GPU 0 device-to-device copy {:.0f} GB/s\n", ranks, props.name, copy_gbs);
    fmt::print("{:<5} {:>6} {:>12} {:>12} {:>20} {:>9} {:>10} {:>10} {:>10}\n", "type", "log2n", "1 GPU Gk/s",
               "CUB Gk/s", fmt::format("{} GPUs Gk/s", ranks), "speed-up", "part. ms", "exch. ms", "sort ms");
    std::vector<Result> results;
    auto record = [&](std::optional<Result> result) {
      if (!result) return;
      print_row(*result);
      results.push_back(*result);
    };
    for (int log2n = min_log2; log2n <= max_log2; ++log2n) {
      record(bench_case<uint32_t>(comms, size_t{1} << log2n, repeats));
    }
    if (u64_log2 > 0) record(bench_case<uint64_t>(comms, size_t{1} << u64_log2, repeats));
    if (!json_path.empty()) write_json(json_path, props.name, ranks, copy_gbs, repeats, results);
    for (ncclComm_t comm : comms) ncclCommDestroy(comm);
    const bool all_correct = std::all_of(results.begin(), results.end(),
                                         [](const Result& r) { return r.dist_correct && r.cub_correct; });
    if (!all_correct) fmt::print("bench_dist_sort: some outputs were WRONG (marked in the table)\n");
    return all_correct ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_dist_sort: error: {}\n", e.what());
    return 1;
  }
}
