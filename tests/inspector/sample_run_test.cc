// RunSampling (`seer sample` as a library call): the trace directory holds exactly what
// a SuperbatchSampler samples for the same settings, for any thread count and whether
// whatever the trace budget; the JSON lines and the observer see every superbatch; bad
// options are errors naming what is wrong.
#include "inspector/sample_run.h"
#include "inspector/topology.h"
#include "inspector/trace_directory.h"
#include "inspector/trace_format.h"

#include "storage/base/file_io.h"

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/base/json_file.h"
#include "support/files.h"
#include "support/graph_writer.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;

// 1021 nodes with a skewed degree distribution; 613 training seeds (odd counts leave
// short last batches and superbatches).
std::string WriteSkewedGraph(const std::string& root) {
  const std::string dir = root + "/g";
  std::vector<int64_t> train;
  for (int64_t v = 0; v < 613; ++v) train.push_back((v * 7) % 1021);
  seer::testing::WriteGraph(dir, seer::testing::RandomLists(1021, /*seed=*/11), train);
  return dir;
}

SampleRunOptions SmallRun(const std::string& dataset, const std::string& out) {
  SampleRunOptions o;
  o.dataset_dir = dataset;
  o.out_dir = out;
  o.fanouts = {4, 3};
  o.batch_size = 37;
  o.superbatch = 5;
  o.epochs = 2;
  o.seed = 9;
  o.num_threads = 2;
  o.show_progress = false;
  return o;
}

// The superbatches a SuperbatchSampler samples for `o`, epoch by epoch.
std::vector<SuperbatchTrace> SampleDirectly(const SampleRunOptions& o) {
  auto dataset = Dataset::Open(o.dataset_dir);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  TopologyOptions topo;
  topo.reader.mode = IoMode::kPread;
  auto topology = Topology::Open(*dataset, topo);
  EXPECT_TRUE(topology.ok()) << topology.status().ToString();
  SuperbatchOptions options;
  options.batch_size = o.batch_size;
  options.superbatch_size = o.superbatch;
  options.num_threads = 1;
  options.sampler.fanouts = o.fanouts;
  options.sampler.seed = o.seed;
  auto sampler = SuperbatchSampler::Create((*topology)->view(), *dataset->LoadSplit("train"), options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  std::vector<SuperbatchTrace> out;
  for (int64_t e = 0; e < o.epochs; ++e) {
    for (int64_t k = 0; k < sampler->num_superbatches(); ++k) out.push_back(*sampler->Sample(e, k));
  }
  return out;
}

void ExpectTraceDirectoryHolds(const std::string& dir, const std::vector<SuperbatchTrace>& expected) {
  auto reader = TraceDirectoryReader::Open(dir);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ(reader->num_superbatches(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    auto sb = reader->Read(static_cast<int64_t>(i));
    ASSERT_TRUE(sb.ok()) << sb.status().ToString();
    EXPECT_EQ(sb->epoch, expected[i].epoch) << i;
    EXPECT_EQ(sb->superbatch_index, expected[i].superbatch_index) << i;
    ASSERT_EQ(sb->batches.size(), expected[i].batches.size()) << i;
    auto bytes = ReadWholeFile(reader->info(static_cast<int64_t>(i)).path);  // the file, byte for byte
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, SerializeTrace(expected[i])) << i;
    for (size_t b = 0; b < expected[i].batches.size(); ++b) {
      EXPECT_EQ(sb->batches[b].node_ids, expected[i].batches[b].node_ids) << i << "/" << b;
    }
  }
}

TEST(SampleRunTest, WritesWhatTheSamplerSamplesForAnyThreads) {
  const std::string root = MakeTempDir("sample_run");
  const std::string dataset = WriteSkewedGraph(root);
  const SampleRunOptions base = SmallRun(dataset, root + "/t1");
  const std::vector<SuperbatchTrace> expected = SampleDirectly(base);
  ASSERT_EQ(expected.size(), 2u * 4u);  // ceil(613 / 37) = 17 batches, 4 superbatches of <= 5

  auto one = RunSampling(base);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->superbatches, 8);
  EXPECT_EQ(one->total.batches, 2 * 17);
  EXPECT_EQ(one->traces.spilled, 0);
  ExpectTraceDirectoryHolds(root + "/t1", expected);

  SampleRunOptions spill = SmallRun(dataset, root + "/t2");
  spill.num_threads = 4;
  spill.trace_budget_bytes = 0;
  spill.runtime_dir = root + "/runtime";
  auto two = RunSampling(spill);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->traces.spilled, 0);  // traces stream straight into the directory
  EXPECT_FALSE(std::filesystem::exists(root + "/runtime"));
  ExpectTraceDirectoryHolds(root + "/t2", expected);
  // Only trace.json and the .sbt files are left (no temporary names).
  int64_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/t2")) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "trace.json" || (name[0] != '.' && entry.path().extension() == ".sbt")) << name;
    ++files;
  }
  EXPECT_EQ(files, 1 + 8);
}

