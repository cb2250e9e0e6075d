// DirectReader against a plain pread oracle, on both backends (io_uring, pread pool),
// on the real disk (O_DIRECT) and on tmpfs when available; fault injection through the
// FaultInjector seam; fallback behaviour.
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/io/block_reader.h"
#include "storage/io/direct_reader.h"
#include "storage/io/direct_reader_internal.h"
#include "support/files.h"
#include "support/random_seed.h"

#ifndef SEER_IO_TEST_DIR
#define SEER_IO_TEST_DIR "."
#endif

namespace seer {
namespace {

constexpr int64_t kOddFileBytes = 4111 * 47;  // not a multiple of any block size

std::string MakeTempDir(const std::string& parent) {
  std::string templ = parent + "/seer_io_test_XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return "";
  return std::string(buf.data());
}

bool IsTmpfs(const std::string& dir) {
  struct statfs fs;
  return statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

// The oracle: plain buffered pread of the same range.
std::string OracleRead(const std::string& path, int64_t offset, int64_t length) {
  UniqueFd fd = UniqueFd::Open(path, O_RDONLY).value();
  std::string out(static_cast<size_t>(length), '\0');
  Status st = PreadFull(fd.get(), out.data(), length, offset, path);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

struct Batch {
  std::vector<ReadRequest> requests;
  std::vector<std::string> buffers;
};

// Random requests covering the awkward cases: zero length, the last byte, the whole
// file, spans crossing block boundaries, many overlapping and duplicated ranges.
Batch RandomBatch(int64_t file_bytes, size_t count, int64_t max_len, uint64_t seed,
                  bool whole_file = true) {
  std::mt19937_64 rng(seed);
  Batch batch;
  batch.buffers.resize(count);
  for (size_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    int64_t length = 0;
    switch (i % 10) {
      case 0:  // zero length, anywhere including EOF
        offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(file_bytes + 1));
        length = 0;
        break;
      case 1:  // last byte
        offset = file_bytes - 1;
        length = 1;
        break;
      case 2: {  // across a 4096 boundary
        const int64_t boundary =
            4096 * (1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(file_bytes / 4096)));
        offset = std::max<int64_t>(0, boundary - 1 - static_cast<int64_t>(rng() % 700));
        length = std::min<int64_t>(file_bytes - offset, 2 + static_cast<int64_t>(rng() % 900));
        break;
      }
      case 3:  // the whole file now and then
        if (whole_file && i % 1000 == 3) {
          offset = 0;
          length = file_bytes;
          break;
        }
        [[fallthrough]];
      default:
        offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(file_bytes));
        length = 1 + static_cast<int64_t>(
                         rng() % static_cast<uint64_t>(std::min(max_len, file_bytes - offset)));
        break;
    }
    batch.buffers[i].assign(static_cast<size_t>(length), '\xAB');
    batch.requests.push_back({offset, length, batch.buffers[i].data()});
  }
  return batch;
}

void ExpectMatchesOracle(const std::string& path, const Batch& batch) {
  const int64_t size = FileSizeBytes(path).value();
  const std::string all = OracleRead(path, 0, size);
  size_t mismatches = 0;
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const ReadRequest& r = batch.requests[i];
    if (std::memcmp(batch.buffers[i].data(), all.data() + r.offset_bytes,
                    static_cast<size_t>(r.length_bytes)) != 0) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "request " << i << " offset " << r.offset_bytes << " length "
                      << r.length_bytes << " differs from pread";
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

// Reads `batch` through `reader` (it must succeed) and compares every buffer with the
// pread oracle of `path`. Returns the read's stats.
ReadStats ReadExpectingOracle(BlockReader& reader, const std::string& path, const Batch& batch) {
  ReadStats stats;
  const Status st = reader.ReadBatch(batch.requests, &stats);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (st.ok()) ExpectMatchesOracle(path, batch);
  return stats;
}

bool UringAvailable(std::string* why) {
  DirectReaderOptions options;
  options.mode = IoMode::kUring;
  options.direct = false;
  options.quiet = true;
  auto reader = OpenDirectReader("/proc/self/cmdline", options);
  if (!reader.ok()) *why = reader.status().ToString();
  return reader.ok() || reader.status().code() != StatusCode::kUnsupported;
}

// ---- parameterized over backend x file system --------------------------------------

enum class Fs { kDisk, kTmpfs };

class DirectReaderTest : public ::testing::TestWithParam<std::tuple<IoMode, Fs>> {
 protected:
  void SetUp() override {
    mode_ = std::get<0>(GetParam());
    const Fs fs = std::get<1>(GetParam());
    if (mode_ == IoMode::kUring) {
      std::string why;
      if (!UringAvailable(&why)) GTEST_SKIP() << "io_uring refused here: " << why;
    }
    std::string parent = SEER_IO_TEST_DIR;
    if (fs == Fs::kTmpfs) {
      parent = "/dev/shm";
      if (!IsTmpfs(parent)) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    }
    dir_ = MakeTempDir(parent);
    ASSERT_FALSE(dir_.empty()) << "mkdtemp under " << parent << ": " << std::strerror(errno);
    if (fs == Fs::kDisk && IsTmpfs(dir_)) {
      std::fprintf(stderr, "note: %s is on tmpfs; the disk variant is not O_DIRECT-tested\n",
                   dir_.c_str());
    }
  }
  void TearDown() override {
    if (!dir_.empty()) {
      for (const std::string& f : files_) ::unlink(f.c_str());
      ::rmdir(dir_.c_str());
    }
  }
  std::string NewFile(const std::string& name, int64_t bytes, uint64_t seed) {
    const std::string path = dir_ + "/" + name;
    testing::WriteRandomFile(path, static_cast<size_t>(bytes), seed);
    files_.push_back(path);
    return path;
  }
  // The backend under test, quiet, 4 pread threads; the queue depth and merge limit when
  // given (else DirectReaderOptions' defaults), and the fault injector.
  DirectReaderOptions Options(std::optional<int> queue_depth = {}, std::optional<int64_t> max_merge_bytes = {},
                              std::shared_ptr<FaultInjector> faults = nullptr) const {
    DirectReaderOptions options;
    options.mode = mode_;
    options.quiet = true;
    options.pread_threads = 4;
    if (queue_depth) options.queue_depth = *queue_depth;
    if (max_merge_bytes) options.max_merge_bytes = *max_merge_bytes;
    options.faults = std::move(faults);
    return options;
  }
  std::unique_ptr<BlockReader> Open(const std::string& path, DirectReaderOptions options) {
    auto reader = OpenDirectReader(path, options);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return nullptr;
    EXPECT_EQ((*reader)->mode(), mode_);
    return std::move(reader).value();
  }

  IoMode mode_ = IoMode::kAuto;
  std::string dir_;
  std::vector<std::string> files_;
};

TEST_P(DirectReaderTest, MatchesPreadOracleOnRandomOddRequests) {
  testing::RandomTestSeed seed;
  const std::string path = NewFile("odd.bin", kOddFileBytes, seed.value);
  // Merges of at most 8 KiB: long requests are split over reads.
  DirectReaderOptions options = Options(/*queue_depth=*/7, /*max_merge_bytes=*/8192);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->file_size_bytes(), kOddFileBytes);
  EXPECT_EQ(reader->alignment_bytes(), DirectIoAlignment(UniqueFd::Open(path, O_RDONLY)->get()));
  Batch batch = RandomBatch(kOddFileBytes, 3000, 9000, seed.value + 1);
  const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
  EXPECT_EQ(stats.requests, 3000);
  EXPECT_GT(stats.device_reads, options.queue_depth);
}

TEST_P(DirectReaderTest, ThousandsOfSparseRequestsBeyondQueueDepth) {
  testing::RandomTestSeed seed;
  const int64_t bytes = (16 << 20) + 123;
  const std::string path = NewFile("sparse.bin", bytes, seed.value);
  // Same-block merging only (0): many device reads.
  DirectReaderOptions options = Options(/*queue_depth=*/16, /*max_merge_bytes=*/0);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  Batch batch = RandomBatch(bytes, 4000, 300, seed.value + 1, /*whole_file=*/false);
  const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
  EXPECT_GT(stats.device_reads, 50 * options.queue_depth);
  // Same reader, second batch: nothing stale left in the ring between calls.
  Batch again = RandomBatch(bytes, 500, 5000, seed.value + 2);
  ReadExpectingOracle(*reader, path, again);
}

// Records which threads complete device reads. The first read completed on each thread
// waits (up to 10 s) until `rendezvous` threads have shown up, so a batch split over
// rings cannot quietly run all its shards on the caller. `rule` may replace the result.
class ThreadRecordingFaults : public FaultInjector {
 public:
  using Rule = std::function<int(int64_t offset, int result)>;
  ThreadRecordingFaults(size_t rendezvous, Rule rule)
      : rendezvous_(rendezvous), rule_(std::move(rule)) {}
  int FilterResult(int64_t offset, int64_t, int result) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++calls_;
      if (threads_.insert(std::this_thread::get_id()).second) {
        if (threads_.size() >= rendezvous_) {
          cv_.notify_all();
        } else {
          cv_.wait_for(lock, std::chrono::seconds(10),
                       [&] { return threads_.size() >= rendezvous_; });
        }
      }
    }
    return rule_ ? rule_(offset, result) : result;
  }
  size_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_.size();
  }
  int64_t calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  void Reset(size_t rendezvous) {
    std::lock_guard<std::mutex> lock(mu_);
    rendezvous_ = rendezvous;
    threads_.clear();
    calls_ = 0;
  }

 private:
  size_t rendezvous_;
  const Rule rule_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::thread::id> threads_;
  int64_t calls_ = 0;
};

