// End-to-end tests: run the built radix_sort on small files. Every case runs with --backend cpu, and again with
// --backend gpu where a GPU exists. Bad inputs must give one "radix_sort: error:" line, a non-zero exit status and
// no output file (not even a temporary one).

#include <gtest/gtest.h>
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

#include "apps/app_test.hpp"
#include "formats.hpp"
#include "gpu_test.cuh"
#include "key_type.hpp"
#include "reference_sort.hpp"

namespace radix_sort {
namespace {

using namespace radix_sort::test;

/// A two-element .npy file whose header has `from` replaced by `to`.
std::string npy_edited(KeyType type, const std::string& from, const std::string& to) {
  std::string header = make_npy_header(type, 2);
  header.replace(header.find(from), from.size(), to);
  return header + std::string(2 * key_type_size(type), '\0');
}

TEST_P(RadixSortApp, SortsBinaryOfEveryTypeBothWays) {
  for (KeyType type : all_key_types) {
    visit_key_type(type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      for (size_t count : {1, 2, 1000, 70001}) {
        expect_binary_sort<K>(count, false);
        expect_binary_sort<K>(count, true);
      }
    });
  }
}

/// --top K writes the first min(K, n) keys of the stable sort: every type, both ways, K around 0 and n (equal keys,
/// such as -0.0 and +0.0 or NaNs of different bits, keep their input order, as in the sort).
TEST_P(RadixSortApp, TopWritesTheFirstKeysOfTheSortOfEveryTypeBothWays) {
  const size_t n = 1000;
  for (KeyType type : all_key_types) {
    visit_key_type(type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      const std::vector<K> keys = random_keys<K>(n, 11);
      write_file(path("in.bin"), as_bytes(keys));
      for (const bool descending : {false, true}) {
        const std::vector<K> sorted = gather(keys, stable_order(keys, descending));
        for (const size_t k : {size_t{0}, size_t{1}, size_t{37}, n - 1, n, n + 1}) {
          const std::string arguments = "in.bin --type " + std::string(key_type_name(type)) + " --top " +
                                        std::to_string(k) + " -o out.bin" + (descending ? " -r" : "");
          const RunResult result = run(arguments);
          ASSERT_EQ(result.status, 0) << arguments << ": " << result.err;
          const std::vector<K> expected(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(std::min(k, n)));
          EXPECT_TRUE(same_bits(from_bytes<K>(read_file(path("out.bin"))), expected)) << arguments;
        }
      }
    });
  }
}

/// Text and npy inputs give text and npy outputs; an empty input gives an empty output.
TEST_P(RadixSortApp, TopKeepsTheFormat) {
  write_file(path("in.txt"), "5\n-3\n12\n7\n-3\n0\n");
  RunResult result = run("in.txt --top 3 -o out.txt");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), "-3\n-3\n0\n");
  result = run("in.txt --top 2 -r -o out.txt");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), "12\n7\n");

  const std::vector<double> keys = random_keys<double>(5000, 4);
  write_file(path("in.npy"), make_npy_header(KeyType::F64, keys.size()) + as_bytes(keys));
  result = run("in.npy --top 100 -r -o out.npy");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::string out = read_file(path("out.npy"));
  const NpyHeader header = parse_npy_header(out, "out.npy");
  EXPECT_EQ(header.type, KeyType::F64);
  EXPECT_EQ(header.count, size_t{100});
  const std::vector<double> sorted = gather(keys, stable_order(keys, true));
  EXPECT_TRUE(same_bits(from_bytes<double>(std::string_view(out).substr(header.data_offset)),
                        std::vector<double>(sorted.begin(), sorted.begin() + 100)));

  write_file(path("empty.bin"), "");
  result = run("empty.bin --type u32 --top 10 -o out.bin");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(fs::exists(path("out.bin")));
  EXPECT_EQ(read_file(path("out.bin")), "");
}

