// npy reader, edge-list readers and the prep library (seer prep without the CLI).
#include <stdlib.h>
#include <sys/stat.h>

#include <cmath>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

#include "storage/base/file_io.h"
#include "storage/dataset/dataset_check.h"
#include "storage/prep/dataset_prep.h"
#include "storage/prep/edge_list.h"
#include "storage/prep/npy.h"

namespace seer {
namespace {

std::string MakeTempDir() { return testing::MakeTempDir("prep"); }

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void Gzip(const std::string& path) {
  ASSERT_EQ(std::system(("gzip -f '" + path + "'").c_str()), 0);
}

using testing::ReadArray;

std::vector<std::pair<int64_t, int64_t>> ReadAll(EdgeSource& source) {
  std::vector<std::pair<int64_t, int64_t>> out;
  EXPECT_TRUE(source.Rewind().ok());
  Edge buf[3];  // small chunks exercise the chunk boundaries
  for (;;) {
    auto n = source.Read(buf, 3);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    for (int64_t i = 0; i < *n; ++i) out.emplace_back(buf[i].src, buf[i].dst);
  }
  return out;
}

std::string ReadError(EdgeSource& source) {
  if (!source.Rewind().ok()) return "rewind failed";
  Edge buf[16];
  for (;;) {
    auto n = source.Read(buf, 16);
    if (!n.ok()) return n.status().message();
    if (*n == 0) return "OK";
  }
}

bool HasManifest(const std::string& dir) { return FileSizeBytes(dir + "/dataset.json").ok(); }

const std::vector<std::pair<int64_t, int64_t>> kEdges = {{0, 1}, {2, 1}, {3, 0}, {1, 3}, {0, 3}, {2, 3}, {3, 1}};

TEST(NpyTest, WriteThenReadRoundTrip) {
  std::string dir = MakeTempDir();
  std::vector<float> values(4111 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  ASSERT_TRUE(WriteNpy(dir + "/a.npy", "<f4", {4111, 3}, values.data()).ok());
  auto f = NpyFile::Open(dir + "/a.npy");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->header().shape, (std::vector<int64_t>{4111, 3}));
  EXPECT_EQ(f->header().data_offset_bytes % 64, 0);
  std::vector<float> back(5);
  ASSERT_TRUE(f->ReadAsFloat32(12000, 5, back.data()).ok());
  EXPECT_EQ(back[0], 6000.0f);
  std::vector<int64_t> ints(2);
  ASSERT_TRUE(f->ReadAsInt64(4, 1, ints.data()).ok());
  EXPECT_EQ(ints[0], 2);
  Status st = f->ReadAsInt64(2, 2, ints.data());  // 1.0 then 1.5
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("element 3 = 1.5"), std::string::npos) << st.message();
}

TEST(NpyTest, NonIntegralFloatIsRejectedAsId) {
  std::string dir = MakeTempDir();
  std::vector<double> values = {1.0, 2.5};
  ASSERT_TRUE(WriteNpy(dir + "/a.npy", "<f8", {2}, values.data()).ok());
  auto f = NpyFile::Open(dir + "/a.npy");
  ASSERT_TRUE(f.ok());
  std::vector<int64_t> ints(2);
  Status st = f->ReadAsInt64(0, 2, ints.data());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("element 1"), std::string::npos) << st.message();
}

