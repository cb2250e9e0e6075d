// seer predict's run (executor/prediction.h) on a model trained here: the accuracy on the
// test split is the one training reported (same sampler, seed and best model), repeated
// and reordered ids get the same answers, an id outside the graph is refused, and the
// .npy outputs round-trip.
#include "executor/prediction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/train_loop.h"
#include "storage/base/file_io.h"
#include "storage/prep/npy.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::MakeTempDir;
using seer::testing::SmallRun;

TEST(PredictionTest, PredictionMatchesTrainingEvaluationPath) {
  const std::string dir = MakeSyntheticGraph("predict", 2000, FeatureDtype::kFloat16);
  const std::string out = MakeTempDir("predict_out");
  TrainOptions o = SmallRun(dir);
  o.epochs = 2;
  o.learning_rate = 0.01;
  o.save_model_path = out + "/model.pt";
  auto s = RunTraining(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  PredictOptions p;
  p.dataset_dir = dir;
  p.model_path = o.save_model_path;
  p.fanouts = o.fanouts;
  p.batch_size = o.batch_size;
  p.superbatch = o.superbatch;
  p.seed = o.seed;
  p.direct_io = false;
  p.use_cuda = false;
  p.memory_budget_bytes = 32 << 20;
  p.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
  p.want_embeddings = true;
  p.show_progress = false;
  auto r = RunPrediction(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Same sampler, same seed, same best model: the accuracy on the test split is the one
  // training reported.
  EXPECT_DOUBLE_EQ(r->accuracy, s->test_accuracy);
  EXPECT_EQ(r->embeddings.size(), r->nodes.size() * 16);
  // Duplicated and reordered node ids get the same answers as in the full run.
  PredictOptions q = p;
  q.nodes = {r->nodes[3], r->nodes[0], r->nodes[3]};
  auto r2 = RunPrediction(q);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->classes.size(), 3u);
  EXPECT_EQ(r2->classes[0], r2->classes[2]);
  q.nodes = {2000};
  EXPECT_EQ(RunPrediction(q).status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(WriteNpy(out + "/ids.npy", "<i8", {static_cast<int64_t>(r->nodes.size())}, r->nodes.data()).ok());
  auto ids_file = NpyFile::Open(out + "/ids.npy");
  ASSERT_TRUE(ids_file.ok());
  std::vector<int64_t> ids(r->nodes.size());
  ASSERT_TRUE(ids_file->ReadAsInt64(0, static_cast<int64_t>(ids.size()), ids.data()).ok());
  EXPECT_EQ(ids, r->nodes);
  ASSERT_TRUE(WriteNpy(out + "/emb.npy", "<f4", {static_cast<int64_t>(r->nodes.size()), 16}, r->embeddings.data()).ok());
  const std::string npy = ReadWholeFile(out + "/emb.npy").value();
  EXPECT_EQ(npy.size() % 16, 0u);  // header padded to 64, floats after
  EXPECT_NE(npy.find("'shape': (" + std::to_string(r->nodes.size()) + ", 16)"), std::string::npos);
}

}  // namespace
}  // namespace seer
