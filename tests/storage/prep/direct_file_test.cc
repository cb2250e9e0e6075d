#include "storage/prep/direct_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

// Directories to try: the build tree (a real disk: O_DIRECT where the file system has
// it) and /dev/shm (tmpfs refuses O_DIRECT: the buffered fallback).
std::vector<std::string> Dirs() {
  std::vector<std::string> dirs = {testing::MakeTempDir("direct_file")};
#ifdef SEER_IO_TEST_DIR
  std::string disk = std::string(SEER_IO_TEST_DIR) + "/direct_file_test";
  ::mkdir(disk.c_str(), 0700);
  dirs.push_back(disk);
#endif
  struct stat st;
  if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) {
    dirs.push_back("/dev/shm");
  }
  return dirs;
}

std::vector<char> RandomBytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<char> out(static_cast<size_t>(n));
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

TEST(DirectFileTest, AppendsAndTailReadBackExactly) {
  for (const std::string& dir : Dirs()) {
    for (int64_t tail : {int64_t{0}, int64_t{1}, int64_t{16}, kDirectAlign - 8, kDirectAlign + 40}) {
      SCOPED_TRACE(dir + " tail " + std::to_string(tail));
      const std::string path = dir + "/spill-" + std::to_string(::getpid()) + ".bin";
      // Three aligned appends of different lengths, then the tail.
      const std::vector<int64_t> blocks = {kDirectAlign, 3 * kDirectAlign, 2 * kDirectAlign};
      int64_t total = tail;
      for (int64_t b : blocks) total += b;
      const std::vector<char> oracle = RandomBytes(total, static_cast<uint32_t>(tail + 7));
      auto file = DirectAppendFile::Create(path);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      AlignedBuffer buffer;
      buffer.Reserve(AlignUp(total) + kDirectAlign);
      int64_t at = 0;
      for (int64_t b : blocks) {
        std::memcpy(buffer.data(), oracle.data() + at, static_cast<size_t>(b));
        ASSERT_TRUE(file->AppendAligned(buffer.data(), b).ok());
        at += b;
      }
      std::memcpy(buffer.data(), oracle.data() + at, static_cast<size_t>(tail));
      Status finished = file->Finish(buffer.data(), tail);
      ASSERT_TRUE(finished.ok()) << finished.ToString();
      EXPECT_EQ(file->size(), total);
      // The bytes on disk, read by the plain reader: exactly the oracle.
      auto whole = ReadWholeFile(path);
      ASSERT_TRUE(whole.ok());
      EXPECT_EQ(std::vector<char>(whole->begin(), whole->end()), oracle);
      // DirectReadFile in chunks of one block (the last one short).
      auto reader = DirectReadFile::Open(path);
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      EXPECT_EQ(reader->size(), total);
      std::vector<char> back;
      AlignedBuffer chunk;
      chunk.Reserve(kDirectAlign);
      for (int64_t off = 0; off < total; off += kDirectAlign) {
        const int64_t len = std::min(kDirectAlign, total - off);
        Status read = reader->Read(chunk.data(), off, len);
        ASSERT_TRUE(read.ok()) << read.ToString();
        back.insert(back.end(), chunk.data(), chunk.data() + len);
      }
      EXPECT_EQ(back, oracle);
      // Beyond the end: an error naming the file, not a short read.
      Status beyond = reader->Read(chunk.data(), 0, total + 1);
      EXPECT_EQ(beyond.code(), StatusCode::kUnexpectedEof);
      EXPECT_NE(beyond.message().find(path), std::string::npos);
      ::unlink(path.c_str());
    }
  }
}

TEST(DirectFileTest, UnalignedDirectAppendIsRefused) {
  for (const std::string& dir : Dirs()) {
    const std::string path = dir + "/unaligned-" + std::to_string(::getpid()) + ".bin";
    auto file = DirectAppendFile::Create(path);
    ASSERT_TRUE(file.ok());
    AlignedBuffer buffer;
    buffer.Reserve(2 * kDirectAlign);
    std::memset(buffer.data(), 7, 2 * kDirectAlign);
    Status st = file->AppendAligned(buffer.data(), 100);
    if (file->direct()) {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    } else {
      EXPECT_TRUE(st.ok());  // buffered: any length
    }
    ::unlink(path.c_str());
  }
}

TEST(DirectFileTest, BufferedWhenAsked) {
  const std::string path = testing::MakeTempDir("direct_file") + "/buffered.bin";
  auto file = DirectAppendFile::Create(path, /*try_direct=*/false);
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->direct());
  char bytes[5] = {1, 2, 3, 4, 5};
  ASSERT_TRUE(file->AppendAligned(bytes, 3).ok());
  ASSERT_TRUE(file->Finish(bytes + 3, 2).ok());
  auto whole = ReadWholeFile(path);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole, std::string(bytes, 5));
}

}  // namespace
}  // namespace seer
