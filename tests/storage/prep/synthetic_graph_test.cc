#include "storage/prep/synthetic_graph.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include "support/small_dataset.h"
#include "support/test_support.h"

#include "storage/base/file_io.h"
#include "storage/dataset/dataset_check.h"
#include "storage/dataset/float16.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("synthetic"); }

using testing::ReadArray;

struct Loaded {
  std::vector<int64_t> indptr;
  std::vector<uint32_t> indices;
  std::vector<int32_t> labels;
  std::vector<float> features;
  std::vector<int64_t> train, test;
};

Loaded Load(const std::string& dir, int64_t num_nodes, int64_t feature_dim) {
  Loaded g;
  g.indptr = ReadArray<int64_t>(dir + "/indptr.bin");
  g.indices = ReadArray<uint32_t>(dir + "/indices.bin");
  g.labels = ReadArray<int32_t>(dir + "/labels.bin");
  g.features = ReadArray<float>(dir + "/features.bin");
  g.features.resize(static_cast<size_t>(num_nodes * feature_dim));  // drop the padding
  g.train = ReadArray<int64_t>(dir + "/train.bin");
  g.test = ReadArray<int64_t>(dir + "/test.bin");
  return g;
}

SyntheticGraphConfig SmallConfig() {
  return testing::SmallGraphConfig(/*num_nodes=*/20011, /*avg_degree=*/12, /*feature_dim=*/24, /*num_classes=*/7,
                                   /*seed=*/42);
}

// SmallConfig built with direct_csc in blocks of 1000 destinations.
SyntheticGraphConfig DirectConfig() {
  SyntheticGraphConfig c = SmallConfig();
  c.direct_csc = true;
  c.block_nodes = 1000;
  return c;
}

// What ExpectSameFilesForTheSameSeed generated.
struct GeneratedTwice {
  std::string dir;                    // the first build's dataset
  int64_t manifest_edges = 0;         // its manifest's edge count
  SyntheticGraphSummary first, second;
};

// The files depend on the config's graph and seed only, not on how they are built:
// generates `c` into a fresh dir, then builds the same graph another way through
// `second_build(dir)` (a smaller budget, other blocks or threads) into another, and `c`
// with seed 43 into a third. Every file's checksum must be equal in the first two and
// differ in the third.
void ExpectSameFilesForTheSameSeed(
    const SyntheticGraphConfig& c,
    const std::function<Result<SyntheticGraphSummary>(const std::string& dir)>& second_build,
    GeneratedTwice* out) {
  out->dir = MakeTempDir();
  const std::string b = MakeTempDir(), other = MakeTempDir();
  auto sa = GenerateSyntheticDataset(c, out->dir, false);
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  auto sb = second_build(b);
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  SyntheticGraphConfig reseeded = c;
  reseeded.seed = 43;
  ASSERT_TRUE(GenerateSyntheticDataset(reseeded, other, false).ok());
  auto da = Dataset::Open(out->dir), db = Dataset::Open(b), dother = Dataset::Open(other);
  ASSERT_TRUE(da.ok() && db.ok() && dother.ok());
  for (const char* name : {"indptr.bin", "indices.bin", "features.bin", "labels.bin", "train.bin"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(da->manifest().files.at(name).checksum, db->manifest().files.at(name).checksum);
    EXPECT_NE(da->manifest().files.at(name).checksum, dother->manifest().files.at(name).checksum);
  }
  out->manifest_edges = da->manifest().num_edges;
  out->first = *sa;
  out->second = *sb;
}

TEST(SyntheticGraphTest, DeterministicForSeedAndPassesCheck) {
  const SyntheticGraphConfig c = SmallConfig();
  SyntheticGraphConfig multi = c;
  multi.memory_budget_bytes = (32 << 20) + (1200 << 10);  // forces a multi-partition build
  GeneratedTwice built;
  ASSERT_NO_FATAL_FAILURE(ExpectSameFilesForTheSameSeed(
      c, [&](const std::string& dir) { return GenerateSyntheticDataset(multi, dir, false); }, &built));
  EXPECT_GT(built.second.num_partitions, 1);
  EXPECT_EQ(built.manifest_edges, 20011 * 12);
  const std::string& a = built.dir;
  DatasetCheckOptions deep;
  deep.deep = true;
  auto checked = CheckDataset(a, deep);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->num_labeled, 20011);
  EXPECT_NEAR(static_cast<double>(checked->num_train) / 20011, 0.1, 0.01);
  EXPECT_NEAR(static_cast<double>(checked->num_test) / 20011, 0.05, 0.01);
}

