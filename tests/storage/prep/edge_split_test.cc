// seer split-edges (storage/prep/edge_split.h) and the edge split files' check
// (storage/dataset/edge_splits.h). Oracle: a plain reference written here over the input's
// edge list read back with plain file reads (candidates as a std::set of pairs, the
// expected topology as each input list minus the held-out pairs), not the code's own
// HeldOutEdgeSet or NeighborListReader.
#include "storage/prep/edge_split.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "storage/base/random.h"
#include "storage/dataset/dataset_check.h"
#include "storage/dataset/edge_splits.h"
#include "storage/prep/node_reorder.h"
#include "support/small_dataset.h"
#include "support/test_support.h"

namespace seer {
namespace {

using testing::Peek;
using testing::ReadArray;
using testing::ReadFileBytes;
using Pair = std::pair<int64_t, int64_t>;  // (src, dst)

// A dataset's in-lists read back with plain reads, whatever its index dtype.
std::vector<std::vector<int64_t>> ReadLists(const std::string& dir) {
  auto ds = Dataset::Open(dir);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  const std::vector<int64_t> indptr = ReadArray<int64_t>(dir + "/indptr.bin");
  std::vector<int64_t> indices;
  if (ds->manifest().index_dtype == IndexDtype::kUint32) {
    for (uint32_t u : ReadArray<uint32_t>(dir + "/indices.bin")) indices.push_back(u);
  } else {
    indices = ReadArray<int64_t>(dir + "/indices.bin");
  }
  std::vector<std::vector<int64_t>> lists(indptr.size() - 1);
  for (size_t v = 0; v + 1 < indptr.size(); ++v) {
    lists[v].assign(indices.begin() + indptr[v], indices.begin() + indptr[v + 1]);
  }
  return lists;
}

std::vector<Pair> ReadPairs(const std::string& path) {
  const std::vector<int64_t> raw = ReadArray<int64_t>(path);
  std::vector<Pair> pairs;
  for (size_t i = 0; i + 1 < raw.size(); i += 2) pairs.emplace_back(raw[i], raw[i + 1]);
  return pairs;
}

// Every property of a split, checked against the reference.
void ExpectSplitOf(const std::string& in, const std::string& out, double valid_fraction, double test_fraction,
                   bool undirected) {
  const auto before = ReadLists(in);
  const auto after = ReadLists(out);
  std::set<Pair> candidates;
  for (size_t v = 0; v < before.size(); ++v) {
    for (int64_t u : before[v]) {
      if (!undirected || u <= static_cast<int64_t>(v)) candidates.emplace(u, static_cast<int64_t>(v));
    }
  }
  const int64_t c = static_cast<int64_t>(candidates.size());
  const std::vector<Pair> valid = ReadPairs(out + "/edges_valid.bin");
  const std::vector<Pair> test = ReadPairs(out + "/edges_test.bin");
  EXPECT_EQ(static_cast<int64_t>(valid.size()), std::llround(valid_fraction * static_cast<double>(c)));
  EXPECT_EQ(static_cast<int64_t>(test.size()), std::llround(test_fraction * static_cast<double>(c)));
  std::set<Pair> held_out;
  for (const auto* split : {&valid, &test}) {
    for (const Pair& p : *split) {
      EXPECT_TRUE(candidates.count(p)) << "held-out edge " << p.first << " -> " << p.second << " is no candidate";
      EXPECT_TRUE(held_out.insert(p).second) << "edge " << p.first << " -> " << p.second << " held out twice";
    }
  }
  // The expected topology: each input list, in order, without any held-out edge (nor,
  // undirected, the reverse of one).
  ASSERT_EQ(after.size(), before.size());
  int64_t kept = 0;
  for (size_t v = 0; v < before.size(); ++v) {
    std::vector<int64_t> want;
    for (int64_t u : before[v]) {
      const int64_t d = static_cast<int64_t>(v);
      if (held_out.count({u, d}) || (undirected && held_out.count({d, u}))) continue;
      want.push_back(u);
    }
    ASSERT_EQ(after[v], want) << "in-neighbor list of node " << v;
    kept += static_cast<int64_t>(want.size());
  }
  auto ds = Dataset::Open(out);
  ASSERT_TRUE(ds.ok());
  const DatasetEdgeSplits& e = ds->manifest().edge_splits;
  EXPECT_EQ(ds->manifest().num_edges, kept);
  EXPECT_EQ(ds->manifest().FormatVersion(), 2);
  EXPECT_EQ(e.candidate_edges, c);
  EXPECT_EQ(e.undirected, undirected);
  EXPECT_EQ(e.num_valid, static_cast<int64_t>(valid.size()));
  EXPECT_EQ(e.num_test, static_cast<int64_t>(test.size()));
  // The node files are the input's, byte for byte.
  for (const char* name : {"features.bin", "labels.bin", "train.bin", "valid.bin", "test.bin"}) {
    if (testing::FileExists(in + "/" + name)) {
      EXPECT_EQ(ReadFileBytes(out + "/" + name), ReadFileBytes(in + "/" + name)) << name;
    }
  }
  auto checked = CheckDataset(out, DatasetCheckOptions{true});
  EXPECT_TRUE(checked.ok()) << checked.status().ToString();
}

EdgeSplitOptions Options(double valid, double test, uint64_t seed, bool undirected = false) {
  EdgeSplitOptions o;
  o.valid_fraction = valid;
  o.test_fraction = test;
  o.seed = seed;
  o.undirected = undirected;
  o.show_progress = false;
  return o;
}

// Rewrites the manifest's checksum of `name` to the file's current one (so a test can
// change a file and reach the checks behind the checksum).
void RehashInManifest(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/dataset.json";
  auto m = DatasetManifest::FromJson(ReadFileBytes(path), path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto sum = FileXxh64(dir + "/" + name);
  ASSERT_TRUE(sum.ok());
  m->files[name].checksum = *sum;
  ASSERT_TRUE(WriteFileAtomically(path, m->ToJson()).ok());
}

TEST(EdgeSplitDrawTest, ExactCountsEveryCandidateEquallyLikely) {
  constexpr int64_t kCandidates = 40, kValid = 4, kTest = 8, kTrials = 20000;
  std::vector<int64_t> valid_hits(kCandidates, 0), test_hits(kCandidates, 0);
  for (int64_t t = 0; t < kTrials; ++t) {
    EdgeSplitDraw draw(kCandidates, kValid, kTest, static_cast<uint64_t>(t));
    int64_t v = 0, s = 0;
    for (int64_t i = 0; i < kCandidates; ++i) {
      const EdgeSplitDraw::Slot slot = draw.Next();
      if (slot == EdgeSplitDraw::Slot::kValid) ++valid_hits[i], ++v;
      if (slot == EdgeSplitDraw::Slot::kTest) ++test_hits[i], ++s;
    }
    ASSERT_EQ(v, kValid);
    ASSERT_EQ(s, kTest);
    EXPECT_THROW(draw.Next(), std::logic_error);
  }
  // Chi-square over the 40 positions (39 degrees of freedom; 80 is beyond p = 1e-4).
  for (const auto& [hits, per_trial] : {std::pair<const std::vector<int64_t>&, int64_t>{valid_hits, kValid},
                                        {test_hits, kTest}}) {
    const double expected = static_cast<double>(kTrials * per_trial) / kCandidates;
    double chi2 = 0;
    for (int64_t h : hits) chi2 += (static_cast<double>(h) - expected) * (static_cast<double>(h) - expected) / expected;
    EXPECT_LT(chi2, 80.0) << "expected " << expected << " per position";
  }
}

// A generated multigraph (repeated pairs, self loops): the reference's topology and
// counts, for uint32 indices.
TEST(EdgeSplitTest, MatchesThePlainReferenceDirected) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitIn");
  const std::string out = testing::MakeTempDir("EdgeSplitOut") + "/ds";
  auto summary = SplitEdges(in, out, Options(0.1, 0.15, 42));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ExpectSplitOf(in, out, 0.1, 0.15, false);
  EXPECT_GT(summary->num_valid, 0);
  EXPECT_LT(summary->output_edges, summary->input_edges - summary->num_valid - summary->num_test + 1);
}

// An undirected graph stored both ways plus one-way edges, with int64 indices.
TEST(EdgeSplitTest, MatchesThePlainReferenceUndirectedInt64) {
  std::vector<std::vector<int64_t>> lists = testing::RandomLists(301, 9);
  const size_t n = lists.size();
  std::vector<std::vector<int64_t>> both(n);
  for (size_t v = 0; v < n; ++v) {
    for (size_t i = 0; i < lists[v].size(); ++i) {
      const int64_t u = lists[v][i];
      both[v].push_back(u);
      if (i % 5 != 0) both[static_cast<size_t>(u)].push_back(static_cast<int64_t>(v));  // most edges both ways
    }
  }
  const std::string dir = testing::MakeTempDir("EdgeSplitUndirected");
  testing::WriteGraph(dir + "/in", both, {0, 1, 2}, IndexDtype::kInt64);
  auto summary = SplitEdges(dir + "/in", dir + "/out", Options(0.2, 0.1, 5, /*undirected=*/true));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  ExpectSplitOf(dir + "/in", dir + "/out", 0.2, 0.1, true);
  // Held-out edges are drawn with src <= dst, each undirected edge once.
  for (const Pair& p : ReadPairs(dir + "/out/edges_test.bin")) EXPECT_LE(p.first, p.second);
}

TEST(EdgeSplitTest, SameSeedSameBytesOtherSeedDiffers) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitSeed");
  const std::string root = testing::MakeTempDir("EdgeSplitSeedOut");
  ASSERT_TRUE(SplitEdges(in, root + "/a", Options(0.1, 0.1, 3)).ok());
  ASSERT_TRUE(SplitEdges(in, root + "/b", Options(0.1, 0.1, 3)).ok());
  ASSERT_TRUE(SplitEdges(in, root + "/c", Options(0.1, 0.1, 4)).ok());
  for (const char* name : {"edges_valid.bin", "edges_test.bin", "indptr.bin", "indices.bin"}) {
    EXPECT_EQ(ReadFileBytes(root + "/a/" + name), ReadFileBytes(root + "/b/" + name)) << name;
    EXPECT_NE(ReadFileBytes(root + "/a/" + name), ReadFileBytes(root + "/c/" + name)) << name;
  }
  EXPECT_EQ(Dataset::Open(root + "/a")->manifest().Identity(), Dataset::Open(root + "/b")->manifest().Identity());
}

TEST(EdgeSplitTest, EmptySplitsAndAllFractionRules) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitEdges");
  const std::string root = testing::MakeTempDir("EdgeSplitEdgesOut");
  auto none = SplitEdges(in, root + "/none", Options(0, 0, 1));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->output_edges, none->input_edges);
  ExpectSplitOf(in, root + "/none", 0, 0, false);
  for (const auto& [valid, test, text] :
       {std::tuple<double, double, const char*>{-0.1, 0.1, "--valid-fraction = -0.1 is out of range [0, 1)"},
        {0.1, 1.0, "--test-fraction = 1 is out of range [0, 1)"},
        {0.6, 0.4, "--valid-fraction + --test-fraction = 1 must be below 1"},
        {std::nan(""), 0.1, "--valid-fraction = nan is out of range"}}) {
    auto refused = SplitEdges(in, root + "/bad", Options(valid, test, 1));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find(text), std::string::npos) << refused.status().message();
  }
  EXPECT_FALSE(testing::FileExists(root + "/bad/dataset.json"));
  // A split dataset is not split again, nor reordered (its pairs would need renumbering).
  auto again = SplitEdges(root + "/none", root + "/twice", Options(0.1, 0.1, 1));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already has edge splits"), std::string::npos);
  ReorderOptions reorder;
  reorder.show_progress = false;
  auto reordered = ReorderDataset(root + "/none", root + "/re", reorder);
  ASSERT_FALSE(reordered.ok());
  EXPECT_NE(reordered.status().message().find("has edge splits"), std::string::npos);
}

