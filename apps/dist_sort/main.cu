// dist_sort: sorts keys spread over several GPUs with prims::dist::radix_sort_keys, validates the result across the
// ranks, and prints one line per rank. Two ways to start it:
//   one process per GPU   mpirun -np 2 dist_sort ...                      (NCCL id through MPI, if built with it)
//                         RANK=r WORLD_SIZE=2 LOCAL_RANK=r dist_sort --id-file /tmp/id ...   (torchrun-style)
//                         Ranks come from OMPI_COMM_WORLD_*, PMI_* or RANK/WORLD_SIZE/LOCAL_RANK; with --id-file
//                         rank 0 writes the NCCL unique id to the file (atomically) and the others wait for it.
//   one process           dist_sort --single-process [--gpus N]: ncclCommInitAll, one host thread per GPU.
// Exit codes: 0 sorted and checked, 1 wrong or failed, 77 fewer GPUs than the ranks on this host need.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "prims/dist.cuh"
#include "prims/dist/unique_id_file.cuh"
#include "prims/util/cuda_handles.cuh"
#include "prims/util/device_buffer.cuh"
#include "prims/util/error.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/mix_bits.cuh"

#if PRIMS_DIST_SORT_WITH_MPI
#include <mpi.h>
#endif

namespace {

constexpr int kSkipped = 77;

struct Options {
  size_t n_per_rank = size_t{1} << 24;
  std::string type = "u32";
  uint64_t seed = 1;
  bool descending = false;
  std::string id_file;
  bool single_process = false;
  int gpus = 0;  // --single-process: 0 means every visible GPU
  double id_timeout_s = 120;
};

/// Where this process stands among the ranks, as the launcher said.
struct Placement {
  int rank;
  int world_size;
  int local_rank;
  int local_world_size;  // ranks on this host, 0 when the launcher does not say
};

void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(result)));
}

std::optional<int> environment_int(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::stoi(value);
}

/// Ranks from mpirun (Open MPI, then PMI as MPICH and Slurm set it) or torchrun; nullopt when none is set.
std::optional<Placement> placement_from_environment() {
  struct Names {
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
  };
  for (const Names& names : {Names{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE"},
                             Names{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                             Names{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}}) {
    const auto rank = environment_int(names.rank);
    const auto size = environment_int(names.size);
    if (!rank || !size) continue;
    // Without a local rank, ranks are assumed to fill the hosts in order, one per GPU.
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
    const int local_rank = environment_int(names.local_rank).value_or(gpus > 0 ? *rank % gpus : 0);
    return Placement{*rank, *size, local_rank, environment_int(names.local_size).value_or(0)};
  }
  return std::nullopt;
}

/// Rank `rank`'s keys: random bits for integers, numbers in (-1000, 1000) for floats.
template <class K>
__global__ void generate_kernel(K* keys, size_t n, uint64_t seed, uint64_t rank) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint64_t bits = prims::mix_bits(seed * 0x9e3779b97f4a7c15ull + (rank << 40) + i);
    if constexpr (std::is_floating_point_v<K>) {
      keys[i] = static_cast<K>(static_cast<double>(static_cast<int64_t>(bits)) * 0x1.0p-63 * 1000.0);
    } else {
      keys[i] = static_cast<K>(bits);
    }
  }
}

/// What the checks of one rank add up: a permutation-invariant hash sum of the keys before and after the sort,
/// and the places where the order is broken (inside the rank, and between its last key and the next rank's first).
struct Checks {
  unsigned long long hash_before;
  unsigned long long hash_after;
  unsigned long long out_of_order;
};

template <class K>
__global__ void hash_kernel(const K* keys, size_t n, unsigned long long* hash) {
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    sum += prims::mix_bits(static_cast<uint64_t>(prims::RadixKey<K>::raw_bits(keys[i])));
  }
  atomicAdd(hash, sum);
}

template <class K>
__global__ void out_of_order_kernel(const K* keys, size_t n, prims::Order order, unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = 1 + blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    local += prims::sort_bits(keys[i], order, 0, 8 * sizeof(K)) < prims::sort_bits(keys[i - 1], order, 0, 8 * sizeof(K));
  }
  if (local != 0) atomicAdd(count, local);
}

