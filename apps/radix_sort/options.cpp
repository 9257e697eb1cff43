#include "options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <exception>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include "errors.hpp"
#include "file_io.hpp"

namespace radix_sort {

namespace {

/// What an option given an empty value should have been given instead.
std::string empty_option_hint(std::string_view name) {
  if (name == "--output") return "name a file, or '-' for stdout";
  if (name == "--gpu-memory" || name == "--host-memory") return "give a size such as 512MiB or 6GiB";
  if (name == "--tmpdir") return "name a directory";
  return "name a file";
}

std::vector<std::string> type_names() {
  std::vector<std::string> names;
  for (KeyType type : all_key_types) names.emplace_back(key_type_name(type));
  return names;
}

}  // namespace

namespace {

/// What a size says: its bytes, or why it is none.
struct ByteSize {
  std::optional<size_t> bytes;
  bool zero = false;      // a number and unit that make less than one byte ("0", "0.1")
  bool too_large = false; // past what a size_t holds
};

ByteSize read_byte_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0) return {};
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(std::string(text.substr(0, digits)), &used);
    if (used != digits) return {};
  } catch (const std::exception&) {
    return {};
  }
  std::string unit(text.substr(digits));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string prefixes = "kmgt";
  double scale = 1;
  if (!unit.empty() && unit != "b") {
    const size_t power = prefixes.find(unit[0]);
    const std::string suffix = unit.substr(1);
    if (power == std::string::npos || !(suffix.empty() || suffix == "ib" || suffix == "b")) return {};
    const double base = suffix == "b" ? 1000.0 : 1024.0;
    for (size_t i = 0; i <= power; ++i) scale *= base;
  }
  const double bytes = number * scale;
  ByteSize size;
  size.zero = bytes < 1;
  size.too_large = bytes > 9.2e18;
  if (!size.zero && !size.too_large) size.bytes = static_cast<size_t>(bytes);
  return size;
}

}  // namespace

std::optional<size_t> parse_byte_size(std::string_view text) { return read_byte_size(text).bytes; }

