// make_sample: writes random numbers to sort, as raw binary, text or .npy. The same seed gives the same file
// whatever the thread count: every block of values has its own generator seeded from (seed, block).

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "errors.hpp"
#include "file_io.hpp"
#include "formats.hpp"
#include "key_type.hpp"
#include "parallel.hpp"

namespace {

using namespace radix_sort;

constexpr size_t block_items = size_t(1) << 20;

/// splitmix64: a tiny generator with good statistics, cheap to seed per block.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// Integers uniform over the whole type; floats uniform in [-1e6, 1e6).
template <class K>
void fill_block(K* out, size_t count, uint64_t seed, size_t block) {
  SplitMix64 rng{seed * 0x2545f4914f6cdd1dull + block};
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = rng.next();
    if constexpr (std::is_floating_point_v<K>) {
      out[i] = static_cast<K>((static_cast<double>(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0) * 1e6);
    } else {
      out[i] = static_cast<K>(bits);
    }
  }
}

template <class K>
void write_sample(AtomicOutput& output, Format format, size_t count, uint64_t seed, unsigned threads) {
  if (format == Format::Npy) output.write(make_npy_header(key_type_of<K>(), count));
  const size_t round_items = block_items * std::max(threads, 1u) * 4;
  std::vector<K> values(std::min(count, round_items));
  for (size_t round_begin = 0; round_begin < count; round_begin += round_items) {
    const size_t items = std::min(round_items, count - round_begin);
    const size_t blocks = (items + block_items - 1) / block_items;
    parallel_for(blocks, threads, [&](size_t block) {
      const size_t first = block * block_items;
      fill_block(values.data() + first, std::min(block_items, items - first), seed, round_begin / block_items + block);
    });
    if (format == Format::Text) {
      format_text(values.data(), key_type_of<K>(), items, threads, [&](std::string_view text) { output.write(text); });
    } else {
      output.write(values.data(), items * sizeof(K));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes random numbers for radix_sort to sort", "make_sample"};
  size_t count = 0;
  std::string type_name = "i32";
  std::string format_name_option = "bin";
  uint64_t seed = 1;
  std::string output_path;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  app.add_option("-n,--count", count, "How many numbers")->required();
  app.add_option("-t,--type", type_name, "i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 (default i32)")
      ->check(CLI::IsMember({"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"}));
  app.add_option("-f,--format", format_name_option, "bin (default), text or npy")
      ->check(CLI::IsMember({"bin", "text", "npy"}));
  app.add_option("-s,--seed", seed, "Seed; the same seed gives the same file (default 1)");
  app.add_option("-o,--output", output_path, "File to write; '-' is stdout")->required();
  app.add_option("-j,--threads", threads, "Threads (default: all cores)")->check(CLI::Range(1u, 1024u));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return 0;
  } catch (const CLI::ParseError& error) {
    fmt::print(stderr, "make_sample: error: {} (see --help)\n", error.what());
    return 2;
  }
  try {
    const KeyType type = *parse_key_type(type_name);
    const Format format = *parse_format(format_name_option);
    AtomicOutput output(output_path);
    visit_key_type(type,
                   [&](auto tag) { write_sample<typename decltype(tag)::type>(output, format, count, seed, threads); });
    output.commit();
  } catch (const std::exception& error) {
    fmt::print(stderr, "make_sample: error: {}\n", error.what());
    return 2;
  }
  return 0;
}
