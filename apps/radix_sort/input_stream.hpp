#pragma once
// Reading an input from start to end in chunks, for sorts larger than memory: binary and npy elements are read with
// pread (a file that shrinks meanwhile is an error, not a crash), text is parsed block by block as it streams.

#include <cstddef>
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
  /// Streams `file` (opened, its format resolved; npy and binary already checked for a whole number of elements),
  /// reading text in blocks of `text_block_bytes`. Throws AppError.
  ElementStream(const InputFile& file, Format format, KeyType type, unsigned threads,
                size_t text_block_bytes = size_t(16) << 20);
  ElementStream(const ElementStream&) = delete;
  ElementStream& operator=(const ElementStream&) = delete;
  ~ElementStream();

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
  const std::string& name() const { return name_; }

 private:
  /// Reads bytes [cursor_, cursor_ + size) of the file.
  void read_bytes(void* destination, size_t size);
  /// Parses the next block of text into parsed_.
  void parse_next_block();

  std::string name_;
  Format format_;
  KeyType type_;
  unsigned threads_;
  size_t text_block_bytes_;
  int fd_ = -1;                 // a regular file, read with pread
  std::string_view in_memory_;  // stdin or a pipe, already read by InputFile
  size_t cursor_ = 0;           // the next byte to read
  size_t end_ = 0;              // the file's size when opened
  std::optional<size_t> count_;
  // Text: the unparsed tail of the last block, the values parsed and not yet handed out, lines consumed.
  std::string carry_;
  Column parsed_;
  size_t parsed_taken_ = 0;
  size_t lines_before_ = 0;
};

}  // namespace radix_sort
