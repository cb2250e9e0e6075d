// AtomicFileWriter and WriteFileAtomically (storage/base/atomic_file.h): nothing
// appears under the final name before Close, and nothing is left behind otherwise.
#include "storage/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "support/test_support.h"

namespace seer {
namespace {

TEST(AtomicFileTest, ManifestIsKeptWithoutForceAndRemovedWithIt) {
  const std::string dir = testing::MakeTempDir("manifest");
  const std::string manifest = dir + "/thing.json";
  // No manifest yet: nothing to refuse.
  EXPECT_TRUE(RemoveManifestBeforeRewrite(manifest, /*force=*/false, "the thing").ok());
  ASSERT_TRUE(WriteFileAtomically(manifest, "{}").ok());
  const Status refused = RemoveManifestBeforeRewrite(manifest, /*force=*/false, "the thing");
  EXPECT_EQ(refused.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(refused.message(), manifest + " exists: refusing to overwrite the thing (use --force)");
  EXPECT_TRUE(std::filesystem::exists(manifest));
  EXPECT_TRUE(RemoveManifestBeforeRewrite(manifest, /*force=*/true, "the thing").ok());
  EXPECT_FALSE(std::filesystem::exists(manifest));
}

TEST(AtomicFileWriterTest, NothingAppearsUntilClose) {
  std::string dir = testing::MakeTempDir("atomic_file");
  std::string path = dir + "/out.bin";
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    std::vector<char> data(3 << 20, 'x');  // bigger than the internal buffer
    ASSERT_TRUE(writer->Append(data.data(), static_cast<int64_t>(data.size())).ok());
    ASSERT_TRUE(writer->Append("tail", 4).ok());
    EXPECT_FALSE(testing::FileExists(path));
    EXPECT_EQ(writer->xxh64(), [&] {
      Xxh64 h;
      h.Update(data.data(), data.size());
      h.Update("tail", 4);
      return h.Digest();
    }());
    ASSERT_TRUE(writer->Close().ok());
  }
  EXPECT_EQ(*FileSizeBytes(path), (3 << 20) + 4);
  // An abandoned writer leaves neither the final file nor its temporary.
  {
    auto writer = AtomicFileWriter::Create(dir + "/never.bin");
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Append("abc", 3).ok());
  }
  EXPECT_FALSE(testing::FileExists(dir + "/never.bin"));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"out.bin"});  // no temporary left behind
}

TEST(AtomicFileWriterTest, PadToAlignsAndWriteFileAtomicallyReplaces) {
  const std::string dir = testing::MakeTempDir("atomic_file");
  auto writer = AtomicFileWriter::Create(dir + "/padded.bin");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Append("abcde", 5).ok());
  ASSERT_TRUE(writer->PadTo(4096).ok());
  EXPECT_EQ(writer->bytes_written(), 4096);
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_EQ(*FileSizeBytes(dir + "/padded.bin"), 4096);

  ASSERT_TRUE(WriteFileAtomically(dir + "/a.txt", "first").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/a.txt", "second").ok());
  EXPECT_EQ(testing::ReadFileBytes(dir + "/a.txt"), "second");
}

