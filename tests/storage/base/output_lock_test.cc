// OutputLock (storage/base/output_lock.h): a second writer of one output is refused,
// naming the holder; a dead holder's lock is free; the lock file goes with the lock.
#include "storage/base/output_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

TEST(OutputLockTest, SecondWriterIsRefusedNamingTheHolder) {
  const std::string dir = testing::MakeTempDir("output_lock");
  auto first = OutputLock::Acquire(dir, "seer train --checkpoint-dir");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const fs::path path(dir);  // the lock sits beside the output: PARENT/.NAME.seer-lock
  EXPECT_EQ(first->lock_path(), path.parent_path().string() + "/." + path.filename().string() + ".seer-lock");
  auto second = OutputLock::Acquire(dir + "/", "seer train --checkpoint-dir");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().ToString();
  EXPECT_NE(second.status().message().find("seer train --checkpoint-dir"), std::string::npos);
  const std::string lock_path = first->lock_path();
  EXPECT_TRUE(fs::exists(lock_path));
  first->Release();
  EXPECT_FALSE(fs::exists(lock_path));
  auto third = OutputLock::Acquire(dir, "again");
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

TEST(OutputLockTest, FileOutputsLockBesideTheFile) {
  const std::string dir = testing::MakeTempDir("output_lock");
  const std::string metrics = dir + "/metrics.jsonl";
  EXPECT_EQ(OutputLockPath(metrics), dir + "/.metrics.jsonl.seer-lock");
  auto a = OutputLock::Acquire(metrics, "seer train --metrics");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(OutputLock::Acquire(metrics, "seer train --metrics").ok());
  EXPECT_TRUE(OutputLock::Acquire(dir + "/other.jsonl", "seer train --metrics").ok());
  EXPECT_FALSE(fs::exists(metrics));  // the output itself is not touched
}

TEST(OutputLockTest, DeadHoldersLockIsFree) {
  const std::string dir = testing::MakeTempDir("output_lock");
  const pid_t child = ::fork();
  if (child == 0) {
    auto lock = OutputLock::Acquire(dir + "/ckpt", "child");
    ::_exit(lock.ok() ? 0 : 1);  // no destructor: the file stays, the kernel drops the lock
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::exists(dir + "/.ckpt.seer-lock"));
  auto lock = OutputLock::Acquire(dir + "/ckpt", "parent");
  EXPECT_TRUE(lock.ok()) << lock.status().ToString();
}

}  // namespace
}  // namespace seer
