// Typed (heterogeneous) datasets in the executor (executor/typed_data.h): the features of
// every node type behind one reader (against the types' files read with plain I/O), the
// target's splits and labels in global ids, one Belady cache over (type, row) pairs
// (against the brute-force oracle keyed by (type, row), not by global id), and training
// end to end on a generated IGBH-like graph.
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cache/belady_planner.h"
#include "cache/planner_input.h"
#include "executor/data_path.h"
#include "executor/train_loop.h"
#include "executor/typed_data.h"
#include "storage/base/file_io.h"
#include "storage/prep/hetero_graph.h"
#include "storage/prep/npy.h"
#include "storage/prep/typed_prep.h"
#include "executor/superbatch_cache_planner.h"
#include "storage/io/mmap_reader.h"
#include "support/belady_oracle.h"
#include "support/temp_dir.h"
#include "training_fixture.h"

namespace seer {
namespace {

using testing::Batches;

// A small IGBH-like graph: 1200 papers (4 classes), authors, institutes, fields of study;
// `featureless` types have no features.
std::string MakeHeteroGraph(const std::string& name, std::vector<std::string> featureless = {}) {
  const std::string dir = testing::MakeTempDir(name) + "/h";
  HeteroGraphConfig c;
  c.num_papers = 1200;
  c.num_classes = 4;
  c.feature_dim = 12;
  c.featureless = std::move(featureless);
  c.seed = 5;
  auto s = GenerateHeteroDataset(c, dir, /*force=*/false);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return dir;
}

TEST(TypedDataTest, FeatureReaderReadsEachTypesRowsZeroPadded) {
  const std::string dir = MakeHeteroGraph("typed_reader", {"institute"});
  auto ds = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const DatasetManifest& m = ds->manifest();
  std::vector<std::unique_ptr<BlockReader>> readers;
  std::vector<std::string> files;  // the oracle: each type's file, read whole
  for (const DatasetNodeType& t : m.node_types) {
    readers.emplace_back();
    files.emplace_back();
    if (t.feature_dim == 0) continue;
    auto r = OpenMmapReader(ds->PathOf(t.features));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    readers.back() = std::move(r).value();
    files.back() = ReadWholeFile(ds->PathOf(t.features)).value();
  }
  // A view row wider than any type's: every featured row is padded.
  const int64_t own = FeatureRowBytes(FeatureDtype::kFloat32, 12);
  const int64_t row = own + 20;
  auto padded = FeatureUnits::Padded(m, row);
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  auto reader = TypedFeatureReader::Create(*ds, std::move(readers), *padded);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::vector<int64_t> offsets = NodeTypeOffsets(m);
  // Single rows of every type, and one request of 5 rows straddling each type boundary.
  std::vector<std::pair<int64_t, int64_t>> spans;  // (first global row, rows)
  for (size_t t = 0; t + 1 < offsets.size(); ++t) {
    spans.emplace_back(offsets[t], 1);
    spans.emplace_back(offsets[t + 1] - 1, 1);
    if (t + 2 < offsets.size()) spans.emplace_back(offsets[t + 1] - 2, 5);
  }
  std::vector<std::string> buffers(spans.size());
  std::vector<ReadRequest> requests;
  for (size_t i = 0; i < spans.size(); ++i) {
    buffers[i].assign(static_cast<size_t>(spans[i].second * row), '\x7f');
    requests.push_back(ReadRequest{spans[i].first * row, spans[i].second * row, buffers[i].data()});
  }
  ReadStats stats;
  ASSERT_TRUE((*reader)->ReadBatch(requests, &stats).ok());
  EXPECT_EQ(stats.requests, static_cast<int64_t>(requests.size()));
  for (size_t i = 0; i < spans.size(); ++i) {
    for (int64_t k = 0; k < spans[i].second; ++k) {
      const int64_t g = spans[i].first + k;
      size_t t = 0;
      while (offsets[t + 1] <= g) ++t;
      std::string want(static_cast<size_t>(row), '\0');
      if (!files[t].empty()) std::memcpy(want.data(), files[t].data() + (g - offsets[t]) * own, static_cast<size_t>(own));
      EXPECT_EQ(buffers[i].substr(static_cast<size_t>(k * row), static_cast<size_t>(row)), want)
          << "global row " << g << " (type " << m.node_types[t].name << ")";
    }
  }
  // Not whole rows: refused.
  std::string bad(static_cast<size_t>(row), '\0');
  const ReadRequest partial{row + 4, row, bad.data()};
  EXPECT_FALSE((*reader)->ReadBatch(&partial, 1, nullptr).ok());
}

TEST(TypedDataTest, TargetSplitsAndLabelsAreTheTypesInGlobalIds) {
  const std::string dir = MakeHeteroGraph("typed_target");
  auto ds = Dataset::OpenAnyKind(dir);
  ASSERT_TRUE(ds.ok());
  const DatasetManifest& m = ds->manifest();
  auto target = ResolveTarget(m, "");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->name, "paper");
  const DatasetNodeType& paper = *m.FindNodeType("paper");
  auto train = LoadTargetSplit(*ds, *target, "train");
  ASSERT_TRUE(train.ok());
  const std::string raw = ReadWholeFile(ds->PathOf(paper.train)).value();
  ASSERT_EQ(raw.size(), train->size() * 8);
  const std::string labels = ReadWholeFile(ds->PathOf(paper.labels)).value();
  auto table = LoadTargetLabels(*ds, *target, {&*train});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  for (size_t i = 0; i < train->size(); ++i) {
    int64_t local;
    std::memcpy(&local, raw.data() + 8 * i, 8);
    EXPECT_EQ((*train)[i], target->offset + local);
    int32_t label;
    std::memcpy(&label, labels.data() + 4 * local, 4);
    EXPECT_EQ(table->Get((*train)[i]), label);
  }
  EXPECT_FALSE(ResolveTarget(m, "author").ok());  // no labels
  EXPECT_FALSE(ResolveTarget(m, "venue").ok());   // no such type
  auto view = TypedTrainingView(m, *target);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->num_nodes, m.num_nodes);
  EXPECT_EQ(view->feature_dim, 12);
  EXPECT_EQ(view->num_classes, paper.num_classes);
}

