#pragma once
// Reading an input from start to end in chunks, for sorts larger than memory and for --check: binary and npy elements
// are read with pread (a file that shrinks meanwhile is an error, not a crash), text is parsed block by block as it
// streams.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "file_io.hpp"
#include "formats.hpp"

namespace radix_sort {

/// The elements of one input, read in order.
/// Example:
///   ElementStream keys(file, Format::Binary, KeyType::U32, threads);
///   while (size_t got = keys.read(chunk, buffer)) consume(buffer, got);
class ElementStream {
 public:
  /// Streams `file`, which must outlive it (opened, its format resolved; npy and binary already checked for a whole
  /// number of elements), reading text in blocks of `text_block_bytes`. Throws AppError.
  ElementStream(const InputFile& file, Format format, KeyType type, unsigned threads,
                size_t text_block_bytes = size_t(16) << 20);
  ElementStream(const ElementStream&) = delete;
  ElementStream& operator=(const ElementStream&) = delete;

  /// Reads up to `max_count` elements into `destination`; returns how many, 0 at the end. Throws AppError.
  size_t read(size_t max_count, void* destination);
  /// The number of elements where the format says it up front (binary, npy); none for text.
  std::optional<size_t> count() const { return count_; }
  /// At most this many elements (text: one per two bytes, a digit and a newline).
  size_t max_count() const;
  /// Bytes of the file consumed so far, of file_bytes().
  size_t bytes_read() const { return cursor_; }
  size_t file_bytes() const { return end_; }
  KeyType type() const { return type_; }
  const std::string& name() const { return file_.name(); }

 private:
  /// Reads bytes [cursor_, cursor_ + size) of the file.
  void read_bytes(void* destination, size_t size);
  /// Parses the next block of text into parsed_.
  void parse_next_block();

  const InputFile& file_;  // outlives the stream
  Format format_;
  KeyType type_;
  unsigned threads_;
  size_t text_block_bytes_;
  size_t cursor_ = 0;           // the next byte to read
  size_t end_ = 0;              // the file's size when opened
  std::optional<size_t> count_;
  // Text: the block being parsed (kept for the next one: a fresh 64 MiB block a time cost more than its parse), the
  // unparsed tail of the last block, the values parsed and not yet handed out, lines consumed.
  std::unique_ptr<char[]> block_;
  size_t block_capacity_ = 0;
  std::string carry_;
  Column parsed_;
  size_t parsed_taken_ = 0;
  size_t lines_before_ = 0;
};

/// All elements of `file` in memory: binary and npy elements read with pread, text parsed block by block (blocks of
/// `text_block_bytes`). A file that shrinks while it is read is an AppError ("'<name>' shrank while being read"), as
/// is malformed content.
Column read_column(const InputFile& file, Format format, KeyType type, unsigned threads,
                   size_t text_block_bytes = size_t(16) << 20);

}  // namespace radix_sort
