#pragma once
// The program: reads the input, sorts (or checks) it on the chosen backend, writes the output atomically.

#include "options.hpp"

namespace radix_sort {

/// Runs radix_sort with parsed options and returns the exit status: 0 done, 1 for --check finding disorder.
/// Throws AppError (and prims::CudaError) for failures; any output not yet complete is removed by then.
int run(const Options& options);

}  // namespace radix_sort
