// The prep library (storage/prep/dataset_prep.h): `seer prep` without the CLI, from
// .npy arrays and from an OGB folder (plain and gzip files).
#include "storage/prep/dataset_prep.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/file_io.h"
#include "storage/dataset/dataset_check.h"
#include "storage/prep/npy.h"
#include "support/test_support.h"
#include "text_fixtures.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("prep"); }
using testing::Gzip;
using testing::WriteText;

using testing::ReadArray;

bool HasManifest(const std::string& dir) { return FileSizeBytes(dir + "/dataset.json").ok(); }

struct NpyDataset {
  std::string dir;
  PrepInputs in;
};

// 6 nodes, features 6x5 float32, labels with NaN, splits.
NpyDataset MakeNpyInputs() {
  NpyDataset d;
  d.dir = MakeTempDir();
  WriteText(d.dir + "/edges.txt", "0 1\n2 1\n3 0\n1 3\n0 3\n2 3\n3 1\n5 4\n");
  std::vector<float> features(30);
  for (int i = 0; i < 30; ++i) features[i] = static_cast<float>(i) / 7;
  EXPECT_TRUE(WriteNpy(d.dir + "/feat.npy", "<f4", {6, 5}, features.data()).ok());
  std::vector<double> labels = {0, 2, NAN, 1, 2, 0};
  EXPECT_TRUE(WriteNpy(d.dir + "/labels.npy", "<f8", {6, 1}, labels.data()).ok());
  std::vector<int64_t> train = {0, 1}, valid = {3}, test = {4, 5};
  EXPECT_TRUE(WriteNpy(d.dir + "/train.npy", "<i8", {2}, train.data()).ok());
  EXPECT_TRUE(WriteNpy(d.dir + "/valid.npy", "<i8", {1}, valid.data()).ok());
  EXPECT_TRUE(WriteNpy(d.dir + "/test.npy", "<i8", {2}, test.data()).ok());
  d.in.edges = d.dir + "/edges.txt";
  d.in.features = d.dir + "/feat.npy";
  d.in.labels = d.dir + "/labels.npy";
  d.in.train = d.dir + "/train.npy";
  d.in.valid = d.dir + "/valid.npy";
  d.in.test = d.dir + "/test.npy";
  return d;
}

