#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace radix_sort {

namespace {

/// One parallel_for call: its tasks, taken one at a time by the caller and by the helpers that join it.
struct Job {
  size_t tasks = 0;
  const std::function<void(size_t)>* body = nullptr;
  std::atomic<size_t> next_task{0};
  std::mutex mutex;
  std::condition_variable helpers_done;
  size_t helpers_inside = 0;  // helpers running tasks; the caller waits for them before it returns
  std::exception_ptr first_error;

  void work() {
    for (size_t task = next_task++; task < tasks; task = next_task++) {
      try {
        (*body)(task);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!first_error) first_error = std::current_exception();
        next_task = tasks;
      }
    }
  }
};

/// Threads kept for the whole run, so a parallel loop costs a wake-up rather than starting and joining threads (the
/// I/O paths run thousands of them on chunks of a few MiB). A call offers its job to up to threads - 1 helpers and
/// works on it itself, so it finishes whether or not any helper is free: calls from several threads at once, or
/// from inside a loop's body, share the helpers and never wait for one another.
class HelperPool {
 public:
  /// Never destroyed: its threads wait on it until the process ends, whatever order static objects go in.
  static HelperPool& instance() {
    static HelperPool* pool = new HelperPool;
    return *pool;
  }

  void run(Job& job, size_t helpers) {
    ensure_threads(helpers);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < helpers; ++i) offers_.push_back(&job);
    }
    if (helpers == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
    job.work();
    // Offers no helper took are withdrawn; helpers inside the job are waited for (the job lives on this stack).
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      offers_.erase(std::remove(offers_.begin(), offers_.end(), &job), offers_.end());
    }
    std::unique_lock<std::mutex> lock(job.mutex);
    job.helpers_done.wait(lock, [&] { return job.helpers_inside == 0; });
  }

 private:
  void ensure_threads(size_t count) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (; threads_ < count; ++threads_) std::thread([this] { serve(); }).detach();
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return !offers_.empty(); });
      Job* job = offers_.front();
      offers_.pop_front();
      {
        // Counted inside before the pool's lock is let go: the caller cannot return while this helper holds the job.
        const std::lock_guard<std::mutex> job_lock(job->mutex);
        ++job->helpers_inside;
      }
      lock.unlock();
      job->work();
      {
        const std::lock_guard<std::mutex> job_lock(job->mutex);
        if (--job->helpers_inside == 0) job->helpers_done.notify_all();
      }
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> offers_;
  size_t threads_ = 0;
};

}  // namespace

void parallel_for(size_t tasks, unsigned threads, const std::function<void(size_t)>& body) {
  const size_t workers = std::clamp<size_t>(threads, 1, std::max<size_t>(tasks, 1));
  Job job;
  job.tasks = tasks;
  job.body = &body;
  if (workers == 1) {
    job.work();
  } else {
    HelperPool::instance().run(job, workers - 1);
  }
  if (job.first_error) std::rethrow_exception(job.first_error);
}

void parallel_ranges(size_t bytes, unsigned threads, const std::function<void(size_t begin, size_t end)>& body) {
  // Pieces of a few MiB: a staging chunk of 8-32 MiB is then read or copied by several threads.
  constexpr size_t min_piece = size_t(2) << 20;
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
