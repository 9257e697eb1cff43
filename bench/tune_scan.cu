// tune_scan: the tuning sweep behind the scan policies in device/detail/scan_kernels.cuh. Times exclusive sums
// of i32 and i64 with several single-pass and reduce-then-scan policies against cub::DeviceScan::ExclusiveSum,
// same data, same run; the ratio columns are each policy's time over CUB's (below 1: faster than CUB). Every output,
// CUB's too, is checked exactly after the contender's last timed run, and the input against its fingerprint.
#include <cub/device/device_scan.cuh>

#include <string>
#include <type_traits>

#include "checks.cuh"
#include "harness.cuh"
#include "prims/device/scan.cuh"

namespace {

using prims::bench::Contender;
namespace detail = prims::detail;

/// sp<threads>x<bytes>w<wait ns>k<tiles per lane>, then "L" where loads and "S" where stores are evict-first, then
/// "s" and the bytes of a tile's status slot, then "b" and the blocks an SM must hold (the register cap).
template <int THREADS, int BYTES, unsigned WAIT_NS, int TILES_PER_LANE, bool LOAD_LAST = false, bool STORE_LAST = false,
          int SLOT_BYTES = 32, int MIN_BLOCKS = 1>
struct SinglePass {
  static constexpr int block_threads = THREADS;
  static constexpr int bytes_per_thread = BYTES;
  static constexpr unsigned look_back_wait_ns = WAIT_NS;
  static constexpr int look_back_tiles_per_lane = TILES_PER_LANE;
  static constexpr detail::CacheHint load_hint = LOAD_LAST ? detail::CacheHint::LastUse : detail::CacheHint::Normal;
  static constexpr detail::CacheHint store_hint = STORE_LAST ? detail::CacheHint::LastUse : detail::CacheHint::Normal;
  static constexpr int status_slot_bytes = SLOT_BYTES;
  static constexpr int min_blocks_per_sm = MIN_BLOCKS;
  static std::string name() {
    return "sp" + std::to_string(THREADS) + "x" + std::to_string(BYTES) + "w" + std::to_string(WAIT_NS) + "k" +
           std::to_string(TILES_PER_LANE) + (LOAD_LAST ? "L" : "") + (STORE_LAST ? "S" : "") + "s" +
           std::to_string(SLOT_BYTES) + (MIN_BLOCKS > 1 ? "b" + std::to_string(MIN_BLOCKS) : "");
  }
  template <class T>
  static cudaError_t run(void* temp, size_t& bytes, const T* in, T* out, size_t n, cudaStream_t s) {
    return detail::scan::dispatch_single_pass<SinglePass, true>(temp, bytes, in, out, n, prims::Sum{},
                                                                detail::Maybe<T>{T(0), true}, s);
  }
};

template <int THREADS, int BYTES, int BLOCKS_PER_SM>
struct ReduceThenScan {
  static constexpr int block_threads = THREADS;
  static constexpr int bytes_per_thread = BYTES;
  static constexpr int blocks_per_sm = BLOCKS_PER_SM;
  static std::string name() {
    return "rts" + std::to_string(THREADS) + "x" + std::to_string(BYTES) + "b" + std::to_string(BLOCKS_PER_SM);
  }
  template <class T>
  static cudaError_t run(void* temp, size_t& bytes, const T* in, T* out, size_t n, cudaStream_t s) {
    return detail::scan::dispatch_reduce_then_scan<ReduceThenScan, true>(temp, bytes, in, out, n, prims::Sum{},
                                                                         detail::Maybe<T>{T(0), true}, s);
  }
};

template <class T>
struct Buffers {
  prims::DeviceBuffer<T> in, out, cub_out;
  uint64_t in_fingerprint;
  std::vector<prims::DeviceBuffer<unsigned char>> temps;
};

/// Whether out[0..n) is the exclusive sum of the input's first n items (each output less the one before it is the
/// input item before it, modulo 2^bits), and the input is intact.
template <class T>
bool is_exclusive_sum(const Buffers<T>& buffers, const T* out, size_t n) {
  using Unsigned = std::make_unsigned_t<T>;
  const T* in = buffers.in.data();
  const size_t wrong = prims::bench::count_if(n, [=] __device__(size_t i) {
    const Unsigned before = i == 0 ? Unsigned{0} : static_cast<Unsigned>(out[i - 1]);
    const Unsigned item = i == 0 ? Unsigned{0} : static_cast<Unsigned>(in[i - 1]);
    return static_cast<Unsigned>(static_cast<Unsigned>(out[i]) - before) != item;
  });
  return wrong == 0 && prims::bench::fingerprint(in, buffers.in.size()) == buffers.in_fingerprint;
}

/// A policy's contender. Every policy writes the one output buffer, poisoned before each run: the check sees this
/// policy's last timed output.
template <class Policy, class T>
Contender contender(Buffers<T>& buffers, size_t n) {
  size_t bytes = 0;
  prims::check(Policy::run(nullptr, bytes, buffers.in.data(), buffers.out.data(), n, 0), "size");
  buffers.temps.emplace_back(bytes);
  unsigned char* temp = buffers.temps.back().data();
  auto run = [=, &buffers](cudaStream_t s) {
    size_t b = bytes;
    prims::check(Policy::run(temp, b, buffers.in.data(), buffers.out.data(), n, s), Policy::name().c_str());
  };
  auto check = [=, &buffers] { return is_exclusive_sum(buffers, buffers.out.data(), n); };
  return {Policy::name(), run, check, {prims::bench::output(buffers.out.data(), n)}};
}

template <class T, class... Policies>
void sweep(prims::bench::Harness& harness, const char* type, const char* family, Buffers<T>& buffers, size_t n) {
  size_t cub_bytes = 0;
  const int cub_n = static_cast<int>(n);
  prims::check(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, buffers.in.data(), buffers.cub_out.data(), cub_n), "cub");
  buffers.temps.clear();
  buffers.temps.reserve(sizeof...(Policies) + 1);
  buffers.temps.emplace_back(cub_bytes);
  unsigned char* cub_temp = buffers.temps.back().data();
  std::vector<Contender> contenders = {
      {"CUB",
       [&, cub_temp](cudaStream_t s) {
         size_t b = cub_bytes;
         prims::check(cub::DeviceScan::ExclusiveSum(cub_temp, b, buffers.in.data(), buffers.cub_out.data(), cub_n, s),
                      "cub");
       },
       [&] { return is_exclusive_sum(buffers, buffers.cub_out.data(), n); },
       {prims::bench::output(buffers.cub_out.data(), n)}}};
  (contenders.push_back(contender<Policies>(buffers, n)), ...);
  harness.run_case({"tune_excl", type, family}, n, 2.0 * sizeof(T), contenders);
}

