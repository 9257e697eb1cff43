// The distributed sort's splitter arithmetic (prims/dist/detail/splitters.hpp) on simulated ranks: every rank's
// buffer is a list of runs of equal keys, partitioned on the CPU exactly as the GPU partitions it (stably, in
// place, by one digit of a node's range), so counts far beyond 2^32 cost nothing. The exchange plans of all ranks
// are checked against a brute-force reference: the union sorted by (key, source rank, source index), cut at the
// rank boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "prims/dist/detail/splitters.hpp"

namespace {

using prims::dist::detail::ArrivingPiece;
using prims::dist::detail::BucketExchange;
using prims::dist::detail::DigitLayout;
using prims::dist::detail::ExchangePiece;
using prims::dist::detail::kBucketOffsets;
using prims::dist::detail::kDigitBuckets;
using prims::dist::detail::SplitterSearch;
using prims::dist::detail::staged_prefixes;
using prims::dist::detail::StagedPrefix;

/// `count` consecutive elements of one source rank, from source index `first`, all with key `key` (the ordered
/// sort bits).
struct Run {
  uint64_t key;
  int rank;
  uint64_t first;
  uint64_t count;

  bool operator==(const Run& other) const {
    return key == other.key && rank == other.rank && first == other.first && count == other.count;
  }
};

using Buffer = std::vector<Run>;

/// One rank's input: (key, count) runs in source order.
Buffer make_shard(int rank, const std::vector<std::pair<uint64_t, uint64_t>>& keys_and_counts) {
  Buffer shard;
  uint64_t index = 0;
  for (const auto& [key, count] : keys_and_counts) {
    if (count == 0) continue;
    shard.push_back({key, rank, index, count});
    index += count;
  }
  return shard;
}

uint64_t size_of(const Buffer& runs) {
  uint64_t total = 0;
  for (const Run& run : runs) total += run.count;
  return total;
}

/// Splits the run holding `position` (if it starts before it); returns the index of the run that starts there.
size_t split_at(Buffer& buffer, uint64_t position) {
  uint64_t start = 0;
  for (size_t i = 0; i < buffer.size(); ++i) {
    if (start == position) return i;
    if (position < start + buffer[i].count) {
      Run tail = buffer[i];
      const uint64_t head = position - start;
      buffer[i].count = head;
      tail.first += head;
      tail.count -= head;
      buffer.insert(buffer.begin() + static_cast<long>(i) + 1, tail);
      return i + 1;
    }
    start += buffer[i].count;
  }
  return buffer.size();
}

/// What the GPU does to one node: a stable partition of [begin, end) by the digit [begin_bit, end_bit), in place;
/// returns the kBucketOffsets bucket offsets relative to begin.
std::vector<uint64_t> partition_range(Buffer& buffer, uint64_t begin, uint64_t end, int begin_bit, int end_bit) {
  const size_t first = split_at(buffer, begin);
  const size_t last = split_at(buffer, end);
  const uint64_t mask = (uint64_t{1} << (end_bit - begin_bit)) - 1;
  auto digit = [&](const Run& run) { return (run.key >> begin_bit) & mask; };
  std::stable_sort(buffer.begin() + static_cast<long>(first), buffer.begin() + static_cast<long>(last),
                   [&](const Run& a, const Run& b) { return digit(a) < digit(b); });
  std::vector<uint64_t> offsets(kBucketOffsets, 0);
  for (size_t i = first; i < last; ++i) offsets[digit(buffer[i]) + 1] += buffer[i].count;
  for (int d = 0; d < kDigitBuckets; ++d) offsets[d + 1] += offsets[d];
  EXPECT_EQ(offsets[kDigitBuckets], end - begin);
  return offsets;
}

/// The elements [begin, begin + count) of a buffer.
Buffer slice(const Buffer& buffer, uint64_t begin, uint64_t count) {
  Buffer copy = buffer;
  const size_t first = split_at(copy, begin);
  const size_t last = split_at(copy, begin + count);
  return Buffer(copy.begin() + static_cast<long>(first), copy.begin() + static_cast<long>(last));
}

/// Runs merged where one continues the other (same key, same rank, next index), empty runs dropped: a canonical
/// form to compare element sequences.
Buffer normalized(const Buffer& runs) {
  Buffer out;
  for (const Run& run : runs) {
    if (run.count == 0) continue;
    if (!out.empty() && out.back().key == run.key && out.back().rank == run.rank &&
        out.back().first + out.back().count == run.first) {
      out.back().count += run.count;
    } else {
      out.push_back(run);
    }
  }
  return out;
}

void stable_sort_by_key(Buffer& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.key < b.key; });
}

