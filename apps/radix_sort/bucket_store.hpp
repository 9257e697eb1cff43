#pragma once
// Where the out-of-core sort keeps its buckets between partitioning and sorting: host memory, or one spill file
// that no name points to (so nothing is left behind however the program ends).

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace radix_sort {

/// The buckets of one partition: each bucket is the elements appended to it, in order, gathered into pieces of
/// `piece_elements` (so that the index of the pieces stays small beside the data, and spill writes large). After
/// finish_appending(), each column (keys, values) of a bucket is read once, in order of `first`; what has been read
/// is released as reading goes on.
class BucketStore {
 public:
  enum Column { keys = 0, values = 1 };

  BucketStore(size_t buckets, size_t key_bytes, size_t value_bytes, size_t piece_elements, unsigned threads)
      : element_bytes_{key_bytes, value_bytes},
        threads_(std::max(threads, 1u)),
        piece_elements_(std::max<size_t>(piece_elements, 1)),
        pieces_(buckets),
        open_(buckets),
        counts_(buckets, 0) {}
  virtual ~BucketStore() = default;
  BucketStore(const BucketStore&) = delete;
  BucketStore& operator=(const BucketStore&) = delete;

  /// Appends `count` elements to `bucket` (values null without values).
  void append(size_t bucket, const void* keys, const void* values, size_t count);
  /// Appends a partitioned chunk: bucket b's elements are [offsets[b], offsets[b + 1]) of `keys` (and `values`).
  /// Large chunks are appended by several threads, a bucket each.
  void append_partitioned(const size_t* offsets, const void* keys, const void* values);
  /// Stores the pieces still being gathered; reading may begin.
  void finish_appending();
  /// Copies elements [first, first + count) of one column of `bucket` into `destination`, and releases the pieces
  /// wholly before `first + count`.
  void read(size_t bucket, Column column, size_t first, size_t count, void* destination);
  /// Releases what is left of `bucket`.
  void release(size_t bucket);

  size_t buckets() const { return counts_.size(); }
  size_t count(size_t bucket) const { return counts_[bucket]; }
  size_t element_bytes(Column column) const { return element_bytes_[column]; }

 protected:
  /// Where one column of a piece lies: a host allocation or an offset in the spill file.
  struct Location {
    std::unique_ptr<char[]> memory;
    size_t offset = 0;
  };
  struct Piece {
    size_t first = 0;  // the piece's first element within its bucket
    size_t count = 0;
    Location columns[2];
  };
  /// Keeps `size` bytes of a gathered piece: takes the buffer (host memory) or writes it out and leaves it for reuse.
  virtual Location store(std::unique_ptr<char[]>& buffer, size_t size) = 0;
  virtual void load(const Location& location, size_t offset, size_t size, void* destination) = 0;
  virtual void drop(Location& location, size_t size) = 0;

  size_t element_bytes_[2];
  unsigned threads_;

 private:
  /// A bucket's piece being gathered.
  struct OpenPiece {
    std::unique_ptr<char[]> columns[2];
    size_t count = 0;
  };
  void seal(size_t bucket);

  size_t piece_elements_;
  std::vector<std::vector<Piece>> pieces_;
  std::vector<OpenPiece> open_;
  std::vector<size_t> counts_;
};

/// Buckets in host memory. Large appends and reads run on up to `threads` threads.
std::unique_ptr<BucketStore> make_host_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                    size_t piece_elements, unsigned threads);

/// Buckets in one anonymous spill file in `directory` (O_TMPFILE, or a file unlinked as soon as it is created).
/// Throws AppError where the directory does not take one. `spilled_bytes` counts the bytes written (once the store
/// is gone).
std::unique_ptr<BucketStore> make_spill_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                     size_t piece_elements, unsigned threads,
                                                     const std::string& directory, size_t& spilled_bytes);

/// Host memory one entry of a store's index of pieces takes, at most (with the growth of its vector).
inline constexpr size_t bucket_piece_index_bytes = 2 * (4 * sizeof(size_t) + 2 * sizeof(void*));

}  // namespace radix_sort