// The format rule: a dataset with edge splits is version 2; a version-1 manifest with
// them is refused naming both.
TEST(EdgeSplitTest, ManifestIsVersionTwoAndRoundTrips) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitVersion");
  const std::string out = testing::MakeTempDir("EdgeSplitVersionOut") + "/ds";
  ASSERT_TRUE(SplitEdges(in, out, Options(0.05, 0.1, 18446744073709551615ull, true)).ok());
  EXPECT_EQ(Dataset::Open(in)->manifest().FormatVersion(), 1);
  std::string json = ReadFileBytes(out + "/dataset.json");
  ASSERT_NE(json.find("\"version\": 2"), std::string::npos);
  auto back = DatasetManifest::FromJson(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->edge_splits.seed, 18446744073709551615ull);
  EXPECT_EQ(back->edge_splits.valid_fraction, 0.05);
  EXPECT_EQ(back->edge_splits.test_fraction, 0.1);
  EXPECT_TRUE(back->edge_splits.undirected);
  EXPECT_EQ(back->ToJson(), json);
  auto edited = [&](const std::function<void(Json&)>& edit) {
    Json j = Json::parse(json);
    edit(j);
    return j.dump(2) + "\n";
  };
  auto refused = DatasetManifest::FromJson(edited([](Json& j) { j["version"] = 1; }), "m.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("m.json: version 1 but it uses edge_splits, which needs version 2"),
            std::string::npos)
      << refused.status().message();
  const std::string unlisted = edited([](Json& j) { j["edge_splits"]["test"] = "other.bin"; });
  EXPECT_NE(DatasetManifest::FromJson(unlisted, "m.json").status().message().find("'other.bin', which is not in files"),
            std::string::npos);
  const std::string role = edited([](Json& j) { j["edge_splits"]["valid"] = "labels.bin"; });
  EXPECT_NE(DatasetManifest::FromJson(role, "m.json").status().message().find("a file of another role"),
            std::string::npos);
  const std::string fraction = edited([](Json& j) { j["edge_splits"]["test_fraction"] = 0.99; });
  EXPECT_NE(DatasetManifest::FromJson(fraction, "m.json").status().message().find("with a sum below 1"),
            std::string::npos);
  // A count that disagrees with its file's size is refused at open, naming the file.
  ASSERT_TRUE(WriteFileAtomically(out + "/dataset.json", edited([](Json& j) { j["edge_splits"]["num_valid"] = 9; }))
                  .ok());
  auto opened = Dataset::Open(out);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("edges_valid.bin: size is"), std::string::npos)
      << opened.status().message();
}

