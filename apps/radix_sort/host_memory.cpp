#include "host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "parallel.hpp"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and the pages are touched instead
#endif

namespace radix_sort {

HugePageMemory::HugePageMemory(size_t bytes) : bytes_(std::max<size_t>(bytes, 1)) {
  void* memory = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  ::madvise(memory, bytes_, MADV_HUGEPAGE);  // a hint: without it, ordinary pages
  data_ = static_cast<char*>(memory);
}

HugePageMemory::~HugePageMemory() { ::munmap(data_, bytes_); }

void fault_in(char* data, size_t bytes, unsigned threads) {
  // Whole pages a thread, 16 MiB at least: the advice takes page-aligned ranges (`data` starts a page).
  constexpr size_t min_piece = size_t(16) << 20;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t pieces = std::clamp<size_t>(bytes / min_piece, 1, std::max(threads, 1u));
  const size_t piece = (bytes / pieces + page - 1) / page * page;
  parallel_for(pieces, threads, [&](size_t i) {
    const size_t begin = std::min(bytes, i * piece);
    const size_t end = std::min(bytes, begin + piece);
    if (begin == end || ::madvise(data + begin, end - begin, MADV_POPULATE_WRITE) == 0) return;
    for (size_t at = begin; at < end; at += page) static_cast<volatile char*>(data)[at] = 0;
  });
}

}  // namespace radix_sort
