// The out-of-core sort of radix_sort: its parts (partition, bucket stores, plan, streamed input, sizes, progress)
// host-only, and end-to-end runs with small --gpu-memory and --host-memory caps that force buckets, partitioning
// again and spill files, on the CPU backend here and on the GPU where there is one. Faults (the file-size limit,
// signals, an unusable spill directory, an input that shrinks) must give one error line, exit status 2, an untouched
// target and no temporary files.

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "apps/app_test.hpp"
#include "backend.hpp"
#include "bucket_store.hpp"
#include "cpu_sort.hpp"
#include "errors.hpp"
#include "file_io.hpp"
#include "formats.hpp"
#include "input_stream.hpp"
#include "options.hpp"
#include "out_of_core.hpp"
#include "progress.hpp"
#include "slot_pipeline.hpp"

namespace radix_sort {
namespace {

using namespace radix_sort::test;

// ---- parts ------------------------------------------------------------------------------------------------------

TEST(ByteSize, ParsesUnitsAndRejectsTheRest) {
  EXPECT_EQ(parse_byte_size("1000"), 1000u);
  EXPECT_EQ(parse_byte_size("512B"), 512u);
  EXPECT_EQ(parse_byte_size("64k"), 64u << 10);
  EXPECT_EQ(parse_byte_size("512MiB"), size_t(512) << 20);
  EXPECT_EQ(parse_byte_size("6GiB"), size_t(6) << 30);
  EXPECT_EQ(parse_byte_size("1G"), size_t(1) << 30);
  EXPECT_EQ(parse_byte_size("1GB"), size_t(1000000000));
  EXPECT_EQ(parse_byte_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_byte_size("2T"), size_t(2) << 40);
  for (const char* bad : {"", "0", "GiB", "-1G", "1X", "1GiBs", "1.2.3M", "0.1"}) {
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
  }
}

std::optional<Options> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "radix_sort");
  return parse_options(static_cast<int>(args.size()), args.data());
}

