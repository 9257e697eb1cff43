#include <algorithm>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cpu_sort.hpp"
#include "timing.hpp"

namespace radix_sort {

namespace {

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
  stats.sort_seconds += seconds_since(start);
  record_extremes(keys, request.descending, stats);
  start = Clock::now();
  if (request.count > 0) {
    if (request.argsort) {
      io.write_keys(0, request.count, values.data());
    } else {
      if (io.write_keys) io.write_keys(0, request.count, keys.data());
      io.write_values(0, request.count, values.data());
    }
  }
  stats.write_seconds += seconds_since(start);
}

/// Sorts on the CPU with a stable radix sort (cpu_sort.hpp): the same order as the GPU. The bits above
/// request.end_bit are equal in every key, and the radix sort skips bytes that all keys share on its own.
void cpu_sort(const SortRequest& request, const SortIo& io, SortStats& stats) {
  visit_key_type(request.key_type, [&](auto tag) {
    using K = typename decltype(tag)::type;
    std::vector<K> keys(request.count);
    const auto start = Clock::now();
    if (request.count > 0) io.read_keys(0, request.count, keys.data());
    stats.read_seconds += seconds_since(start);
    if (request.value_bytes == 0 && !request.argsort) {
      const auto sort_start = Clock::now();
      radix_sort_cpu(keys.data(), static_cast<NoValues*>(nullptr), keys.size(), request.descending);
      stats.sort_seconds += seconds_since(sort_start);
      record_extremes(keys, request.descending, stats);
      const auto write_start = Clock::now();
      if (request.count > 0) io.write_keys(0, request.count, keys.data());
      stats.write_seconds += seconds_since(write_start);
      return;
    }
    visit_value_width(request.argsort ? sizeof(uint64_t) : request.value_bytes, [&](auto value_tag) {
      sort_with_values<K, typename decltype(value_tag)::type>(request, io, keys, stats);
    });
  });
}

/// The first min(k, count) keys in the sort's order, sorted: a selection (nth_element) and a sort of the winners by
/// ordered bits, then input position, so that equal keys keep their input order as in the stable sort.
template <class K>
void cpu_top(const TopRequest& request, const K* keys, K* keys_out) {
  const size_t taken = std::min(request.k, request.count);
  if (taken == 0) return;
  std::vector<size_t> order(request.count);
  std::iota(order.begin(), order.end(), size_t{0});
  const auto before = [&](size_t a, size_t b) {
    const auto bits_a = sort_bits(keys[a], request.descending);
    const auto bits_b = sort_bits(keys[b], request.descending);
    return bits_a != bits_b ? bits_a < bits_b : a < b;
  };
  if (taken < request.count) std::nth_element(order.begin(), order.begin() + taken, order.end(), before);
  std::sort(order.begin(), order.begin() + taken, before);
  for (size_t i = 0; i < taken; ++i) keys_out[i] = keys[order[i]];
}

class CpuBackend final : public SortBackend {
 public:
  std::string device() const override { return "CPU"; }

  size_t sort_bytes(const SortRequest& request) override {
    const size_t value_bytes = request.argsort ? sizeof(uint64_t) : request.value_bytes;
    // The keys and values, and the radix sort's buffer of the same size.
    return 2 * request.count * (key_type_size(request.key_type) + value_bytes);
  }

  size_t partition_bytes(const PartitionRequest&) override { return 0; }  // it works in the staging buffers

  size_t free_bytes() override { return available_host_memory(); }

  bool sorts_in_host_memory() const override { return true; }
  bool partitions_in_place() const override { return false; }

  void sort(const SortRequest& request, const SortIo& io, SortStats& stats) override {
    stats.device = device();
    cpu_sort(request, io, stats);
  }

  size_t partition_lanes() const override { return 1; }

  /// Partitions at once, on the calling thread.
  void partition_start(PartitionTicket& /*ticket*/, const PartitionRequest& request, const void* keys_in,
                       const void* values_in, void* keys_out, void* values_out, size_t* bucket_offsets,
                       SortStats& stats) override {
    const auto start = Clock::now();
    visit_key_type(request.key_type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      const K* typed_in = static_cast<const K*>(keys_in);
      K* typed_out = static_cast<K*>(keys_out);
      if (request.value_bytes == 0) {
        radix_partition_cpu<K, NoValues>(typed_in, nullptr, typed_out, nullptr, request.count, request.begin_bit,
                                         request.end_bit, request.descending, bucket_offsets);
        return;
      }
      visit_value_width(request.value_bytes, [&](auto value_tag) {
        using V = typename decltype(value_tag)::type;
        radix_partition_cpu(typed_in, static_cast<const V*>(values_in), typed_out, static_cast<V*>(values_out),
                            request.count, request.begin_bit, request.end_bit, request.descending, bucket_offsets);
      });
    });
    stats.partition_seconds += seconds_since(start);
  }

  void partition_finish(PartitionTicket& /*ticket*/, SortStats& /*stats*/) override {}

  size_t top_bytes(const TopRequest& request) override { return request.count * sizeof(size_t); }  // the order

  void top(const TopRequest& request, const void* keys, void* keys_out, SortStats& stats) override {
    stats.device = device();
    const auto start = Clock::now();
    visit_key_type(request.key_type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      cpu_top(request, static_cast<const K*>(keys), static_cast<K*>(keys_out));
    });
    stats.sort_seconds += seconds_since(start);
  }

  HostBuffer allocate_staging(size_t bytes) override {
    std::shared_ptr<char[]> memory(new char[std::max<size_t>(bytes, 1)]);
    return {std::shared_ptr<void>(memory, memory.get()), memory.get(), bytes};
  }
};

}  // namespace

std::unique_ptr<SortBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib << 10;
  }
  return 0;
}

}  // namespace radix_sort