TEST_P(DirectReaderTest, BatchSplitOverRingsMatchesPreadOracle) {
  testing::RandomTestSeed seed;
  const int64_t bytes = (4 << 20) + 4111;
  const std::string path = NewFile("rings.bin", bytes, seed.value);
  for (int rings : {1, 2, 3}) {
    for (bool submit_per_read : {false, true}) {
      SCOPED_TRACE("rings " + std::to_string(rings) + " submit_per_read " +
                   std::to_string(submit_per_read));
      const size_t expected_threads =
          mode_ == IoMode::kUring ? static_cast<size_t>(rings) : 1;
      auto faults = std::make_shared<ThreadRecordingFaults>(expected_threads, nullptr);
      // Queue depth 7, odd: shards get 3 + 2 + 2 (or 4 + 3); same-block merging only: ~3000
      // device reads.
      DirectReaderOptions options = Options(/*queue_depth=*/7, /*max_merge_bytes=*/0, faults);
      options.rings = rings;
      options.submit_per_read = submit_per_read;
      auto reader = Open(path, options);
      ASSERT_NE(reader, nullptr);
      Batch batch = RandomBatch(bytes, 3000, 300, seed.value + rings, /*whole_file=*/false);
      const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
      ASSERT_GE(stats.device_reads, 64 * rings);
      if (mode_ == IoMode::kUring) {
        EXPECT_EQ(faults->threads(), expected_threads);
      }
      // Small batches stay on the caller's ring.
      faults->Reset(1);
      Batch small = RandomBatch(bytes, 20, 3000, seed.value + 10 + rings, /*whole_file=*/false);
      ReadExpectingOracle(*reader, path, small);
      if (mode_ == IoMode::kUring) {
        EXPECT_EQ(faults->threads(), 1u);
      }
    }
  }
}

