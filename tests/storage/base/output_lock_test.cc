// OutputLock (storage/base/output_lock.h): a second process writing one output is refused,
// naming the holder; the same process shares its lock; a dead holder's lock is free; the
// lock file goes with the lock.
#include "storage/base/output_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

// A child process that holds the lock on `path` until the object goes.
class ChildHolder {
 public:
  explicit ChildHolder(const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      auto lock = OutputLock::Acquire(path, "the child's run");
      const char ok = lock.ok() ? '1' : '0';
      (void)!::write(fds[1], &ok, 1);
      ::pause();
      ::_exit(0);
    }
    ::close(fds[1]);
    char ok = '0';
    held_ = ::read(fds[0], &ok, 1) == 1 && ok == '1';
    ::close(fds[0]);
    pid_ = pid;
  }
  ~ChildHolder() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  bool held() const { return held_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool held_ = false;
};

TEST(OutputLockTest, SecondProcessIsRefusedNamingTheHolder) {
  const std::string dir = testing::MakeTempDir("output_lock") + "/ckpt";
  {
    ChildHolder child(dir);
    ASSERT_TRUE(child.held());
    auto second = OutputLock::Acquire(dir + "/", "seer train --checkpoint-dir");
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
    EXPECT_NE(second.status().message().find("pid " + std::to_string(child.pid())), std::string::npos)
        << second.status().ToString();
    EXPECT_NE(second.status().message().find("the child's run"), std::string::npos);
  }
  // The child is dead (killed: no clean-up ran): its lock is free.
  auto mine = OutputLock::Acquire(dir, "parent");
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  const std::string parent = fs::path(dir).parent_path().string();
  EXPECT_EQ(mine->lock_path(), parent + "/.ckpt.seer-lock");
}

TEST(OutputLockTest, SameProcessSharesAndTheLastHolderRemovesTheFile) {
  const std::string dir = testing::MakeTempDir("output_lock");
  const std::string metrics = dir + "/metrics.jsonl";
  EXPECT_EQ(OutputLockPath(metrics), dir + "/.metrics.jsonl.seer-lock");
  auto a = OutputLock::Acquire(metrics, "seer train --metrics");
  ASSERT_TRUE(a.ok());
  auto b = OutputLock::Acquire(metrics, "seer train --metrics");
  ASSERT_TRUE(b.ok());
  const std::string lock_path = a->lock_path();
  a->Release();
  EXPECT_TRUE(fs::exists(lock_path));  // b still holds it
  // (Another process is refused while b holds it: SecondProcessIsRefusedNamingTheHolder
  // and tests/tools/outputs_cli_test.cc; a fork of this one inherits the lock itself.)
  b->Release();
  EXPECT_FALSE(fs::exists(lock_path));
  EXPECT_FALSE(fs::exists(metrics));  // the output itself is not touched
  ChildHolder child(metrics);
  EXPECT_TRUE(child.held());
}

TEST(OutputLockTest, MissingFolderNamesTheOutput) {
  const auto lock = OutputLock::Acquire("/nonexistent-seer/m.jsonl", "x");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().message().rfind("/nonexistent-seer/m.jsonl: cannot create its lock file", 0), 0u)
      << lock.status().ToString();
}

}  // namespace
}  // namespace seer
