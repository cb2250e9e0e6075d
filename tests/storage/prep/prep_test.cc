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
#include <map>
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

// PrepareDataset(in, options, out) fails with a message holding `expected` and leaves no
// dataset.json in `out`. Returns the message ("" when it did not fail).
std::string ExpectPrepRefused(const PrepInputs& in, const PrepOptions& options, const std::string& out,
                              const std::string& expected) {
  auto result = PrepareDataset(in, options, out);
  EXPECT_FALSE(result.ok()) << "expected an error holding: " << expected;
  const std::string message = result.ok() ? "" : result.status().message();
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_FALSE(HasManifest(out)) << out;
  return message;
}

struct NpyDataset {
  std::string dir;
  PrepInputs in;
};

// Writes `values` as a 1-D int64 .npy (labels, split ids).
void WriteInt64Npy(const std::string& path, const std::vector<int64_t>& values) {
  ASSERT_TRUE(WriteNpy(path, "<i8", {static_cast<int64_t>(values.size())}, values.data()).ok()) << path;
}

// Writes a rows x cols float32 .npy of zeros (features).
void WriteZeroFeatures(const std::string& path, int64_t rows, int64_t cols) {
  const std::vector<float> zeros(static_cast<size_t>(rows * cols));
  ASSERT_TRUE(WriteNpy(path, "<f4", {rows, cols}, zeros.data()).ok()) << path;
}

// The edge list alone: no features, labels or splits.
void DropNodeArrays(PrepInputs* in) {
  in->features.clear();
  in->labels.clear();
  in->train.clear();
  in->valid.clear();
  in->test.clear();
}

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

// MakeNpyInputs() converted with `options` into D/out, which must pass the deep check:
// the converted inputs, the conversion's summary and the check's.
struct PreparedNpy {
  NpyDataset inputs;
  std::string out;
  PrepSummary summary;
  DatasetCheckSummary checked;
};