// The typed trace's accesses as (type, row) keys, type * 2^40 + row: another id space than
// the global ids the planner sees, so a planner bug that mixed types up would not cancel.
Batches TypeRowKeys(const Batches& global, const std::vector<int64_t>& offsets) {
  Batches out;
  for (const auto& batch : global) {
    out.emplace_back();
    for (int64_t g : batch) {
      size_t t = 0;
      while (offsets[t + 1] <= g) ++t;
      out.back().push_back((static_cast<int64_t>(t) << 40) + (g - offsets[t]));
    }
  }
  return out;
}

TEST(TypedDataTest, BeladyOverTypeRowPairsMatchesTheOracle) {
  const std::string dir = MakeHeteroGraph("typed_belady", {"fos"});
  TrainOptions o = testing::SmallRun(dir);
  o.superbatch = 6;
  auto data = testing::OpenDataPath(o);
  ASSERT_NE(data, nullptr);
  ASSERT_NE(data->target(), nullptr);
  auto train = data->LoadSplit("train");
  ASSERT_TRUE(train.ok());
  const SuperbatchOptions options =
      MakeSuperbatchOptions(o.batch_size, o.superbatch, o.num_threads, o.fanouts, o.seed, /*shuffle=*/true);
  auto sampler = SuperbatchSampler::Create(data->topology_view(), *train, options);
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  auto trace = sampler->Sample(0, 0);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Batches global;
  std::map<int32_t, int64_t> types_seen;
  const std::vector<int64_t> offsets = NodeTypeOffsets(data->dataset().manifest());
  for (const BatchTrace& b : trace->batches) {
    global.push_back(b.node_ids);
    for (int64_t g : b.node_ids) ++types_seen[data->topology_view().typed->TypeOf(g)];
  }
  EXPECT_GE(types_seen.size(), 3u) << "the batches should reach papers, authors and another type";
  for (int64_t capacity : {int64_t{16}, int64_t{200}, int64_t{1500}}) {
    auto plan = PlanBelady(EmptyCacheState(capacity), MakeIdSpans(global), testing::CpuPlannerOptions());
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const testing::OraclePlan want = testing::BruteForceBelady(EmptyCacheState(capacity), TypeRowKeys(global, offsets));
    EXPECT_EQ(plan->num_misses, want.num_misses) << "capacity " << capacity;
    for (size_t i = 0; i < global.size(); ++i) {
      auto got = plan->changesets.Get(static_cast<int64_t>(i));
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(got->num_misses, want.changesets[i].num_misses) << "batch " << i;
    }
  }
}

