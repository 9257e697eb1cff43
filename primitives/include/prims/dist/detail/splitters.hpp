#pragma once
// The host arithmetic of the distributed sort's exact splitters, in plain C++ (no CUDA, no NCCL), so that host-only
// tests can drive it with simulated ranks.
//
// P ranks hold n_0 .. n_{P-1} keys; rank r's output is the global sorted positions [t_r, t_{r+1}) with
// t_r = n_0 + ... + n_{r-1}, so the P - 1 boundaries t_1 .. t_{P-1} decide everything. The digits are read from
// the top of the ordered key bits, 8 at a time. A node of level L is the set of keys that share the top L digits;
// its keys are contiguous in every rank's partitioned buffer once the node's ancestors have been partitioned. The
// root (level 0) is the whole buffer, partitioned by the top digit.
//
// A round partitions every pending node by its next digit on every rank (stably, in place), and sums the bucket
// offsets of all ranks (an all-reduce: offsets are prefix sums, so the sum of the ranks' offsets is the global
// one). Each boundary then either falls on the edge of a bucket (settled: every rank cuts at that bucket's local
// start), or strictly inside a bucket, which becomes its node for the next round; a bucket at the last level is a
// single key value v (settled as a tie). Boundaries that share a node share its partition: pending nodes are
// distinct. Every decision reads only global numbers, so all ranks take the same rounds.
//
// Ties: the keys equal to v before boundary t are `excess` = t - (global start of v) of them, taken in (source
// rank, source index) order. Each rank reports, per boundary, its local start of v's node (`cut`; the cut itself
// at an edge) and its number of keys equal to v (`ties`; 0 at an edge); after one all-gather of these every rank
// knows where every rank cuts: left_q(t) = cut_q + clamp(excess - (ties of ranks before q), 0, ties_q). Rank q
// sends its positions [left_q(t_r), left_q(t_{r+1})) to rank r (with left_q(t_0) = 0, left_q(t_P) = n_q): in
// order, contiguous ranges of its partitioned buffer.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace prims::dist::detail {

/// The bits of one splitter digit and the buckets a partition by it makes.
inline constexpr int kDigitBits = 8;
inline constexpr int kDigitBuckets = 1 << kDigitBits;
/// Bucket offsets of one partition: each bucket's first index, then the node's size.
inline constexpr int kBucketOffsets = kDigitBuckets + 1;

/// The digits of a key of `key_bits` bits, from the top: digit `level` covers [begin_bit(level), end_bit(level)).
/// Example: `DigitLayout{32}.begin_bit(0) == 24`, `DigitLayout{32}.levels() == 4`.
struct DigitLayout {
  int key_bits;

  constexpr int levels() const { return (key_bits + kDigitBits - 1) / kDigitBits; }
  constexpr int end_bit(int level) const { return key_bits - kDigitBits * level; }
  constexpr int begin_bit(int level) const { return std::max(0, end_bit(level) - kDigitBits); }
};

/// This rank's range of one node in its partitioned buffer: [local_begin, local_end).
struct NodeRange {
  uint64_t local_begin;
  uint64_t local_end;
};

/// One contiguous piece of the exchange, all of one top bucket: `count` elements from offset `source` of the
/// sender's partitioned buffer to offset `destination` of the receiver's arrived buffer; `peer` is the other rank
/// (the receiver in a send, the sender in a receive, this rank in a keep).
struct ExchangePiece {
  int peer;
  uint64_t source;
  uint64_t destination;
  uint64_t count;
};

/// A piece as its receiver gathers it: `count` keys of bucket `bucket` from offset `source` of sender `sender`'s
/// partitioned buffer (from offset `staged` of the receiver's staging area where it came through NCCL), which
/// land from offset `destination` of the receiver's arrived buffer on; the bucket starts at `bucket_begin`.
struct ArrivingPiece {
  int sender;
  int bucket;
  uint64_t source;
  uint64_t staged;
  uint64_t bucket_begin;
  uint64_t destination;
  uint64_t count;
};

