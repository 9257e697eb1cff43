#pragma once
// Running the built radix_sort in a scratch directory per test, and the helpers its end-to-end tests share.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.cuh"
#include "key_type.hpp"
#include "reference_sort.hpp"

#ifndef RADIX_SORT_BINARY
#error "RADIX_SORT_BINARY must name the radix_sort executable"
#endif

namespace radix_sort::test {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class K>
std::string as_bytes(const std::vector<K>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(K));
}

template <class K>
std::vector<K> from_bytes(std::string_view bytes) {
  std::vector<K> values(bytes.size() / sizeof(K));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(K));
  return values;
}

template <class K>
std::vector<K> random_keys(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<K> keys(count);
  for (auto& key : keys) {
    if constexpr (std::is_floating_point_v<K>) {
      key = static_cast<K>(static_cast<double>(static_cast<int32_t>(rng() % 2001) - 1000) / 8);
    } else {
      key = static_cast<K>(rng());
    }
  }
  if constexpr (std::is_floating_point_v<K>) {
    const K nan = std::numeric_limits<K>::quiet_NaN();
    const K specials[] = {
        K(-0.0), K(0.0), nan, -nan, std::numeric_limits<K>::infinity(), -std::numeric_limits<K>::infinity()};
    for (size_t i = 0; i < count; i += 5) keys[i] = specials[(i / 5) % std::size(specials)];
  }
  return keys;
}

/// A scratch directory per test, and running the program in it.
class RadixSortApp : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "gpu") PRIMS_REQUIRE_GPU();
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    directory_ = fs::temp_directory_path() / ("radix_sort_e2e_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path path(const std::string& name) const { return directory_ / name; }

  /// The shell command that runs `radix_sort <arguments> --backend <param>` in the scratch directory.
  std::string command(const std::string& arguments, bool with_backend = true) const {
    return "cd '" + directory_.string() + "' && exec '" RADIX_SORT_BINARY "' " + arguments +
           (with_backend ? std::string(" --backend ") + GetParam() : "") + " >stdout.txt 2>stderr.txt";
  }

  /// Runs `radix_sort <arguments> --backend <param>` (arguments are file names in the scratch directory).
  RunResult run(const std::string& arguments, bool with_backend = true) const {
    return finish(std::system(command(arguments, with_backend).c_str()));
  }

  /// Starts `radix_sort <arguments> --backend <param>` in a child process, with file sizes limited to
  /// `file_size_limit` bytes where non-zero; SIGXFSZ is left at its default, which ends a program that does not
  /// ignore it.
  pid_t start(const std::string& arguments, size_t file_size_limit = 0) const {
    const std::string shell_command = command(arguments);
    const pid_t child = ::fork();
    if (child == 0) {
      if (file_size_limit > 0) {
        ::signal(SIGXFSZ, SIG_DFL);
        const rlimit limit{file_size_limit, file_size_limit};
        ::setrlimit(RLIMIT_FSIZE, &limit);
      }
      ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return child;
  }

  /// The wait status of a child that start() began.
  static int wait(pid_t child) {
    int status = 0;
    ::waitpid(child, &status, 0);
    return status;
  }

  /// Expects `radix_sort <arguments>` under a file-size limit of `limit` bytes to end (not be killed) with status 2
  /// and one error line: "<cannot_write>: File too large" and the limit. Leaves checking the target to the caller.
  void expect_file_size_limit_error(const std::string& arguments, size_t limit, const std::string& cannot_write) {
    const int raw = wait(start(arguments, limit));
    EXPECT_FALSE(WIFSIGNALED(raw)) << "ended by signal " << WTERMSIG(raw);
    const RunResult result = finish(raw);
    EXPECT_EQ(result.status, 2);
    EXPECT_EQ(result.err, "radix_sort: error: " + cannot_write +
                              ": File too large (the file-size limit, ulimit -f, is " + std::to_string(limit) +
                              " bytes)\n");
    for (const auto& entry : fs::directory_iterator(directory_)) {
      EXPECT_EQ(entry.path().filename().string().find(".radix_sort."), std::string::npos) << entry.path();
    }
  }

  /// The result of a run that ended with wait status `raw`; takes its stdout and stderr files.
  RunResult finish(int raw) const {
    RunResult result;
    result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    result.out = read_file(path("stdout.txt"));
    result.err = read_file(path("stderr.txt"));
    fs::remove(path("stdout.txt"));
    fs::remove(path("stderr.txt"));
    return result;
  }

  /// Expects the failure contract: status 2, one error line mentioning `fragment`, no output, no temporary files.
  void expect_failure(const std::string& arguments, const std::string& fragment, const char* output = "out",
                      bool with_backend = true) {
    const RunResult result = run(arguments, with_backend);
    EXPECT_EQ(result.status, 2) << arguments;
    EXPECT_EQ(result.err.rfind("radix_sort: error: ", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find(fragment), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(path(output))) << arguments;
    for (const auto& entry : fs::directory_iterator(directory_)) {
      EXPECT_EQ(entry.path().filename().string().find(".radix_sort."), std::string::npos) << entry.path();
    }
  }

  /// Expects the failure contract where the target exists: status 2, one line "radix_sort: error: <message>..."
  /// (`message` all of it, or its start), the target `output` still holding "previous", no temporary or spill files.
  void expect_failure_leaving_target(const std::string& arguments, const std::string& message,
                                     const char* output = "out") {
    write_file(path(output), "previous");
    const RunResult result = run(arguments);
    EXPECT_EQ(result.status, 2) << arguments;
    EXPECT_EQ(result.err.rfind("radix_sort: error: " + message, 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_EQ(result.err.back(), '\n') << result.err;
    EXPECT_EQ(read_file(path(output)), "previous") << arguments;
    expect_no_temporary_files();
  }

  /// No temporary output (".radix_sort.") or spill file (".radix_sort.spill.") is left in the scratch directory.
  void expect_no_temporary_files() const {
    for (const auto& entry :
         fs::recursive_directory_iterator(directory_, fs::directory_options::skip_permission_denied)) {
      EXPECT_EQ(entry.path().filename().string().find(".radix_sort."), std::string::npos) << entry.path();
    }
  }

  template <class K>
  void expect_binary_sort(size_t count, bool descending) {
    const std::vector<K> keys = random_keys<K>(count, count + descending);
    write_file(path("in.bin"), as_bytes(keys));
    const std::string type(key_type_name(key_type_of<K>()));
    const RunResult result = run("in.bin --type " + type + " -o out.bin" + (descending ? " -r" : ""));
    ASSERT_EQ(result.status, 0) << result.err;
    const std::vector<K> expected = gather(keys, stable_order(keys, descending));
    EXPECT_TRUE(same_bits(from_bytes<K>(read_file(path("out.bin"))), expected)) << type << " n=" << count;
  }

  fs::path directory_;
};

}  // namespace radix_sort::test
