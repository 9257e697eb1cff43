// Host-only tests of radix_sort's command line and of its atomic file output.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "file_io.hpp"
#include "options.hpp"

namespace radix_sort {
namespace {

std::optional<Options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "radix_sort");
  return parse_options(static_cast<int>(args.size()), args.data());
}

std::string usage_error(std::vector<const char*> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(Cli, Defaults) {
  const Options options = *parse({"in.bin"});
  EXPECT_EQ(options.input, "in.bin");
  EXPECT_EQ(options.output, "-");
  EXPECT_EQ(options.format, Format::Auto);
  EXPECT_EQ(options.values_format, Format::Auto);
  EXPECT_FALSE(options.type);
  EXPECT_FALSE(options.descending);
  EXPECT_FALSE(options.check);
  EXPECT_FALSE(options.argsort);
  EXPECT_FALSE(options.stats);
  EXPECT_EQ(options.backend, Backend::Auto);
  EXPECT_GE(options.threads, 1u);
}

TEST(Cli, EveryOption) {
  const Options options =
      *parse({"keys.bin", "-o", "out.bin", "--format", "bin", "--type", "u16", "-r", "--stats", "--values", "v.bin",
              "--values-out", "vo.bin", "--values-type", "f64", "--values-format", "text", "--backend", "cpu",
              "--threads", "3"});
  EXPECT_EQ(options.output, "out.bin");
  EXPECT_EQ(options.format, Format::Binary);
  EXPECT_EQ(options.type, KeyType::U16);
  EXPECT_TRUE(options.descending);
  EXPECT_TRUE(options.stats);
  EXPECT_EQ(options.values_input, "v.bin");
  EXPECT_EQ(options.values_output, "vo.bin");
  EXPECT_EQ(options.values_type, KeyType::F64);
  EXPECT_EQ(options.values_format, Format::Text);
  EXPECT_EQ(options.backend, Backend::Cpu);
  EXPECT_EQ(options.threads, 3u);

  EXPECT_TRUE(parse({"-", "--check", "-t", "f32"})->check);
  EXPECT_TRUE(parse({"k.npy", "--argsort", "--backend", "gpu"})->argsort);
  EXPECT_EQ(parse({"k.txt", "--descending", "--format", "text"})->format, Format::Text);
  EXPECT_EQ(parse({"k.npy", "-f", "npy", "-o", "k.npy"})->output, "k.npy");
}

TEST(Cli, TopTakesACountOfKeysAndKeysAlone) {
  EXPECT_FALSE(parse({"a"})->top);
  EXPECT_EQ(parse({"a", "--top", "100"})->top, size_t{100});
  EXPECT_EQ(parse({"a", "--top", "0", "-r"})->top, size_t{0});
  EXPECT_EQ(parse({"a", "--top", "18446744073709551"})->top, size_t{18446744073709551});
  for (const char* bad : {"", "-1", "+5", "1e3", "10k", "abc", "12345678901234567890"}) {
    EXPECT_EQ(usage_error({"a", "--top", bad}), std::string("--top '") + bad + "' is not a count of keys such as 100")
        << bad;
  }
  const std::string alone = "--top writes keys alone: it takes no --check, --argsort or --values";
  EXPECT_EQ(usage_error({"a", "--top", "5", "--check"}), alone);
  EXPECT_EQ(usage_error({"a", "--top", "5", "--argsort"}), alone);
  EXPECT_EQ(usage_error({"a", "--top", "5", "--values", "v", "--values-out", "w"}), alone);
}

TEST(Cli, HelpParsesToNothing) {
  testing::internal::CaptureStdout();
  EXPECT_FALSE(parse({"--help"}));
  EXPECT_NE(testing::internal::GetCapturedStdout().find("--argsort"), std::string::npos);
}

TEST(Cli, RejectsWithOneLine) {
  EXPECT_NE(usage_error({}).find("input is required"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--type", "i128"}).find("i128"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--format", "csv"}).find("csv"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--values-format", "csv"}).find("csv"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--backend", "tpu"}).find("tpu"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--threads", "0"}).find("threads"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--bogus"}).find("bogus"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--values", "v"}).find("go together"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--values-out", "v"}).find("go together"), std::string::npos);
  EXPECT_NE(usage_error({"a", "--values", "v", "--values-out", "w", "--argsort"}).find("exclude"), std::string::npos);
  EXPECT_NE(usage_error({"a", "-c", "-o", "x"}).find("--check"), std::string::npos);
  EXPECT_NE(usage_error({"a", "-o", "x", "--values", "v", "--values-out", "x"}).find("same file"), std::string::npos);
  EXPECT_NE(usage_error({"a", "-o", "same.out", "--values", "v", "--values-out", "./same.out"}).find("same file"),
            std::string::npos);
  EXPECT_NE(usage_error({"-", "--values", "-", "--values-out", "w", "-o", "o"}).find("stdin"), std::string::npos);
  for (const auto& args : {std::vector<const char*>{}, {"a", "--bogus"}}) {
    EXPECT_EQ(usage_error(args).find('\n'), std::string::npos);
  }
}