TEST(SampleRunTest, ObserverAndJsonLinesSeeEverySuperbatch) {
  const std::string root = MakeTempDir("sample_run_jsonl");
  SampleRunOptions o = SmallRun(WriteSkewedGraph(root), root + "/t");
  o.jsonl_path = root + "/sb.jsonl";
  SampleRunPlan plan;
  std::vector<SuperbatchStats> seen;
  SampleRunObserver observer;
  observer.on_start = [&](const SampleRunPlan& p) { plan = p; };
  observer.on_superbatch = [&](const SuperbatchStats& s) { seen.push_back(s); };
  auto summary = RunSampling(o, observer);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(plan.num_seeds, 613);
  EXPECT_EQ(plan.num_batches, 17);
  EXPECT_EQ(plan.num_superbatches, 4);
  EXPECT_FALSE(plan.ncache_enabled);
  ASSERT_EQ(seen.size(), 8u);

  std::istringstream lines(seer::testing::ReadFileBytes(o.jsonl_path));
  std::string line;
  size_t i = 0;
  int64_t edges = 0;
  for (; std::getline(lines, line); ++i) {
    auto j = ParseJson(line, o.jsonl_path);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_LT(i, seen.size());
    EXPECT_EQ(*JsonInt(*j, "epoch", ""), seen[i].epoch);
    EXPECT_EQ(*JsonInt(*j, "superbatch", ""), seen[i].superbatch_index);
    EXPECT_EQ(*JsonInt(*j, "unique_nodes", ""), seen[i].unique_nodes);
    for (const char* key : {"batches", "sampled_nodes", "ncache_lookups", "ncache_hits", "topology_requests",
                            "blocks_read", "bytes_read"}) {
      EXPECT_TRUE(JsonInt(*j, key, "").ok()) << key;
    }
    EXPECT_TRUE(JsonNumber(*j, "seconds", "").ok());
    edges += *JsonInt(*j, "edges", "");
  }
  EXPECT_EQ(i, seen.size());
  EXPECT_EQ(edges, summary->total.edges);
}

TEST(SampleRunTest, BadOptionsAreErrors) {
  const std::string root = MakeTempDir("sample_run_errors");
  const std::string dataset = WriteSkewedGraph(root);
  SampleRunOptions o = SmallRun(dataset, root + "/t");
  o.split = "holdout";
  auto bad_split = RunSampling(o);
  ASSERT_FALSE(bad_split.ok());
  EXPECT_NE(bad_split.status().message().find("holdout"), std::string::npos);

  o = SmallRun(dataset, root + "/t");
  o.use_saved_ncache = true;
  o.ncache_budget = "1M";
  EXPECT_FALSE(RunSampling(o).ok());

  o = SmallRun(dataset, root + "/t");
  o.epochs = 1;
  ASSERT_TRUE(RunSampling(o).ok());
  auto again = RunSampling(o);  // the trace directory exists
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("force"), std::string::npos) << again.status().ToString();
  o.force = true;
  EXPECT_TRUE(RunSampling(o).ok());

  o = SmallRun(root + "/missing", root + "/t3");
  auto missing = RunSampling(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(root + "/missing"), std::string::npos);
}

}  // namespace
}  // namespace seer
