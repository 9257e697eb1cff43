#include "bucket_store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>

#include "errors.hpp"
#include "host_memory.hpp"
#include "parallel.hpp"

namespace radix_sort {

namespace {

/// Spill files of one store at most: one for each thread that appends, up to as many as keep a disk busy.
constexpr size_t max_spill_files = 16;

/// A new spill file in `directory`, without a name (only the descriptor holds it); -1 with errno set on failure.
int create_spill_file(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: create the file and unlink it at once, so only the descriptor holds it.
    std::string pattern = directory + "/.radix_sort.spill.XXXXXX";
    fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(pattern.c_str());
  }
  return fd;
}

/// Buckets in spill files: each bucket's elements gathered into pieces of `piece_elements`, each piece written when
/// full at the end of one of the files, and read back (then its blocks given back) in order. Writes to one file take
/// turns (the kernel locks a file for each buffered write), so the pieces are spread over a file a thread.
class SpillBucketStore final : public BucketStore {
 public:
  SpillBucketStore(size_t buckets, size_t key_bytes, size_t value_bytes, size_t piece_elements, unsigned threads,
                   const std::string& directory, size_t& spilled_bytes)
      : BucketStore(buckets, key_bytes, value_bytes, threads),
        directory_(directory),
        spilled_bytes_(spilled_bytes),
        piece_elements_(std::max<size_t>(piece_elements, 1)),
        files_(std::min<size_t>(threads_, max_spill_files)),
        pieces_(buckets),
        open_(buckets) {
    for (SpillFile& file : files_) {
      file.fd = create_spill_file(directory);
      if (file.fd < 0) throw_system_error(fmt::format("cannot create a spill file in '{}'", directory));
    }
  }
  ~SpillBucketStore() override {
    for (const SpillFile& file : files_) spilled_bytes_ += file.end;
  }

  /// Large chunks are appended by several threads, a bucket each.
  void add_partitioned(const size_t* offsets, const void* keys, const void* values) override;
  void finish_appending() override;
  /// Releases the pieces wholly before `first + count` as it reads.
  void read(size_t bucket, Column column, size_t first, size_t count, void* destination) override;
  void release(size_t bucket) override;
  size_t resident_bytes() const override { return 0; }

 private:
  /// Where one column of a piece lies: which spill file, and where in it.
  struct Location {
    size_t file = 0;
    size_t offset = 0;
  };
  struct Piece {
    size_t first = 0;  // the piece's first element within its bucket
    size_t count = 0;
    Location columns[2];
  };
  /// A bucket's piece being gathered.
  struct OpenPiece {
    std::unique_ptr<char[]> columns[2];
    size_t count = 0;
  };
  /// One spill file; a writer holds its lock while it appends. Closed with the store (also where creating a later
  /// one failed).
  struct SpillFile {
    int fd = -1;
    std::mutex lock;
    size_t end = 0;  // bytes written
    ~SpillFile() {
      if (fd >= 0) ::close(fd);
    }
  };
  void append(size_t bucket, const void* keys, const void* values, size_t count);
  void seal(size_t bucket);
  /// Writes `size` bytes of a gathered piece at the end of a spill file no other thread is writing (where there is
  /// one; else `bucket`'s own); the buffer stays for reuse.
  Location store(size_t bucket, std::unique_ptr<char[]>& buffer, size_t size) {
    const size_t home = bucket % files_.size();
    size_t chosen = home;
    std::unique_lock<std::mutex> held;
    for (size_t i = 0; i < files_.size() && !held.owns_lock(); ++i) {
      chosen = (home + i) % files_.size();
      held = std::unique_lock<std::mutex>(files_[chosen].lock, std::try_to_lock);
    }
    if (!held.owns_lock()) held = std::unique_lock<std::mutex>(files_[chosen = home].lock);
    SpillFile& file = files_[chosen];
    const Location location{chosen, file.end};
    for (size_t done = 0; done < size;) {
      const ssize_t written =
          ::pwrite(file.fd, buffer.get() + done, size - done, static_cast<off_t>(location.offset + done));
      if (written < 0) {
        if (errno == EINTR) continue;
        throw_system_error(fmt::format("cannot write a spill file in '{}'", directory_));
      }
      done += static_cast<size_t>(written);
    }
    file.end += size;
    return location;
  }
  void load(const Location& location, size_t offset, size_t size, void* destination) {
    char* cursor = static_cast<char*>(destination);
    size_t at = location.offset + offset;
    const int fd = files_[location.file].fd;
    while (size > 0) {
      const ssize_t got = ::pread(fd, cursor, size, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        if (got == 0) errno = EIO;
        throw_system_error(fmt::format("cannot read a spill file in '{}'", directory_));
      }
      cursor += got;
      at += static_cast<size_t>(got);
      size -= static_cast<size_t>(got);
    }
  }
  void drop(Location& location, size_t size) {
    // Give the disk space back as buckets are consumed; where the file system cannot, it goes with the file.
    if (size > 0) {
      ::fallocate(files_[location.file].fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(location.offset), static_cast<off_t>(size));
    }
  }

