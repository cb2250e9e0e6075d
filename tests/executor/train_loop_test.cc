// Whole training runs (executor/train_loop.h) on generated graphs: resume reproduces the
// uninterrupted losses bit for bit, GraphSAGE beats the features-only baseline,
// prediction agrees with training's evaluation, the CUDA paths follow the CPU, and
// errors name the problem.
#include "executor/train_loop.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device.h"
#include "storage/base/file_io.h"
#include "storage/prep/npy.h"
#include "training_fixture.h"

namespace seer {
namespace {

using seer::testing::MakeSyntheticGraph;
using seer::testing::MakeTempDir;
using seer::testing::SmallRun;

TEST(TrainLoopTest, ResumeReproducesTheUninterruptedLosses) {
  const std::string dir = MakeSyntheticGraph("resume", 2000, FeatureDtype::kFloat32);
  const std::string ckpt = MakeTempDir("resume_ckpt");
  TrainOptions base = SmallRun(dir);
  base.epochs = 2;
  base.fcache_budget_bytes = 200 * 16 * 4;
  base.overlap = true;
  std::vector<std::pair<int64_t, double>> full, resumed;
  TrainOptions a = base;
  a.step_hook = [&](int64_t e, int64_t b, double loss) { full.push_back({e * 1000 + b, loss}); };
  auto ra = RunTraining(a);
  ASSERT_TRUE(ra.ok()) << ra.status().message();
  ASSERT_GE(full.size(), 10u);

  TrainOptions b = base;
  b.checkpoint_dir = ckpt;
  b.checkpoint_every = 1;
  b.overlap = false;  // the pipeline mode must not change the losses
  b.stop_after_superbatches = 4;  // 3 superbatches per epoch: stops inside epoch 1
  b.step_hook = [&](int64_t e, int64_t bi, double loss) { resumed.push_back({e * 1000 + bi, loss}); };
  auto rb = RunTraining(b);
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  EXPECT_TRUE(rb->stopped_early);
  const size_t first_part = resumed.size();
  ASSERT_LT(first_part, full.size());
  ASSERT_GT(first_part, full.size() / 2);  // the stop is inside the second epoch

  TrainOptions c = base;
  c.checkpoint_dir = ckpt;
  c.resume = true;
  c.step_hook = b.step_hook;
  auto rc = RunTraining(c);
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  ASSERT_EQ(resumed.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(resumed[i].first, full[i].first) << i;
    EXPECT_EQ(resumed[i].second, full[i].second) << "step " << i << " (resumed after " << first_part << ")";
  }
  EXPECT_EQ(rc->test_accuracy, ra->test_accuracy);

  // A damaged checkpoint is refused with the path in the message.
  {
    std::string bytes = ReadWholeFile(ckpt + "/checkpoint.ckpt").value();
    FILE* f = std::fopen((ckpt + "/checkpoint.ckpt").c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size() / 2, f);
    std::fclose(f);
    auto rd = RunTraining(c);
    ASSERT_FALSE(rd.ok());
    EXPECT_NE(rd.status().message().find("checkpoint.ckpt"), std::string::npos) << rd.status().message();
  }
}

TEST(TrainLoopTest, GraphSageBeatsFeaturesOnlyBaseline) {
  const std::string dir = MakeSyntheticGraph("accuracy", 4000, FeatureDtype::kFloat32, 24);
  auto run = [&](ModelKind kind) {
    TrainOptions o = SmallRun(dir);
    o.model = kind;
    o.hidden = 32;
    o.fanouts = {10, 10};
    o.epochs = 3;
    o.learning_rate = 0.01;
    o.dropout = 0.2;
    auto s = RunTraining(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? s->test_accuracy : -1.0;
  };
  const double sage = run(ModelKind::kSage);
  const double mlp = run(ModelKind::kMlp);
  std::printf("test accuracy: sage %.4f, mlp %.4f\n", sage, mlp);
  EXPECT_GT(sage, 0.75);
  EXPECT_GT(sage, mlp + 0.2);
}

TEST(TrainLoopTest, PredictionMatchesTrainingEvaluationPath) {
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

// CUDA path: the GPU planner's changesets drive the same cache to the same misses and
// rows as the CPU planner, and training on the device (pinned staging, async copies)
// follows the CPU losses closely.
TEST(TrainLoopTest, GpuPlannerAndCudaTrainingMatchTheCpu) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string dir = MakeSyntheticGraph("gpu", 3001, FeatureDtype::kFloat32, 8);
  auto data_run = [&](PlannerDevice device, std::vector<int64_t>* misses, uint64_t* digest) {
    TrainOptions o = SmallRun(dir);
    o.no_train = true;
    o.epochs = 2;
    o.planner = device;
    o.fcache_budget_bytes = 200 * 8 * 4;
    o.batch_hook = [&](const BatchTrace& b, const float* rows, int64_t n, int64_t dim) {
      for (int64_t i = 0; i < n * dim; ++i) {
        uint32_t bits;
        std::memcpy(&bits, rows + i, 4);
        *digest = (*digest ^ bits) * 0x100000001b3ULL;
      }
      (void)b;
    };
    auto s = RunTraining(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (const auto& e : s->epochs) misses->push_back(e.gather.misses);
  };
  std::vector<int64_t> cpu_misses, gpu_misses;
  uint64_t cpu_digest = 0, gpu_digest = 0;
  data_run(PlannerDevice::kCpu, &cpu_misses, &cpu_digest);
  data_run(PlannerDevice::kGpu, &gpu_misses, &gpu_digest);
  EXPECT_EQ(cpu_misses, gpu_misses);
  EXPECT_EQ(cpu_digest, gpu_digest);

  std::vector<double> cpu_losses, gpu_losses;
  for (bool cuda : {false, true}) {
    TrainOptions o = SmallRun(dir);
    o.use_cuda = cuda;
    o.dropout = 0;
    o.step_hook = [&](int64_t, int64_t, double loss) { (cuda ? gpu_losses : cpu_losses).push_back(loss); };
    auto s = RunTraining(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
  }
  ASSERT_EQ(cpu_losses.size(), gpu_losses.size());
  for (size_t i = 0; i < cpu_losses.size(); ++i) EXPECT_NEAR(cpu_losses[i], gpu_losses[i], 2e-3 * (1 + i));
}

TEST(TrainLoopTest, ErrorsNameTheProblem) {
  const std::string dir = MakeSyntheticGraph("errors", 500, FeatureDtype::kFloat32);
  TrainOptions o = SmallRun(dir);
  o.memory_budget_bytes = 4096;
  auto s = RunTraining(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  o = SmallRun(dir);
  o.resume = true;
  o.checkpoint_dir = MakeTempDir("errors_ckpt");
  s = RunTraining(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no checkpoint"), std::string::npos);
  o = SmallRun(MakeTempDir("errors_missing"));
  EXPECT_FALSE(RunTraining(o).ok());
}

}  // namespace
}  // namespace seer
