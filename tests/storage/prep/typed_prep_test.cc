// The typed prep (storage/prep/typed_prep.h): every relation's CSC byte for byte against
// an oracle built from the input edge lists (per-destination lists, sorted), --reverse
// as the exact transposes, --remap-ids per type (the same string in two types is two
// nodes) with the node_ids files read back, labels and splits per type, the refusals
// (one line naming the file and line, no output left), and a round trip: a `seer gen
// --hetero` dataset exported to edge lists and prepped again gives the same files.
#include "storage/prep/typed_prep.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/dataset/dataset_check.h"
#include "storage/prep/hetero_graph.h"
#include "storage/prep/npy.h"
#include "support/test_support.h"

namespace seer {
namespace {

using testing::ReadArray;
using testing::ReadFileBytes;
using testing::WriteFileBytes;
using EdgePairs = std::vector<std::pair<int64_t, int64_t>>;  // (src, dst)

// The CSC of `edges` over num_dst destinations, built the obvious way.
std::pair<std::vector<int64_t>, std::vector<uint32_t>> OracleCsc(const EdgePairs& edges, int64_t num_dst, bool dedup,
                                                                 bool drop_loops) {
  std::vector<std::vector<uint32_t>> lists(static_cast<size_t>(num_dst));
  for (const auto& [s, d] : edges) {
    if (!(drop_loops && s == d)) lists[static_cast<size_t>(d)].push_back(static_cast<uint32_t>(s));
  }
  std::vector<int64_t> indptr = {0};
  std::vector<uint32_t> indices;
  for (auto& list : lists) {
    std::sort(list.begin(), list.end());
    if (dedup) list.erase(std::unique(list.begin(), list.end()), list.end());
    indices.insert(indices.end(), list.begin(), list.end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  return {indptr, indices};
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

void ExpectRelation(const std::string& dir, const std::string& key, const EdgePairs& edges, int64_t num_dst,
                    bool dedup = false, bool drop_loops = false) {
  SCOPED_TRACE(key);
  const auto [indptr, indices] = OracleCsc(edges, num_dst, dedup, drop_loops);
  EXPECT_EQ(ReadFileBytes(dir + "/" + key + ".indptr.bin"), Bytes(indptr));
  EXPECT_EQ(ReadFileBytes(dir + "/" + key + ".indices.bin"), Bytes(indices));
}

EdgePairs RandomEdges(int64_t n, int64_t num_src, int64_t num_dst, uint64_t seed) {
  std::mt19937_64 rng(seed);
  EdgePairs edges;
  for (int64_t i = 0; i < n; ++i) {
    edges.emplace_back(static_cast<int64_t>(rng() % num_src), static_cast<int64_t>(rng() % num_dst));
  }
  return edges;
}

// A plain list with comments and blank lines in it (so lines are not edge numbers).
std::string TextList(const EdgePairs& edges) {
  std::string text = "# src dst\n\n";
  for (size_t i = 0; i < edges.size(); ++i) {
    text += std::to_string(edges[i].first) + " " + std::to_string(edges[i].second) + "\n";
    if (i % 7 == 3) text += "% a comment\n";
  }
  return text;
}

std::string CsvTable(const EdgePairs& edges) {
  std::string text = "src,dst\n";
  for (const auto& [s, d] : edges) text += std::to_string(s) + "," + std::to_string(d) + "\n";
  return text;
}

void WriteEdgesNpy(const std::string& path, const EdgePairs& edges) {
  std::vector<int64_t> flat;
  for (const auto& [s, d] : edges) {
    flat.push_back(s);
    flat.push_back(d);
  }
  ASSERT_TRUE(WriteNpy(path, "<i8", {static_cast<int64_t>(edges.size()), 2}, flat.data()).ok());
}

void ExpectChecks(const std::string& dir) {
  auto check = CheckDataset(dir, DatasetCheckOptions{true, false});
  EXPECT_TRUE(check.ok()) << check.status().ToString();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Three types, three relations in three formats (text, CSV with a header, .npy).
struct ThreeTypes {
  std::string in;
  EdgePairs cites = RandomEdges(400, 37, 37, 1);
  EdgePairs writes = RandomEdges(300, 23, 37, 2);  // author -> paper
  EdgePairs member = RandomEdges(60, 23, 5, 3);    // author -> institute
  TypedPrepInputs inputs;
  ThreeTypes() {
    in = testing::MakeTempDir("typed_in");
    cites.emplace_back(36, 36);  // a self-loop and a repeat
    cites.emplace_back(3, 4);
    cites.emplace_back(3, 4);
    writes.emplace_back(22, 36);  // the largest ids appear
    member.emplace_back(22, 4);
    WriteFileBytes(in + "/cites.txt", TextList(cites));
    WriteFileBytes(in + "/writes.csv", CsvTable(writes));
    WriteEdgesNpy(in + "/member.npy", member);
    inputs.relations = {{"paper", "cites", "paper", in + "/cites.txt"},
                        {"author", "writes", "paper", in + "/writes.csv"},
                        {"author", "member_of", "institute", in + "/member.npy"}};
  }
};

TEST(TypedPrepTest, EveryRelationMatchesTheOracleCsc) {
  ThreeTypes g;
  g.inputs.node_types = {{"institute", 9}};  // more institutes than ids: the rest have no edges
  const std::string out = testing::MakeTempDir("typed_out") + "/ds";
  auto s = PrepareTypedDataset(g.inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const DatasetManifest& m = s->manifest;
  ASSERT_EQ(m.node_types.size(), 3u);
  EXPECT_EQ(m.node_types[0].name, "paper");
  EXPECT_EQ(m.node_types[0].count, 37);
  EXPECT_EQ(m.node_types[1].name, "author");
  EXPECT_EQ(m.node_types[1].count, 23);
  EXPECT_EQ(m.node_types[2].count, 9);
  ASSERT_EQ(m.relations.size(), 3u);
  EXPECT_EQ(m.relations[0].num_edges, 403);  // nothing dropped without the flags
  ExpectRelation(out, "paper__cites__paper", g.cites, 37);
  ExpectRelation(out, "author__writes__paper", g.writes, 37);
  ExpectRelation(out, "author__member_of__institute", g.member, 9);
  EXPECT_EQ(m.num_nodes, 37 + 23 + 9);
  ExpectChecks(out);
}

TEST(TypedPrepTest, ReverseIsTheTransposeAfterDedupAndSelfLoops) {
  ThreeTypes g;
  TypedPrepOptions options;
  options.reverse = true;
  options.dedup = true;
  options.drop_self_loops = true;
  const std::string out = testing::MakeTempDir("typed_rev") + "/ds";
  auto s = PrepareTypedDataset(g.inputs, options, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->manifest.relations.size(), 6u);
  EXPECT_EQ(s->manifest.relations[1].key(), "paper__rev_cites__paper");
  EXPECT_EQ(s->manifest.relations[3].key(), "paper__rev_writes__author");
  auto transposed = [](EdgePairs e) {
    for (auto& [a, b] : e) std::swap(a, b);
    return e;
  };
  ExpectRelation(out, "paper__cites__paper", g.cites, 37, true, true);
  ExpectRelation(out, "paper__rev_cites__paper", transposed(g.cites), 37, true, true);
  ExpectRelation(out, "author__writes__paper", g.writes, 37, true);
  ExpectRelation(out, "paper__rev_writes__author", transposed(g.writes), 23, true);
  ExpectRelation(out, "institute__rev_member_of__author", transposed(g.member), 23, true);
  EXPECT_GE(s->duplicates_dropped, 1);
  EXPECT_EQ(s->self_loops_dropped, static_cast<int64_t>(std::count_if(
                                       g.cites.begin(), g.cites.end(), [](const auto& e) { return e.first == e.second; })));
  ExpectChecks(out);
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines;
  std::string text = ReadFileBytes(path), line;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  return lines;
}

TEST(TypedPrepTest, RemapIdsNumbersEachTypeOnItsOwn) {
  const std::string in = testing::MakeTempDir("typed_remap_in");
  // "ann" is an author and a paper: two nodes. A header without a named column.
  WriteFileBytes(in + "/writes.csv", "author,paper\nann,p9\nbob,p10\nann,ann\nzed,p9\n");
  WriteFileBytes(in + "/cites.txt", "p10 p9\nann p10\n");
  WriteFileBytes(in + "/labels.csv", "id,label\np9,2\np10,\nann,0\nlonely,1\n");
  WriteFileBytes(in + "/train.txt", "p10\nann\n");
  TypedPrepInputs inputs;
  inputs.remap_ids = true;
  inputs.relations = {{"author", "writes", "paper", in + "/writes.csv"}, {"paper", "cites", "paper", in + "/cites.txt"}};
  inputs.node_types = {TypedNodeTypeInput{"paper"}};
  inputs.node_types[0].labels = in + "/labels.csv";
  inputs.node_types[0].train = in + "/train.txt";
  const std::string out = testing::MakeTempDir("typed_remap") + "/ds";
  auto s = PrepareTypedDataset(inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Papers: ann, lonely (only in the labels table), p10, p9 (bytes order); authors: ann, bob, zed.
  const std::vector<std::string> papers = Lines(out + "/paper.node_ids.txt");
  const std::vector<std::string> authors = Lines(out + "/author.node_ids.txt");
  EXPECT_EQ(papers, (std::vector<std::string>{"ann", "lonely", "p10", "p9"}));
  EXPECT_EQ(authors, (std::vector<std::string>{"ann", "bob", "zed"}));
  ASSERT_EQ(s->manifest.node_types[1].name, "paper");
  EXPECT_EQ(s->manifest.node_types[1].node_ids, "paper.node_ids.txt");
  auto local = [](const std::vector<std::string>& ids, const std::string& id) {
    return static_cast<int64_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
  };
  EdgePairs writes = {{local(authors, "ann"), local(papers, "p9")},
                      {local(authors, "bob"), local(papers, "p10")},
                      {local(authors, "ann"), local(papers, "ann")},
                      {local(authors, "zed"), local(papers, "p9")}};
  EdgePairs cites = {{local(papers, "p10"), local(papers, "p9")}, {local(papers, "ann"), local(papers, "p10")}};
  ExpectRelation(out, "author__writes__paper", writes, 4);
  ExpectRelation(out, "paper__cites__paper", cites, 4);
  EXPECT_EQ(ReadArray<int32_t>(out + "/paper.labels.bin"), (std::vector<int32_t>{0, 1, -1, 2}));
  EXPECT_EQ(s->manifest.node_types[1].num_classes, 3);
  EXPECT_EQ(ReadArray<int64_t>(out + "/paper.train.bin"), (std::vector<int64_t>{2, 0}));
  ExpectChecks(out);
  auto opened = Dataset::OpenAnyKind(out);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->manifest().node_types[0].node_ids, "author.node_ids.txt");
  // `seer check` reads the mapping back: lines out of order are named with the type.
  WriteFileBytes(out + "/paper.node_ids.txt", "ann\np10\nlonely\np9\n");  // same size, unsorted
  auto check = CheckDataset(out, DatasetCheckOptions{});
  ASSERT_FALSE(check.ok());
  EXPECT_NE(check.status().message().find(out + "/paper.node_ids.txt:3"), std::string::npos) << check.status().ToString();
  EXPECT_NE(check.status().message().find("(node type paper)"), std::string::npos) << check.status().ToString();
}

TEST(TypedPrepTest, LabelsAndSplitsPerType) {
  ThreeTypes g;
  std::vector<int64_t> labels(37, -1);
  for (int64_t v = 0; v < 37; v += 2) labels[static_cast<size_t>(v)] = v % 5;
  ASSERT_TRUE(WriteNpy(g.in + "/labels.npy", "<i8", {37}, labels.data()).ok());
  WriteFileBytes(g.in + "/train.txt", "4\n0\n8\n");
  std::vector<int64_t> valid = {10, 12};
  ASSERT_TRUE(WriteNpy(g.in + "/valid.npy", "<i8", {2}, valid.data()).ok());
  WriteFileBytes(g.in + "/author_labels.csv", "author,label\n3,1\n7,0\n3,1\n");
  TypedNodeTypeInput paper{"paper"}, author{"author"};
  paper.labels = g.in + "/labels.npy";
  paper.train = g.in + "/train.txt";
  paper.valid = g.in + "/valid.npy";
  author.labels = g.in + "/author_labels.csv";
  g.inputs.node_types = {paper, author};
  g.inputs.split_fractions = {0.5, 0.5, 0};  // drawn for the author (the paper's are given)
  g.inputs.split_seed = 11;
  const std::string out = testing::MakeTempDir("typed_labels") + "/ds";
  auto s = PrepareTypedDataset(g.inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<int32_t> expected(labels.begin(), labels.end());
  EXPECT_EQ(ReadArray<int32_t>(out + "/paper.labels.bin"), expected);
  EXPECT_EQ(s->manifest.node_types[0].num_classes, 5);
  EXPECT_EQ(ReadArray<int64_t>(out + "/paper.train.bin"), (std::vector<int64_t>{4, 0, 8}));
  EXPECT_EQ(ReadArray<int64_t>(out + "/paper.valid.bin"), valid);
  EXPECT_EQ(s->manifest.node_types[0].test, "");
  std::vector<int32_t> author_labels(23, -1);
  author_labels[3] = 1;
  author_labels[7] = 0;
  EXPECT_EQ(ReadArray<int32_t>(out + "/author.labels.bin"), author_labels);
  std::vector<int64_t> drawn = ReadArray<int64_t>(out + "/author.train.bin");
  std::vector<int64_t> drawn_valid = ReadArray<int64_t>(out + "/author.valid.bin");
  drawn.insert(drawn.end(), drawn_valid.begin(), drawn_valid.end());
  std::sort(drawn.begin(), drawn.end());
  EXPECT_EQ(drawn, (std::vector<int64_t>{3, 7}));  // every labeled author, no other
  EXPECT_EQ(s->num_labeled, (std::vector<int64_t>{19, 2, 0}));
  ExpectChecks(out);
}

TEST(TypedPrepTest, FeaturesPerTypeAndTheirRowCount) {
  ThreeTypes g;
  std::vector<double> features(37 * 3);
  for (size_t i = 0; i < features.size(); ++i) features[i] = 0.25 * static_cast<double>(i);
  ASSERT_TRUE(WriteNpy(g.in + "/paper.npy", "<f8", {37, 3}, features.data()).ok());
  TypedNodeTypeInput paper{"paper"};
  paper.features = g.in + "/paper.npy";
  g.inputs.node_types = {paper};
  const std::string out = testing::MakeTempDir("typed_features") + "/ds";
  auto s = PrepareTypedDataset(g.inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<float> stored = ReadArray<float>(out + "/paper.features.bin");
  ASSERT_EQ(stored.size(), 1024u);  // padded to 4096 bytes
  for (size_t i = 0; i < features.size(); ++i) EXPECT_EQ(stored[i], static_cast<float>(features[i]));
  EXPECT_EQ(s->manifest.node_types[1].feature_dim, 0);  // author: featureless
  ExpectChecks(out);

  g.inputs.node_types[0].count = 40;  // 37 rows for 40 papers
  const std::string bad = testing::MakeTempDir("typed_features_bad") + "/ds";
  auto refused = PrepareTypedDataset(g.inputs, TypedPrepOptions{}, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            g.in + "/paper.npy: 37 rows, but node type paper has 40 nodes (--node-type; they must be equal)");
  EXPECT_FALSE(Exists(bad));
}

// The refusals: one line naming the file and line (and the type), nothing left behind.
void ExpectRefused(const TypedPrepInputs& inputs, const std::string& message, TypedPrepOptions options = {}) {
  const std::string out = testing::MakeTempDir("typed_refused") + "/ds";
  auto s = PrepareTypedDataset(inputs, options, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), message);
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
  EXPECT_FALSE(Exists(out));
}

TEST(TypedPrepTest, AnIdBeyondTheTypeCountNamesFileLineAndType) {
  ThreeTypes g;
  g.inputs.node_types = {{"paper", 30}};
  // The first edge with an id >= 30, and its line (comments and blank lines counted).
  size_t first = 0;
  while (g.cites[first].first < 30 && g.cites[first].second < 30) ++first;
  int64_t line = 3;
  for (size_t i = 0; i < first; ++i) line += 1 + (i % 7 == 3);
  const bool src = g.cites[first].first >= 30;
  ExpectRefused(g.inputs, g.in + "/cites.txt:" + std::to_string(line) + ": " + (src ? "source" : "destination") +
                              " id " + std::to_string(src ? g.cites[first].first : g.cites[first].second) +
                              " is not a node of type paper: --node-type paper=30 (ids 0..29)");
}

TEST(TypedPrepTest, BadNamesDuplicatesAndTableIdsAreRefused) {
  ThreeTypes g;
  TypedPrepInputs bad = g.inputs;
  bad.relations[1].src = "au__thor";
  ExpectRefused(bad, "--relation au__thor__writes__paper=" + g.in +
                         "/writes.csv: source type 'au__thor' is not a valid name (1 to 64 letters and digits in runs "
                         "joined by single '_')");
  bad = g.inputs;
  bad.relations.push_back(bad.relations[0]);
  ExpectRefused(bad, "relation paper__cites__paper is given twice");
  bad = g.inputs;
  bad.relations.push_back({"paper", "rev_cites", "paper", g.in + "/cites.txt"});
  TypedPrepOptions reverse;
  reverse.reverse = true;
  ExpectRefused(bad, "relation paper__rev_cites__paper is given twice (counting the reverses of --reverse)", reverse);
  bad = g.inputs;
  WriteFileBytes(g.in + "/labels.csv", "id,label\n1,0\n\n40,1\n");
  bad.node_types = {{"paper", 37}};
  bad.node_types[0].labels = g.in + "/labels.csv";
  ExpectRefused(bad, g.in + "/labels.csv:4: id 40 is not a node of type paper (37 nodes)");
  bad.remap_ids = true;
  bad.node_types[0].count = -1;
  bad.relations.resize(2);
  bad.node_types[0].labels.clear();
  bad.node_types[0].features = g.in + "/f.npy";
  ExpectRefused(bad, "--type-features paper=" + g.in +
                         "/f.npy: with --remap-ids give --type-node-ids paper=FILE (line r+1 = the original id of "
                         "feature row r)");
}

// --remap-ids with features: --type-node-ids names each row's id; rows land on their
// nodes whatever the order, an id only in that file is a node of degree 0.
TEST(TypedPrepTest, RemapIdsWithFeaturesByNodeIdsFile) {
  const std::string in = testing::MakeTempDir("typed_rows_in");
  WriteFileBytes(in + "/writes.txt", "ann p9\nbob p10\nbob p9\n");
  WriteFileBytes(in + "/paper_ids.txt", "p9\n  p10 \nzz\n");  // zz: in no edge
  std::vector<float> features = {9, 9.5, 10, 10.5, 26, 26.5};      // rows p9, p10, zz
  ASSERT_TRUE(WriteNpy(in + "/paper.npy", "<f4", {3, 2}, features.data()).ok());
  std::vector<int32_t> labels = {1, -1, 4};
  ASSERT_TRUE(WriteNpy(in + "/labels.npy", "<i4", {3}, labels.data()).ok());
  TypedPrepInputs inputs;
  inputs.remap_ids = true;
  inputs.relations = {{"author", "writes", "paper", in + "/writes.txt"}};
  TypedNodeTypeInput paper{"paper"};
  paper.features = in + "/paper.npy";
  paper.labels = in + "/labels.npy";
  paper.node_ids = in + "/paper_ids.txt";
  inputs.node_types = {paper};
  const std::string out = testing::MakeTempDir("typed_rows") + "/ds";
  auto s = PrepareTypedDataset(inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Lines(out + "/paper.node_ids.txt"), (std::vector<std::string>{"p10", "p9", "zz"}));
  std::vector<float> stored = ReadArray<float>(out + "/paper.features.bin");
  stored.resize(6);
  EXPECT_EQ(stored, (std::vector<float>{10, 10.5, 9, 9.5, 26, 26.5}));
  EXPECT_EQ(ReadArray<int32_t>(out + "/paper.labels.bin"), (std::vector<int32_t>{-1, 1, 4}));
  ExpectRelation(out, "author__writes__paper", {{0, 1}, {1, 0}, {1, 1}}, 3);
  ExpectChecks(out);

  WriteFileBytes(in + "/paper_ids.txt", "p9\np10\np9\n");
  ExpectRefused(inputs, in + "/paper_ids.txt:3: node id 'p9' repeats line 1 (one line per node)");
  WriteFileBytes(in + "/paper_ids.txt", "p9\nzz\nyy\n");
  ExpectRefused(inputs, in + "/paper_ids.txt: has no line for node 'p10' of type paper (every node of the type needs "
                             "a row of its features/labels)");
  WriteFileBytes(in + "/paper_ids.txt", "p9\np10\n");
  ExpectRefused(inputs, in + "/paper.npy: 3 rows, but --type-node-ids paper=" + in +
                             "/paper_ids.txt has 2 lines (they must be equal)");
}

// gen --hetero's dataset, exported to one text edge list per relation and prepped again:
// the same relation files, byte for byte.
TEST(TypedPrepTest, GenHeteroRoundTrip) {
  HeteroGraphConfig c;
  c.num_papers = 1500;
  c.feature_dim = 4;
  c.num_classes = 5;
  const std::string gen = testing::MakeTempDir("typed_gen") + "/h";
  auto g = GenerateHeteroDataset(c, gen, false);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::string in = testing::MakeTempDir("typed_export");
  TypedPrepInputs inputs;
  for (const DatasetNodeType& t : g->manifest.node_types) inputs.node_types.push_back({t.name, t.count});
  for (const DatasetRelation& r : g->manifest.relations) {
    const auto indptr = ReadArray<int64_t>(gen + "/" + r.indptr);
    const auto indices = ReadArray<uint32_t>(gen + "/" + r.indices);
    EdgePairs edges;
    for (size_t v = 0; v + 1 < indptr.size(); ++v) {
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) edges.emplace_back(indices[static_cast<size_t>(e)], v);
    }
    std::reverse(edges.begin(), edges.end());  // any order: prep sorts
    WriteFileBytes(in + "/" + r.key() + ".txt", TextList(edges));
    inputs.relations.push_back({r.src, r.name, r.dst, in + "/" + r.key() + ".txt"});
  }
  const std::string out = testing::MakeTempDir("typed_round") + "/ds";
  auto s = PrepareTypedDataset(inputs, TypedPrepOptions{}, out);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->manifest.relations.size(), g->manifest.relations.size());
  for (const DatasetRelation& r : g->manifest.relations) {
    EXPECT_EQ(ReadFileBytes(out + "/" + r.indptr), ReadFileBytes(gen + "/" + r.indptr)) << r.key();
    EXPECT_EQ(ReadFileBytes(out + "/" + r.indices), ReadFileBytes(gen + "/" + r.indices)) << r.key();
  }
  EXPECT_EQ(s->manifest.num_nodes, g->manifest.num_nodes);
  ExpectChecks(out);
}

}  // namespace
}  // namespace seer