  std::string directory_;
  size_t& spilled_bytes_;
  size_t piece_elements_;
  std::vector<SpillFile> files_;
  std::vector<std::vector<Piece>> pieces_;
  std::vector<OpenPiece> open_;
};

void SpillBucketStore::append(size_t bucket, const void* keys, const void* values, size_t count) {
  OpenPiece& open = open_[bucket];
  const void* sources[2] = {keys, values};
  for (size_t done = 0; done < count;) {
    const size_t items = std::min(count - done, piece_elements_ - open.count);
    for (int column : {BucketStore::keys, BucketStore::values}) {
      const size_t element = element_bytes_[column];
      if (element == 0) continue;
      if (!open.columns[column]) open.columns[column].reset(new char[piece_elements_ * element]);
      std::memcpy(open.columns[column].get() + open.count * element,
                  static_cast<const char*>(sources[column]) + done * element, items * element);
    }
    open.count += items;
    done += items;
    if (open.count == piece_elements_) seal(bucket);
  }
  counts_[bucket] += count;
}

void SpillBucketStore::add_partitioned(const size_t* offsets, const void* keys, const void* values) {
  const auto append_bucket = [&](size_t bucket) {
    const size_t first = offsets[bucket];
    append(bucket, static_cast<const char*>(keys) + first * element_bytes_[BucketStore::keys],
           values ? static_cast<const char*>(values) + first * element_bytes_[BucketStore::values] : nullptr,
           offsets[bucket + 1] - first);
  };
  // Buckets share nothing while appending (each write takes a spill file of its own), so large chunks spread them
  // over the threads.
  const size_t bytes = offsets[buckets()] * (element_bytes_[BucketStore::keys] + element_bytes_[BucketStore::values]);
  parallel_for(buckets(), bytes >= (size_t(8) << 20) ? threads_ : 1, append_bucket);
}

void SpillBucketStore::seal(size_t bucket) {
  OpenPiece& open = open_[bucket];
  if (open.count == 0) return;
  Piece piece;
  piece.first = pieces_[bucket].empty() ? 0 : pieces_[bucket].back().first + pieces_[bucket].back().count;
  piece.count = open.count;
  for (int column : {BucketStore::keys, BucketStore::values}) {
    const size_t element = element_bytes_[column];
    if (element > 0) piece.columns[column] = store(bucket, open.columns[column], open.count * element);
  }
  pieces_[bucket].push_back(std::move(piece));
  open.count = 0;
}

void SpillBucketStore::finish_appending() {
  for (size_t bucket = 0; bucket < open_.size(); ++bucket) {
    seal(bucket);
    for (auto& buffer : open_[bucket].columns) buffer.reset();
  }
}

void SpillBucketStore::read(size_t bucket, Column column, size_t first, size_t count, void* destination) {
  if (first + count > counts_[bucket] || open_[bucket].count > 0) {
    throw std::logic_error("BucketStore::read past the end of a bucket, or before finish_appending");
  }
  std::vector<Piece>& pieces = pieces_[bucket];
  const size_t element = element_bytes_[column];
  // The first piece that ends after `first`.
  auto piece = std::upper_bound(pieces.begin(), pieces.end(), first,
                                [](size_t index, const Piece& p) { return index < p.first + p.count; });
  // The ranges of the pieces to copy, then copied (by several threads when large); pieces wholly read go.
  struct Copy {
    Piece* piece;
    size_t from;  // within the piece
    size_t to;
    char* out;
  };
  std::vector<Copy> copies;
  char* out = static_cast<char*>(destination);
  const size_t end = first + count;
  for (; piece != pieces.end() && piece->first < end; ++piece) {
    const size_t from = std::max(first, piece->first);
    const size_t to = std::min(end, piece->first + piece->count);
    copies.push_back({&*piece, from - piece->first, to - piece->first, out});
    out += (to - from) * element;
  }
  parallel_for(copies.size(), count * element >= (size_t(8) << 20) ? threads_ : 1, [&](size_t i) {
    const Copy& copy = copies[i];
    load(copy.piece->columns[column], copy.from * element, (copy.to - copy.from) * element, copy.out);
    if (copy.to == copy.piece->count) drop(copy.piece->columns[column], copy.piece->count * element);
  });
}

void SpillBucketStore::release(size_t bucket) {
  for (Piece& piece : pieces_[bucket]) {
    for (int column : {BucketStore::keys, BucketStore::values}) {
      drop(piece.columns[column], piece.count * element_bytes_[column]);
    }
  }
  pieces_[bucket].clear();
  pieces_[bucket].shrink_to_fit();
}

/// Buckets in host memory: the partitioned chunks, kept whole.
class ChunkBucketStore final : public BucketStore {
 public:
  using BucketStore::BucketStore;

