#pragma once
// The progress bar on stderr: phase, bytes done of the total, rate and time left.

#include <cstddef>
#include <string>

#include "timing.hpp"

namespace radix_sort {

/// When to show progress: --progress, --no-progress, or by default on a terminal for runs that take a while.
enum class ProgressMode { Auto, Always, Never };

/// A one-line progress report on stderr, redrawn at most ten times a second and erased at the end.
/// Example:
///   Progress progress(ProgressMode::Auto, file_bytes);
///   progress.update("reading", bytes_done, file_bytes);
class Progress {
 public:
  /// Auto shows it when stderr is a terminal and `total_bytes` is large enough to take a while.
  Progress(ProgressMode mode, size_t total_bytes);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  /// Reports `done` of `total` bytes of a phase; a new phase restarts the rate and time-left estimate.
  void update(const char* phase, size_t done, size_t total);

  /// Erases the bar (before other output on stderr, such as --stats).
  void clear();

  /// The line update() draws, without the terminal controls (for tests).
  static std::string line(const char* phase, size_t done, size_t total, double seconds);

 private:
  bool enabled_;
  bool shown_ = false;
  std::string phase_;
  Clock::time_point phase_start_;
  Clock::time_point last_;
};

/// "1.5 GiB", "12.0 MiB", "512 B".
std::string human_bytes(size_t bytes);

}  // namespace radix_sort
