// bench_dist_sort: keys/s of one GPU against P GPUs on the same total. One GPU: prims::device::radix_sort_keys and
// cub::DeviceRadixSort::SortKeys of the whole input on GPU 0. P GPUs: prims::dist::radix_sort_keys with the input
// split evenly, one host thread per GPU, communicators from ncclCommInitAll. The distributed sort is timed phase by
// phase (CUDA events: partition with the splitters; the exchange, which is the local sort's first digit pass
// gathering the pieces from the peers, and of it the counting before that pass; the local sort's other digits); its
// time is the slowest rank's. u32 keys from 2^--min-log2 to 2^--max-log2 in total (default 2^28 .. 2^32, sizes that do not
// fit the GPU are skipped), and u64 keys at 2^--u64-log2 (default 2^30). Uniform keys (every bit random).
// The harness (harness.cuh) runs the three contenders interleaved, in an order that rotates every round, each run
// after an L2 flush (GPU 0's by the harness; every rank flushes its own GPU's before its timed phases) with its
// outputs poisoned; median of --repeats runs. Inputs are only read by every contender, so each timed run sorts the
// same unsorted input, and every check verifies them against their fingerprints. Every output is checked on its own
// after its contender's last timed run: sorted and holding the input's keys (a fingerprint); the distributed one
// across the ranks, each rank's last key no greater than the next rank's first. --json writes the results in the
// harness's format, with each case's phases.
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

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/dist.cuh"
#include "sort_inputs.cuh"

namespace {

using prims::DeviceBuffer;
using prims::Event;
using prims::check;
using prims::bench::Contender;

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(result)));
}

/// The distributed sort's phases as timed: the partition with the splitters, the exchange in two parts (counting
/// each piece's digits, with the copies ahead beside it, and the counts' sends; then the pass that gathers the
/// pieces, sorted on the lowest digit), and the sort of the other digits.
constexpr int kPhases = 4;
constexpr const char* kPhaseNames[kPhases] = {"partition", "counting", "gathering", "sort"};

struct Result {
  std::string type;
  size_t n;
  size_t key_bytes;
  double one_gpu_ms;
  double cub_ms;
  double dist_ms;
  std::array<double, kPhases> phase_ms;
  bool one_gpu_correct;
  bool cub_correct;
  bool dist_correct;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// One rank of the distributed sort: its shard (and the shard's fingerprint), output, temporary storage, stream,
/// phase events and L2 flush.
template <class K>
struct Rank {
  int device;
  ncclComm_t comm;
  size_t n;
  DeviceBuffer<K> keys, sorted;
  DeviceBuffer<unsigned char> temp;
  DeviceBuffer<uint64_t> barrier_word{1};
  prims::Stream stream;
  std::array<Event, 6> events;  // start, partitioned, exchange begin, gathering begin, exchange end, sorted
  prims::bench::L2Flush l2_flush;
  uint64_t keys_fingerprint = 0;

  Rank(int device_, ncclComm_t comm_, size_t n_) : device(device_), comm(comm_), n(n_), keys(n_), sorted(n_) {
    size_t bytes = 0;
    check_nccl(prims::dist::radix_sort_keys<K>(comm, nullptr, bytes, nullptr, nullptr, n), "size query");
    temp = DeviceBuffer<unsigned char>(bytes);
  }

