#include "file_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>

#include "errors.hpp"
#include "host_memory.hpp"
#include "parallel.hpp"

namespace radix_sort {

void throw_system_error(const std::string& what) {
  const int error = errno;
  std::string message = fmt::format("{}: {}", what, std::strerror(error));
  // "File too large" alone does not say which limit was reached; the likely one is the process's own.
  struct rlimit limit {};
  if (error == EFBIG && ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    message += fmt::format(" (the file-size limit, ulimit -f, is {} bytes)", limit.rlim_cur);
  }
  throw AppError(message);
}

namespace {

/// Reads everything from `fd` in large blocks (stdin, pipes, devices, files in /proc): an error past `limit` bytes,
/// so that an endless stream (/dev/zero, `yes`) stops at the memory budget rather than at the machine's end.
std::string read_all(int fd, const std::string& name, size_t limit, const std::string& limit_name) {
  constexpr size_t max_block = size_t(16) << 20;
  // Reads start small and grow: some files refuse large reads (a /proc/sys file answers ENOMEM to 16 MiB).
  size_t block = size_t(64) << 10;
  std::string data;
  size_t used = 0;
  for (;;) {
    // One byte past the limit tells a stream that ends at it from one that goes on.
    const size_t room = limit - std::min(limit, used);
    const size_t want = room >= block ? block : room + 1;
    if (data.size() < used + want) data.resize(std::max(used + want, std::min(2 * data.size(), used + max_block)));
    const ssize_t got = ::read(fd, data.data() + used, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_system_error(fmt::format("cannot read '{}'", name));
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
    block = std::min(2 * block, max_block);
    if (used > limit) {
      throw AppError(fmt::format("'{}' is a stream held in memory, and it is larger than {}", name,
                                 limit_name.empty() ? fmt::format("{} bytes", limit) : limit_name));
    }
  }
  data.resize(used);
  data.shrink_to_fit();
  return data;
}

/// The temporary files that exist now, for a signal handler to remove: fixed slots, as a handler may neither allocate
/// nor lock. A slot's state says whether its path may be read.
constexpr size_t max_temporary_files = 8;
enum SlotState : int { slot_free, slot_filling, slot_ready };
struct TemporaryFileSlot {
  std::atomic<int> state{slot_free};
  char path[PATH_MAX];
};
TemporaryFileSlot temporary_files[max_temporary_files];

/// The signals that end the program by default and that a user or a closed pipe commonly sends.
constexpr int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void remove_temporary_files_and_reraise(int signal_number) {
  for (TemporaryFileSlot& slot : temporary_files) {
    if (slot.state.load() == slot_ready) ::unlink(slot.path);
  }
  // SA_RESETHAND has restored the default action, so the signal raised again ends the program as it would have.
  ::raise(signal_number);
}

/// Installs the handler once, for the signals not ignored (nohup's SIGHUP stays ignored).
void install_cleanup_handlers() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    for (const int signal_number : cleanup_signals) {
      struct sigaction current {};
      if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
      struct sigaction action {};
      action.sa_handler = remove_temporary_files_and_reraise;
      action.sa_flags = SA_RESETHAND;
      sigemptyset(&action.sa_mask);
      ::sigaction(signal_number, &action, nullptr);
    }
  });
}