/// A contiguous range of the exchange with one peer: the sender's pieces for it, back to back in its partitioned
/// buffer (`offset`: where they begin), or, at the receiver, where NCCL stages them (`offset` into the staging
/// area, peers in rank order) for the exchange to read each piece there.
struct ExchangeRange {
  int peer;
  uint64_t offset;
  uint64_t count;
};

/// The exchange bucket by bucket. What arrives at a rank is laid out bucket by bucket (top digit of the root
/// partition) and, inside a bucket, by sender rank, each sender's piece in its source order: every bucket is a
/// stable segment of keys sharing their top digit, so the arrived keys need only the remaining digits sorted, one
/// segment at a time. Sends to a peer and the peer's receives list the same pieces in the same order (bucket
/// order): NCCL matches them in that order.
struct BucketExchange {
  /// The pieces this rank sends and receives, peer by peer, each peer's in bucket order.
  std::vector<ExchangePiece> sends;
  std::vector<ExchangePiece> receives;
  /// The same sends and receives as one range a peer (empty ones left out), in peer order.
  std::vector<ExchangeRange> send_ranges;
  std::vector<ExchangeRange> receive_ranges;
  /// This rank's non-empty buckets in its arrived buffer, in order: [segment_begins[i], segment_ends[i]).
  std::vector<uint64_t> segment_begins;
  std::vector<uint64_t> segment_ends;
  /// The most keys any rank's bucket holds.
  uint64_t largest_bucket = 0;
  /// This rank's piece of every bucket for every receiver (itself included), at [receiver * kDigitBuckets +
  /// bucket]: [piece_begins[i], piece_ends[i]) of its partitioned buffer, empty where it has none.
  std::vector<uint64_t> piece_begins;
  std::vector<uint64_t> piece_ends;
  /// Every piece that arrives at this rank (the kept ones too), bucket by bucket, each bucket's in sender order:
  /// the arrived buffer's order.
  std::vector<ArrivingPiece> arriving;
};

/// What a rank copies from one peer ahead of the gathering pass, while it counts its own pieces (where the ranks
/// read each other's buffers): the first pieces of the peer's range for this rank, `count` keys from `source` of
/// the peer's partitioned buffer to `staged` of this rank's staging area (where NCCL would receive them).
struct StagedPrefix {
  int peer;
  uint64_t source;
  uint64_t staged;
  uint64_t count;
};

/// The prefixes rank `rank` copies ahead (StagedPrefix): whole pieces from the start of each peer's range, at most
/// `budget` keys in all, shared among the peers in proportion to what each sends. staged[i] (one per
/// exchange.arriving piece) tells whether arriving piece i is in one of them.
inline std::vector<StagedPrefix> staged_prefixes(const BucketExchange& exchange, int rank, uint64_t budget,
                                                 std::vector<char>& staged) {
  const std::vector<ArrivingPiece>& arriving = exchange.arriving;
  staged.assign(arriving.size(), 0);
  int ranks = rank + 1;
  for (const ArrivingPiece& piece : arriving) ranks = std::max(ranks, piece.sender + 1);
  std::vector<uint64_t> far(static_cast<size_t>(ranks), 0);
  uint64_t far_total = 0;
  for (const ArrivingPiece& piece : arriving) {
    if (piece.sender == rank) continue;
    far[static_cast<size_t>(piece.sender)] += piece.count;
    far_total += piece.count;
  }
  std::vector<StagedPrefix> prefixes;
  if (far_total == 0 || budget == 0) return prefixes;
  std::vector<uint64_t> share(static_cast<size_t>(ranks), 0);
  for (size_t q = 0; q < share.size(); ++q) {
    share[q] = budget >= far_total
                   ? far[q]
                   : static_cast<uint64_t>(static_cast<double>(budget) * static_cast<double>(far[q]) /
                                           static_cast<double>(far_total));
  }
  // Each peer's pieces arrive in its range's order: a prefix of them is a prefix of the range.
  std::vector<uint64_t> taken(static_cast<size_t>(ranks), 0);
  std::vector<char> closed(static_cast<size_t>(ranks), 0);
  std::vector<size_t> prefix_of(static_cast<size_t>(ranks), 0);
  for (size_t i = 0; i < arriving.size(); ++i) {
    const ArrivingPiece& piece = arriving[i];
    const size_t q = static_cast<size_t>(piece.sender);
    if (piece.sender == rank || closed[q] != 0) continue;
    if (taken[q] + piece.count > share[q]) {
      closed[q] = 1;
      continue;
    }
    if (taken[q] == 0) {
      prefix_of[q] = prefixes.size();
      prefixes.push_back({piece.sender, piece.source, piece.staged, 0});
    }
    prefixes[prefix_of[q]].count += piece.count;
    taken[q] += piece.count;
    staged[i] = 1;
  }
  return prefixes;
}