std::optional<Options> parse_options(int argc, const char* const* argv) {
  CLI::App app{"Sorts a file of numbers on the GPU (binary, text or .npy)", "radix_sort"};
  app.footer(
      "Examples:\n"
      "  radix_sort keys.bin --type u64 -o sorted.bin\n"
      "  radix_sort data.npy -r -o data.npy                # descending, in place\n"
      "  radix_sort numbers.txt -c                         # exit 1 if not sorted\n"
      "  radix_sort keys.npy --values payload.npy --values-out payload.sorted.npy -o keys.sorted.npy\n"
      "  radix_sort keys.npy --argsort -o order.npy        # u64 indices of the stable sort\n"
      "  radix_sort scores.f32.bin -t f32 --top 100 -r     # the 100 largest, largest first");
  Options options;
  std::string format = "auto";
  std::string values_format = "auto";
  std::string type;
  std::string values_type;
  std::string backend = "auto";
  options.threads = std::max(1u, std::thread::hardware_concurrency());

  app.add_option("input", options.input, "File to sort; '-' reads stdin")->required();
  app.add_option("-o,--output", options.output,
                 "Where to write the sorted file; '-' (default) is stdout. May name "
                 "the input: the output replaces it only once complete");
  app.add_option("-f,--format", format,
                 "Input format (the output has the same; not for --values); auto: npy by magic or name, text or "
                 "binary by extension, else text by content (with a digit), else binary")
      ->check(CLI::IsMember({"auto", "bin", "text", "npy"}));
  app.add_option("-t,--type", type, "Element type of binary and text input (default i32; npy says its own)")
      ->check(CLI::IsMember(type_names()));
  app.add_flag("-r,--descending", options.descending, "Sort largest first (the exact reverse order, still stable)");
  app.add_flag("-c,--check", options.check,
               "Only check that the input is sorted; exit 1 naming the first "
               "out-of-order element if not");
  app.add_option("--values", options.values_input, "A file of values to reorder along with the keys");
  app.add_option("--values-out", options.values_output, "Where to write the reordered values");
  app.add_option("--values-format", values_format,
                 "Format of the values file, detected like the input's by default (the values output has the same)")
      ->check(CLI::IsMember({"auto", "bin", "text", "npy"}));
  app.add_option("--values-type", values_type, "Element type of a binary or text values file (default i32)")
      ->check(CLI::IsMember(type_names()));
  app.add_flag("--argsort", options.argsort, "Write the stable sorting permutation (u64 indices) instead of the keys");
  std::string top;
  app.add_option("--top", top,
                 "Write only the first K keys of the sorted order (with -r the K largest, largest first), without "
                 "sorting the whole input: the file passes through the GPU once, in chunks where it is larger");
  app.add_flag("--stats", options.stats, "Print counts, min/max and a time breakdown on stderr");
  app.add_option("--backend", backend,
                 "Where to sort: auto (the CPU for files of up to 2 MiB a thread, which it sorts before a GPU would "
                 "have started; else the GPU, or the CPU where there is none), gpu, cpu")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  std::string gpu_memory;
  std::string host_memory;
  bool progress = false;
  bool no_progress = false;
  app.add_option("--gpu-memory", gpu_memory,
                 "Most GPU memory to use, e.g. 6GiB (default: what is free, less some headroom); larger inputs are "
                 "sorted out of core, in buckets. With --backend cpu: the memory of each in-memory sort");
  app.add_option("--host-memory", host_memory,
                 "Most host memory for an out-of-core sort's buckets and staging, e.g. 16GiB (default: half of what "
                 "is available); larger inputs spill to temporary files");
  app.add_option("--tmpdir", options.tmpdir, "Directory for spill files (default: the output's directory)");
  app.add_flag("--progress", progress, "Show a progress bar on stderr (default: on a terminal, for long runs)");
  app.add_flag("--no-progress", no_progress, "Never show a progress bar");
  app.add_option("-j,--threads", options.threads, "Threads for reading, parsing and printing (default: all cores)")
      ->check(CLI::Range(1u, 1024u));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    throw UsageError(fmt::format("{} (see --help)", error.what()));
  }

  options.format = *parse_format(format);
  options.values_format = *parse_format(values_format);
  if (!type.empty()) options.type = parse_key_type(type);
  if (!values_type.empty()) options.values_type = parse_key_type(values_type);
  options.backend = backend == "gpu" ? Backend::Gpu : backend == "cpu" ? Backend::Cpu : Backend::Auto;

  // An option given an empty value ("-o ''", say from an unset shell variable) is a mistake, never a default.
  for (const char* name : {"--output", "--gpu-memory", "--host-memory", "--tmpdir", "--values", "--values-out"}) {
    const CLI::Option* option = app.get_option(name);
    for (const std::string& given : option->results()) {
      if (given.empty()) throw UsageError(fmt::format("{} is empty: {}", name, empty_option_hint(name)));
    }
  }
  for (const auto& [text, limit, name] : {std::tuple{&gpu_memory, &options.gpu_memory, "--gpu-memory"},
                                          std::tuple{&host_memory, &options.host_memory, "--host-memory"}}) {
    if (app.count(name) == 0) continue;
    const ByteSize size = read_byte_size(*text);
    if (size.zero) throw UsageError(fmt::format("{} '{}' must be greater than zero", name, *text));
    if (size.too_large) throw UsageError(fmt::format("{} '{}' is too large", name, *text));
    if (!size.bytes) throw UsageError(fmt::format("{} '{}' is not a size such as 512MiB or 6GiB", name, *text));
    *limit = size.bytes;
  }
  if (app.count("--top") > 0) {
    // A count of keys: digits only (no sign, no unit), as head -n takes.
    const bool digits = std::all_of(top.begin(), top.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (top.empty() || top.size() > 19 || !digits) {
      throw UsageError(fmt::format("--top '{}' is not a count of keys such as 100", top));
    }
    options.top = std::stoull(top);
    if (options.check || options.argsort || !options.values_input.empty()) {
      throw UsageError("--top writes keys alone: it takes no --check, --argsort or --values");
    }
  }
  if (progress && no_progress) throw UsageError("--progress and --no-progress exclude each other");
  options.progress = progress ? ProgressMode::Always : no_progress ? ProgressMode::Never : ProgressMode::Auto;

  if (options.values_input.empty() != options.values_output.empty()) {
    throw UsageError("--values and --values-out go together (see --help)");
  }
  if (!options.values_input.empty() && options.argsort) throw UsageError("--argsort and --values exclude each other");
  if (options.check && (options.argsort || !options.values_input.empty() || app.count("--output") > 0)) {
    throw UsageError("--check only reads; it takes no --output, --values or --argsort");
  }
  if (!options.values_input.empty() && same_file(options.values_output, options.output)) {
    throw UsageError("--values-out and --output name the same file");
  }
  if (is_standard_stream(options.input) && is_standard_stream(options.values_input)) {
    throw UsageError("the keys and the values cannot both come from stdin");
  }
  if (is_standard_stream(options.output) && is_standard_stream(options.values_output)) {
    throw UsageError("the keys and the values cannot both go to stdout");
  }
  return options;
}

}  // namespace radix_sort