template <class T>
void tune_type(prims::bench::Harness& harness, const char* type) {
  const size_t max_n = size_t{1} << harness.max_log2();
  Buffers<T> buffers{
      prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n), prims::DeviceBuffer<T>(max_n), 0, {}};
  prims::bench::generate(buffers.in.data(), max_n, 11, [] __device__(uint64_t bits, size_t) { return T(bits & 0xff); });
  buffers.in_fingerprint = prims::bench::fingerprint(buffers.in.data(), max_n);
  for (int log2n = harness.min_log2(); log2n <= harness.max_log2(); log2n += harness.step_log2()) {
    const size_t n = size_t{1} << log2n;
    // Bytes between two tiles' status words (the smallest that holds a word packs them: 8 or 16 bytes).
    sweep<T, SinglePass<256, 128, 64, 1, true, true, (sizeof(T) <= 4 ? 8 : 16)>, SinglePass<256, 128, 64, 1, true, true, 16>,
          SinglePass<256, 128, 64, 1, true, true, 32>, SinglePass<256, 128, 64, 1, true, true, 64>,
          SinglePass<256, 128, 64, 1, true, true, 128>>(harness, type, "SinglePassStatusSlot", buffers, n);
    // More resident blocks an SM for fewer registers a thread.
    sweep<T, SinglePass<256, 128, 64, 1, true, true, 32, 1>, SinglePass<256, 128, 64, 1, true, true, 32, 5>,
          SinglePass<256, 128, 64, 1, true, true, 32, 6>, SinglePass<256, 96, 64, 1, true, true, 32, 5>,
          SinglePass<256, 96, 64, 1, true, true, 32, 6>, SinglePass<128, 128, 64, 1, true, true, 32, 10>,
          SinglePass<128, 128, 64, 1, true, true, 32, 12>>(harness, type, "SinglePassBlocksPerSm", buffers, n);
    // Smaller tiles for sizes of a few waves of tiles.
    sweep<T, SinglePass<256, 176, 64, 1, true, true, 32, 4>, SinglePass<256, 128, 64, 1, true, true, 32, 5>,
          SinglePass<256, 96, 64, 1, true, true, 32, 5>, SinglePass<256, 64, 64, 1, true, true, 32, 6>,
          SinglePass<128, 128, 64, 1, true, true, 32, 10>, SinglePass<128, 64, 64, 1, true, true, 32, 12>>(
        harness, type, "SinglePassSmallTiles", buffers, n);
    // Larger tiles (up to the 48 KB of static shared memory a block may stage) with as many blocks as fit.
    sweep<T, SinglePass<256, 128, 64, 1, true, true, 32, 5>, SinglePass<256, 112, 64, 1, true, true, 32, 5>,
          SinglePass<256, 144, 64, 1, true, true, 32, 4>, SinglePass<256, 160, 64, 1, true, true, 32, 4>,
          SinglePass<256, 176, 64, 1, true, true, 32, 4>, SinglePass<320, 128, 64, 1, true, true, 32, 4>,
          SinglePass<320, 144, 64, 1, true, true, 32, 4>, SinglePass<256, 160, 64, 1, true, true, 32, 5>>(
        harness, type, "SinglePassTileBlocks", buffers, n);
    sweep<T, SinglePass<256, 64, 64, 1, true, true>, SinglePass<256, 128, 64, 1, true, true>,
          SinglePass<512, 64, 64, 1, true, true>, SinglePass<128, 128, 64, 1, true, true>,
          SinglePass<256, 128, 0, 1, true, true>, SinglePass<256, 128, 32, 1, true, true>,
          SinglePass<256, 128, 128, 1, true, true>, SinglePass<256, 128, 64, 2, true, true>,
          SinglePass<256, 96, 64, 1, true, true>, SinglePass<384, 96, 64, 1, true, true>>(harness, type, "SinglePass",
                                                                                         buffers, n);
    // Evict-first reads and writes: each item is touched once.
    sweep<T, SinglePass<256, 128, 64, 1>, SinglePass<256, 128, 64, 1, true, false>,
          SinglePass<256, 128, 64, 1, false, true>, SinglePass<256, 128, 64, 1, true, true>,
          SinglePass<256, 64, 64, 1, true, true>, SinglePass<512, 64, 64, 1, true, true>,
          SinglePass<128, 128, 64, 1, true, true>>(harness, type, "SinglePassHints", buffers, n);
    sweep<T, ReduceThenScan<256, 64, 6>, ReduceThenScan<256, 64, 8>, ReduceThenScan<512, 64, 4>,
          ReduceThenScan<256, 128, 4>, ReduceThenScan<128, 128, 8>>(harness, type, "ReduceThenScan", buffers, n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    prims::bench::Harness harness(argc, argv, "tune_scan", 20, 30, 2);
    tune_type<int32_t>(harness, "i32");
    tune_type<int64_t>(harness, "i64");
    return harness.finish();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tune_scan: error: {}\n", e.what());
    return 1;
  }
}