/// What one rank sends and receives, in elements, from the searches' cuts: segment q of its partitioned buffer
/// ([send_offsets[q], send_offsets[q] + send_counts[q])) goes to rank q; what rank q sends lands at
/// receive_offsets[q] of its output.
struct ExchangePlan {
  std::vector<uint64_t> send_counts;
  std::vector<uint64_t> send_offsets;
  std::vector<uint64_t> receive_counts;
  std::vector<uint64_t> receive_offsets;
};

/// Rank `rank`'s plan, from every rank's cut summary concatenated in rank order (SplitterSearch::left_of).
ExchangePlan plan_of(const SplitterSearch& search, const std::vector<uint64_t>& summaries, int rank) {
  const int p = search.ranks();
  ExchangePlan plan{std::vector<uint64_t>(p), std::vector<uint64_t>(p), std::vector<uint64_t>(p),
                    std::vector<uint64_t>(p)};
  uint64_t received = 0;
  for (int q = 0; q < p; ++q) {
    plan.send_offsets[q] = search.left_of(summaries, rank, q);
    plan.send_counts[q] = search.left_of(summaries, rank, q + 1) - plan.send_offsets[q];
    plan.receive_offsets[q] = received;
    plan.receive_counts[q] = search.left_of(summaries, q, rank + 1) - search.left_of(summaries, q, rank);
    received += plan.receive_counts[q];
  }
  return plan;
}

struct Simulation {
  std::vector<ExchangePlan> plans;
  std::vector<Buffer> buffers;  // every rank's partitioned buffer after the search
  int rounds = 0;
  std::vector<uint64_t> root_offsets;  // every rank's offsets of its root partition, in rank order
  std::vector<uint64_t> summaries;     // every rank's cut summary, in rank order
  std::vector<SplitterSearch> searches;
};

/// Runs the splitter search on every simulated rank, round by round, as the GPU code does.
Simulation simulate(const std::vector<Buffer>& shards, int key_bits) {
  const int ranks = static_cast<int>(shards.size());
  std::vector<uint64_t> rank_counts;
  for (const Buffer& shard : shards) rank_counts.push_back(size_of(shard));
  Simulation sim;
  sim.buffers = shards;
  std::vector<SplitterSearch> searches;
  for (int r = 0; r < ranks; ++r) searches.emplace_back(rank_counts, r, key_bits);
  while (!searches[0].done()) {
    const int level = searches[0].level();
    const DigitLayout layout = searches[0].layout();
    const size_t nodes = searches[0].pending().size();
    std::vector<std::vector<uint64_t>> local(ranks);
    std::vector<uint64_t> global(nodes * kBucketOffsets, 0);
    for (int r = 0; r < ranks; ++r) {
      // Every rank must take the same rounds with the same number of nodes: they run collectives together.
      EXPECT_EQ(searches[r].level(), level);
      EXPECT_EQ(searches[r].pending().size(), nodes);
      if (searches[r].pending().size() != nodes) return sim;
      for (const auto& node : searches[r].pending()) {
        const auto offsets = partition_range(sim.buffers[r], node.local_begin, node.local_end,
                                             layout.begin_bit(level), layout.end_bit(level));
        local[r].insert(local[r].end(), offsets.begin(), offsets.end());
      }
      for (size_t i = 0; i < global.size(); ++i) global[i] += local[r][i];
      if (sim.rounds == 0) sim.root_offsets.insert(sim.root_offsets.end(), local[r].begin(), local[r].end());
    }
    for (int r = 0; r < ranks; ++r) searches[r].refine(local[r], global);
    ++sim.rounds;
    EXPECT_LE(sim.rounds, layout.levels());
    if (sim.rounds > layout.levels()) return sim;
  }
  std::vector<uint64_t> summaries;
  for (const auto& search : searches) {
    EXPECT_TRUE(search.done());
    const auto summary = search.cut_summary();
    EXPECT_EQ(summary.size(), 2 * static_cast<size_t>(ranks - 1));
    summaries.insert(summaries.end(), summary.begin(), summary.end());
  }
  for (int r = 0; r < ranks; ++r) sim.plans.push_back(plan_of(searches[r], summaries, r));
  sim.summaries = summaries;
  sim.searches = searches;
  return sim;
}

