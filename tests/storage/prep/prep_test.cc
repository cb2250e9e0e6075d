// The prep library (storage/prep/dataset_prep.h): `seer prep` without the CLI, from
// .npy arrays and from an OGB folder (plain and gzip files).
#include "storage/prep/dataset_prep.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
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
       }, "edges.txt:3: node id 6 >= num_nodes 6"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    NpyDataset d = MakeNpyInputs();
    c.corrupt(d);
    auto summary = PrepareDataset(d.in, PrepOptions{}, d.dir + "/out");
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

}  // namespace
}  // namespace seer