TEST(NpyTest, TruncatedFileNamesSizes) {
  std::string dir = MakeTempDir();
  std::vector<int64_t> ids(100, 7);
  ASSERT_TRUE(WriteNpy(dir + "/ids.npy", "<i8", {100}, ids.data()).ok());
  ASSERT_EQ(::truncate((dir + "/ids.npy").c_str(), 128 + 799), 0);
  auto f = NpyFile::Open(dir + "/ids.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnexpectedEof);
  EXPECT_NE(f.status().message().find("truncated .npy: shape (100,) of <i8 needs 800 data bytes from offset 128, file has 799"),
            std::string::npos) << f.status().message();
}

TEST(NpyTest, BadHeadersAreRejected) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/magic.npy", "PK\x03\x04 this is a zip");
  auto f = NpyFile::Open(dir + "/magic.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("not a .npy file"), std::string::npos);
  std::string header = "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }";
  std::string big = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + "abcdefgh";
  WriteText(dir + "/big.npy", big);
  f = NpyFile::Open(dir + "/big.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("big-endian"), std::string::npos) << f.status().message();
  header = "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }";
  WriteText(dir + "/order.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header);
  f = NpyFile::Open(dir + "/order.npy");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("bad .npy header at byte offset 44: fortran_order"), std::string::npos)
      << f.status().message();
}

TEST(EdgeListTest, TextVariantsParseToTheSameEdges) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/a.txt", "# comment\nsrc dst\n0 1\n2,1\n3\t0\n\n1 3\r\n  0 , 3\n% other comment\n2 3\n3 1");
  WriteText(dir + "/b.csv", "0,1\n2,1\n3,0\n1,3\n0,3\n2,3\n3,1\n");
  WriteText(dir + "/c.csv", "0,1\n2,1\n3,0\n1,3\n0,3\n2,3\n3,1\n");
  Gzip(dir + "/c.csv");
  for (std::string name : {"a.txt", "b.csv", "c.csv.gz"}) {
    SCOPED_TRACE(name);
    auto source = OpenEdgeList(dir + "/" + name, EdgeListFormat::kAuto, -1);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ(ReadAll(**source), kEdges);
    EXPECT_EQ(ReadAll(**source), kEdges) << "second pass after Rewind";
  }
}

TEST(EdgeListTest, BinaryAndNpyLayoutsParseToTheSameEdges) {
  std::string dir = MakeTempDir();
  std::vector<int32_t> pairs32;
  std::vector<int64_t> pairs64, rows;
  for (auto& [s, d] : kEdges) pairs32.insert(pairs32.end(), {static_cast<int32_t>(s), static_cast<int32_t>(d)});
  for (auto& [s, d] : kEdges) pairs64.insert(pairs64.end(), {s, d});
  for (auto& e : kEdges) rows.push_back(e.first);
  for (auto& e : kEdges) rows.push_back(e.second);
  WriteText(dir + "/e.bin32", std::string(reinterpret_cast<char*>(pairs32.data()), pairs32.size() * 4));
  WriteText(dir + "/e.bin64", std::string(reinterpret_cast<char*>(pairs64.data()), pairs64.size() * 8));
  ASSERT_TRUE(WriteNpy(dir + "/e_2xE.npy", "<i8", {2, 7}, rows.data()).ok());
  ASSERT_TRUE(WriteNpy(dir + "/e_Ex2.npy", "<i4", {7, 2}, pairs32.data()).ok());
  for (std::string name : {"e.bin32", "e.bin64", "e_2xE.npy", "e_Ex2.npy"}) {
    SCOPED_TRACE(name);
    auto source = OpenEdgeList(dir + "/" + name, EdgeListFormat::kAuto, 4);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ(ReadAll(**source), kEdges);
  }
}

TEST(EdgeListTest, BadInputNamesFileAndPosition) {
  std::string dir = MakeTempDir();
  struct Case {
    std::string text;
    int64_t num_nodes;
    std::string expected;
  } cases[] = {
      {"0 1\n1 2\n3 x\n", -1, "/t.txt:3: non-numeric node id 'x'"},
      {"0 1\n1\n", -1, "/t.txt:2: malformed line (expected 2 fields 'src dst', got 1)"},
      {"0 1\n1 2 0.5\n", -1, "/t.txt:2: malformed line (expected 2 fields 'src dst', got 3)"},
      {"# c\n0 1\n1 9\n", 5, "/t.txt:3: node id 9 >= num_nodes 5"},
      {"0 -1\n", -1, "/t.txt:1: negative node id -1"},
      {"0 1\nsrc dst\n", -1, "/t.txt:2: non-numeric node id 'src'"},  // header only first
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    WriteText(dir + "/t.txt", c.text);
    auto source = OpenEdgeList(dir + "/t.txt", EdgeListFormat::kText, c.num_nodes);
    ASSERT_TRUE(source.ok());
    std::string error = ReadError(**source);
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
  }
  WriteText(dir + "/e.bin64", std::string(20, '\0'));
  auto truncated = OpenEdgeList(dir + "/e.bin64", EdgeListFormat::kAuto, -1);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("size 20 bytes is not a multiple of 16"), std::string::npos);
  std::vector<int64_t> pairs = {0, 1, 2, 7};
  WriteText(dir + "/f.bin64", std::string(reinterpret_cast<char*>(pairs.data()), 32));
  auto out_of_range = OpenEdgeList(dir + "/f.bin64", EdgeListFormat::kAuto, 4);
  ASSERT_TRUE(out_of_range.ok());
  EXPECT_NE(ReadError(**out_of_range).find("edge #1 at byte offset 16: node id 7 >= num_nodes 4"), std::string::npos)
      << ReadError(**out_of_range);
  std::vector<float> floats = {0, 1, 1, 2};
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {2, 2}, floats.data()).ok());
  auto wrong_dtype = OpenEdgeList(dir + "/f.npy", EdgeListFormat::kAuto, -1);
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.status().message().find("edge_index dtype <f4 is not an integer type"), std::string::npos);
  auto format = ParseEdgeListFormat("csv");
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.status().message().find("unknown edge list format 'csv'"), std::string::npos);
}

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