class EdgeSplitCheckTest : public ::testing::Test {
 protected:
  // A fresh split of the small dataset: returns its directory.
  static std::string MakeSplit(bool undirected) {
    const std::string in = testing::MakeSmallDataset("EdgeSplitCheckIn");
    const std::string out = testing::MakeTempDir("EdgeSplitCheck") + "/ds";
    auto summary = SplitEdges(in, out, Options(0.1, 0.1, 11, undirected));
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_TRUE(CheckDataset(out, DatasetCheckOptions{}).ok());
    return out;
  }
  static std::string CheckError(const std::string& dir) {
    auto checked = CheckDataset(dir, DatasetCheckOptions{});
    EXPECT_FALSE(checked.ok());
    return checked.ok() ? "" : checked.status().message();
  }
  // Puts edge src -> dst back into the topology in place of the first element of dst's
  // list (which must have one), and fixes indices.bin's checksum, so only the leak is wrong.
  static void PutBack(const std::string& dir, int64_t src, int64_t dst) {
    const std::vector<int64_t> indptr = ReadArray<int64_t>(dir + "/indptr.bin");
    ASSERT_LT(indptr[dst], indptr[dst + 1]) << "node " << dst << " has no in-neighbor to replace";
    testing::Poke<uint32_t>(dir + "/indices.bin", indptr[dst], static_cast<uint32_t>(src));
    RehashInManifest(dir, "indices.bin");
  }
  // A held-out edge of `file` whose destination (or, with reverse, source) has a non-empty
  // list in the output.
  static Pair HeldOutWithList(const std::string& dir, const std::string& file, bool reverse) {
    const std::vector<int64_t> indptr = ReadArray<int64_t>(dir + "/indptr.bin");
    for (const Pair& p : ReadPairs(dir + "/" + file)) {
      const int64_t node = reverse ? p.first : p.second;
      if (indptr[node] < indptr[node + 1] && p.first != p.second) return p;
    }
    ADD_FAILURE() << "no usable held-out edge";
    return {0, 0};
  }
};