TEST(SyntheticGraphTest, ExistingDatasetNeedsForce) {
  SyntheticGraphConfig c = SmallConfig();
  c.num_nodes = 500;
  std::string dir = MakeTempDir();
  ASSERT_TRUE(GenerateSyntheticDataset(c, dir, false).ok());
  auto again = GenerateSyntheticDataset(c, dir, false);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("force"), std::string::npos) << again.status().message();
  EXPECT_TRUE(GenerateSyntheticDataset(c, dir, true).ok());
}

TEST(SyntheticGraphTest, DegreesAreHeavyTailedAndIdsCarryNoDegree) {
  SyntheticGraphConfig c = SmallConfig();
  std::string dir = MakeTempDir();
  ASSERT_TRUE(GenerateSyntheticDataset(c, dir, false).ok());
  Loaded g = Load(dir, c.num_nodes, c.feature_dim);
  int64_t max_degree = 0, min_degree = INT64_MAX;
  double low_half = 0, high_half = 0;
  for (int64_t v = 0; v < c.num_nodes; ++v) {
    int64_t d = g.indptr[v + 1] - g.indptr[v];
    max_degree = std::max(max_degree, d);
    min_degree = std::min(min_degree, d);
    (v < c.num_nodes / 2 ? low_half : high_half) += static_cast<double>(d);
  }
  const double mean = 12;
  EXPECT_GT(max_degree, 20 * mean) << "max in-degree " << max_degree;
  EXPECT_GE(min_degree, 6) << "min_in_degree defaults to avg_degree / 2";
  // After the permutation, the first and second halves of the id range look alike.
  EXPECT_NEAR(low_half / high_half, 1.0, 0.15);
}

// The fraction of edges joining same-class nodes is within 0.02 of the requested
// homophily (0.2 and 0.8) for graphs like `base`; with `balanced_classes`, every class
// also holds N / C nodes (± 5).
void ExpectHomophilyCloseToRequested(const SyntheticGraphConfig& base, bool balanced_classes) {
  for (double h : {0.2, 0.8}) {
    SyntheticGraphConfig c = base;
    c.homophily = h;
    std::string dir = MakeTempDir();
    ASSERT_TRUE(GenerateSyntheticDataset(c, dir, false).ok());
    Loaded g = Load(dir, c.num_nodes, c.feature_dim);
    int64_t same = 0;
    std::vector<int64_t> class_sizes(static_cast<size_t>(c.num_classes));
    for (int64_t v = 0; v < c.num_nodes; ++v) {
      ++class_sizes[g.labels[v]];
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) same += g.labels[g.indices[e]] == g.labels[v];
    }
    double measured = static_cast<double>(same) / static_cast<double>(g.indices.size());
    EXPECT_NEAR(measured, h, 0.02) << "requested " << h;
    if (!balanced_classes) continue;
    for (int64_t size : class_sizes) EXPECT_NEAR(size, c.num_nodes / c.num_classes, 5);
  }
}

// Both builds: the default one (balanced classes) and direct_csc.
TEST(SyntheticGraphTest, HomophilyIsCloseToRequested) {
  ExpectHomophilyCloseToRequested(SmallConfig(), /*balanced_classes=*/true);
  ExpectHomophilyCloseToRequested(DirectConfig(), /*balanced_classes=*/false);
}

