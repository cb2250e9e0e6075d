// A small generated dataset (1237 nodes, 5 classes, 13 features) that a test may corrupt
// in place (SmallDatasetTest, the fixture of such tests), the generator config behind it
// (for other small graphs), and element-wise pokes and peeks into its raw files. Header-only: the test
// binary links seer::storage_prep for the generator.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/prep/synthetic_graph.h"
#include "support/temp_dir.h"

namespace seer::testing {

constexpr int64_t kSmallDatasetNodes = 1237;
constexpr int64_t kSmallDatasetClasses = 5;

// The generator's config for a small test graph: this shape and seed, a 64 MiB build
// budget, the rest at SyntheticGraphConfig's defaults.
inline SyntheticGraphConfig SmallGraphConfig(int64_t num_nodes, double avg_degree, int64_t feature_dim,
                                             int64_t num_classes, uint64_t seed = SyntheticGraphConfig().seed) {
  SyntheticGraphConfig c;
  c.num_nodes = num_nodes;
  c.avg_degree = avg_degree;
  c.feature_dim = feature_dim;
  c.num_classes = num_classes;
  c.seed = seed;
  c.memory_budget_bytes = 64 << 20;
  return c;
}

// A fresh valid dataset in its own temp dir (removed after the test).
inline std::string MakeSmallDataset(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  const SyntheticGraphConfig c = SmallGraphConfig(kSmallDatasetNodes, /*avg_degree=*/6, /*feature_dim=*/13,
                                                  kSmallDatasetClasses);
  auto r = GenerateSyntheticDataset(c, dir, false);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return dir;
}

// The fixture of tests that corrupt a fresh small dataset in place:
//   class DatasetCheckTest : public testing::SmallDatasetTest {};
//   TEST_F(DatasetCheckTest, ...) { const std::string dir = MakeDataset(); ... }
class SmallDatasetTest : public ::testing::Test {
 protected:
  static constexpr int64_t kNodes = kSmallDatasetNodes;
  static constexpr int64_t kClasses = kSmallDatasetClasses;
  // A fresh valid dataset per call, in a temp dir named after the test suite.
  static std::string MakeDataset() {
    return MakeSmallDataset(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name());
  }
};

// Overwrites element `index` (of type T) of the file at `path`.
template <typename T>
void Poke(const std::string& path, int64_t index, T value) {
  auto fd = UniqueFd::Open(path, O_WRONLY);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_TRUE(PwriteFull(fd->get(), &value, sizeof value, index * static_cast<int64_t>(sizeof(T)), path).ok());
}

// Element `index` (of type T) of the file at `path`.
template <typename T>
T Peek(const std::string& path, int64_t index) {
  auto fd = UniqueFd::Open(path, O_RDONLY);
  EXPECT_TRUE(fd.ok());
  T value{};
  EXPECT_TRUE(PreadFull(fd->get(), &value, sizeof value, index * static_cast<int64_t>(sizeof(T)), path).ok());
  return value;
}

}  // namespace seer::testing
