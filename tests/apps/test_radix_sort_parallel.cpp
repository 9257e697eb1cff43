// radix_sort's parallel loop: every task once, errors rethrown, and calls from several threads at once or from inside
// a loop's body (which share one pool of helper threads) all finish.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "parallel.hpp"

namespace radix_sort {
namespace {

TEST(ParallelFor, RunsEveryTaskExactlyOnce) {
  for (const size_t tasks : {size_t(0), size_t(1), size_t(7), size_t(1000)}) {
    for (const unsigned threads : {1u, 2u, 16u}) {
      std::vector<std::atomic<int>> runs(tasks);
      parallel_for(tasks, threads, [&](size_t task) { ++runs[task]; });
      for (size_t task = 0; task < tasks; ++task) ASSERT_EQ(runs[task].load(), 1) << tasks << " " << threads;
    }
  }
}

TEST(ParallelFor, CallsFromSeveralThreadsAndFromInsideABodyAllFinish) {
  // Eight callers at once, each loop's body running a loop of its own: more work offered than there are helpers.
  constexpr size_t callers = 8;
  constexpr size_t outer = 32;
  constexpr size_t inner = 64;
  std::vector<uint64_t> sums(callers, 0);
  std::vector<std::thread> threads;
  for (size_t c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      std::vector<uint64_t> partial(outer, 0);
      parallel_for(outer, 8, [&](size_t i) {
        std::atomic<uint64_t> sum{0};
        parallel_for(inner, 8, [&](size_t j) { sum += c * 1000000 + i * 1000 + j; });
        partial[i] = sum;
      });
      sums[c] = std::accumulate(partial.begin(), partial.end(), uint64_t(0));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t c = 0; c < callers; ++c) {
    uint64_t expected = 0;
    for (size_t i = 0; i < outer; ++i) {
      for (size_t j = 0; j < inner; ++j) expected += c * 1000000 + i * 1000 + j;
    }
    EXPECT_EQ(sums[c], expected) << c;
  }
}

TEST(ParallelFor, RethrowsTheFirstErrorAndStopsTakingTasks) {
  // Task 0, taken first, fails at once while the others take a millisecond each: no task starts after the error,
  // so only those already running finish (were the loop to go on, all 1000 would run).
  std::atomic<size_t> ran{0};
  EXPECT_THROW(parallel_for(1000, 8,
                            [&](size_t task) {
                              if (task == 0) throw std::runtime_error("task 0");
                              std::this_thread::sleep_for(std::chrono::milliseconds(1));
                              ++ran;
                            }),
               std::runtime_error);
  EXPECT_LT(ran.load(), size_t(500));
  // The helpers are free again.
  std::atomic<size_t> after{0};
  parallel_for(1000, 8, [&](size_t) { ++after; });
  EXPECT_EQ(after.load(), 1000u);
}

TEST(ParallelCopy, CopiesEveryByteOfUnevenSizes) {
  for (const size_t bytes : {size_t(0), size_t(1), (size_t(2) << 20) + 3, (size_t(37) << 20) + 11}) {
    std::vector<uint8_t> source(bytes);
    for (size_t i = 0; i < bytes; ++i) source[i] = static_cast<uint8_t>(i * 131 + (i >> 13));
    std::vector<uint8_t> destination(bytes, 0);
    parallel_copy(destination.data(), source.data(), bytes, 16);
    EXPECT_EQ(destination, source) << bytes;
  }
}

}  // namespace
}  // namespace radix_sort