void PrepareNpyInputs(const PrepOptions& options, PreparedNpy* p) {
  p->inputs = MakeNpyInputs();
  p->out = p->inputs.dir + "/out";
  auto summary = PrepareDataset(p->inputs.in, options, p->out);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  p->summary = *summary;
  auto checked = CheckDataset(p->out, DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  p->checked = *checked;
}

TEST(PrepTest, NpyInputsGiveAValidDataset) {
  PrepOptions options;
  options.feature_dtype = FeatureDtype::kFloat16;
  PreparedNpy p;
  ASSERT_NO_FATAL_FAILURE(PrepareNpyInputs(options, &p));
  EXPECT_EQ(p.summary.csc.num_nodes, 6);
  EXPECT_EQ(p.summary.num_classes, 3);
  EXPECT_EQ(p.summary.num_labeled, 5);
  EXPECT_EQ(ReadArray<int64_t>(p.out + "/indptr.bin"), (std::vector<int64_t>{0, 1, 4, 4, 7, 8, 8}));
  EXPECT_EQ(ReadArray<int32_t>(p.out + "/labels.bin"), (std::vector<int32_t>{0, 2, -1, 1, 2, 0}));
  EXPECT_EQ(ReadArray<int64_t>(p.out + "/test.bin"), (std::vector<int64_t>{4, 5}));
  auto halves = ReadArray<uint16_t>(p.out + "/features.bin");
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
         WriteZeroFeatures(d.dir + "/feat.npy", 5, 5);
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
         WriteInt64Npy(d.dir + "/test.npy", {4, 6});
       }, "test.npy: element 1: split node id 6 out of range [0, 6)"},
      {"split overlap", [](NpyDataset& d) {
         WriteInt64Npy(d.dir + "/test.npy", {4, 0});
       }, "test.npy: element 1: node 0 is already in the train split"},
      {"bad label", [](NpyDataset& d) {
         WriteInt64Npy(d.dir + "/labels.npy", {0, 1, -2, 0, 0, 0});
       }, "labels.npy: element 2: label -2 out of range"},
      {"edge id", [](NpyDataset& d) {
         WriteText(d.dir + "/edges.txt", "0 1\n\n6 2\n");
         d.in.num_nodes = 6;  // given: the edge list is the one that is wrong
       }, "edges.txt:3: node id 6 >= num_nodes 6"},
      // The node count comes from the feature rows: a short feature array is named, not the
      // edge list (which was blamed before: "edges.txt:3: node id 6 >= num_nodes 6").
      {"short features", [](NpyDataset& d) {
         WriteZeroFeatures(d.dir + "/feat.npy", 5, 5);
       }, "feat.npy: 5 feature rows, but " },
      {"short labels", [](NpyDataset& d) {
         d.in.features.clear();
         WriteInt64Npy(d.dir + "/labels.npy", {0, 1, 1, 0, 0});
       }, "labels.npy: 5 labels, but "},
      {"huge label", [](NpyDataset& d) {
         WriteInt64Npy(d.dir + "/labels.npy", {0, 1, 1000000000, 0, 0, 0});
       }, "labels.npy: element 2: label 1000000000 out of range [-1, 100000)"},
      {"label above --num-classes", [](NpyDataset& d) {
         WriteInt64Npy(d.dir + "/labels.npy", {0, 1, 4, 0, 0, 0});
         d.in.num_nodes = -2;  // marker: run with --num-classes 4 (below)
       }, "labels.npy: element 2: label 4 out of range [-1, 4) given by --num-classes"},
      // Ids near 2^62 overflowed the degree table's size (vector::_M_fill_insert) before.
      {"id near 2^62", [](NpyDataset& d) {
         DropNodeArrays(&d.in);
         WriteText(d.dir + "/edges.txt", "0 1\n4611686018427387904 2\n");
       }, "edges.txt:2: node id 4611686018427387904 is above the largest supported id"},
      {"id of 18 digits (fast parser path)", [](NpyDataset& d) {
         DropNodeArrays(&d.in);
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
    ExpectPrepRefused(d.in, options, d.dir + "/out", c.expected);
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
  ExpectPrepRefused(in, PrepOptions{}, dir + "/out2", "node-feat.csv.gz:2: malformed line: 2 values, expected 3");
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
  // Node arrays of string ids need --node-ids (the id of each row).
  WriteZeroFeatures(dir + "/f.npy", 5, 2);
  in.features = dir + "/f.npy";
  ExpectPrepRefused(in, PrepOptions{}, dir + "/out2", "non-integer ids: node arrays then need --node-ids FILE");
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
  WriteInt64Npy(dir + "/l.npy", labels);
  WriteInt64Npy(dir + "/t.npy", train);
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
  WriteInt64Npy(dir + "/t.npy", train);
  ExpectPrepRefused(in, options, dir + "/out2", "t.npy: element 1: node id 7 does not occur in the edge list");
}

// Oracle order of original ids (node_ids.h): canonical non-negative integers by value,
// then every other token by bytes; written here from the rule, not from the code.
bool IdBefore(const std::string& a, const std::string& b) {
  auto integer = [](const std::string& s, uint64_t* v) {
    if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return false;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    *v = std::stoull(s);
    return true;
  };
  uint64_t va = 0, vb = 0;
  const bool ia = integer(a, &va), ib = integer(b, &vb);
  if (ia != ib) return ia;
  return ia ? va < vb : a < b;
}

// What a --node-ids prep must write, from a plain std::map of id -> row: the nodes are
// the ids of the edges and of the file (ids in no edge are nodes of degree 0).
struct NodeIdsOracle {
  std::vector<std::string> nodes;            // node k = nodes[k]
  std::map<std::string, int64_t> row_of_id;  // from the ids file
  int64_t RowOfNode(size_t k) const { return row_of_id.at(nodes[k]); }
  int64_t NodeOfRow(int64_t row) const {
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (row_of_id.at(nodes[k]) == row) return static_cast<int64_t>(k);
    }
    return -1;
  }
};

NodeIdsOracle MakeNodeIdsOracle(const std::vector<std::pair<std::string, std::string>>& edges,
                                const std::vector<std::string>& file_ids) {
  NodeIdsOracle o;
  for (auto& [s, d] : edges) o.nodes.insert(o.nodes.end(), {s, d});
  o.nodes.insert(o.nodes.end(), file_ids.begin(), file_ids.end());
  std::sort(o.nodes.begin(), o.nodes.end(), IdBefore);
  o.nodes.erase(std::unique(o.nodes.begin(), o.nodes.end()), o.nodes.end());
  for (size_t r = 0; r < file_ids.size(); ++r) o.row_of_id[file_ids[r]] = static_cast<int64_t>(r);
  return o;
}

// A --remap-ids prep of dir/e.txt with --node-ids dir/ids.txt (node arrays added by the caller).
PrepInputs NodeIdsInputs(const std::string& dir) {
  PrepInputs in;
  in.edges = dir + "/e.txt";
  in.remap_ids = true;
  in.node_ids = dir + "/ids.txt";
  return in;
}

std::string Lines(const std::vector<std::string>& ids) {
  std::string text;
  for (const std::string& id : ids) text += id + "\n";
  return text;
}

