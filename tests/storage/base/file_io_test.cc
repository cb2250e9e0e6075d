// File helpers (storage/base/file_io.h): full reads and writes, EOF and errors that name
// the path and offset, mkdir -p.
#include "storage/base/file_io.h"

#include <fcntl.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "storage/base/unique_fd.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(FileIoTest, WritesAndReadsWholeRanges) {
  const std::string dir = testing::MakeTempDir("file_io");
  const std::string path = dir + "/f.bin";
  auto fd = UniqueFd::Open(path, O_RDWR | O_CREAT | O_TRUNC);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_TRUE(WriteFull(fd->get(), "hello ", 6, path).ok());
  ASSERT_TRUE(PwriteFull(fd->get(), "world", 5, 6, path).ok());
  EXPECT_EQ(*FileSizeBytes(fd->get(), path), 11);
  EXPECT_EQ(*FileSizeBytes(path), 11);
  char buf[5];
  ASSERT_TRUE(PreadFull(fd->get(), buf, 5, 6, path).ok());
  EXPECT_EQ(std::string(buf, 5), "world");
  EXPECT_EQ(*ReadWholeFile(path), "hello world");
}

TEST(FileIoTest, ReadPastTheEndNamesPathAndOffset) {
  const std::string dir = testing::MakeTempDir("file_io");
  const std::string path = dir + "/short.bin";
  WriteText(path, "0123456789");
  auto fd = UniqueFd::Open(path, O_RDONLY);
  ASSERT_TRUE(fd.ok());
  char buf[8];
  Status st = PreadFull(fd->get(), buf, 8, 6, path);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(st.message().find("read " + path + " at offset 10 (+4 bytes): unexpected end of file"),
            std::string::npos) << st.message();
  auto missing = FileSizeBytes(dir + "/none");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir + "/none"), std::string::npos);
  EXPECT_EQ(ReadWholeFile(dir + "/none").status().code(), StatusCode::kNotFound);
}

TEST(FileIoTest, MakeDirectoriesCreatesParentsAndRefusesAFile) {
  const std::string dir = testing::MakeTempDir("file_io");
  ASSERT_TRUE(MakeDirectories(dir + "/a/b/c").ok());
  ASSERT_TRUE(MakeDirectories(dir + "/a/b/c").ok());  // existing is fine
  WriteText(dir + "/a/file", "x");
  Status st = MakeDirectories(dir + "/a/file");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(dir + "/a/file"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

// RemoveTree (the rm -r behind scratch directories and staging): a tree with nested
// folders, a symlink out of it (the link goes, its target stays) and a missing path.
TEST(RemoveTreeTest, RemovesTheTreeNotWhatLinksPointAt) {
  const std::string dir = testing::MakeTempDir("remove_tree");
  const std::string tree = dir + "/tree";
  ASSERT_TRUE(MakeDirectories(tree + "/a/b/c").ok());
  for (const char* f : {"/x", "/a/y", "/a/b/c/z"}) {
    const int fd = ::open((tree + f).c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "12345", 5), 5);
    ::close(fd);
  }
  const int outside = ::open((dir + "/keep").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(outside, 0);
  ::close(outside);
  ASSERT_EQ(::symlink((dir + "/keep").c_str(), (tree + "/a/link").c_str()), 0);
  EXPECT_EQ(TreeBytes(tree), 15);
  EXPECT_TRUE(RemoveTree(tree).ok());
  struct stat st;
  EXPECT_NE(::lstat(tree.c_str(), &st), 0);
  EXPECT_EQ(::lstat((dir + "/keep").c_str(), &st), 0);
  EXPECT_TRUE(RemoveTree(tree).ok());  // missing: fine
  EXPECT_TRUE(RemoveTree(dir + "/keep").ok());  // a plain file
  EXPECT_NE(::lstat((dir + "/keep").c_str(), &st), 0);
}

}  // namespace
}  // namespace seer