TEST(Cli, AnEmptyPathOrSizeIsAnError) {
  EXPECT_EQ(usage_error({"a", "-o", ""}), "--output is empty: name a file, or '-' for stdout");
  EXPECT_EQ(usage_error({"a", "--output", ""}), "--output is empty: name a file, or '-' for stdout");
  EXPECT_EQ(usage_error({"a", "--tmpdir", ""}), "--tmpdir is empty: name a directory");
  EXPECT_EQ(usage_error({"a", "--gpu-memory", ""}), "--gpu-memory is empty: give a size such as 512MiB or 6GiB");
  EXPECT_EQ(usage_error({"a", "--host-memory", ""}), "--host-memory is empty: give a size such as 512MiB or 6GiB");
  EXPECT_EQ(usage_error({"a", "--values", "", "--values-out", ""}), "--values is empty: name a file");
  EXPECT_EQ(usage_error({"a", "--values", "v", "--values-out", ""}), "--values-out is empty: name a file");
  EXPECT_EQ(usage_error({"a", "--host-memory", "0"}), "--host-memory '0' must be greater than zero");
}

class AtomicOutputTest : public testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("radix_sort_io_" + std::to_string(::getpid()) + "_" +
                                                  testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  size_t entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(directory_), {}));
  }
  std::string path(const char* name) const { return (directory_ / name).string(); }

  std::filesystem::path directory_;
};