/// Under a memory budget smaller than the keys the input goes through in chunks, each chunk's top taken with the
/// winners so far.
TEST_P(RadixSortApp, TopStreamsALargeInputInChunks) {
  const size_t n = 3000001;  // 12 MB of keys under a 4 MiB budget
  std::vector<uint32_t> keys = random_keys<uint32_t>(n, 8);
  for (size_t i = 0; i < n; i += 3) keys[i] %= 1000;  // many equal keys among the smallest
  write_file(path("in.bin"), as_bytes(keys));
  for (const bool descending : {false, true}) {
    const RunResult result =
        run(std::string("in.bin --type u32 --top 2500 --gpu-memory 4MiB --stats -o out.bin") + (descending ? " -r" : ""));
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.err.find(" chunks of up to "), std::string::npos) << result.err;
    const std::vector<uint32_t> sorted = gather(keys, stable_order(keys, descending));
    EXPECT_TRUE(same_bits(from_bytes<uint32_t>(read_file(path("out.bin"))),
                          std::vector<uint32_t>(sorted.begin(), sorted.begin() + 2500)));
  }
}

/// A K whose winners alone pass the memory budget is one error line, and leaves the target as it was.
TEST_P(RadixSortApp, TopBeyondTheBudgetIsOneError) {
  write_file(path("in.bin"), as_bytes(random_keys<uint64_t>(200000, 2)));
  expect_failure_leaving_target("in.bin --type u64 --top 150000 --gpu-memory 1MiB -o out", "--top 150000: ");
}

TEST_P(RadixSortApp, SortsMoreThanOneStagingChunk) { expect_binary_sort<uint64_t>(9'000'001, false); }

TEST_P(RadixSortApp, SortsNpyAndWritesNpy) {
  const std::vector<float> keys = random_keys<float>(5000, 3);
  write_file(path("in.npy"), make_npy_header(KeyType::F32, keys.size()) + as_bytes(keys));
  const RunResult result = run("in.npy -o out.npy");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::string out = read_file(path("out.npy"));
  const NpyHeader header = parse_npy_header(out, "out.npy");
  EXPECT_EQ(header.type, KeyType::F32);
  EXPECT_EQ(header.count, keys.size());
  EXPECT_TRUE(test::same_bits(from_bytes<float>(std::string_view(out).substr(header.data_offset)),
                        test::gather(keys, test::stable_order(keys, false))));
}

// Large enough for the outputs to be mapped and filled by several threads, with blank lines and padding to skip.
TEST_P(RadixSortApp, SortsLargeTextAndNpy) {
  const std::vector<int64_t> keys = random_keys<int64_t>(700'001, 11);
  std::string text;
  for (size_t i = 0; i < keys.size(); ++i) {
    text += (i % 1000 == 7 ? "  " : "") + std::to_string(keys[i]) + (i % 777 == 0 ? "\n\n" : "\n");
  }
  write_file(path("in.txt"), text);
  write_file(path("in.npy"), make_npy_header(KeyType::I64, keys.size()) + as_bytes(keys));
  RunResult result = run("in.txt --type i64 -o out.txt");
  ASSERT_EQ(result.status, 0) << result.err;
  std::vector<int64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::string expected;
  for (const int64_t key : sorted) expected += std::to_string(key) + "\n";
  EXPECT_TRUE(read_file(path("out.txt")) == expected);
  result = run("in.npy -o out.npy");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::string out = read_file(path("out.npy"));
  const NpyHeader header = parse_npy_header(out, "out.npy");
  EXPECT_EQ(header.count, keys.size());
  EXPECT_TRUE(from_bytes<int64_t>(std::string_view(out).substr(header.data_offset)) == sorted);
}

TEST_P(RadixSortApp, SortsTextAndWritesText) {
  write_file(path("in.txt"), "  5\n-3\n\n+12\n0\n-3\n");
  const RunResult result = run("in.txt -o out.txt -r");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), "12\n5\n0\n-3\n-3\n");
}

TEST_P(RadixSortApp, SortsTextFloats) {
  write_file(path("in.txt"), "nan\n2.5\n-inf\n-0\n1e3\n0\n");
  const RunResult result = run("in.txt --type f64 -o out.txt");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), "-inf\n-0\n0\n2.5\n1000\nnan\n");
}