TEST_P(DirectReaderTest, MergedReadsTransferOnlyTheBlocksRequested) {
  testing::RandomTestSeed seed;
  const std::string path = NewFile("blocks_only.bin", kOddFileBytes, seed.value);
  for (int64_t max_merge : {int64_t{0}, int64_t{1} << 20}) {
    // 0 = one block per read; 1 MiB > the file.
    DirectReaderOptions options = Options(/*queue_depth=*/{}, max_merge);
    auto reader = Open(path, options);
    ASSERT_NE(reader, nullptr);
    const int64_t a = reader->alignment_bytes();
    Batch batch = RandomBatch(kOddFileBytes, 150, 2000, seed.value + 1, /*whole_file=*/false);
    const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
    // Brute force: every aligned block any byte of any request falls in.
    std::set<int64_t> blocks;
    for (const ReadRequest& r : batch.requests) {
      for (int64_t byte = r.offset_bytes; byte < r.offset_bytes + r.length_bytes; ++byte) {
        blocks.insert(byte / a);
      }
    }
    int64_t runs = 0;
    for (int64_t b : blocks) runs += blocks.count(b - 1) == 0 ? 1 : 0;
    EXPECT_EQ(stats.device_bytes, static_cast<int64_t>(blocks.size()) * a);
    EXPECT_EQ(stats.device_reads, max_merge == 0 ? static_cast<int64_t>(blocks.size()) : runs);
  }
}

