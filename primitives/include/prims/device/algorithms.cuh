#pragma once
// The algorithm choices of the device layer's calls, as template arguments: RadixSortAlgorithm (radix_sort.cuh,
// radix_partition.cuh) and ScanAlgorithm (scan.cuh). The plain calls choose for the caller.

namespace prims::device {

/// How the sort finds each digit's output positions in a pass.
/// Example: `prims::device::radix_sort_keys<prims::device::RadixSortAlgorithm::TileCounts>(t, b, in, out, n);`
enum class RadixSortAlgorithm {
  /// Reduce-then-scan: count digits per tile, scan the counts with device::exclusive_sum, rank and scatter.
  /// Three launches a pass, the keys read twice a pass.
  TileCounts,
  /// Onesweep: all digit histograms in one read, then one launch a pass that ranks, looks back across tiles for
  /// its offsets and scatters. Passes whose keys all share a digit only copy.
  Onesweep,
  /// One block sorts everything in shared memory, one launch; n above the device's one_block_max_items (at most
  /// kOneBlockMaxItems) is cudaErrorInvalidValue.
  OneBlock,
  /// Most significant digits first: Onesweep passes over the top bits until the average bucket holds 8 keys,
  /// then the segmented sort sorts every bucket at once. For 64-bit keys spread evenly over their range; slower
  /// than Onesweep on skewed keys (few distinct top bits make big buckets).
  Hybrid,
  /// OneBlock up to half its limit for keys alone and a quarter for pairs (8192 u32 keys, 4096 u32/u32 pairs), else
  /// Onesweep, or for 8-byte keys from 2^26 keys Onesweep or Hybrid as the device finds the keys' top digits
  /// skewed or evenly spread: the default.
  Auto,
};

/// How the scan finds each tile's prefix.
/// Example: `prims::device::inclusive_sum<...>` takes the default; `inclusive_scan<ScanAlgorithm::ReduceThenScan>(...)`
/// an explicit one.
enum class ScanAlgorithm {
  /// Each block reduces a span of tiles, one block scans the span totals, each block scans its span behind its
  /// scanned total: 3 passes over n items (2 reads, 1 write).
  ReduceThenScan,
  /// Decoupled look-back: each tile's prefix comes from its predecessors' published statuses: 2 passes.
  SinglePass,
};

}  // namespace prims::device