/// Sorts this rank's keys and checks the result with the other ranks; returns whether every rank is right.
template <class K>
bool sort_one_rank(ncclComm_t comm, int rank, int ranks, int device, const Options& options) {
  const size_t n = options.n_per_rank;
  const prims::Order order = options.descending ? prims::Order::Descending : prims::Order::Ascending;
  const prims::Stream stream;
  const cudaStream_t s = stream.get();
  prims::DeviceBuffer<K> keys(n), sorted(n), next_first(1);
  prims::DeviceBuffer<Checks> checks(1);
  prims::DeviceBuffer<uint64_t> barrier_word(1);
  prims::check(cudaMemsetAsync(checks.data(), 0, sizeof(Checks), s), "cudaMemset");
  if (n > 0) {
    generate_kernel<<<1024, 256, 0, s>>>(keys.data(), n, options.seed, static_cast<uint64_t>(rank));
    hash_kernel<<<1024, 256, 0, s>>>(keys.data(), n, &checks.data()->hash_before);
    prims::check(cudaGetLastError(), "generating keys");
  }

  size_t temp_bytes = 0;
  check_nccl(prims::dist::radix_sort_keys<K>(comm, nullptr, temp_bytes, nullptr, nullptr, n, order), "size query");
  prims::DeviceBuffer<unsigned char> temp(temp_bytes);
  auto sort = [&] {
    check_nccl(prims::dist::radix_sort_keys(comm, temp.data(), temp_bytes, keys.data(), sorted.data(), n, order, s),
               "prims::dist::radix_sort_keys");
  };
  sort();  // warm-up: NCCL sets up its connections on first use
  // Start together: an all-reduce of one word, waited for, then the timed sort.
  check_nccl(ncclAllReduce(barrier_word.data(), barrier_word.data(), 1, ncclUint64, ncclSum, comm, s), "barrier");
  stream.synchronize("barrier");
  const auto start = std::chrono::steady_clock::now();
  sort();
  stream.synchronize("the sort");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Checks: order inside the rank, order across the boundary with the next rank, and the same keys overall.
  if (n > 0) {
    out_of_order_kernel<<<1024, 256, 0, s>>>(sorted.data(), n, order, &checks.data()->out_of_order);
    hash_kernel<<<1024, 256, 0, s>>>(sorted.data(), n, &checks.data()->hash_after);
    prims::check(cudaGetLastError(), "checking");
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  if (rank > 0 && n > 0) check_nccl(ncclSend(sorted.data(), sizeof(K), ncclUint8, rank - 1, comm, s), "ncclSend");
  if (rank + 1 < ranks && n > 0) {
    check_nccl(ncclRecv(next_first.data(), sizeof(K), ncclUint8, rank + 1, comm, s), "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  Checks own{};
  prims::check(cudaMemcpyAsync(&own, checks.data(), sizeof(Checks), cudaMemcpyDeviceToHost, s), "copy back");
  stream.synchronize("checks");
  if (rank + 1 < ranks && n > 0) {
    K last{};
    prims::check(cudaMemcpy(&last, sorted.data() + n - 1, sizeof(K), cudaMemcpyDeviceToHost), "last key");
    const K next = next_first.download(1)[0];
    const int bits = 8 * static_cast<int>(sizeof(K));
    own.out_of_order += prims::sort_bits(next, order, 0, bits) < prims::sort_bits(last, order, 0, bits);
  }
  prims::check(cudaMemcpyAsync(checks.data(), &own, sizeof(Checks), cudaMemcpyHostToDevice, s), "copy");
  check_nccl(ncclAllReduce(checks.data(), checks.data(), 3, ncclUint64, ncclSum, comm, s), "ncclAllReduce");
  Checks all{};
  prims::check(cudaMemcpyAsync(&all, checks.data(), sizeof(Checks), cudaMemcpyDeviceToHost, s), "copy back");
  stream.synchronize("checks");

  const bool ok = all.out_of_order == 0 && all.hash_before == all.hash_after;
  const double total = static_cast<double>(n) * ranks;
  fmt::print("rank {}/{} on GPU {}: {} {} keys sorted in {:.2f} ms ({:.2f} Gkeys/s over all ranks): {}\n", rank,
             ranks, device, n, options.type, seconds * 1e3, total / seconds * 1e-9,
             ok ? "sorted, same keys"
                : fmt::format("WRONG ({} out of order, hashes {:x} before, {:x} after)", all.out_of_order,
                              all.hash_before, all.hash_after));
  std::fflush(stdout);
  return ok;
}

bool sort_one_rank(ncclComm_t comm, int rank, int ranks, int device, const Options& options) {
  if (options.type == "u32") return sort_one_rank<uint32_t>(comm, rank, ranks, device, options);
  if (options.type == "i32") return sort_one_rank<int32_t>(comm, rank, ranks, device, options);
  if (options.type == "u64") return sort_one_rank<uint64_t>(comm, rank, ranks, device, options);
  if (options.type == "i64") return sort_one_rank<int64_t>(comm, rank, ranks, device, options);
  if (options.type == "f32") return sort_one_rank<float>(comm, rank, ranks, device, options);
  return sort_one_rank<double>(comm, rank, ranks, device, options);
}

/// --single-process: every GPU (or the first --gpus) is one rank, driven by its own host thread.
int run_single_process(const Options& options) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    fmt::print("dist_sort: no GPU, skipped\n");
    return kSkipped;
  }
  if (options.gpus > gpus) {
    fmt::print("dist_sort: {} GPUs asked for, {} found, skipped\n", options.gpus, gpus);
    return kSkipped;
  }
  const int ranks = options.gpus > 0 ? options.gpus : gpus;
  std::vector<ncclComm_t> comms(static_cast<size_t>(ranks));
  check_nccl(ncclCommInitAll(comms.data(), ranks, nullptr), "ncclCommInitAll");
  std::vector<int> results(static_cast<size_t>(ranks), 0);
  const std::vector<std::string> errors = prims::dist::on_each_gpu(ranks, [&](int r) {
    results[static_cast<size_t>(r)] = sort_one_rank(comms[static_cast<size_t>(r)], r, ranks, r, options) ? 1 : 0;
  });
  for (int r = 0; r < ranks; ++r) {
    const std::string& error = errors[static_cast<size_t>(r)];
    if (!error.empty()) fmt::print(stderr, "dist_sort: rank {}: {}\n", r, error);
  }
  for (ncclComm_t comm : comms) ncclCommDestroy(comm);
  for (int ok : results) {
    if (!ok) return 1;
  }
  return 0;
}

/// One rank of a multi-process run.
int run_rank(const Options& options, const Placement& placement) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  const int needed = std::max(placement.local_world_size, placement.local_rank + 1);
  if (gpus < needed) {
    fmt::print("dist_sort: rank {} needs {} GPUs on this host, found {}: skipped\n", placement.rank, needed, gpus);
    return kSkipped;
  }
  prims::check(cudaSetDevice(placement.local_rank), "cudaSetDevice");
  ncclUniqueId id{};
  if (placement.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (!options.id_file.empty()) {
    if (placement.rank == 0) {
      prims::dist::write_unique_id_file(options.id_file, id);
    } else {
      id = prims::dist::read_unique_id_file(options.id_file, options.id_timeout_s);
    }
  } else {
#if PRIMS_DIST_SORT_WITH_MPI
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    throw std::runtime_error("built without MPI: give the NCCL id through --id-file");
#endif
  }
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, placement.world_size, id, placement.rank), "ncclCommInitRank");
  // Every rank has joined: the id file has served.
  if (placement.rank == 0 && !options.id_file.empty()) std::remove(options.id_file.c_str());
  const bool ok = sort_one_rank(comm, placement.rank, placement.world_size, placement.local_rank, options);
  ncclCommDestroy(comm);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // NCCL_NVLS_ENABLE=0 turns off NVLink SHARP (NVLS, NVLink multicast), which some systems cannot set up (no
  // fabric manager or multicast support, or a container without access to it). A value already set wins.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  Options options;
  CLI::App app{"Sorts keys spread over several GPUs with prims::dist::radix_sort_keys and checks the result",
               "dist_sort"};
  app.add_option("--n-per-rank", options.n_per_rank, "keys on every rank");
  app.add_option("--type", options.type, "key type")->check(CLI::IsMember({"u32", "i32", "u64", "i64", "f32", "f64"}));
  app.add_option("--seed", options.seed, "seed of the generated keys");
  app.add_flag("--descending", options.descending, "sort largest first");
  app.add_option("--id-file", options.id_file,
                 "share the NCCL unique id through this file (rank 0 writes it; it must not exist before)");
  app.add_option("--id-timeout", options.id_timeout_s, "seconds the other ranks wait for the id file");
  app.add_flag("--single-process", options.single_process, "one process, one thread per GPU (ncclCommInitAll)");
  app.add_option("--gpus", options.gpus, "--single-process: use the first N GPUs (default: all)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (options.single_process) return run_single_process(options);
#if PRIMS_DIST_SORT_WITH_MPI
    const bool use_mpi = options.id_file.empty();
    if (use_mpi) MPI_Init(&argc, &argv);
#endif
    const auto placement = placement_from_environment();
    if (!placement) {
      fmt::print(stderr, "dist_sort: no rank in the environment (start it with mpirun or torchrun, or set RANK, "
                         "WORLD_SIZE and LOCAL_RANK), or use --single-process\n");
      return 1;
    }
    const int code = run_rank(options, *placement);
#if PRIMS_DIST_SORT_WITH_MPI
    if (use_mpi) MPI_Finalize();
#endif
    return code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dist_sort: error: {}\n", e.what());
    return 1;
  }
}