TEST_P(DirectReaderTest, SameBlockRequestsAreReadOnce) {
  const std::string path = NewFile("blocks.bin", kOddFileBytes, 7);
  DirectReaderOptions options = Options(/*queue_depth=*/{}, /*max_merge_bytes=*/0);  // same-block merging only
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  const int64_t a = reader->alignment_bytes();
  ASSERT_GE(a, 8);
  char x[3], y[3], z[3];
  ReadStats one_block;
  ASSERT_TRUE(reader->ReadBatch({{a + 1, 3, x}, {2 * a - 4, 3, y}}, &one_block).ok());
  EXPECT_EQ(one_block.requests, 2);
  EXPECT_EQ(one_block.device_reads, 1);
  EXPECT_EQ(one_block.device_bytes, a);
  EXPECT_EQ(std::string(x, 3), OracleRead(path, a + 1, 3));
  EXPECT_EQ(std::string(y, 3), OracleRead(path, 2 * a - 4, 3));

  ReadStats adjacent_unmerged;  // blocks 1 and 2, merge limit one block
  ASSERT_TRUE(reader->ReadBatch({{2 * a - 1, 3, z}}, &adjacent_unmerged).ok());
  EXPECT_EQ(adjacent_unmerged.device_reads, 2);
  EXPECT_EQ(std::string(z, 3), OracleRead(path, 2 * a - 1, 3));

  options.max_merge_bytes = 1 << 20;
  auto merging = Open(path, options);
  ReadStats adjacent_merged;  // blocks 1, 2 and 3 in one read; block 10 separately
  ASSERT_TRUE(
      merging->ReadBatch({{2 * a - 1, 3, z}, {a, 1, x}, {3 * a, 2, y}, {10 * a, 1, x + 2}},
                         &adjacent_merged)
          .ok());
  EXPECT_EQ(adjacent_merged.device_reads, 2);
  EXPECT_EQ(adjacent_merged.device_bytes, 4 * a);

  ReadStats empty;
  ASSERT_TRUE(merging->ReadBatch(nullptr, 0, &empty).ok());
  ASSERT_TRUE(merging->ReadBatch({{5, 0, nullptr}, {kOddFileBytes, 0, nullptr}}, &empty).ok());
  EXPECT_EQ(empty.requests, 2);
  EXPECT_EQ(empty.device_reads, 0);
}

TEST_P(DirectReaderTest, ReadingPastEofIsAnErrorNamingThePath) {
  const std::string path = NewFile("short.bin", 1000, 3);
  auto reader = Open(path, Options());
  ASSERT_NE(reader, nullptr);
  char buf[16];
  Status st = reader->ReadBatch({{995, 6, buf}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("995"), std::string::npos) << st.message();
  // The last bytes themselves are fine even though the aligned span passes EOF.
  ASSERT_TRUE(reader->ReadBatch({{994, 6, buf}}).ok());
  EXPECT_EQ(std::string(buf, 6), OracleRead(path, 994, 6));
}

TEST_P(DirectReaderTest, ConcurrentBatchesFromEightThreads) {
  testing::RandomTestSeed seed;
  const int64_t bytes = (4 << 20) + 4111;
  const std::string path = NewFile("concurrent.bin", bytes, seed.value);
  DirectReaderOptions options = Options(/*queue_depth=*/8);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  std::vector<Batch> batches;
  for (int t = 0; t < 8; ++t) batches.push_back(RandomBatch(bytes, 600, 3000, seed.value + 10 + t));
  std::vector<Status> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3 && results[t].ok(); ++round) {
        results[t] = reader->ReadBatch(batches[t].requests);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_TRUE(results[t].ok()) << results[t].ToString();
    ExpectMatchesOracle(path, batches[t]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Backends, DirectReaderTest,
    ::testing::Combine(::testing::Values(IoMode::kUring, IoMode::kPread),
                       ::testing::Values(Fs::kDisk, Fs::kTmpfs)),
    [](const ::testing::TestParamInfo<std::tuple<IoMode, Fs>>& info) {
      return std::string(IoModeName(std::get<0>(info.param))) +
             (std::get<1>(info.param) == Fs::kDisk ? "Disk" : "Tmpfs");
    });

// ---- fault injection (both backends, real disk) ------------------------------------

// Applies a rule to each completed device read; records what it saw.
class ScriptedFaults : public FaultInjector {
 public:
  using Rule = std::function<int(int64_t offset, int64_t length, int result, int call)>;
  explicit ScriptedFaults(Rule rule) : rule_(std::move(rule)) {}
  int FilterResult(int64_t offset, int64_t length, int result) override {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({offset, length});
    return rule_(offset, length, result, static_cast<int>(seen_.size()) - 1);
  }
  std::vector<std::pair<int64_t, int64_t>> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  Rule rule_;
  std::mutex mu_;
  std::vector<std::pair<int64_t, int64_t>> seen_;
};

class DirectReaderFaultTest : public DirectReaderTest {};

// 8 bytes at the start of every 4 KiB block of a `bytes`-byte file, into `dest`: one
// device read per block when nothing is merged.
std::vector<ReadRequest> BlockHeads(int64_t bytes, std::vector<char>* dest) {
  dest->assign(static_cast<size_t>(bytes / 4096) * 8, '\0');
  std::vector<ReadRequest> requests;
  for (int64_t block = 0; block < bytes / 4096; ++block) {
    requests.push_back({block * 4096, 8, dest->data() + block * 8});
  }
  return requests;
}

// `st` is the EIO of the read at `offset` of `path`, naming both.
void ExpectEioAt(const Status& st, const std::string& path, int64_t offset) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.sys_errno(), EIO);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("offset " + std::to_string(offset)), std::string::npos) << st.message();
}