/// Lists `path` for removal should a signal end the program; returns its slot, or -1 where the path is too long or
/// all slots are taken (the file is then only removed on a normal exit).
int register_temporary_file(const std::string& path) {
  install_cleanup_handlers();
  if (path.size() >= PATH_MAX) return -1;
  for (size_t i = 0; i < max_temporary_files; ++i) {
    int expected = slot_free;
    if (!temporary_files[i].state.compare_exchange_strong(expected, slot_filling)) continue;
    std::memcpy(temporary_files[i].path, path.c_str(), path.size() + 1);
    temporary_files[i].state.store(slot_ready);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temporary_file(int slot) {
  if (slot >= 0) temporary_files[slot].state.store(slot_free);
}

/// Closes a file descriptor when leaving scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

InputFile InputFile::open(const std::string& path, size_t max_stream_bytes, const std::string& limit_name) {
  InputFile file;
  if (is_standard_stream(path)) {
    file.name_ = "stdin";
    file.stream_ = read_all(STDIN_FILENO, file.name_, max_stream_bytes, limit_name);
    file.size_ = file.stream_.size();
    return file;
  }
  file.name_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_system_error(fmt::format("cannot open '{}'", path));
  FdCloser closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw_system_error(fmt::format("cannot stat '{}'", path));
  if (S_ISDIR(info.st_mode)) throw AppError(fmt::format("cannot read '{}': it is a directory", path));
  // A size of 0 says nothing for files that the kernel makes up as they are read (/proc, /sys): read those as
  // streams too. A file that is really empty reads as nothing either way.
  if (!S_ISREG(info.st_mode) || info.st_size == 0) {
    file.stream_ = read_all(fd, path, max_stream_bytes, limit_name);
    file.size_ = file.stream_.size();
    return file;
  }
  file.fd_ = std::exchange(closer.fd, -1);
  file.size_ = static_cast<size_t>(info.st_size);
  file.head_.resize(std::min(file.size_, head_bytes));
  file.read(0, file.head_.size(), file.head_.data());
  return file;
}

void InputFile::read(size_t offset, size_t bytes, void* destination, unsigned threads) const {
  if (offset > size_ || bytes > size_ - offset) throw std::logic_error("InputFile::read past the end");
  if (fd_ < 0) {
    if (bytes > 0) std::memcpy(destination, stream_.data() + offset, bytes);
    return;
  }
  // Large reads run on several threads: copies out of the page cache scale with threads.
  parallel_ranges(bytes, threads, [&](size_t begin, size_t end) {
    for (size_t at = begin; at < end;) {
      const ssize_t got =
          ::pread(fd_, static_cast<char*>(destination) + at, end - at, static_cast<off_t>(offset + at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw_system_error(fmt::format("cannot read '{}'", name_));
      if (got == 0) {
        throw AppError(fmt::format("'{}' shrank while being read: it had {} bytes, and ends at {}", name_, size_,
                                   offset + at));
      }
      at += static_cast<size_t>(got);
    }
  });
}

void InputFile::prefetch() const {
  if (fd_ >= 0) ::posix_fadvise(fd_, 0, static_cast<off_t>(size_), POSIX_FADV_WILLNEED);
}

InputFile::InputFile(InputFile&& other) noexcept { *this = std::move(other); }

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  std::swap(name_, other.name_);
  std::swap(fd_, other.fd_);
  std::swap(size_, other.size_);
  std::swap(stream_, other.stream_);
  std::swap(head_, other.head_);
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  if (is_standard_stream(path_)) {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat target {};
  const bool target_exists = ::stat(path_.c_str(), &target) == 0;
  if (target_exists && S_ISDIR(target.st_mode))
    throw AppError(fmt::format("cannot write '{}': it is a directory", path_));
  if (target_exists && !S_ISREG(target.st_mode)) {
    // A FIFO, a device or a terminal must stay what it is (a reader may be waiting on it): write into it, as
    // sort -o does, rather than rename a file over it.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) throw_system_error(fmt::format("cannot write '{}'", path_));
    return;
  }

  // Write through a symbolic link, as sort -o does: the temporary file goes beside the file the link names, and
  // replaces that file, leaving the link as it is.
  std::string target_path = path_;
  if (target_exists) {
    char* resolved = ::realpath(path_.c_str(), nullptr);
    if (!resolved) throw_system_error(fmt::format("cannot write '{}'", path_));
    target_path = resolved;
    std::free(resolved);
  } else if (struct stat link {}; ::lstat(path_.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    throw AppError(fmt::format("cannot write '{}': it is a symbolic link to a missing file", path_));
  }

  const size_t slash = target_path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : target_path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_path : target_path.substr(slash + 1);
  temporary_prefix_ = directory + "." + base + ".radix_sort.";
  // Unnamed until complete (O_TMPFILE), so that nothing is left behind even by SIGKILL; it gets its name at commit()
  // through /proc/self/fd. Where either is missing, a named temporary file that signals and errors remove.
  if (::access("/proc/self/fd", X_OK) == 0) {
    fd_ = ::open(directory.empty() ? "." : directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  }
  if (fd_ < 0) {
    std::string pattern = temporary_prefix_ + "XXXXXX";
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) throw_system_error(fmt::format("cannot write '{}'", path_));
    temporary_path_ = pattern;
    signal_cleanup_slot_ = register_temporary_file(temporary_path_);
  }
  target_path_ = std::move(target_path);
  // The temporary file is private; give it the target's mode, or what a plain creat() would.
  mode_t mode = 0;
  if (target_exists) {
    mode = target.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd_, mode) != 0) {
    discard();
    throw_system_error(fmt::format("cannot write '{}'", path_));
  }
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) discard();
  unmap();
}

void AtomicOutput::unmap() noexcept {
  if (mapping_) ::munmap(mapping_, mapped_bytes_);
  mapping_ = nullptr;
}

void AtomicOutput::discard() noexcept {
  unmap();
  if (fd_ >= 0 && fd_ != STDOUT_FILENO) ::close(fd_);
  target_path_.clear();
  fd_ = -1;
  if (temporary_path_.empty()) return;
  ::unlink(temporary_path_.c_str());
  unregister_temporary_file(std::exchange(signal_cleanup_slot_, -1));
  temporary_path_.clear();
}

void AtomicOutput::write(const void* data, size_t bytes, unsigned threads) {
  if (mapping_) throw std::logic_error("AtomicOutput::write after map");
  if (!target_path_.empty() && threads > 1 && bytes >= (size_t(16) << 20)) {
    // A regular file: each range at its own offset, then the file position past them for the next append.
    const size_t start = written_;
    parallel_ranges(bytes, threads, [&](size_t begin, size_t end) {
      for (size_t at = begin; at < end;) {
        const ssize_t done = ::pwrite(fd_, static_cast<const char*>(data) + at, end - at,
                                      static_cast<off_t>(start + at));
        if (done < 0 && errno == EINTR) continue;
        if (done < 0) throw_system_error(fmt::format("cannot write '{}'", path_));
        at += static_cast<size_t>(done);
      }
    });
    written_ += bytes;
    if (::lseek(fd_, static_cast<off_t>(written_), SEEK_SET) < 0) {
      throw_system_error(fmt::format("cannot write '{}'", path_));
    }
    return;
  }
  written_ += bytes;
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = ::write(fd_, cursor, bytes);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_system_error(fmt::format("cannot write '{}'", path_));
    }
    cursor += written;
    bytes -= static_cast<size_t>(written);
  }
}

bool AtomicOutput::map(size_t capacity, unsigned threads) {
  if (target_path_.empty() || capacity == 0 || written_ > 0 || mapping_) return false;
  // Reserving the blocks first means a full disk is an error here rather than a SIGBUS while filling the mapping.
  int status;
  while ((status = ::fallocate(fd_, 0, 0, static_cast<off_t>(capacity))) != 0 && errno == EINTR) {
  }
  if (status != 0) {
    // EFBIG: the capacity, only a bound for text, passes the file-size limit; appending fails only if the output does.
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL || errno == EFBIG) return false;
    throw_system_error(fmt::format("cannot write '{}'", path_));
  }
  void* mapping = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping == MAP_FAILED) {
    if (::ftruncate(fd_, 0) != 0) throw_system_error(fmt::format("cannot write '{}'", path_));
    return false;
  }
  mapping_ = static_cast<char*>(mapping);
  mapped_bytes_ = capacity;
  size_ = capacity;
  // Fault the pages in now, so filling them later is a plain copy: on half the threads, as this runs beside the
  // reading and the GPU's start-up, which need cores too.
  // The blocks are reserved and read as zeros, so fault_in's fallback (a zero stored in each page) changes nothing.
  fault_in(mapping_, capacity, std::max(threads / 2, 1u));
  return true;
}

