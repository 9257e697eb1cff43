#pragma once
// SlotPipeline: the one way radix_sort overlaps stages of work on chunk-sized buffers (the out-of-core partition's
// staging slots, the write-behind's buffers). The caller fills a free slot and submits it; each stage then runs on
// a thread of its own, over the slots in the order they were submitted, and a slot is free again after the last
// stage. So reading the next chunk, working on this one and storing the last one overlap, and the slots bound the
// memory in flight.
//
// Errors: the first exception of any stage is kept; every queue closes, each stage stops after the slot in hand,
// and acquire() or finish() rethrows it on the caller. If the caller itself throws, the destructor closes the
// queues and joins the stages (the slots still queued are dropped).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace radix_sort {

/// A queue between two pipeline stages; closing it wakes every waiter (the end of the data, or an error).
template <class T>
class Channel {
 public:
  void push(T item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
  }
  /// The next item, or nothing once closed (items still queued then are dropped).
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (closed_ && (items_.empty() || dropping_)) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }
  /// No more items: pop() returns what is queued, then nothing. With `drop`, pop() returns nothing at once.
  void close(bool drop = false) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
      dropping_ = dropping_ || drop;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
  bool dropping_ = false;
};

template <class Slot>
class SlotPipeline {
 public:
  using Stage = std::function<void(Slot&)>;

  /// Starts one thread a stage (at least one stage) over `slots` (at least one), all of them free.
  SlotPipeline(const std::vector<Slot*>& slots, std::vector<Stage> stages)
      : stages_(std::move(stages)), queues_(stages_.size()) {
    if (stages_.empty() || slots.empty()) throw std::logic_error("SlotPipeline: no stage or no slot");
    for (Slot* slot : slots) free_.push(slot);
    threads_.reserve(stages_.size());
    for (size_t s = 0; s < stages_.size(); ++s) threads_.emplace_back([this, s] { run_stage(s); });
  }
  SlotPipeline(const SlotPipeline&) = delete;
  SlotPipeline& operator=(const SlotPipeline&) = delete;
  ~SlotPipeline() {
    if (!threads_.empty()) stop(true);
  }

  /// A free slot, waiting for one if every slot is in a stage; rethrows a stage's error.
  Slot& acquire() {
    std::optional<Slot*> slot = free_.pop();
    if (!slot) {
      rethrow();
      throw std::logic_error("SlotPipeline: no free slot after finish()");
    }
    return **slot;
  }

  /// Hands a filled slot to the first stage.
  void submit(Slot& slot) { queues_.front().push(&slot); }

  /// Waits until every submitted slot has passed every stage, and joins the stages; rethrows a stage's error.
  void finish() {
    stop(false);
    rethrow();
  }

 private:
  void run_stage(size_t s) {
    Channel<Slot*>& next = s + 1 < queues_.size() ? queues_[s + 1] : free_;
    while (std::optional<Slot*> slot = queues_[s].pop()) {
      try {
        stages_[s](**slot);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      next.push(*slot);
    }
    // This stage is done: the next one ends once it has taken what this one passed on.
    if (s + 1 < queues_.size()) queues_[s + 1].close();
  }

  void fail(std::exception_ptr caught) {
    {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = caught;
    }
    for (Channel<Slot*>& queue : queues_) queue.close(true);
    free_.close(true);
  }

  /// Ends the input (dropping what is queued where `drop`) and joins every stage.
  void stop(bool drop) {
    if (drop) {
      for (Channel<Slot*>& queue : queues_) queue.close(true);
    } else {
      queues_.front().close();
    }
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

  void rethrow() {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (error_) std::rethrow_exception(error_);
  }

  std::vector<Stage> stages_;
  std::vector<Channel<Slot*>> queues_;  // queues_[s]: slots waiting for stage s
  Channel<Slot*> free_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace radix_sort
