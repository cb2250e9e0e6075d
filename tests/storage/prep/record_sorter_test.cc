// RecordSorter (storage/prep/record_sorter.h) against std::sort of the same (key,
// payload) records: keys of every length around the 16 bytes kept in a record, shared
// prefixes, zero bytes, repeats; a memory share small enough for many spilled runs and
// runs cut into chunks sorted on several threads; the same files whatever the thread
// count.
#include "storage/prep/record_sorter.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "support/test_support.h"

namespace seer {
namespace {

using Record = std::pair<std::string, uint64_t>;

// Keys that stress the 16-byte head: lengths 0..40 over a tiny alphabet with '\0' (so
// many keys are prefixes of others and ties reach the tail), a common prefix on most.
std::vector<Record> RandomRecords(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<Record> records;
  const std::string alphabet("\0\1ab\xff", 5);
  for (int i = 0; i < count; ++i) {
    const size_t length = rng() % 41;
    std::string key = rng() % 4 != 0 ? std::string("\1user_") : std::string();
    while (key.size() < length) key.push_back(alphabet[rng() % alphabet.size()]);
    key.resize(std::min(key.size(), length));
    records.emplace_back(std::move(key), rng() % 1000);  // repeated payloads too
  }
  return records;
}

std::vector<Record> SortAll(const std::vector<Record>& input, const std::string& dir, int64_t memory, int* runs) {
  RecordSorter sorter(dir, "t", memory);
  for (const auto& [key, payload] : input) EXPECT_TRUE(sorter.Add(key, payload).ok());
  std::vector<Record> out;
  EXPECT_TRUE(sorter.StartMerge().ok());
  *runs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) *runs += e.path().extension() == ".run";
  std::string_view key;
  uint64_t payload;
  for (;;) {
    auto more = sorter.Next(&key, &payload);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    out.emplace_back(std::string(key), payload);
  }
  return out;
}

TEST(RecordSorterTest, MatchesStdSortThroughSpilledRuns) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<Record> input = RandomRecords(seed, 150000);
    std::vector<Record> expected = input;
    std::sort(expected.begin(), expected.end());
    const std::string dir = testing::MakeTempDir("record_sorter");
    int runs = 0;
    // 64 KiB: half for records of 40 bytes, ~800 per run.
    EXPECT_EQ(SortAll(input, dir, 64 << 10, &runs), expected);
    EXPECT_GE(runs, 150);
    // One run in memory, sorted in two chunks (65536 records at least each) on 4 threads
    // and merged as written.
    tbb::task_arena four(4);
    std::vector<Record> got;
    four.execute([&] { got = SortAll(input, dir, 64 << 20, &runs); });
    EXPECT_EQ(got, expected);
    EXPECT_EQ(runs, 1);
    EXPECT_TRUE(std::filesystem::is_empty(dir));  // merged runs are removed
  }
}

// Byte-identical run files whatever the thread count (the order is total).
TEST(RecordSorterTest, RunFilesDoNotDependOnThreads) {
  const std::vector<Record> input = RandomRecords(9, 200000);
  std::string bytes[2];
  for (int t = 0; t < 2; ++t) {
    const std::string dir = testing::MakeTempDir("record_sorter");
    tbb::task_arena arena(t == 0 ? 1 : 3);
    arena.execute([&] {
      RecordSorter sorter(dir, "t", 64 << 20);
      for (const auto& [key, payload] : input) ASSERT_TRUE(sorter.Add(key, payload).ok());
      ASSERT_TRUE(sorter.StartMerge().ok());
      bytes[t] = testing::ReadFileBytes(dir + "/t-0.run");
    });
  }
  EXPECT_FALSE(bytes[0].empty());
  EXPECT_EQ(bytes[0], bytes[1]);
}

}  // namespace
}  // namespace seer
