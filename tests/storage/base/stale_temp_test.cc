// The sweep of dead processes' temporaries (storage/base/stale_temp.h): the oracle for
// "dead" is a child we forked and reaped, for "alive" a child still sleeping.
#include "storage/base/stale_temp.h"

#include <fcntl.h>
#include <sys/file.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "storage/base/scratch_dir.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

void Touch(const std::string& path, int bytes = 0) { std::ofstream(path) << std::string(bytes, 'x'); }

pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

class LiveChild {
 public:
  LiveChild() : pid_(::fork()) {
    if (pid_ == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~LiveChild() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
};

TEST(StaleTempTest, PidIsParsedFromEveryPattern) {
  EXPECT_EQ(StaleTemporaryPid("indptr.bin.tmp.1234.0"), 1234);
  EXPECT_EQ(StaleTemporaryPid("a.b.tmp.77.15"), 77);
  EXPECT_EQ(StaleTemporaryPid(".seer-csc-spill-4321-Ab3xYz"), 4321);
  EXPECT_EQ(StaleTemporaryPid(".seer-train-5-Ab3xYz"), 5);
  EXPECT_EQ(StaleTemporaryPid(".seer-prep-99-out"), 99);
  EXPECT_EQ(StaleTemporaryPid("notes.tmp.txt"), -1);
  EXPECT_EQ(StaleTemporaryPid("x.tmp.12.a"), -1);
  EXPECT_EQ(StaleTemporaryPid("seer-train-5-1732345678"), -1);  // a user's name: never ours
  EXPECT_EQ(StaleTemporaryPid("seer-trace-12-3.sbt"), -1);
  EXPECT_EQ(StaleTemporaryPid(".seer-csc-spill-XyZ123"), -1);  // old names without a pid
  EXPECT_EQ(StaleTemporaryPid("features.bin"), -1);
}

TEST(StaleTempTest, ParentDirectory) {
  EXPECT_EQ(ParentDirectory("a/b/c"), "a/b");
  EXPECT_EQ(ParentDirectory("a/b/"), "a");
  EXPECT_EQ(ParentDirectory("/x"), "/");
  EXPECT_EQ(ParentDirectory("name"), ".");
}

// A scratch directory made by a child that then dies without removing it (as after
// kill -9), with one file of `bytes` inside; returns its path.
std::string ScratchOfDeadChild(const std::string& parent, const char* purpose, int bytes, pid_t* pid) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  *pid = ::fork();
  if (*pid == 0) {
    auto dir = ScratchDir::Create(parent, purpose);
    std::string path = dir.ok() ? dir->path() : "";
    if (dir.ok()) Touch(dir->File("part-0.bin"), bytes);
    path += "\n";
    (void)!::write(fds[1], path.data(), path.size());
    ::_exit(0);  // no destructors: the directory stays, as after a crash
  }
  ::close(fds[1]);
  std::string path;
  char c;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') path += c;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(*pid, &status, 0);
  return path;
}

TEST(StaleTempTest, DeadProcessesTemporariesAreRemovedLiveOnesKept) {
  const std::string dir = testing::MakeTempDir("stale_temp");
  const pid_t dead = DeadPid();
  ASSERT_FALSE(ProcessIsAlive(dead));
  LiveChild live;
  ASSERT_TRUE(ProcessIsAlive(live.pid()));
  const std::string d = std::to_string(dead), l = std::to_string(live.pid());
  Touch(dir + "/indptr.bin.tmp." + d + ".0", 100);
  Touch(dir + "/indices.bin.tmp." + l + ".1", 10);
  pid_t spill_pid = 0, train_pid = 0;
  const std::string spill = ScratchOfDeadChild(dir, "csc-spill", 1000, &spill_pid);
  const std::string train = ScratchOfDeadChild(dir, "train", 24, &train_pid);
  ASSERT_FALSE(spill.empty());
  ASSERT_FALSE(train.empty());
  auto own = ScratchDir::Create(dir, "train");  // this process's: kept
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  // Look-alikes Seer did not make: a scratch name without the owner mark, user folders.
  ASSERT_EQ(::mkdir((dir + "/.seer-csc-spill-" + d + "-abc").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/seer-train-" + d + "-42").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/seer-train-2024-results").c_str(), 0755), 0);
  Touch(dir + "/notes.tmp.txt");
  Touch(dir + "/features.bin");

  auto removed = SweepStaleTemporaries(dir);
  std::set<std::string> paths;
  int64_t bytes = 0;
  for (const auto& r : removed) {
    paths.insert(r.path);
    EXPECT_TRUE(r.pid == dead || r.pid == spill_pid || r.pid == train_pid) << r.path << " " << r.pid;
    bytes += r.bytes;
  }
  EXPECT_EQ(paths, (std::set<std::string>{dir + "/indptr.bin.tmp." + d + ".0", spill, train}));
  EXPECT_GE(bytes, 100 + 1000 + 24);  // the owner marks add a few bytes
  EXPECT_FALSE(Exists(dir + "/indptr.bin.tmp." + d + ".0"));
  EXPECT_FALSE(Exists(spill));
  EXPECT_FALSE(Exists(train));
  EXPECT_TRUE(Exists(own->path()));
  EXPECT_TRUE(Exists(dir + "/indices.bin.tmp." + l + ".1"));
  EXPECT_TRUE(Exists(dir + "/.seer-csc-spill-" + d + "-abc"));
  EXPECT_TRUE(Exists(dir + "/seer-train-" + d + "-42"));
  EXPECT_TRUE(Exists(dir + "/seer-train-2024-results"));
  EXPECT_TRUE(Exists(dir + "/notes.tmp.txt"));
  EXPECT_TRUE(Exists(dir + "/features.bin"));
  EXPECT_TRUE(SweepStaleTemporaries(dir).empty());  // nothing left to remove
  EXPECT_TRUE(SweepStaleTemporaries(dir + "/missing").empty());
}

// A writer in another PID namespace looks dead from here (its pid is not ours to see);
// its lock says it is alive.
TEST(StaleTempTest, LockedTemporaryOfAPidThatLooksDeadIsKept) {
  const std::string dir = testing::MakeTempDir("stale_locked");
  const std::string d = std::to_string(DeadPid());
  const std::string path = dir + "/labels.bin.tmp." + d + ".0";
  Touch(path, 7);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_TRUE(SweepStaleTemporaries(dir).empty());
  EXPECT_TRUE(Exists(path));
  ::close(fd);
  EXPECT_EQ(SweepStaleTemporaries(dir).size(), 1u);
  EXPECT_FALSE(Exists(path));
}

TEST(StaleTempTest, SweepAtStartCoversTmpdirAndSaysWhatItRemoved) {
  const std::string dir = testing::MakeTempDir("stale_tmpdir");
  const std::string tmpdir = testing::MakeTempDir("stale_tmpdir_env");
  const pid_t dead = DeadPid();
  Touch(dir + "/labels.bin.tmp." + std::to_string(dead) + ".3", 5);
  pid_t train_pid = 0;
  const std::string train = ScratchOfDeadChild(tmpdir, "train", 3, &train_pid);
  ASSERT_FALSE(train.empty());
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  ::testing::internal::CaptureStderr();
  auto removed = SweepAtStart({dir, "", dir});
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (old) ::setenv("TMPDIR", saved.c_str(), 1); else ::unsetenv("TMPDIR");
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_NE(err.find("seer: removed " + dir + "/labels.bin.tmp." + std::to_string(dead) + ".3 (5 B), left by process " +
                     std::to_string(dead) + " which is no longer running"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("seer: removed " + train), std::string::npos) << err;
}

}  // namespace
}  // namespace seer