TEST_P(DirectReaderFaultTest, ShortReadIsResubmitted) {
  const std::string path = NewFile("short_reads.bin", kOddFileBytes, 11);
  std::set<int64_t> shortened;
  std::mutex mu;
  // The first attempt of every read returns only 100 bytes (ending mid-block).
  auto faults = std::make_shared<ScriptedFaults>([&](int64_t offset, int64_t, int result,
                                                     int) {
    std::lock_guard<std::mutex> lock(mu);
    if (result > 100 && shortened.insert(offset).second) return 100;
    return result;
  });
  DirectReaderOptions options = Options(/*queue_depth=*/4, /*max_merge_bytes=*/4 * 4096, faults);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  Batch batch = RandomBatch(kOddFileBytes, 400, 20000, 12);
  const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
  const auto seen = faults->seen();
  EXPECT_GT(static_cast<int64_t>(seen.size()), stats.device_reads);  // resubmissions happened
  if (reader->direct()) {
    for (const auto& [offset, length] : seen) {
      EXPECT_EQ(offset % reader->alignment_bytes(), 0) << "unaligned O_DIRECT resubmission";
      EXPECT_EQ(length % reader->alignment_bytes(), 0) << "unaligned O_DIRECT length";
    }
  }
}

TEST_P(DirectReaderFaultTest, EagainAndEintrAreRetried) {
  const std::string path = NewFile("eagain.bin", kOddFileBytes, 13);
  std::mutex mu;
  std::map<int64_t, int> attempts;
  auto faults = std::make_shared<ScriptedFaults>([&](int64_t offset, int64_t, int result,
                                                     int) {
    std::lock_guard<std::mutex> lock(mu);
    const int n = attempts[offset]++;
    if (n == 0) return -EAGAIN;
    if (n == 1) return -EINTR;
    return result;
  });
  DirectReaderOptions options = Options(/*queue_depth=*/8, /*max_merge_bytes=*/0, faults);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  Batch batch = RandomBatch(kOddFileBytes, 300, 700, 14);
  const ReadStats stats = ReadExpectingOracle(*reader, path, batch);
  EXPECT_EQ(static_cast<int64_t>(faults->seen().size()), 3 * stats.device_reads);
}