// AppendDirect writes aligned blocks with O_DIRECT where the file system allows it and
// falls back to Append for anything unaligned (a misaligned pointer or length, an
// unaligned file offset; bytes buffered before an aligned offset are flushed first);
// mixed in any order, the file and its
// streamed xxh64 are exactly those of the same bytes appended normally. On the build
// tree's disk (SEER_IO_TEST_DIR) O_DIRECT must be accepted, so the direct path is taken.
TEST(AtomicFileWriterTest, AppendDirectMixedWithAppendWritesTheSameBytes) {
  std::vector<std::string> dirs = {testing::MakeTempDir("atomic_direct")};
#ifdef SEER_IO_TEST_DIR
  dirs.push_back(std::string(SEER_IO_TEST_DIR) + "/atomic_direct_test");
  std::filesystem::create_directories(dirs.back());
#endif
  constexpr int64_t kBlock = kDirectAlign;
  // 6 blocks of page-aligned data with a recognisable pattern.
  std::unique_ptr<char, void (*)(void*)> buf(static_cast<char*>(std::aligned_alloc(kBlock, 6 * kBlock)), std::free);
  ASSERT_NE(buf.get(), nullptr);
  for (int64_t i = 0; i < 6 * kBlock; ++i) buf.get()[i] = static_cast<char>((i * 131 + i / 977) & 0xFF);
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    const std::string path = dir + "/direct.bin";
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    const bool direct = writer->EnableDirect();
#ifdef SEER_IO_TEST_DIR
    if (dir != dirs.front()) {
      EXPECT_TRUE(direct);
    }
#endif
    EXPECT_EQ(writer->direct(), direct);
    std::string expect;
    auto add = [&](bool use_direct, int64_t offset, int64_t length) {
      const char* p = buf.get() + offset;
      Status st = use_direct ? writer->AppendDirect(p, length) : writer->Append(p, length);
      ASSERT_TRUE(st.ok()) << st.ToString();
      expect.append(p, static_cast<size_t>(length));
    };
    add(true, 0, 2 * kBlock);           // aligned: direct
    add(true, 2 * kBlock, kBlock);      // aligned: direct
    add(false, 0, 100);                 // buffered, the offset is now unaligned
    add(true, 3 * kBlock, kBlock);      // aligned data, unaligned offset: buffered
    add(false, 0, kBlock - 100);        // back to an aligned offset, with bytes buffered
    add(true, 4 * kBlock, kBlock);      // the buffered bytes flushed, then direct
    add(true, 8, kBlock);               // misaligned pointer: buffered
    add(true, 5 * kBlock, 100);         // short length: buffered
    EXPECT_EQ(writer->bytes_written(), static_cast<int64_t>(expect.size()));
    Xxh64 hash;
    hash.Update(expect.data(), expect.size());
    EXPECT_EQ(writer->xxh64(), hash.Digest());
    ASSERT_TRUE(writer->Close().ok());
    EXPECT_EQ(testing::ReadFileBytes(path), expect);
  }
  // Direct after buffered bytes that end on a block boundary, then a buffered tail.
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/direct2.bin";
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    writer->EnableDirect();
    ASSERT_TRUE(writer->Append(buf.get(), kBlock).ok());
    ASSERT_TRUE(writer->AppendDirect(buf.get() + kBlock, 2 * kBlock).ok());
    ASSERT_TRUE(writer->AppendDirect(buf.get() + 3 * kBlock, 2 * kBlock).ok());
    ASSERT_TRUE(writer->Append(buf.get() + 5 * kBlock, 10).ok());
    ASSERT_TRUE(writer->Close().ok());
    EXPECT_EQ(testing::ReadFileBytes(path), std::string(buf.get(), static_cast<size_t>(5 * kBlock + 10)));
  }
}

// Outputs replace only regular files: a link is followed (the link stays), a FIFO is
// written through (no temporary, no rename), a folder is refused, and
// a missing folder is found at Create with the user's path in the message.
TEST(AtomicFileWriterTest, ReplacesOnlyRegularFiles) {
  namespace fs = std::filesystem;
  const std::string dir = testing::MakeTempDir("atomic_targets");
  // A symlink to a regular file: the file gets the bytes, the link is still a link.
  ASSERT_TRUE(WriteFileAtomically(dir + "/real.txt", "old").ok());
  fs::create_symlink(dir + "/real.txt", dir + "/link.txt");
  ASSERT_TRUE(WriteFileAtomically(dir + "/link.txt", "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir + "/link.txt"));
  EXPECT_EQ(testing::ReadFileBytes(dir + "/real.txt"), "new");
  // A link to a file not there yet: the file is created where the link points.
  fs::create_symlink(dir + "/later.txt", dir + "/dangling.txt");
  ASSERT_TRUE(WriteFileAtomically(dir + "/dangling.txt", "x").ok());
  EXPECT_TRUE(fs::is_symlink(dir + "/dangling.txt"));
  EXPECT_EQ(testing::ReadFileBytes(dir + "/later.txt"), "x");
  // A link into a missing folder: the error names the user's path.
  fs::create_symlink("gone/x.txt", dir + "/into_missing.txt");
  const Status gone = CheckOutputPath(dir + "/into_missing.txt");
  EXPECT_EQ(gone.code(), StatusCode::kNotFound);
  EXPECT_NE(gone.message().find(dir + "/into_missing.txt"), std::string::npos) << gone.ToString();
  // A folder is refused, and stays a folder.
  fs::create_directory(dir + "/folder");
  EXPECT_EQ(WriteFileAtomically(dir + "/folder", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_directory(dir + "/folder"));
  // A missing folder: the error names the user's path and the folder, not a temporary.
  const Status missing = CheckOutputPath(dir + "/nope/m.pt");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "cannot write " + dir + "/nope/m.pt: the folder " + dir + "/nope does not exist");
  EXPECT_EQ(AtomicFileWriter::Create(dir + "/nope/m.pt").status().message(), missing.message());
  EXPECT_TRUE(CheckOutputPath(dir + "/new.txt").ok());
}

TEST(AtomicFileWriterTest, FifoIsWrittenThroughAndOneWithoutReaderIsAnError) {
  const std::string dir = testing::MakeTempDir("atomic_fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No reader: an error at once, not a wait.
  EXPECT_FALSE(AtomicFileWriter::Create(fifo).ok());
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  auto writer = AtomicFileWriter::Create(fifo);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE(writer->Append("hello", 5).ok());
  ASSERT_TRUE(writer->Close().ok());
  char buf[16] = {};
  EXPECT_EQ(::read(reader, buf, sizeof(buf)), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ::close(reader);
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // still the FIFO, not a regular file
}

}  // namespace
}  // namespace seer