TEST_P(RadixSortApp, WritesTheArgsortPermutation) {
  const std::vector<int16_t> keys = random_keys<int16_t>(3001, 9);
  write_file(path("in.npy"), make_npy_header(KeyType::I16, keys.size()) + as_bytes(keys));
  const RunResult result = run("in.npy --argsort -r -o order.npy");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::string out = read_file(path("order.npy"));
  const NpyHeader header = parse_npy_header(out, "order.npy");
  EXPECT_EQ(header.type, KeyType::U64);
  EXPECT_EQ(from_bytes<uint64_t>(std::string_view(out).substr(header.data_offset)), test::stable_order(keys, true));
}

TEST_P(RadixSortApp, ReordersValuesAlongWithKeys) {
  const std::vector<uint8_t> keys = random_keys<uint8_t>(4000, 4);
  std::vector<double> values(keys.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) + 0.5;
  write_file(path("keys.bin"), as_bytes(keys));
  write_file(path("values.bin"), as_bytes(values));
  const RunResult result =
      run("keys.bin --type u8 -o keys.out --values values.bin --values-type f64 --values-out values.out");
  ASSERT_EQ(result.status, 0) << result.err;
  const std::vector<uint64_t> order = test::stable_order(keys, false);
  EXPECT_EQ(from_bytes<uint8_t>(read_file(path("keys.out"))), test::gather(keys, order));
  EXPECT_EQ(from_bytes<double>(read_file(path("values.out"))), test::gather(values, order));
}

TEST_P(RadixSortApp, DetectsTheValuesFormatApartFromTheKeys) {
  write_file(path("keys.txt"), "3\n1\n2\n");
  const std::vector<double> values = {30.5, 10.5, 20.5};
  write_file(path("values.bin"), as_bytes(values));
  RunResult result =
      run("keys.txt --format text -o keys.out --values values.bin --values-type f64 --values-out values.out");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("keys.out")), "1\n2\n3\n");
  EXPECT_EQ(from_bytes<double>(read_file(path("values.out"))), (std::vector<double>{10.5, 20.5, 30.5}));

  // Where detection cannot tell, --values-format says it.
  write_file(path("values"), "7\n8\n9\n");
  result = run("keys.txt -o keys.out --values values --values-format bin --values-type u8 --values-out values.out");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("6 values but keys.txt has 3 keys"), std::string::npos) << result.err;
  result = run("keys.txt -o keys.out --values values --values-format text --values-type u8 --values-out values.out");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("values.out")), "8\n9\n7\n");
}

TEST_P(RadixSortApp, SortsInPlaceAndThroughPipes) {
  const std::vector<int32_t> keys = random_keys<int32_t>(10000, 5);
  const std::vector<int32_t> sorted = test::gather(keys, test::stable_order(keys, false));
  write_file(path("data.bin"), as_bytes(keys));
  ASSERT_EQ(run("data.bin -o data.bin").status, 0);
  EXPECT_EQ(from_bytes<int32_t>(read_file(path("data.bin"))), sorted);

  write_file(path("data.bin"), as_bytes(keys));
  const RunResult piped = run("- --type i32 < data.bin");
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(from_bytes<int32_t>(piped.out), sorted);
}

TEST_P(RadixSortApp, EmptyInputGivesEmptyOutput) {
  write_file(path("empty.bin"), "");
  RunResult result = run("empty.bin -o out.bin --stats");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(fs::exists(path("out.bin")));
  EXPECT_EQ(fs::file_size(path("out.bin")), 0u);

  write_file(path("empty.npy"), make_npy_header(KeyType::F64, 0));
  result = run("empty.npy -o out.npy");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(parse_npy_header(read_file(path("out.npy")), "out.npy").count, 0u);
}

TEST_P(RadixSortApp, ChecksOrderLikeSortDashC) {
  write_file(path("sorted.txt"), "1\n2\n2\n9\n");
  RunResult result = run("sorted.txt -c", false);
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  result = run("sorted.txt -c -r", false);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "radix_sort: sorted.txt:2: disorder: 2\n");

  write_file(path("unsorted.txt"), "1\n\n3\n2\n");
  result = run("unsorted.txt --check", false);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "radix_sort: unsorted.txt:4: disorder: 2\n");

  const std::vector<int8_t> keys = {-5, 3, -7};
  write_file(path("keys.bin"), as_bytes(keys));
  result = run("keys.bin -t i8 -c", false);
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "radix_sort: keys.bin: disorder at index 2: -7\n");
}