TEST(PrepTest, NpyInputsGiveAValidDataset) {
  NpyDataset d = MakeNpyInputs();
  PrepOptions options;
  options.feature_dtype = FeatureDtype::kFloat16;
  auto summary = PrepareDataset(d.in, options, d.dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->csc.num_nodes, 6);
  EXPECT_EQ(summary->num_classes, 3);
  EXPECT_EQ(summary->num_labeled, 5);
  auto checked = CheckDataset(d.dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(ReadArray<int64_t>(d.dir + "/out/indptr.bin"), (std::vector<int64_t>{0, 1, 4, 4, 7, 8, 8}));
  EXPECT_EQ(ReadArray<int32_t>(d.dir + "/out/labels.bin"), (std::vector<int32_t>{0, 2, -1, 1, 2, 0}));
  EXPECT_EQ(ReadArray<int64_t>(d.dir + "/out/test.bin"), (std::vector<int64_t>{4, 5}));
  auto halves = ReadArray<uint16_t>(d.dir + "/out/features.bin");
  EXPECT_EQ(halves.size(), 2048u);  // 60 bytes padded to 4096
  EXPECT_EQ(halves[7], 0x3c00);     // 7/7 = 1.0
}

TEST(PrepTest, BadNodeArraysFailWithoutManifest) {
  struct Case {
    std::string what;
    std::function<void(NpyDataset&)> corrupt;
    std::string expected;
  } cases[] = {
      {"feature rows", [](NpyDataset& d) {
         std::vector<float> f(25);
         ASSERT_TRUE(WriteNpy(d.dir + "/feat.npy", "<f4", {5, 5}, f.data()).ok());
         d.in.num_nodes = 6;
       }, "feat.npy: 5 feature rows, but the graph has 6 nodes"},
      {"feature dtype", [](NpyDataset& d) {
         std::vector<int32_t> f(30);
         ASSERT_TRUE(WriteNpy(d.dir + "/feat.npy", "<i4", {6, 5}, f.data()).ok());
       }, "feat.npy: features dtype <i4 is not float16/32/64"},
      {"truncated features", [](NpyDataset& d) {
         ASSERT_EQ(::truncate((d.dir + "/feat.npy").c_str(), 150), 0);
       }, "feat.npy: truncated .npy"},
      {"split out of range", [](NpyDataset& d) {
         std::vector<int64_t> t = {4, 6};
         ASSERT_TRUE(WriteNpy(d.dir + "/test.npy", "<i8", {2}, t.data()).ok());
       }, "test.npy: element 1: split node id 6 out of range [0, 6)"},
      {"split overlap", [](NpyDataset& d) {
         std::vector<int64_t> t = {4, 0};
         ASSERT_TRUE(WriteNpy(d.dir + "/test.npy", "<i8", {2}, t.data()).ok());
       }, "test.npy: element 1: node 0 is already in the train split"},
      {"bad label", [](NpyDataset& d) {
         std::vector<int64_t> l = {0, 1, -2, 0, 0, 0};
         ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {6}, l.data()).ok());
       }, "labels.npy: element 2: label -2 out of range"},
      {"edge id", [](NpyDataset& d) {
         WriteText(d.dir + "/edges.txt", "0 1\n\n6 2\n");
         d.in.num_nodes = 6;  // given: the edge list is the one that is wrong
       }, "edges.txt:3: node id 6 >= num_nodes 6"},
      // The node count comes from the feature rows: a short feature array is named, not the
      // edge list (which was blamed before: "edges.txt:3: node id 6 >= num_nodes 6").
      {"short features", [](NpyDataset& d) {
         std::vector<float> f(25);
         ASSERT_TRUE(WriteNpy(d.dir + "/feat.npy", "<f4", {5, 5}, f.data()).ok());
       }, "feat.npy: 5 feature rows, but " },
      {"short labels", [](NpyDataset& d) {
         d.in.features.clear();
         std::vector<int64_t> l = {0, 1, 1, 0, 0};
         ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {5}, l.data()).ok());
       }, "labels.npy: 5 labels, but "},
      {"huge label", [](NpyDataset& d) {
         std::vector<int64_t> l = {0, 1, 1000000000, 0, 0, 0};
         ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {6}, l.data()).ok());
       }, "labels.npy: element 2: label 1000000000 out of range [-1, 100000)"},
      {"label above --num-classes", [](NpyDataset& d) {
         std::vector<int64_t> l = {0, 1, 4, 0, 0, 0};
         ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {6}, l.data()).ok());
         d.in.num_nodes = -2;  // marker: run with --num-classes 4 (below)
       }, "labels.npy: element 2: label 4 out of range [-1, 4) given by --num-classes"},
      // Ids near 2^62 overflowed the degree table's size (vector::_M_fill_insert) before.
      {"id near 2^62", [](NpyDataset& d) {
         d.in.features.clear();
         d.in.labels.clear();
         d.in.train.clear();
         d.in.valid.clear();
         d.in.test.clear();
         WriteText(d.dir + "/edges.txt", "0 1\n4611686018427387904 2\n");
       }, "edges.txt:2: node id 4611686018427387904 is above the largest supported id"},
      {"id of 18 digits (fast parser path)", [](NpyDataset& d) {
         d.in.features.clear();
         d.in.labels.clear();
         d.in.train.clear();
         d.in.valid.clear();
         d.in.test.clear();
         WriteText(d.dir + "/edges.txt", "0 1\n1 2\n3 999999999999999999\n");
       }, "edges.txt:3: node id 999999999999999999 is above the largest supported id"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    NpyDataset d = MakeNpyInputs();
    c.corrupt(d);
    PrepOptions options;
    if (d.in.num_nodes == -2) {
      d.in.num_nodes = -1;
      options.num_classes = 4;
    }
    auto summary = PrepareDataset(d.in, options, d.dir + "/out");
    ASSERT_FALSE(summary.ok());
    EXPECT_NE(summary.status().message().find(c.expected), std::string::npos) << summary.status().message();
    EXPECT_FALSE(HasManifest(d.dir + "/out"));
  }
}

