#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace radix_sort {

void parallel_for(size_t tasks, unsigned threads, const std::function<void(size_t)>& body) {
  const size_t workers = std::clamp<size_t>(threads, 1, std::max<size_t>(tasks, 1));
  std::atomic<size_t> next_task{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t task = next_task++; task < tasks; task = next_task++) {
      try {
        body(task);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        next_task = tasks;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < workers; ++i) helpers.emplace_back(work);
  work();
  for (auto& helper : helpers) helper.join();
  if (first_error) std::rethrow_exception(first_error);
}

void parallel_ranges(size_t bytes, unsigned threads, const std::function<void(size_t begin, size_t end)>& body) {
  constexpr size_t min_piece = size_t(8) << 20;
  const size_t pieces = std::clamp<size_t>(bytes / min_piece, 1, std::max(threads, 1u));
  const size_t piece = (bytes + pieces - 1) / pieces;
  parallel_for(pieces, threads, [&](size_t i) {
    const size_t begin = i * piece;
    const size_t end = std::min(bytes, begin + piece);
    if (begin < end) body(begin, end);
  });
}

void parallel_copy(void* destination, const void* source, size_t bytes, unsigned threads) {
  parallel_ranges(bytes, threads, [&](size_t begin, size_t end) {
    std::memcpy(static_cast<char*>(destination) + begin, static_cast<const char*>(source) + begin, end - begin);
  });
}

}  // namespace radix_sort
