// Fixtures shared by the executor tests that run the data path or a whole training run:
// a generated graph in a temporary directory (removed after the test), the small
// TrainOptions every run starts from (CPU, page cache, quiet, 32 MiB budget) and the
// features.bin oracle.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "executor/train_options.h"
#include "storage/base/file_io.h"
#include "storage/dataset/float16.h"
#include "storage/prep/synthetic_graph.h"
#include "support/temp_dir.h"

namespace seer::testing {

// A synthetic dataset (6 classes, average degree 8, 30/10/10 % train/valid/test, seed 17)
// under a fresh temporary directory; returns the dataset directory.
inline std::string MakeSyntheticGraph(const std::string& name, int64_t nodes, FeatureDtype dtype,
                                      int64_t dim = 16) {
  const std::string dir = MakeTempDir(name) + "/g";
  SyntheticGraphConfig c;
  c.num_nodes = nodes;
  c.avg_degree = 8;
  c.feature_dim = dim;
  c.num_classes = 6;
  c.seed = 17;
  c.feature_dtype = dtype;
  c.train_fraction = 0.3;
  c.valid_fraction = 0.1;
  c.test_fraction = 0.1;
  auto s = GenerateSyntheticDataset(c, dir, true);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return dir;
}

// One quick epoch on `dir`: 2 layers of fan-out 5, batches of 64, superbatches of 4.
inline TrainOptions SmallRun(const std::string& dir) {
  TrainOptions o;
  o.dataset_dir = dir;
  o.hidden = 16;
  o.fanouts = {5, 5};
  o.batch_size = 64;
  o.superbatch = 4;
  o.epochs = 1;
  o.seed = 3;
  o.num_threads = 2;
  o.direct_io = false;
  o.use_cuda = false;
  o.memory_budget_bytes = 32 << 20;
  o.quiet = true;
  o.show_progress = false;
  return o;
}

// Independent oracle for the rows a run hands the model: features.bin read with plain
// file I/O, widened to float32 with float16.h; nodes x dim.
inline std::vector<float> ReadAllFeatures(const std::string& dir, int64_t nodes, int64_t dim, FeatureDtype dtype) {
  std::string bytes = ReadWholeFile(dir + "/features.bin").value();
  std::vector<float> out(static_cast<size_t>(nodes * dim));
  for (int64_t i = 0; i < nodes * dim; ++i) {
    if (dtype == FeatureDtype::kFloat32) {
      std::memcpy(&out[i], bytes.data() + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
  }
  return out;
}

}  // namespace seer::testing