  /// One timed sort, phase by phase; returns the milliseconds of each phase, then of the whole. Untimed before the
  /// first phase: the output is poisoned, this GPU's L2 flushed, and the ranks start together.
  std::array<double, kPhases + 1> sort() {
    using Sort = prims::dist::detail::DistributedRadixSort<K, prims::detail::NoValues>;
    const cudaStream_t s = stream.get();
    check(cudaMemsetAsync(sorted.data(), 0xff, sorted.bytes(), s), "poisoning the output");
    l2_flush.flush(s);
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
    const typename Sort::PhaseEvents phase_events{events[2].get(), events[3].get(), events[4].get(),
                                                  events[5].get()};
    check_nccl(sort->exchange_and_sort(&phase_events), "exchange and sort");
    // The slowest rank's total decides the time; each phase is reported as its slowest rank's.
    return {Event::milliseconds_between(events[0], events[1]), Event::milliseconds_between(events[2], events[3]),
            Event::milliseconds_between(events[3], events[4]), Event::milliseconds_between(events[4], events[5]),
            Event::milliseconds_between(events[0], events[5])};
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

/// Whether the ranks' outputs are the input sorted (each sorted, each rank's last key no greater than the next
/// rank's first, and together the input's keys: `input_keys`, a multiset fingerprint), and every shard is intact.
template <class K>
bool is_distributed_sort(const std::vector<std::unique_ptr<Rank<K>>>& shards, uint64_t input_keys) {
  const prims::bench::WholeKey<K> order_of;
  bool correct = true;
  uint64_t output_keys = 0;
  std::optional<typename prims::RadixKey<K>::Bits> previous_last;
  for (const auto& shard : shards) {
    check(cudaSetDevice(shard->device), "cudaSetDevice");
    const K* sorted = shard->sorted.data();
    const size_t n = shard->n;
    const size_t unsorted = prims::bench::count_if(
        n, [=] __device__(size_t i) { return i + 1 < n && order_of(sorted[i + 1]) < order_of(sorted[i]); });
    K first, last;
    check(cudaMemcpy(&first, sorted, sizeof(K), cudaMemcpyDeviceToHost), "reading a rank's first key");
    check(cudaMemcpy(&last, sorted + n - 1, sizeof(K), cudaMemcpyDeviceToHost), "reading a rank's last key");
    correct = correct && unsorted == 0 && (!previous_last || *previous_last <= order_of(first)) &&
              prims::bench::fingerprint(shard->keys.data(), n) == shard->keys_fingerprint;
    previous_last = order_of(last);
    output_keys += prims::bench::multiset_fingerprint(sorted, n, n);
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  return correct && output_keys == input_keys;
}

template <class K>
std::optional<Result> bench_case(prims::bench::Harness& harness, const std::vector<ncclComm_t>& comms, size_t total) {
  const int ranks = static_cast<int>(comms.size());
  const std::string dist_name = fmt::format("prims {} GPUs", ranks);
  if (!harness.selected({"sort", prims::bench::type_name<K>(), fmt::format("{} GPUs", ranks)})) return std::nullopt;
  const size_t per_rank = total / static_cast<size_t>(ranks);
  const size_t key_bytes = sizeof(K);
  // GPU 0 holds, for the one-GPU contenders, the input, two outputs and two sorts' storage (about one copy each),
  // and rank 0's shard, output and storage (about two copies).
  const size_t gpu0_bytes = key_bytes * (total * 5 + per_rank * 4);
  if (gpu0_bytes > free_bytes(0)) {
    fmt::print("skipped 2^{:.0f} {}: GPU 0 would need {:.1f} GiB\n", std::log2(double(total)),
               prims::bench::type_name<K>(), gpu0_bytes / double(1 << 30));
    return std::nullopt;
  }

  check(cudaSetDevice(0), "cudaSetDevice");
  DeviceBuffer<K> input(total), prims_out(total), cub_out(total);
  prims::bench::generate_keys(input.data(), total, 1);
  const uint64_t input_fingerprint = prims::bench::fingerprint(input.data(), total);
  const uint64_t input_keys = prims::bench::multiset_fingerprint(input.data(), total, total);
  constexpr int kBits = 8 * int{sizeof(K)};
  size_t prims_bytes = 0, cub_bytes = 0;
  check(prims::device::radix_sort_keys(nullptr, prims_bytes, input.data(), prims_out.data(), total), "size");
  check(cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, input.data(), cub_out.data(), total), "size");
  DeviceBuffer<unsigned char> prims_temp(prims_bytes), cub_temp(cub_bytes);

  // The shards: the input split evenly (the last rank takes the remainder).
  std::vector<std::unique_ptr<Rank<K>>> shards;
  for (int r = 0; r < ranks; ++r) {
    const size_t n = r + 1 == ranks ? total - per_rank * static_cast<size_t>(ranks - 1) : per_rank;
    check(cudaSetDevice(r), "cudaSetDevice");
    shards.push_back(std::make_unique<Rank<K>>(r, comms[static_cast<size_t>(r)], n));
    Rank<K>& shard = *shards.back();
    check(cudaMemcpyPeer(shard.keys.data(), r, input.data() + per_rank * static_cast<size_t>(r), 0, n * key_bytes),
          "copying a shard");
    shard.keys_fingerprint = prims::bench::fingerprint(shard.keys.data(), n);
  }
  check(cudaSetDevice(0), "cudaSetDevice");

  // Every distributed run's phases (the slowest rank's), the warm-up first, and the last run's total.
  std::vector<std::array<double, kPhases>> phase_runs;
  double last_dist_ms = 0;
  auto one_gpu_sorted = [&](const K* out) {
    return prims::bench::is_sorted_permutation(input.data(), out, total, total) &&
           prims::bench::fingerprint(input.data(), total) == input_fingerprint;
  };
  const std::vector<Contender> contenders = {
      {dist_name,
       [&](cudaStream_t s) {
         check(cudaStreamSynchronize(s), "waiting for GPU 0's L2 flush");  // lest it overlap rank 0's phases
         std::vector<std::array<double, kPhases + 1>> rank_phases(static_cast<size_t>(ranks));
         on_every_rank(ranks,
                       [&](int r) { rank_phases[static_cast<size_t>(r)] = shards[static_cast<size_t>(r)]->sort(); });
         std::array<double, kPhases> slowest{};
         double slowest_total = 0;
         for (int r = 0; r < ranks; ++r) {
           for (int p = 0; p < kPhases; ++p) slowest[p] = std::max(slowest[p], rank_phases[static_cast<size_t>(r)][p]);
           slowest_total = std::max(slowest_total, rank_phases[static_cast<size_t>(r)][kPhases]);
         }
         phase_runs.push_back(slowest);
         last_dist_ms = slowest_total;
       },
       [&] { return is_distributed_sort(shards, input_keys); }, {}, [&] { return last_dist_ms; }},
      {"prims 1 GPU",
       [&](cudaStream_t s) {
         check(prims::device::radix_sort_keys(prims_temp.data(), prims_bytes, input.data(), prims_out.data(), total,
                                              prims::Order::Ascending, 0, kBits, s),
               "prims");
       },
       [&] { return one_gpu_sorted(prims_out.data()); }, {prims::bench::output(prims_out.data(), total)}},
      {"CUB 1 GPU",
       [&](cudaStream_t s) {
         check(cub::DeviceRadixSort::SortKeys(cub_temp.data(), cub_bytes, input.data(), cub_out.data(), total, 0,
                                              kBits, s),
               "CUB");
       },
       [&] { return one_gpu_sorted(cub_out.data()); }, {prims::bench::output(cub_out.data(), total)}},
  };
  const std::vector<prims::bench::Timing> timings = harness.measure(contenders);
  Result result{prims::bench::type_name<K>(),
                total,
                key_bytes,
                timings[1].median_ms,
                timings[2].median_ms,
                timings[0].median_ms,
                {},
                timings[1].correct,
                timings[2].correct,
                timings[0].correct};
  for (int p = 0; p < kPhases; ++p) {
    std::vector<double> values;
    for (size_t run = 1; run < phase_runs.size(); ++run) values.push_back(phase_runs[run][p]);  // past the warm-up
    result.phase_ms[p] = median(values);
  }
  for (int r = 0; r < ranks; ++r) {
    check(cudaSetDevice(r), "cudaSetDevice");  // each rank's stream and events go with their own device
    shards[static_cast<size_t>(r)].reset();
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  return result;
}

bool all_correct(const Result& r) { return r.dist_correct && r.one_gpu_correct && r.cub_correct; }

void print_row(const Result& r) {
  auto rate = [&](double ms) { return r.n / (ms * 1e6); };
  fmt::print("{:<5} {:>6.1f} {:>12.2f} {:>12.2f} {:>13.2f}{:<7} {:>8.2f}x {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n",
             r.type, std::log2(double(r.n)), rate(r.one_gpu_ms), rate(r.cub_ms), rate(r.dist_ms),
             all_correct(r) ? "" : " WRONG", r.one_gpu_ms / r.dist_ms, r.phase_ms[0], r.phase_ms[1] + r.phase_ms[2],
             r.phase_ms[1], r.phase_ms[3]);
  std::fflush(stdout);
}

void write_json(const prims::bench::Harness& harness, int ranks, const std::vector<Result>& results) {
  std::ofstream out(harness.json_path());
  out << fmt::format("{{\n  \"bench\": \"bench_dist_sort\",\n  \"device\": \"{}\",\n  \"gpus\": {},\n"
                     "  \"cub_version\": \"{}\",\n  \"copy_gbs\": {:.1f},\n  \"repeats\": {},\n  \"results\": [\n",
                     harness.device_name(), ranks, prims::bench::Harness::cccl_version(), harness.copy_gbs(),
                     harness.repeats());
  const std::string dist = fmt::format("prims {} GPUs", ranks);
  auto json_bool = [](bool value) { return value ? "true" : "false"; };
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << fmt::format("    {{\"bench\": \"sort\", \"type\": \"{}\", \"variant\": \"{} GPUs\", \"n\": {}, "
                       "\"bytes_per_item\": {}, ",
                       r.type, ranks, r.n, r.key_bytes);
    out << fmt::format("\"median_ms\": {{\"{}\": {:.6f}, \"prims 1 GPU\": {:.6f}, \"CUB 1 GPU\": {:.6f}}}, ", dist,
                       r.dist_ms, r.one_gpu_ms, r.cub_ms);
    out << fmt::format("\"correct\": {{\"{}\": {}, \"prims 1 GPU\": {}, \"CUB 1 GPU\": {}}}, ", dist,
                       json_bool(r.dist_correct), json_bool(r.one_gpu_correct), json_bool(r.cub_correct));
    // "exchange": the counting and the gathering together, as results before the split had it.
    out << fmt::format("\"phase_ms\": {{\"{}\": {:.6f}, \"exchange\": {:.6f}, \"{}\": {:.6f}, \"{}\": {:.6f}, "
                       "\"{}\": {:.6f}}}}}",
                       kPhaseNames[0], r.phase_ms[0], r.phase_ms[1] + r.phase_ms[2], kPhaseNames[1], r.phase_ms[1],
                       kPhaseNames[2], r.phase_ms[2], kPhaseNames[3], r.phase_ms[3]);
    out << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  if (!out) throw std::runtime_error("cannot write " + harness.json_path());
}

}  // namespace

int main(int argc, char** argv) {
  // NCCL_NVLS_ENABLE=0 turns off NVLink SHARP (NVLS, NVLink multicast), which some systems cannot set up (no
  // fabric manager or multicast support, or a container without access to it). A value already set wins.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  try {
    int u64_log2 = 30, gpus = 0;
    prims::bench::Harness harness(argc, argv, "bench_dist_sort", 28, 32, 1, 10, [&](CLI::App& app) {
      app.add_option("--u64-log2", u64_log2, "total of u64 keys, as a power of two (0: none)");
      app.add_option("--gpus", gpus, "GPUs of the distributed sort (default: all)");
    });
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    const int ranks = gpus > 0 ? std::min(gpus, count) : count;
    std::vector<ncclComm_t> comms(static_cast<size_t>(ranks));
    check_nccl(ncclCommInitAll(comms.data(), ranks, nullptr), "ncclCommInitAll");
    check(cudaSetDevice(0), "cudaSetDevice");
    fmt::print("the distributed sort on {} GPUs; keys/s of one GPU (prims, CUB) and of {} GPUs (prims)\n", ranks,
               ranks);
    fmt::print("{:<5} {:>6} {:>12} {:>12} {:>20} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "type", "log2n", "1 GPU Gk/s",
               "CUB Gk/s", fmt::format("{} GPUs Gk/s", ranks), "speed-up", "part. ms", "exch. ms", "(count)",
               "sort ms");
    std::vector<Result> results;
    auto record = [&](std::optional<Result> result) {
      if (!result) return;
      print_row(*result);
      results.push_back(*result);
    };
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      record(bench_case<uint32_t>(harness, comms, size_t{1} << log2n));
    }
    if (u64_log2 > 0) record(bench_case<uint64_t>(harness, comms, size_t{1} << u64_log2));
    if (!harness.json_path().empty()) write_json(harness, ranks, results);
    for (ncclComm_t comm : comms) check_nccl(ncclCommDestroy(comm), "ncclCommDestroy");
    const bool correct = std::all_of(results.begin(), results.end(), all_correct);
    if (!correct) fmt::print("bench_dist_sort: some outputs were WRONG (marked in the table)\n");
    return correct ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_dist_sort: error: {}\n", e.what());
    return 1;
  }
}