TEST_P(RadixSortApp, PrintsStats) {
  write_file(path("in.txt"), "3\n-1\n2\n");
  const RunResult result = run("in.txt -o out.txt --stats");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("3 i32 keys"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("min -1, max 3"), std::string::npos) << result.err;
  for (const char* phase : {"read", "to GPU", "sort", "back", "write", "total"}) {
    EXPECT_NE(result.err.find(phase), std::string::npos) << phase;
  }
}

TEST_P(RadixSortApp, BadInputsFailCleanly) {
  write_file(path("truncated.bin"), std::string(7, '\1'));
  expect_failure("truncated.bin --type i32 -o out", "7 bytes is not a whole number of i32 values");

  write_file(path("f2.npy"), npy_edited(KeyType::I16, "<i2", "<f2"));
  expect_failure("f2.npy -o out", "unsupported npy dtype '<f2'");
  write_file(path("big.npy"), npy_edited(KeyType::I32, "<i4", ">i4"));
  expect_failure("big.npy -o out", "big-endian");
  write_file(path("fortran.npy"), npy_edited(KeyType::I32, "False", "True "));
  expect_failure("fortran.npy -o out", "Fortran");
  write_file(path("matrix.npy"), npy_edited(KeyType::I32, "(2,)", "(1,2)"));
  expect_failure("matrix.npy -o out", "only 1-D");

  write_file(path("words.txt"), "1\n2\nthree\n");
  expect_failure("words.txt -o out", "words.txt:3: 'three' is not a valid i32 number");
  write_file(path("range.txt"), "1\n300\n");
  expect_failure("range.txt -t i8 -o out", "range.txt:2: '300' is out of range for i8");

  expect_failure("missing.bin -o out", "cannot open 'missing.bin'");
  fs::create_directories(path("folder"));
  expect_failure("folder -o out", "is a directory");
  write_file(path("ok.bin"), std::string(8, '\0'));
  expect_failure("ok.bin -o no/such/dir/out", "cannot write 'no/such/dir/out'", "no");
  expect_failure("ok.bin -o folder", "cannot write 'folder': it is a directory", "no");
  write_file(path("values.bin"), std::string(4, '\0'));
  expect_failure("ok.bin --type i32 -o out --values values.bin --values-out vout", "values but ok.bin has 2 keys");
  expect_failure("ok.bin --type i128 -o out", "i128");
}

TEST_P(RadixSortApp, EmptyPathsAndSizesAreOneError) {
  write_file(path("in.txt"), "3\n1\n2\n");
  // Nothing is written anywhere: not into an unnamed temporary file, not to stdout.
  for (const char* arguments : {"in.txt -o ''", "in.txt -o out --tmpdir ''", "in.txt -o out --gpu-memory ''",
                                       "in.txt -o out --host-memory ''", "in.txt -o out --host-memory 0"}) {
    const RunResult result = run(arguments);
    EXPECT_EQ(result.status, 2) << arguments;
    EXPECT_EQ(result.err.rfind("radix_sort: error: --", 0), 0u) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_EQ(result.out, "") << arguments;
    EXPECT_FALSE(fs::exists(path("out"))) << arguments;
    expect_no_temporary_files();
  }
  expect_failure_leaving_target("in.txt -o out --tmpdir ''", "--tmpdir is empty: name a directory");
  expect_failure_leaving_target("in.txt -o out --host-memory 0", "--host-memory '0' must be greater than zero");
  EXPECT_EQ(run("in.txt -o ''").err, "radix_sort: error: --output is empty: name a file, or '-' for stdout\n");
}