TEST_F(AtomicOutputTest, AppearsOnlyOnCommit) {
  {
    AtomicOutput output(path("out.bin"));
    output.write("abc");
    EXPECT_FALSE(std::filesystem::exists(path("out.bin")));
    output.commit();
  }
  std::ifstream in(path("out.bin"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "abc");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicOutputTest, LeavesNothingWithoutCommit) {
  {
    AtomicOutput output(path("out.bin"));
    output.write("partial");
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(AtomicOutputTest, MappedOutputIsFilledInPlaceAndCutToItsSize) {
  const size_t capacity = size_t(5) << 20;
  {
    AtomicOutput output(path("mapped.bin"));
    if (!output.map(capacity, 3)) GTEST_SKIP() << "this file system has no fallocate()";
    ASSERT_EQ(output.mapped_bytes(), capacity);
    EXPECT_FALSE(std::filesystem::exists(path("mapped.bin")));
    for (size_t i = 0; i < capacity; ++i) output.mapped()[i] = static_cast<char>('a' + i % 26);
    output.set_size(capacity - 7);
    output.commit();
  }
  EXPECT_EQ(std::filesystem::file_size(path("mapped.bin")), capacity - 7);
  std::ifstream in(path("mapped.bin"), std::ios::binary);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  ASSERT_EQ(text.size(), capacity - 7);
  EXPECT_EQ(text.substr(0, 3), "abc");
  EXPECT_EQ(text.back(), static_cast<char>('a' + (capacity - 8) % 26));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicOutputTest, MappedOutputLeavesNothingWithoutCommit) {
  {
    AtomicOutput output(path("mapped.bin"));
    if (!output.map(size_t(1) << 20, 2)) GTEST_SKIP() << "this file system has no fallocate()";
    output.mapped()[0] = 'x';
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(AtomicOutputTest, MapsOnlyWhatItCanFillInPlace) {
  AtomicOutput output(path("written.bin"));
  EXPECT_FALSE(output.map(0, 2));
  output.write("abc");
  EXPECT_FALSE(output.map(100, 2));  // already appended to
  AtomicOutput standard_output("-");
  EXPECT_FALSE(standard_output.map(100, 2));
}

TEST_F(AtomicOutputTest, ReplacesAnExistingFileAndKeepsItsMode) {
  { std::ofstream(path("same.bin")) << "old"; }
  ::chmod(path("same.bin").c_str(), 0640);
  {
    AtomicOutput output(path("same.bin"));
    output.write("new");
    output.commit();
  }
  std::ifstream in(path("same.bin"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  struct stat info {};
  ASSERT_EQ(::stat(path("same.bin").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST_F(AtomicOutputTest, WritesIntoAFifoInsteadOfReplacingIt) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  // Open the reading end first (without waiting for a writer), so the output's open does not wait either.
  const int reader = ::open(path("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    AtomicOutput output(path("fifo"));
    EXPECT_FALSE(output.map(size_t(1) << 20, 2));
    output.write("through the pipe");
    output.commit();
  }
  char received[64] = {};
  const ssize_t got = ::read(reader, received, sizeof received);
  ::close(reader);
  EXPECT_EQ(std::string(received, static_cast<size_t>(std::max<ssize_t>(got, 0))), "through the pipe");
  struct stat info {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicOutputTest, WritesIntoADeviceInsteadOfReplacingIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node takes root";
  ASSERT_EQ(::mknod(path("null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
  {
    AtomicOutput output(path("null"));
    output.write("discarded");
    output.commit();
  }
  struct stat info {};
  ASSERT_EQ(::lstat(path("null").c_str(), &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicOutputTest, WritesThroughASymbolicLink) {
  std::filesystem::create_directories(path("elsewhere"));
  { std::ofstream(path("elsewhere/real.bin")) << "old"; }
  std::filesystem::create_symlink("elsewhere/real.bin", path("link.bin"));
  {
    AtomicOutput output(path("link.bin"));
    output.write("new");
    output.commit();
  }
  EXPECT_TRUE(std::filesystem::is_symlink(path("link.bin")));
  std::ifstream in(path("elsewhere/real.bin"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new");
  EXPECT_EQ(entries(), 2u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(path("elsewhere")), {}), 1);

  std::filesystem::create_symlink("missing.bin", path("dangling.bin"));
  EXPECT_THROW(AtomicOutput(path("dangling.bin")), AppError);
  EXPECT_TRUE(std::filesystem::is_symlink(path("dangling.bin")));
}

TEST_F(AtomicOutputTest, ASignalThatEndsTheProgramRemovesTheTemporaryFile) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      AtomicOutput output(path("out.bin"));
      output.write("partial");
      ::raise(signal_number);
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << "signal " << signal_number;
    EXPECT_EQ(entries(), 0u) << "signal " << signal_number;
  }
}

TEST_F(AtomicOutputTest, FailsEarlyForAnUnwritableTarget) {
  EXPECT_THROW(AtomicOutput(path("missing/dir/out.bin")), AppError);
  EXPECT_THROW(AtomicOutput(directory_.string()), AppError);
}

TEST_F(AtomicOutputTest, SameFileSeesThroughSpellingsAndLinks) {
  const std::string spelled_apart = directory_.string() + "/./sub/../out.bin";
  std::filesystem::create_directories(path("sub"));
  EXPECT_TRUE(same_file(path("out.bin"), spelled_apart));  // neither exists yet
  EXPECT_FALSE(same_file(path("out.bin"), path("other.bin")));
  { std::ofstream(path("out.bin")) << "x"; }
  EXPECT_TRUE(same_file(path("out.bin"), spelled_apart));
  EXPECT_FALSE(same_file(path("out.bin"), path("other.bin")));
  std::filesystem::create_symlink("out.bin", path("link.bin"));
  std::filesystem::create_hard_link(path("out.bin"), path("hard.bin"));
  EXPECT_TRUE(same_file(path("link.bin"), path("out.bin")));
  EXPECT_TRUE(same_file(path("hard.bin"), path("out.bin")));
  EXPECT_TRUE(same_file("-", "-"));
  EXPECT_FALSE(same_file("-", path("out.bin")));
}

TEST_F(AtomicOutputTest, InputFileReportsMissingFilesAndDirectories) {
  EXPECT_THROW(InputFile::open(path("missing.bin")), AppError);
  EXPECT_THROW(InputFile::open(directory_.string()), AppError);
  { std::ofstream(path("empty.bin")); }
  EXPECT_EQ(InputFile::open(path("empty.bin")).size(), 0u);
  { std::ofstream(path("data.bin")) << "0123"; }
  InputFile moved = InputFile::open(path("data.bin"));
  InputFile file = std::move(moved);
  EXPECT_EQ(file.size(), 4u);
  EXPECT_EQ(file.head(), "0123");
  EXPECT_FALSE(file.in_memory());
  char middle[3] = {};
  file.read(1, 2, middle);
  EXPECT_EQ(std::string(middle), "12");
}

TEST_F(AtomicOutputTest, InputFileThatShrinksAfterOpeningIsAnErrorNotASignal) {
  // The size is taken when the file is opened; reading past where it now ends must throw, not raise SIGBUS.
  const std::string big(size_t(12) << 20, '\x5a');
  { std::ofstream(path("in.bin"), std::ios::binary) << big; }
  const InputFile file = InputFile::open(path("in.bin"));
  ASSERT_EQ(file.size(), big.size());
  ::truncate(path("in.bin").c_str(), 4096);
  std::string buffer(big.size(), '\0');
  try {
    file.read(0, big.size(), buffer.data(), 4);
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("'" + path("in.bin") + "' shrank while being read: it had 12582912 bytes",
                                              0),
              0u)
        << error.what();
  }
}

TEST_F(AtomicOutputTest, InputFileReadsWhatHasNoSizeAsAStream) {
  // Files in /proc say their size is 0, yet they have content: they are read as streams, as stdin is.
  const char* proc_file = "/proc/sys/kernel/pid_max";
  if (!std::filesystem::exists(proc_file)) GTEST_SKIP() << "no " << proc_file;
  std::ifstream in(proc_file);
  const std::string content(std::istreambuf_iterator<char>(in), {});
  ASSERT_FALSE(content.empty());
  const InputFile file = InputFile::open(proc_file);
  EXPECT_TRUE(file.in_memory());
  EXPECT_EQ(file.size(), content.size());
  EXPECT_EQ(file.head(), content);
}

TEST_F(AtomicOutputTest, AnEndlessStreamStopsAtItsLimit) {
  try {
    InputFile::open("/dev/zero", size_t(3) << 20, "the limit");
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_EQ(std::string(error.what()),
              "'/dev/zero' is a stream held in memory, and it is larger than the limit");
  }
  // A stream that ends exactly at the limit is read whole.
  { std::ofstream(path("fifo_source")) << std::string(1000, '7'); }
  const int fd = ::open(path("fifo_source").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const int saved_stdin = ::dup(STDIN_FILENO);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  const InputFile file = InputFile::open("-", 1000, "the limit");
  ::dup2(saved_stdin, STDIN_FILENO);
  ::close(saved_stdin);
  EXPECT_EQ(file.size(), 1000u);
}

}  // namespace
}  // namespace radix_sort