  void add_partitioned(const size_t* offsets, const void* keys, const void* values) override {
    const size_t count = offsets[buckets()];
    for (size_t b = 0; b < buckets(); ++b) counts_[b] += offsets[b + 1] - offsets[b];
    if (count == 0) return;
    Chunk chunk;
    chunk.offsets.assign(offsets, offsets + buckets() + 1);
    // The first offset that reaches the end closes the last bucket with elements.
    chunk.last_bucket = static_cast<size_t>(std::lower_bound(offsets, offsets + buckets() + 1, count) - offsets) - 1;
    const void* sources[2] = {keys, values};
    for (int column : {BucketStore::keys, BucketStore::values}) {
      const size_t bytes = count * element_bytes_[column];
      if (bytes == 0) continue;
      chunk.columns[column] = std::make_unique<HugePageMemory>(bytes);
      parallel_copy(chunk.columns[column]->data(), sources[column], bytes, threads_);
      chunk.bytes += bytes;
    }
    resident_bytes_ += chunk.bytes;
    chunks_.push_back(std::move(chunk));
  }

  void finish_appending() override {}

  void read(size_t bucket, Column column, size_t first, size_t count, void* destination) override {
    if (first + count > counts_[bucket]) throw std::logic_error("BucketStore::read past the end of a bucket");
    // The bucket is its slice of every chunk, in chunk order: copy the slices that overlap [first, first + count).
    struct Copy {
      const char* from;
      size_t bytes;
      char* to;
    };
    std::vector<Copy> copies;
    const size_t element = element_bytes_[column];
    char* out = static_cast<char*>(destination);
    size_t position = 0;  // of the current chunk's slice within the bucket
    const size_t end = first + count;
    for (const Chunk& chunk : chunks_) {
      if (position >= end) break;
      const size_t slice = chunk.offsets[bucket + 1] - chunk.offsets[bucket];
      const size_t from = std::max(first, position);
      const size_t to = std::min(end, position + slice);
      if (from < to) {
        const char* base = chunk.columns[column]->data() + chunk.offsets[bucket] * element;
        copies.push_back({base + (from - position) * element, (to - from) * element, out});
        out += (to - from) * element;
      }
      position += slice;
    }
    parallel_for(copies.size(), count * element >= (size_t(8) << 20) ? threads_ : 1,
                 [&](size_t i) { std::memcpy(copies[i].to, copies[i].from, copies[i].bytes); });
  }

  void release(size_t bucket) override {
    // Buckets are released in order: a chunk whose last bucket is gone is no longer needed.
    chunks_.erase(std::remove_if(chunks_.begin(), chunks_.end(),
                                 [&](const Chunk& chunk) {
                                   if (chunk.last_bucket > bucket) return false;
                                   resident_bytes_ -= chunk.bytes;
                                   return true;
                                 }),
                  chunks_.end());
  }

  size_t resident_bytes() const override { return resident_bytes_; }

 private:
  struct Chunk {
    std::vector<size_t> offsets;
    size_t last_bucket = 0;  // the last bucket with elements in this chunk
    size_t bytes = 0;        // of both columns
    std::unique_ptr<HugePageMemory> columns[2];
  };

  std::vector<Chunk> chunks_;
  size_t resident_bytes_ = 0;
};

}  // namespace

std::unique_ptr<BucketStore> make_host_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                    unsigned threads) {
  return std::make_unique<ChunkBucketStore>(buckets, key_bytes, value_bytes, threads);
}

std::unique_ptr<BucketStore> make_spill_bucket_store(size_t buckets, size_t key_bytes, size_t value_bytes,
                                                     size_t piece_elements, unsigned threads,
                                                     const std::string& directory, size_t& spilled_bytes) {
  return std::make_unique<SpillBucketStore>(buckets, key_bytes, value_bytes, piece_elements, threads, directory,
                                            spilled_bytes);
}

void check_spill_directory(const std::string& directory) {
  const int fd = create_spill_file(directory);
  if (fd < 0) throw_system_error(fmt::format("--tmpdir: cannot create a spill file in '{}'", directory));
  ::close(fd);
}

}  // namespace radix_sort
