// `seer sample` and `seer stats` on a typed dataset (issue #31), through the real binary
// (env SEER_BINARY): on one `seer gen --hetero` graph (a featureless type included),
//   - sample records a typed trace: .sbt files with the relation count, trace.json with
//     the target type, every relation's fan-outs (--relation-fanouts applied to the one
//     named) and the identity of the TypedTrainingView (what `seer train` records);
//   - stats replays it: the per-type rows (printed for belady, "by_type" in --json for
//     every row) hold the accesses an independent count over the trace finds per type,
//     and sum to each row's totals;
//   - the key check (both --typed-cache layouts): `seer train --model sage` with the same batch size, fan-outs, seed
//     and superbatch counts the same feature-cache misses, fill and block reads as
//     `seer stats --belady-scope superbatch` at its capacity in rows (belady and
//     static-degree);
//   - a trace of another typed dataset and --target-type on a homogeneous dataset are
//     refused with one line.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_suite.h"
#include "inspector/trace_directory.h"
#include "storage/base/json_file.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/typed_target.h"
#include "support/test_support.h"

namespace seer::testing {
namespace {

constexpr const char* kGen = "--hetero --papers 3000 --classes 8 --feature-dim 24 --featureless institute --seed 5";
// The settings sample and train share.
constexpr const char* kShared = "--batch-size 100 --superbatch 4 --fanouts 5,5 --seed 7 --threads 2";
constexpr const char* kRelationFanouts = "cites=3,3";

int64_t IntField(const Json& object, const std::string& key, const std::string& path) {
  auto value = JsonInt(object, key, path);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : -1;
}

// One typed graph (ROOT/g) and its trace (ROOT/t), sampled with --relation-fanouts.
class TypedStatsCliTest : public CliSuite<TypedStatsCliTest> {
 public:
  static constexpr const char* kPrefix = "seer_typed_stats_cli";
  static void Prepare(const std::string&) {
    GenerateAndSample(kGen, std::string(kShared) + " --epochs 1 --relation-fanouts " + kRelationFanouts);
  }
};

TEST_F(TypedStatsCliTest, SampleRecordsATypedTraceWithTheTrainingViewsIdentity) {
  auto reader = TraceDirectoryReader::Open(root_ + "/t");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const TraceRunInfo& run = reader->run_info();
  EXPECT_EQ(run.target_type, "paper");
  ASSERT_EQ(run.relation_fanouts.size(), 8u);
  for (const auto& [key, fanouts] : run.relation_fanouts) {
    EXPECT_EQ(fanouts, (key == "paper__cites__paper" ? std::vector<int>{3, 3} : std::vector<int>{5, 5})) << key;
  }
  auto dataset = Dataset::OpenAnyKind(root_ + "/g");
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  auto target = ResolveTarget(dataset->manifest(), "paper");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto view = TypedTrainingView(dataset->manifest(), *target);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(run.dataset_identity, view->Identity());
  EXPECT_NE(run.dataset_identity, dataset->manifest().Identity());
  ASSERT_EQ(reader->num_superbatches(), 5);  // 1811 training papers in batches of 100, 4 per superbatch
  auto first = reader->Read(0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->num_relations, 8);
}

// Accesses per node type, counted straight from the .sbt files (offsets from dataset.json).
std::vector<int64_t> CountAccessesByType(const std::string& trace_dir, const DatasetManifest& m) {
  std::vector<int64_t> ends;  // type t = ids below ends[t], not below ends[t - 1]
  int64_t end = 0;
  for (const DatasetNodeType& t : m.node_types) ends.push_back(end += t.count);
  std::vector<int64_t> counts(ends.size(), 0);
  auto reader = TraceDirectoryReader::Open(trace_dir);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return counts;
  for (int64_t k = 0; k < reader->num_superbatches(); ++k) {
    auto sb = reader->Read(k);
    EXPECT_TRUE(sb.ok()) << sb.status().ToString();
    if (!sb.ok()) continue;
    for (const BatchTrace& b : sb->batches) {
      for (int64_t v : b.node_ids) {
        size_t t = 0;
        while (t < ends.size() && v >= ends[t]) ++t;
        ++counts[t];
      }
    }
  }
  return counts;
}

// By bytes (the default) every featured type's node is one unit here (one width, 24
// columns) and the featureless institutes none; padded, every node is one row.
TEST_F(TypedStatsCliTest, StatsReportsEveryNodeTypeAndTheRowsSumToTheTotals) {
  auto dataset = Dataset::OpenAnyKind(root_ + "/g");
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const DatasetManifest& m = dataset->manifest();
  const std::vector<int64_t> nodes = CountAccessesByType(root_ + "/t", m);
  EXPECT_GT(nodes[2], 0);  // the featureless institutes are sampled
  for (const std::string layout : {"bytes", "padded"}) {
    SCOPED_TRACE(layout);
    const bool padded = layout == "padded";
    const std::string json = root_ + "/all_" + layout + ".json";
    const CliRun run = RunSeer("stats " + root_ + "/g --trace " + root_ + "/t --planner cpu --capacities 2%,10% --json " +
                               json + " --typed-cache " + layout);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("belady per node type:"), std::string::npos) << run.output;
    for (const char* type : {"paper", "author", "institute", "fos"}) {
      EXPECT_NE(run.output.find(" " + std::string(type) + " "), std::string::npos) << type << "\n" << run.output;
    }
    std::vector<int64_t> expected = nodes;
    int64_t cache_rows = 0;
    for (size_t t = 0; t < m.node_types.size(); ++t) {
      if (!padded && m.node_types[t].feature_dim == 0) expected[t] = 0;
      if (padded || m.node_types[t].feature_dim > 0) cache_rows += m.node_types[t].count;
    }
    auto doc = ReadJsonFile(json);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    EXPECT_EQ(IntField(*doc, "num_nodes", json), cache_rows);
    EXPECT_EQ(padded ? 6033 : 6033 - m.node_types[2].count, cache_rows);
    ASSERT_TRUE(doc->contains("typed_cache")) << doc->dump();
    EXPECT_EQ((*doc)["typed_cache"].value("layout", ""), layout);
    EXPECT_EQ(IntField((*doc)["typed_cache"], "units", json), cache_rows);
    std::map<std::string, int> rows_by_policy;
    for (const Json& r : (*doc)["results"]) {
      const std::string policy = r.value("policy", "");
      ++rows_by_policy[policy];
      ASSERT_TRUE(r.contains("by_type")) << r.dump();
      const Json& types = r["by_type"];
      ASSERT_EQ(types.size(), 4u) << r.dump();
      int64_t accesses = 0, misses = 0;
      for (size_t t = 0; t < types.size(); ++t) {
        EXPECT_EQ(types[t].value("type", ""), m.node_types[t].name);
        EXPECT_EQ(IntField(types[t], "accesses", json), expected[t]) << policy << " type " << t;
        const int64_t type_misses = IntField(types[t], "misses", json);
        EXPECT_GE(type_misses, 0);
        EXPECT_LE(type_misses, expected[t]);
        accesses += IntField(types[t], "accesses", json);
        misses += type_misses;
      }
      EXPECT_EQ(accesses, IntField(r, "accesses", json)) << r.dump();
      EXPECT_EQ(misses, IntField(r, "misses", json)) << r.dump();
    }
    EXPECT_EQ(rows_by_policy["belady"], 2);
    EXPECT_EQ(rows_by_policy["static-degree"], 2);
  }
}

// Feature-cache counts of one epoch of `seer train --metrics` (start + epoch lines).
struct TrainCounts {
  int64_t rows = -1, accesses = 0, misses = 0, fill_rows = 0, blocks_read = 0;
};

TrainCounts ReadTrainCounts(const std::string& metrics) {
  TrainCounts c;
  std::istringstream lines(ReadFileBytes(metrics));
  std::string line;
  while (std::getline(lines, line)) {
    auto j = ParseJson(line, metrics);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    if (!j.ok()) continue;
    const std::string type = j->value("type", "");
    if (type == "start") c.rows = IntField(*j, "fcache_rows", metrics);
    if (type != "epoch") continue;
    c.accesses += IntField(*j, "fcache_accesses", metrics);
    c.misses += IntField(*j, "fcache_accesses", metrics) - IntField(*j, "fcache_hits", metrics);
    c.fill_rows += IntField(*j, "fcache_fill_rows", metrics);
    c.blocks_read += IntField(*j, "feature_block_reads", metrics);
  }
  return c;
}

TEST_F(TypedStatsCliTest, TrainMissesEqualStatsSuperbatchScope) {
  const std::string binary = std::getenv("SEER_BINARY");
  const std::string trainer = binary.substr(0, binary.find_last_of('/') + 1) + "seer-train";
  if (::access(trainer.c_str(), X_OK) != 0) GTEST_SKIP() << "no seer-train next to " << binary;
  const std::string ds = root_ + "/g";
  // Both layouts of the typed cache (by bytes, the default: the featureless institutes are
  // never cached; padded: one row per node).
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"belady", "bytes"}, {"static-degree", "bytes"}, {"belady", "padded"}};
  for (const auto& [policy_name, layout] : runs) {
    const char* policy = policy_name.c_str();
    SCOPED_TRACE(policy_name + " " + layout);
    // 24 float32 features = 96 B rows: 30K = 320 rows, fewer than a superbatch's distinct nodes.
    const std::string metrics = root_ + "/m_" + policy + "_" + layout + ".jsonl";
    const CliRun train = RunSeer("train " + ds + " --model sage --feature-cache " + policy +
                                 " --fcache-budget 30K --memory-budget 256M --buffered --quiet --epochs 1 --metrics " +
                                 metrics + " " + kShared + " --relation-fanouts " + kRelationFanouts +
                                 " --typed-cache " + layout);
    ASSERT_EQ(train.exit_code, 0) << train.output;
    const TrainCounts t = ReadTrainCounts(metrics);
    ASSERT_GT(t.rows, 0) << ReadFileBytes(metrics);
    const std::string json = root_ + "/s_" + policy + "_" + layout + ".json";
    const CliRun stats = RunSeer("stats " + ds + " --trace " + root_ + "/t --planner cpu --belady-scope superbatch " +
                                 "--policies " + policy + " --capacities " + std::to_string(t.rows) + " --json " + json +
                                 " --typed-cache " + layout);
    ASSERT_EQ(stats.exit_code, 0) << stats.output;
    auto doc = ReadJsonFile(json);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    ASSERT_EQ((*doc)["results"].size(), 1u);
    const Json& s = (*doc)["results"][0];
    std::printf("%s %s at %lld rows: train %lld misses of %lld (fill %lld), stats %lld\n", policy,
                layout.c_str(), static_cast<long long>(t.rows), static_cast<long long>(t.misses),
                static_cast<long long>(t.accesses),
                static_cast<long long>(t.fill_rows), static_cast<long long>(IntField(s, "misses", json)));
    EXPECT_EQ(IntField(s, "capacity_rows", json), t.rows);
    EXPECT_EQ(IntField(s, "accesses", json), t.accesses);
    EXPECT_EQ(IntField(s, "misses", json), t.misses);
    EXPECT_EQ(IntField(s, "fill_rows", json), t.fill_rows);
    EXPECT_EQ(IntField(s, "blocks_read", json), t.blocks_read);
    EXPECT_GT(t.misses, 0);
    EXPECT_LT(t.misses, t.accesses);  // neither side is vacuous
  }
}

TEST_F(TypedStatsCliTest, ATraceOfAnotherDatasetAndTypedFlagsOnAHomogeneousOneAreRefused) {
  const std::string out = MakeTempDir("typed_stats_refused");
  const CliRun gen = RunSeer("gen --hetero --papers 2000 --classes 8 --feature-dim 24 --quiet --out " + out + "/other");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const CliRun stats = RunSeer("stats " + out + "/other --trace " + root_ + "/t --planner cpu");
  EXPECT_NE(stats.exit_code, 0);
  EXPECT_NE(stats.output.find(root_ + "/t/trace.json: recorded on dataset "), std::string::npos) << stats.output;
  const CliRun homogeneous = RunSeer("gen --nodes 500 --quiet --out " + out + "/plain");
  ASSERT_EQ(homogeneous.exit_code, 0) << homogeneous.output;
  ExpectOneLineError(RunSeer("sample " + out + "/plain --out " + out + "/pt --target-type paper --quiet"), "sample",
                     out + "/plain: --target-type is for typed datasets; this one has one node type and one relation");
  EXPECT_FALSE(FileExists(out + "/pt/trace.json"));
}

}  // namespace
}  // namespace seer::testing
