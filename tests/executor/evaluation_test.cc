// EvaluateSplit (executor/evaluation.h) on a generated graph with a freshly initialised
// (deterministic) model: every seed of the split is predicted exactly once, each batch's
// classes are the model's prediction on the rows of features.bin (read independently),
// and the accuracy is the count of those classes that match labels.bin over the labeled
// seeds — nodes whose label was not loaded count as unlabeled.
#include "executor/evaluation.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/train_loop.h"
#include "storage/base/file_io.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSampler;
using seer::testing::MakeTempDir;
using seer::testing::MakeSyntheticGraph;
using seer::testing::OpenDataPath;
using seer::testing::ReadAllFeatures;
using seer::testing::SmallRun;

constexpr int64_t kNodes = 1501, kDim = 11;

struct EvalSetup {
  TrainOptions options;
  std::unique_ptr<DataPath> data;
  std::vector<int64_t> seeds;  // the test split
  std::unique_ptr<ModelRunner> model;
  std::optional<SuperbatchSampler> sampler;  // over `seeds`, no shuffle
};

EvalSetup OpenSetup(const std::string& dir) {
  EvalSetup s;
  s.options = SmallRun(dir);
  s.data = OpenDataPath(s.options);
  if (!s.data) return s;
  auto seeds = s.data->dataset().LoadSplit("test");
  EXPECT_TRUE(seeds.ok()) << seeds.status().ToString();
  s.seeds = std::move(seeds).value();
  s.model = seer::testing::SmallModel(s.data->manifest(), /*seed=*/5);
  s.sampler = MakeSampler(*s.data, s.seeds, s.options, /*shuffle=*/false);
  return s;
}

std::vector<int32_t> ReadLabelsBin(const std::string& dir) {
  const std::string bytes = ReadWholeFile(dir + "/labels.bin").value();
  std::vector<int32_t> labels(bytes.size() / 4);
  std::memcpy(labels.data(), bytes.data(), labels.size() * 4);
  return labels;
}

TEST(EvaluationTest, AccuracyIsTheModelsPredictionsCountedAgainstLabelsBin) {
  const std::string dir = MakeSyntheticGraph("eval", kNodes, FeatureDtype::kFloat16, kDim);
  EvalSetup s = OpenSetup(dir);
  ASSERT_TRUE(s.data && s.model && s.sampler);
  ASSERT_GT(s.seeds.size(), 100u);
  const std::vector<float> features = ReadAllFeatures(dir, kNodes, kDim, FeatureDtype::kFloat16);
  const std::vector<int32_t> file_labels = ReadLabelsBin(dir);
  // Only the first half of the seeds' labels are loaded: the rest count as unlabeled.
  const std::vector<int64_t> half(s.seeds.begin(), s.seeds.begin() + static_cast<int64_t>(s.seeds.size() / 2));
  auto labels = LabelTable::Load(s.data->dataset(), half);
  ASSERT_TRUE(labels.ok()) << labels.status().ToString();

  std::map<int64_t, int64_t> predicted;  // seed -> class
  int64_t batch_rows = 0, mismatched_batches = 0;
  auto sink = [&](const BatchTrace& batch, const int64_t* classes, const std::vector<float>&, const std::vector<float>&) {
    std::vector<float> rows;
    for (int64_t v : batch.node_ids) {
      rows.insert(rows.end(), features.begin() + v * kDim, features.begin() + (v + 1) * kDim);
    }
    std::vector<int64_t> expected(static_cast<size_t>(batch.num_seeds));
    s.model->Predict(batch, rows.data(), expected.data(), nullptr);
    mismatched_batches += expected != std::vector<int64_t>(classes, classes + batch.num_seeds);
    for (int64_t i = 0; i < batch.num_seeds; ++i) {
      EXPECT_TRUE(predicted.emplace(batch.node_ids[static_cast<size_t>(i)], classes[i]).second);
    }
    batch_rows += static_cast<int64_t>(batch.node_ids.size());
  };
  GatherStats stats;
  auto result = EvaluateSplit(*s.sampler, s.data->gatherer(), *s.model, *labels, false, sink, &stats);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(mismatched_batches, 0);
  EXPECT_EQ(stats.rows, batch_rows);

  ASSERT_EQ(predicted.size(), s.seeds.size());
  int64_t correct = 0, labeled = 0;
  for (int64_t v : half) {
    const int32_t label = file_labels[static_cast<size_t>(v)];
    if (label < 0) continue;
    ++labeled;
    correct += predicted.at(v) == label;
  }
  ASSERT_GT(labeled, 0);
  EXPECT_EQ(result->labeled, labeled);
  EXPECT_DOUBLE_EQ(result->accuracy, static_cast<double>(correct) / labeled);
  std::printf("accuracy of the untrained model on half the test split: %.4f (%lld labeled)\n", result->accuracy,
              static_cast<long long>(labeled));
}

