// The typed synthetic generator (storage/prep/hetero_graph.h): same seed same bytes,
// reverse relations exactly the forward ones transposed, planted communities that drive
// citations and features, blocks bounded by block_edges, and the typed checker passing.
#include "storage/prep/hetero_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/dataset_check.h"
#include "support/test_support.h"

namespace seer {
namespace {

using testing::ReadArray;
using testing::ReadFileBytes;

HeteroGraphConfig SmallConfig() {
  HeteroGraphConfig c;
  c.num_papers = 3001;
  c.feature_dim = 8;
  c.num_classes = 5;
  c.num_institutes = 40;  // not papers / 1000 = 3: drawing 4500 edges into 3 nodes repeats most of them
  c.num_fos = 200;
  c.institutes_per_author = 1.5;
  return c;
}

std::string Generate(const HeteroGraphConfig& c, const std::string& name, HeteroGraphSummary* summary = nullptr) {
  const std::string dir = testing::MakeTempDir(name) + "/ds";
  auto s = GenerateHeteroDataset(c, dir, false);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (summary != nullptr && s.ok()) *summary = *s;
  return dir;
}

// (src, dst) pairs of a relation's CSC (uint32 indices: every test graph is small).
std::vector<std::pair<int64_t, int64_t>> Edges(const std::string& dir, const DatasetRelation& r) {
  const auto indptr = ReadArray<int64_t>(dir + "/" + r.indptr);
  const auto indices = ReadArray<uint32_t>(dir + "/" + r.indices);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (size_t v = 0; v + 1 < indptr.size(); ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) edges.emplace_back(indices[static_cast<size_t>(e)], v);
  }
  return edges;
}

TEST(HeteroGraphTest, SameSeedSameBytesOtherSeedOtherGraph) {
  HeteroGraphConfig c = SmallConfig();
  c.num_institutes = -1;  // by ratio
  c.num_fos = -1;
  const std::string a = Generate(c, "hetero_a");
  const std::string b = Generate(c, "hetero_b");
  c.seed = 2;
  const std::string other = Generate(c, "hetero_c");
  auto m = Dataset::OpenAnyKind(a);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->manifest().files.size(), 24u);  // 4 feature files, labels, 3 splits, 8 relations x 2
  EXPECT_EQ(m->manifest().node_types[1].count, 3001);  // authors = papers
  EXPECT_EQ(m->manifest().node_types[2].count, 3);     // institutes = papers / 1000
  EXPECT_EQ(m->manifest().node_types[3].count, 30);    // fos = papers / 100
  for (const auto& [name, entry] : m->manifest().files) {
    EXPECT_EQ(ReadFileBytes(a + "/" + name), ReadFileBytes(b + "/" + name)) << name;
  }
  EXPECT_EQ(ReadFileBytes(a + "/dataset.json"), ReadFileBytes(b + "/dataset.json"));
  EXPECT_NE(ReadFileBytes(a + "/paper__cites__paper.indices.bin"),
            ReadFileBytes(other + "/paper__cites__paper.indices.bin"));
  EXPECT_NE(ReadFileBytes(a + "/paper.labels.bin"), ReadFileBytes(other + "/paper.labels.bin"));
}

TEST(HeteroGraphTest, SchemaCountsAndReverseRelationsAreTransposes) {
  HeteroGraphSummary summary;
  const std::string dir = Generate(SmallConfig(), "hetero_schema", &summary);
  const DatasetManifest& m = summary.manifest;
  ASSERT_EQ(m.node_types.size(), 4u);
  EXPECT_EQ(m.node_types[0].name, "paper");
  EXPECT_EQ(m.node_types[0].count, 3001);
  EXPECT_EQ(m.node_types[1].count, 3001);  // authors = papers
  EXPECT_EQ(m.node_types[2].count, 40);
  EXPECT_EQ(m.node_types[3].count, 200);
  const std::vector<std::string> keys = {"paper__cites__paper",
                                         "paper__cited_by__paper",
                                         "paper__written_by__author",
                                         "author__writes__paper",
                                         "author__affiliated_with__institute",
                                         "institute__has_member__author",
                                         "paper__topic__fos",
                                         "fos__topic_of__paper"};
  ASSERT_EQ(m.relations.size(), keys.size());
  int64_t total = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(m.relations[i].key(), keys[i]);
    total += m.relations[i].num_edges;
  }
  EXPECT_EQ(m.num_edges, total);
  EXPECT_EQ(m.num_nodes, 3001 + 3001 + 40 + 200);
  const double expected[] = {30010, 9003, 4501.5, 12004};  // per-source rates x source counts
  for (size_t f = 0; f < 4; ++f) {
    const DatasetRelation& forward = m.relations[2 * f];
    const DatasetRelation& reverse = m.relations[2 * f + 1];
    auto edges = Edges(dir, forward);
    auto transposed = Edges(dir, reverse);
    for (auto& [s, d] : transposed) std::swap(s, d);
    std::sort(edges.begin(), edges.end());
    std::sort(transposed.begin(), transposed.end());
    EXPECT_EQ(edges, transposed) << forward.key();
    EXPECT_EQ(std::adjacent_find(edges.begin(), edges.end()), edges.end()) << forward.key() << ": an edge twice";
    // Close to the expected count (repeated draws are stored once).
    EXPECT_GT(static_cast<double>(forward.num_edges), 0.8 * expected[f]) << forward.key();
    EXPECT_LT(static_cast<double>(forward.num_edges), 1.05 * expected[f]) << forward.key();
    if (forward.src == forward.dst) {
      for (const auto& [s, d] : edges) ASSERT_NE(s, d) << "self loop in " << forward.key();
    }
  }
  auto check = CheckDataset(dir, DatasetCheckOptions{true, false});
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->checksums_verified, 24);
  EXPECT_EQ(check->node_types[0].num_labeled, 3001);
  EXPECT_EQ(check->node_types[0].num_train + check->node_types[0].num_valid + check->node_types[0].num_test, 3001);
}