// --node-ids: string ids, a file listing them in its own order plus two ids that are in
// no edge (kept: nodes of degree 0, with their rows); features/labels are indexed by its
// lines, splits list its rows.
TEST(PrepTest, NodeIdsFileGivesTheRowsOfStringIds) {
  std::string dir = MakeTempDir();
  const std::vector<std::pair<std::string, std::string>> edges = {
      {"bob", "alice"}, {"10", "bob"}, {"carol", "10"}, {"9", "alice"}, {"bob", "9"}, {"007", "carol"}};
  std::string text;
  for (auto& [s, d] : edges) text += s + " " + d + "\n";
  WriteText(dir + "/e.txt", text);
  // Row order differs from id order; "zed" and "11" are in no edge; blanks are trimmed.
  const std::vector<std::string> file_ids = {"carol", "zed", "9", "alice", "007", "11", "10", "bob"};
  WriteText(dir + "/ids.txt", "carol\n  zed\t\n9\r\nalice\n007\n11\n10\nbob");  // no final newline
  const int64_t rows = 8, f = 3;
  std::vector<float> features(rows * f);
  for (size_t i = 0; i < features.size(); ++i) features[i] = 0.5f * static_cast<float>(i);
  std::vector<int64_t> labels = {0, 1, 2, 3, 4, 5, 6, -1};
  std::vector<int64_t> train = {7, 0, 1}, valid = {4};  // bob, carol, zed; 007
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {rows, f}, features.data()).ok());
  WriteInt64Npy(dir + "/l.npy", labels);
  WriteInt64Npy(dir + "/t.npy", train);
  WriteInt64Npy(dir + "/v.npy", valid);
  PrepInputs in = NodeIdsInputs(dir);
  in.features = dir + "/f.npy";
  in.labels = dir + "/l.npy";
  in.train = dir + "/t.npy";
  in.valid = dir + "/v.npy";
  auto summary = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const NodeIdsOracle o = MakeNodeIdsOracle(edges, file_ids);
  ASSERT_EQ(summary->csc.num_nodes, static_cast<int64_t>(o.nodes.size()));
  ASSERT_EQ(o.nodes.size(), 8u);
  EXPECT_EQ(summary->nodes_without_edges, 2);
  auto indptr = ReadArray<int64_t>(dir + "/out/indptr.bin");
  for (const char* lonely : {"zed", "11"}) {  // degree 0
    const size_t k = std::find(o.nodes.begin(), o.nodes.end(), lonely) - o.nodes.begin();
    ASSERT_LT(k, o.nodes.size());
    EXPECT_EQ(indptr[k + 1], indptr[k]) << lonely;
  }
  EXPECT_EQ(testing::ReadFileBytes(dir + "/out/node_ids.txt"), Lines(o.nodes));
  auto got_features = ReadArray<float>(dir + "/out/features.bin");
  auto got_labels = ReadArray<int32_t>(dir + "/out/labels.bin");
  for (size_t k = 0; k < o.nodes.size(); ++k) {
    for (int64_t j = 0; j < f; ++j) {
      EXPECT_EQ(got_features[k * f + j], features[o.RowOfNode(k) * f + j]) << o.nodes[k];
    }
    EXPECT_EQ(got_labels[k], labels[o.RowOfNode(k)]) << o.nodes[k];
  }
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/train.bin"),
            (std::vector<int64_t>{o.NodeOfRow(7), o.NodeOfRow(0), o.NodeOfRow(1)}));
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/valid.bin"), (std::vector<int64_t>{o.NodeOfRow(4)}));
  EXPECT_EQ(summary->num_labeled, static_cast<int64_t>(o.nodes.size()) - 1);  // bob's row is -1
  ASSERT_TRUE(CheckDataset(dir + "/out", DatasetCheckOptions{true}).ok());
  // The work directories are gone.
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/out")) {
    EXPECT_EQ(entry.path().filename().string().rfind(".seer-", 0), std::string::npos) << entry.path();
  }
}

// Integer ids with --node-ids: the file, not "row r = id r", gives the rows.
TEST(PrepTest, NodeIdsFileOverridesRowEqualsIdForIntegerIds) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.txt", "10 20\n20 30\n");
  WriteText(dir + "/ids.txt", "30\n10\n20\n");
  std::vector<int64_t> labels = {3, 1, 2};  // by row: id 30 -> 3, 10 -> 1, 20 -> 2
  std::vector<int64_t> train = {0};         // row 0 = id 30 = node 2
  WriteInt64Npy(dir + "/l.npy", labels);
  WriteInt64Npy(dir + "/t.npy", train);
  PrepInputs in = NodeIdsInputs(dir);
  in.labels = dir + "/l.npy";
  in.train = dir + "/t.npy";
  auto summary = PrepareDataset(in, PrepOptions{}, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(ReadArray<int32_t>(dir + "/out/labels.bin"), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ReadArray<int64_t>(dir + "/out/train.bin"), (std::vector<int64_t>{2}));
  EXPECT_EQ(summary->nodes_without_edges, 0);
}