TEST_F(EdgeSplitCheckTest, HeldOutEdgePutBackIsNamed) {
  const std::string dir = MakeSplit(false);
  const Pair p = HeldOutWithList(dir, "edges_test.bin", false);
  PutBack(dir, p.first, p.second);
  const std::string message = CheckError(dir);
  EXPECT_NE(message.find("indices.bin at index"), std::string::npos) << message;
  EXPECT_NE(message.find("edge " + std::to_string(p.first) + " -> " + std::to_string(p.second) +
                         " is in the training topology"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("edges_test.bin at pair"), std::string::npos) << message;
}

TEST_F(EdgeSplitCheckTest, ReverseOfAnUndirectedHeldOutEdgeIsALeak) {
  const std::string dir = MakeSplit(true);
  const Pair p = HeldOutWithList(dir, "edges_valid.bin", true);
  PutBack(dir, p.second, p.first);  // dst -> src, in src's list
  const std::string message = CheckError(dir);
  EXPECT_NE(message.find("its reverse: undirected"), std::string::npos) << message;
  EXPECT_NE(message.find("edges_valid.bin at pair"), std::string::npos) << message;
}

TEST_F(EdgeSplitCheckTest, CorruptSplitFilesAreNamed) {
  const std::string dir = MakeSplit(false);
  const std::string valid = dir + "/edges_valid.bin";
  const int64_t first_src = testing::Peek<int64_t>(valid, 0);
  // Out of range: named by pair and byte offset.
  testing::Poke<int64_t>(valid, 3, testing::kSmallDatasetNodes);
  EXPECT_NE(CheckError(dir).find("edges_valid.bin at pair 1 (byte offset 24): destination node id 1237 out of range"),
            std::string::npos);
  // An in-range change: the checksum names the file.
  testing::Poke<int64_t>(valid, 3, testing::Peek<int64_t>(valid, 1));
  testing::Poke<int64_t>(valid, 0, first_src == 0 ? 1 : 0);
  std::string message = CheckError(dir);
  EXPECT_NE(message.find("edges_valid.bin: xxh64"), std::string::npos) << message;
  // Valid and test share an edge (checksums fixed): named with both positions.
  const std::string fresh = MakeSplit(false);
  const std::vector<int64_t> v = ReadArray<int64_t>(fresh + "/edges_valid.bin");
  testing::Poke<int64_t>(fresh + "/edges_test.bin", 0, v[0]);
  testing::Poke<int64_t>(fresh + "/edges_test.bin", 1, v[1]);
  RehashInManifest(fresh, "edges_test.bin");
  message = CheckError(fresh);
  EXPECT_NE(message.find("edges_test.bin at pair 0: the held-out edge is also edges_valid.bin at pair 0"),
            std::string::npos)
      << message;
  // A truncated file: Open names it and both sizes.
  const std::string cut = MakeSplit(false);
  ASSERT_EQ(::truncate((cut + "/edges_test.bin").c_str(), 16), 0);
  message = CheckError(cut);
  EXPECT_NE(message.find("edges_test.bin: size is 16 bytes"), std::string::npos) << message;
}

// --eval-negatives K: K ids per held-out edge in [0, num_nodes), the documented stream
// (formats.md: SplitMix64 from SplitMixFinalize(seed ^ XXH64("seer-eval-negatives:" +
// split)), K draws Below(num_nodes) per edge in file order), the same bytes for the same
// seed; K = 0 writes exactly the dataset it wrote before (no new file, no new field).
TEST(EdgeSplitNegativesTest, DocumentedStreamSameSeedSameBytesAndZeroAddsNothing) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitNegIn");
  const std::string root = testing::MakeTempDir("EdgeSplitNeg");
  constexpr int64_t kK = 7;
  EdgeSplitOptions with = Options(0.1, 0.15, 21, true);
  with.eval_negatives = kK;
  ASSERT_TRUE(SplitEdges(in, root + "/a", with).ok());
  ASSERT_TRUE(SplitEdges(in, root + "/b", with).ok());
  ASSERT_TRUE(SplitEdges(in, root + "/zero", Options(0.1, 0.15, 21, true)).ok());
  auto ds = Dataset::Open(root + "/a");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const DatasetEdgeSplits& e = ds->manifest().edge_splits;
  EXPECT_EQ(e.negatives_per_edge, kK);
  EXPECT_EQ(ds->manifest().FormatVersion(), 2);
  const int64_t n = ds->manifest().num_nodes;
  for (const auto& [split, pairs_file, negatives_file] :
       {std::tuple<const char*, const char*, const char*>{"valid", "edges_valid.bin", "edges_valid_negatives.bin"},
        {"test", "edges_test.bin", "edges_test_negatives.bin"}}) {
    const std::vector<Pair> pairs = ReadPairs(root + "/a/" + pairs_file);
    const std::vector<int64_t> negatives = ReadArray<int64_t>(root + "/a/" + negatives_file);
    ASSERT_EQ(negatives.size(), pairs.size() * kK) << negatives_file;
    ASSERT_GT(pairs.size(), 10u);
    const std::string key = std::string("seer-eval-negatives:") + split;
    SplitMix64 rng(SplitMixFinalize(21 ^ Xxh64::Hash(key.data(), key.size(), 0)));
    int64_t distinct_rows = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      std::set<int64_t> row;
      for (int64_t j = 0; j < kK; ++j) {
        const int64_t id = negatives[i * kK + static_cast<size_t>(j)];
        ASSERT_GE(id, 0);
        ASSERT_LT(id, n);
        EXPECT_EQ(id, static_cast<int64_t>(rng.Below(static_cast<uint64_t>(n)))) << negatives_file << " row " << i;
        row.insert(id);
      }
      distinct_rows += static_cast<int64_t>(row.size()) == kK;
    }
    EXPECT_GT(distinct_rows, static_cast<int64_t>(pairs.size()) / 2);  // uniform over 1237 nodes: few repeats
    EXPECT_EQ(ReadFileBytes(root + "/a/" + negatives_file), ReadFileBytes(root + "/b/" + negatives_file));
  }
  // Valid and test have their own streams.
  EXPECT_NE(Peek<int64_t>(root + "/a/edges_valid_negatives.bin", 0) * n +
                Peek<int64_t>(root + "/a/edges_valid_negatives.bin", 1),
            Peek<int64_t>(root + "/a/edges_test_negatives.bin", 0) * n +
                Peek<int64_t>(root + "/a/edges_test_negatives.bin", 1));
  EXPECT_EQ(ReadFileBytes(root + "/a/dataset.json"), ReadFileBytes(root + "/b/dataset.json"));
  auto checked = CheckDataset(root + "/a", DatasetCheckOptions{true});
  EXPECT_TRUE(checked.ok()) << checked.status().ToString();
  // K = 0: the split is the same and the manifest is K's without the negatives.
  EXPECT_FALSE(testing::FileExists(root + "/zero/edges_valid_negatives.bin"));
  EXPECT_FALSE(testing::FileExists(root + "/zero/edges_test_negatives.bin"));
  for (const char* name : {"edges_valid.bin", "edges_test.bin", "indptr.bin", "indices.bin", "features.bin"}) {
    EXPECT_EQ(ReadFileBytes(root + "/a/" + name), ReadFileBytes(root + "/zero/" + name)) << name;
  }
  Json j = Json::parse(ReadFileBytes(root + "/a/dataset.json"));
  for (const char* field : {"negatives_per_edge", "valid_negatives", "test_negatives"}) j["edge_splits"].erase(field);
  j["files"].erase("edges_valid_negatives.bin");
  j["files"].erase("edges_test_negatives.bin");
  const std::string zero_json = ReadFileBytes(root + "/zero/dataset.json");
  EXPECT_EQ(j.dump(2) + "\n", zero_json);
  EXPECT_EQ(zero_json.find("negatives"), std::string::npos);
  // Out of range K is refused before anything is written.
  EdgeSplitOptions bad = with;
  bad.eval_negatives = -1;
  auto refused = SplitEdges(in, root + "/bad", bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--eval-negatives = -1 is out of range"), std::string::npos);
  EXPECT_FALSE(testing::FileExists(root + "/bad/dataset.json"));
}