/// The exact-splitter search of one rank.
/// Example (one round per loop; GPU partitions and all-reduces in between):
///   SplitterSearch search(rank_counts, rank, 32);        // rank_counts: every rank's n, all-gathered
///   partition the whole buffer by digit 0, all-reduce its offsets
///   search.refine(local_offsets, global_offsets);
///   while (!search.done()) {
///     for each node in search.pending(): partition its range by search.level()'s digit
///     all-reduce; search.refine(local_offsets, global_offsets);
///   }
///   all-gather search.cut_summary() into summaries, every rank's root offsets into root_offsets;
///   BucketExchange exchange = search.bucket_exchange(summaries, root_offsets);
class SplitterSearch {
 public:
  /// rank_counts: n of every rank, in rank order. The search starts with the root pending (level 0).
  SplitterSearch(std::vector<uint64_t> rank_counts, int rank, int key_bits)
      : rank_counts_(std::move(rank_counts)), rank_(rank), layout_{key_bits} {
    const uint64_t local_size = rank_counts_[static_cast<size_t>(rank_)];
    uint64_t target = 0;
    for (size_t r = 0; r + 1 < rank_counts_.size(); ++r) {
      target += rank_counts_[r];
      boundaries_.push_back(Boundary{target, 0, {0, local_size}, false, 0, 0, 0});
    }
    collect_pending();
  }

  int ranks() const { return static_cast<int>(rank_counts_.size()); }
  int num_boundaries() const { return static_cast<int>(boundaries_.size()); }
  /// The level of the pending nodes: partition them by digit `level()` of the layout.
  int level() const { return level_; }
  const DigitLayout& layout() const { return layout_; }
  /// The distinct nodes to partition this round, in buffer order; empty when done.
  const std::vector<NodeRange>& pending() const { return pending_; }
  bool done() const { return pending_.empty(); }

  /// One round's result: kBucketOffsets offsets per pending node, in pending() order, relative to the node's
  /// start: this rank's (local) and the sum over all ranks (global).
  void refine(const std::vector<uint64_t>& local_offsets, const std::vector<uint64_t>& global_offsets) {
    for (size_t j = 0; j < boundaries_.size(); ++j) {
      Boundary& b = boundaries_[j];
      if (b.settled) continue;
      const size_t node = node_of_boundary_[j];
      const uint64_t* local = &local_offsets[node * kBucketOffsets];
      const uint64_t* global = &global_offsets[node * kBucketOffsets];
      const uint64_t position = b.target - b.global_begin;  // inside the node: 0 <= position <= its size
      // The last bucket whose global start is at or before the position.
      int bucket = kDigitBuckets;
      while (global[bucket] > position) --bucket;
      if (global[bucket] == position) {
        settle(b, b.range.local_begin + local[bucket], 0, 0);
        continue;
      }
      const NodeRange child{b.range.local_begin + local[bucket], b.range.local_begin + local[bucket + 1]};
      if (level_ + 1 == layout_.levels()) {
        settle(b, child.local_begin, child.local_end - child.local_begin, position - global[bucket]);
        continue;
      }
      b.global_begin += global[bucket];
      b.range = child;
    }
    ++level_;
    collect_pending();
  }