TEST(PrepTest, OgbFolderWithGzipFiles) {
  std::string dir = MakeTempDir();
  ASSERT_EQ(::mkdir((dir + "/raw").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/split").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/split/time").c_str(), 0755), 0);
  WriteText(dir + "/raw/edge.csv", "0,1\n2,1\n3,0\n1,3\n0,3\n2,3\n3,1\n");
  WriteText(dir + "/raw/num-node-list.csv", "5\n");
  WriteText(dir + "/raw/node-feat.csv", "0.5,1,2\n-1,0,1e-3\n1,1,1\n2,2,2\n3,3,3\n");
  WriteText(dir + "/raw/node-label.csv", "1\n0\nnan\n4.0\n2\n");
  WriteText(dir + "/split/time/train.csv", "0\n1\n");
  WriteText(dir + "/split/time/valid.csv", "3\n");
  WriteText(dir + "/split/time/test.csv", "4\n");
  for (const char* f : {"/raw/edge.csv", "/raw/node-feat.csv", "/raw/node-label.csv", "/split/time/train.csv"}) {
    Gzip(dir + f);
  }
  PrepInputs in;
  in.ogb_dir = dir;
  auto summary = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->csc.num_nodes, 5);
  EXPECT_EQ(summary->feature_dim, 3);
  EXPECT_EQ(summary->num_classes, 5);
  EXPECT_EQ(summary->num_train, 2);
  ASSERT_TRUE(CheckDataset(dir + "/out", DatasetCheckOptions{true}).ok());
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/indptr.bin"), (std::vector<int64_t>{0, 1, 4, 4, 7, 7}));
  EXPECT_EQ(ReadArray<int32_t>(dir + "/out/labels.bin"), (std::vector<int32_t>{1, 0, -1, 4, 2}));
  auto features = ReadArray<float>(dir + "/out/features.bin");
  EXPECT_EQ(features[3], -1.0f);
  EXPECT_EQ(features[5], 1e-3f);

  // A malformed feature row names the .gz file and its line.
  WriteText(dir + "/raw/node-feat.csv", "0.5,1,2\n-1,0\n");
  Gzip(dir + "/raw/node-feat.csv");
  auto bad = PrepareDataset(in, PrepOptions{}, dir + "/out2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node-feat.csv.gz:2: malformed line: 2 values, expected 3"),
            std::string::npos) << bad.status().message();
  EXPECT_FALSE(HasManifest(dir + "/out2"));
}

// --remap-ids: string ids renumbered in id order (integers by value, then strings by
// bytes), the mapping in node_ids.txt and the manifest; oracle by hand.
TEST(PrepTest, RemapStringIdsWritesTheMapping) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.csv", "from,to,w\nbob,alice,1\n10,bob,2\n\"carol\",10,3\n9,alice,4\nbob,9,5\n");
  PrepInputs in;
  in.edges = dir + "/e.csv";
  in.columns = TextColumns{"from", "to"};
  in.remap_ids = true;
  auto summary = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  // Order: 9, 10, alice, bob, carol -> 0..4.
  std::string ids = testing::ReadFileBytes(dir + "/out/node_ids.txt");
  EXPECT_EQ(ids, "9\n10\nalice\nbob\ncarol\n");
  // Edges (dense): 3->2, 1->3, 4->1, 0->2, 3->0; in-lists: 0:{3} 1:{4} 2:{0,3} 3:{1} 4:{}.
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/indptr.bin"), (std::vector<int64_t>{0, 1, 2, 4, 5, 5}));
  EXPECT_EQ(ReadArray<uint32_t>(dir + "/out/indices.bin"), (std::vector<uint32_t>{3, 4, 0, 3, 1}));
  auto checked = CheckDataset(dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->manifest.node_ids, "node_ids.txt");
  // The check reads the mapping: an unsorted one is refused with its line.
  WriteText(dir + "/out/node_ids.txt", "9\n10\nbob\nalice\ncarol\n");
  auto bad = CheckDataset(dir + "/out", DatasetCheckOptions{false});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node_ids.txt:4: node id 'alice' is not after 'bob'"), std::string::npos)
      << bad.status().message();
  // Node arrays need integer ids.
  std::vector<float> f(10);
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {5, 2}, f.data()).ok());
  in.features = dir + "/f.npy";
  auto refused = PrepareDataset(in, PrepOptions{}, dir + "/out2");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("needs integer ids"), std::string::npos) << refused.status().message();
  EXPECT_FALSE(HasManifest(dir + "/out2"));
}