// Thousands of mixed ids through a budget that makes both the renumbering and the join
// spill several sorted runs (2 MiB budget: runs of 1 MiB, a quarter of it for records =
// ~10900 records each; 30000 id lines, 40000 endpoints); float64 features take the
// converting read path.
// Oracle: a std::map of id -> row.
TEST(PrepTest, NodeIdsJoinWithATinyBudgetMatchesAMapOracle) {
  std::string dir = MakeTempDir();
  const uint64_t seed = 11;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int kIds = 30000;
  std::vector<std::string> universe;
  for (int i = 0; i < kIds; ++i) {
    universe.push_back(i % 4 == 0 ? std::to_string(static_cast<int64_t>(i) * 7919) : "user-" + std::to_string(rng() % 1000000000));
  }
  std::sort(universe.begin(), universe.end());
  universe.erase(std::unique(universe.begin(), universe.end()), universe.end());
  std::vector<std::pair<std::string, std::string>> edges;
  std::string text;
  for (int e = 0; e < 20000; ++e) {
    // Endpoints from the first 90% of the (byte-sorted) universe: the rest are only in the file.
    const std::string& s = universe[rng() % (universe.size() * 9 / 10)];
    const std::string& d = universe[rng() % (universe.size() * 9 / 10)];
    edges.emplace_back(s, d);
    text += s + "," + d + "\n";
  }
  WriteText(dir + "/e.txt", text);
  std::vector<std::string> file_ids = universe;
  std::shuffle(file_ids.begin(), file_ids.end(), rng);
  WriteText(dir + "/ids.txt", Lines(file_ids));
  const NodeIdsOracle o = MakeNodeIdsOracle(edges, file_ids);
  const int64_t rows = static_cast<int64_t>(file_ids.size()), f = 5;
  std::vector<double> features(static_cast<size_t>(rows * f));
  for (size_t i = 0; i < features.size(); ++i) features[i] = static_cast<double>(i) / 4;
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>(r % 9);
  std::vector<int64_t> test;  // rows of nodes, in file order
  for (int64_t r = 0; r < rows && test.size() < 500; ++r) {
    if (std::binary_search(o.nodes.begin(), o.nodes.end(), file_ids[r], IdBefore)) test.push_back(r);
  }
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f8", {rows, f}, features.data()).ok());
  ASSERT_TRUE(WriteNpy(dir + "/l.npy", "<i4", {rows}, labels.data()).ok());
  WriteInt64Npy(dir + "/test.npy", test);
  PrepInputs in = NodeIdsInputs(dir);
  in.features = dir + "/f.npy";
  in.labels = dir + "/l.npy";
  in.test = dir + "/test.npy";
  PrepOptions options;
  options.memory_budget_bytes = 2 << 20;
  auto summary = PrepareDataset(in, options, dir + "/out");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ASSERT_EQ(summary->csc.num_nodes, static_cast<int64_t>(o.nodes.size()));
  EXPECT_EQ(o.nodes.size(), file_ids.size());  // every id of the file is a node
  int64_t in_edges = 0;
  {
    std::vector<std::string> ends;
    for (auto& [s, d] : edges) ends.insert(ends.end(), {s, d});
    std::sort(ends.begin(), ends.end());
    in_edges = std::unique(ends.begin(), ends.end()) - ends.begin();
  }
  EXPECT_EQ(summary->nodes_without_edges, rows - in_edges);
  EXPECT_GT(summary->nodes_without_edges, 0);
  EXPECT_EQ(testing::ReadFileBytes(dir + "/out/node_ids.txt"), Lines(o.nodes));
  auto got_features = ReadArray<float>(dir + "/out/features.bin");
  auto got_labels = ReadArray<int32_t>(dir + "/out/labels.bin");
  for (size_t k = 0; k < o.nodes.size(); ++k) {
    const int64_t row = o.RowOfNode(k);
    ASSERT_EQ(got_features[k * f + 4], static_cast<float>(features[row * f + 4])) << o.nodes[k];
    ASSERT_EQ(got_labels[k], labels[row]) << o.nodes[k];
  }
  std::map<int64_t, int64_t> node_of_row;
  for (size_t k = 0; k < o.nodes.size(); ++k) node_of_row[o.RowOfNode(k)] = static_cast<int64_t>(k);
  auto got_test = ReadArray<int64_t>(dir + "/out/test.bin");
  ASSERT_EQ(got_test.size(), test.size());
  for (size_t i = 0; i < test.size(); ++i) ASSERT_EQ(got_test[i], node_of_row.at(test[i])) << i;
  ASSERT_TRUE(CheckDataset(dir + "/out", DatasetCheckOptions{true}).ok());
}