/// Checks what arrives at rank r as the gathering pass reads it (BucketExchange::arriving): every piece in arrival
/// order, back to back from 0, by bucket and then sender; each the sender's own piece of that bucket for r
/// (piece_begins, piece_ends at [receiver * kDigitBuckets + bucket]), staged where NCCL's receive range from the sender puts it, in its bucket's segment.
void check_arriving_pieces(const std::vector<BucketExchange>& exchanges, const Simulation& sim, int r) {
  const int ranks = static_cast<int>(exchanges.size());
  const BucketExchange& exchange = exchanges[static_cast<size_t>(r)];
  uint64_t position = 0;
  size_t segment = 0;
  const ArrivingPiece* previous = nullptr;
  // Where the next piece from each sender is staged: its receive ranges, in order.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> ranges(static_cast<size_t>(ranks));
  for (const auto& range : exchange.receive_ranges) {
    ranges[static_cast<size_t>(range.peer)].emplace_back(range.offset, range.count);
  }
  std::vector<size_t> range_of(static_cast<size_t>(ranks), 0);
  std::vector<uint64_t> used(static_cast<size_t>(ranks), 0);
  for (const ArrivingPiece& piece : exchange.arriving) {
    EXPECT_GT(piece.count, 0u);
    EXPECT_EQ(piece.destination, position) << "rank " << r << ": a gap or an overlap";
    if (previous != nullptr) {
      EXPECT_TRUE(previous->bucket < piece.bucket ||
                  (previous->bucket == piece.bucket && previous->sender < piece.sender));
    }
    while (segment < exchange.segment_ends.size() && exchange.segment_ends[segment] <= position) ++segment;
    ASSERT_LT(segment, exchange.segment_begins.size());
    EXPECT_EQ(piece.bucket_begin, exchange.segment_begins[segment]);
    EXPECT_LE(piece.destination + piece.count, exchange.segment_ends[segment]);
    const BucketExchange& sender = exchanges[static_cast<size_t>(piece.sender)];
    const size_t held = static_cast<size_t>(r) * kDigitBuckets + static_cast<size_t>(piece.bucket);
    EXPECT_EQ(sender.piece_begins[held], piece.source);
    EXPECT_EQ(sender.piece_ends[held], piece.source + piece.count);
    ASSERT_LE(piece.source + piece.count, size_of(sim.buffers[static_cast<size_t>(piece.sender)]));
    if (piece.sender != r) {
      const size_t q = static_cast<size_t>(piece.sender);
      while (range_of[q] < ranges[q].size() && used[q] == ranges[q][range_of[q]].second) ++range_of[q], used[q] = 0;
      ASSERT_LT(range_of[q], ranges[q].size()) << "more arrives from " << q << " than its ranges hold";
      EXPECT_EQ(piece.staged, ranges[q][range_of[q]].first + used[q]);
      used[q] += piece.count;
    }
    position += piece.count;
    previous = &piece;
  }
  EXPECT_EQ(position, size_of(sim.buffers[static_cast<size_t>(r)])) << "rank " << r << " keeps its count";
  // Every piece a rank holds for r arrives at r.
  for (int q = 0; q < ranks; ++q) {
    const BucketExchange& sender = exchanges[static_cast<size_t>(q)];
    ASSERT_EQ(sender.piece_begins.size(), static_cast<size_t>(kDigitBuckets) * static_cast<size_t>(ranks));
    uint64_t held = 0;
    for (int b = 0; b < kDigitBuckets; ++b) {
      const size_t i = static_cast<size_t>(r) * kDigitBuckets + static_cast<size_t>(b);
      held += sender.piece_ends[i] - sender.piece_begins[i];
    }
    uint64_t arrived = 0;
    for (const ArrivingPiece& piece : exchange.arriving) arrived += piece.sender == q ? piece.count : 0;
    EXPECT_EQ(held, arrived) << "from " << q << " to " << r;
  }
}