// Sparse integer ids with node arrays indexed by original id, through a budget small
// enough for many sorted runs. Oracle: the distinct ids sorted, features/labels rows
// picked by id, splits translated, CSC from the renumbered pairs.
TEST(PrepTest, RemapSparseIntegerIdsMapsNodeArrays) {
  std::string dir = MakeTempDir();
  std::mt19937_64 rng(3);
  const int64_t kIdSpace = 50000;
  std::vector<std::pair<int64_t, int64_t>> edges;
  std::string text = "# sparse ids\n";
  for (int i = 0; i < 40000; ++i) {
    const int64_t s = static_cast<int64_t>(rng() % 3000) * 16 + 5, d = static_cast<int64_t>(rng() % 3000) * 16 + 5;
    edges.emplace_back(s, d);
    text += std::to_string(s) + "\t" + std::to_string(d) + "\n";
  }
  WriteText(dir + "/e.txt", text);
  std::vector<int64_t> ids;
  for (auto& [s, d] : edges) ids.insert(ids.end(), {s, d});
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto dense = [&](int64_t id) { return std::lower_bound(ids.begin(), ids.end(), id) - ids.begin(); };
  std::vector<float> features(static_cast<size_t>(kIdSpace * 3));
  for (size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>(i);
  std::vector<int64_t> labels(static_cast<size_t>(kIdSpace));
  for (int64_t i = 0; i < kIdSpace; ++i) labels[i] = i % 7;
  std::vector<int64_t> train = {ids[5], ids[2], ids.back()};
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {kIdSpace, 3}, features.data()).ok());
  ASSERT_TRUE(WriteNpy(dir + "/l.npy", "<i8", {kIdSpace}, labels.data()).ok());
  ASSERT_TRUE(WriteNpy(dir + "/t.npy", "<i8", {3}, train.data()).ok());
  PrepInputs in;
  in.edges = dir + "/e.txt";
  in.remap_ids = true;
  in.features = dir + "/f.npy";
  in.labels = dir + "/l.npy";
  in.train = dir + "/t.npy";
  PrepOptions options;
  options.memory_budget_bytes = 2 << 20;  // sort runs of 1 MiB: 80000 records need several
  auto summary = PrepareDataset(in, options, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->csc.num_nodes, static_cast<int64_t>(ids.size()));
  std::string expected_ids;
  for (int64_t id : ids) expected_ids += std::to_string(id) + "\n";
  EXPECT_EQ(testing::ReadFileBytes(dir + "/out/node_ids.txt"), expected_ids);
  auto got_features = ReadArray<float>(dir + "/out/features.bin");
  auto got_labels = ReadArray<int32_t>(dir + "/out/labels.bin");
  for (size_t k = 0; k < ids.size(); ++k) {
    ASSERT_EQ(got_features[3 * k + 1], features[static_cast<size_t>(ids[k] * 3 + 1)]) << k;
    ASSERT_EQ(got_labels[k], labels[static_cast<size_t>(ids[k])]) << k;
  }
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/train.bin"),
            (std::vector<int64_t>{5, 2, static_cast<int64_t>(ids.size()) - 1}));
  std::vector<std::pair<int64_t, int64_t>> by_dst;  // (dst, src) dense
  for (auto& [s, d] : edges) by_dst.emplace_back(dense(d), dense(s));
  std::sort(by_dst.begin(), by_dst.end());
  auto indices = ReadArray<uint32_t>(dir + "/out/indices.bin");
  ASSERT_EQ(indices.size(), by_dst.size());
  for (size_t i = 0; i < by_dst.size(); ++i) ASSERT_EQ(indices[i], by_dst[i].second) << i;
  ASSERT_TRUE(CheckDataset(dir + "/out", DatasetCheckOptions{true}).ok());
  // A split id that is not a node of the edge list is named.
  train[1] = 7;
  ASSERT_TRUE(WriteNpy(dir + "/t.npy", "<i8", {3}, train.data()).ok());
  auto bad = PrepareDataset(in, options, dir + "/out2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("t.npy: element 1: node id 7 does not occur in the edge list"),
            std::string::npos) << bad.status().message();
}

