#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend.hpp"
#include "cpu_sort.hpp"

namespace radix_sort {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

template <class K>
void record_extremes(const std::vector<K>& sorted, bool descending, SortStats& stats) {
  if (sorted.empty()) return;
  const K& smallest = descending ? sorted.back() : sorted.front();
  const K& largest = descending ? sorted.front() : sorted.back();
  std::memcpy(stats.smallest_key.data(), &smallest, sizeof(K));
  std::memcpy(stats.largest_key.data(), &largest, sizeof(K));
}

template <class K, class V>
void sort_with_values(const SortRequest& request, const SortIo& io, std::vector<K>& keys, SortStats& stats) {
  std::vector<V> values(request.count);
  auto start = Clock::now();
  if (request.argsort) {
    std::iota(values.begin(), values.end(), V{0});
  } else if (request.count > 0) {
    io.read_values(0, request.count, values.data());
    stats.read_seconds += seconds_since(start);
  }
  start = Clock::now();
  radix_sort_cpu(keys.data(), values.data(), keys.size(), request.descending);
  stats.sort_seconds = seconds_since(start);
  record_extremes(keys, request.descending, stats);
  start = Clock::now();
  if (request.count > 0) {
    if (request.argsort) {
      io.write_keys(0, request.count, values.data());
    } else {
      io.write_keys(0, request.count, keys.data());
      io.write_values(0, request.count, values.data());
    }
  }
  stats.write_seconds = seconds_since(start);
}

}  // namespace

void cpu_sort(const SortRequest& request, const SortIo& io, SortStats& stats) {
  stats.device = "CPU";
  visit_key_type(request.key_type, [&](auto tag) {
    using K = typename decltype(tag)::type;
    std::vector<K> keys(request.count);
    const auto start = Clock::now();
    if (request.count > 0) io.read_keys(0, request.count, keys.data());
    stats.read_seconds = seconds_since(start);
    if (request.value_bytes == 0 && !request.argsort) {
      const auto sort_start = Clock::now();
      radix_sort_cpu(keys.data(), static_cast<NoValues*>(nullptr), keys.size(), request.descending);
      stats.sort_seconds = seconds_since(sort_start);
      record_extremes(keys, request.descending, stats);
      const auto write_start = Clock::now();
      if (request.count > 0) io.write_keys(0, request.count, keys.data());
      stats.write_seconds = seconds_since(write_start);
      return;
    }
    visit_value_width(request.argsort ? sizeof(uint64_t) : request.value_bytes, [&](auto value_tag) {
      sort_with_values<K, typename decltype(value_tag)::type>(request, io, keys, stats);
    });
  });
}

}  // namespace radix_sort
