#include "input_stream.hpp"

#include <fmt/format.h>

#include <string.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "errors.hpp"
#include "parallel.hpp"

namespace radix_sort {

static_assert(InputFile::head_bytes >= max_npy_header_bytes, "an input's head holds any npy header read");

ElementStream::ElementStream(const InputFile& file, Format format, KeyType type, unsigned threads,
                             size_t text_block_bytes)
    : file_(file),
      format_(format),
      type_(type),
      threads_(threads),
      text_block_bytes_(std::max<size_t>(text_block_bytes, 4096)),
      end_(file.size()) {
  const size_t element = key_type_size(type);
  if (format == Format::Npy) {
    const NpyHeader header = parse_npy_header(file.head(), file.size(), file.name());
    cursor_ = header.data_offset;
    count_ = header.count;
  } else if (format == Format::Binary) {
    count_ = end_ / element;
  }
}

size_t ElementStream::max_count() const {
  if (count_) return *count_;
  return end_ / 2 + 1;
}

void ElementStream::read_bytes(void* destination, size_t size) {
  file_.read(cursor_, size, destination, threads_);
  cursor_ += size;
}

size_t ElementStream::read(size_t max_count, void* destination) {
  const size_t element = key_type_size(type_);
  if (format_ != Format::Text) {
    const size_t count = std::min(max_count, (end_ - cursor_) / element);
    read_bytes(destination, count * element);
    return count;
  }
  size_t done = 0;
  char* out = static_cast<char*>(destination);
  while (done < max_count) {
    if (parsed_taken_ == parsed_.count) {
      if (cursor_ == end_ && carry_.empty()) break;
      parse_next_block();
      continue;
    }
    const size_t take = std::min(max_count - done, parsed_.count - parsed_taken_);
    parallel_copy(out + done * element, static_cast<const char*>(parsed_.data) + parsed_taken_ * element,
                  take * element, threads_);
    parsed_taken_ += take;
    done += take;
  }
  return done;
}

void ElementStream::parse_next_block() {
  // The block is the carried-over partial line, then the next bytes up to the last newline in them.
  const size_t kept = carry_.size();
  const size_t size = std::min(text_block_bytes_, end_ - cursor_);
  if (block_capacity_ < kept + size) {
    block_.reset(new char[kept + size]);  // left uninitialized: the carry and the read fill it
    block_capacity_ = kept + size;
  }
  char* const block = block_.get();
  std::memcpy(block, carry_.data(), kept);
  carry_.clear();
  read_bytes(block + kept, size);
  size_t cut = kept + size;
  if (cursor_ < end_) {
    const void* newline = ::memrchr(block, '\n', kept + size);
    cut = newline == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(newline) - block) + 1;
    carry_.assign(block + cut, kept + size - cut);
  }
  size_t lines = 0;
  parsed_ = parse_text(std::string_view(block, cut), type_, threads_, file_.name(), lines_before_, &lines);
  parsed_taken_ = 0;
  lines_before_ += lines;
}

Column read_column(const InputFile& file, Format format, KeyType type, unsigned threads, size_t text_block_bytes) {
  ElementStream stream(file, format, type, threads, text_block_bytes);
  const size_t element = key_type_size(type);
  // Room for the most elements the file can hold (for text a bound: pages past what is parsed are never touched).
  const size_t capacity = stream.max_count();
  std::shared_ptr<uint64_t[]> buffer(new uint64_t[std::max<size_t>((capacity * element + 7) / 8, 1)]);
  char* const data = reinterpret_cast<char*>(buffer.get());
  size_t count = 0;
  while (const size_t got = stream.read(capacity - count, data + count * element)) count += got;
  return Column{type, count, data, std::shared_ptr<const void>(buffer, data)};
}

}  // namespace radix_sort