// Every --node-ids input error is one line naming the file (and the line or element), and
// no dataset.json is written.
TEST(PrepTest, NodeIdsErrorsAreOneLineNamingTheFile) {
  std::string dir = MakeTempDir();
  WriteText(dir + "/e.txt", "bob alice\ncarol bob\n");
  std::vector<float> features(4 * 2, 1.0f);
  ASSERT_TRUE(WriteNpy(dir + "/f.npy", "<f4", {4, 2}, features.data()).ok());
  PrepInputs base = NodeIdsInputs(dir);
  base.features = dir + "/f.npy";
  int run = 0;
  auto expect_error = [&](const PrepInputs& in, const std::string& expected) {
    const std::string out = dir + "/out" + std::to_string(run++);
    const std::string message = ExpectPrepRefused(in, PrepOptions{}, out, expected);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  };
  const std::string ids = dir + "/ids.txt";
  WriteText(ids, "alice\ncarol\nzed\ndave\n");
  expect_error(base, ids + ": no line for node id 'bob' of the edge list");
  WriteText(ids, "alice\nbob\ncarol\nbob\n");
  expect_error(base, ids + ":4: node id 'bob' repeats line 2");
  WriteText(ids, "alice\nbob\n\ncarol\n");
  expect_error(base, ids + ":3: empty node id");
  WriteText(ids, "alice\nbob\ncarol\n");
  expect_error(base, dir + "/f.npy: 4 feature rows, but " + ids + " has 3 lines");
  WriteText(ids, "alice\nbob\ncarol\nzed\n");
  std::vector<int64_t> train = {4, 0};
  WriteInt64Npy(dir + "/t.npy", train);
  PrepInputs with_split = base;
  with_split.train = dir + "/t.npy";
  WriteInt64Npy(dir + "/t.npy", train);
  expect_error(with_split, dir + "/t.npy: element 0: row 4 out of range [0, 4)");
  PrepInputs not_remapped = base;
  not_remapped.remap_ids = false;
  expect_error(not_remapped, "--node-ids " + ids + " needs --remap-ids");
  PrepInputs missing_file = base;
  missing_file.node_ids = dir + "/nope.txt";
  expect_error(missing_file, dir + "/nope.txt");
}

// Features stored as bfloat16: every value is the nearest bfloat16 of the float32 input.
TEST(PrepTest, BFloat16FeaturesAreTheRoundedInputs) {
  PrepOptions options;
  options.feature_dtype = FeatureDtype::kBFloat16;
  PreparedNpy p;
  ASSERT_NO_FATAL_FAILURE(PrepareNpyInputs(options, &p));
  EXPECT_EQ(p.summary.feature_dtype, FeatureDtype::kBFloat16);
  EXPECT_EQ(p.checked.manifest.feature_dtype, FeatureDtype::kBFloat16);
  auto stored = ReadArray<uint16_t>(p.out + "/features.bin");
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
  WriteInt64Npy(d.dir + "/labels.npy", bad);
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
  WriteInt64Npy(d.dir + "/labels.npy", good);
  auto replaced = PrepareDataset(d.in, force, d.dir + "/out");
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  checked = CheckDataset(d.dir + "/out", DatasetCheckOptions{true});
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->manifest.num_edges, 2);
}

// --num-classes fixes the manifest's count (classes with no labeled node allowed).
TEST(PrepTest, NumClassesIsRecorded) {
  PrepOptions options;
  options.num_classes = 10;
  PreparedNpy p;
  ASSERT_NO_FATAL_FAILURE(PrepareNpyInputs(options, &p));
  EXPECT_EQ(p.summary.num_classes, 10);
  auto ds = Dataset::Open(p.out);
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
  ExpectPrepRefused(in, PrepOptions{}, dir + "/out",
                    "e.bin64: edge #1 at byte offset 16: node id 4611686018427387909 is above");
}

}  // namespace
}  // namespace seer
