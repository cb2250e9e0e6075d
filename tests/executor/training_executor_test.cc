// TrainingExecutor (executor/training_executor.h) over a real pipeline on a generated
// graph: every batch of every epoch is accounted once in the epoch reports; --stop-after
// stops at a superbatch boundary with that position checkpointed, and a Checkpointer
// resuming from it gets the same position back.
#include "executor/training_executor.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/superbatch_cache_planner.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::MakeTempDir;

// Everything a TrainingExecutor needs, built the way RunTraining builds it (no cache
// policy, 4 batches of 64 per superbatch).
struct ExecutorRig {
  TrainOptions options;
  std::unique_ptr<DataPath> data;
  std::vector<int64_t> train;
  LabelTable labels;
  TrainingSamplers samplers;
  std::unique_ptr<ModelRunner> model;
  std::unique_ptr<EpochReporter> reporter;
  std::optional<SuperbatchCachePlanner> planner;

  // Runs the executor from the start over options.epochs epochs with `checkpointer`.
  std::unique_ptr<TrainingExecutor> Run(const Checkpointer& checkpointer, Status* status) {
    const TrainContext ctx{options, *data, labels, samplers, model.get(), checkpointer, *reporter};
    TrainPosition start;
    start.seed = options.seed;
    auto executor = std::make_unique<TrainingExecutor>(ctx, start);
    PipelineOptions po;
    for (int64_t e = 0; e < options.epochs; ++e) {
      for (int64_t k = 0; k < samplers.train->num_superbatches(); ++k) po.schedule.emplace_back(e, k);
    }
    po.runtime_dir = MakeTempDir("executor_runtime");
    auto pipeline = SuperbatchPipeline::Start(TrainingStages(*samplers.train, *planner, data->gatherer()), po);
    *status = executor->Run(*pipeline);
    const Status stopped = pipeline->Stop();
    if (status->ok()) *status = stopped;
    return executor;
  }
};

void OpenRig(const std::string& dir, bool with_model, ExecutorRig* rig) {
  rig->options = seer::testing::SmallRun(dir);
  rig->options.epochs = 2;
  rig->data = seer::testing::OpenDataPath(rig->options);
  ASSERT_TRUE(rig->data);
  auto train = rig->data->dataset().LoadSplit("train");
  ASSERT_TRUE(train.ok());
  rig->train = std::move(train).value();
  auto labels = LabelTable::Load(rig->data->dataset(), rig->train);
  ASSERT_TRUE(labels.ok());
  rig->labels = std::move(labels).value();
  rig->samplers.train = seer::testing::MakeSampler(*rig->data, rig->train, rig->options, /*shuffle=*/true);
  ASSERT_TRUE(rig->samplers.train);
  CachePolicySpec spec;
  spec.kind = PolicyKind::kNone;
  auto planner = MakeSuperbatchCachePlanner(spec, rig->data->dataset(), *rig->samplers.train);
  ASSERT_TRUE(planner.ok());
  rig->planner.emplace(std::move(planner).value());
  if (with_model) rig->model = seer::testing::SmallModel(rig->data->manifest(), rig->options.seed);
  auto reporter = EpochReporter::Open({"", /*quiet=*/true, /*show_progress=*/false, 10}, RunDescription{});
  ASSERT_TRUE(reporter.ok());
  rig->reporter = std::move(reporter).value();
}

TEST(TrainingExecutorTest, EveryBatchAndSeedIsAccountedOncePerEpoch) {
  const std::string dir = MakeSyntheticGraph("executor_epochs", 2000, FeatureDtype::kFloat32);
  ExecutorRig rig;
  ASSERT_NO_FATAL_FAILURE(OpenRig(dir, /*with_model=*/false, &rig));
  int64_t hooked = 0;
  rig.options.batch_hook = [&](const BatchTrace&, const float*, int64_t, int64_t) { ++hooked; };
  auto checkpointer = Checkpointer::Open({});
  ASSERT_TRUE(checkpointer.ok());
  Status status;
  auto executor = rig.Run(*checkpointer, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(executor->stopped_early());
  ASSERT_EQ(executor->epochs().size(), 2u);
  for (int64_t e = 0; e < 2; ++e) {
    const EpochReport& r = executor->epochs()[static_cast<size_t>(e)];
    EXPECT_EQ(r.epoch, e);
    EXPECT_EQ(r.batches, rig.samplers.train->num_batches());
    EXPECT_EQ(r.seeds, static_cast<int64_t>(rig.train.size()));
    EXPECT_EQ(r.gather.hits, 0);  // no cache policy
    EXPECT_GT(r.gather.rows, r.seeds);
  }
  EXPECT_EQ(hooked, 2 * rig.samplers.train->num_batches());
  EXPECT_EQ(executor->position().epoch, 2);
  EXPECT_EQ(executor->position().next_superbatch, 0);
}

TEST(TrainingExecutorTest, StopAfterCheckpointsThePositionItStoppedAt) {
  const std::string dir = MakeSyntheticGraph("executor_stop", 2000, FeatureDtype::kFloat32);
  ExecutorRig rig;
  ASSERT_NO_FATAL_FAILURE(OpenRig(dir, /*with_model=*/true, &rig));
  ASSERT_GE(rig.samplers.train->num_superbatches(), 3);  // the stop falls inside epoch 0
  rig.options.stop_after_superbatches = 2;
  const std::string ckpt = MakeTempDir("executor_ckpt");
  auto checkpointer = Checkpointer::Open({ckpt, 0, false, false});
  ASSERT_TRUE(checkpointer.ok());
  Status status;
  auto executor = rig.Run(*checkpointer, &status);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(executor->stopped_early());
  EXPECT_TRUE(executor->epochs().empty());
  const TrainPosition& at = executor->position();
  EXPECT_EQ(at.epoch, 0);
  EXPECT_EQ(at.next_superbatch, 2);
  EXPECT_EQ(at.global_step, 2 * rig.options.superbatch);  // one step per batch

  auto resuming = Checkpointer::Open({ckpt, 0, /*resume=*/true, false});
  ASSERT_TRUE(resuming.ok()) << resuming.status().ToString();
  auto back = resuming->Resume(rig.model.get(), rig.options.seed);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->epoch, at.epoch);
  EXPECT_EQ(back->next_superbatch, at.next_superbatch);
  EXPECT_EQ(back->global_step, at.global_step);
}

}  // namespace
}  // namespace seer