// seer check on damaged negatives files: an out-of-range id named by file, row, column
// and byte offset; an in-range change by the file's checksum; a cut file by its size; a
// manifest with K = 0 or an unlisted file refused naming the field.
TEST(EdgeSplitNegativesTest, CheckNamesTheDamagedFileAndPosition) {
  const std::string in = testing::MakeSmallDataset("EdgeSplitNegCheckIn");
  const std::string root = testing::MakeTempDir("EdgeSplitNegCheck");
  EdgeSplitOptions o = Options(0.1, 0.1, 5);
  o.eval_negatives = 4;
  for (const char* d : {"/range", "/sum", "/cut", "/json"}) ASSERT_TRUE(SplitEdges(in, root + d, o).ok());
  auto check_error = [](const std::string& dir) {
    auto checked = CheckDataset(dir, DatasetCheckOptions{});
    EXPECT_FALSE(checked.ok()) << dir;
    return checked.ok() ? std::string() : checked.status().message();
  };
  testing::Poke<int64_t>(root + "/range/edges_test_negatives.bin", 2 * 4 + 3, testing::kSmallDatasetNodes);
  std::string message = check_error(root + "/range");
  EXPECT_NE(message.find("edges_test_negatives.bin at row 2, column 3 (byte offset 88): negative node id 1237 out of "
                         "range [0, 1237)"),
            std::string::npos)
      << message;
  const int64_t first = testing::Peek<int64_t>(root + "/sum/edges_valid_negatives.bin", 0);
  testing::Poke<int64_t>(root + "/sum/edges_valid_negatives.bin", 0, first == 0 ? 1 : 0);
  message = check_error(root + "/sum");
  EXPECT_NE(message.find("edges_valid_negatives.bin: xxh64"), std::string::npos) << message;
  ASSERT_EQ(::truncate((root + "/cut/edges_valid_negatives.bin").c_str(), 8), 0);
  message = check_error(root + "/cut");
  EXPECT_NE(message.find("edges_valid_negatives.bin: size is 8 bytes"), std::string::npos) << message;
  const std::string json = ReadFileBytes(root + "/json/dataset.json");
  for (const auto& [edit, text] :
       {std::pair<std::function<void(Json&)>, const char*>{[](Json& j) { j["edge_splits"]["negatives_per_edge"] = 0; },
                                                          "'negatives_per_edge' is 0: must be in [1, 2^20]"},
        {[](Json& j) { j["edge_splits"]["test_negatives"] = "x.bin"; }, "'x.bin', which is not in files"},
        {[](Json& j) { j["edge_splits"]["valid_negatives"] = "edges_test.bin"; }, "a file of another role"}}) {
    Json j = Json::parse(json);
    edit(j);
    auto refused = DatasetManifest::FromJson(j.dump(2) + "\n", "m.json");
    ASSERT_FALSE(refused.ok()) << text;
    EXPECT_NE(refused.status().message().find(text), std::string::npos) << refused.status().message();
  }
}

}  // namespace
}  // namespace seer
