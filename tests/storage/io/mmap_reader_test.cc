// The page-cache reader (storage/io/mmap_reader.h) against the file's own bytes: odd
// offsets and lengths, an empty read, the last row; a read past the end is an error
// naming the path and offset.
#include "storage/io/mmap_reader.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/files.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

// A file of `size` random bytes (from `seed`) in a fresh temp dir, and a reader mapping it.
struct MappedFile {
  std::string path;
  std::string bytes;
  std::unique_ptr<BlockReader> reader;  // null (and a test failure) when it does not open
};

MappedFile MapRandomFile(const std::string& temp_prefix, const std::string& name, size_t size, uint64_t seed) {
  MappedFile f;
  f.path = MakeTempDir(temp_prefix) + "/" + name;
  f.bytes = testing::WriteRandomFile(f.path, size, seed);
  auto reader = OpenMmapReader(f.path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (reader.ok()) f.reader = std::move(reader).value();
  return f;
}

TEST(MmapReaderTest, ReadsMatchTheFileAndOutOfRangeIsAnError) {
  const MappedFile f = MapRandomFile("mmap", "data.bin", 4111 * 47, /*seed=*/7);
  ASSERT_NE(f.reader, nullptr);
  const std::string& path = f.path;
  const std::string& bytes = f.bytes;
  BlockReader* const reader = f.reader.get();
  EXPECT_EQ(reader->file_size_bytes(), static_cast<int64_t>(bytes.size()));
  std::vector<std::string> out = {std::string(47, 'x'), std::string(1, 'x'), std::string(0, 'x'),
                                  std::string(4096, 'x')};
  std::vector<ReadRequest> requests = {{47 * 4110, 47, out[0].data()},  // the last row
                                       {0, 1, out[1].data()},
                                       {static_cast<int64_t>(bytes.size()), 0, out[2].data()},
                                       {1000, 4096, out[3].data()}};
  ReadStats stats;
  ASSERT_TRUE(reader->ReadBatch(requests, &stats).ok());
  EXPECT_EQ(out[0], bytes.substr(47 * 4110, 47));
  EXPECT_EQ(out[1], bytes.substr(0, 1));
  EXPECT_EQ(out[3], bytes.substr(1000, 4096));
  EXPECT_EQ(stats.requests, 4);
  EXPECT_GE(stats.device_reads, 0);
  std::vector<ReadRequest> beyond = {{static_cast<int64_t>(bytes.size()) - 10, 11, out[0].data()}};
  Status st = reader->ReadBatch(beyond);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(std::to_string(bytes.size() - 10)), std::string::npos) << st.message();
  EXPECT_FALSE(OpenMmapReader(path + ".missing").ok());
}

// A file truncated after it was mapped: a read of a page past the new end is an error
// naming the file, the page's offset and both sizes (it was SIGBUS, signal 7, before);
// reads of the remaining pages still work, and a second bad read is an error again.
TEST(MmapReaderTest, FileTruncatedWhileMappedIsAnErrorNotASignal) {
  const MappedFile f = MapRandomFile("mmap_bus", "features.bin", 16 * 4096, /*seed=*/11);
  ASSERT_NE(f.reader, nullptr);
  const std::string& path = f.path;
  BlockReader* const reader = f.reader.get();
  ASSERT_EQ(::truncate(path.c_str(), 2 * 4096), 0);
  std::string out(100, 'x');
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<ReadRequest> lost = {{0, 100, out.data()}, {9 * 4096 + 5, 100, out.data()}};
    Status st = reader->ReadBatch(lost);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
    EXPECT_NE(st.message().find(path + " at offset 36864"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("now 8192 bytes, 65536 when mapped"), std::string::npos) << st.message();
    std::vector<ReadRequest> kept = {{4096 + 3, 100, out.data()}};
    ASSERT_TRUE(reader->ReadBatch(kept).ok());
    EXPECT_EQ(out, f.bytes.substr(4096 + 3, 100));
  }
}

// Truncation under readers running on several threads: every thread gets the error (none
// kills the process), whatever it was reading when the file shrank.
TEST(MmapReaderTest, TruncationUnderRunningReadersOnManyThreads) {
  const MappedFile f = MapRandomFile("mmap_bus_threads", "features.bin", 64 * 4096, /*seed=*/11);
  ASSERT_NE(f.reader, nullptr);
  const std::string& path = f.path;
  BlockReader* const reader = f.reader.get();
  constexpr int kThreads = 4;
  std::atomic<int> started{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::string out(512, 'x');
      bool counted = false;
      while (true) {
        ReadRequest r{static_cast<int64_t>(rng() % (64 * 4096 - 512)), 512, out.data()};
        Status st = reader->ReadBatch(&r, 1);
        if (!st.ok()) {
          errors[t] = st.message();
          if (!counted) started.fetch_add(1);
          return;
        }
        if (!counted) {
          counted = true;
          started.fetch_add(1);
        }
      }
    });
  }
  while (started.load() < kThreads) std::this_thread::yield();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  for (auto& thread : threads) thread.join();
  for (const std::string& e : errors) {
    EXPECT_NE(e.find(path + " at offset "), std::string::npos) << e;
    EXPECT_NE(e.find("truncated while in use"), std::string::npos) << e;
  }
}

// A bus error outside ReadBatch still ends the process (the handler passes it on).
TEST(MmapReaderTest, BusErrorOutsideAReadStillEndsTheProcess) {
  const std::string dir = MakeTempDir("mmap_bus_other");
  const std::string path = dir + "/other.bin";
  testing::WriteRandomFile(path, 4 * 4096, /*seed=*/11);
  ASSERT_TRUE(OpenMmapReader(path).ok());  // installs the handler
  auto died = [](int status) {
    return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  };
  EXPECT_EXIT(
      {
        FILE* f = std::fopen(path.c_str(), "rb");
        void* p = mmap(nullptr, 4 * 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
        if (::truncate(path.c_str(), 0) != 0) std::_Exit(0);
        volatile char c = static_cast<const char*>(p)[3 * 4096];
        (void)c;
        std::_Exit(0);
      },
      died, "");
}

}  // namespace
}  // namespace seer