TEST_P(DirectReaderFaultTest, EioIsReportedWithPathAndOffsetAfterDraining) {
  const int64_t bytes = 8 << 20;
  const std::string path = NewFile("eio.bin", bytes, 15);
  const int64_t bad_offset = 3 << 20;  // 4096-aligned, so a device read starts here
  auto faults = std::make_shared<ScriptedFaults>(
      [&](int64_t offset, int64_t, int result, int) {
        return offset == bad_offset ? -EIO : result;
      });
  DirectReaderOptions options = Options(/*queue_depth=*/32, /*max_merge_bytes=*/0, faults);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(4096 % reader->alignment_bytes(), 0);
  std::vector<char> dest;
  const std::vector<ReadRequest> requests = BlockHeads(bytes, &dest);
  Status st = reader->ReadBatch(requests);
  ASSERT_NO_FATAL_FAILURE(ExpectEioAt(st, path, bad_offset));
  EXPECT_NE(st.message().find(std::strerror(EIO)), std::string::npos) << st.message();
  // Submission stopped early: far fewer reads than the batch holds.
  EXPECT_LT(faults->seen().size(), requests.size());
  // Everything in flight was reaped: the next batch on the same threads is correct.
  Batch batch = RandomBatch(2 << 20, 200, 5000, 16);
  ReadExpectingOracle(*reader, path, batch);
}

