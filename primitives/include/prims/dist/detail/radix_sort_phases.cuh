#pragma once
// The distributed radix sort in two phases, each a member function so that a bench can time them apart:
//   partition           the shard partitioned by the top digit of the ordered key bits (the root partition), then
//                       the exact splitters (the boundary buckets refined digit by digit, one all-reduce a round;
//                       splitters.hpp has the arithmetic), and an all-gather of every rank's cuts: the exchange,
//                       planned bucket by bucket (BucketExchange). Synchronizes the stream once a round.
//   exchange_and_sort   the exchange on a stream of its own, in chunks of whole top buckets, into every rank's
//                       arrived buffer: bucket by bucket, each bucket's pieces in sender order. Where all ranks
//                       share this process and their GPUs reach each other (peer_buffers.cuh), a chunk is one copy
//                       kernel storing every piece this rank keeps or sends straight into its place at its
//                       receiver, then a one-word all-reduce that returns once every rank's stores are done.
//                       Otherwise (ranks in several processes, or PRIMS_DIST_EXCHANGE=nccl) a chunk is one grouped
//                       ncclSend/ncclRecv, a send and a receive a peer, staged in the chunk's own region of
//                       keys_out, then one copy kernel puts every received and kept piece in its place. As a
//                       chunk lands, the caller's stream sorts its buckets on the digits below the top one (the
//                       segmented sort), from the arrived buffer into keys_out, while later chunks are in flight
//                       (above kOverlapMinItems keys a rank; one chunk below). The partition already put every
//                       key in its top bucket, so the local sort is a digit pass shorter than a whole sort. Every
//                       bucket is stable (sender rank, then source index), and so is the segmented sort: ties
//                       keep (rank, index) order.
// With one rank only the local sort runs (keys_in to keys_out). Keys of one digit (8 bits) are received straight
// into their places in keys_out, sorted. A bucket of more keys than the segmented sort's shared passes take
// (kOnesweepPortionMaxItems) sends the whole arrived buffer to Onesweep once it has landed.
//
// Temporary storage (two-phase, carved by prims::detail::carve_temp), a function of n_local and the number of
// ranks only: the partitioned keys (and values), the arrived keys (and values), a scratch area shared by the
// partitions and the sorts (they never run at once), the bucket offsets of one round (this rank's and the sum),
// every rank's root offsets, the arrived buckets' offsets, the copy table, every rank's arrived buffers' addresses
// and identity (PeerIdentity), and the counts the collectives move.

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "prims/device/detail/segmented_radix_sort_kernels.cuh"
#include "prims/device/radix_partition.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/dist/detail/nccl_error.cuh"
#include "prims/dist/detail/peer_buffers.cuh"
#include "prims/dist/detail/splitters.hpp"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::dist::detail {

/// A copy of `count` elements from offset `from` of one buffer to offset `to` of rank `rank`'s arrived buffer.
struct PieceCopy {
  uint64_t from;
  uint64_t to;
  uint64_t count;
  uint64_t rank;
};

inline constexpr int kPieceCopyThreads = 256;
/// Items a thread loads before it stores them: enough loads in flight to keep the links and memory busy (pieces
/// start anywhere, so items move one at a time, not in vectors).
inline constexpr int kPieceCopyItems = 8;

/// The stores of a warp cover whole 128-byte lines of the destination where items divide a line: a piece starts
/// anywhere, and a warp's stores across a line edge would cost two writes over the links for one line's bytes.
template <class T>
inline constexpr uint64_t kPieceCopyLineItems = 128 % sizeof(T) == 0 ? 128 / sizeof(T) : 1;