  /// This rank's (cut, ties) for every boundary, two numbers each: what the all-gather after the search moves.
  std::vector<uint64_t> cut_summary() const {
    std::vector<uint64_t> summary;
    for (const Boundary& b : boundaries_) {
      summary.push_back(b.cut);
      summary.push_back(b.ties);
    }
    return summary;
  }

  /// Where rank q cuts at boundary j (0 <= j <= P; j = 0 and j = P are the buffer's ends), from every rank's
  /// cut_summary() concatenated in rank order.
  uint64_t left_of(const std::vector<uint64_t>& summaries, int q, int j) const {
    if (j == 0) return 0;
    if (j == ranks()) return rank_counts_[static_cast<size_t>(q)];
    const Boundary& b = boundaries_[static_cast<size_t>(j - 1)];
    const size_t stride = 2 * boundaries_.size();
    uint64_t ties_before = 0;
    for (size_t p = 0; p < static_cast<size_t>(q); ++p) ties_before += summaries[p * stride + 2 * (j - 1) + 1];
    const uint64_t cut = summaries[static_cast<size_t>(q) * stride + 2 * (j - 1)];
    const uint64_t ties = summaries[static_cast<size_t>(q) * stride + 2 * (j - 1) + 1];
    const uint64_t taken = b.excess > ties_before ? std::min(b.excess - ties_before, ties) : 0;
    return cut + taken;
  }

  /// The exchange bucket by bucket (BucketExchange), from every rank's cut_summary() concatenated in rank order
  /// (after done()) and every rank's kBucketOffsets offsets of its root partition concatenated in rank order.
  BucketExchange bucket_exchange(const std::vector<uint64_t>& summaries,
                                 const std::vector<uint64_t>& root_offsets) const {
    const int p = ranks();
    // q's keys of bucket b that go to r, and where they start in q's buffer.
    auto piece = [&](int q, int r, int b, uint64_t& source) {
      const uint64_t* offsets = &root_offsets[static_cast<size_t>(q) * kBucketOffsets];
      source = std::max(left_of(summaries, q, r), offsets[b]);
      const uint64_t end = std::min(left_of(summaries, q, r + 1), offsets[b + 1]);
      return end > source ? end - source : uint64_t{0};
    };
    BucketExchange exchange;
    // Receiver r's layout: each bucket's first position.
    std::vector<std::vector<uint64_t>> bucket_starts(static_cast<size_t>(p),
                                                     std::vector<uint64_t>(kDigitBuckets + 1, 0));
    for (int r = 0; r < p; ++r) {
      std::vector<uint64_t>& start = bucket_starts[static_cast<size_t>(r)];
      for (int b = 0; b < kDigitBuckets; ++b) {
        uint64_t size = 0;
        for (int q = 0; q < p; ++q) {
          uint64_t source = 0;
          size += piece(q, r, b, source);
        }
        start[b + 1] = start[b] + size;
        exchange.largest_bucket = std::max(exchange.largest_bucket, size);
      }
    }
    // Where q's piece of bucket b lands at r: after the bucket's pieces from ranks before q.
    auto destination = [&](int q, int r, int b) {
      uint64_t position = bucket_starts[static_cast<size_t>(r)][b];
      for (int before = 0; before < q; ++before) {
        uint64_t source = 0;
        position += piece(before, r, b, source);
      }
      return position;
    };

    const std::vector<uint64_t>& mine = bucket_starts[static_cast<size_t>(rank_)];
    // Where each peer's piece of each bucket is staged at this rank, [peer * kDigitBuckets + bucket]: received
    // ranges back to back from 0, in peer order.
    std::vector<uint64_t> staged_at(static_cast<size_t>(p) * kDigitBuckets, 0);
    uint64_t staged = 0;
    for (int peer = 0; peer < p; ++peer) {
      if (peer == rank_) continue;
      for (int b = 0; b < kDigitBuckets; ++b) {
        uint64_t source = 0;
        const uint64_t count = piece(rank_, peer, b, source);
        if (count == 0) continue;
        exchange.sends.push_back({peer, source, destination(rank_, peer, b), count});
        // Consecutive buckets of one rank's range are adjacent in its buffer: one range a peer.
        auto& ranges = exchange.send_ranges;
        if (ranges.empty() || ranges.back().peer != peer) ranges.push_back({peer, source, 0});
        ranges.back().count += count;
      }
      uint64_t received = 0;
      for (int b = 0; b < kDigitBuckets; ++b) {
        uint64_t source = 0;
        const uint64_t count = piece(peer, rank_, b, source);
        if (count > 0) exchange.receives.push_back({peer, source, destination(peer, rank_, b), count});
        staged_at[static_cast<size_t>(peer) * kDigitBuckets + static_cast<size_t>(b)] = staged + received;
        received += count;
      }
      if (received > 0) exchange.receive_ranges.push_back({peer, staged, received});
      staged += received;
    }
    for (int b = 0; b < kDigitBuckets; ++b) {
      if (mine[b + 1] == mine[b]) continue;
      exchange.segment_begins.push_back(mine[b]);
      exchange.segment_ends.push_back(mine[b + 1]);
    }
    for (int r = 0; r < p; ++r) {
      for (int b = 0; b < kDigitBuckets; ++b) {
        uint64_t source = 0;
        const uint64_t count = piece(rank_, r, b, source);
        exchange.piece_begins.push_back(count > 0 ? source : 0);
        exchange.piece_ends.push_back(count > 0 ? source + count : 0);
      }
    }
    for (int b = 0; b < kDigitBuckets; ++b) {
      for (int q = 0; q < p; ++q) {
        uint64_t source = 0;
        const uint64_t count = piece(q, rank_, b, source);
        if (count == 0) continue;
        exchange.arriving.push_back({q, b, source,
                                     q == rank_ ? uint64_t{0}
                                                : staged_at[static_cast<size_t>(q) * kDigitBuckets + static_cast<size_t>(b)],
                                     mine[static_cast<size_t>(b)], destination(q, rank_, b), count});
      }
    }
    return exchange;
  }