TEST_P(DirectReaderFaultTest, EofIsReported) {
  const std::string path = NewFile("eof.bin", kOddFileBytes, 17);
  auto faults = std::make_shared<ScriptedFaults>(
      [&](int64_t offset, int64_t, int result, int) { return offset == 8192 ? 0 : result; });
  DirectReaderOptions options = Options(/*queue_depth=*/{}, /*max_merge_bytes=*/0, faults);
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  char buf[64];
  Status st = reader->ReadBatch({{100, 10, buf}, {8192 + 5, 64, buf}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("offset 8192"), std::string::npos) << st.message();
}

TEST_P(DirectReaderFaultTest, ShortReadsWithoutProgressFailInsteadOfSpinning) {
  const std::string path = NewFile("stuck.bin", kOddFileBytes, 19);
  auto faults = std::make_shared<ScriptedFaults>(
      [&](int64_t, int64_t, int result, int) { return result > 0 ? 1 : result; });
  DirectReaderOptions options = Options(/*queue_depth=*/{}, /*max_merge_bytes=*/{}, faults);
  options.direct = true;
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  if (!reader->direct()) GTEST_SKIP() << "O_DIRECT refused: buffered reads always progress";
  char buf[16];
  Status st = reader->ReadBatch({{4096 + 100, 16, buf}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no progress"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

TEST_P(DirectReaderFaultTest, EioInOneRingStopsAllRingsAndIsReportedAfterDraining) {
  const int64_t bytes = 8 << 20;
  const std::string path = NewFile("eio_rings.bin", bytes, 23);
  std::atomic<int64_t> bad_offset{-1};
  const size_t rings = mode_ == IoMode::kUring ? 2 : 1;
  auto faults = std::make_shared<ThreadRecordingFaults>(rings, [&](int64_t offset, int result) {
    return offset == bad_offset.load() ? -EIO : result;
  });
  DirectReaderOptions options = Options(/*queue_depth=*/16, /*max_merge_bytes=*/0, faults);
  options.rings = 2;
  auto reader = Open(path, options);
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(4096 % reader->alignment_bytes(), 0);
  std::vector<char> dest;
  const std::vector<ReadRequest> requests = BlockHeads(bytes, &dest);  // 2048 device reads
  // One ring reads the lower half of the file, the other the upper: fail in each in turn.
  for (int64_t bad : {int64_t{6} << 20, int64_t{1} << 20}) {
    SCOPED_TRACE("bad offset " + std::to_string(bad));
    faults->Reset(rings);
    bad_offset = bad;
    Status st = reader->ReadBatch(requests);
    ASSERT_NO_FATAL_FAILURE(ExpectEioAt(st, path, bad));
    if (mode_ == IoMode::kUring) {
      EXPECT_EQ(faults->threads(), rings);
    }
    // Both rings stopped issuing: far fewer reads than the batch holds.
    const int64_t calls = faults->calls();
    EXPECT_LT(calls, static_cast<int64_t>(requests.size()));
    // Nothing is still in flight after ReadBatch returned.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(faults->calls(), calls);
  }
  // Every ring was drained: the next batches on the same threads are correct.
  bad_offset = -1;
  Batch batch = RandomBatch(bytes, 3000, 300, 24, /*whole_file=*/false);
  ReadExpectingOracle(*reader, path, batch);
}

INSTANTIATE_TEST_SUITE_P(Backends, DirectReaderFaultTest,
                         ::testing::Combine(::testing::Values(IoMode::kUring, IoMode::kPread),
                                            ::testing::Values(Fs::kDisk)),
                         [](const ::testing::TestParamInfo<std::tuple<IoMode, Fs>>& info) {
                           return std::string(IoModeName(std::get<0>(info.param)));
                         });

// ---- modes, fallback, alignment ----------------------------------------------------

TEST(DirectReaderModeTest, ParseIoModeRoundTripsAndRejectsBogus) {
  for (IoMode mode : {IoMode::kAuto, IoMode::kUring, IoMode::kPread}) {
    auto parsed = ParseIoMode(IoModeName(mode));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, mode);
  }
  auto bogus = ParseIoMode("bogus");
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bogus.status().message().find("bogus"), std::string::npos);
}

TEST(DirectReaderModeTest, PreadModeGivesIdenticalBytesToUring) {
  std::string why;
  if (!UringAvailable(&why)) GTEST_SKIP() << "io_uring refused here: " << why;
  const std::string dir = MakeTempDir(SEER_IO_TEST_DIR);
  const std::string path = dir + "/same.bin";
  testing::WriteRandomFile(path, kOddFileBytes, /*seed=*/21);
  DirectReaderOptions options;
  options.quiet = true;
  options.mode = IoMode::kUring;
  auto uring = OpenDirectReader(path, options);
  options.mode = IoMode::kPread;
  auto pread = OpenDirectReader(path, options);
  ASSERT_TRUE(uring.ok() && pread.ok());
  Batch a = RandomBatch(kOddFileBytes, 2000, 5000, 22);
  Batch b = RandomBatch(kOddFileBytes, 2000, 5000, 22);
  ReadStats sa, sb;
  ASSERT_TRUE((*uring)->ReadBatch(a.requests, &sa).ok());
  ASSERT_TRUE((*pread)->ReadBatch(b.requests, &sb).ok());
  EXPECT_EQ(a.buffers, b.buffers);
  EXPECT_EQ(sa.device_reads, sb.device_reads);
  EXPECT_EQ(sa.device_bytes, sb.device_bytes);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(DirectReaderModeTest, RefusedIoUringFallsBackWithOneWarning) {
  const std::string dir = MakeTempDir(SEER_IO_TEST_DIR);
  const std::string path = dir + "/fallback.bin";
  testing::WriteRandomFile(path, 10000, /*seed=*/23);
  internal::OverrideIoUringProbeForTesting(-EPERM);
  internal::ResetFallbackWarningsForTesting();
  DirectReaderOptions options;
  options.pread_threads = 3;
  ::testing::internal::CaptureStderr();
  auto first = OpenDirectReader(path, options);
  auto second = OpenDirectReader(path, options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  options.mode = IoMode::kUring;
  auto forced = OpenDirectReader(path, options);
  internal::OverrideIoUringProbeForTesting(1);

  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)->mode(), IoMode::kPread);
  EXPECT_EQ((*second)->mode(), IoMode::kPread);
  const std::string warning =
      "seer: warning: io_uring unavailable (io_uring_queue_init: Operation not permitted); "
      "using a 3-thread pread pool";
  EXPECT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_EQ(err.find(warning), err.rfind(warning)) << "warned twice: " << err;
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(forced.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(forced.status().message().find("Operation not permitted"), std::string::npos);
  char buf[100];
  ASSERT_TRUE((*first)->ReadBatch({{9900, 100, buf}}).ok());
  EXPECT_EQ(std::string(buf, 100), OracleRead(path, 9900, 100));
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(DirectReaderModeTest, MissingFileNamesThePath) {
  auto reader = OpenDirectReader("/nonexistent/seer/features.bin");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_NE(reader.status().message().find("/nonexistent/seer/features.bin"),
            std::string::npos);
}

TEST(DirectReaderModeTest, AlignmentIsAPowerOfTwo) {
  UniqueFd fd = UniqueFd::Open(SEER_IO_TEST_DIR, O_RDONLY).value();
  const int64_t a = DirectIoAlignment(fd.get());
  EXPECT_GE(a, 512);
  EXPECT_EQ(a & (a - 1), 0);
}

}  // namespace
}  // namespace seer