// Node types whose rows differ: paper 8 float32 columns (32 B), author 3 (12 B), topic
// none; papers labeled (3 classes). *paper / *author: the features as written.
std::string MakeMixedWidthGraph(const std::string& name, std::vector<float>* paper, std::vector<float>* author) {
  const std::string in = testing::MakeTempDir(name);
  std::mt19937_64 rng(11);
  auto edges = [&](const std::string& file, int64_t n, int64_t num_src, int64_t num_dst) {
    std::vector<int64_t> flat;
    for (int64_t i = 0; i < n; ++i) {
      flat.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(num_src)));
      flat.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(num_dst)));
    }
    EXPECT_TRUE(WriteNpy(in + "/" + file, "<i8", {n, 2}, flat.data()).ok());
  };
  edges("cites.npy", 1500, 300, 300);
  edges("writes.npy", 900, 200, 300);
  edges("tags.npy", 600, 20, 300);
  paper->resize(300 * 8);
  for (size_t i = 0; i < paper->size(); ++i) (*paper)[i] = 0.5f * static_cast<float>(i) - 7.0f;
  author->resize(200 * 3);
  for (size_t i = 0; i < author->size(); ++i) (*author)[i] = 1000.0f + 0.25f * static_cast<float>(i);
  EXPECT_TRUE(WriteNpy(in + "/paper.npy", "<f4", {300, 8}, paper->data()).ok());
  EXPECT_TRUE(WriteNpy(in + "/author.npy", "<f4", {200, 3}, author->data()).ok());
  std::vector<int64_t> labels(300);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 3);
  EXPECT_TRUE(WriteNpy(in + "/labels.npy", "<i8", {300}, labels.data()).ok());
  TypedPrepInputs inputs;
  inputs.relations = {{"paper", "cites", "paper", in + "/cites.npy"},
                      {"author", "writes", "paper", in + "/writes.npy"},
                      {"topic", "tags", "paper", in + "/tags.npy"}};
  TypedNodeTypeInput p{"paper", 300};
  p.features = in + "/paper.npy";
  p.labels = in + "/labels.npy";
  TypedNodeTypeInput a{"author", 200};
  a.features = in + "/author.npy";
  inputs.node_types = {p, a, TypedNodeTypeInput{"topic", 20}};
  inputs.split_fractions = {0.6, 0.2, 0.2};
  TypedPrepOptions options;
  options.reverse = true;
  options.threads = 2;
  auto summary = PrepareTypedDataset(inputs, options, in + "/d");
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return in + "/d";
}

