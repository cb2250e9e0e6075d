// ScratchDir (storage/base/scratch_dir.h): names, the locked owner mark, removal; the
// sweep side is in stale_temp_test.cc and tests/tools/scratch_sweep_cli_test.cc.
#include "storage/base/scratch_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

TEST(ScratchDirTest, NameCarriesPurposeAndPidAndTheMarkIsLocked) {
  const std::string parent = testing::MakeTempDir("scratch_dir");
  auto dir = ScratchDir::Create(parent, "csc-spill");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string name = fs::path(dir->path()).filename().string();
  EXPECT_EQ(name.rfind(".seer-csc-spill-" + std::to_string(::getpid()) + "-", 0), 0u) << name;
  EXPECT_EQ(ScratchDirPid(name), ::getpid());
  // The mark is locked while the owner lives: another open file description cannot lock it.
  const int fd = ::open((dir->path() + "/" + kScratchOwnerMark).c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
  EXPECT_FALSE(ScratchDirIsAbandoned(dir->path()));
}

TEST(ScratchDirTest, DestructorRemovesTheTreeAndMoveKeepsOneOwner) {
  const std::string parent = testing::MakeTempDir("scratch_dir");
  std::string path;
  {
    auto made = ScratchDir::Create(parent, "remap");
    ASSERT_TRUE(made.ok());
    ScratchDir dir = std::move(made).value();
    path = dir.path();
    std::ofstream(dir.File("edges.bin64")) << "x";
    fs::create_directories(dir.File("sub/deeper"));
    std::set<std::string> names;
    for (int i = 0; i < 5; ++i) names.insert(dir.NewFile("run"));
    EXPECT_EQ(names.size(), 5u);
    ScratchDir moved = std::move(dir);
    EXPECT_FALSE(dir.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::exists(parent));
}

TEST(ScratchDirTest, RemoveReportsAndInvalidates) {
  const std::string parent = testing::MakeTempDir("scratch_dir");
  auto dir = ScratchDir::Create(parent, "rows");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->path();
  EXPECT_TRUE(dir->Remove().ok());
  EXPECT_FALSE(dir->valid());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(dir->Remove().ok());  // twice is fine
}

TEST(ScratchDirTest, BadPurposeAndMissingParentAreErrors) {
  EXPECT_EQ(ScratchDir::Create(".", "Bad_Name").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ScratchDir::Create(".", "").status().code(), StatusCode::kInvalidArgument);
  const auto missing = ScratchDir::Create("/nonexistent-seer-dir/x", "train");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent-seer-dir/x"), std::string::npos)
      << missing.status().ToString();
}

TEST(ScratchDirTest, PidParse) {
  EXPECT_EQ(ScratchDirPid(".seer-train-77-AbCdEf"), 77);
  EXPECT_EQ(ScratchDirPid(".seer-csc-spill-5-x"), 5);
  EXPECT_EQ(ScratchDirPid(".seer-train--AbCdEf"), -1);
  EXPECT_EQ(ScratchDirPid(".seer-train-0-AbCdEf"), -1);
  EXPECT_EQ(ScratchDirPid(".seer-train-12a-AbCdEf"), -1);
  EXPECT_EQ(ScratchDirPid("seer-train-77-AbCdEf"), -1);
  EXPECT_EQ(ScratchDirPid(".seer-77"), -1);
}

TEST(ScratchDirTest, DirectoryWithoutMarkIsNotAbandonedButOneWithAFreeMarkIs) {
  const std::string parent = testing::MakeTempDir("scratch_dir");
  const std::string plain = parent + "/.seer-train-1-abcdef";
  fs::create_directories(plain);
  EXPECT_FALSE(ScratchDirIsAbandoned(plain));
  std::ofstream(plain + "/" + kScratchOwnerMark) << "pid 1 host elsewhere\n";  // unlocked mark
  EXPECT_TRUE(ScratchDirIsAbandoned(plain));
}

}  // namespace
}  // namespace seer
