#pragma once
// The plain call's choice between Onesweep and the hybrid (RadixSortAlgorithm::Auto, for the keys and sizes the
// table's AutoChoice names), made on the device from the digits Onesweep counts first, with no host
// synchronization. The hybrid wins on evenly spread keys and loses on skewed ones (radix_sort_hybrid.cuh); which
// one the input is shows in the histograms of its top digits.
//   1. count_onesweep_digits: Onesweep's histogram read and digit starts over [begin_bit, end_bit), whose passes
//      (LSD passes p = 0 .. P-1, all of radix_bits bits: the range is a whole number of digits) are Onesweep's.
//   2. radix_choice_kernel, one block: the hybrid's top msd bits are the top k LSD digits, the lowest of them
//      shortened to its top bits (so its histogram is the LSD digit's, its counts summed in groups). From those k
//      histograms it estimates how many keys share a random key's top msd bits, its bucket:
//        E = n * C_1 * ... * C_k,   C_j = sum over digits d of (count_jd / n)^2,
//      exact where the digits are independent (C_j is the chance that two keys share digit j): 8 to 16 keys for
//      evenly spread keys (the hybrid's average bucket), n for keys that are all equal. The hybrid is taken when
//      E <= AutoChoice::max_expected_bucket.
//      The kernel then writes the hybrid's passes' trivial flags and its lowest pass's digit starts (its other
//      passes read the LSD passes' starts), and marks every pass of the path not taken kPassSkipped; `skip` words
//      turn the other launches of the path not taken into launches that return at once.
//   3. k launches of onesweep_either_pass_kernel: the hybrid's k passes over the top digits where it was chosen,
//      else Onesweep's first k passes (the two paths' passes have the same tiles; the pass not taken is the one
//      whose flag the choice kernel marked kPassSkipped).
//   4. The hybrid's finish copy and sort_buckets (bounds, segmented sort), which borrows the passes' alternate
//      buffers.
//   5. Onesweep's other P - k passes and its finish copy.
// The path not taken costs its own launches (about 22 for the hybrid, P - k for Onesweep), each returning at once,
// plus Onesweep's pass kernels' grids of one block a tile. The temporary storage holds both paths' state and depends
// on n and the bit range alone, as the choice does on the host.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "prims/block/reduce.cuh"
#include "prims/block/scan.cuh"
#include "prims/device/detail/radix_sort_common.cuh"
#include "prims/device/detail/radix_sort_hybrid.cuh"
#include "prims/device/detail/radix_sort_onesweep.cuh"
#include "prims/device/detail/tuning.cuh"
#include "prims/util/launch.cuh"
#include "prims/util/ops.cuh"
#include "prims/util/radix_key.cuh"
#include "prims/util/temp_storage.cuh"

