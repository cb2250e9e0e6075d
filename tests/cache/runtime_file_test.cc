// RuntimeFile: the planner's runtime files are created in the caller's directory under
// one naming rule (seer-trace-PID-STEM-XXXXXX), read back what was appended, and are
// removed by their owner — also the next-use sort's runs and segments, checked while the
// streaming planner holds them.
#include "cache/runtime_file.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cache/belady_planner.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

TEST(RuntimeFileTest, NamedForTheSweepAppendsReadsAndRemoves) {
  const std::string dir = testing::MakeTempDir("runtime_file");
  auto file = RuntimeFile::Create(dir, "belady-runs", "create planner runtime file");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::string path = file->path();
  EXPECT_EQ(path.rfind(dir + "/" + RuntimeFilePrefix("belady-runs"), 0), 0u) << path;
  EXPECT_EQ(RuntimeFilePrefix("x"), "seer-trace-" + std::to_string(::getpid()) + "-x-");
  EXPECT_EQ(BaseName(path).size(), RuntimeFilePrefix("belady-runs").size() + 6) << path;

  const std::vector<int64_t> a = {1, 2, 3}, b = {-7};
  auto at_a = file->Append(a.data(), 24);
  auto at_b = file->Append(b.data(), 8);
  ASSERT_TRUE(at_a.ok() && at_b.ok());
  EXPECT_EQ(*at_a, 0);
  EXPECT_EQ(*at_b, 24);
  EXPECT_EQ(file->size(), 32);
  int64_t back[4] = {};
  ASSERT_TRUE(file->Read(back, 32, 0).ok());
  EXPECT_EQ(back[2], 3);
  EXPECT_EQ(back[3], -7);
  EXPECT_FALSE(file->Read(back, 8, 32).ok()) << "read past the end";

  // Moving keeps one owner; the destructor removes the file.
  RuntimeFile moved = std::move(*file);
  EXPECT_EQ(moved.path(), path);
  EXPECT_TRUE(file->path().empty());
  file = Status(StatusCode::kNotFound, "dropped");
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "the moved-to file must stay";
  { RuntimeFile gone = std::move(moved); }
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "runtime file left behind: " << path;
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST(RuntimeFileTest, MissingDirectoryNamesThePattern) {
  const std::string dir = testing::MakeTempDir("runtime_file") + "/missing";
  auto file = RuntimeFile::Create(dir, "belady-next", "create planner runtime file");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("create planner runtime file " + dir + "/seer-trace-"),
            std::string::npos)
      << file.status().ToString();
}

// A source that lists the runtime directory when the forward pass rewinds it (the
// next-use table, with its runtime files, is alive then).
class ListingSource : public VectorBatchIdSource {
 public:
  ListingSource(std::vector<IdSpan> batches, std::string dir)
      : VectorBatchIdSource(std::move(batches)), dir_(std::move(dir)) {}
  Status Rewind() override {
    if (++rewinds_ == 2) during_forward_pass = ListDir(dir_);
    return VectorBatchIdSource::Rewind();
  }
  std::vector<std::string> during_forward_pass;

 private:
  std::string dir_;
  int rewinds_ = 0;
};

TEST(RuntimeFileTest, StreamingPlannerFilesCarryThePidAndAreRemoved) {
  std::vector<std::vector<int64_t>> batches;
  for (int64_t b = 0; b < 40; ++b) {
    batches.emplace_back();
    for (int64_t k = 0; k < 50; ++k) batches.back().push_back((b * 37 + k * 11) % 400);
  }
  const std::string dir = testing::MakeTempDir("planner_runtime");
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  options.runtime_dir = dir;
  options.working_memory_bytes = 4096;  // 256 accesses per run: many runs
  options.spill_dir = dir;
  options.changeset_budget_bytes = 1000;
  ListingSource source(MakeIdSpans(batches), dir);
  auto plan = PlanBeladyStreaming(EmptyCacheState(60), source, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::string> stems;
  for (const std::string& name : source.during_forward_pass) {
    ASSERT_GT(name.size(), 6u) << name;
    stems.push_back(name.substr(0, name.size() - 6));  // without mkstemp's XXXXXX
  }
  const std::vector<std::string> want = {RuntimeFilePrefix("belady-next"), RuntimeFilePrefix("belady-runs")};
  std::sort(stems.begin(), stems.end());
  EXPECT_EQ(stems, want);
  // Once planned, only the changeset spill is left (the plan owns it), and it goes too.
  const std::vector<std::string> after = ListDir(dir);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(dir + "/" + after[0], plan->changesets.spill_path());
  EXPECT_EQ(after[0].rfind(RuntimeFilePrefix("changesets"), 0), 0u) << after[0];
  plan = Status(StatusCode::kNotFound, "dropped");
  EXPECT_TRUE(ListDir(dir).empty());
}

}  // namespace
}  // namespace seer