// Cached by bytes (storage/dataset/feature_units.h) or padded, under one byte budget: the
// model gets the same rows, each the type's own columns then zeros (against the input
// arrays), featureless nodes are never cached, and Belady over the units is the oracle's.
TEST(TypedDataTest, ByBytesGathersThePaddedRowsAndPlansBeladyOverUnits) {
  std::vector<float> paper, author;
  const std::string dir = MakeMixedWidthGraph("typed_bytes", &paper, &author);
  std::unique_ptr<DataPath> paths[2];  // [0] by bytes, [1] padded
  for (int padded = 0; padded < 2; ++padded) {
    MemoryBudgetRequest request;
    request.budget_bytes = 32 << 20;
    request.batch_size = 32;
    request.fanouts = {4, 4};
    request.fcache_budget_bytes = 40 * 32;  // 40 padded rows, or 106 units of 12 B
    DataIoOptions io;
    io.direct = false;
    io.quiet = true;
    io.pad_typed_rows = padded == 1;
    auto data = DataPath::Open(dir, request, io, /*pilot=*/nullptr);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    paths[padded] = std::move(data).value();
  }
  const FeatureUnits& units = *paths[0]->feature_units();
  ASSERT_TRUE(units.by_bytes());
  ASSERT_EQ(units.unit_bytes(), 12);  // 32 B and 12 B rows: see FeatureUnitsTest
  ASSERT_FALSE(units.identity());
  EXPECT_TRUE(paths[1]->feature_units()->identity());
  EXPECT_EQ(paths[0]->split().fcache_rows, 106);
  EXPECT_EQ(paths[1]->split().fcache_rows, 40);
  EXPECT_EQ(paths[0]->manifest().feature_dim, 8);

  auto train = paths[0]->LoadSplit("train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  const SuperbatchOptions options = MakeSuperbatchOptions(32, 6, 2, {4, 4}, 3, /*shuffle=*/true);
  auto sampler = SuperbatchSampler::Create(paths[0]->topology_view(), *train, options);
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  auto trace = sampler->Sample(0, 0);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const std::vector<int64_t>& offsets = units.node_offsets();  // paper, author, topic
  int64_t topics_seen = 0;
  for (int padded = 0; padded < 2; ++padded) {
    SCOPED_TRACE(padded ? "padded" : "by bytes");
    DataPath& data = *paths[padded];
    CachePolicySpec spec;
    spec.kind = PolicyKind::kBelady;
    spec.capacity_rows = data.split().fcache_rows;
    spec.planner = PlannerDevice::kCpu;
    spec.spill_dir = testing::MakeTempDir("typed_bytes_spill");
    spec.units = data.feature_units();
    auto planner = MakeSuperbatchCachePlanner(spec, data.dataset(), *sampler);
    ASSERT_TRUE(planner.ok()) << planner.status().ToString();
    auto plan = planner->Plan(*trace);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    GatherStats stats;
    if (!plan->fill_slots.empty()) ASSERT_TRUE(data.gatherer().Fill(plan->fill_slots, &stats).ok());
    std::vector<float> rows;
    for (size_t i = 0; i < trace->batches.size(); ++i) {
      const BatchTrace& batch = trace->batches[i];
      auto cs = plan->changesets->Get(static_cast<int64_t>(i));
      ASSERT_TRUE(cs.ok());
      Status st = data.gatherer().Gather(batch, &*cs, &rows, &stats);
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_EQ(rows.size(), batch.node_ids.size() * 8);
      for (size_t p = 0; p < batch.node_ids.size(); ++p) {
        const int64_t g = batch.node_ids[p];
        std::vector<float> want(8, 0.0f);
        if (g < offsets[1]) {
          std::copy_n(paper.begin() + g * 8, 8, want.begin());
        } else if (g < offsets[2]) {
          std::copy_n(author.begin() + (g - offsets[1]) * 3, 3, want.begin());
        } else if (padded == 0) {
          ++topics_seen;
        }
        ASSERT_EQ(std::vector<float>(rows.begin() + static_cast<int64_t>(p) * 8, rows.begin() + static_cast<int64_t>(p + 1) * 8), want)
            << "batch " << i << " node " << g;
      }
    }
    for (int64_t slot_node : planner->slots()) {
      if (padded == 0 && slot_node != kFreeSlot) EXPECT_LT(slot_node, units.num_units());
    }
  }
  EXPECT_GT(topics_seen, 0) << "the batches should reach topics";
  // Belady over the units is the oracle's over the same accesses keyed (type, node, unit).
  Batches expanded, keys;
  for (const BatchTrace& b : trace->batches) {
    expanded.emplace_back();
    units.Expand(b.node_ids.data(), static_cast<int64_t>(b.node_ids.size()), &expanded.back());
    keys.emplace_back();
    for (int64_t u : expanded.back()) {
      const int64_t t = units.TypeOfUnit(u);
      keys.back().push_back((t << 40) + (units.NodeOfUnit(u) - offsets[static_cast<size_t>(t)]) * 8 +
                            (u - units.FirstUnit(units.NodeOfUnit(u))));
    }
  }
  for (int64_t capacity : {int64_t{7}, int64_t{106}, int64_t{600}}) {
    auto plan = PlanBelady(EmptyCacheState(capacity), MakeIdSpans(expanded), testing::CpuPlannerOptions());
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const testing::OraclePlan want = testing::BruteForceBelady(EmptyCacheState(capacity), keys);
    EXPECT_EQ(plan->num_misses, want.num_misses) << "capacity " << capacity;
  }
}

TEST(TypedTrainingTest, SageOnMergedRelationsLearnsPaperLabelsThroughASmallCache) {
  const std::string dir = MakeHeteroGraph("typed_train", {"institute"});
  TrainOptions o = testing::SmallRun(dir);
  o.epochs = 3;
  o.learning_rate = 0.01;
  o.fcache_budget_bytes = 300 * 48;  // 300 of the ~2400 rows of 12 float32 features
  auto summary = RunTraining(o);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_GT(summary->test_accuracy, 0.5) << "4 classes: chance is 0.25";
  ASSERT_FALSE(summary->epochs.empty());
  EXPECT_GT(summary->epochs.back().gather.misses, 0);
  EXPECT_GT(summary->epochs.back().gather.hits, 0);
}

TEST(TypedTrainingTest, ErrorsNameTheProblem) {
  const std::string dir = MakeHeteroGraph("typed_errors");
  TrainOptions o = testing::SmallRun(dir);
  o.target_type = "author";
  auto no_labels = RunTraining(o);
  ASSERT_FALSE(no_labels.ok());
  EXPECT_NE(no_labels.status().message().find("author"), std::string::npos) << no_labels.status().message();
  o.target_type = "";
  o.relation_fanouts = "nosuchrelation=3,3";
  auto bad_relation = RunTraining(o);
  ASSERT_FALSE(bad_relation.ok());
  EXPECT_NE(bad_relation.status().message().find("nosuchrelation"), std::string::npos)
      << bad_relation.status().message();
  o.relation_fanouts = "";
  o.model = ModelKind::kGcn;
  auto gcn = RunTraining(o);
  ASSERT_FALSE(gcn.ok());
  EXPECT_NE(gcn.status().message().find("--gcn-norm block"), std::string::npos) << gcn.status().message();
  // A relational model on a homogeneous dataset.
  TrainOptions h = testing::SmallRun(testing::MakeSyntheticGraph("typed_errors_h", 300, FeatureDtype::kFloat32));
  h.model = ModelKind::kRgcn;
  auto rgcn = RunTraining(h);
  ASSERT_FALSE(rgcn.ok());
  EXPECT_NE(rgcn.status().message().find("typed dataset"), std::string::npos) << rgcn.status().message();
}

}  // namespace
}  // namespace seer
