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

#include "storage/base/file_io.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSampler;
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
  auto sink = [&](const BatchTrace& batch, const int64_t* classes, const std::vector<float>&) {
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
                              [&](const BatchTrace& batch, const int64_t*, const std::vector<float>& embeddings) {
                                seeds_seen += batch.num_seeds;
                                EXPECT_EQ(static_cast<int64_t>(embeddings.size()),
                                          batch.num_seeds * s.model->embedding_dim());
                              });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->labeled, 0);
  EXPECT_EQ(result->accuracy, -1);
  EXPECT_EQ(seeds_seen, static_cast<int64_t>(s.seeds.size()));
}

}  // namespace
}  // namespace seer
