#pragma once
// The distributed radix sort in two phases, each a member function so that a bench can time them apart:
//   partition           the shard partitioned by the top digit of the ordered key bits (the root partition), then
//                       the exact splitters (the boundary buckets refined digit by digit, one all-reduce a round;
//                       splitters.hpp has the arithmetic), and an all-gather of every rank's cuts: the exchange,
//                       planned piece by piece (BucketExchange: what each rank keeps or sends of each top bucket).
//                       Synchronizes the stream once a round.
//   exchange_and_sort   what arrives at a rank is laid out bucket by bucket, each bucket's pieces in sender order,
//                       so only the digits below the top one need sorting: the partition fixed it. The exchange is
//                       the first of those digit passes. Each rank counts the lower digits of every piece it holds
//                       (one read of its partitioned buffer), the counts are all-gathered, and one Onesweep pass
//                       gathers every arriving piece (segmented_onesweep_gather_pass): each piece is read where
//                       it lies and scattered on the lowest digit into its bucket, after the bucket's pieces from
//                       lower ranks, as if the bucket had been sorted whole. Where all ranks share this process and
//                       their GPUs reach each other (peer_buffers.cuh), the pass reads the peers' partitioned
//                       buffers over the links (NVLink), except a prefix of each peer's range that some SMs of
//                       the counting's launch bring over (count_and_copy_kernel), which it reads nearby: the links
//                       work during the counting too. Otherwise (ranks in several processes, or
//                       PRIMS_DIST_EXCHANGE=nccl) one grouped ncclSend/ncclRecv, a range a peer, stages what
//                       arrives first. The remaining digits are sorted by segmented Onesweep passes, one segment a
//                       bucket.
//                       Every bucket is stable (sender rank, then source index), and so is every pass: ties keep
//                       (rank, index) order.
// With one rank only the local sort runs (keys_in to keys_out). Keys of one digit (8 bits) need no digit pass:
// their pieces are copied into keys_out, sorted. Where a bucket holds more keys than a segmented Onesweep segment
// may (kOnesweepPortionMaxItems; skewed keys), the pieces are copied into the arrived buffer the same way and
// Onesweep sorts it whole.
//
// Temporary storage (two-phase, carved by prims::detail::carve_temp), a function of n_local and the number of
// ranks only: the partitioned keys (and values), the arrived keys (and values), a scratch area shared by the
// partitions, the counting and gathering pass and the sorts (they never run at once), the bucket offsets of one
// round (this rank's and the sum), every rank's root offsets, the arrived buckets' offsets, the pieces' tables,
// every rank's identity (PeerIdentity) and the counts the collectives move.

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

#include "prims/block/scan.cuh"
#include "prims/device/detail/segmented_onesweep.cuh"
#include "prims/device/detail/segmented_radix_sort_dispatch.cuh"
#include "prims/device/radix_partition.cuh"
#include "prims/device/radix_sort.cuh"
#include "prims/dist/detail/nccl_error.cuh"
#include "prims/dist/detail/peer_buffers.cuh"
#include "prims/dist/detail/splitters.hpp"
#include "prims/util/launch.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::dist::detail {

/// A copy of `count` elements from offset `from` of rank `rank`'s buffer (as the copy's sources table has it) to
/// offset `to` of the arrived buffer.
struct PieceCopy {
  uint64_t from;
  uint64_t to;
  uint64_t count;
  uint64_t rank;
};

inline constexpr int kPieceCopyThreads = 256;
/// Items a thread loads before it stores them, 128 bytes (pieces start anywhere, so items move one at a time, not
/// in vectors): the copies ahead run one block an SM beside the counting, and far loads wait long on the links, so
/// each thread keeps many in flight (with 64 bytes the copies moved about half as fast).
template <class T>
inline constexpr int kPieceCopyItems = sizeof(T) < 128 ? static_cast<int>(128 / sizeof(T)) : 1;

/// The loads of a warp cover whole 128-byte lines of the source where items divide a line: a piece starts
/// anywhere, and a warp's loads across a line edge would cost two requests (over the links, for a peer's buffer)
/// for one line's bytes.
template <class T>
inline constexpr uint64_t kPieceCopyLineItems = 128 % sizeof(T) == 0 ? 128 / sizeof(T) : 1;

/// Copies pieces [0, num_pieces) from `sources[piece.rank]` (this rank's partitioned buffer, a peer's over the
/// links, or where NCCL staged it) to `to`: block `block` of `blocks` (of THREADS threads) takes its share of every
/// piece, ITEMS a thread, so one launch moves all pieces (about one a bucket and rank) at the device's copy
/// bandwidth, or the links'. Positions count from the source's line edge before the piece (`head` items early), so
/// warps load whole lines.
template <class T, int THREADS, int ITEMS>
__device__ void copy_pieces_block(const T* const* __restrict__ sources, T* __restrict__ to,
                                  const PieceCopy* __restrict__ pieces, unsigned num_pieces, unsigned block,
                                  unsigned blocks) {
  constexpr int kItems = ITEMS;
  constexpr uint64_t kBlockItems = uint64_t{THREADS} * kItems;
  const uint64_t stride = static_cast<uint64_t>(blocks) * kBlockItems;
  for (unsigned p = 0; p < num_pieces; ++p) {
    const PieceCopy piece = pieces[p];
    const T* source = sources[piece.rank] + piece.from;
    T* destination = to + piece.to;
    const uint64_t head = (reinterpret_cast<uintptr_t>(source) / sizeof(T)) % kPieceCopyLineItems<T>;
    const uint64_t end = head + piece.count;
    // Position v is item v - head of the piece.
    for (uint64_t base = static_cast<uint64_t>(block) * kBlockItems + threadIdx.x; base < end; base += stride) {
      T items[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const uint64_t v = base + static_cast<uint64_t>(j) * THREADS;
        if (v >= head && v < end) items[j] = source[v - head];
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const uint64_t v = base + static_cast<uint64_t>(j) * THREADS;
        if (v >= head && v < end) destination[v - head] = items[j];
      }
    }
  }
}

