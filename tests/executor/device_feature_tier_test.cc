// The device feature tier in training (executor/device_feature_tier.h). On a CPU build the
// "device" is a CPU tensor, so the whole path — device plan, host plan on the device
// misses, gathering only those, assembly, device changesets — runs here; the CUDA test
// runs the same tier on a GPU when one is present and skips otherwise.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "executor/device_rows_internal.h"
#include "executor/device_feature_tier.h"
#include "executor/train_loop.h"
#include "kernels/device.h"
#include "training_fixture.h"

namespace seer {
namespace {

using testing::MakeSyntheticGraph;
using testing::ReadAllFeatures;
using testing::SmallRun;

struct RunResult {
  std::map<std::pair<int64_t, int64_t>, double> losses;
  int64_t rows = 0, h2d_bytes = 0, device_hits = 0, host_rows = 0;
  int64_t wrong_rows = 0;
};

RunResult Train(TrainOptions o, const std::vector<float>& features, int64_t dim) {
  RunResult out;
  o.step_hook = [&](int64_t epoch, int64_t batch, double loss) { out.losses[{epoch, batch}] = loss; };
  // Every row the model receives against features.bin.
  o.batch_hook = [&](const BatchTrace& batch, const float* rows, int64_t n, int64_t d) {
    for (int64_t r = 0; r < n; ++r) {
      const int64_t v = batch.node_ids[static_cast<size_t>(r)];
      for (int64_t k = 0; k < d; ++k) {
        if (rows[r * d + k] != features[static_cast<size_t>(v * dim + k)]) {
          ++out.wrong_rows;
          break;
        }
      }
    }
    out.rows += n;
  };
  auto summary = RunTraining(o);
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  if (!summary.ok()) return out;
  for (const EpochReport& e : summary->epochs) {
    out.h2d_bytes += e.gather.h2d_bytes;
    out.device_hits += e.gather.device_hits;
    out.host_rows += e.gather.rows;
  }
  return out;
}

TEST(DeviceTierTest, TrainingWithDeviceCacheKeepsLossesAndTransfersOnlyMisses) {
  const int64_t nodes = 1500, dim = 24;
  const std::string dir = MakeSyntheticGraph("device_tier_train", nodes, FeatureDtype::kFloat16, dim);
  const std::vector<float> features = ReadAllFeatures(dir, nodes, dim, FeatureDtype::kFloat16);
  TrainOptions o = SmallRun(dir);
  o.epochs = 2;
  o.eval_every = 0;
  o.memory_budget_bytes = int64_t{128} << 20;
  o.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
  const RunResult off = Train(o, features, dim);
  o.device_cache_bytes = 150 * dim * 4;  // 150 rows of float32
  const RunResult on = Train(o, features, dim);
  ASSERT_FALSE(off.losses.empty());
  EXPECT_EQ(on.losses, off.losses);  // bit-identical: the same rows reach the model
  EXPECT_EQ(off.wrong_rows, 0);
  EXPECT_EQ(on.wrong_rows, 0);
  EXPECT_EQ(on.rows, off.rows);
  const int64_t row_bytes = dim * 4;
  EXPECT_EQ(off.h2d_bytes, off.rows * row_bytes);
  EXPECT_EQ(off.device_hits, 0);
  EXPECT_GT(on.device_hits, 0);
  EXPECT_EQ(on.h2d_bytes, off.h2d_bytes - on.device_hits * row_bytes);
  // The host tier only saw the device misses.
  EXPECT_EQ(on.host_rows, on.rows - on.device_hits);
  EXPECT_EQ(off.host_rows, off.rows);
}

TEST(DeviceTierTest, DeviceCacheSizes) {
  std::string why;
  EXPECT_EQ(DeviceCacheRows(0, 16, true, 1 << 20, &why), 0);
  EXPECT_EQ(DeviceCacheRows(64 * 100 + 63, 16, false, 0, &why), 100);
  EXPECT_NE(why.find("CPU"), std::string::npos) << why;
  EXPECT_EQ(DeviceCacheRows(-1, 16, false, 1 << 20, &why), 0);
  EXPECT_NE(why.find("auto = 0"), std::string::npos) << why;
  EXPECT_EQ(DeviceCacheRows(-1, 16, true, 6400, &why), 100);
}

// The CUDA implementation (tensor on the GPU, pinned staging, side-stream copy) against
// the CPU one on the same plan: the assembled rows must be identical.
TEST(DeviceTierTest, CudaAssemblyMatchesCpu) {
  if (kernels::CudaDeviceCount() == 0 || !torch::cuda::is_available()) {
    GTEST_SKIP() << "no CUDA device (or libtorch without CUDA)";
  }
  const int64_t nodes = 1200, dim = 20;
  const std::string dir = MakeSyntheticGraph("device_tier_cuda", nodes, FeatureDtype::kFloat32, dim);
  const std::vector<float> features = ReadAllFeatures(dir, nodes, dim, FeatureDtype::kFloat32);
  TrainOptions o = SmallRun(dir);
  o.no_train = true;
  o.memory_budget_bytes = int64_t{128} << 20;
  o.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
  o.device_cache_bytes = 100 * dim * 4;
  o.use_cuda = true;
  const RunResult gpu = Train(o, features, dim);
  o.use_cuda = false;
  const RunResult cpu = Train(o, features, dim);
  EXPECT_EQ(gpu.wrong_rows, 0);
  EXPECT_EQ(gpu.device_hits, cpu.device_hits);
  EXPECT_EQ(gpu.h2d_bytes, cpu.h2d_bytes);
}

}  // namespace
}  // namespace seer
