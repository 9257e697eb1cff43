#pragma once
// The command line of radix_sort, parsed into one struct.

#include <optional>
#include <string>

#include "formats.hpp"
#include "key_type.hpp"

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
  bool stats = false;
  Backend backend = Backend::Auto;
  unsigned threads = 1;
};

/// Parses `argv`. Returns nothing after printing --help (the program then exits 0); throws UsageError with a
/// one-line message for anything malformed or contradictory.
/// Example: `auto options = parse_options(argc, argv); if (!options) return 0;`
std::optional<Options> parse_options(int argc, const char* const* argv);

}  // namespace radix_sort
