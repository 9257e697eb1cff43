#include "input_stream.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "errors.hpp"
#include "parallel.hpp"

namespace radix_sort {

ElementStream::ElementStream(const InputFile& file, Format format, KeyType type, unsigned threads,
                             size_t text_block_bytes)
    : name_(file.name()),
      format_(format),
      type_(type),
      threads_(threads),
      text_block_bytes_(std::max<size_t>(text_block_bytes, 4096)),
      end_(file.bytes().size()) {
  if (file.mapped()) {
    fd_ = ::open(file.name().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw_system_error(fmt::format("cannot open '{}'", name_));
  } else {
    in_memory_ = file.bytes();
  }
  const size_t element = key_type_size(type);
  if (format == Format::Npy) {
    const NpyHeader header = parse_npy_header(file.bytes(), name_);
    cursor_ = header.data_offset;
    count_ = header.count;
  } else if (format == Format::Binary) {
    count_ = end_ / element;
  }
}

ElementStream::~ElementStream() {
  if (fd_ >= 0) ::close(fd_);
}

size_t ElementStream::max_count() const {
  if (count_) return *count_;
  return end_ / 2 + 1;
}

void ElementStream::read_bytes(void* destination, size_t size) {
  if (fd_ < 0) {
    std::memcpy(destination, in_memory_.data() + cursor_, size);
    cursor_ += size;
    return;
  }
  // Large reads run on several threads: copies out of the page cache scale with threads.
  parallel_ranges(size, threads_, [&](size_t begin, size_t end) {
    for (size_t at = begin; at < end;) {
      const ssize_t got = ::pread(fd_, static_cast<char*>(destination) + at, end - at,
                                  static_cast<off_t>(cursor_ + at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw_system_error(fmt::format("cannot read '{}'", name_));
      if (got == 0) {
        throw AppError(fmt::format("'{}' shrank while being read: it had {} bytes, and ends at {}", name_, end_,
                                   cursor_ + at));
      }
      at += static_cast<size_t>(got);
    }
  });
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
    std::memcpy(out + done * element, static_cast<const char*>(parsed_.data) + parsed_taken_ * element,
                take * element);
    parsed_taken_ += take;
    done += take;
  }
  return done;
}

void ElementStream::parse_next_block() {
  // The block is the carried-over partial line, then the next bytes up to the last newline in them.
  std::string block = std::move(carry_);
  carry_.clear();
  const size_t size = std::min(text_block_bytes_, end_ - cursor_);
  const size_t kept = block.size();
  block.resize(kept + size);
  read_bytes(block.data() + kept, size);
  if (cursor_ < end_) {
    const size_t newline = block.rfind('\n');
    const size_t cut = newline == std::string::npos ? 0 : newline + 1;
    carry_.assign(block, cut, std::string::npos);
    block.resize(cut);
  }
  parsed_ = parse_text(block, type_, threads_, name_, lines_before_);
  parsed_taken_ = 0;
  lines_before_ += static_cast<size_t>(std::count(block.begin(), block.end(), '\n'));
}

}  // namespace radix_sort