/// copy_pieces_block over the whole grid.
template <class T>
__global__ void __launch_bounds__(kPieceCopyThreads)
    copy_pieces_kernel(const T* const* __restrict__ sources, T* __restrict__ to,
                       const PieceCopy* __restrict__ pieces, unsigned num_pieces) {
  copy_pieces_block<T, kPieceCopyThreads, kPieceCopyItems<T>>(sources, to, pieces, num_pieces, blockIdx.x,
                                                              gridDim.x);
}

/// The copies ahead: pieces (as copy_pieces_block takes them) of keys and, where there are values, of values.
template <class K, class V>
struct AheadCopies {
  const K* const* key_sources;
  K* keys;
  const V* const* value_sources;
  V* values;
  const PieceCopy* pieces;
  unsigned num_pieces;
};

/// The exchange's counting (segmented_onesweep_histogram_block over the pieces this rank holds) on blocks
/// [0, counting_blocks), and the copies ahead on the others: one block an SM, each filling its SM. A copy's far
/// loads wait long on the links and hold their SM's memory requests meanwhile: a copy block beside a counting block
/// on every SM slowed the counting (docs/design-notes.md, "Distributed radix sort";
/// bench/results/2026-11-26-H200x2-bench_dist_sort-count-and-copy-old-new.txt), so the copies get SMs of their own. Their threads keep half of kPieceCopyItems' bytes in flight (the
/// counting's 64 registers a thread hold no more), and there are four times as many of them an SM.
template <class Policy, class Tile, class Shape, class K, class V>
__global__ void __launch_bounds__(Shape::threads, 1)
    count_and_copy_kernel(const K* __restrict__ keys, Order order, int end_bit,
                          prims::detail::segmented::SegmentedOnesweepState state, unsigned counting_blocks,
                          AheadCopies<K, V> copies) {
  extern __shared__ unsigned counters[];
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  if (blockIdx.x < counting_blocks) {
    prims::detail::segmented::segmented_onesweep_histogram_block<Policy, Tile, Shape, K>(
        keys, order, 0, end_bit, state, counters, blockIdx.x, counting_blocks);
    return;
  }
  const unsigned block = blockIdx.x - counting_blocks;
  const unsigned blocks = gridDim.x - counting_blocks;
  constexpr int kKeyItems = std::max(1, kPieceCopyItems<K> / 2);
  copy_pieces_block<K, Shape::threads, kKeyItems>(copies.key_sources, copies.keys, copies.pieces, copies.num_pieces,
                                                  block, blocks);
  if constexpr (prims::detail::kHasValues<V>) {
    constexpr int kValueItems = std::max(1, kPieceCopyItems<V> / 2);
    copy_pieces_block<V, Shape::threads, kValueItems>(copies.value_sources, copies.values, copies.pieces,
                                                      copies.num_pieces, block, blocks);
  }
}

/// Where the gathering pass puts each arriving piece's keys of each digit: block s (and s + gridDim.x, ...), one
/// thread a digit, for the gathering pass's listed segment s, arriving piece i = order[s], whose bucket's pieces
/// are [firsts[i], lasts[i]) and whose counts (the sender's, for the lowest digit) are at counts + rows[i] *
/// row_stride: the digit's start in the bucket (the bucket's keys of lower digits) plus the bucket's keys of that
/// digit in the pieces before i.
template <int kDigits>
__global__ void __launch_bounds__(kDigits)
    arriving_starts_kernel(const unsigned* __restrict__ counts, size_t row_stride, const unsigned* __restrict__ order,
                           const unsigned* __restrict__ rows, const unsigned* __restrict__ firsts,
                           const unsigned* __restrict__ lasts, unsigned pieces, unsigned* __restrict__ starts) {
  using DigitScan = block::Scan<unsigned, kDigits>;
  __shared__ typename DigitScan::TempStorage storage;
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  for (unsigned s = blockIdx.x; s < pieces; s += gridDim.x) {
    const unsigned i = order[s];
    unsigned bucket = 0;
    unsigned before = 0;
    for (unsigned j = firsts[i]; j < lasts[i]; ++j) {
      const unsigned count = counts[rows[j] * row_stride + threadIdx.x];
      bucket += count;
      if (j < i) before += count;
    }
    unsigned total = 0;
    const unsigned start = DigitScan(storage).exclusive_scan(bucket, Sum{}, 0u, total);
    starts[static_cast<size_t>(s) * kDigits + threadIdx.x] = start + before;
    __syncthreads();  // the scan storage is reused
  }
}

/// Every arrived bucket's counts of the digits above the lowest (what the segmented passes after the gathering
/// one sort): block s (and s + gridDim.x, ...) sums, for bucket segment s, whose arriving pieces are
/// [firsts[s], lasts[s]), the senders' counts (rows[i] * row_stride, passes 1 .. passes) into
/// bucket_counts[s][pass - 1][digit].
template <int kDigits>
__global__ void __launch_bounds__(kDigits)
    bucket_counts_kernel(const unsigned* __restrict__ counts, size_t row_stride, int passes,
                         const unsigned* __restrict__ rows, const unsigned* __restrict__ firsts,
                         const unsigned* __restrict__ lasts, const unsigned* __restrict__ segments,
                         unsigned* __restrict__ bucket_counts) {
  prims::detail::wait_for_prior_grids();
  prims::detail::allow_dependent_grids();
  for (unsigned s = blockIdx.x; s < *segments; s += gridDim.x) {
    for (int pass = 1; pass < passes; ++pass) {
      unsigned total = 0;
      for (unsigned i = firsts[s]; i < lasts[s]; ++i) {
        total += counts[rows[i] * row_stride + static_cast<size_t>(pass) * kDigits + threadIdx.x];
      }
      bucket_counts[(static_cast<size_t>(s) * (passes - 1) + (pass - 1)) * kDigits + threadIdx.x] = total;
    }
  }
}

