#pragma once
// The command line of radix_sort, parsed into one struct.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "formats.hpp"
#include "key_type.hpp"
#include "progress.hpp"

namespace radix_sort {

enum class Backend { Auto, Gpu, Cpu };

/// Everything the command line says.
struct Options {
  std::string input;
  std::string output = "-";
  Format format = Format::Auto;
  std::optional<KeyType> type;
  bool descending = false;
  bool check = false;
  std::string values_input;
  std::string values_output;
  Format values_format = Format::Auto;
  std::optional<KeyType> values_type;
  bool argsort = false;
  std::optional<size_t> top;  // --top K: only the first K keys of the sorted order
  bool stats = false;
  Backend backend = Backend::Auto;
  unsigned threads = 1;
  std::optional<size_t> gpu_memory;   // --gpu-memory: the most memory the sort may use on its backend
  std::optional<size_t> host_memory;  // --host-memory: the most host memory for staging and buckets
  std::string tmpdir;                 // --tmpdir: where spill files go; empty: beside the output
  ProgressMode progress = ProgressMode::Auto;
};

/// A size such as "6GiB", "512MiB", "1G", "64k" or "1000" (bytes). K, M, G and T, alone or with "iB", are powers of
/// 1024; with "B" ("1GB") powers of 1000. Nothing for anything else, or zero.
std::optional<size_t> parse_byte_size(std::string_view text);

/// Parses `argv`. Returns nothing after printing --help (the program then exits 0); throws UsageError with a
/// one-line message for anything malformed or contradictory.
/// Example: `auto options = parse_options(argc, argv); if (!options) return 0;`
std::optional<Options> parse_options(int argc, const char* const* argv);

}  // namespace radix_sort