/// Checks what rank r copies ahead from its peers under `budget` (staged_prefixes): from each peer the first
/// pieces of its range only, whole, as one copy from the first one's source to its staged place; at most each
/// peer's share of the budget (in proportion to what it sends), and no more pieces would fit it.
void check_staged_prefixes(const BucketExchange& exchange, int r, uint64_t budget) {
  std::vector<char> staged;
  const std::vector<StagedPrefix> prefixes = staged_prefixes(exchange, r, budget, staged);
  ASSERT_EQ(staged.size(), exchange.arriving.size());
  std::map<int, uint64_t> far;
  uint64_t far_total = 0;
  for (const ArrivingPiece& piece : exchange.arriving) {
    if (piece.sender != r) far[piece.sender] += piece.count, far_total += piece.count;
  }
  uint64_t copied = 0;
  std::set<int> peers;
  for (const StagedPrefix& prefix : prefixes) {
    EXPECT_NE(prefix.peer, r);
    EXPECT_TRUE(peers.insert(prefix.peer).second) << "one copy a peer";
    const double share = budget >= far_total ? static_cast<double>(far[prefix.peer])
                                             : static_cast<double>(budget) * static_cast<double>(far[prefix.peer]) /
                                                   static_cast<double>(far_total);
    EXPECT_LE(static_cast<double>(prefix.count), share);
    // The peer's pieces in arrival order: staged ones first, back to back from the copy's start.
    uint64_t source = prefix.source;
    uint64_t staged_at = prefix.staged;
    bool in_prefix = true;
    bool first = true;
    for (size_t i = 0; i < exchange.arriving.size(); ++i) {
      const ArrivingPiece& piece = exchange.arriving[i];
      if (piece.sender != prefix.peer) continue;
      if (first) {
        EXPECT_EQ(piece.source, prefix.source) << "the copy starts at the peer's first piece";
        EXPECT_EQ(piece.staged, prefix.staged);
        first = false;
      }
      if (staged[i] == 0) {
        if (in_prefix) {
          EXPECT_GT(static_cast<double>(source - prefix.source + piece.count), share) << "a piece that fits is left";
        }
        in_prefix = false;
        continue;
      }
      EXPECT_TRUE(in_prefix) << "a staged piece after one that is not";
      EXPECT_EQ(piece.source, source);
      EXPECT_EQ(piece.staged, staged_at);
      source += piece.count;
      staged_at += piece.count;
    }
    EXPECT_EQ(source - prefix.source, prefix.count);
    copied += prefix.count;
  }
  EXPECT_LE(copied, budget);
  if (budget >= far_total) {
    EXPECT_EQ(copied, far_total) << "a budget for everything copies everything";
  }
  for (size_t i = 0; i < exchange.arriving.size(); ++i) {
    const int q = exchange.arriving[i].sender;
    if (staged[i] != 0) {
      EXPECT_EQ(peers.count(q), 1u);
    }
    if (q == r) {
      EXPECT_EQ(staged[i], 0) << "own pieces are never copied";
    }
  }
}