// Nearest-centroid classifiers with centroids estimated on train nodes: on raw features
// (the best a features-only model can do, up to estimation error) and on the average of
// a node's features with its in-neighbors' mean (what one GraphSAGE-mean layer sees).
TEST(SyntheticGraphTest, NeighborAveragingBeatsFeaturesAlone) {
  SyntheticGraphConfig c = SmallConfig();
  c.feature_dim = 64;
  c.num_classes = 10;
  std::string dir = MakeTempDir();
  ASSERT_TRUE(GenerateSyntheticDataset(c, dir, false).ok());
  Loaded g = Load(dir, c.num_nodes, c.feature_dim);
  const int64_t f = c.feature_dim;
  std::vector<float> smoothed(g.features.size());
  for (int64_t v = 0; v < c.num_nodes; ++v) {
    int64_t deg = g.indptr[v + 1] - g.indptr[v];
    for (int64_t j = 0; j < f; ++j) {
      double sum = 0;
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) sum += g.features[g.indices[e] * f + j];
      smoothed[v * f + j] = static_cast<float>(0.5 * g.features[v * f + j] + 0.5 * (deg ? sum / deg : 0));
    }
  }
  auto accuracy = [&](const std::vector<float>& x) {
    std::vector<double> centroid(static_cast<size_t>(c.num_classes * f), 0);
    std::vector<int64_t> count(static_cast<size_t>(c.num_classes), 0);
    for (int64_t v : g.train) {
      ++count[g.labels[v]];
      for (int64_t j = 0; j < f; ++j) centroid[g.labels[v] * f + j] += x[v * f + j];
    }
    for (int64_t k = 0; k < c.num_classes; ++k)
      for (int64_t j = 0; j < f; ++j) centroid[k * f + j] /= std::max<int64_t>(1, count[k]);
    int64_t correct = 0;
    for (int64_t v : g.test) {
      int64_t best = -1;
      double best_distance = 1e300;
      for (int64_t k = 0; k < c.num_classes; ++k) {
        double d = 0;
        for (int64_t j = 0; j < f; ++j) d += std::pow(x[v * f + j] - centroid[k * f + j], 2);
        if (d < best_distance) best_distance = d, best = k;
      }
      correct += best == g.labels[v];
    }
    return static_cast<double>(correct) / static_cast<double>(g.test.size());
  };
  double features_only = accuracy(g.features);
  double with_neighbors = accuracy(smoothed);
  std::printf("nearest-centroid accuracy: features only %.3f, self+neighbor mean %.3f\n",
              features_only, with_neighbors);
  EXPECT_LT(features_only, 0.55);
  EXPECT_GT(features_only, 1.5 / static_cast<double>(c.num_classes));  // weak, not useless
  EXPECT_GT(with_neighbors, features_only + 0.25);
}

