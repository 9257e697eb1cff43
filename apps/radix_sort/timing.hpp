#pragma once
// Wall-clock timing for the phase breakdown of --stats and the progress report.

#include <chrono>

namespace radix_sort {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` until now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace radix_sort