/// Checks the bucket-by-bucket exchange of every rank (BucketExchange): sends match the peers' receives piece for
/// piece and as one range a peer, staged back to back in peer order; what arrives fills each rank's buffer exactly
/// (check_arriving_pieces); every segment holds keys of one top digit; and the segments sorted one by one are the
/// reference slice.
void check_bucket_exchange(const Simulation& sim, const Buffer& reference, int key_bits) {
  const int ranks = static_cast<int>(sim.searches.size());
  std::vector<BucketExchange> exchanges;
  for (const auto& search : sim.searches) exchanges.push_back(search.bucket_exchange(sim.summaries, sim.root_offsets));
  auto same = [](const ExchangePiece& a, const ExchangePiece& b) {
    return a.source == b.source && a.destination == b.destination && a.count == b.count;
  };
  uint64_t target = 0;
  uint64_t largest = 0;
  for (int r = 0; r < ranks; ++r) {
    const BucketExchange& exchange = exchanges[static_cast<size_t>(r)];
    const uint64_t n_r = size_of(sim.buffers[static_cast<size_t>(r)]);
    // What r receives from q is what q sends to r, in the same order.
    for (int q = 0; q < ranks; ++q) {
      if (q == r) continue;
      std::vector<ExchangePiece> sent, received;
      for (const ExchangePiece& piece : exchanges[static_cast<size_t>(q)].sends) {
        if (piece.peer == r) sent.push_back(piece);
      }
      for (const ExchangePiece& piece : exchange.receives) {
        if (piece.peer == q) received.push_back(piece);
      }
      ASSERT_EQ(sent.size(), received.size()) << "from " << q << " to " << r;
      for (size_t i = 0; i < sent.size(); ++i) EXPECT_TRUE(same(sent[i], received[i])) << "piece " << i;
      // The same as one range: q's pieces back to back from the range's offset, r's staged range as long.
      uint64_t sent_offset = 0, sent_count = 0, staged_count = 0;
      for (const auto& range : exchanges[static_cast<size_t>(q)].send_ranges) {
        if (range.peer == r) sent_offset = range.offset, sent_count += range.count;
      }
      for (const auto& range : exchange.receive_ranges) {
        if (range.peer == q) staged_count += range.count;
      }
      uint64_t position = sent_offset;
      for (const ExchangePiece& piece : sent) {
        EXPECT_EQ(piece.source, position) << "a gap in the range from " << q << " to " << r;
        position += piece.count;
      }
      EXPECT_EQ(position - sent_offset, sent_count);
      EXPECT_EQ(staged_count, sent_count);
    }
    // The received ranges are staged back to back from 0, in peer order.
    uint64_t staged = 0;
    int previous_peer = -1;
    for (const auto& range : exchange.receive_ranges) {
      EXPECT_GT(range.peer, previous_peer);
      EXPECT_NE(range.peer, r);
      EXPECT_EQ(range.offset, staged);
      previous_peer = range.peer;
      staged += range.count;
    }
    EXPECT_LE(staged, n_r);
    check_arriving_pieces(exchanges, sim, r);
    for (const uint64_t budget : {uint64_t{0}, n_r / 8, n_r / 3, ~uint64_t{0}}) {
      check_staged_prefixes(exchange, r, budget);
    }
    // Everything that lands at r, by destination (arriving tiles [0, n_r): check_arriving_pieces).
    Buffer arrived;
    for (const ArrivingPiece& piece : exchange.arriving) {
      const Buffer pieces = slice(sim.buffers[static_cast<size_t>(piece.sender)], piece.source, piece.count);
      arrived.insert(arrived.end(), pieces.begin(), pieces.end());
    }
    EXPECT_EQ(size_of(arrived), n_r);
    // The segments cover the buffer in order, each one top digit; sorted one by one they are r's slice.
    uint64_t position = 0;
    Buffer sorted;
    const int top_shift = key_bits - 8;
    for (size_t i = 0; i < exchange.segment_begins.size(); ++i) {
      EXPECT_EQ(exchange.segment_begins[i], position);
      ASSERT_GT(exchange.segment_ends[i], exchange.segment_begins[i]);
      position = exchange.segment_ends[i];
      largest = std::max(largest, exchange.segment_ends[i] - exchange.segment_begins[i]);
      Buffer segment =
          slice(arrived, exchange.segment_begins[i], exchange.segment_ends[i] - exchange.segment_begins[i]);
      for (const Run& run : segment) EXPECT_EQ(run.key >> top_shift, segment.front().key >> top_shift);
      stable_sort_by_key(segment);
      sorted.insert(sorted.end(), segment.begin(), segment.end());
    }
    EXPECT_EQ(position, n_r);
    EXPECT_TRUE(normalized(sorted) == normalized(slice(reference, target, n_r))) << "rank " << r;
    target += n_r;
  }
  for (const BucketExchange& exchange : exchanges) EXPECT_EQ(exchange.largest_bucket, largest);
}

