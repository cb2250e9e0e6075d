// ChangesetStore: changesets kept in RAM up to the budget, the rest spilled to a runtime
// file (cache/changeset_store.h's format) and read back equal; the spill file is named by
// RuntimeFile's rule (seer-trace-PID-changesets-XXXXXX) and is removed with the store.
#include "cache/changeset_store.h"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cache/belady_planner.h"
#include "support/random_seed.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

Changeset RandomChangeset(std::mt19937_64& rng) {
  Changeset c;
  const int n_in = static_cast<int>(rng() % 40), n_out = static_cast<int>(rng() % 40);
  for (int k = 0; k < n_in; ++k) {
    c.in_ids.push_back(static_cast<int64_t>(rng() >> 2));
    c.in_positions.push_back(static_cast<int32_t>(rng() % 1000));
    c.in_slots.push_back(static_cast<int32_t>(rng() % 1000));
  }
  for (int k = 0; k < n_out; ++k) {
    c.out_ids.push_back(static_cast<int64_t>(rng() >> 2));
    c.out_slots.push_back(static_cast<int32_t>(rng() % 1000));
  }
  c.num_accesses = n_in + static_cast<int64_t>(rng() % 100);
  c.num_misses = n_in;
  return c;
}

TEST(ChangesetStoreTest, SpillsBeyondBudgetAndReadsBack) {
  testing::RandomTestSeed seed;
  std::mt19937_64& rng = seed.rng;
  // 60 batches of up to 40 unique ids below 300.
  std::vector<std::vector<int64_t>> batches(60);
  for (auto& b : batches) {
    std::set<int64_t> seen;
    const size_t size = rng() % 41;
    while (seen.size() < size) {
      const int64_t v = static_cast<int64_t>(rng() % 300);
      if (seen.insert(v).second) b.push_back(v);
    }
  }
  const std::string dir = testing::MakeTempDir("changeset_spill");
  BeladyPlannerOptions ram;
  ram.device = PlannerDevice::kCpu;
  BeladyPlannerOptions spill = ram;
  spill.changeset_budget_bytes = 2000;
  spill.spill_dir = dir;
  auto a = PlanBelady(EmptyCacheState(50), MakeIdSpans(batches), ram);
  auto b = PlanBelady(EmptyCacheState(50), MakeIdSpans(batches), spill);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->changesets.num_spilled(), 0);
  EXPECT_GT(b->changesets.num_spilled(), 0);
  EXPECT_LE(b->changesets.ram_bytes(), 2000);
  const std::string path = b->changesets.spill_path();
  for (int64_t i = 0; i < a->changesets.size(); ++i) {
    auto x = a->changesets.Get(i);
    auto y = b->changesets.Get(i);
    ASSERT_TRUE(x.ok() && y.ok()) << y.status().ToString();
    EXPECT_TRUE(*x == *y) << "iteration " << i;
  }
  b = Status(StatusCode::kNotFound, "dropped");  // destroys the store
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "spill file left behind: " << path;
}

TEST(ChangesetStoreTest, SpillFileCarriesThePidAndRoundTrips) {
  std::mt19937_64 rng(7);
  const std::string dir = testing::MakeTempDir("changeset_store");
  std::vector<Changeset> want;
  ChangesetStore store(3000, dir);
  for (int i = 0; i < 50; ++i) {
    want.push_back(RandomChangeset(rng));
    ASSERT_TRUE(store.Append(want.back()).ok());
  }
  ASSERT_GT(store.num_spilled(), 0);
  EXPECT_LE(store.ram_bytes(), 3000);
  const std::string path = store.spill_path();
  EXPECT_EQ(path.rfind(dir + "/", 0), 0u) << path;
  EXPECT_EQ(BaseName(path).rfind("seer-trace-" + std::to_string(::getpid()) + "-changesets-", 0), 0u) << path;
  for (int i = 0; i < 50; ++i) {
    auto got = store.Get(i);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == want[static_cast<size_t>(i)]) << "changeset " << i;
  }
  EXPECT_THROW((void)store.Get(50), std::out_of_range);
  // Moving a store over this one removes this one's spill file and keeps the other's.
  ChangesetStore other(0, dir);
  ASSERT_TRUE(other.Append(want[0]).ok());
  const std::string other_path = other.spill_path();
  ASSERT_FALSE(other_path.empty());
  store = std::move(other);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "spill file left behind: " << path;
  EXPECT_EQ(store.spill_path(), other_path);
  auto moved = store.Get(0);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(*moved == want[0]);
}

TEST(ChangesetStoreTest, MissingSpillDirectoryIsAnError) {
  ChangesetStore store(0, testing::MakeTempDir("changeset_store") + "/missing");
  const Status status = store.Append(Changeset{});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("create changeset spill file"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("/missing/seer-trace-"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace seer