namespace prims::detail::radix {

/// The two words that skip a path: skip[kSkipHybrid] is non-zero when Onesweep was chosen, skip[kSkipOnesweep]
/// when the hybrid was.
enum AutoSkip : int { kSkipHybrid, kSkipOnesweep, kSkipWords };

/// log2 of the expected bucket, from the sums of squared digit counts of the top passes (sum_d count_jd^2) and n.
/// Used by the choice kernel; a plain function so the rule is tested on the host.
PRIMS_HOST_DEVICE inline double log2_expected_bucket(const double* squares, int passes, double n) {
  double log2_bucket = std::log2(n);
  for (int j = 0; j < passes; ++j) log2_bucket += std::log2(squares[j]) - 2 * std::log2(n);
  return log2_bucket;
}

/// What the choice kernel needs to know of the two paths.
template <class Offset>
struct AutoChoiceArgs {
  /// Onesweep's histograms [pass][digit] (one portion), digit starts [pass][digit] and trivial flags [pass].
  const unsigned* histograms;
  unsigned* lsd_trivial;
  int lsd_passes;
  /// The hybrid's passes are LSD passes first_top_pass .. lsd_passes - 1; its first keeps the top
  /// radix_bits - dropped_bits bits of its LSD digit.
  int first_top_pass;
  int dropped_bits;
  /// The hybrid's first pass's digit starts, and the trivial flags of all its passes.
  Offset* top_starts;
  unsigned* top_trivial;
  unsigned* skip;
  Offset n;
  double log2_max_expected_bucket;
};

template <int DIGITS, class Offset>
__global__ void __launch_bounds__(DIGITS) radix_choice_kernel(AutoChoiceArgs<Offset> args) {
  __shared__ typename block::Scan<Offset, DIGITS>::TempStorage scan_storage;
  __shared__ typename block::Reduce<double, DIGITS>::TempStorage reduce_storage;
  __shared__ Offset coarse[DIGITS];
  __shared__ double squares[RadixKey<unsigned long long>::kBits];  // a pass's, at most one a bit
  __shared__ bool hybrid;
  wait_for_prior_grids();
  allow_dependent_grids();
  const int top_passes = args.lsd_passes - args.first_top_pass;
  const int d = threadIdx.x;
  // The hybrid's first digit: the LSD digit's counts summed over its dropped low bits.
  coarse[d] = 0;
  __syncthreads();
  atomicAdd(&coarse[d >> args.dropped_bits], args.histograms[args.first_top_pass * DIGITS + d]);
  __syncthreads();
  const Offset first_count = coarse[d];
  for (int j = 0; j < top_passes; ++j) {
    const double count = j == 0 ? first_count : args.histograms[(args.first_top_pass + j) * DIGITS + d];
    const double total = block::Reduce<double, DIGITS>(reduce_storage).reduce(count * count, Sum{});
    if (d == 0) squares[j] = total;
    __syncthreads();
  }
  if (d == 0) {
    hybrid = log2_expected_bucket(squares, top_passes, static_cast<double>(args.n)) <= args.log2_max_expected_bucket;
  }
  bool first_trivial = false;
  const Offset start = digit_start<DIGITS>(scan_storage, first_count, args.n, first_trivial);  // synchronizes
  args.top_starts[d] = start;
  if (d < top_passes) {
    const unsigned lsd = args.lsd_trivial[args.first_top_pass + d];
    args.top_trivial[d] = !hybrid ? kPassSkipped : d == 0 ? (first_trivial ? 1u : 0u) : lsd;
  }
  __syncthreads();  // the LSD flags are read above before they are overwritten
  if (hybrid && d < args.lsd_passes) args.lsd_trivial[d] = kPassSkipped;
  if (d == 0) {
    args.skip[kSkipHybrid] = hybrid ? 0u : 1u;
    args.skip[kSkipOnesweep] = hybrid ? 1u : 0u;
  }
}

/// Whether the plain call chooses on the device for these keys: the table's AutoChoice keys and sizes, one
/// Onesweep portion, a range of whole digits (so the hybrid's digits are coarser LSD digits) with bits below the
/// hybrid's top bits.
template <class Table, class K, class V>
bool auto_choice_applies(size_t n, int begin_bit, int end_bit) {
  using Choice = typename Table::template AutoChoice<K, V>;
  using Hybrid = typename Table::template Hybrid<K, V>;
  constexpr int kRadixBits = Table::template Onesweep<K, V>::radix_bits;
  if (!Choice::enabled || n < Choice::min_items || n >= kOnesweepPortionMaxItems) return false;
  if ((end_bit - begin_bit) % kRadixBits != 0) return false;
  return end_bit - hybrid_msd_bits<Hybrid>(n, begin_bit, end_bit) > begin_bit;
}

/// The sort with the choice made on the device (see the file comment); auto_choice_applies holds.
/// `skip_words`, when given, is set to the kSkipWords words that tell the path taken once the sort has run (tests).
template <class Table, class K, class V, class Policy>
cudaError_t auto_sort_with(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order,
                           int begin_bit, int end_bit, cudaStream_t stream, unsigned** skip_words) {
  using Offset = unsigned;  // n < kOnesweepPortionMaxItems
  using Layout = OnesweepLayout<Policy, K, V, Offset>;
  using Hybrid = typename Table::template Hybrid<K, V>;
  using Choice = typename Table::template AutoChoice<K, V>;
  constexpr int kRadixBits = Policy::radix_bits;
  constexpr int kDigits = Layout::kDigits;
  const int msd_bits = hybrid_msd_bits<Hybrid>(n, begin_bit, end_bit);
  const int top_passes = (msd_bits + kRadixBits - 1) / kRadixBits;
  // The hybrid's tile counters and the skip words are counters of the layout, cleared with its own.
  const Layout layout(n, begin_bit, end_bit, top_passes + kSkipWords);
  const int lsd_passes = layout.num_passes;
  const int first_top_pass = lsd_passes - top_passes;
  const int msd_begin = end_bit - msd_bits;
  const int dropped_bits = msd_begin - (begin_bit + first_top_pass * kRadixBits);

  enum Part : int { kAlternateKeys, kAlternateValues, kTopStarts, kTopTrivial, kBuckets, kLayout };
  size_t sizes[kLayout + Layout::kParts] = {alternate_bytes<K>(n), alternate_bytes<V>(n), kDigits * sizeof(Offset),
                                            top_passes * sizeof(unsigned)};
  const PassBuffers<K, V> buckets_io{io.keys_out, io.keys_out, io.values_out, io.values_out};
  // The buckets' sort borrows the passes' alternate buffers (its skipped launches never write them).
  segmented::SegmentedSortExtras<K, V> buckets_extras{nullptr, true, nullptr, nullptr};
  PRIMS_TRY((sort_buckets<Table, K, V, Hybrid>(nullptr, sizes[kBuckets], buckets_io, n, order, begin_bit, end_bit,
                                               msd_bits, buckets_extras, stream)));
  size_t layout_sizes[Layout::kParts];
  layout.sizes(layout_sizes);
  std::copy(layout_sizes, layout_sizes + Layout::kParts, sizes + kLayout);
  void* parts[kLayout + Layout::kParts];
  PRIMS_TRY(carve_temp(temp, temp_bytes, sizes, parts));
  if (temp == nullptr) return cudaSuccess;

  void* layout_parts[Layout::kParts];
  std::copy(parts + kLayout, parts + kLayout + Layout::kParts, layout_parts);
  const typename Layout::State state = layout.state(layout_parts);
  auto* alternate_keys = static_cast<K*>(parts[kAlternateKeys]);
  auto* alternate_values = static_cast<V*>(parts[kAlternateValues]);
  auto* top_starts = static_cast<Offset*>(parts[kTopStarts]);
  auto* top_trivial = static_cast<unsigned*>(parts[kTopTrivial]);
  unsigned* top_counters = state.extra_counters;
  unsigned* skip = state.extra_counters + top_passes;
  if (skip_words != nullptr) *skip_words = skip;

  PRIMS_TRY((count_onesweep_digits<Table>(layout, state, io.keys_in, order, begin_bit, end_bit, stream)));
  const AutoChoiceArgs<Offset> choice{state.histograms,
                                      state.trivial,
                                      lsd_passes,
                                      first_top_pass,
                                      dropped_bits,
                                      top_starts,
                                      top_trivial,
                                      skip,
                                      static_cast<Offset>(n),
                                      std::log2(Choice::max_expected_bucket)};
  PRIMS_TRY(launch(radix_choice_kernel<kDigits, Offset>, 1, kDigits, 0, stream, choice));

  // Pass launches 0 .. top_passes - 1 serve either path: the hybrid's passes (the first on the shortened digit)
  // where it was chosen, else Onesweep's first passes. Then the hybrid's finish and buckets, Onesweep's other passes
  // and its finish, each skipped where the other path was chosen.
  const SortBuffers<K, V> top(io, alternate_keys, alternate_values, top_passes);
  const SortBuffers<K, V> lsd(io, alternate_keys, alternate_values, lsd_passes);
  auto top_digit = [&](int j) {
    return j == 0 ? DigitExtractor<K>(order, msd_begin, kRadixBits - dropped_bits)
                  : pass_digit<K>(order, begin_bit, end_bit, kRadixBits, first_top_pass + j);
  };
  auto top_starts_of = [&](int j, int) { return j == 0 ? top_starts : layout.starts(state, first_top_pass + j, 0); };
  auto top_trivial_of = [&](int j) { return static_cast<const unsigned*>(top_trivial + j); };
  auto lsd_digit = [&](int pass) { return pass_digit<K>(order, begin_bit, end_bit, kRadixBits, pass); };
  auto lsd_starts_of = [&](int pass, int q) { return layout.starts(state, pass, q); };
  auto lsd_trivial_of = [&](int pass) { return static_cast<const unsigned*>(state.trivial + pass); };
  for (int j = 0; j < top_passes; ++j) {  // one portion: launch j is pass j
    PRIMS_TRY(launch(onesweep_either_pass_kernel<Policy, K, V, Offset>, onesweep_pass_blocks(layout, 0),
                     Policy::block_threads, 0, stream,
                     onesweep_pass_args(layout, state, lsd, lsd_passes, j, lsd_digit, lsd_starts_of, lsd_trivial_of,
                                        state.tile_counters),
                     onesweep_pass_args(layout, state, top, top_passes, j, top_digit, top_starts_of, top_trivial_of,
                                        top_counters)));
  }
  PRIMS_TRY(top.finish(n, stream, skip + kSkipHybrid));
  buckets_extras = {skip + kSkipHybrid, true, alternate_keys, alternate_values};
  PRIMS_TRY((sort_buckets<Table, K, V, Hybrid>(parts[kBuckets], sizes[kBuckets], buckets_io, n, order, begin_bit,
                                               end_bit, msd_bits, buckets_extras, stream)));
  PRIMS_TRY(launch_onesweep_passes(layout, state, lsd, lsd_passes, lsd_digit, lsd_starts_of, lsd_trivial_of,
                                   state.tile_counters, stream, top_passes));
  return lsd.finish(n, stream, skip + kSkipOnesweep);
}

/// The sort with the choice made on the device, with the table's Onesweep policy for n.
template <class Table, class K, class V>
cudaError_t auto_sort(void* temp, size_t& temp_bytes, PassBuffers<K, V> io, size_t n, Order order, int begin_bit,
                      int end_bit, cudaStream_t stream, unsigned** skip_words = nullptr) {
  return with_onesweep_policy<Table, K, V>(n, [&](auto policy) {
    return auto_sort_with<Table, K, V, decltype(policy)>(temp, temp_bytes, io, n, order, begin_bit, end_bit, stream,
                                                         skip_words);
  });
}

}  // namespace prims::detail::radix