/// Simulates the search and checks every rank's plan against the brute-force reference.
void check_plans(const std::vector<Buffer>& shards, int key_bits) {
  const int ranks = static_cast<int>(shards.size());
  const Simulation sim = simulate(shards, key_bits);
  ASSERT_EQ(sim.plans.size(), shards.size());

  // The reference: the union in (rank, index) order, sorted stably by key, cut at t_1 .. t_{P-1}.
  Buffer all;
  for (const Buffer& shard : shards) all.insert(all.end(), shard.begin(), shard.end());
  stable_sort_by_key(all);
  uint64_t target = 0;
  for (int r = 0; r < ranks; ++r) {
    const uint64_t n_r = size_of(shards[r]);
    const ExchangePlan& plan = sim.plans[r];
    uint64_t received = 0;
    Buffer arrived;
    for (int q = 0; q < ranks; ++q) {
      // What rank q sends to r is what r expects from q, and it lands right after what came from q - 1.
      EXPECT_EQ(sim.plans[q].send_counts[r], plan.receive_counts[q]) << "from " << q << " to " << r;
      EXPECT_EQ(plan.receive_offsets[q], received);
      received += plan.receive_counts[q];
      const Buffer segment = slice(sim.buffers[q], sim.plans[q].send_offsets[r], sim.plans[q].send_counts[r]);
      arrived.insert(arrived.end(), segment.begin(), segment.end());
    }
    EXPECT_EQ(received, n_r) << "rank " << r << " keeps its count";
    // Segments of one rank are contiguous and in destination order.
    uint64_t offset = 0;
    for (int q = 0; q < ranks; ++q) {
      EXPECT_EQ(plan.send_offsets[q], offset) << "rank " << r << " to " << q;
      offset += plan.send_counts[q];
    }
    EXPECT_EQ(offset, n_r);
    // The local stable sort of what arrived is the reference slice, element for element.
    stable_sort_by_key(arrived);
    EXPECT_TRUE(normalized(arrived) == normalized(slice(all, target, n_r))) << "rank " << r << " gets its slice";
    target += n_r;
  }
  if (ranks > 1) {
    check_bucket_exchange(sim, all, key_bits);
  }
}

/// A shard of `n` single keys drawn by `draw`.
template <class Draw>
Buffer random_shard(int rank, uint64_t n, Draw draw) {
  std::vector<std::pair<uint64_t, uint64_t>> keys;
  for (uint64_t i = 0; i < n; ++i) keys.emplace_back(draw(), 1);
  return make_shard(rank, keys);
}

uint64_t key_mask(int key_bits) { return key_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits) - 1; }

TEST(DistSplitters, DigitLayoutCoversTheKeyFromTheTop) {
  const DigitLayout layout{32};
  EXPECT_EQ(layout.levels(), 4);
  EXPECT_EQ(layout.begin_bit(0), 24);
  EXPECT_EQ(layout.end_bit(0), 32);
  EXPECT_EQ(layout.begin_bit(3), 0);
  EXPECT_EQ(layout.end_bit(3), 8);
  EXPECT_EQ(DigitLayout{8}.levels(), 1);
  EXPECT_EQ(DigitLayout{64}.levels(), 8);
}

