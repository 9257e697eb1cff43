// tune_by_key: the tuning sweep behind the by-key policy in device/detail/tuning.cuh, for reduce_by_key (the one
// member of the family furthest behind CUB). Times reduce_by_key (sum) of i32 keys in runs of 4 and random i32
// values with several tile shapes and register caps against cub::DeviceReduce::ReduceByKey, same data, same run;
// the ratio columns are each policy's time over CUB's (below 1: faster than CUB). Every output, CUB's too, is
// compared bitwise with a reference (CUB's result, whose number of runs is itself checked) after the contender's
// last timed run.
#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/by_key.cuh"

namespace {

using prims::bench::Contender;
namespace detail = prims::detail;

/// bk<threads>x<bytes of key and value a thread>b<blocks an SM the registers must allow>, then "N" where loads are
/// not marked last use (reduce_by_key stores through no hint).
template <int THREADS, int BYTES, int MIN_BLOCKS, bool LAST_USE = true>
struct Policy : detail::TuningSm90::LookBack {
  static constexpr int block_threads = THREADS;
  static constexpr int bytes_per_thread = BYTES;
  static constexpr int max_items_per_thread = 32;
  static constexpr int min_blocks_per_sm = MIN_BLOCKS;
  static constexpr detail::CacheHint load_hint = LAST_USE ? detail::CacheHint::LastUse : detail::CacheHint::Normal;
  static constexpr size_t small_max_bytes = 0;  // every size takes the shape named
  static constexpr int small_bytes_per_thread = BYTES;
  static std::string name() {
    return "bk" + std::to_string(THREADS) + "x" + std::to_string(BYTES) + "b" + std::to_string(MIN_BLOCKS) +
           (LAST_USE ? "" : "N");
  }
};

struct Buffers {
  prims::DeviceBuffer<int32_t> keys, values, out_keys, out_values, reference_keys, reference_values;
  prims::DeviceBuffer<size_t> count;
  prims::DeviceBuffer<int> cub_count, reference_count;
  std::vector<prims::DeviceBuffer<unsigned char>> temps;
  explicit Buffers(size_t n)
      : keys(n), values(n), out_keys(n), out_values(n), reference_keys(n), reference_values(n), count(1),
        cub_count(1), reference_count(1) {}
};

template <class P>
Contender contender(Buffers& b, size_t n, size_t runs) {
  const auto call = [&b, n](void* temp, size_t& bytes, cudaStream_t s) {
    return detail::scan::dispatch_by_key<P, detail::scan::ByKeyMode::Reduce, int32_t>(
        temp, bytes, b.keys.data(), b.values.data(), b.out_keys.data(), b.out_values.data(), b.count.data(), n,
        prims::Sum{}, prims::Equal{}, int32_t{}, s, "tune_by_key");
  };
  size_t bytes = 0;
  prims::check(call(nullptr, bytes, 0), "size");
  b.temps.emplace_back(bytes);
  unsigned char* temp = b.temps.back().data();
  return {P::name(),
          [=](cudaStream_t s) {
            size_t t = bytes;
            prims::check(call(temp, t, s), P::name().c_str());
          },
          [&b, runs] {
            return b.count.download(1)[0] == runs &&
                   prims::bench::same_bits(b.out_keys.data(), b.reference_keys.data(), runs) &&
                   prims::bench::same_bits(b.out_values.data(), b.reference_values.data(), runs);
          },
          {prims::bench::output(b.out_keys.data(), n), prims::bench::output(b.out_values.data(), n),
           prims::bench::output(b.count.data(), 1)}};
}

template <class... Policies>
void sweep(prims::bench::Harness& harness, const char* family, Buffers& b, size_t n) {
  if (!harness.selected({"tune_by_key", "i32", family})) return;
  const int num_items = static_cast<int>(n);
  const auto cub_call = [&b, num_items](void* temp, size_t& bytes, int32_t* keys_out, int32_t* values_out, int* count,
                                        cudaStream_t s) {
    return cub::DeviceReduce::ReduceByKey(temp, bytes, b.keys.data(), keys_out, b.values.data(), values_out, count,
                                          ::cuda::std::plus<>{}, num_items, s);
  };
  size_t cub_bytes = 0;
  prims::check(cub_call(nullptr, cub_bytes, nullptr, nullptr, nullptr, 0), "cub size");
  b.temps.clear();
  b.temps.reserve(sizeof...(Policies) + 1);
  b.temps.emplace_back(cub_bytes);
  unsigned char* cub_temp = b.temps.back().data();
  // The reference: CUB's result, whose number of runs must be n / 4.
  prims::check(cub_call(cub_temp, cub_bytes, b.reference_keys.data(), b.reference_values.data(),
                        b.reference_count.data(), harness.stream()),
               "reference");
  prims::check(cudaStreamSynchronize(harness.stream()), "reference");
  const size_t runs = n / 4;
  if (static_cast<size_t>(b.reference_count.download(1)[0]) != runs) {
    throw std::runtime_error("the reference found " + std::to_string(b.reference_count.download(1)[0]) + " runs");
  }
  std::vector<Contender> contenders = {
      {"CUB",
       [=, &b](cudaStream_t s) {
         size_t t = cub_bytes;
         prims::check(cub_call(cub_temp, t, b.out_keys.data(), b.out_values.data(), b.cub_count.data(), s), "cub");
       },
       [&b, runs] {
         return static_cast<size_t>(b.cub_count.download(1)[0]) == runs &&
                prims::bench::same_bits(b.out_keys.data(), b.reference_keys.data(), runs) &&
                prims::bench::same_bits(b.out_values.data(), b.reference_values.data(), runs);
       },
       {prims::bench::output(b.out_keys.data(), n), prims::bench::output(b.out_values.data(), n)}}};
  (contenders.push_back(contender<Policies>(b, n, runs)), ...);
  // Keys and values read, a key and a reduction written a run.
  harness.run_case({"tune_by_key", "i32", family}, n, 8.0 + 8.0 / 4, contenders, [] {});
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "tune_by_key", 24, 28, 2);
    const size_t max_n = size_t{1} << harness.max_log2();
    Buffers buffers(max_n);
    prims::bench::generate(buffers.keys.data(), max_n, 6,
                           [] __device__(uint64_t, size_t i) { return static_cast<int32_t>(i / 4); });
    prims::bench::generate(buffers.values.data(), max_n, 7,
                           [] __device__(uint64_t bits, size_t) { return static_cast<int32_t>(bits >> 40); });
    prims::check(cudaDeviceSynchronize(), "inputs");
    for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
      const size_t n = size_t{1} << log2n;
      // The shipped policy first, then tile sizes at three blocks an SM.
      sweep<Policy<256, 160, 3>, Policy<256, 128, 3>, Policy<256, 144, 3>, Policy<256, 96, 4>, Policy<256, 64, 5>>(
          harness, "reduce_by_key tiles", buffers, n);
      // Register caps and block sizes.
      sweep<Policy<256, 160, 3>, Policy<256, 160, 4>, Policy<256, 160, 2>, Policy<256, 144, 4>, Policy<384, 104, 2>,
            Policy<512, 64, 2>, Policy<128, 160, 6>, Policy<128, 160, 8>, Policy<256, 160, 3, false>>(
          harness, "reduce_by_key shapes", buffers, n);
    }
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tune_by_key: error: {}\n", e.what());
    return 1;
  }
}