TEST_P(RadixSortApp, ReadsFilesWithoutASizeAsStreams) {
  // /proc files say their size is 0 yet hold text: it is sorted, not lost.
  const char* proc_file = "/proc/sys/kernel/pid_max";
  if (!fs::exists(proc_file)) GTEST_SKIP() << "no " << proc_file;
  const std::string content = read_file(proc_file);
  ASSERT_FALSE(content.empty());
  const RunResult result = run(std::string(proc_file) + " -o out.txt");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), content);
  EXPECT_EQ(run(std::string(proc_file) + " -c").status, 0);
}

TEST_P(RadixSortApp, AnEndlessInputStopsAtTheHostMemoryBudget) {
  // /dev/zero as a file or as stdin would be read into memory without end: it stops at --host-memory.
  expect_failure_leaving_target("/dev/zero -f bin -o out --host-memory 8MiB",
                                "'/dev/zero' is a stream held in memory, and it is larger than --host-memory 8.0 MiB; "
                                "raise --host-memory, or give a regular file");
  expect_failure_leaving_target("- -f bin -o out --host-memory 8MiB < /dev/zero",
                                "'stdin' is a stream held in memory, and it is larger than --host-memory 8.0 MiB; "
                                "raise --host-memory, or give a regular file");
  // A values stream counts against what the keys left of the budget.
  write_file(path("keys.bin"), std::string(4000, '\1'));
  expect_failure_leaving_target("keys.bin -o out --values /dev/zero --values-out vout --host-memory 8MiB",
                                "'/dev/zero' is a stream held in memory, and it is larger than --host-memory 8.0 MiB; "
                                "raise --host-memory, or give a regular file");
  EXPECT_FALSE(fs::exists(path("vout")));
  // A stream within the budget is sorted as before.
  write_file(path("in.bin"), as_bytes(std::vector<int32_t>{3, -1, 2}));
  const RunResult result = run("- -f bin -o out.bin --host-memory 8MiB < in.bin");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(from_bytes<int32_t>(read_file(path("out.bin"))), (std::vector<int32_t>{-1, 2, 3}));
}

