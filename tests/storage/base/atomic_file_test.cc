// AtomicFileWriter and WriteFileAtomically (storage/base/atomic_file.h): nothing
// appears under the final name before Close, and nothing is left behind otherwise.
#include "storage/base/atomic_file.h"

#include <filesystem>
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

}  // namespace
}  // namespace seer
