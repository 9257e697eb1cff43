#pragma once
// Host memory for large buffers: anonymous memory that asks for huge pages, and faulting memory in on several
// threads so that later copies into it are plain copies.

#include <cstddef>

namespace radix_sort {

/// Anonymous memory that asks for huge pages: filling gigabytes of it then takes thousands of page faults rather
/// than millions. Throws std::bad_alloc where the system gives none.
class HugePageMemory {
 public:
  explicit HugePageMemory(size_t bytes);
  ~HugePageMemory();
  HugePageMemory(const HugePageMemory&) = delete;
  HugePageMemory& operator=(const HugePageMemory&) = delete;
  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  char* data_ = nullptr;
};

/// Faults [data, data + bytes) in writable on up to `threads` threads (MADV_POPULATE_WRITE, or a store of zero in
/// each page where the kernel has no such advice: for memory that reads as zeros, which it leaves as it was).
void fault_in(char* data, size_t bytes, unsigned threads);

}  // namespace radix_sort
