#pragma once
// Where the out-of-core sort keeps its buckets between partitioning and sorting: host memory (the partitioned
// chunks themselves, kept as they came from the backend), or spill files that no name points to (so nothing is left
// behind however the program ends).

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>


namespace radix_sort {

/// The buckets of one partition: each bucket is the elements given to it, in order. After finish_appending(), each
/// column (keys, values) of a bucket is read once, in order of `first`; what has been read may be released as
/// reading goes on.
class BucketStore {
 public:
  enum Column { keys = 0, values = 1 };

  BucketStore(size_t buckets, size_t key_bytes, size_t value_bytes, unsigned threads)
      : element_bytes_{key_bytes, value_bytes}, threads_(std::max(threads, 1u)), counts_(buckets, 0) {}
  virtual ~BucketStore() = default;
  BucketStore(const BucketStore&) = delete;
  BucketStore& operator=(const BucketStore&) = delete;

  /// Adds a partitioned chunk: bucket b's elements are [offsets[b], offsets[b + 1]) of `keys` (and `values`, null
  /// without values).
  virtual void add_partitioned(const size_t* offsets, const void* keys, const void* values) = 0;
  /// Ends adding; reading may begin.
  virtual void finish_appending() = 0;
  /// Copies elements [first, first + count) of one column of `bucket` into `destination`.
  virtual void read(size_t bucket, Column column, size_t first, size_t count, void* destination) = 0;
  /// Releases what is left of `bucket`.
  virtual void release(size_t bucket) = 0;
  /// Host memory the store holds for its data (0 for a spill file, whose few piece buffers the plan reserves).
  virtual size_t resident_bytes() const = 0;

  size_t buckets() const { return counts_.size(); }
  size_t count(size_t bucket) const { return counts_[bucket]; }
  size_t element_bytes(Column column) const { return element_bytes_[column]; }

 protected:
  size_t element_bytes_[2];
  unsigned threads_;
  std::vector<size_t> counts_;
};

/// Buckets in host memory: every partitioned chunk is kept whole, copied into memory of its own (huge pages where
/// the system has them: a few faults rather than one a page), and a bucket is its slice of every chunk. A chunk's
/// memory goes once every bucket with elements in it has been released. Large copies run on up to `threads`
/// threads.
std::unique_ptr<BucketStore> make_host_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                    unsigned threads);

/// Buckets in anonymous spill files in `directory` (O_TMPFILE, or files unlinked as soon as they are created), one
/// for each of up to 16 appending threads (the kernel takes one buffered write to a file at a time), each bucket's
/// elements gathered into pieces of `piece_elements` so that spill writes are large and the index of the pieces
/// small beside the data. Throws AppError where the directory does not take them. `spilled_bytes` counts the bytes
/// written (once the store is gone).
std::unique_ptr<BucketStore> make_spill_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                     size_t piece_elements, unsigned threads,
                                                     const std::string& directory, size_t& spilled_bytes);

/// Checks that `directory` takes spill files by creating one (nameless, closed at once): --tmpdir is checked up front,
/// before any work, whether the sort spills or not. Throws AppError "--tmpdir: cannot create a spill file in ...".
void check_spill_directory(const std::string& directory);

/// Host memory one entry of a store's index takes, at most (with the growth of its vector).
inline constexpr size_t bucket_piece_index_bytes = 2 * (4 * sizeof(size_t) + 2 * sizeof(void*));

}  // namespace radix_sort