// Labels are the planted communities: citations join same-label papers about as often as
// `homophily` says (5 classes: 0.2 by chance), and a paper's features are nearer its own
// class's mean than any other's far more often than chance.
TEST(HeteroGraphTest, PaperLabelsDriveCitationsAndFeatures) {
  for (const double homophily : {0.9, 0.0}) {
    HeteroGraphConfig c = SmallConfig();
    c.homophily = homophily;
    c.feature_signal = 3;
    HeteroGraphSummary summary;
    const std::string dir = Generate(c, "hetero_labels", &summary);
    const auto labels = ReadArray<int32_t>(dir + "/paper.labels.bin");
    ASSERT_EQ(labels.size(), 3001u);
    int64_t same = 0;
    const auto edges = Edges(dir, summary.manifest.relations[0]);
    for (const auto& [s, d] : edges) same += labels[static_cast<size_t>(s)] == labels[static_cast<size_t>(d)];
    const double fraction = static_cast<double>(same) / static_cast<double>(edges.size());
    if (homophily > 0) {
      EXPECT_NEAR(fraction, 0.9, 0.03) << "homophily " << homophily;
    } else {
      EXPECT_LT(fraction, 0.02) << "homophily 0 moves every source to another community";
    }
    // Nearest class mean (means from the data itself).
    const auto x = ReadArray<float>(dir + "/paper.features.bin");
    const int64_t f = 8, k = 5;
    std::vector<double> mean(static_cast<size_t>(k * f), 0.0);
    std::vector<int64_t> count(static_cast<size_t>(k), 0);
    for (size_t v = 0; v < labels.size(); ++v) {
      ++count[static_cast<size_t>(labels[v])];
      for (int64_t j = 0; j < f; ++j) mean[labels[v] * f + j] += x[v * f + j];
    }
    for (int64_t i = 0; i < k * f; ++i) mean[static_cast<size_t>(i)] /= static_cast<double>(count[i / f]);
    int64_t right = 0;
    for (size_t v = 0; v < labels.size(); ++v) {
      int64_t best = 0;
      double best_distance = 1e300;
      for (int64_t cls = 0; cls < k; ++cls) {
        double distance = 0;
        for (int64_t j = 0; j < f; ++j) distance += std::pow(x[v * f + j] - mean[cls * f + j], 2);
        if (distance < best_distance) best_distance = distance, best = cls;
      }
      right += best == labels[v];
    }
    EXPECT_GT(static_cast<double>(right) / 3001.0, 0.6);
  }
}

TEST(HeteroGraphTest, BlocksStayNearBlockEdgesAndOptionsShapeTheSchema) {
  HeteroGraphConfig c = SmallConfig();
  c.block_edges = 2048;
  c.block_nodes = 1024;
  c.reverse = false;
  c.featureless = {"institute", "fos"};
  c.feature_dtype = FeatureDtype::kInt8;
  HeteroGraphSummary summary;
  const std::string dir = Generate(c, "hetero_blocks", &summary);
  EXPECT_LE(summary.max_block_edges, 2 * 2048) << "one block held far more than block_edges";
  const DatasetManifest& m = summary.manifest;
  ASSERT_EQ(m.relations.size(), 4u);
  EXPECT_EQ(m.relations[1].key(), "paper__written_by__author");
  EXPECT_EQ(m.node_types[2].feature_dim, 0);
  EXPECT_EQ(m.node_types[2].features, "");
  EXPECT_EQ(m.node_types[1].feature_dtype, FeatureDtype::kInt8);
  EXPECT_FALSE(testing::FileExists(dir + "/fos.features.bin"));
  auto check = CheckDataset(dir, DatasetCheckOptions{true, false});
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->checksums_verified, static_cast<int64_t>(m.files.size()));
}

TEST(HeteroGraphTest, BadConfigsAreRefusedNamingTheField) {
  HeteroGraphConfig c = SmallConfig();
  c.featureless = {"venue"};
  EXPECT_NE(ValidateHeteroGraphConfig(c).message().find("featureless names 'venue'"), std::string::npos);
  c = SmallConfig();
  c.num_fos = 0;
  EXPECT_NE(ValidateHeteroGraphConfig(c).message().find("fos = 0 must be >= 1"), std::string::npos);
  c = SmallConfig();
  c.skew = 1;
  EXPECT_NE(ValidateHeteroGraphConfig(c).message().find("skew"), std::string::npos);
  c = SmallConfig();
  c.num_papers = 1;
  EXPECT_NE(ValidateHeteroGraphConfig(c).message().find("citations need at least 2 papers"), std::string::npos);
  c.cites_per_paper = 0;  // one paper without citations is a graph
  EXPECT_TRUE(ValidateHeteroGraphConfig(c).ok());
  const std::string dir = Generate(c, "hetero_one_paper");
  EXPECT_TRUE(CheckDataset(dir, DatasetCheckOptions{true, false}).ok());
}

}  // namespace
}  // namespace seer