TEST(DistSplitters, OneRankSendsEverythingToItself) {
  const std::vector<Buffer> shards = {random_shard(0, 100, [] { return uint64_t{7}; })};
  const Simulation sim = simulate(shards, 32);
  EXPECT_EQ(sim.rounds, 0);
  ASSERT_EQ(sim.plans.size(), 1u);
  EXPECT_EQ(sim.plans[0].send_counts, std::vector<uint64_t>{100});
  EXPECT_EQ(sim.plans[0].receive_counts, std::vector<uint64_t>{100});
}

TEST(DistSplitters, UniformKeysUnevenShards) {
  for (int ranks : {2, 3, 4, 8}) {
    for (int key_bits : {8, 16, 32, 64}) {
      for (uint64_t seed = 0; seed < 4; ++seed) {
        SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(key_bits) + " bits, seed " +
                     std::to_string(seed));
        std::mt19937_64 rng(seed * 131 + static_cast<uint64_t>(ranks));
        std::vector<Buffer> shards;
        for (int r = 0; r < ranks; ++r) {
          const uint64_t n = rng() % 700;
          shards.push_back(random_shard(r, n, [&] { return rng() & key_mask(key_bits); }));
        }
        check_plans(shards, key_bits);
      }
    }
  }
}

TEST(DistSplitters, EmptyShards) {
  for (int ranks : {2, 3, 4, 8}) {
    for (int empty_pattern = 0; empty_pattern < 4; ++empty_pattern) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, pattern " + std::to_string(empty_pattern));
      std::mt19937_64 rng(static_cast<uint64_t>(ranks * 10 + empty_pattern));
      std::vector<Buffer> shards;
      for (int r = 0; r < ranks; ++r) {
        // 0: the first rank empty, 1: the last, 2: every other, 3: all but one.
        const bool empty = (empty_pattern == 0 && r == 0) || (empty_pattern == 1 && r == ranks - 1) ||
                           (empty_pattern == 2 && r % 2 == 1) || (empty_pattern == 3 && r != ranks / 2);
        shards.push_back(random_shard(r, empty ? 0 : 300 + rng() % 300, [&] { return rng() & 0xffffffffu; }));
      }
      check_plans(shards, 32);
    }
  }
}

TEST(DistSplitters, NoKeysAtAll) {
  for (int ranks : {2, 3, 8}) {
    check_plans(std::vector<Buffer>(static_cast<size_t>(ranks)), 32);
  }
}

TEST(DistSplitters, AllKeysEqual) {
  for (int ranks : {2, 3, 4, 8}) {
    for (int key_bits : {8, 32, 64}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(key_bits) + " bits");
      std::vector<Buffer> shards;
      for (int r = 0; r < ranks; ++r) {
        shards.push_back(random_shard(r, 50 + 37 * static_cast<uint64_t>(r), [] { return uint64_t{0x5a}; }));
      }
      const Simulation sim = simulate(shards, key_bits);
      // One value: the search goes down every digit, one node a round, to a tie at every boundary.
      EXPECT_EQ(sim.rounds, DigitLayout{key_bits}.levels());
      check_plans(shards, key_bits);
    }
  }
}

TEST(DistSplitters, FewValuesTiesStraddleBoundaries) {
  for (int ranks : {2, 3, 4, 8}) {
    for (uint64_t distinct : {2u, 3u, 5u}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, " + std::to_string(distinct) + " values");
      std::mt19937_64 rng(static_cast<uint64_t>(ranks) * 7 + distinct);
      std::vector<Buffer> shards;
      for (int r = 0; r < ranks; ++r) {
        shards.push_back(random_shard(r, 100 + rng() % 200, [&] { return (rng() % distinct) * 0x01010101u; }));
      }
      check_plans(shards, 32);
    }
  }
}