TEST(EvaluationTest, NoLabeledSeedMeansNoAccuracy) {
  const std::string dir = MakeSyntheticGraph("eval_unlabeled", kNodes, FeatureDtype::kFloat32, kDim);
  EvalSetup s = OpenSetup(dir);
  ASSERT_TRUE(s.data && s.model && s.sampler);
  int64_t seeds_seen = 0;
  auto result = EvaluateSplit(*s.sampler, s.data->gatherer(), *s.model, LabelTable(), /*want_embeddings=*/true,
                              [&](const BatchTrace& batch, const int64_t*, const std::vector<float>& embeddings, const std::vector<float>&) {
                                seeds_seen += batch.num_seeds;
                                EXPECT_EQ(static_cast<int64_t>(embeddings.size()),
                                          batch.num_seeds * s.model->embedding_dim());
                              });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->labeled, 0);
  EXPECT_EQ(result->accuracy, -1);
  EXPECT_EQ(seeds_seen, static_cast<int64_t>(s.seeds.size()));
}

// Evaluation that costs what it should (issue 29): by default every epoch validates and
// none tests; the test split is evaluated once, after training, on the best-validation
// weights. The oracle is the old behaviour (--test-every-epoch): the same run tests at
// every epoch, so the final test accuracy must be exactly the best epoch's. Training does
// not depend on the evaluation schedule (same losses), --eval-every 0 validates nothing
// and tests the final weights, --eval-every 2 validates epochs 2 and the last, and a
// resumed run keeps the best-so-far validation (accuracy, epoch and weights) from its
// checkpoint.
TEST(EvaluationScheduleTest, TestOnceOnTheBestValidationModel) {
  const std::string dir = MakeSyntheticGraph("eval_schedule", kNodes, FeatureDtype::kFloat32, kDim);
  TrainOptions base = SmallRun(dir);
  base.epochs = 4;
  base.learning_rate = 0.1;  // a rate whose validation accuracy peaks before the last epoch
  auto run = [&](TrainOptions o, std::vector<double>* losses) {
    o.step_hook = [losses](int64_t, int64_t, double loss) { losses->push_back(loss); };
    auto summary = RunTraining(o);
    EXPECT_TRUE(summary.ok()) << summary.status().message();
    return summary.ok() ? std::move(summary).value() : TrainSummary();
  };
  std::vector<double> default_losses, every_losses, never_losses, second_losses;
  const TrainSummary by_default = run(base, &default_losses);
  TrainOptions every = base;
  every.test_every_epoch = true;
  const TrainSummary each = run(every, &every_losses);
  ASSERT_EQ(by_default.epochs.size(), 4u);
  ASSERT_EQ(each.epochs.size(), 4u);
  EXPECT_EQ(default_losses, every_losses) << "evaluation must not change training";
  for (size_t e = 0; e < 4; ++e) {
    EXPECT_GE(by_default.epochs[e].valid_accuracy, 0) << e;
    EXPECT_EQ(by_default.epochs[e].test_accuracy, -1) << "no per-epoch test by default, epoch " << e;
    EXPECT_EQ(by_default.epochs[e].valid_accuracy, each.epochs[e].valid_accuracy) << e;
    EXPECT_GE(each.epochs[e].test_accuracy, 0) << e;
  }
  ASSERT_GE(by_default.best_epoch, 0);
  // Measured: best epoch 2 of 4 (valid 0.8867; test 0.8815 there, 0.8593 after epoch 4),
  // so "the best model" and "the last model" are told apart.
  EXPECT_LT(by_default.best_epoch, 3) << "the oracle needs a best epoch before the last";
  EXPECT_EQ(by_default.best_epoch, each.best_epoch);
  EXPECT_DOUBLE_EQ(by_default.best_valid_accuracy, by_default.epochs[by_default.best_epoch].valid_accuracy);
  // The best epoch is the first with the highest validation accuracy.
  for (int64_t e = 0; e < 4; ++e) {
    if (e < by_default.best_epoch) EXPECT_LT(by_default.epochs[e].valid_accuracy, by_default.best_valid_accuracy);
    EXPECT_LE(by_default.epochs[e].valid_accuracy, by_default.best_valid_accuracy);
  }
  EXPECT_GE(by_default.test_accuracy, 0);
  EXPECT_DOUBLE_EQ(by_default.test_accuracy, each.epochs[each.best_epoch].test_accuracy)
      << "the final test accuracy is the best-validation epoch's model's";
  EXPECT_DOUBLE_EQ(by_default.test_accuracy, each.test_accuracy);
  std::printf("best epoch %lld: valid %.4f, test %.4f (last epoch's weights: test %.4f)\n",
              static_cast<long long>(by_default.best_epoch + 1), by_default.best_valid_accuracy,
              by_default.test_accuracy, each.epochs.back().test_accuracy);

  TrainOptions never = base;
  never.eval_every = 0;
  const TrainSummary unvalidated = run(never, &never_losses);
  EXPECT_EQ(never_losses, default_losses);
  for (const EpochReport& r : unvalidated.epochs) EXPECT_EQ(r.valid_accuracy, -1);
  EXPECT_EQ(unvalidated.best_epoch, -1);
  EXPECT_DOUBLE_EQ(unvalidated.test_accuracy, each.epochs.back().test_accuracy) << "no validation: the final weights";

  TrainOptions second = base;
  second.eval_every = 3;
  const TrainSummary every_third = run(second, &second_losses);
  ASSERT_EQ(every_third.epochs.size(), 4u);
  EXPECT_EQ(every_third.epochs[0].valid_accuracy, -1);
  EXPECT_EQ(every_third.epochs[1].valid_accuracy, -1);
  EXPECT_EQ(every_third.epochs[2].valid_accuracy, by_default.epochs[2].valid_accuracy);
  EXPECT_EQ(every_third.epochs[3].valid_accuracy, by_default.epochs[3].valid_accuracy) << "the last epoch validates";

  // Resume after epoch 2 of 4: the checkpoint carries the best validation so far.
  const std::string ckpt = MakeTempDir("eval_schedule_ckpt");
  TrainOptions first_half = base;
  first_half.checkpoint_dir = ckpt;
  first_half.stop_after_superbatches = 2 * ((by_default.batches_per_epoch + base.superbatch - 1) / base.superbatch);
  std::vector<double> resumed_losses;
  const TrainSummary stopped = run(first_half, &resumed_losses);
  ASSERT_TRUE(stopped.stopped_early);
  ASSERT_EQ(stopped.epochs.size(), 2u);
  TrainOptions second_half = base;
  second_half.checkpoint_dir = ckpt;
  second_half.resume = true;
  const TrainSummary resumed = run(second_half, &resumed_losses);
  EXPECT_EQ(resumed_losses, default_losses);
  EXPECT_EQ(resumed.best_epoch, by_default.best_epoch);
  EXPECT_DOUBLE_EQ(resumed.best_valid_accuracy, by_default.best_valid_accuracy);
  EXPECT_DOUBLE_EQ(resumed.test_accuracy, by_default.test_accuracy);
}

}  // namespace
}  // namespace seer
