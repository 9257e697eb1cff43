#pragma once
// The distributed radix sort in its three phases, each a member function so that a bench can time them apart:
//   partition   the shard partitioned by the top digit of the ordered key bits, then the exact splitters (the
//               boundary buckets refined digit by digit, one all-reduce a round; splitters.hpp has the arithmetic),
//               and an all-gather of every rank's cuts: the exchange plan. Synchronizes the stream once a round.
//   exchange    one grouped ncclSend/ncclRecv all-to-all of the plan's segments into keys_out (values_out); the
//               segment a rank keeps is a device copy.
//   local_sort  the single-GPU radix sort of what arrived, in place in keys_out. Segments arrive in source-rank
//               order, each in source-index order, and the sort is stable: ties keep (rank, index) order.
// With one rank only the local sort runs (keys_in to keys_out).
//
// Temporary storage (two-phase, carved by prims::detail::carve_temp), a function of n_local and the number of
// ranks only: the partitioned keys (and values), a scratch area shared by the partitions and the sort (they never
// run at once), the bucket offsets of one round (this rank's and the sum), and the counts the collectives move.

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "prims/device/radix_partition.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/dist/detail/nccl_error.cuh"
#include "prims/dist/detail/splitters.hpp"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::dist::detail {

template <class K, class V>
class DistributedRadixSort {
  static_assert(kIsRadixKey<K>, "distributed-sort keys are 1 to 8-byte integers, float or double");
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 16,
                "distributed-sort values are trivially copyable types of up to 16 bytes");
  static_assert(RadixKey<K>::kBits % kDigitBits == 0, "every splitter digit is a full partition digit");
  static_assert(sizeof(size_t) == sizeof(uint64_t), "bucket offsets are reduced as ncclUint64");

  using Buffers = prims::detail::PassBuffers<K, V>;
  static constexpr bool kHasValues = prims::detail::kHasValues<V>;
  static constexpr int kKeyBits = RadixKey<K>::kBits;
  static constexpr int kParts = 7;

 public:
  /// The two-phase entry: with temp == nullptr stores the bytes needed in temp_bytes (no communication: only the
  /// number of ranks is read from comm) and leaves `sort` empty; otherwise checks the arguments, carves temp and
  /// sets `sort`, ready for the phases.
  static ncclResult_t create(ncclComm_t comm, void* temp, size_t& temp_bytes, Buffers io, size_t n_local,
                             Order order, cudaStream_t stream, std::optional<DistributedRadixSort>& sort) {
    if (comm == nullptr) return ncclInvalidArgument;
    int ranks = 0;
    int rank = 0;
    int comm_device = 0;
    int current_device = 0;
    PRIMS_NCCL_TRY(ncclCommCount(comm, &ranks));
    PRIMS_NCCL_TRY(ncclCommUserRank(comm, &rank));
    PRIMS_NCCL_TRY(ncclCommCuDevice(comm, &comm_device));
    PRIMS_NCCL_TRY_CUDA(cudaGetDevice(&current_device));
    // Kernels run on the current device: it must be the communicator's.
    if (comm_device != current_device) return ncclInvalidUsage;
    if (temp != nullptr && n_local > 0 &&
        (io.keys_in == nullptr || io.keys_out == nullptr ||
         (kHasValues && (io.values_in == nullptr || io.values_out == nullptr)))) {
      return ncclInvalidArgument;
    }

    size_t scratch_bytes = 0;
    PRIMS_NCCL_TRY_CUDA(scratch_size(ranks, n_local, order, stream, scratch_bytes));
    const size_t partitioned = ranks > 1 ? n_local : 0;
    const size_t nodes = static_cast<size_t>(std::max(1, ranks - 1));
    const size_t offsets_bytes = nodes * kBucketOffsets * sizeof(uint64_t);
    const size_t boundaries = static_cast<size_t>(ranks - 1);
    const size_t sizes[kParts] = {partitioned * sizeof(K),
                                  kHasValues ? partitioned * sizeof(V) : 0,
                                  scratch_bytes,
                                  offsets_bytes,
                                  offsets_bytes,
                                  (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t),
                                  2 * boundaries * (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t)};
    void* parts[kParts];
    if (prims::detail::carve_temp(temp, temp_bytes, sizes, parts) != cudaSuccess) return ncclInvalidArgument;
    if (temp == nullptr) return ncclSuccess;

    sort.emplace(DistributedRadixSort(comm, ranks, rank, io, n_local, order, stream));
    DistributedRadixSort& s = *sort;
    s.partitioned_keys_ = static_cast<K*>(parts[0]);
    s.partitioned_values_ = static_cast<V*>(parts[1]);
    s.scratch_ = parts[2];
    s.scratch_bytes_ = scratch_bytes;
    s.local_offsets_ = static_cast<size_t*>(parts[3]);
    s.global_offsets_ = static_cast<size_t*>(parts[4]);
    s.own_count_ = static_cast<uint64_t*>(parts[5]);
    s.rank_counts_ = s.own_count_ + 1;
    s.own_cuts_ = static_cast<uint64_t*>(parts[6]);
    s.all_cuts_ = s.own_cuts_ + 2 * boundaries;
    return ncclSuccess;
  }

  /// Partition and exact splitters: leaves the exchange plan. Synchronizes the stream (the host needs the counts).
  ncclResult_t partition() {
    if (ranks_ == 1) return ncclSuccess;
    const DigitLayout layout{kKeyBits};
    // The top digit of the whole shard: the search's root.
    const Buffers whole{io_.keys_in, partitioned_keys_, io_.values_in, partitioned_values_};
    PRIMS_NCCL_TRY_CUDA(prims::detail::radix_partition_default(scratch_, scratch_bytes_, whole, n_, local_offsets_,
                                                               layout.begin_bit(0), layout.end_bit(0), order_,
                                                               stream_));
    const uint64_t own_count = n_;
    PRIMS_NCCL_TRY_CUDA(
        cudaMemcpyAsync(own_count_, &own_count, sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    PRIMS_NCCL_TRY(grouped([&] {
      PRIMS_NCCL_TRY(ncclAllReduce(local_offsets_, global_offsets_, kBucketOffsets, ncclUint64, ncclSum, comm_,
                                   stream_));
      return ncclAllGather(own_count_, rank_counts_, 1, ncclUint64, comm_, stream_);
    }));
    std::vector<uint64_t> rank_counts(static_cast<size_t>(ranks_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(rank_counts, rank_counts_));
    std::vector<uint64_t> local_offsets;
    std::vector<uint64_t> global_offsets;
    PRIMS_NCCL_TRY_CUDA(round_offsets(1, local_offsets, global_offsets));

    SplitterSearch search(std::move(rank_counts), rank_, kKeyBits);
    search.refine(local_offsets, global_offsets);
    while (!search.done()) {
      PRIMS_NCCL_TRY(refine_pending(search));
      PRIMS_NCCL_TRY(ncclAllReduce(local_offsets_, global_offsets_, search.pending().size() * kBucketOffsets,
                                   ncclUint64, ncclSum, comm_, stream_));
      PRIMS_NCCL_TRY_CUDA(round_offsets(search.pending().size(), local_offsets, global_offsets));
      search.refine(local_offsets, global_offsets);
    }

    // Every rank's cuts, so that each knows what it sends and what it receives.
    const std::vector<uint64_t> own_cuts = search.cut_summary();
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(own_cuts_, own_cuts.data(), own_cuts.size() * sizeof(uint64_t),
                                        cudaMemcpyHostToDevice, stream_));
    PRIMS_NCCL_TRY(ncclAllGather(own_cuts_, all_cuts_, own_cuts.size(), ncclUint64, comm_, stream_));
    std::vector<uint64_t> all_cuts(own_cuts.size() * static_cast<size_t>(ranks_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(all_cuts, all_cuts_));
    PRIMS_NCCL_TRY_CUDA(cudaStreamSynchronize(stream_));
    plan_ = search.exchange_plan(all_cuts);
    return ncclSuccess;
  }

  /// The all-to-all of the plan's segments into keys_out (values_out). Does not synchronize.
  ncclResult_t exchange() {
    if (ranks_ == 1) return ncclSuccess;
    const size_t self = static_cast<size_t>(rank_);
    PRIMS_NCCL_TRY_CUDA(copy_segment(io_.keys_out, partitioned_keys_, plan_.receive_offsets[self],
                                     plan_.send_offsets[self], plan_.send_counts[self]));
    if constexpr (kHasValues) {
      PRIMS_NCCL_TRY_CUDA(copy_segment(io_.values_out, partitioned_values_, plan_.receive_offsets[self],
                                       plan_.send_offsets[self], plan_.send_counts[self]));
    }
    return grouped([&] {
      for (int peer = 0; peer < ranks_; ++peer) {
        if (peer == rank_) continue;
        PRIMS_NCCL_TRY(send_receive(io_.keys_out, partitioned_keys_, peer));
        if constexpr (kHasValues) PRIMS_NCCL_TRY(send_receive(io_.values_out, partitioned_values_, peer));
      }
      return ncclSuccess;
    });
  }

  /// The stable single-GPU sort of the rank's keys into keys_out (values_out). Does not synchronize.
  ncclResult_t local_sort() {
    // With several ranks what arrived is in keys_out already: sort it in place.
    const Buffers io = ranks_ == 1 ? io_ : Buffers{io_.keys_out, io_.keys_out, io_.values_out, io_.values_out};
    PRIMS_NCCL_TRY_CUDA(prims::detail::radix_sort<device::RadixSortAlgorithm::Onesweep>(
        scratch_, scratch_bytes_, io, n_, order_, 0, kKeyBits, nullptr, stream_));
    return ncclSuccess;
  }

  ncclResult_t run() {
    PRIMS_NCCL_TRY(partition());
    PRIMS_NCCL_TRY(exchange());
    return local_sort();
  }

  /// What this rank sends and receives (after partition()).
  const ExchangePlan& plan() const { return plan_; }

 private:
  DistributedRadixSort(ncclComm_t comm, int ranks, int rank, Buffers io, size_t n_local, Order order,
                       cudaStream_t stream)
      : comm_(comm), ranks_(ranks), rank_(rank), io_(io), n_(n_local), order_(order), stream_(stream) {}

  /// The scratch the partitions and the sort need: the first partition of n keys, the refinements (TileCounts,
  /// in place, of at most n keys: its storage grows with n) and the local sort of n keys.
  static cudaError_t scratch_size(int ranks, size_t n, Order order, cudaStream_t stream, size_t& bytes) {
    const Buffers none{nullptr, nullptr, nullptr, nullptr};
    const DigitLayout layout{kKeyBits};
    size_t sort_bytes = 0;
    PRIMS_TRY(prims::detail::radix_sort<device::RadixSortAlgorithm::Onesweep>(nullptr, sort_bytes, none, n, order, 0,
                                                                              kKeyBits, nullptr, stream));
    bytes = sort_bytes;
    if (ranks == 1) return cudaSuccess;
    size_t first_bytes = 0;
    size_t refine_bytes = 0;
    PRIMS_TRY(prims::detail::radix_partition_default(nullptr, first_bytes, none, n, nullptr, layout.begin_bit(0),
                                                     layout.end_bit(0), order, stream));
    PRIMS_TRY(prims::detail::radix_partition<device::RadixSortAlgorithm::TileCounts>(
        nullptr, refine_bytes, none, n, nullptr, layout.begin_bit(0), layout.end_bit(0), order, stream));
    bytes = std::max({sort_bytes, first_bytes, refine_bytes});
    return cudaSuccess;
  }

  /// Partitions every pending node's range of the partitioned buffer, in place, by the search's next digit; node
  /// m's offsets go to local_offsets_ + m * kBucketOffsets.
  ncclResult_t refine_pending(const SplitterSearch& search) {
    const DigitLayout& layout = search.layout();
    const int level = search.level();
    size_t* offsets = local_offsets_;
    for (const NodeRange& node : search.pending()) {
      K* keys = partitioned_keys_ + node.local_begin;
      V* values = kHasValues ? partitioned_values_ + node.local_begin : nullptr;
      const Buffers in_place{keys, keys, values, values};
      PRIMS_NCCL_TRY_CUDA(prims::detail::radix_partition<device::RadixSortAlgorithm::TileCounts>(
          scratch_, scratch_bytes_, in_place, node.local_end - node.local_begin, offsets, layout.begin_bit(level),
          layout.end_bit(level), order_, stream_));
      offsets += kBucketOffsets;
    }
    return ncclSuccess;
  }

  /// Copies a round's offsets (this rank's and the global sums, `nodes` partitions) to the host; synchronizes.
  cudaError_t round_offsets(size_t nodes, std::vector<uint64_t>& local, std::vector<uint64_t>& global) const {
    local.resize(nodes * kBucketOffsets);
    global.resize(nodes * kBucketOffsets);
    PRIMS_TRY(copy_to_host(local, local_offsets_));
    PRIMS_TRY(copy_to_host(global, global_offsets_));
    return cudaStreamSynchronize(stream_);
  }

  template <class Count>
  cudaError_t copy_to_host(std::vector<uint64_t>& host, const Count* device) const {
    return cudaMemcpyAsync(host.data(), device, host.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_);
  }

  template <class T>
  cudaError_t copy_segment(T* destination, const T* source, uint64_t destination_offset, uint64_t source_offset,
                           uint64_t count) const {
    if (count == 0) return cudaSuccess;
    return cudaMemcpyAsync(destination + destination_offset, source + source_offset, count * sizeof(T),
                           cudaMemcpyDeviceToDevice, stream_);
  }

  /// This rank's segment for `peer`, and the peer's segment for this rank, as bytes. Empty segments are skipped on
  /// both sides alike: both read the same plan.
  template <class T>
  ncclResult_t send_receive(T* received, const T* partitioned, int peer) const {
    const size_t p = static_cast<size_t>(peer);
    if (plan_.send_counts[p] > 0) {
      PRIMS_NCCL_TRY(ncclSend(partitioned + plan_.send_offsets[p], plan_.send_counts[p] * sizeof(T), ncclUint8,
                              peer, comm_, stream_));
    }
    if (plan_.receive_counts[p] > 0) {
      PRIMS_NCCL_TRY(ncclRecv(received + plan_.receive_offsets[p], plan_.receive_counts[p] * sizeof(T), ncclUint8,
                              peer, comm_, stream_));
    }
    return ncclSuccess;
  }

  ncclComm_t comm_;
  int ranks_;
  int rank_;
  Buffers io_;
  size_t n_;
  Order order_;
  cudaStream_t stream_;
  K* partitioned_keys_ = nullptr;
  V* partitioned_values_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  size_t* local_offsets_ = nullptr;
  size_t* global_offsets_ = nullptr;
  uint64_t* own_count_ = nullptr;
  uint64_t* rank_counts_ = nullptr;
  uint64_t* own_cuts_ = nullptr;
  uint64_t* all_cuts_ = nullptr;
  ExchangePlan plan_;
};

/// The whole sort behind the public calls: the two-phase protocol, then the three phases. Never throws (host
/// allocations that fail are ncclSystemError).
template <class K, class V>
ncclResult_t radix_sort(ncclComm_t comm, void* temp, size_t& temp_bytes, prims::detail::PassBuffers<K, V> io,
                        size_t n_local, Order order, cudaStream_t stream) {
  try {
    using Sort = DistributedRadixSort<K, V>;
    std::optional<Sort> sort;
    PRIMS_NCCL_TRY(Sort::create(comm, temp, temp_bytes, io, n_local, order, stream, sort));
    if (!sort) return ncclSuccess;
    return sort->run();
  } catch (...) {
    return ncclSystemError;
  }
}

}  // namespace prims::dist::detail