/// The sort under a table's policies (prims/device/detail/tuning.cuh): radix_sort below passes the current
/// device's; tests and benches that drive the phases themselves take Hopper's.
template <class K, class V, class Table = prims::detail::TuningSm90>
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
  /// Their digits: the gathering pass sorts the lowest, the segmented sort the others.
  static constexpr int kSortedDigits = kSortedBits / kDigitBits;
  /// Keys of one digit need no local sort: what arrives lands in keys_out, sorted.
  static constexpr bool kArrivesSorted = kSortedBits == 0;
  /// Where the ranks read each other's buffers, a rank copies 1/kStagedShare of its shard's count from its peers
  /// ahead of the gathering pass, while it counts its own pieces, which the pass then reads nearby: about what the
  /// links carry in that time (8-byte keys count longer, their seven digits against three). Measured on two H200s
  /// (docs/design-notes.md): 1/8 for 4-byte keys since the gathering pass's tiles start at line edges (1/6 before;
  /// bench/results/2026-11-26-H200x2-bench_dist_sort-staged-shares-old-new.txt), again with the copies on SMs of
  /// their own (1/6 and 1/5 slower: ...-count-and-copy-old-new.txt), 1/5 for 8-byte keys.
  static constexpr size_t kStagedShare = sizeof(K) > 4 ? 5 : 8;
  /// The SMs that copy ahead while the others count (count_and_copy_kernel): 1/kCopyingShare of them (1/3, 1/6 and
  /// 1/8 were slower on two H200s: bench/results/2026-11-26-H200x2-bench_dist_sort-count-and-copy-old-new.txt).
  static constexpr int kCopyingShare = 4;
  static constexpr int kParts = 17;
  /// The segmented Onesweep storage of the counting and of the gathering pass (sized for Onesweep's default
  /// tiles, which holds the fewer large ones).
  using GatherStorage =
      prims::detail::segmented::SegmentedOnesweepStorage<K, V, typename Table::template Onesweep<K, V>>;
  static constexpr int kGatherParts = 3 * GatherStorage::kParts + 1;
  static_assert(Table::template Onesweep<K, V>::radix_bits == kDigitBits &&
                    Table::template OnesweepLarge<K, V>::radix_bits == kDigitBits,
                "the gathering pass's digits are the splitters' digits");

 public:
  /// CUDA events a bench passes to time the phases after the partition: exchange_begin and exchange_end around
  /// the exchange (the counting, the counts' sends and the gathering pass; NCCL's transfer where it takes it),
  /// gather_begin between the counting (with the copies ahead beside it, and NCCL's transfer) and the gathering
  /// pass, then sort_end after the last sort.
  struct PhaseEvents {
    cudaEvent_t exchange_begin;
    cudaEvent_t gather_begin;
    cudaEvent_t exchange_end;
    cudaEvent_t sort_end;
  };

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
    const size_t pieces = static_cast<size_t>(ranks) * kDigitBuckets;
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
                                  pieces * sizeof(PieceCopy),
                                  (1 + static_cast<size_t>(ranks)) * sizeof(PeerIdentity),
                                  (1 + static_cast<size_t>(ranks)) * sizeof(uint64_t),
                                  4 * static_cast<size_t>(ranks) * sizeof(void*),
                                  kPieceOffsetTables * pieces * sizeof(uint64_t),
                                  (kPieceWordTables * pieces + 3) * sizeof(unsigned)};
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
    s.key_sources_ = static_cast<const K**>(parts[14]);
    s.value_sources_ = reinterpret_cast<const V**>(s.key_sources_ + 2 * static_cast<size_t>(ranks));
    s.piece_offsets_ = static_cast<uint64_t*>(parts[15]);
    s.piece_words_ = static_cast<unsigned*>(parts[16]);
    return ncclSuccess;
  }

  /// Partition and exact splitters: leaves the exchange planned. Synchronizes the stream (the host needs the counts).
  ncclResult_t partition() {
    if (ranks_ == 1) return ncclSuccess;
    const DigitLayout layout{kKeyBits};
    // The top digit of the whole shard: the search's root.
    const Buffers whole{io_.keys_in, partitioned_keys_, io_.values_in, partitioned_values_};
    PRIMS_NCCL_TRY_CUDA(prims::detail::radix::radix_partition_default_with<Table>(
        scratch_, scratch_bytes_, whole, n_, local_offsets_, layout.begin_bit(0), layout.end_bit(0), order_, stream_));
    const uint64_t own_count = n_;
    PRIMS_NCCL_TRY_CUDA(
        cudaMemcpyAsync(own_count_, &own_count, sizeof(uint64_t), cudaMemcpyHostToDevice, stream_));
    const PeerIdentity identity = PeerBuffers::identify(n_ > 0 ? partitioned_keys_ : nullptr,
                                                        kHasValues && n_ > 0 ? partitioned_values_ : nullptr);
    PRIMS_NCCL_TRY_CUDA(
        cudaMemcpyAsync(own_identity_, &identity, sizeof(PeerIdentity), cudaMemcpyHostToDevice, stream_));
    // Every rank's root offsets: their sum is the search's first round, and they place every bucket's pieces.
    // And every rank's identity: whether the ranks can read straight from each other's partitioned buffers.
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
    // And whether every rank reaches every other's buffers: all read straight from them, or all go through NCCL.
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
    exchange_ = search.bucket_exchange(all_cuts, root_offsets);
    // Buckets larger than a segmented Onesweep segment at any rank (skewed keys): every rank copies, then sorts
    // by Onesweep whole (all ranks decide alike: the gathering pass has collectives).
    gathers_ = !kArrivesSorted && exchange_.largest_bucket < prims::detail::kOnesweepPortionMaxItems;
    return upload_tables();
  }

  /// The exchange and the local sort (after partition(); see the file comment). Does not synchronize; `events`
  /// (a bench's) are recorded if given.
  ncclResult_t exchange_and_sort(const PhaseEvents* events = nullptr) {
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_begin, stream_));
    if (ranks_ == 1) {
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->gather_begin, stream_));
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_end, stream_));
      PRIMS_NCCL_TRY_CUDA((prims::detail::radix::radix_sort_with<device::RadixSortAlgorithm::Onesweep, Table>(
          scratch_, scratch_bytes_, io_, n_, order_, 0, kKeyBits, nullptr, stream_)));
      if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->sort_end, stream_));
      return ncclSuccess;
    }
    // A rank whose own step fails still takes part in every collective after it (its peers would wait for it
    // forever), then returns its first error.
    ncclResult_t result = ncclSuccess;
    auto local = [&](cudaError_t error) {
      if (result == ncclSuccess && error != cudaSuccess) result = ncclUnhandledCudaError;
    };
    auto collective = [&](ncclResult_t error) {
      if (result == ncclSuccess) result = error;
    };
    GatherState gather{};
    if (gathers_) {
      // Every piece's counts, before NCCL's transfer (which then travels alone), and the copies ahead in the same
      // launch (every peer's partitioned buffer is final: partition() ended with a collective after every rank's
      // last partition).
      local(gather_storage(gather));
      if (result == ncclSuccess) local(count_pieces_and_copy_ahead(gather));
      collective(gather_counts(gather));
    }
    if (!direct_) collective(transfer());
    if (events != nullptr && result == ncclSuccess) local(cudaEventRecord(events->gather_begin, stream_));
    if (result == ncclSuccess) {
      if (gathers_) {
        local(gather_pieces(gather));
      } else {
        // The exchange unsorted: every arriving piece into its place.
        local(copy_pieces(key_sources_, arrived_keys_, 4, stream_));
        if constexpr (kHasValues) local(copy_pieces(value_sources_, arrived_values_, 4, stream_));
      }
    }
    // Read straight from the peers: no rank goes on (nor returns, freeing its buffers) before every rank has read
    // what it needed from it.
    if (direct_) collective(ncclAllReduce(own_reach_, own_reach_, 1, ncclUint64, ncclSum, comm_, stream_));
    if (result != ncclSuccess) return result;
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->exchange_end, stream_));
    const Buffers sort_io{arrived_keys_, io_.keys_out, arrived_values_, io_.values_out};
    if (gathers_ && kSortedDigits > 1) {
      PRIMS_NCCL_TRY_CUDA(sort_buckets(gather));
    } else if (!gathers_ && !kArrivesSorted) {
      PRIMS_NCCL_TRY_CUDA((prims::detail::radix::radix_sort_with<device::RadixSortAlgorithm::Onesweep, Table>(
          scratch_, scratch_bytes_, sort_io, n_, order_, 0, kKeyBits, nullptr, stream_)));
    }
    if (events != nullptr) PRIMS_NCCL_TRY_CUDA(cudaEventRecord(events->sort_end, stream_));
    return ncclSuccess;
  }

  /// Whether the ranks read straight from each other's buffers (after partition()); otherwise NCCL moves them.
  bool direct_exchange() const { return direct_; }

  ncclResult_t run() {
    PRIMS_NCCL_TRY(partition());
    return exchange_and_sort();
  }

 private:
  DistributedRadixSort(ncclComm_t comm, int ranks, int rank, Buffers io, size_t n_local, Order order,
                       cudaStream_t stream)
      : comm_(comm), ranks_(ranks), rank_(rank), io_(io), n_(n_local), order_(order), stream_(stream) {}

  /// The pieces' tables (piece_offsets_ and piece_words_), kPieceOffsetTables and kPieceWordTables arrays of
  /// ranks * kDigitBuckets entries each (then three counts): what this rank holds, [receiver * kDigitBuckets + bucket]
  /// (begins, ends); what arrives, in arrival order (begins in the sources, ends, the buckets' begins; sources'
  /// ranks, rows of the received counts, the first and last arriving piece of the same bucket); the identity
  /// list (0, 1, ...); the gathering pass's order of the arriving pieces (this rank's own first); each arrived
  /// bucket's first and last arriving piece; the number of pieces held, of pieces arriving and of buckets.
  static constexpr int kPieceOffsetTables = 5;
  static constexpr int kPieceWordTables = 8;
  enum PieceOffsetTable { kHeldBegins, kHeldEnds, kArrivingBegins, kArrivingEnds, kArrivingBuckets };
  enum PieceWordTable {
    kPieceIds,
    kArrivingSources,
    kArrivingRows,
    kArrivingFirsts,
    kArrivingLasts,
    kGatherOrder,
    kSegmentFirsts,
    kSegmentLasts
  };

  size_t max_pieces() const { return static_cast<size_t>(ranks_) * kDigitBuckets; }
  uint64_t* offset_table(PieceOffsetTable t) const { return piece_offsets_ + t * max_pieces(); }
  unsigned* word_table(PieceWordTable t) const { return piece_words_ + t * max_pieces(); }
  const unsigned* held_count() const { return piece_words_ + kPieceWordTables * max_pieces(); }
  const unsigned* arriving_count() const { return held_count() + 1; }
  const unsigned* bucket_count() const { return held_count() + 2; }
  /// The counts of one rank's pieces for one receiver: one a bucket, every digit of the sorted bits.
  static constexpr size_t kReceiverCountWords = size_t{kDigitBuckets} * kSortedDigits * kDigitBuckets;

  /// Where arriving piece i is read: its sender's partitioned buffer where the ranks reach each other (unless it
  /// was copied ahead: staged_prefixes_), else (through NCCL) this rank's own for the kept pieces and the staging
  /// area for the others.
  uint64_t read_offset(size_t i) const {
    const ArrivingPiece& piece = exchange_.arriving[i];
    return piece.sender == rank_ || (direct_ && staged_pieces_[i] == 0) ? piece.source : piece.staged;
  }
  /// Its row of the sources tables: the sender's rank, or ranks + the sender's rank where it is read from the
  /// staging area after a copy ahead.
  unsigned read_source(size_t i) const {
    const ArrivingPiece& piece = exchange_.arriving[i];
    return static_cast<unsigned>(direct_ && staged_pieces_[i] != 0 ? ranks_ + piece.sender : piece.sender);
  }

  /// NCCL (and the copies ahead) stage what arrives in whichever of keys_out and the arrived buffer the exchange
  /// does not write: the arrived buffer where one gathering pass sorts everything into keys_out (or keys of one
  /// digit land there), keys_out otherwise.
  bool stages_in_arrived() const { return kArrivesSorted || (gathers_ && kSortedDigits == 1); }
  K* staging_keys() const { return stages_in_arrived() ? arrived_keys_ : io_.keys_out; }
  V* staging_values() const { return stages_in_arrived() ? arrived_values_ : io_.values_out; }

  /// Uploads the pieces' tables, the copies (where the exchange copies), every rank's buffers as the exchange
  /// reads them, and the arrived buckets' offsets (from pageable memory: staged before return).
  ncclResult_t upload_tables() {
    const size_t pieces = max_pieces();
    std::vector<uint64_t> offsets(kPieceOffsetTables * pieces, 0);
    std::vector<unsigned> words(kPieceWordTables * pieces + 3, 0);
    std::copy(exchange_.piece_begins.begin(), exchange_.piece_begins.end(), offsets.begin() + kHeldBegins * pieces);
    std::copy(exchange_.piece_ends.begin(), exchange_.piece_ends.end(), offsets.begin() + kHeldEnds * pieces);
    const std::vector<ArrivingPiece>& arriving = exchange_.arriving;
    // Keys of one digit through NCCL are received straight into place: only the kept pieces are copied.
    const bool copies_received = direct_ || !kArrivesSorted;
    // Where the ranks read each other's buffers, the gathering pass reads some far pieces from a copy made ahead.
    staged_prefixes_.clear();
    staged_pieces_.assign(arriving.size(), 0);
    if (direct_ && gathers_) staged_prefixes_ = staged_prefixes(exchange_, rank_, n_ / kStagedShare, staged_pieces_);
    std::vector<PieceCopy> copies;
    for (size_t i = 0; i < arriving.size(); ++i) {
      const ArrivingPiece& piece = arriving[i];
      const uint64_t from = read_offset(i);
      offsets[kArrivingBegins * pieces + i] = from;
      offsets[kArrivingEnds * pieces + i] = from + piece.count;
      offsets[kArrivingBuckets * pieces + i] = piece.bucket_begin;
      words[kArrivingSources * pieces + i] = read_source(i);
      words[kArrivingRows * pieces + i] = static_cast<unsigned>(piece.sender * kDigitBuckets + piece.bucket);
      size_t first = i;
      while (first > 0 && arriving[first - 1].bucket == piece.bucket) --first;
      size_t last = i + 1;
      while (last < arriving.size() && arriving[last].bucket == piece.bucket) ++last;
      words[kArrivingFirsts * pieces + i] = static_cast<unsigned>(first);
      words[kArrivingLasts * pieces + i] = static_cast<unsigned>(last);
      if (!gathers_ && (copies_received || piece.sender == rank_)) {
        copies.push_back({from, piece.destination, piece.count, static_cast<uint64_t>(piece.sender)});
      }
    }
    // The gathering pass reads every piece where it lies; its copies are the ones ahead, into the staging area.
    for (const StagedPrefix& prefix : staged_prefixes_) {
      copies.push_back({prefix.source, prefix.staged, prefix.count, static_cast<uint64_t>(prefix.peer)});
    }
    copies_ = copies.size();
    for (size_t i = 0; i < pieces; ++i) words[kPieceIds * pieces + i] = static_cast<unsigned>(i);
    // The gathering pass takes the tiles of the pieces read nearby (this rank's own, and those copied ahead) in
    // proportion with the others'.
    size_t listed = 0;
    for (const bool near : {true, false}) {
      for (size_t i = 0; i < arriving.size(); ++i) {
        if ((arriving[i].sender == rank_ || staged_pieces_[i] != 0) == near) {
          words[kGatherOrder * pieces + listed++] = static_cast<unsigned>(i);
        }
      }
      if (near) near_pieces_ = static_cast<unsigned>(listed);
    }
    // Each arrived bucket's pieces (the segments are the non-empty buckets, in arrival order).
    size_t segment = 0;
    for (size_t i = 0; i < arriving.size(); ++i) {
      if (i > 0 && arriving[i].bucket == arriving[i - 1].bucket) continue;
      words[kSegmentFirsts * pieces + segment] = words[kArrivingFirsts * pieces + i];
      words[kSegmentLasts * pieces + segment] = words[kArrivingLasts * pieces + i];
      ++segment;
    }
    words[kPieceWordTables * pieces] = static_cast<unsigned>(pieces);
    words[kPieceWordTables * pieces + 1] = static_cast<unsigned>(arriving.size());
    words[kPieceWordTables * pieces + 2] = static_cast<unsigned>(segment);
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(piece_offsets_, offsets.data(), offsets.size() * sizeof(uint64_t),
                                        cudaMemcpyHostToDevice, stream_));
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(piece_words_, words.data(), words.size() * sizeof(unsigned),
                                        cudaMemcpyHostToDevice, stream_));
    if (!copies.empty()) {
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(piece_copies_, copies.data(), copies.size() * sizeof(PieceCopy),
                                          cudaMemcpyHostToDevice, stream_));
    }
    // Every rank's buffers as the exchange reads them.
    const K* staged_keys = staging_keys();
    const V* staged_values = staging_values();
    // Keys' rows, then values': every rank's buffer as read (read_source: [0, ranks)), then the staging area for
    // the pieces copied ahead ([ranks, 2 ranks)).
    const size_t rows = 2 * static_cast<size_t>(ranks_);
    std::vector<const void*> sources(2 * rows, nullptr);
    for (int q = 0; q < ranks_; ++q) {
      const size_t k = static_cast<size_t>(q);
      const size_t v = rows + k;
      if (q == rank_) {
        sources[k] = partitioned_keys_;
        sources[v] = partitioned_values_;
      } else {
        sources[k] = direct_ ? peers_.keys(q) : staged_keys;
        sources[v] = direct_ ? peers_.values(q) : static_cast<const void*>(staged_values);
      }
      sources[k + static_cast<size_t>(ranks_)] = staged_keys;
      sources[v + static_cast<size_t>(ranks_)] = staged_values;
    }
    PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(key_sources_, sources.data(), sources.size() * sizeof(void*),
                                        cudaMemcpyHostToDevice, stream_));
    const size_t segments = exchange_.segment_begins.size();
    if (segments > 0) {
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(segment_begins_, exchange_.segment_begins.data(), segments * sizeof(uint64_t),
                                          cudaMemcpyHostToDevice, stream_));
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(segment_ends_, exchange_.segment_ends.data(), segments * sizeof(uint64_t),
                                          cudaMemcpyHostToDevice, stream_));
    }
    return ncclSuccess;
  }

  /// The scratch the partitions and the sorts need: the first partition of n keys, the refinements (TileCounts,
  /// in place, of at most n keys: its storage grows with n), the counting, the gathering pass and the buckets'
  /// segmented passes, and Onesweep of n keys (one rank, or buckets too large for segmented passes).
  static cudaError_t scratch_size(int ranks, size_t n, Order order, cudaStream_t stream, size_t& bytes) {
    const Buffers none{nullptr, nullptr, nullptr, nullptr};
    const DigitLayout layout{kKeyBits};
    size_t sort_bytes = 0;
    PRIMS_TRY((prims::detail::radix::radix_sort_with<device::RadixSortAlgorithm::Onesweep, Table>(
        nullptr, sort_bytes, none, n, order, 0, kKeyBits, nullptr, stream)));
    bytes = sort_bytes;
    if (ranks == 1) return cudaSuccess;
    size_t first_bytes = 0;
    size_t refine_bytes = 0;
    size_t gather_bytes = 0;
    PRIMS_TRY(prims::detail::radix::radix_partition_default_with<Table>(
        nullptr, first_bytes, none, n, nullptr, layout.begin_bit(0), layout.end_bit(0), order, stream));
    PRIMS_TRY((prims::detail::radix::radix_partition_with<device::RadixSortAlgorithm::TileCounts, Table>(
        nullptr, refine_bytes, none, n, nullptr, layout.begin_bit(0), layout.end_bit(0), order, stream)));
    if constexpr (!kArrivesSorted) {
      size_t sizes[kGatherParts];
      gather_sizes(ranks, n, sizes);
      void* parts[kGatherParts];
      PRIMS_TRY(prims::detail::carve_temp(nullptr, gather_bytes, sizes, parts));
    }
    bytes = std::max({sort_bytes, first_bytes, refine_bytes, gather_bytes});
    return cudaSuccess;
  }

  /// The storage of the counting, the gathering pass and the buckets' passes, in the scratch: a segmented
  /// Onesweep state over the pieces this rank holds (counts of every sorted digit, no look-back), one over the
  /// arriving pieces (one pass: starts and one set of look-back words), one over the arrived buckets (the other
  /// digits), and every rank's counts.
  static void gather_sizes(int ranks, size_t n, size_t (&sizes)[kGatherParts]) {
    constexpr int kParts = GatherStorage::kParts;
    const unsigned pieces = static_cast<unsigned>(ranks) * kDigitBuckets;
    // State k's parts are sizes[k * kParts, (k + 1) * kParts).
    auto state_sizes = [&](int k, unsigned capacity, int passes, unsigned partial_tiles = 1) {
      size_t state[kParts];
      GatherStorage::sizes(n, capacity, passes, state, partial_tiles);
      std::copy(state, state + kParts, sizes + k * kParts);
    };
    state_sizes(0, pieces, kSortedDigits);
    state_sizes(1, pieces, 1, 2);  // the gathering pass's pieces start their tiles at line edges
    state_sizes(2, kSortedDigits > 1 ? kDigitBuckets : 0, kSortedDigits - 1);
    // The counting has no look-back; the gathering pass uses one of its two look-back buffers.
    sizes[GatherStorage::kLookBackPart] = 0;
    sizes[kParts + GatherStorage::kLookBackPart] /= 2;
    sizes[kGatherParts - 1] = static_cast<size_t>(ranks) * kReceiverCountWords * sizeof(unsigned);
  }

  struct GatherState {
    prims::detail::segmented::SegmentedOnesweepState counting;
    prims::detail::segmented::SegmentedOnesweepState gathering;
    prims::detail::segmented::SegmentedOnesweepState buckets;
    unsigned* own_counts;
    unsigned* all_counts;
  };

  cudaError_t gather_storage(GatherState& gather) const {
    size_t sizes[kGatherParts];
    gather_sizes(ranks_, n_, sizes);
    void* parts[kGatherParts];
    size_t bytes = scratch_bytes_;
    PRIMS_TRY(prims::detail::carve_temp(scratch_, bytes, sizes, parts));
    constexpr int kParts = GatherStorage::kParts;
    const unsigned pieces = static_cast<unsigned>(max_pieces());
    const unsigned* ids = word_table(kPieceIds);
    auto state = [&](int k, unsigned capacity, int passes, const unsigned* listed, const unsigned* count,
                     unsigned partial_tiles = 1) {
      void* state_parts[kParts];
      std::copy(parts + k * kParts, parts + (k + 1) * kParts, state_parts);
      return GatherStorage::state(state_parts, n_, capacity, passes, listed, count, partial_tiles);
    };
    gather.counting = state(0, pieces, kSortedDigits, ids, held_count());
    gather.counting.lookback[0] = nullptr;
    gather.counting.lookback[1] = nullptr;
    gather.gathering = state(1, pieces, 1, word_table(kGatherOrder), arriving_count(), 2);
    gather.gathering.lookback[1] = nullptr;
    gather.buckets = state(2, kSortedDigits > 1 ? kDigitBuckets : 0, kSortedDigits - 1, ids, bucket_count());
    gather.own_counts = gather.counting.counts;
    gather.all_counts = static_cast<unsigned*>(parts[kGatherParts - 1]);
    return cudaSuccess;
  }

  /// Counts every sorted digit of every piece this rank holds (one read of its partitioned keys): the counts
  /// each receiver needs to place the pieces it gathers. The copies ahead (staged_prefixes_, as piece_copies_:
  /// each peer's prefix from its partitioned buffer, over the links, to the staging area) run in the same launch,
  /// on SMs of their own (count_and_copy_kernel): the links work while this GPU's memory is read. Not the copy
  /// engines: a copy-engine copy from a peer could wait on that peer's work, while the peer waited in a collective
  /// for this rank (a hang seen on four GPUs).
  cudaError_t count_pieces_and_copy_ahead(const GatherState& gather) const {
    using Policy = typename Table::template Onesweep<K, V>;
    using Tile = prims::detail::radix::OnesweepTile<Policy, K, V>;
    using Shape = typename Table::template SegmentedOnesweepHistogram<K>;
    int multiprocessors = 0;
    PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
    PRIMS_TRY(prims::detail::launch(
        prims::detail::segmented::segmented_onesweep_layout_kernel<Tile, uint64_t>,
        static_cast<unsigned>(multiprocessors), prims::detail::segmented::kSegmentedOnesweepLayoutThreads, 0, stream_,
        static_cast<const uint64_t*>(offset_table(kHeldBegins)), static_cast<const uint64_t*>(offset_table(kHeldEnds)),
        static_cast<const uint64_t*>(nullptr), static_cast<const unsigned*>(nullptr),
        static_cast<const void* const*>(nullptr), 0u, gather.counting));
    static_assert(Shape::blocks_per_sm == 1, "a block an SM: the copying blocks take SMs of their own");
    const auto blocks = static_cast<unsigned>(multiprocessors);
    const unsigned copying_blocks = copies_ > 0 ? std::max(1u, blocks / kCopyingShare) : 0u;
    const AheadCopies<K, V> copies{key_sources_,   staging_keys(), value_sources_, staging_values(),
                                   piece_copies_, static_cast<unsigned>(copies_)};
    return prims::detail::launch(count_and_copy_kernel<Policy, Tile, Shape, K, V>, blocks, Shape::threads,
                                 static_cast<size_t>(kSortedDigits) * Tile::kDigits * Shape::copies * sizeof(unsigned),
                                 stream_, static_cast<const K*>(partitioned_keys_), order_, kSortedBits,
                                 gather.counting, blocks - copying_blocks, copies);
  }

  /// Every rank's counts of the pieces it holds for this rank, and this rank's to every rank: one grouped send and
  /// receive a peer (the rows a receiver needs lie together; an all-gather would move every rank's rows to every
  /// rank), this rank's own copied. Sender q's counts for this rank are rows [q * kDigitBuckets, (q + 1) *
  /// kDigitBuckets) of all_counts.
  ncclResult_t gather_counts(const GatherState& gather) const {
    const size_t words = kReceiverCountWords;
    const size_t self = static_cast<size_t>(rank_) * words;
    if (gather.own_counts != nullptr) {
      PRIMS_NCCL_TRY_CUDA(cudaMemcpyAsync(gather.all_counts + self, gather.own_counts + self, words * sizeof(unsigned),
                                          cudaMemcpyDeviceToDevice, stream_));
    }
    return grouped([&] {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_) continue;
        const size_t at = static_cast<size_t>(q) * words;
        PRIMS_NCCL_TRY(ncclSend(gather.own_counts + at, words, ncclUint32, q, comm_, stream_));
        PRIMS_NCCL_TRY(ncclRecv(gather.all_counts + at, words, ncclUint32, q, comm_, stream_));
      }
      return ncclSuccess;
    });
  }

  /// The gathering pass (after the counts' exchange and, through NCCL, the transfer): each arriving piece's
  /// digit starts, then one pass reading every piece where it lies and scattering it on the lowest sorted digit
  /// into its bucket: into the arrived buffer, or keys_out where that is the only digit.
  cudaError_t gather_pieces(const GatherState& gather) const {
    const unsigned arriving = static_cast<unsigned>(exchange_.arriving.size());
    if (arriving == 0) return cudaSuccess;
    int multiprocessors = 0;
    PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
    PRIMS_TRY(prims::detail::launch(arriving_starts_kernel<kDigitBuckets>,
                                    std::min(arriving, static_cast<unsigned>(multiprocessors) * 4), kDigitBuckets,
                                    0, stream_, static_cast<const unsigned*>(gather.all_counts),
                                    static_cast<size_t>(kSortedDigits) * kDigitBuckets,
                                    static_cast<const unsigned*>(word_table(kGatherOrder)),
                                    static_cast<const unsigned*>(word_table(kArrivingRows)),
                                    static_cast<const unsigned*>(word_table(kArrivingFirsts)),
                                    static_cast<const unsigned*>(word_table(kArrivingLasts)), arriving,
                                    gather.gathering.starts));
    K* keys_out = kSortedDigits == 1 ? io_.keys_out : arrived_keys_;
    V* values_out = kSortedDigits == 1 ? io_.values_out : arrived_values_;
    const auto digit = prims::detail::pass_digit<K>(order_, 0, kSortedBits, kDigitBits, 0);
    using Sorting = typename Table::template SegmentedSort<K, V>;
    return prims::detail::segmented::with_segmented_onesweep_tiles<Table, K, V, Sorting>(n_, arriving, [&](auto tiles) {
      return prims::detail::segmented::segmented_onesweep_gather_pass<Table, K, V, uint64_t, decltype(tiles)>(
          gather.gathering, key_sources_, value_sources_, keys_out, values_out, offset_table(kArrivingBegins),
          offset_table(kArrivingEnds), offset_table(kArrivingBuckets), word_table(kArrivingSources), digit,
          direct_ ? near_pieces_ : 0u, stream_);
    });
  }

  /// The arrived buckets' other digits (after the gathering pass): segmented Onesweep passes from the arrived
  /// buffer into keys_out, through the partitioned buffers (free once every rank has gathered), with each
  /// bucket's counts summed from its pieces' (no second read of the keys).
  cudaError_t sort_buckets(const GatherState& gather) const {
    const unsigned segments = static_cast<unsigned>(exchange_.segment_begins.size());
    if (segments == 0) return cudaSuccess;
    const Buffers io{arrived_keys_, io_.keys_out, arrived_values_, io_.values_out};
    auto fill_counts = [&](const prims::detail::segmented::SegmentedOnesweepState& state) {
      return prims::detail::launch(bucket_counts_kernel<kDigitBuckets>, segments, kDigitBuckets, 0, stream_,
                                   static_cast<const unsigned*>(gather.all_counts),
                                   static_cast<size_t>(kSortedDigits) * kDigitBuckets, kSortedDigits,
                                   static_cast<const unsigned*>(word_table(kArrivingRows)),
                                   static_cast<const unsigned*>(word_table(kSegmentFirsts)),
                                   static_cast<const unsigned*>(word_table(kSegmentLasts)), bucket_count(),
                                   state.counts);
    };
    using Sorting = typename Table::template SegmentedSort<K, V>;
    return prims::detail::segmented::with_segmented_onesweep_tiles<Table, K, V, Sorting>(n_, segments, [&](auto tiles) {
      // The buckets hold every arrived key: the passes' grids are a block a tile.
      return prims::detail::segmented::segmented_onesweep_sort<
          Table, K, V, uint64_t, decltype(tiles), decltype(fill_counts), prims::detail::segmented::OnesweepGrid::Tiles>(
          gather.buckets, io, static_cast<const uint64_t*>(segment_begins_),
          static_cast<const uint64_t*>(segment_ends_), order_, kDigitBits, kSortedBits, partitioned_keys_,
          partitioned_values_, stream_, fill_counts);
    });
  }

  /// Through NCCL: one grouped call of a send and a receive a peer (one range each: a rank's pieces for a peer
  /// lie back to back in its partitioned buffer), received where the exchange then reads them (staged in peer
  /// order; stages_in_arrived()). Keys of one digit have nothing to gather: each piece is received straight into
  /// its place.
  ncclResult_t transfer() const {
    K* staged_keys = staging_keys();
    V* staged_values = staging_values();
    if constexpr (kArrivesSorted) {
      return grouped([&] {
        for (const ExchangePiece& piece : exchange_.sends) {
          PRIMS_NCCL_TRY(send(partitioned_keys_ + piece.source, piece.count, piece.peer));
          if constexpr (kHasValues) PRIMS_NCCL_TRY(send(partitioned_values_ + piece.source, piece.count, piece.peer));
        }
        for (const ExchangePiece& piece : exchange_.receives) {
          PRIMS_NCCL_TRY(receive(arrived_keys_ + piece.destination, piece.count, piece.peer));
          if constexpr (kHasValues) {
            PRIMS_NCCL_TRY(receive(arrived_values_ + piece.destination, piece.count, piece.peer));
          }
        }
        return ncclSuccess;
      });
    }
    return grouped([&] {
      for (const ExchangeRange& range : exchange_.send_ranges) {
        PRIMS_NCCL_TRY(send(partitioned_keys_ + range.offset, range.count, range.peer));
        if constexpr (kHasValues) PRIMS_NCCL_TRY(send(partitioned_values_ + range.offset, range.count, range.peer));
      }
      for (const ExchangeRange& range : exchange_.receive_ranges) {
        PRIMS_NCCL_TRY(receive(staged_keys + range.offset, range.count, range.peer));
        if constexpr (kHasValues) PRIMS_NCCL_TRY(receive(staged_values + range.offset, range.count, range.peer));
      }
      return ncclSuccess;
    });
  }

  /// The copies of piece_copies_, from where they lie (sources) into their places in `to`, in one launch of
  /// `blocks_per_sm` blocks an SM on `stream`.
  template <class T>
  cudaError_t copy_pieces(const T* const* sources, T* to, unsigned blocks_per_sm, cudaStream_t stream) const {
    if (copies_ == 0) return cudaSuccess;
    int multiprocessors = 0;
    PRIMS_TRY(prims::detail::multiprocessor_count(multiprocessors));
    copy_pieces_kernel<T><<<static_cast<unsigned>(multiprocessors) * blocks_per_sm, kPieceCopyThreads, 0, stream>>>(
        sources, to, piece_copies_, static_cast<unsigned>(copies_));
    return cudaGetLastError();
  }

  /// The exchange reads straight from the peers' buffers where they are reachable, unless PRIMS_DIST_EXCHANGE is
  /// "nccl" (all ranks agree: a rank that disallows it counts as one out of reach).
  static bool direct_allowed() {
    const char* setting = std::getenv("PRIMS_DIST_EXCHANGE");
    return setting == nullptr || std::string(setting) != "nccl";
  }

  template <class T>
  ncclResult_t send(const T* items, uint64_t count, int peer) const {
    return ncclSend(items, count * sizeof(T), ncclUint8, peer, comm_, stream_);
  }

  template <class T>
  ncclResult_t receive(T* items, uint64_t count, int peer) const {
    return ncclRecv(items, count * sizeof(T), ncclUint8, peer, comm_, stream_);
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
      PRIMS_NCCL_TRY_CUDA((prims::detail::radix::radix_partition_with<device::RadixSortAlgorithm::TileCounts, Table>(
          scratch_, scratch_bytes_, in_place, node.local_end - node.local_begin, offsets, layout.begin_bit(level),
          layout.end_bit(level), order_, stream_)));
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
  /// This rank's reach (1: it can read every peer's buffers), then every rank's; the word the exchange's last
  /// all-reduce moves.
  uint64_t* own_reach_ = nullptr;
  uint64_t* reaches_ = nullptr;
  /// Every rank's partitioned keys and values as the exchange reads them (the peers' over the links, or their
  /// staged copies through NCCL).
  const K** key_sources_ = nullptr;
  const V** value_sources_ = nullptr;
  uint64_t* piece_offsets_ = nullptr;
  unsigned* piece_words_ = nullptr;
  PeerBuffers peers_;
  bool direct_ = false;
  /// Whether the exchange is the gathering pass (else a copy, then Onesweep or nothing).
  bool gathers_ = false;
  /// The copies in piece_copies_: every arriving piece where the exchange copies them unsorted, the copies ahead
  /// where it gathers.
  size_t copies_ = 0;
  /// The arriving pieces read nearby (this rank's own and those copied ahead): the first ones of the gathering
  /// pass's order.
  unsigned near_pieces_ = 0;
  /// What this rank copies ahead from each peer, and whether each arriving piece is among it.
  std::vector<StagedPrefix> staged_prefixes_;
  std::vector<char> staged_pieces_;
};

/// The whole sort behind the public calls: the two-phase protocol, then the three phases. Never throws (host
/// allocations that fail are ncclSystemError).
template <class K, class V>
ncclResult_t radix_sort(ncclComm_t comm, void* temp, size_t& temp_bytes, prims::detail::PassBuffers<K, V> io,
                        size_t n_local, Order order, cudaStream_t stream) {
  try {
    ncclResult_t result = ncclSuccess;
    PRIMS_NCCL_TRY_CUDA(prims::detail::with_tuning([&](auto table) {
      using Sort = DistributedRadixSort<K, V, decltype(table)>;
      std::optional<Sort> sort;
      result = Sort::create(comm, temp, temp_bytes, io, n_local, order, stream, sort);
      if (result == ncclSuccess && sort) result = sort->run();
      return cudaSuccess;
    }));
    return result;
  } catch (...) {
    return ncclSystemError;
  }
}

}  // namespace prims::dist::detail