void AtomicOutput::set_size(size_t bytes) {
  if (!mapping_ || bytes > mapped_bytes_) throw std::logic_error("AtomicOutput::set_size beyond the mapping");
  size_ = bytes;
}

void AtomicOutput::commit() {
  if (target_path_.empty()) {
    // Written directly: stdout stays open for others; a FIFO or device is closed, which reports late errors.
    if (fd_ != STDOUT_FILENO && ::close(std::exchange(fd_, -1)) != 0)
      throw_system_error(fmt::format("cannot write '{}'", path_));
    committed_ = true;
    return;
  }
  if (mapping_ && size_ != mapped_bytes_ && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    throw_system_error(fmt::format("cannot write '{}'", path_));
  if (temporary_path_.empty()) link_temporary_file();
  if (::close(std::exchange(fd_, -1)) != 0) throw_system_error(fmt::format("cannot write '{}'", path_));
  if (::rename(temporary_path_.c_str(), target_path_.c_str()) != 0)
    throw_system_error(fmt::format("cannot write '{}'", path_));
  unregister_temporary_file(std::exchange(signal_cleanup_slot_, -1));
  temporary_path_.clear();
  committed_ = true;
}

void AtomicOutput::release() noexcept { unmap(); }

void AtomicOutput::link_temporary_file() {
  // A hard link cannot replace a file, so the unnamed file gets a fresh temporary name first, then is renamed.
  const std::string descriptor = fmt::format("/proc/self/fd/{}", fd_);
  std::random_device random;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = fmt::format("{}{:08x}", temporary_prefix_, random());
    if (::linkat(AT_FDCWD, descriptor.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      temporary_path_ = std::move(name);
      signal_cleanup_slot_ = register_temporary_file(temporary_path_);
      return;
    }
    if (errno != EEXIST) throw_system_error(fmt::format("cannot write '{}'", path_));
  }
  throw_system_error(fmt::format("cannot write '{}'", path_));
}

namespace {

/// A path that does not exist, spelled canonically: its directory resolved (where it exists), then its name.
std::string canonical_missing_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char* resolved = ::realpath(directory.c_str(), nullptr);
  if (!resolved) return path;
  std::string canonical = std::string(resolved) + "/" + name;
  std::free(resolved);
  return canonical;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (is_standard_stream(a) || is_standard_stream(b)) return a == b;
  struct stat info_a {};
  struct stat info_b {};
  const bool a_exists = ::stat(a.c_str(), &info_a) == 0;
  const bool b_exists = ::stat(b.c_str(), &info_b) == 0;
  if (a_exists && b_exists) return info_a.st_dev == info_b.st_dev && info_a.st_ino == info_b.st_ino;
  if (a_exists != b_exists) return false;
  return canonical_missing_path(a) == canonical_missing_path(b);
}

}  // namespace radix_sort