 private:
  struct Boundary {
    uint64_t target;        // the global position t_j
    uint64_t global_begin;  // global position of the node's first key
    NodeRange range;        // this rank's range of the node
    bool settled;
    uint64_t cut;     // settled: this rank's cut (at an edge) or its start of the tied value's keys
    uint64_t ties;    // settled: this rank's keys equal to the tied value (0 at an edge)
    uint64_t excess;  // settled: the tied value's keys, over all ranks, that go before the boundary
  };

  static void settle(Boundary& b, uint64_t cut, uint64_t ties, uint64_t excess) {
    b.settled = true;
    b.cut = cut;
    b.ties = ties;
    b.excess = excess;
  }

  /// The distinct nodes of the unsettled boundaries, and which one each boundary is in. Boundaries are in
  /// increasing order, so equal nodes are adjacent; distinct nodes of one level have distinct global starts.
  void collect_pending() {
    pending_.clear();
    node_of_boundary_.assign(boundaries_.size(), 0);
    const Boundary* previous = nullptr;
    for (size_t j = 0; j < boundaries_.size(); ++j) {
      const Boundary& b = boundaries_[j];
      if (b.settled) continue;
      if (previous == nullptr || previous->global_begin != b.global_begin) pending_.push_back(b.range);
      node_of_boundary_[j] = pending_.size() - 1;
      previous = &b;
    }
  }

  std::vector<uint64_t> rank_counts_;
  int rank_;
  DigitLayout layout_;
  int level_ = 0;
  std::vector<Boundary> boundaries_;
  std::vector<NodeRange> pending_;
  std::vector<size_t> node_of_boundary_;
};

}  // namespace prims::dist::detail
