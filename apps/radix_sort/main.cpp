// radix_sort: sorts files of numbers on the GPU (usage in docs/radix_sort.md).

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <new>

#include "app.hpp"
#include "errors.hpp"

int main(int argc, char** argv) {
  // Exit statuses follow sort(1): 1 when --check finds disorder, 2 for errors.
  constexpr int error_status = 2;
  // Past a file-size limit (ulimit -f) a write then fails with EFBIG, which is reported, rather than killing the
  // program without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    const auto options = radix_sort::parse_options(argc, argv);
    if (!options) return 0;
    return radix_sort::run(*options);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "radix_sort: error: out of host memory\n");
  } catch (const std::exception& error) {
    fmt::print(stderr, "radix_sort: error: {}\n", error.what());
  }
  return error_status;
}
