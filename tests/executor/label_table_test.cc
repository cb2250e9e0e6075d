// LabelTable (executor/label_table.h) against labels.bin as written: chosen nodes across
// the 2^18-label read chunks (first, last, both sides of a boundary, duplicates),
// unlabeled (-1) and not-loaded nodes, the union of node sets, and ids out of range.
#include "executor/label_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "support/graph_writer.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;
using seer::testing::OpenWrittenDataset;
using seer::testing::WriteGraph;

constexpr int64_t kChunk = int64_t{1} << 18;  // LabelTable's read size, in labels

// A dataset of `num_nodes` isolated nodes whose labels.bin holds `labels`, with
// `num_classes` classes in its manifest. WriteGraph writes labels 0 and 1 class;
// labels.bin is rewritten with the same size and the manifest's class count edited
// (Dataset::Open checks sizes, the checksums are the checker's business).
Dataset WriteLabels(const std::string& name, const std::vector<int32_t>& labels, int64_t num_classes = 5) {
  const std::string dir = MakeTempDir(name);
  WriteGraph(dir, std::vector<std::vector<int64_t>>(labels.size()), {});
  {
    const std::string manifest_path = dir + "/" + dataset_files::kManifest;
    std::string manifest = ReadWholeFile(manifest_path).value();
    const size_t at = manifest.find("\"num_classes\": 1");
    EXPECT_NE(at, std::string::npos) << manifest;
    if (at != std::string::npos) manifest.replace(at, 16, "\"num_classes\": " + std::to_string(num_classes));
    EXPECT_TRUE(WriteFileAtomically(manifest_path, manifest).ok());
  }
  FILE* f = std::fopen((dir + "/" + dataset_files::kLabels).c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (f != nullptr) {
    EXPECT_EQ(std::fwrite(labels.data(), 4, labels.size(), f), labels.size());
    std::fclose(f);
  }
  return OpenWrittenDataset(dir);
}

// Labels 0..4 with every 7th node unlabeled, over a little more than one read chunk.
std::vector<int32_t> PatternLabels() {
  std::vector<int32_t> labels(static_cast<size_t>(kChunk + 4111));
  for (size_t v = 0; v < labels.size(); ++v) labels[v] = v % 7 == 3 ? -1 : static_cast<int32_t>(v % 5);
  return labels;
}

TEST(LabelTableTest, LabelsMatchTheFileAcrossReadChunks) {
  const std::vector<int32_t> labels = PatternLabels();
  const Dataset dataset = WriteLabels("labels", labels);
  const int64_t last = static_cast<int64_t>(labels.size()) - 1;
  const std::vector<int64_t> nodes = {last, kChunk, 5, kChunk - 1, 0, 3, 5, 17, last};
  auto table = LabelTable::Load(dataset, nodes);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->size(), 7);  // duplicates count once
  for (int64_t v : nodes) EXPECT_EQ(table->Get(v), labels[static_cast<size_t>(v)]) << "node " << v;
  EXPECT_EQ(table->Get(3), -1);  // unlabeled in the file
  EXPECT_EQ(table->Get(4), -1);  // labeled in the file, not loaded
  EXPECT_EQ(table->Get(last + 1), -1);
  EXPECT_EQ(table->Get(-1), -1);

  auto empty = LabelTable::Load(dataset, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0);
  EXPECT_EQ(empty->Get(0), -1);
}

TEST(LabelTableTest, LoadAllIsTheUnionOfTheSets) {
  const std::vector<int32_t> labels = PatternLabels();
  const Dataset dataset = WriteLabels("labels_all", labels);
  const std::vector<int64_t> train = {1, 2, kChunk + 1}, valid = {2, 9}, test;
  auto all = LabelTable::LoadAll(dataset, {&train, &valid, &test});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 4);
  for (int64_t v : {int64_t{1}, int64_t{2}, int64_t{9}, kChunk + 1}) {
    EXPECT_EQ(all->Get(v), labels[static_cast<size_t>(v)]) << "node " << v;
  }
}

TEST(LabelTableTest, MergeKeepsThisTablesLabelForSharedNodes) {
  const Dataset mine = WriteLabels("labels_mine", {4, 4, 4, 4});
  const Dataset other = WriteLabels("labels_other", {1, 1, 1, 1});
  auto table = LabelTable::Load(mine, {0, 2});
  auto more = LabelTable::Load(other, {2, 3});
  ASSERT_TRUE(table.ok() && more.ok());
  table->Merge(*more);
  EXPECT_EQ(table->size(), 3);
  EXPECT_EQ(table->Get(0), 4);
  EXPECT_EQ(table->Get(2), 4);
  EXPECT_EQ(table->Get(3), 1);
  EXPECT_EQ(table->Get(1), -1);
}

// A label outside [-1, num_classes) never reaches the model: Load refuses it naming
// labels.bin, the node and its byte offset (a 29-line libtorch trace in training before).
TEST(LabelTableTest, LabelsOutsideTheClassesAreRefusedNamingTheNode) {
  for (int32_t bad : {5, 1000000000, -2}) {
    const Dataset dataset = WriteLabels("labels_bad", {0, 1, bad, 4}, /*num_classes=*/5);
    auto table = LabelTable::Load(dataset, {0, 2, 3});
    ASSERT_FALSE(table.ok()) << bad;
    EXPECT_EQ(table.status().code(), StatusCode::kCorrupt);
    const std::string& m = table.status().message();
    EXPECT_NE(m.find(dataset_files::kLabels), std::string::npos) << m;
    EXPECT_NE(m.find("node 2 has label " + std::to_string(bad) + " at byte offset 8"), std::string::npos) << m;
    EXPECT_TRUE(LabelTable::Load(dataset, {0, 1, 3}).ok()) << "a bad label of a node not asked for is not read";
  }
}

TEST(LabelTableTest, IdsOutOfRangeAreAnErrorNamingThem) {
  const Dataset dataset = WriteLabels("labels_range", {0, 1, 2, 3, 4});
  for (int64_t bad : {int64_t{5}, int64_t{-1}, int64_t{1} << 40}) {
    auto table = LabelTable::Load(dataset, {0, bad, 4});
    ASSERT_FALSE(table.ok()) << bad;
    EXPECT_EQ(table.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(table.status().message().find("node id " + std::to_string(bad)), std::string::npos)
        << table.status().message();
    EXPECT_NE(table.status().message().find(dataset_files::kLabels), std::string::npos);
  }
  const std::vector<int64_t> fine = {4}, beyond = {5};
  EXPECT_FALSE(LabelTable::LoadAll(dataset, {&fine, &beyond}).ok());
}

}  // namespace
}  // namespace seer
