#pragma once
// Reading an input (a regular file with pread where asked, a stream whole into memory) and writing an output atomically:
// into a temporary file beside the target, renamed over it only once complete. The temporary file is removed also
// when SIGINT, SIGTERM, SIGHUP or SIGPIPE ends the program.

#include <cstddef>
#include <string>
#include <string_view>

namespace radix_sort {

/// An input file. A regular file is read where asked, with pread (not mapped: a file that shrinks while it is read
/// is then an error, never a SIGBUS); stdin, pipes, devices and files whose size reads as 0 though they have content
/// (those in /proc and /sys) are read whole into memory when opened, as streams.
/// Example:
///   InputFile file = InputFile::open("keys.bin");
///   file.read(0, file.size(), buffer, threads);
class InputFile {
 public:
  /// No limit on what a stream may hold in memory.
  static constexpr size_t unlimited = ~size_t(0);

  /// Opens `path` ("-": stdin) and reads its head. A stream is read into memory now, and is an error past
  /// `max_stream_bytes` (`limit_name` then says which limit, e.g. "--host-memory 2.0 GiB", and how to raise it).
  /// Throws AppError naming the file and the reason (missing, unreadable, a directory, too large a stream).
  static InputFile open(const std::string& path, size_t max_stream_bytes = unlimited,
                        const std::string& limit_name = "");

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  /// The size of the file when it was opened (of a stream: all it held).
  size_t size() const { return size_; }
  /// The first bytes of the file, read when it was opened: up to head_bytes (all of a stream), enough to detect the
  /// format and to hold any .npy header this program reads (formats' max_npy_header_bytes).
  std::string_view head() const { return in_memory() ? std::string_view(stream_) : std::string_view(head_); }
  static constexpr size_t head_bytes = size_t(1) << 20;
  /// Copies bytes [offset, offset + bytes) into `destination`, a large range on up to `threads` threads. Throws
  /// AppError "'<name>' shrank while being read" where the file has lost them since it was opened, or for a read error.
  void read(size_t offset, size_t bytes, void* destination, unsigned threads = 1) const;
  /// True for a stream, held in memory; false for a regular file, read where asked.
  bool in_memory() const { return fd_ < 0; }
  /// The bytes of a stream, held in memory (empty for a regular file).
  std::string_view stream_bytes() const { return stream_; }
  /// The name to use in messages ("stdin" for "-").
  const std::string& name() const { return name_; }
  /// Asks the kernel to read a regular file into the page cache in the background, so that reading it later waits
  /// less (run it while waiting for something else). Does nothing for streams.
  void prefetch() const;

 private:
  InputFile() = default;
  std::string name_;
  int fd_ = -1;  // a regular file
  size_t size_ = 0;
  std::string stream_;  // a stream's bytes
  std::string head_;    // a regular file's first bytes; a stream's are stream_
};

/// An output that appears under its name only when complete: until then it is an unnamed file in the target's directory
/// (O_TMPFILE; or, where the file system has none, a hidden temporary file that errors and signals remove). "-" writes
/// to stdout directly, and so does a target that exists and is not a regular file (a FIFO, a device, a terminal). A
/// symbolic link is written through: the file it names is replaced, the link stays.
/// Example:
///   AtomicOutput out("sorted.bin");
///   out.write(data, bytes);
///   out.commit();  // without this, the destructor removes the temporary file
/// Large outputs of known (or bounded) size can instead be mapped and filled by several threads at once:
///   if (out.map(bytes, threads)) { parallel_copy(out.mapped(), data, bytes, threads); }
///   out.commit();
class AtomicOutput {
 public:
  /// Creates the temporary file (or opens a FIFO or device) now, so an unwritable target fails before any work.
  /// Throws AppError.
  explicit AtomicOutput(std::string path);
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  ~AtomicOutput();

  /// Appends `bytes` bytes; a large block to a regular file is written by up to `threads` threads at once (page-cache
  /// copies scale with threads). Throws AppError (e.g. disk full).
  void write(const void* data, size_t bytes, unsigned threads = 1);
  /// Appends text.
  void write(std::string_view text) { write(text.data(), text.size()); }

  /// Reserves `capacity` bytes of disk for the temporary file (so a full disk fails here, with a message, and never
  /// while filling), maps them writable and faults the pages in on up to `threads` threads, so that filling them
  /// later is a plain memory copy. Returns false, changing nothing, where mapping does not apply: stdout, an empty
  /// output, a FIFO or device, something already written, a file system without fallocate(), or a capacity past the
  /// file-size limit (text's capacity is only a bound); use write() then.
  /// Throws AppError.
  /// Safe to call on another thread while the caller does other work, as long as nothing else touches this output.
  bool map(size_t capacity, unsigned threads);
  /// The mapped bytes (after map() returned true); the file's content is what is stored there.
  char* mapped() const { return mapping_; }
  /// The mapped size.
  size_t mapped_bytes() const { return mapped_bytes_; }
  /// Sets the size of a mapped output to `bytes` (at most the mapped size), e.g. once the text printed is known.
  void set_size(size_t bytes);

  /// Closes the temporary file and renames it over the target (closes a FIFO or device). Throws AppError.
  void commit();
  /// Unmaps a mapped output (the destructor does it too); after commit() its content stays in the file.
  void release() noexcept;
  /// The target's name, for messages.
  const std::string& path() const { return path_; }

 private:
  void discard() noexcept;
  void unmap() noexcept;
  /// Gives the unnamed temporary file a name beside the target, ready to be renamed over it.
  void link_temporary_file();
  std::string path_;
  std::string target_path_;  // path_ with symbolic links resolved: what the temporary file replaces; empty for
                             // stdout, a FIFO or a device
  std::string temporary_prefix_;
  std::string temporary_path_;  // empty while the temporary file has no name
  int signal_cleanup_slot_ = -1;  // where the temporary file is listed for removal should a signal end the program
  int fd_ = -1;
  bool committed_ = false;
  size_t written_ = 0;       // bytes appended by write()
  char* mapping_ = nullptr;  // after map()
  size_t mapped_bytes_ = 0;
  size_t size_ = 0;  // the final size of a mapped output
};

/// True for a path naming stdin or stdout.
inline bool is_standard_stream(std::string_view path) { return path == "-"; }

/// True where `a` and `b` name the same file, however spelled ("out", "./out", a link to it): the same device and
/// inode where both exist, else the same real directory and name. "-" is the same only as "-".
bool same_file(const std::string& a, const std::string& b);

}  // namespace radix_sort