TEST(SyntheticGraphTest, Float16FeaturesAreTheRoundedFloat32Features) {
  SyntheticGraphConfig c = SmallConfig();
  c.num_nodes = 3001;
  std::string d32 = MakeTempDir(), d16 = MakeTempDir();
  ASSERT_TRUE(GenerateSyntheticDataset(c, d32, false).ok());
  c.feature_dtype = FeatureDtype::kFloat16;
  ASSERT_TRUE(GenerateSyntheticDataset(c, d16, false).ok());
  auto f32 = ReadArray<float>(d32 + "/features.bin");
  auto f16 = ReadArray<uint16_t>(d16 + "/features.bin");
  EXPECT_EQ(f16.size() * 2 % 4096, 0u);
  const size_t n = static_cast<size_t>(c.num_nodes * c.feature_dim);
  ASSERT_GE(f16.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(f16[i], FloatToHalf(f32[i])) << "element " << i;
  auto checked = CheckDataset(d16, DatasetCheckOptions{true});
  EXPECT_TRUE(checked.ok()) << checked.status().ToString();
}

TEST(SyntheticGraphTest, BadConfigIsRejectedWithTheFieldName) {
  SyntheticGraphConfig c = SmallConfig();
  c.train_fraction = 0.7;
  c.test_fraction = 0.5;
  std::string dir = MakeTempDir();
  auto r = GenerateSyntheticDataset(c, dir, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fractions"), std::string::npos);
  EXPECT_FALSE(FileSizeBytes(dir + "/dataset.json").ok());
  c = SmallConfig();
  c.homophily = 1.5;
  r = GenerateSyntheticDataset(c, dir, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("homophily"), std::string::npos);
}


// ---- direct_csc: per-destination blocks, no spill ---------------------------------------

TEST(SyntheticGraphDirectTest, SameFilesWhateverTheBlockSizeAndThreadsAndPassesCheck) {
  const SyntheticGraphConfig c = DirectConfig();
  SyntheticGraphConfig other_blocks = c;
  other_blocks.block_nodes = 4096;
  GeneratedTwice built;
  ASSERT_NO_FATAL_FAILURE(ExpectSameFilesForTheSameSeed(
      c,
      [&](const std::string& dir) {
        tbb::task_arena one_thread(1);
        Result<SyntheticGraphSummary> sb = InvalidArgument("not run");
        one_thread.execute([&] { sb = GenerateSyntheticDataset(other_blocks, dir, false); });
        return sb;
      },
      &built));
  EXPECT_EQ(built.first.num_partitions, (c.num_nodes + 999) / 1000);
  // The edge count is a sum of Poisson draws around N × avg_degree.
  EXPECT_NEAR(static_cast<double>(built.first.num_edges) / (20011.0 * 12), 1.0, 0.03);
  EXPECT_EQ(built.manifest_edges, built.first.num_edges);
  const std::string& a = built.dir;
  auto checked = CheckDataset(a, DatasetCheckOptions{});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  // Lists sorted, no self-loops, every node at least min_in_degree (avg/2) in-neighbors,
  // heavy-tailed in-degrees.
  Loaded g = Load(a, c.num_nodes, c.feature_dim);
  int64_t max_degree = 0;
  for (int64_t v = 0; v < c.num_nodes; ++v) {
    const int64_t d = g.indptr[v + 1] - g.indptr[v];
    ASSERT_GE(d, 6) << "node " << v;
    max_degree = std::max(max_degree, d);
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      ASSERT_NE(static_cast<int64_t>(g.indices[e]), v) << "self-loop at node " << v;
      if (e > g.indptr[v]) {
        ASSERT_LE(g.indices[e - 1], g.indices[e]) << "unsorted list of node " << v;
      }
    }
  }
  EXPECT_GT(max_degree, 10 * 12) << "max in-degree " << max_degree;
}

// Memory: the topology buffer holds one block's edges; the reported maximum is the largest
// block of the written indptr (independent oracle), and it does not grow with N.
TEST(SyntheticGraphDirectTest, TopologyBufferIsOneBlockWhateverN) {
  int64_t max_block[2] = {0, 0};
  int64_t num_edges[2] = {0, 0};
  const int64_t sizes[2] = {20011, 160001};
  for (int k = 0; k < 2; ++k) {
    SyntheticGraphConfig c = DirectConfig();
    c.num_nodes = sizes[k];
    c.avg_degree = 4;
    c.feature_dim = 0;
    c.block_nodes = 512;
    std::string dir = MakeTempDir();
    auto s = GenerateSyntheticDataset(c, dir, false);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::vector<int64_t> indptr = ReadArray<int64_t>(dir + "/indptr.bin");
    int64_t largest = 0;
    for (int64_t first = 0; first < c.num_nodes; first += c.block_nodes) {
      const int64_t end = std::min(c.num_nodes, first + c.block_nodes);
      largest = std::max(largest, indptr[end] - indptr[first]);
    }
    EXPECT_EQ(s->max_block_edges, largest);
    max_block[k] = s->max_block_edges;
    num_edges[k] = s->num_edges;
  }
  EXPECT_GT(num_edges[1], 7 * num_edges[0]);
  // 8x the nodes: the largest block grows by far less (only through the hubs' degrees).
  EXPECT_LT(max_block[1], 3 * max_block[0]) << max_block[0] << " then " << max_block[1];
  EXPECT_LT(max_block[1], num_edges[1] / 20);
}

// Without a per-node table the budget no longer limits N; the default mode still needs
// 8 B per node and says which mode does not.
TEST(SyntheticGraphDirectTest, BudgetNeedsNoPerNodeTable) {
  SyntheticGraphConfig c = SmallConfig();
  c.num_nodes = 1000000000;
  c.avg_degree = 2;
  c.memory_budget_bytes = 256 << 20;
  Status st = ValidateSyntheticGraphConfig(c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("direct"), std::string::npos) << st.message();
  c.direct_csc = true;
  EXPECT_TRUE(ValidateSyntheticGraphConfig(c).ok());
  c.block_nodes = 0;
  EXPECT_FALSE(ValidateSyntheticGraphConfig(c).ok());
}

}  // namespace
}  // namespace seer
