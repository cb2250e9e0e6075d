// A small generated dataset (1237 nodes, 5 classes, 13 features) that a test may corrupt
// in place, and element-wise pokes and peeks into its raw files. Header-only: the test
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

// A fresh valid dataset in its own temp dir (removed after the test).
inline std::string MakeSmallDataset(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  SyntheticGraphConfig c;
  c.num_nodes = kSmallDatasetNodes;
  c.avg_degree = 6;
  c.feature_dim = 13;
  c.num_classes = kSmallDatasetClasses;
  c.memory_budget_bytes = 64 << 20;
  auto r = GenerateSyntheticDataset(c, dir, false);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return dir;
}

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
