#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace radix_sort {

namespace {

/// Below this a run is over before a progress bar would help.
constexpr size_t min_progress_bytes = size_t(256) << 20;

std::string human_seconds(double seconds) {
  const auto whole = static_cast<long long>(seconds + 0.5);
  if (whole >= 3600) return fmt::format("{}h{:02}m", whole / 3600, whole / 60 % 60);
  if (whole >= 60) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}s", whole);
}

}  // namespace

std::string human_bytes(size_t bytes) {
  const double value = static_cast<double>(bytes);
  if (bytes >= (size_t(1) << 30)) return fmt::format("{:.2f} GiB", value / (1 << 30));
  if (bytes >= (size_t(1) << 20)) return fmt::format("{:.1f} MiB", value / (1 << 20));
  if (bytes >= (size_t(1) << 10)) return fmt::format("{:.1f} KiB", value / (1 << 10));
  return fmt::format("{} B", bytes);
}

Progress::Progress(ProgressMode mode, size_t total_bytes)
    : enabled_(mode == ProgressMode::Always ||
               (mode == ProgressMode::Auto && ::isatty(STDERR_FILENO) && total_bytes >= min_progress_bytes)),
      phase_start_(Clock::now()),
      last_(Clock::now()) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (shown_) fmt::print(stderr, "\r\033[K");
  shown_ = false;
}

std::string Progress::line(const char* phase, size_t done, size_t total, double seconds) {
  done = std::min(done, total);
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  constexpr int bar_width = 24;
  const int filled = static_cast<int>(fraction * bar_width);
  const std::string bar = std::string(filled, '#') + std::string(bar_width - filled, '.');
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  const std::string left =
      rate > 0 ? human_seconds(static_cast<double>(total - done) / rate) + " left" : std::string("--");
  return fmt::format("radix_sort: {:<12} [{}] {:3.0f}%  {} of {}  {}/s  {}", phase, bar, 100 * fraction,
                     human_bytes(done), human_bytes(total), human_bytes(static_cast<size_t>(rate)), left);
}

void Progress::update(const char* phase, size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  if (phase_ != phase) {
    phase_ = phase;
    phase_start_ = Clock::now();
  }
  if (seconds_since(last_) < 0.1 && done < total) return;
  last_ = Clock::now();
  shown_ = true;
  fmt::print(stderr, "\r{}\033[K", line(phase, done, total, seconds_since(phase_start_)));
}

}  // namespace radix_sort