/// Copies pieces [0, num_pieces) from `from` to `arrived[piece.rank]` (this rank's arrived buffer, or a peer's
/// over the links): every block takes its share of every piece, kPieceCopyItems a thread, so one launch moves a
/// chunk's pieces (about one a bucket and rank) at the device's copy bandwidth, or the links'. Positions count
/// from the destination's line edge before the piece (`head` items early), so warps store whole lines. Launched
/// plainly, never early (programmatic launch): it runs beside NCCL kernels, which must not wait for SMs it holds.
template <class T>
__global__ void __launch_bounds__(kPieceCopyThreads)
    copy_pieces_kernel(const T* __restrict__ from, T* const* __restrict__ arrived,
                       const PieceCopy* __restrict__ pieces, unsigned num_pieces) {
  constexpr uint64_t kBlockItems = uint64_t{kPieceCopyThreads} * kPieceCopyItems;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * kBlockItems;
  for (unsigned p = 0; p < num_pieces; ++p) {
    const PieceCopy piece = pieces[p];
    T* const to = arrived[piece.rank];
    const uint64_t head = (reinterpret_cast<uintptr_t>(to + piece.to) / sizeof(T)) % kPieceCopyLineItems<T>;
    const uint64_t end = head + piece.count;
    // Position v is item v - head of the piece.
    const T* source = from + piece.from;
    T* destination = to + piece.to;
    for (uint64_t base = static_cast<uint64_t>(blockIdx.x) * kBlockItems + threadIdx.x; base < end;
         base += stride) {
      T items[kPieceCopyItems];
#pragma unroll
      for (int j = 0; j < kPieceCopyItems; ++j) {
        const uint64_t v = base + static_cast<uint64_t>(j) * kPieceCopyThreads;
        if (v >= head && v < end) items[j] = source[v - head];
      }
#pragma unroll
      for (int j = 0; j < kPieceCopyItems; ++j) {
        const uint64_t v = base + static_cast<uint64_t>(j) * kPieceCopyThreads;
        if (v >= head && v < end) destination[v - head] = items[j];
      }
    }
  }
}

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
  /// The bits the local sort sorts: those below the top digit, which the partition fixed.
  static constexpr int kSortedBits = kKeyBits - kDigitBits;
  /// Keys of one digit need no local sort: what arrives lands in keys_out, sorted.
  static constexpr bool kArrivesSorted = kSortedBits == 0;
  static constexpr int kParts = 15;
  /// The exchange runs in kOverlapChunks chunks, each sorted as it lands, where ranks hold kOverlapMinItems keys
  /// on average or more; below that in one chunk, sorted once it has landed (below, the overlap cost more than it
  /// hid; docs/design-notes.md has the measurements).
  static constexpr int kOverlapChunks = 4;
  static constexpr uint64_t kOverlapMinItems = uint64_t{1} << 29;

 public:
  /// CUDA events a bench passes to time the overlapped phase: exchange_begin and exchange_end on the exchange's
  /// stream, around all chunks; sort_end on the caller's stream, after the last sort.
  struct PhaseEvents {
    cudaEvent_t exchange_begin;
    cudaEvent_t exchange_end;
    cudaEvent_t sort_end;
  };

 private:

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
    const size_t arrived = kArrivesSorted ? 0 : partitioned;
    const size_t nodes = static_cast<size_t>(std::max(1, ranks - 1));
    const size_t offsets_bytes = nodes * kBucketOffsets * sizeof(uint64_t);
    const size_t boundaries = static_cast<size_t>(ranks - 1);
    const size_t sizes[kParts] = {partitioned * sizeof(K),
                                  kHasValues ? partitioned * sizeof(V) : 0,
                                  arrived * sizeof(K),
                                  kHasValues ? arrived * sizeof(V) : 0,
                                  scratch_bytes,
                                  offsets_bytes,
                                  offsets_bytes,
                                  (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t),
                                  2 * boundaries * (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t),
                                  static_cast<size_t>(ranks) * kBucketOffsets * sizeof(uint64_t),
                                  2 * kDigitBuckets * sizeof(uint64_t),
                                  2 * static_cast<size_t>(ranks) * kDigitBuckets * sizeof(PieceCopy),
                                  (1 + static_cast<size_t>(ranks)) * sizeof(PeerIdentity),
                                  (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t),
                                  2 * static_cast<size_t>(ranks) * sizeof(void*)};
    void* parts[kParts];
    if (prims::detail::carve_temp(temp, temp_bytes, sizes, parts) != cudaSuccess) return ncclInvalidArgument;
    if (temp == nullptr) return ncclSuccess;

    sort.emplace(DistributedRadixSort(comm, ranks, rank, io, n_local, order, stream));
    DistributedRadixSort& s = *sort;
    s.partitioned_keys_ = static_cast<K*>(parts[0]);
    s.partitioned_values_ = static_cast<V*>(parts[1]);
    s.arrived_keys_ = kArrivesSorted ? io.keys_out : static_cast<K*>(parts[2]);
    s.arrived_values_ = kArrivesSorted ? io.values_out : static_cast<V*>(parts[3]);
    s.scratch_ = parts[4];
    s.scratch_bytes_ = scratch_bytes;
    s.local_offsets_ = static_cast<size_t*>(parts[5]);
    s.global_offsets_ = static_cast<size_t*>(parts[6]);
    s.own_count_ = static_cast<uint64_t*>(parts[7]);
    s.rank_counts_ = s.own_count_ + 1;
    s.own_cuts_ = static_cast<uint64_t*>(parts[8]);
    s.all_cuts_ = s.own_cuts_ + 2 * boundaries;
    s.root_offsets_ = static_cast<uint64_t*>(parts[9]);
    s.segment_begins_ = static_cast<uint64_t*>(parts[10]);
    s.segment_ends_ = s.segment_begins_ + kDigitBuckets;
    s.piece_copies_ = static_cast<PieceCopy*>(parts[11]);
    s.own_identity_ = static_cast<PeerIdentity*>(parts[12]);
    s.identities_ = s.own_identity_ + 1;
    s.own_reach_ = static_cast<uint64_t*>(parts[13]);
    s.reaches_ = s.own_reach_ + 1;
    s.arrived_key_buffers_ = static_cast<K**>(parts[14]);
    s.arrived_value_buffers_ = reinterpret_cast<V**>(s.arrived_key_buffers_ + ranks);
    return ncclSuccess;
  }

  /// Partition and exact splitters: leaves the exchange planned. Synchronizes the stream (the host needs the counts).
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
    const PeerIdentity identity = PeerBuffers::identify(n_ > 0 ? arrived_keys_ : nullptr,
                                                        kHasValues && n_ > 0 ? arrived_values_ : nullptr);
    PRIMS_NCCL_TRY_CUDA(
        cudaMemcpyAsync(own_identity_, &identity, sizeof(PeerIdentity), cudaMemcpyHostToDevice, stream_));
    // Every rank's root offsets: their sum is the search's first round, and they place every bucket's pieces.
    // And every rank's identity: whether the exchange can store straight into the peers' buffers.
    PRIMS_NCCL_TRY(grouped([&] {
      PRIMS_NCCL_TRY(ncclAllGather(local_offsets_, root_offsets_, kBucketOffsets, ncclUint64, comm_, stream_));
      PRIMS_NCCL_TRY(ncclAllGather(own_identity_, identities_, sizeof(PeerIdentity), ncclUint8, comm_, stream_));
      return ncclAllGather(own_count_, rank_counts_, 1, ncclUint64, comm_, stream_);
    }));
    std::vector<uint64_t> rank_counts(static_cast<size_t>(ranks_));
    std::vector<uint64_t> root_offsets(static_cast<size_t>(ranks_) * kBucketOffsets);
    std::vector<PeerIdentity> identities(static_cast<size_t>(ranks_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(rank_counts, rank_counts_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(root_offsets, root_offsets_));
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(identities.data(), identities_, identities.size() * sizeof(PeerIdentity),
                                        cudaMemcpyDeviceToHost, stream_));
    PRIMS_NCCL_TRY_CUDA(cudaStreamSynchronize(stream_));
    const uint64_t reach = direct_allowed() && peers_.open(identities, rank_) ? 1 : 0;
    const auto mine = root_offsets.begin() + static_cast<std::ptrdiff_t>(rank_) * kBucketOffsets;
    std::vector<uint64_t> local_offsets(mine, mine + kBucketOffsets);
    std::vector<uint64_t> global_offsets(kBucketOffsets, 0);
    for (size_t i = 0; i < root_offsets.size(); ++i) global_offsets[i % kBucketOffsets] += root_offsets[i];
    uint64_t total = 0;
    for (uint64_t count : rank_counts) total += count;

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
    // And whether every rank reaches every other's buffers: all store straight into them, or all go through NCCL.
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(own_cuts_, own_cuts.data(), own_cuts.size() * sizeof(uint64_t),
                                        cudaMemcpyHostToDevice, stream_));
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(own_reach_, &reach, sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    PRIMS_NCCL_TRY(grouped([&] {
      PRIMS_NCCL_TRY(ncclAllGather(own_cuts_, all_cuts_, own_cuts.size(), ncclUint64, comm_, stream_));
      return ncclAllGather(own_reach_, reaches_, 1, ncclUint64, comm_, stream_);
    }));
    std::vector<uint64_t> all_cuts(own_cuts.size() * static_cast<size_t>(ranks_));
    std::vector<uint64_t> reaches(static_cast<size_t>(ranks_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(all_cuts, all_cuts_));
    PRIMS_NCCL_TRY_CUDA(copy_to_host(reaches, reaches_));
    PRIMS_NCCL_TRY_CUDA(cudaStreamSynchronize(stream_));
    direct_ = std::all_of(reaches.begin(), reaches.end(), [](uint64_t r) { return r != 0; });
    // The same number of chunks on every rank: it decides which pieces each grouped call moves.
    const uint64_t per_rank = total / static_cast<uint64_t>(ranks_);
    const int chunks = per_rank >= kOverlapMinItems ? kOverlapChunks : 1;
    exchange_ = search.bucket_exchange(all_cuts, root_offsets, chunks);
    // Every chunk's copies. Through NCCL: the kept pieces (from the partitioned buffer), then the received ones
    // (from where they are staged in the output), at most a piece a bucket and source rank. Stored straight into
    // place: the kept and the sent pieces, from the partitioned buffer, at most a piece a bucket and receiver.
    copy_tables_.assign(2 * exchange_.keeps.size() + 1, 0);
    std::vector<PieceCopy> copies;
    const uint64_t self = static_cast<uint64_t>(rank_);
    for (size_t c = 0; c < exchange_.keeps.size(); ++c) {
      for (const ExchangePiece& piece : exchange_.keeps[c]) {
        copies.push_back({piece.source, piece.destination, piece.count, self});
      }
      if (direct_) {
        for (const ExchangePiece& piece : exchange_.sends[c]) {
          copies.push_back({piece.source, piece.destination, piece.count, static_cast<uint64_t>(piece.peer)});
        }
      }
      copy_tables_[2 * c + 1] = copies.size();
      size_t next = 0;
      for (const ExchangeRange& range : exchange_.receive_ranges[c]) {
        if (direct_) break;
        uint64_t staged = range.offset;
        for (; next < exchange_.receives[c].size() && exchange_.receives[c][next].peer == range.peer; ++next) {
          const ExchangePiece& piece = exchange_.receives[c][next];
          copies.push_back({staged, piece.destination, piece.count, self});
          staged += piece.count;
        }
      }
      copy_tables_[2 * c + 2] = copies.size();
    }
    // Every rank's arrived buffers as this rank addresses them (only its own is used through NCCL).
    std::vector<void*> arrived(2 * static_cast<size_t>(ranks_), nullptr);
    for (int q = 0; q < ranks_; ++q) {
      arrived[static_cast<size_t>(q)] = direct_ ? peers_.keys(q) : (q == rank_ ? arrived_keys_ : nullptr);
      arrived[static_cast<size_t>(ranks_ + q)] =
          direct_ ? peers_.values(q) : (q == rank_ ? static_cast<void*>(arrived_values_) : nullptr);
    }
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(arrived_key_buffers_, arrived.data(), arrived.size() * sizeof(void*),
                                        cudaMemcpyHostToDevice, stream_));
    if (!copies.empty()) {
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(piece_copies_, copies.data(), copies.size() * sizeof(PieceCopy),
                                          cudaMemcpyHostToDevice, stream_));
    }
    // The arrived buckets' offsets, for the segmented sort (copied from pageable memory: staged before return).
    const size_t segments = exchange_.segment_begins.size();
    if (segments > 0) {
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(segment_begins_, exchange_.segment_begins.data(), segments * sizeof(uint64_t),
                                          cudaMemcpyHostToDevice, stream_));
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(segment_ends_, exchange_.segment_ends.data(), segments * sizeof(uint64_t),
                                          cudaMemcpyHostToDevice, stream_));
    }
    return ncclSuccess;
  }

  /// The exchange, chunk by chunk on a stream of its own, and the sort of each chunk's buckets on the caller's
  /// stream as it lands (see the file comment). Does not synchronize; `events` (a bench's) are recorded if given.
  ncclResult_t exchange_and_sort(const PhaseEvents* events = nullptr) {
    if (ranks_ == 1) {
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_begin, stream_));
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_end, stream_));
      PRIMS_NCCL_TRY_CUDA(prims::detail::radix_sort<device::RadixSortAlgorithm::Onesweep>(
          scratch_, scratch_bytes_, io_, n_, order_, 0, kKeyBits, nullptr, stream_));
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->sort_end, stream_));
      return ncclSuccess;
    }
    ExchangeStream side;
    const size_t chunks = exchange_.sends.size();
    PRIMS_NCCL_TRY_CUDA(side.create(chunks + 1));
    // The exchange starts once the partition is done.
    PRIMS_NCCL_TRY_CUDA(cudaEventRecord(side.events[chunks], stream_));
    PRIMS_NCCL_TRY_CUDA(cudaStreamWaitEvent(side.stream, side.events[chunks], 0));
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_begin, side.stream));
    // Buckets larger than the segmented sort's shared passes take: Onesweep sorts everything once it has arrived.
    const bool by_segments = !kArrivesSorted && exchange_.largest_segment < prims::detail::kOnesweepPortionMaxItems;
    for (size_t c = 0; c < chunks; ++c) {
      PRIMS_NCCL_TRY(direct_ ? store_chunk(c, side.stream) : move_chunk(c, side.stream));
      PRIMS_NCCL_TRY_CUDA(cudaEventRecord(side.events[c], side.stream));
    }
    for (size_t c = 0; c < chunks && by_segments; ++c) {
      const size_t first = exchange_.chunk_segments[c];
      const size_t segments = exchange_.chunk_segments[c + 1] - first;
      if (segments == 0) continue;
      PRIMS_NCCL_TRY_CUDA(cudaStreamWaitEvent(stream_, side.events[c], 0));
      const Buffers sort_io{arrived_keys_, io_.keys_out, arrived_values_, io_.values_out};
      PRIMS_NCCL_TRY_CUDA((prims::detail::segmented_radix_sort<K, V, uint64_t>(
          scratch_, scratch_bytes_, sort_io, n_, segments, segment_begins_ + first, segment_ends_ + first, order_, 0,
          kSortedBits, stream_)));
    }
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_end, side.stream));
    // The caller's stream holds all the work when this returns.
    PRIMS_NCCL_TRY_CUDA(cudaStreamWaitEvent(stream_, side.events[chunks - 1], 0));
    if (!by_segments && !kArrivesSorted) {
      const Buffers sort_io{arrived_keys_, io_.keys_out, arrived_values_, io_.values_out};
      PRIMS_NCCL_TRY_CUDA(prims::detail::radix_sort<device::RadixSortAlgorithm::Onesweep>(
          scratch_, scratch_bytes_, sort_io, n_, order_, 0, kKeyBits, nullptr, stream_));
    }
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->sort_end, stream_));
    return ncclSuccess;
  }

  /// Whether the exchange went by stores straight into the peers' buffers (after partition()).
  bool direct_exchange() const { return direct_; }

  ncclResult_t run() {
    PRIMS_NCCL_TRY(partition());
    return exchange_and_sort();
  }

  /// The exchange bucket by bucket (after partition()).
  const BucketExchange& bucket_exchange() const { return exchange_; }

 private:
  DistributedRadixSort(ncclComm_t comm, int ranks, int rank, Buffers io, size_t n_local, Order order,
                       cudaStream_t stream)
      : comm_(comm), ranks_(ranks), rank_(rank), io_(io), n_(n_local), order_(order), stream_(stream) {}

  /// The scratch the partitions and the sorts need: the first partition of n keys, the refinements (TileCounts,
  /// in place, of at most n keys: its storage grows with n), the segmented sort of n keys in up to kDigitBuckets
  /// buckets, and Onesweep of n keys (one rank, or a bucket too large for the segmented sort).
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
    size_t segmented_bytes = 0;
    PRIMS_TRY(prims::detail::radix_partition_default(nullptr, first_bytes, none, n, nullptr, layout.begin_bit(0),
                                                     layout.end_bit(0), order, stream));
    PRIMS_TRY(prims::detail::radix_partition<device::RadixSortAlgorithm::TileCounts>(
        nullptr, refine_bytes, none, n, nullptr, layout.begin_bit(0), layout.end_bit(0), order, stream));
    if constexpr (!kArrivesSorted) {
      PRIMS_TRY((prims::detail::segmented_radix_sort<K, V, uint64_t>(nullptr, segmented_bytes, none, n, kDigitBuckets,
                                                                     nullptr, nullptr, order, 0, kSortedBits,
                                                                     stream)));
    }
    bytes = std::max({sort_bytes, first_bytes, refine_bytes, segmented_bytes});
    return cudaSuccess;
  }

  /// A stream of the exchange's own, at the device's highest priority (so that its NCCL kernels take SMs as soon
  /// as the sort's blocks free them), and events: one a chunk (landed), one for the start. Destroyed with it;
  /// work still queued completes.
  struct ExchangeStream {
    cudaStream_t stream = nullptr;
    std::vector<cudaEvent_t> events;

    cudaError_t create(size_t count) {
      int lowest = 0;
      int highest = 0;
      PRIMS_TRY(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
      PRIMS_TRY(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, highest));
      events.reserve(count);
      for (size_t i = 0; i < count; ++i) {
        cudaEvent_t event = nullptr;
        PRIMS_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
        events.push_back(event);
      }
      return cudaSuccess;
    }
    ExchangeStream() = default;
    ExchangeStream(const ExchangeStream&) = delete;
    ExchangeStream& operator=(const ExchangeStream&) = delete;
    ~ExchangeStream() {
      for (cudaEvent_t event : events) cudaEventDestroy(event);
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
  };

  /// Chunk c of the exchange on `stream`: this rank's kept pieces copied, then one grouped call of a send and a
  /// receive a peer, and the received pieces copied from where they were staged to their places. One range a peer
  /// moves at NCCL's full rate where a call a piece (a bucket each) takes twice as long; the staging is the chunk's
  /// own region of keys_out (values_out), which its sort writes only later. Keys of one digit arrive in keys_out,
  /// sorted: each piece is received straight into its place.
  ncclResult_t move_chunk(size_t c, cudaStream_t stream) const {
    PRIMS_NCCL_TRY_CUDA(copy_partitioned_pieces(c, stream));
    if constexpr (kArrivesSorted) {
      return grouped([&] {
        for (const ExchangePiece& piece : exchange_.sends[c]) {
          PRIMS_NCCL_TRY(send(partitioned_keys_ + piece.source, piece.count, piece.peer, stream));
          if constexpr (kHasValues) {
            PRIMS_NCCL_TRY(send(partitioned_values_ + piece.source, piece.count, piece.peer, stream));
          }
        }
        for (const ExchangePiece& piece : exchange_.receives[c]) {
          PRIMS_NCCL_TRY(receive(arrived_keys_ + piece.destination, piece.count, piece.peer, stream));
          if constexpr (kHasValues) {
            PRIMS_NCCL_TRY(receive(arrived_values_ + piece.destination, piece.count, piece.peer, stream));
          }
        }
        return ncclSuccess;
      });
    } else {
      PRIMS_NCCL_TRY(grouped([&] {
        for (const ExchangeRange& range : exchange_.send_ranges[c]) {
          PRIMS_NCCL_TRY(send(partitioned_keys_ + range.offset, range.count, range.peer, stream));
          if constexpr (kHasValues) {
            PRIMS_NCCL_TRY(send(partitioned_values_ + range.offset, range.count, range.peer, stream));
          }
        }
        for (const ExchangeRange& range : exchange_.receive_ranges[c]) {
          PRIMS_NCCL_TRY(receive(io_.keys_out + range.offset, range.count, range.peer, stream));
          if constexpr (kHasValues) {
            PRIMS_NCCL_TRY(receive(io_.values_out + range.offset, range.count, range.peer, stream));
          }
        }
        return ncclSuccess;
      }));
      // Each peer's pieces, in order, lie back to back in its staged range.
      PRIMS_NCCL_TRY_CUDA(copy_pieces(io_.keys_out, arrived_key_buffers_, copy_tables_[2 * c + 1],
                                      copy_tables_[2 * c + 2], stream));
      if constexpr (kHasValues) {
        PRIMS_NCCL_TRY_CUDA(copy_pieces(io_.values_out, arrived_value_buffers_, copy_tables_[2 * c + 1],
                                        copy_tables_[2 * c + 2], stream));
      }
      return ncclSuccess;
    }
  }

  /// Chunk c of the exchange by stores straight into place: one copy kernel puts every piece of the chunk this
  /// rank keeps or sends where its receiver's sort reads it, then a one-word all-reduce waits for every rank's
  /// stores to have completed (each rank's kernel precedes its part of the all-reduce on its stream), so chunk c
  /// has landed at every rank when its all-reduce returns. The receivers' buffers are free: every rank has
  /// synchronized its stream after the partition, before any rank stores.
  ncclResult_t store_chunk(size_t c, cudaStream_t stream) const {
    PRIMS_NCCL_TRY_CUDA(copy_partitioned_pieces(c, stream));
    return ncclAllReduce(own_reach_, own_reach_, 1, ncclUint64, ncclSum, comm_, stream);
  }

  /// The exchange stores straight into the peers' buffers where they are reachable, unless PRIMS_DIST_EXCHANGE
  /// is "nccl" (all ranks agree: a rank that disallows it counts as one out of reach).
  static bool direct_allowed() {
    const char* setting = std::getenv("PRIMS_DIST_EXCHANGE");
    return setting == nullptr || std::string(setting) != "nccl";
  }

  /// Copies chunk c's pieces that come from the partitioned buffers (the kept ones; with stores, the sent ones
  /// too) to their places, keys and values.
  cudaError_t copy_partitioned_pieces(size_t c, cudaStream_t stream) const {
    PRIMS_TRY(copy_pieces(partitioned_keys_, arrived_key_buffers_, copy_tables_[2 * c], copy_tables_[2 * c + 1],
                          stream));
    if constexpr (kHasValues) {
      PRIMS_TRY(copy_pieces(partitioned_values_, arrived_value_buffers_, copy_tables_[2 * c], copy_tables_[2 * c + 1],
                            stream));
    }
    return cudaSuccess;
  }

  /// Copies the pieces [first, last) of the copy table from `from` to their ranks' buffers `arrived`, in one
  /// launch.
  template <class T>
  cudaError_t copy_pieces(const T* from, T* const* arrived, size_t first, size_t last, cudaStream_t stream) const {
    if (first == last) return cudaSuccess;
    int multiprocessors = 0;
    PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
    copy_pieces_kernel<T><<<static_cast<unsigned>(multiprocessors) * 4, kPieceCopyThreads, 0, stream>>>(
        from, arrived, piece_copies_ + first, static_cast<unsigned>(last - first));
    return cudaGetLastError();
  }

  template <class T>
  ncclResult_t send(const T* items, uint64_t count, int peer, cudaStream_t stream) const {
    return ncclSend(items, count * sizeof(T), ncclUint8, peer, comm_, stream);
  }

  template <class T>
  ncclResult_t receive(T* items, uint64_t count, int peer, cudaStream_t stream) const {
    return ncclRecv(items, count * sizeof(T), ncclUint8, peer, comm_, stream);
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

  ncclComm_t comm_;
  int ranks_;
  int rank_;
  Buffers io_;
  size_t n_;
  Order order_;
  cudaStream_t stream_;
  K* partitioned_keys_ = nullptr;
  V* partitioned_values_ = nullptr;
  K* arrived_keys_ = nullptr;
  V* arrived_values_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  size_t* local_offsets_ = nullptr;
  size_t* global_offsets_ = nullptr;
  uint64_t* own_count_ = nullptr;
  uint64_t* rank_counts_ = nullptr;
  uint64_t* own_cuts_ = nullptr;
  uint64_t* all_cuts_ = nullptr;
  uint64_t* root_offsets_ = nullptr;
  uint64_t* segment_begins_ = nullptr;
  uint64_t* segment_ends_ = nullptr;
  BucketExchange exchange_;
  PieceCopy* piece_copies_ = nullptr;
  PeerIdentity* own_identity_ = nullptr;
  PeerIdentity* identities_ = nullptr;
  /// This rank's reach (1: it can store into every peer's buffers), then every rank's; the word the stored
  /// exchange's all-reduces wait on.
  uint64_t* own_reach_ = nullptr;
  uint64_t* reaches_ = nullptr;
  /// Every rank's arrived keys and values as this rank addresses them (its own only, through NCCL).
  K** arrived_key_buffers_ = nullptr;
  V** arrived_value_buffers_ = nullptr;
  PeerBuffers peers_;
  bool direct_ = false;
  /// Chunk c's kept pieces are copies [copy_tables_[2c], copy_tables_[2c + 1]) of piece_copies_, its received ones
  /// [copy_tables_[2c + 1], copy_tables_[2c + 2]).
  std::vector<size_t> copy_tables_;
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