// Features stored as bfloat16: every value is the nearest bfloat16 of the float32 input.
TEST(PrepTest, BFloat16FeaturesAreTheRoundedInputs) {
  NpyDataset d = MakeNpyInputs();
  PrepOptions options;
  options.feature_dtype = FeatureDtype::kBFloat16;
  auto summary = PrepareDataset(d.in, options, d.dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->feature_dtype, FeatureDtype::kBFloat16);
  auto checked = CheckDataset(d.dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->manifest.feature_dtype, FeatureDtype::kBFloat16);
  auto stored = ReadArray<uint16_t>(d.dir + "/out/features.bin");
  for (int i = 0; i < 30; ++i) {
    const float x = static_cast<float>(i) / 7;
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    // Oracle: keep the top 16 bits, round half to even on the rest.
    const uint32_t rest = bits & 0xffffu, top = bits >> 16;
    const uint32_t expected = top + ((rest > 0x8000u || (rest == 0x8000u && (top & 1u))) ? 1 : 0);
    EXPECT_EQ(stored[i], expected) << i;
  }
}

// prep --force over an existing dataset whose conversion fails leaves the old dataset as
// it was (the old code removed its manifest first, leaving .bin files without one).
TEST(PrepTest, FailedForcedConversionKeepsTheOldDataset) {
  NpyDataset d = MakeNpyInputs();
  ASSERT_TRUE(PrepareDataset(d.in, PrepOptions{}, d.dir + "/out").ok());
  const std::string manifest_before = testing::ReadFileBytes(d.dir + "/out/dataset.json");
  std::vector<int64_t> bad = {0, 1, -2, 0, 0, 0};
  ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {6}, bad.data()).ok());
  WriteText(d.dir + "/edges.txt", "0 1\n1 2\n");
  PrepOptions force;
  force.force = true;
  auto failed = PrepareDataset(d.in, force, d.dir + "/out");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(testing::ReadFileBytes(d.dir + "/out/dataset.json"), manifest_before);
  auto checked = CheckDataset(d.dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->manifest.num_edges, 8);
  for (const auto& e : std::filesystem::directory_iterator(d.dir)) {
    EXPECT_EQ(e.path().filename().string().rfind(".seer-prep-", 0), std::string::npos) << e.path();
  }
  // And a forced conversion that succeeds replaces it.
  std::vector<int64_t> good = {0, 1, 1, 0, 0, 0};
  ASSERT_TRUE(WriteNpy(d.dir + "/labels.npy", "<i8", {6}, good.data()).ok());
  auto replaced = PrepareDataset(d.in, force, d.dir + "/out");
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  checked = CheckDataset(d.dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->manifest.num_edges, 2);
}

// --num-classes fixes the manifest's count (classes with no labeled node allowed).
TEST(PrepTest, NumClassesIsRecorded) {
  NpyDataset d = MakeNpyInputs();
  PrepOptions options;
  options.num_classes = 10;
  auto summary = PrepareDataset(d.in, options, d.dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->num_classes, 10);
  auto ds = Dataset::Open(d.dir + "/out");
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ds->manifest().num_classes, 10);
}

// Ids near 2^62 in a binary edge list: named by byte offset.
TEST(PrepTest, HugeIdInBinaryEdgesIsNamedByOffset) {
  const std::string dir = MakeTempDir();
  std::vector<int64_t> pairs = {0, 1, 2, (int64_t{1} << 62) + 5};
  WriteText(dir + "/e.bin64", std::string(reinterpret_cast<const char*>(pairs.data()), pairs.size() * 8));
  PrepInputs in;
  in.edges = dir + "/e.bin64";
  auto summary = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("e.bin64: edge #1 at byte offset 16: node id 4611686018427387909 is above"),
            std::string::npos)
      << summary.status().message();
}

}  // namespace
}  // namespace seer