TEST(DistSplitters, AllKeysInOneRanksRange) {
  for (int ranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    std::mt19937_64 rng(static_cast<uint64_t>(ranks));
    // Rank 0 holds every small key, the other ranks hold keys that sort after all of them; and in a second set all
    // keys share their top three bytes, so the boundaries are found in the last digit.
    std::vector<Buffer> ordered, narrow;
    for (int r = 0; r < ranks; ++r) {
      const uint64_t base = r == 0 ? 0 : 0xff000000u;
      ordered.push_back(random_shard(r, 200 + rng() % 100, [&] { return base + (rng() & 0xffff); }));
      narrow.push_back(random_shard(r, 200 + rng() % 100, [&] { return 0xabcdef00u + (rng() & 0xff); }));
    }
    check_plans(ordered, 32);
    check_plans(narrow, 32);
  }
}

TEST(DistSplitters, SeveralBoundariesInOneBucket) {
  // Every key in top bucket 0x42: all seven boundaries of eight ranks go down the same node, which is partitioned
  // once a round; some of them end on the same value.
  std::mt19937_64 rng(8);
  std::vector<Buffer> shards;
  for (int r = 0; r < 8; ++r) {
    shards.push_back(random_shard(r, 64 + rng() % 64, [&] { return 0x42000000u + (rng() % 5) * 0x10101u; }));
  }
  check_plans(shards, 32);
}

TEST(DistSplitters, DescendingBitsAreJustOtherBits) {
  // The GPU applies the order to the digits; the search sees ordered bits only. Complemented keys make the
  // reverse order.
  std::mt19937_64 rng(3);
  std::vector<Buffer> shards;
  for (int r = 0; r < 3; ++r) shards.push_back(random_shard(r, 300, [&] { return ~(rng() % 50) & 0xffffffffu; }));
  check_plans(shards, 32);
}

TEST(DistSplitters, CountsBeyond32Bits) {
  // Runs of billions of equal keys: every count and offset needs 64 bits.
  const uint64_t big = uint64_t{3} << 32;
  for (int ranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    std::vector<Buffer> shards;
    for (int r = 0; r < ranks; ++r) {
      shards.push_back(make_shard(r, {{0x10u + static_cast<uint64_t>(r % 3), big + static_cast<uint64_t>(r)},
                                      {0x7fffffffu, big / 3},
                                      {0x10u, uint64_t{5} << 31},
                                      {0x80000000u + static_cast<uint64_t>(r), 17}}));
    }
    check_plans(shards, 32);
    shards.clear();
    for (int r = 0; r < ranks; ++r) {
      shards.push_back(make_shard(r, {{uint64_t{1} << 63, big * static_cast<uint64_t>(r + 1)},
                                      {0x0123456789abcdefull, big + 1}}));
    }
    check_plans(shards, 64);
  }
}

TEST(DistSplitters, RandomRunsManyShapes) {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const int ranks = 2 + static_cast<int>(rng() % 7);
    const int key_bits = 8 << (rng() % 4);
    const uint64_t distinct = 1 + rng() % 20;
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::vector<uint64_t> values;
    for (uint64_t v = 0; v < distinct; ++v) values.push_back(rng() & key_mask(key_bits));
    std::vector<Buffer> shards;
    for (int r = 0; r < ranks; ++r) {
      std::vector<std::pair<uint64_t, uint64_t>> runs;
      const int num_runs = static_cast<int>(rng() % 6);
      for (int i = 0; i < num_runs; ++i) {
        // Short runs and runs of up to 2^34 keys.
        const uint64_t count = rng() % 4 == 0 ? rng() % 5 : rng() % (uint64_t{1} << 34);
        runs.emplace_back(values[rng() % distinct], count);
      }
      shards.push_back(make_shard(r, runs));
    }
    check_plans(shards, key_bits);
  }
}

}  // namespace