TEST(OutOfCoreOptions, ParseAndReject) {
  const Options options = *parse({"in.bin", "--gpu-memory", "6GiB", "--host-memory", "512MiB", "--tmpdir", "/scratch",
                                  "--progress"});
  EXPECT_EQ(options.gpu_memory, size_t(6) << 30);
  EXPECT_EQ(options.host_memory, size_t(512) << 20);
  EXPECT_EQ(options.tmpdir, "/scratch");
  EXPECT_EQ(options.progress, ProgressMode::Always);
  EXPECT_EQ(parse({"in.bin", "--no-progress"})->progress, ProgressMode::Never);
  const Options defaults = *parse({"in.bin"});
  EXPECT_FALSE(defaults.gpu_memory);
  EXPECT_FALSE(defaults.host_memory);
  EXPECT_EQ(defaults.progress, ProgressMode::Auto);
  EXPECT_THROW(parse({"in.bin", "--gpu-memory", "lots"}), UsageError);
  EXPECT_THROW(parse({"in.bin", "--host-memory", "0"}), UsageError);
  // What is wrong with a size is said: zero, empty, too large, not a size.
  const auto usage_error = [](std::vector<const char*> args) -> std::string {
    try {
      parse(std::move(args));
    } catch (const UsageError& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_EQ(usage_error({"in.bin", "--host-memory", "0"}), "--host-memory '0' must be greater than zero");
  EXPECT_EQ(usage_error({"in.bin", "--gpu-memory", "0GiB"}), "--gpu-memory '0GiB' must be greater than zero");
  EXPECT_EQ(usage_error({"in.bin", "--gpu-memory", "0.1"}), "--gpu-memory '0.1' must be greater than zero");
  EXPECT_EQ(usage_error({"in.bin", "--gpu-memory", "99999999T"}), "--gpu-memory '99999999T' is too large");
  EXPECT_EQ(usage_error({"in.bin", "--gpu-memory", "lots"}), "--gpu-memory 'lots' is not a size such as 512MiB or 6GiB");
  EXPECT_EQ(usage_error({"in.bin", "--gpu-memory", ""}), "--gpu-memory is empty: give a size such as 512MiB or 6GiB");
  EXPECT_EQ(usage_error({"in.bin", "--host-memory", ""}),
            "--host-memory is empty: give a size such as 512MiB or 6GiB");
  EXPECT_EQ(usage_error({"in.bin", "--tmpdir", ""}), "--tmpdir is empty: name a directory");
  EXPECT_THROW(parse({"in.bin", "--progress", "--no-progress"}), UsageError);
}

TEST(ProgressLine, SaysPhaseBytesRateAndTimeLeft) {
  const std::string line = Progress::line("partitioning", size_t(1) << 30, size_t(4) << 30, 2.0);
  EXPECT_NE(line.find("partitioning"), std::string::npos) << line;
  EXPECT_NE(line.find(" 25%"), std::string::npos) << line;
  EXPECT_NE(line.find("1.00 GiB of 4.00 GiB"), std::string::npos) << line;
  EXPECT_NE(line.find("512.0 MiB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("6s left"), std::string::npos) << line;
  EXPECT_NE(Progress::line("sorting", 0, 100, 0).find("--"), std::string::npos);
}

TEST(CpuPartition, IsStableAndOrdersBucketsLikeTheSort) {
  std::vector<int32_t> keys = random_keys<int32_t>(5000, 1);
  for (size_t i = 0; i < keys.size(); i += 3) keys[i] = keys[i] % 50;  // many ties across buckets
  std::vector<uint32_t> indices(keys.size());
  std::iota(indices.begin(), indices.end(), 0u);
  for (const bool descending : {false, true}) {
    for (const auto& [begin_bit, end_bit] : {std::pair{24, 32}, std::pair{8, 16}, std::pair{0, 3}}) {
      std::vector<int32_t> keys_out(keys.size());
      std::vector<uint32_t> values_out(keys.size());
      std::vector<size_t> offsets((size_t(1) << (end_bit - begin_bit)) + 1);
      radix_partition_cpu(keys.data(), indices.data(), keys_out.data(), values_out.data(), keys.size(), begin_bit,
                          end_bit, descending, offsets.data());
      EXPECT_EQ(offsets.front(), 0u);
      EXPECT_EQ(offsets.back(), keys.size());
      // The reference: a stable sort by the digit alone.
      std::vector<uint32_t> expected = indices;
      std::stable_sort(expected.begin(), expected.end(), [&](uint32_t a, uint32_t b) {
        return partition_digit(keys[a], descending, begin_bit, end_bit) <
               partition_digit(keys[b], descending, begin_bit, end_bit);
      });
      EXPECT_EQ(values_out, expected);
      for (size_t b = 0; b + 1 < offsets.size(); ++b) {
        for (size_t i = offsets[b]; i < offsets[b + 1]; ++i) {
          ASSERT_EQ(partition_digit(keys_out[i], descending, begin_bit, end_bit), b);
          ASSERT_EQ(keys_out[i], keys[values_out[i]]);
        }
      }
    }
  }
  // Top digit, ascending: bucket 0 holds the negative keys (the smallest).
  std::vector<int32_t> two = {5, -5};
  std::vector<int32_t> out(2);
  std::vector<size_t> offsets(257);
  radix_partition_cpu<int32_t, NoValues>(two.data(), nullptr, out.data(), nullptr, 2, 24, 32, false, offsets.data());
  EXPECT_EQ(out, (std::vector<int32_t>{-5, 5}));
}

// ---- SlotPipeline (the partition's and the write-behind's stages) ---------------------------------------------------

struct NumberSlot {
  int value = -1;
};

std::vector<NumberSlot*> slot_pointers(std::vector<NumberSlot>& slots) {
  std::vector<NumberSlot*> pointers;
  for (NumberSlot& slot : slots) pointers.push_back(&slot);
  return pointers;
}

TEST(SlotPipeline, EveryStageSeesEverySlotInOrderWithFewSlotsInFlight) {
  std::vector<NumberSlot> slots(3);
  std::vector<int> first_seen;
  std::vector<int> second_seen;
  std::atomic<int> in_flight{0};
  int most_in_flight = 0;
  {
    SlotPipeline<NumberSlot> pipeline(slot_pointers(slots),
                                      {[&](NumberSlot& slot) {
                                         first_seen.push_back(slot.value);
                                         slot.value *= 2;
                                       },
                                       [&](NumberSlot& slot) {
                                         second_seen.push_back(slot.value);
                                         --in_flight;
                                       }});
    for (int i = 0; i < 1000; ++i) {
      NumberSlot& slot = pipeline.acquire();
      most_in_flight = std::max(most_in_flight, ++in_flight);
      slot.value = i;
      pipeline.submit(slot);
    }
    pipeline.finish();
  }
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(first_seen, expected);
  for (int& value : expected) value *= 2;
  EXPECT_EQ(second_seen, expected);
  EXPECT_LE(most_in_flight, 3);
  EXPECT_EQ(in_flight, 0);
}

TEST(SlotPipeline, AStagesErrorReachesTheCallerAndStopsTheRest) {
  for (const int failing_stage : {0, 1}) {
    std::vector<NumberSlot> slots(2);
    int later_stage_after_error = 0;
    SlotPipeline<NumberSlot> pipeline(slot_pointers(slots),
                                      {[&](NumberSlot& slot) {
                                         if (failing_stage == 0 && slot.value == 10) throw AppError("stage 0 failed");
                                       },
                                       [&](NumberSlot& slot) {
                                         if (failing_stage == 1 && slot.value == 10) throw AppError("stage 1 failed");
                                         if (slot.value > 10 && failing_stage == 0) ++later_stage_after_error;
                                       }});
    std::string caught;
    try {
      for (int i = 0; i < 1000; ++i) {
        NumberSlot& slot = pipeline.acquire();
        slot.value = i;
        pipeline.submit(slot);
      }
      pipeline.finish();
    } catch (const AppError& error) {
      caught = error.what();
    }
    EXPECT_EQ(caught, "stage " + std::to_string(failing_stage) + " failed");
    EXPECT_EQ(later_stage_after_error, 0);
  }
}

TEST(SlotPipeline, TheCallersErrorLeavesNoThreadBehind) {
  std::vector<NumberSlot> slots(2);
  std::atomic<int> done{0};
  try {
    SlotPipeline<NumberSlot> pipeline(slot_pointers(slots), {[&](NumberSlot&) {
                                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                        ++done;
                                      }});
    for (int i = 0; i < 5; ++i) pipeline.submit(pipeline.acquire());
    throw AppError("the caller failed");
  } catch (const AppError&) {
  }
  const int after = done;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(done, after);  // the stage's thread was joined: nothing runs on
  EXPECT_GE(after, 3);
}

class BucketStoreTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("radix_sort_buckets_" + std::to_string(::getpid()));
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  /// Spill pieces of 4 elements by default: chunks of 1 to 7 elements a bucket fill, split and leave them partly
  /// filled.
  std::unique_ptr<BucketStore> make(size_t buckets, size_t key_bytes, size_t value_bytes, size_t piece_elements = 4) {
    if (GetParam()) {
      return make_spill_bucket_store(buckets, key_bytes, value_bytes, piece_elements, 2, directory_.string(),
                                     spilled_);
    }
    return make_host_bucket_store(buckets, key_bytes, value_bytes, 2);
  }
  std::filesystem::path directory_;
  size_t spilled_ = 0;
};

TEST_P(BucketStoreTest, ChunksAppendedByManyThreadsReadBackInOrder) {
  // Chunks of 8 MiB are appended a bucket a thread: with spill files, pieces of many buckets are written at once,
  // each to a file no other thread is writing, and each bucket's pieces end up spread over the files.
  constexpr size_t buckets = 64;
  constexpr size_t chunk = size_t(2) << 20;  // u32 keys: 8 MiB a chunk
  std::unique_ptr<BucketStore> store;
  if (GetParam()) {
    store = make_spill_bucket_store(buckets, sizeof(uint32_t), 0, 1000, 8, directory_.string(), spilled_);
  } else {
    store = make_host_bucket_store(buckets, sizeof(uint32_t), 0, 8);
  }
  std::vector<uint32_t> expected[buckets];
  std::vector<uint32_t> keys(chunk);
  for (uint32_t c = 0; c < 3; ++c) {
    // Bucket b gets (b * 7 + c) % 61 + 1 shares of the chunk: uneven buckets, none empty.
    std::vector<size_t> offsets(buckets + 1, 0);
    size_t shares = 0;
    for (size_t b = 0; b < buckets; ++b) shares += (b * 7 + c) % 61 + 1;
    for (size_t b = 0; b < buckets; ++b) offsets[b + 1] = offsets[b] + chunk * ((b * 7 + c) % 61 + 1) / shares;
    offsets[buckets] = chunk;
    for (size_t b = 0; b < buckets; ++b) {
      for (size_t i = offsets[b]; i < offsets[b + 1]; ++i) {
        keys[i] = static_cast<uint32_t>(c << 28 | b << 22 | (i - offsets[b]));
        expected[b].push_back(keys[i]);
      }
    }
    store->add_partitioned(offsets.data(), keys.data(), nullptr);
  }
  store->finish_appending();
  for (size_t b = 0; b < buckets; ++b) {
    ASSERT_EQ(store->count(b), expected[b].size()) << b;
    std::vector<uint32_t> got(expected[b].size());
    store->read(b, BucketStore::keys, 0, got.size(), got.data());
    ASSERT_EQ(got, expected[b]) << b;
    store->release(b);
  }
  store.reset();
  EXPECT_EQ(spilled_, GetParam() ? 3 * chunk * sizeof(uint32_t) : 0u);
  EXPECT_TRUE(std::filesystem::is_empty(directory_));
}

TEST_P(BucketStoreTest, ReadsBackBucketsInOrderAcrossChunksAndPieces) {
  // 20 chunks over 4 buckets: bucket 0 gets one element of each, bucket 2 the rest, buckets 1 and 3 nothing.
  auto store = make(4, sizeof(uint32_t), sizeof(uint16_t));
  std::vector<uint32_t> expected_keys[4];
  std::vector<uint16_t> expected_values[4];
  for (uint32_t chunk = 0; chunk < 20; ++chunk) {
    std::vector<uint32_t> keys(chunk % 7 + 2);
    std::vector<uint16_t> values(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      keys[i] = chunk * 100 + static_cast<uint32_t>(i);
      values[i] = static_cast<uint16_t>(keys[i] * 3);
      const size_t bucket = i == 0 ? 0 : 2;
      expected_keys[bucket].push_back(keys[i]);
      expected_values[bucket].push_back(values[i]);
    }
    const size_t offsets[5] = {0, 1, 1, keys.size(), keys.size()};
    store->add_partitioned(offsets, keys.data(), values.data());
    // The chunk was copied: the caller reuses its buffers.
    std::fill(keys.begin(), keys.end(), 0);
  }
  for (size_t b = 0; b < 4; ++b) ASSERT_EQ(store->count(b), expected_keys[b].size()) << b;
  store->finish_appending();
  for (size_t b : {size_t(0), size_t(2)}) {
    // Read in uneven steps, keys then values, as the sorts do.
    std::vector<uint32_t> keys(expected_keys[b].size());
    std::vector<uint16_t> values(expected_values[b].size());
    for (size_t first = 0; first < keys.size(); first += 5) {
      const size_t count = std::min<size_t>(5, keys.size() - first);
      store->read(b, BucketStore::keys, first, count, keys.data() + first);
    }
    store->read(b, BucketStore::values, 0, values.size(), values.data());
    EXPECT_EQ(keys, expected_keys[b]) << b;
    EXPECT_EQ(values, expected_values[b]) << b;
    store->release(b);
  }
  store.reset();
  EXPECT_EQ(spilled_, GetParam() ? (expected_keys[0].size() + expected_keys[2].size()) * 6 : 0u);
  // The spill file has no name: the directory stays empty while it is in use.
  EXPECT_TRUE(std::filesystem::is_empty(directory_));
}

TEST_P(BucketStoreTest, LargeChunksAppendAndReadOnSeveralThreads) {
  // 24 MB of keys over 256 buckets: past the size from which appends and reads spread over threads.
  const size_t count = size_t(6) << 20;
  std::vector<uint32_t> keys(count);
  std::vector<size_t> offsets(257);
  for (size_t b = 0; b <= 256; ++b) offsets[b] = count * b / 256;
  for (size_t i = 0; i < count; ++i) keys[i] = static_cast<uint32_t>(i * 2654435761u);
  auto store = make(256, sizeof(uint32_t), 0, 10'000);
  store->add_partitioned(offsets.data(), keys.data(), nullptr);
  store->add_partitioned(offsets.data(), keys.data(), nullptr);
  store->finish_appending();
  for (size_t b : {size_t(0), size_t(77), size_t(255)}) {
    const size_t bucket_count = offsets[b + 1] - offsets[b];
    ASSERT_EQ(store->count(b), 2 * bucket_count);
    std::vector<uint32_t> got(2 * bucket_count);
    store->read(b, BucketStore::keys, 0, got.size(), got.data());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], keys[offsets[b] + i % bucket_count]) << b << " " << i;
  }
}

TEST_P(BucketStoreTest, ReleasedBucketsLeaveTheOthersWhole) {
  auto store = make(4, sizeof(uint32_t), 0);
  const std::vector<uint32_t> first = {10, 11, 20, 30, 31};  // buckets 0, 0, 1, 2, 2
  const std::vector<uint32_t> second = {12, 21, 22, 40};     // buckets 0, 1, 1, 3
  const size_t first_offsets[5] = {0, 2, 3, 5, 5};
  const size_t second_offsets[5] = {0, 1, 3, 3, 4};
  store->add_partitioned(first_offsets, first.data(), nullptr);
  store->add_partitioned(second_offsets, second.data(), nullptr);
  store->finish_appending();
  const auto bucket = [&](size_t b) {
    std::vector<uint32_t> got(store->count(b));
    store->read(b, BucketStore::keys, 0, got.size(), got.data());
    return got;
  };
  EXPECT_EQ(bucket(0), (std::vector<uint32_t>{10, 11, 12}));
  store->release(0);
  EXPECT_EQ(bucket(1), (std::vector<uint32_t>{20, 21, 22}));
  store->release(1);
  // Host memory: the first chunk, whose last bucket is 2, goes with bucket 2; bucket 3 lies in the second.
  EXPECT_EQ(bucket(2), (std::vector<uint32_t>{30, 31}));
  store->release(2);
  EXPECT_EQ(bucket(3), (std::vector<uint32_t>{40}));
  store->release(3);
}

INSTANTIATE_TEST_SUITE_P(HostAndSpill, BucketStoreTest, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "spill" : "host"; });

TEST(SpillStore, AnUnusableDirectoryIsOneError) {
  size_t spilled = 0;
  try {
    make_spill_bucket_store(256, 4, 0, 1024, 1, "/no/such/directory", spilled);
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot create a spill file in '/no/such/directory'"), std::string::npos)
        << error.what();
  }
}

TEST(Plan, InCoreThenHostBucketsThenSpillFiles) {
  auto backend = make_cpu_backend();
  SortRequest request;
  request.key_type = KeyType::U32;
  request.count = 1'000'000;
  MemoryBudget budget{size_t(64) << 20, size_t(256) << 20};
  EXPECT_TRUE(plan_sort(*backend, request, 0, budget).in_core);

  budget.device_bytes = size_t(1) << 20;  // 8 MB of sort memory needed
  SortPlan plan = plan_sort(*backend, request, 0, budget);
  EXPECT_FALSE(plan.in_core);
  EXPECT_FALSE(plan.spill);
  EXPECT_GE(plan.chunk_elements, 256u);
  EXPECT_LE(plan.staging_bytes, budget.host_bytes / 8);

  budget.host_bytes = size_t(2) << 20;  // less than the 4 MB of keys
  budget.device_bytes = size_t(512) << 10;
  plan = plan_sort(*backend, request, 0, budget);
  EXPECT_FALSE(plan.in_core);
  EXPECT_TRUE(plan.spill);
  EXPECT_LE(plan.staging_bytes, budget.host_bytes / 8);

  budget.host_bytes = 4096;
  EXPECT_THROW(plan_sort(*backend, request, 0, budget), AppError);

  // The index of the buckets' pieces grows with the data: too small a budget for the file is an error.
  budget.host_bytes = size_t(1) << 20;
  try {
    plan_sort(*backend, request, 0, budget);
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_NE(std::string(error.what()).find("--host-memory 1.0 MiB is too small to sort 3.8 MiB out of core"),
              std::string::npos)
        << error.what();
  }
}

class StreamTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("radix_sort_stream_" + std::to_string(::getpid()) + ".txt");
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(StreamTest, TextIsParsedInBlocksWithTheRightLineNumbers) {
  std::string text;
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 20000; ++i) {
    const int64_t value = (i * 7919) % 100003 - 50000;
    text += (i % 97 == 0 ? "\n  " : "") + std::to_string(value) + "\n";
    expected.push_back(value);
  }
  text.pop_back();  // no newline at the end
  write_file(path_, text);
  const InputFile file = InputFile::open(path_.string());
  ElementStream stream(file, Format::Text, KeyType::I64, 2, 4096);
  EXPECT_FALSE(stream.count());
  std::vector<int64_t> got;
  std::vector<int64_t> chunk(333);
  while (const size_t n = stream.read(chunk.size(), chunk.data())) {
    got.insert(got.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(stream.bytes_read(), text.size());

  write_file(path_, text + "\n12\noops\n");
  const InputFile bad = InputFile::open(path_.string());
  ElementStream bad_stream(bad, Format::Text, KeyType::I64, 2, 4096);
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  try {
    while (bad_stream.read(chunk.size(), chunk.data()) > 0) {
    }
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_NE(std::string(error.what()).find(":" + std::to_string(lines + 2) + ": 'oops' is not a valid i64"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(StreamTest, TextLinesLongerThanABlockCarryOver) {
  // Lines of 10000 and 20000 characters (blanks around a number) in blocks of 4096: the block grows to hold them.
  const std::string text = "5\n" + std::string(9000, ' ') + "-17" + std::string(1000, ' ') + "\n3\n" +
                           std::string(20000, ' ') + "8\n\n2";
  write_file(path_, text);
  const InputFile file = InputFile::open(path_.string());
  ElementStream stream(file, Format::Text, KeyType::I64, 2, 4096);
  std::vector<int64_t> got(8);
  size_t count = 0;
  while (const size_t n = stream.read(got.size() - count, got.data() + count)) count += n;
  got.resize(count);
  EXPECT_EQ(got, (std::vector<int64_t>{5, -17, 3, 8, 2}));

  write_file(path_, text + "\n" + std::string(5000, '7') + "x\n");
  const InputFile bad = InputFile::open(path_.string());
  ElementStream bad_stream(bad, Format::Text, KeyType::I64, 2, 4096);
  try {
    while (bad_stream.read(got.size(), got.data()) > 0) {
    }
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_NE(std::string(error.what()).find(":7: '"), std::string::npos) << error.what();
  }
}

TEST_F(StreamTest, LargeBinaryReadsOnSeveralThreads) {
  std::vector<uint64_t> values(size_t(3) << 20);
  std::iota(values.begin(), values.end(), uint64_t{7});
  write_file(path_, as_bytes(values));
  const InputFile file = InputFile::open(path_.string());
  ElementStream stream(file, Format::Binary, KeyType::U64, 4);
  std::vector<uint64_t> got(values.size());
  EXPECT_EQ(stream.read(got.size() - 5, got.data()), got.size() - 5);
  EXPECT_EQ(stream.read(100, got.data() + got.size() - 5), 5u);
  EXPECT_EQ(stream.read(100, got.data()), 0u);
  EXPECT_EQ(got, values);
}

TEST_F(StreamTest, LargeWritesOnSeveralThreadsAppendInOrder) {
  std::string big(size_t(20) << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 23);
  {
    AtomicOutput output(path_.string());
    output.write("head");
    output.write(big.data(), big.size(), 4);
    output.write("tail");
    output.commit();
  }
  EXPECT_TRUE(read_file(path_) == "head" + big + "tail");
}

TEST_F(StreamTest, BinaryThatShrinksIsAnError) {
  write_file(path_, std::string(1 << 16, '\1'));
  const InputFile file = InputFile::open(path_.string());
  ElementStream stream(file, Format::Binary, KeyType::U32, 1);
  ASSERT_EQ(stream.count(), size_t(1) << 14);
  std::vector<uint32_t> chunk(1 << 12);
  EXPECT_EQ(stream.read(chunk.size(), chunk.data()), chunk.size());
  std::filesystem::resize_file(path_, 1000);
  try {
    stream.read(chunk.size(), chunk.data());
    ADD_FAILURE() << "no error";
  } catch (const AppError& error) {
    EXPECT_NE(std::string(error.what()).find("shrank while being read"), std::string::npos) << error.what();
  }
}

TEST_F(StreamTest, ReadingAWholeColumnOfAFileThatShrinksIsAnErrorNotASignal) {
  // The in-core read of every format: the file is opened (its size taken), then cut short before it is read.
  std::string text;
  for (int i = 0; i < 400'000; ++i) text += std::to_string(i * 7 % 1000) + "\n";
  const std::vector<uint32_t> keys = random_keys<uint32_t>(size_t(1) << 20, 5);
  const std::pair<Format, std::string> cases[] = {{Format::Text, text},
                                                  {Format::Binary, as_bytes(keys)},
                                                  {Format::Npy, make_npy_header(KeyType::U32, keys.size()) +
                                                                    as_bytes(keys)}};
  for (const auto& [format, content] : cases) {
    write_file(path_, content);
    const InputFile file = InputFile::open(path_.string());
    const Column whole = read_column(file, format, KeyType::U32, 2, 4096);
    EXPECT_EQ(whole.count, format == Format::Text ? 400'000u : keys.size());
    std::filesystem::resize_file(path_, content.size() / 3);
    try {
      read_column(file, format, KeyType::U32, 2, 4096);
      ADD_FAILURE() << "no error for " << format_name(format);
    } catch (const AppError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("'" + path_.string() + "' shrank while being read: it had " +
                                                    std::to_string(content.size()) + " bytes",
                                                0),
                0u)
          << error.what();
    }
  }
}

// ---- end to end -------------------------------------------------------------------------------------------------

/// Sizes that force the out-of-core path: small files and caps on the CPU, larger ones on the GPU (whose sorts
/// need some scratch memory of their own).
struct Scale {
  size_t count;            // keys per test file
  std::string gpu_memory;  // far below the file's size
  std::string host_memory; // small enough to spill
};

class OutOfCoreApp : public RadixSortApp {
 protected:
  Scale scale() const {
    if (std::string(GetParam()) == "gpu") return {4'000'037, "3MiB", "16MiB"};
    return {300'007, "64KiB", "2MiB"};
  }
  std::string caps(bool spill) const {
    return " --gpu-memory " + scale().gpu_memory + (spill ? " --host-memory " + scale().host_memory : "") +
           " --tmpdir spill --stats";
  }
  void SetUp() override {
    RadixSortApp::SetUp();
    if (!HasFatalFailure() && !IsSkipped()) fs::create_directories(path("spill"));
  }
  /// No spill file and no temporary output is left, and the run said which plan it took.
  void expect_clean(const RunResult& result, const std::string& plan) {
    EXPECT_NE(result.err.find("plan: " + plan), std::string::npos) << result.err;
    EXPECT_TRUE(fs::is_empty(path("spill")));
    for (const auto& entry : fs::directory_iterator(directory_)) {
      EXPECT_EQ(entry.path().filename().string().find(".radix_sort."), std::string::npos) << entry.path();
    }
  }
  /// The numbers in the --stats plan line.
  static size_t plan_number(const std::string& err, const std::string& what) {
    std::smatch match;
    if (!std::regex_search(err, match, std::regex("(\\d+) " + what))) return 0;
    return std::stoul(match[1]);
  }
};

TEST_P(OutOfCoreApp, SortsEveryTypeBothWaysThroughBuckets) {
  for (KeyType type : all_key_types) {
    visit_key_type(type, [&](auto tag) {
      using K = typename decltype(tag)::type;
      const std::vector<K> keys = random_keys<K>(scale().count, 17);
      write_file(path("in.bin"), as_bytes(keys));
      const std::string name(key_type_name(type));
      for (const bool descending : {false, true}) {
        const RunResult result =
            run("in.bin -t " + name + " -o out.bin" + (descending ? " -r" : "") + caps(false) + " --progress");
        ASSERT_EQ(result.status, 0) << result.err;
        expect_clean(result, "out of core, buckets in host memory");
        // --progress draws the phases even off a terminal, and erases its line before --stats.
        EXPECT_NE(result.err.find("\rradix_sort: partitioning "), std::string::npos);
        EXPECT_NE(result.err.find("\rradix_sort: sorting "), std::string::npos);
        EXPECT_NE(result.err.find("\r\033[Kradix_sort: "), std::string::npos);
        EXPECT_TRUE(same_bits(from_bytes<K>(read_file(path("out.bin"))), gather(keys, stable_order(keys, descending))))
            << name << (descending ? " descending" : "");
      }
    });
  }
}

TEST_P(OutOfCoreApp, SpillsPairsToAnonymousFiles) {
  const std::vector<uint32_t> keys = random_keys<uint32_t>(scale().count, 5);
  std::vector<uint16_t> values(keys.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i);
  write_file(path("keys.bin"), as_bytes(keys));
  write_file(path("values.bin"), as_bytes(values));
  const RunResult result =
      run("keys.bin -t u32 -r -o keys.out --values values.bin --values-type u16 --values-out values.out" + caps(true));
  ASSERT_EQ(result.status, 0) << result.err;
  expect_clean(result, "out of core, buckets in spill files");
  EXPECT_GT(plan_number(result.err, "buckets sorted"), 1u);
  // Consecutive buckets that fit the sort memory together are sorted as one.
  EXPECT_GE(plan_number(result.err, "sorts"), 1u);
  EXPECT_LE(plan_number(result.err, "sorts"), plan_number(result.err, "buckets sorted"));
  const std::vector<uint64_t> order = stable_order(keys, true);
  const auto [smallest, largest] = std::minmax_element(keys.begin(), keys.end());
  EXPECT_NE(result.err.find("min " + std::to_string(*smallest) + ", max " + std::to_string(*largest)),
            std::string::npos)
      << result.err;
  EXPECT_EQ(from_bytes<uint32_t>(read_file(path("keys.out"))), gather(keys, order));
  EXPECT_EQ(from_bytes<uint16_t>(read_file(path("values.out"))), gather(values, order));
}

TEST_P(OutOfCoreApp, ArgsortsFloatsWithNanAndNegativeZero) {
  const std::vector<float> keys = random_keys<float>(scale().count, 8);  // every fifth key -0.0, 0.0, NaN, -NaN, inf
  write_file(path("in.npy"), make_npy_header(KeyType::F32, keys.size()) + as_bytes(keys));
  for (const bool descending : {false, true}) {
    const RunResult result = run(std::string("in.npy --argsort -o order.npy") + (descending ? " -r" : "") + caps(true));
    ASSERT_EQ(result.status, 0) << result.err;
    expect_clean(result, "out of core, buckets in spill files");
    const std::string out = read_file(path("order.npy"));
    const NpyHeader header = parse_npy_header(out, "order.npy");
    EXPECT_EQ(header.type, KeyType::U64);
    EXPECT_EQ(from_bytes<uint64_t>(std::string_view(out).substr(header.data_offset)), stable_order(keys, descending));
  }
  const RunResult sorted = run("in.npy -o out.npy" + caps(false));
  ASSERT_EQ(sorted.status, 0) << sorted.err;
  const std::string out = read_file(path("out.npy"));
  EXPECT_TRUE(same_bits(from_bytes<float>(std::string_view(out).substr(parse_npy_header(out, "out.npy").data_offset)),
                        gather(keys, stable_order(keys, false))));
}

TEST_P(OutOfCoreApp, SkewedKeysArePartitionedAgainAndEqualKeysWrittenAsTheyAre) {
  // Four keys in five are one value: their bucket never fits and is split down to its last bit.
  std::vector<uint64_t> keys = random_keys<uint64_t>(scale().count, 9);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 5 != 0) keys[i] = 0x1234567890abcdefull;
    if (i % 7 == 0) keys[i] = 0x1234567890abcd00ull + i % 3;  // neighbours that share the top 56 bits
  }
  std::vector<uint64_t> values(keys.size());
  std::iota(values.begin(), values.end(), uint64_t{0});
  write_file(path("keys.bin"), as_bytes(keys));
  write_file(path("values.bin"), as_bytes(values));
  for (const bool spill : {false, true}) {
    const RunResult result =
        run("keys.bin -t u64 -o keys.out --values values.bin --values-type u64 --values-out values.out" + caps(spill));
    ASSERT_EQ(result.status, 0) << result.err;
    expect_clean(result, spill ? "out of core, buckets in spill files" : "out of core, buckets in host memory");
    EXPECT_GE(plan_number(result.err, "partitioned again"), 7u) << result.err;
    EXPECT_GE(plan_number(result.err, "of equal keys"), 1u) << result.err;
    const std::vector<uint64_t> order = stable_order(keys, false);
    EXPECT_EQ(from_bytes<uint64_t>(read_file(path("keys.out"))), gather(keys, order));
    EXPECT_EQ(from_bytes<uint64_t>(read_file(path("values.out"))), order);  // stable: ties keep input order
  }
}

TEST_P(OutOfCoreApp, StreamsTextInAndOut) {
  const std::vector<int64_t> keys = random_keys<int64_t>(scale().count / 4, 12);
  std::string text;
  for (size_t i = 0; i < keys.size(); ++i) text += (i % 101 == 0 ? "\n " : "") + std::to_string(keys[i] >> 20) + "\n";
  write_file(path("in.txt"), text);
  const RunResult result = run("in.txt -t i64 -o out.txt" + caps(true));
  ASSERT_EQ(result.status, 0) << result.err;
  expect_clean(result, "out of core, buckets in spill files");
  std::vector<int64_t> sorted;
  for (const int64_t key : keys) sorted.push_back(key >> 20);
  std::stable_sort(sorted.begin(), sorted.end());
  std::string expected;
  for (const int64_t key : sorted) expected += std::to_string(key) + "\n";
  EXPECT_TRUE(read_file(path("out.txt")) == expected);

  // An error far into the file names its line, counted across the blocks parsed so far.
  write_file(path("bad.txt"), text + "7\nseven\n");
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 2;
  expect_failure("bad.txt -t i64 -o out" + caps(true), "bad.txt:" + std::to_string(line) + ": 'seven' is not");
}

TEST_P(OutOfCoreApp, ValuesThatRunOutAreAnError) {
  const std::vector<int32_t> keys = random_keys<int32_t>(scale().count, 2);
  write_file(path("keys.bin"), as_bytes(keys));
  // Too long to parse in memory under the cap, so it streams, and ends before the keys do.
  std::string values;
  for (size_t i = 0; i + 10 < keys.size(); ++i) values += "1234567\n";
  write_file(path("values.txt"), values);
  expect_failure("keys.bin -o out --values values.txt --values-out vout" + caps(true),
                 "values.txt has fewer values than keys.bin has keys");
  EXPECT_FALSE(fs::exists(path("vout")));
}

TEST_P(OutOfCoreApp, SortsInPlaceAndThroughPipes) {
  const std::vector<int32_t> keys = random_keys<int32_t>(scale().count, 21);
  const std::vector<int32_t> sorted = gather(keys, stable_order(keys, false));
  write_file(path("data.bin"), as_bytes(keys));
  RunResult result = run("data.bin -o data.bin" + caps(true));
  ASSERT_EQ(result.status, 0) << result.err;
  expect_clean(result, "out of core, buckets in spill files");
  EXPECT_EQ(from_bytes<int32_t>(read_file(path("data.bin"))), sorted);

  write_file(path("data.bin"), as_bytes(keys));
  result = run("- --type i32 < data.bin" + caps(false));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("plan: out of core"), std::string::npos) << result.err;
  EXPECT_EQ(from_bytes<int32_t>(result.out), sorted);
}

TEST_P(OutOfCoreApp, AutoBackendSortsOutOfCoreRatherThanFail) {
  const std::vector<uint32_t> keys = random_keys<uint32_t>(scale().count, 3);
  write_file(path("in.bin"), as_bytes(keys));
  // -j 1: the file is over auto's 2 MiB a thread, so auto takes the GPU where there is one.
  const RunResult result = run("in.bin -t u32 -j 1 -o out.bin --backend auto" + caps(false), false);
  ASSERT_EQ(result.status, 0) << result.err;
  expect_clean(result, "out of core");
  EXPECT_EQ(from_bytes<uint32_t>(read_file(path("out.bin"))), gather(keys, stable_order(keys, false)));
}

TEST_P(OutOfCoreApp, ASpillErrorWhileLaterChunksArePartitionedIsOneError) {
  // The bucket store fails while the backend still partitions later chunks (the GPU keeps two in flight): one error
  // line, the target untouched, and no chunk copied into buffers already freed (no crash, no hang).
  write_file(path("in.bin"), as_bytes(random_keys<uint32_t>(scale().count, 9)));
  write_file(path("out"), "previous");
  // Two spill files of about half the data each: a limit of a quarter of the data stops both mid-partition.
  expect_file_size_limit_error("in.bin -t u32 -o out --gpu-memory " + scale().gpu_memory + " --host-memory " +
                                   scale().host_memory + " --tmpdir spill -j 2",
                               scale().count, "cannot write a spill file in 'spill'");
  EXPECT_EQ(read_file(path("out")), "previous");
  EXPECT_TRUE(fs::is_empty(path("spill")));
}

INSTANTIATE_TEST_SUITE_P(Backends, OutOfCoreApp, testing::Values("cpu", "gpu"),
                         [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// ---- faults (CPU backend: host-only) ------------------------------------------------------------------------------

class OutOfCoreFaults : public OutOfCoreApp {
 protected:
  /// Waits until the process has a file open in the spill directory (its spill file, which has no name).
  bool wait_for_spill_file(pid_t child) const {
    const std::string spill = fs::canonical(path("spill")).string() + "/";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::error_code error;
      for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(child) + "/fd", error)) {
        std::error_code link_error;
        if (fs::read_symlink(entry.path(), link_error).string().rfind(spill, 0) == 0) return true;
      }
      if (::waitpid(child, nullptr, WNOHANG) == child) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
  }
  /// An input that takes a while to spill: enough chunks that a signal arrives in the middle (64 MiB: with the
  /// helper pool 24 MiB went through in under half a second, and once a loaded machine let it end first).
  void write_large_input() {
    write_file(path("in.bin"), as_bytes(random_keys<uint32_t>(size_t(16) << 20, 4)));
    write_file(path("out"), "previous");
  }
  static constexpr const char* large_sort = "in.bin -t u32 -o out --gpu-memory 64KiB --host-memory 8MiB --tmpdir spill";
  void expect_nothing_left() {
    EXPECT_EQ(read_file(path("out")), "previous");
    EXPECT_TRUE(fs::is_empty(path("spill")));
    for (const auto& entry : fs::directory_iterator(directory_)) {
      EXPECT_EQ(entry.path().filename().string().find(".radix_sort."), std::string::npos) << entry.path();
    }
  }
};

TEST_P(OutOfCoreFaults, TheFileSizeLimitWhileWritingTheOutputIsOneError) {
  const std::vector<uint32_t> keys = random_keys<uint32_t>(200'000, 6);
  write_file(path("in.bin"), as_bytes(keys));
  write_file(path("out"), "previous");
  // Host buckets: only the output is written, and it passes the limit.
  expect_file_size_limit_error("in.bin -t u32 -o out --gpu-memory 64KiB --tmpdir spill", 100'000, "cannot write 'out'");
  expect_nothing_left();
}

TEST_P(OutOfCoreFaults, AFullDeviceWhileTheOutputIsWrittenBehindIsOneError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  // Spilled buckets: the output goes through the write-behind's thread, whose error reaches the sort.
  write_file(path("in.bin"), as_bytes(random_keys<uint32_t>(300'000, 8)));
  expect_failure("in.bin -t u32 -o /dev/full --gpu-memory 64KiB --host-memory 1MiB --tmpdir spill",
                 "cannot write '/dev/full'");
  EXPECT_TRUE(fs::is_empty(path("spill")));
}

TEST_P(OutOfCoreFaults, TheFileSizeLimitWhileWritingASpillFileIsOneError) {
  const std::vector<uint32_t> keys = random_keys<uint32_t>(300'000, 7);
  write_file(path("in.bin"), as_bytes(keys));
  write_file(path("out"), "previous");
  // Two threads, so two spill files of about 600 KB each: each passes the limit (the spill is spread over a file a
  // thread, and with 16 files none would).
  expect_file_size_limit_error("in.bin -t u32 -o out --gpu-memory 64KiB --host-memory 1MiB --tmpdir spill -j 2",
                               100'000, "cannot write a spill file in 'spill'");
  expect_nothing_left();
}

TEST_P(OutOfCoreFaults, SignalsInTheMiddleOfASpillLeaveNothing) {
  write_large_input();
  for (const int signal_number : {SIGINT, SIGKILL}) {
    const pid_t child = start(large_sort);
    ASSERT_TRUE(wait_for_spill_file(child)) << "the sort ended before it spilled";
    ::kill(child, signal_number);
    const int status = wait(child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << "signal " << signal_number;
    finish(status);
    expect_nothing_left();
  }
}

TEST_P(OutOfCoreFaults, AnUnusableSpillDirectoryIsOneError) {
  const std::vector<uint32_t> keys = random_keys<uint32_t>(300'000, 1);
  write_file(path("in.bin"), as_bytes(keys));
  const std::string sort = "in.bin -t u32 -o out --gpu-memory 16KiB --host-memory 1MiB";
  expect_failure(sort + " --tmpdir missing", "cannot create a spill file in 'missing': No such file or directory");
  write_file(path("plain"), "x");
  expect_failure(sort + " --tmpdir plain", "cannot create a spill file in 'plain': Not a directory");
}

TEST_P(OutOfCoreFaults, ALockedSpillDirectoryIsOneError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a directory without permissions";
  const std::vector<uint32_t> keys = random_keys<uint32_t>(300'000, 1);
  write_file(path("in.bin"), as_bytes(keys));
  const std::string sort = "in.bin -t u32 -o out --gpu-memory 16KiB --host-memory 1MiB";
  fs::create_directories(path("locked"));
  fs::permissions(path("locked"), fs::perms::none);
  expect_failure(sort + " --tmpdir locked", "cannot create a spill file in 'locked': Permission denied");
  fs::permissions(path("locked"), fs::perms::owner_all);
}

TEST_P(OutOfCoreFaults, AnUnusableTmpdirIsAnErrorOnEveryPath) {
  // A small input that sorts in core, one that sorts out of core in host memory, one that spills, and --check: each
  // fails up front where --tmpdir takes no spill file, though only one of them would spill.
  write_file(path("in.bin"), as_bytes(random_keys<uint32_t>(300'000, 1)));
  write_file(path("plain"), "x");
  const std::vector<std::string> sorts = {"in.bin -t u32 -o out", "in.bin -t u32 -o out --gpu-memory 16KiB",
                                          "in.bin -t u32 -o out --gpu-memory 16KiB --host-memory 1MiB"};
  for (const std::string& sort : sorts) {
    expect_failure_leaving_target(sort + " --tmpdir missing",
                                  "--tmpdir: cannot create a spill file in 'missing': No such file or directory");
    expect_failure_leaving_target(sort + " --tmpdir plain",
                                  "--tmpdir: cannot create a spill file in 'plain': Not a directory");
  }
  const RunResult check = run("in.bin -t u32 --check --tmpdir missing");
  EXPECT_EQ(check.status, 2);
  EXPECT_EQ(check.err, "radix_sort: error: --tmpdir: cannot create a spill file in 'missing': No such file or "
                       "directory\n");
  if (::geteuid() != 0) {  // root writes into a directory without permissions
    fs::create_directories(path("locked"));
    fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    expect_failure_leaving_target(sorts[0] + " --tmpdir locked",
                                  "--tmpdir: cannot create a spill file in 'locked': Permission denied");
    fs::permissions(path("locked"), fs::perms::owner_all);
  }
}

TEST_P(OutOfCoreFaults, AnInputThatShrinksWhileReadIsOneError) {
  write_large_input();
  const pid_t child = start(large_sort);
  ASSERT_TRUE(wait_for_spill_file(child)) << "the sort ended before it spilled";
  fs::resize_file(path("in.bin"), 4096);
  const RunResult result = finish(wait(child));
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("radix_sort: error: 'in.bin' shrank while being read", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  expect_nothing_left();
}

TEST_P(OutOfCoreFaults, ABucketPartitionedAgainSpillsWhereItAndItsParentWouldNotFitInHostMemory) {
  // Every key in one top byte: the one bucket is partitioned again while the top level still holds all the data.
  std::vector<uint32_t> keys = random_keys<uint32_t>(1'000'000, 21);
  for (uint32_t& key : keys) key = 0x12000000u | (key & 0x00ffffffu);
  write_file(path("keys.bin"), as_bytes(keys));
  std::vector<uint32_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  // 10 MiB: room for the 3.8 MiB of keys once (buckets in host memory), not for the bucket's copy beside them.
  // 64 MiB: room for both.
  for (const bool tight : {true, false}) {
    const std::string host_memory = tight ? "10MiB" : "64MiB";
    const RunResult result =
        run("keys.bin -t u32 -o keys.out --gpu-memory 1MiB --host-memory " + host_memory + " --tmpdir spill --stats");
    ASSERT_EQ(result.status, 0) << result.err;
    expect_clean(result, "out of core, buckets in host memory");
    EXPECT_GE(plan_number(result.err, "partitioned again"), 1u) << result.err;
    EXPECT_EQ(result.err.find(" spilled") != std::string::npos, tight) << result.err;
    EXPECT_EQ(from_bytes<uint32_t>(read_file(path("keys.out"))), sorted);
  }
}

INSTANTIATE_TEST_SUITE_P(CpuBackend, OutOfCoreFaults, testing::Values("cpu"));

}  // namespace
}  // namespace radix_sort
