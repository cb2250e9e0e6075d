// Whole training runs (executor/train_loop.h) on generated graphs: resume reproduces the
// uninterrupted losses bit for bit, GraphSAGE beats the features-only baseline, the CUDA
// paths follow the CPU, and errors name the problem (other batching flags on resume, exceptions on the executor
// thread, non-finite features).
#include "executor/train_loop.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "kernels/device.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
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
  const std::string metrics = ckpt + "/m.jsonl";
  b.metrics_path = metrics;
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
  c.metrics_path = metrics;
  // Another --superbatch or --batch-size is refused naming both values (resuming with
  // them hung, or silently skipped batches, before).
  for (auto [superbatch, batch_size, expected] :
       {std::tuple{int64_t{2}, int64_t{64}, "--superbatch: checkpoint 4, this run 2"},
        std::tuple{int64_t{4}, int64_t{100}, "--batch-size: checkpoint 64, this run 100"}}) {
    TrainOptions other = c;
    other.superbatch = superbatch;
    other.batch_size = batch_size;
    other.step_hook = nullptr;
    other.metrics_path.clear();
    auto refused = RunTraining(other);
    ASSERT_FALSE(refused.ok()) << expected;
    EXPECT_NE(refused.status().message().find(expected), std::string::npos) << refused.status().message();
  }
  auto rc = RunTraining(c);
  ASSERT_TRUE(rc.ok()) << rc.status().message();
  // The resumed epoch reports over all its batches (its first superbatch ran before the
  // stop): the same loss, accuracy and counts as the uninterrupted run's epoch.
  ASSERT_EQ(rc->epochs.size(), 1u);
  ASSERT_EQ(ra->epochs.size(), 2u);
  EXPECT_EQ(rc->epochs[0].batches, ra->epochs[1].batches);
  EXPECT_EQ(rc->epochs[0].seeds, ra->epochs[1].seeds);
  EXPECT_DOUBLE_EQ(rc->epochs[0].train_loss, ra->epochs[1].train_loss);
  EXPECT_DOUBLE_EQ(rc->epochs[0].train_accuracy, ra->epochs[1].train_accuracy);
  // --metrics appends on --resume: the stopped run's epoch 1 stays; epochs count from 1.
  std::vector<int64_t> epoch_numbers;
  std::istringstream lines(ReadWholeFile(metrics).value());
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line);
    if (j["type"] == "epoch") epoch_numbers.push_back(j["epoch"].get<int64_t>());
  }
  EXPECT_EQ(epoch_numbers, (std::vector<int64_t>{1, 2}));
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

// An exception on the executor thread (a training step, evaluation, a checkpoint write,
// bad_alloc; injected here through the step and batch hooks) ends the run with a
// one-line Status; it escaped RunTraining before.
TEST(TrainLoopTest, ExceptionsOnTheExecutorThreadBecomeAStatus) {
  const std::string dir = MakeSyntheticGraph("throws", 600, FeatureDtype::kFloat32);
  TrainOptions o = SmallRun(dir);
  o.step_hook = [](int64_t, int64_t, double) {
    throw std::runtime_error("injected failure\nException raised from somewhere\nframe #0");
  };
  Result<TrainSummary> r = Status(StatusCode::kInternal, "not run");
  EXPECT_NO_THROW(r = RunTraining(o));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("executor stage failed: injected failure"), std::string::npos)
      << r.status().message();
  o = SmallRun(dir);
  o.batch_hook = [](const BatchTrace&, const float*, int64_t, int64_t) { throw std::bad_alloc(); };
  EXPECT_NO_THROW(r = RunTraining(o));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().message();
}

// A NaN in features.bin is refused when its row is read, naming the file, the node and
// the offset (training ran on and logged null losses before).
TEST(TrainLoopTest, NonFiniteFeatureRowIsRefusedNamingNodeAndOffset) {
  for (FeatureDtype dtype : {FeatureDtype::kFloat32, FeatureDtype::kFloat16, FeatureDtype::kBFloat16}) {
    const std::string dir = MakeSyntheticGraph("nan", 600, dtype);
    auto dataset = Dataset::Open(dir);
    ASSERT_TRUE(dataset.ok());
    const std::vector<int64_t> train = dataset->LoadSplit("train").value();
    ASSERT_FALSE(train.empty());
    const int64_t node = train[train.size() / 2];
    const int64_t row_bytes = dataset->manifest().feature_row_bytes();
    const int64_t value_bytes = row_bytes / dataset->manifest().feature_dim;
    const int64_t row_offset = node * row_bytes;
    {
      FILE* f = std::fopen((dir + "/features.bin").c_str(), "r+b");
      ASSERT_NE(f, nullptr);
      std::fseek(f, row_offset + 3 * value_bytes, SEEK_SET);
      if (dtype == FeatureDtype::kFloat32) {
        const float inf = -std::numeric_limits<float>::infinity();
        std::fwrite(&inf, 4, 1, f);
      } else {
        const uint16_t nan = dtype == FeatureDtype::kFloat16 ? 0x7e00 : 0x7fc0;
        std::fwrite(&nan, 2, 1, f);
      }
      std::fclose(f);
    }
    for (PolicyKind policy : {PolicyKind::kBelady, PolicyKind::kNone}) {
      TrainOptions o = SmallRun(dir);
      o.cache_policy = policy;
      auto r = RunTraining(o);
      ASSERT_FALSE(r.ok()) << PolicyKindName(policy);
      EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
      const std::string& m = r.status().message();
      EXPECT_NE(m.find("features.bin: node " + std::to_string(node)), std::string::npos) << m;
      EXPECT_NE(m.find("byte offset " + std::to_string(row_offset)), std::string::npos) << m;
      EXPECT_NE(m.find("column 3"), std::string::npos) << m;
      EXPECT_NE(m.find("non-finite"), std::string::npos) << m;
    }
  }
}

TEST(TrainLoopTest, ErrorsNameTheProblem) {
  const std::string dir = MakeSyntheticGraph("errors", 500, FeatureDtype::kFloat32);
  TrainOptions o = SmallRun(dir);
  o.memory_budget_bytes = 4096;
  o.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
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