TEST_P(RadixSortApp, MalformedNpyHeadersAreOneErrorAndLeaveTheTarget) {
  const auto npy_with_dict = [](const std::string& dict, char major = 1, char minor = 0) {
    std::string header = dict;
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::string file = "\x93NUMPY";
    file.push_back(major);
    file.push_back(minor);
    file.push_back(static_cast<char>(header.size() & 0xff));
    file.push_back(static_cast<char>(header.size() >> 8));
    return file + header + std::string(8, '\0');
  };
  write_file(path("brace.npy"), npy_with_dict("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), "));
  expect_failure_leaving_target("brace.npy -o out", "brace.npy: malformed npy header (unexpected end");
  write_file(path("commas.npy"), npy_with_dict("{'descr': '<i4', 'fortran_order': False, 'shape': (2,,), }"));
  EXPECT_NE(run("commas.npy -o out").err.find("commas.npy: malformed npy header (unexpected ','"), std::string::npos);
  write_file(path("v11.npy"), npy_with_dict("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 1, 1));
  EXPECT_EQ(run("v11.npy -o out").err,
            "radix_sort: error: v11.npy: unsupported npy format version 1.1 (numpy's are 1.0, 2.0 and 3.0)\n");
  write_file(path("garbage.npy"), npy_with_dict("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), } x"));
  EXPECT_NE(run("garbage.npy -o out").err.find("malformed npy header (text after the dictionary"), std::string::npos);
  for (const char* name : {"commas.npy", "v11.npy", "garbage.npy"}) {
    const RunResult bad = run(std::string(name) + " -o out");
    EXPECT_EQ(bad.status, 2) << name;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    EXPECT_EQ(read_file(path("out")), "previous") << name;
  }
  expect_no_temporary_files();
}

TEST_P(RadixSortApp, AnUnreadableInputIsOneError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file without permissions";
  write_file(path("secret.bin"), std::string(8, '\0'));
  fs::permissions(path("secret.bin"), fs::perms::none);
  expect_failure("secret.bin -o out", "cannot open 'secret.bin'");
}

TEST_P(RadixSortApp, FailureLeavesAnExistingOutputUntouched) {
  write_file(path("out"), "previous");
  write_file(path("bad.txt"), "1\nx\n");
  const RunResult result = run("bad.txt -o out");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(read_file(path("out")), "previous");
}

TEST_P(RadixSortApp, TheFileSizeLimitIsOneErrorAndLeavesTheTargetUntouched) {
  // 800 KB of output, appended to; an existing target stays as it was.
  write_file(path("small.bin"), as_bytes(random_keys<uint32_t>(200'000, 4)));
  write_file(path("out"), "previous");
  expect_file_size_limit_error("small.bin -t u32 -o out", 100'000, "cannot write 'out'");
  EXPECT_EQ(read_file(path("out")), "previous");
  // 8 MB, large enough to be mapped: reserving its space passes the limit, so it is appended to and fails there.
  write_file(path("large.bin"), as_bytes(random_keys<uint32_t>(size_t(2) << 20, 5)));
  expect_file_size_limit_error("large.bin -t u32 -o new", 4'000'000, "cannot write 'new'");
  EXPECT_FALSE(fs::exists(path("new")));
}

TEST_P(RadixSortApp, TextUnderTheFileSizeLimitIsWrittenWhereItsBoundIsNot) {
  // A million one-digit lines: 2 MB of output, whose bound (the longest i32 line each) is 12 MB.
  std::string text;
  std::string sorted;
  for (size_t i = 0; i < 1'000'000; ++i) {
    text += std::to_string((i * 7) % 10) + "\n";
    sorted += std::to_string(i / 100'000) + "\n";  // each digit a tenth of the lines
  }
  write_file(path("in.txt"), text);
  const int raw = wait(start("in.txt -o out.txt", 4'000'000));
  EXPECT_FALSE(WIFSIGNALED(raw)) << "ended by signal " << WTERMSIG(raw);
  const RunResult result = finish(raw);
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(read_file(path("out.txt")) == sorted);
}

INSTANTIATE_TEST_SUITE_P(Backends, RadixSortApp, testing::Values("cpu", "gpu"),
                         [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

/// Without a GPU, auto says so in one line and sorts on the CPU; asking for the GPU is an error. Files of up to 2 MiB a
/// thread go to the CPU without a GPU being looked for (no word of one); one key more and auto looks (-j 1 here).
class RadixSortAppWithoutGpu : public RadixSortApp {};

TEST_P(RadixSortAppWithoutGpu, FallsBackToTheCpu) {
  if (prims::test::has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  std::vector<uint32_t> keys = random_keys<uint32_t>(size_t(1) << 19, 5);  // 2 MiB
  write_file(path("at.bin"), as_bytes(keys));
  RunResult result = run("at.bin -t u32 -j 1 -o at.out --backend auto", false);
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(from_bytes<uint32_t>(read_file(path("at.out"))), gather(keys, stable_order(keys, false)));
  keys.push_back(7);
  write_file(path("over.bin"), as_bytes(keys));
  result = run("over.bin -t u32 -j 1 -o over.out --backend auto", false);
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.err, "radix_sort: no CUDA GPU found; sorting on the CPU\n");
  EXPECT_EQ(from_bytes<uint32_t>(read_file(path("over.out"))), gather(keys, stable_order(keys, false)));
  expect_failure("at.bin -t u32 -o out.bin --backend gpu", "no CUDA GPU found", "out.bin", false);
}

INSTANTIATE_TEST_SUITE_P(NoBackendOption, RadixSortAppWithoutGpu, testing::Values("cpu"));

/// Auto sorts a small file on the CPU, with or without a GPU, and looks for no GPU.
class RadixSortAppAuto : public RadixSortApp {};

TEST_P(RadixSortAppAuto, SortsSmallFilesOnTheCpu) {
  write_file(path("in.txt"), "2\n1\n");
  const RunResult result = run("in.txt -o out.txt --backend auto --stats", false);
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find(", sorted ascending on CPU\n"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("no CUDA GPU"), std::string::npos) << result.err;
  EXPECT_EQ(read_file(path("out.txt")), "1\n2\n");
}

INSTANTIATE_TEST_SUITE_P(NoBackendOption, RadixSortAppAuto, testing::Values("cpu"));

}  // namespace
}  // namespace radix_sort
