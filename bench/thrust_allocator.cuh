#pragma once
// Thrust's temporary storage in the benches: a free list of device blocks keyed by size. Thrust allocates and frees
// its scratch inside every call; with this allocator a timed run reuses the blocks its warm-up run allocated, as
// prims and CUB run on storage allocated before the timing, so a "vs Thrust" ratio compares algorithms.
//
//   prims::bench::CachingAllocator allocator;
//   thrust::sort(thrust::cuda::par(allocator).on(stream), first, last);
//   allocator.release();   // frees the cached blocks
//
// The harness owns one (Harness::thrust_on) and releases it at the end of every case.

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <utility>

#include "prims/util/error.cuh"

namespace prims::bench {

class CachingAllocator {
 public:
  using value_type = char;

  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  /// Frees what release() did not; a destructor cannot report a failure, release() does.
  ~CachingAllocator() {
    for (const auto& [bytes, block] : free_blocks_) cudaFree(block);
  }

  /// A cached block of exactly `bytes`, else a new one.
  char* allocate(size_t bytes) {
    ++blocks_in_use_;
    const auto cached = free_blocks_.find(bytes);
    if (cached != free_blocks_.end()) {
      char* block = cached->second;
      free_blocks_.erase(cached);
      return block;
    }
    void* block = nullptr;
    check(cudaMalloc(&block, bytes), "allocating Thrust's temporary storage");
    ++device_allocations_;
    return static_cast<char*>(block);
  }

  /// Keeps the block for the next request of the same size.
  void deallocate(char* block, size_t bytes) {
    free_blocks_.emplace(bytes, block);
    --blocks_in_use_;
  }

  /// How many requests found no cached block and went to cudaMalloc.
  size_t device_allocations() const { return device_allocations_; }

  /// Frees every cached block. Throws if Thrust still holds a block or cudaFree fails.
  void release() {
    if (blocks_in_use_ != 0) throw std::logic_error("Thrust's temporary storage is released while in use");
    for (const auto& [bytes, block] : std::exchange(free_blocks_, {})) {
      check(cudaFree(block), "freeing Thrust's temporary storage");
    }
  }

 private:
  std::multimap<size_t, char*> free_blocks_;
  size_t blocks_in_use_ = 0;
  size_t device_allocations_ = 0;
};

}  // namespace prims::bench
