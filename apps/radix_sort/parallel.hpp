#pragma once
// A minimal parallel loop for the I/O paths (parsing, printing, copying).

#include <cstddef>
#include <functional>

namespace radix_sort {

/// Runs `body(task)` for every task in [0, tasks) on up to `threads` threads (the caller's among them; the others
/// from one pool of helpers kept for the whole run).
/// The first exception thrown by a body is rethrown after all threads finish.
void parallel_for(size_t tasks, unsigned threads, const std::function<void(size_t)>& body);

/// Runs `body(begin, end)` over [0, bytes) split into ranges of at least 2 MiB, on up to `threads` threads: file and
/// memory copies of large blocks scale with threads.
void parallel_ranges(size_t bytes, unsigned threads, const std::function<void(size_t begin, size_t end)>& body);

/// memcpy split over up to `threads` threads: page-cache and pinned-memory copies scale with threads.
void parallel_copy(void* destination, const void* source, size_t bytes, unsigned threads);

}  // namespace radix_sort
