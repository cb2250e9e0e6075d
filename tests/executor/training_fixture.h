// Fixtures shared by the executor tests that run the data path or a whole training run:
// a generated graph in a temporary directory (removed after the test), the small
// TrainOptions every run starts from (CPU, page cache, quiet, 32 MiB budget), a DataPath
// and samplers built from those options, a small model, and the features.bin oracle.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "executor/data_path.h"
#include "executor/model_runner.h"
#include "executor/train_options.h"
#include "inspector/superbatch_driver.h"
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
  o.runtime_bytes = 0;  // a data-path budget: this test process is no runtime to measure
  o.quiet = true;
  o.show_progress = false;
  return o;
}

// `o.dataset_dir`'s DataPath with `o`'s budget, batch size and fan-outs (page cache, no
// pilot batches; `pin`: the feature cache's slots through the pinned allocator);
// null (and a test failure) when it does not open.
inline std::unique_ptr<DataPath> OpenDataPath(const TrainOptions& o, bool pin = false) {
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  request.batch_size = o.batch_size;
  request.fanouts = o.fanouts;
  DataIoOptions io;
  io.direct = false;
  io.quiet = true;
  io.pin_feature_cache = pin;
  auto data = DataPath::Open(o.dataset_dir, request, io, /*pilot=*/nullptr);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? std::move(data).value() : nullptr;
}

// A sampler over `seeds` with `o`'s batch size, superbatch, threads, fan-outs and seed
// (shuffle off for evaluation); empty (and a test failure) when it cannot be created.
inline std::optional<SuperbatchSampler> MakeSampler(const DataPath& data, const std::vector<int64_t>& seeds,
                                                    const TrainOptions& o, bool shuffle) {
  const SuperbatchOptions options =
      MakeSuperbatchOptions(o.batch_size, o.superbatch, o.num_threads, o.fanouts, o.seed, shuffle);
  auto sampler = SuperbatchSampler::Create(data.topology_view(), seeds, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  if (!sampler.ok()) return std::nullopt;
  return std::move(sampler).value();
}

// A freshly initialised 2-layer GraphSAGE (hidden 8) for `m`'s features and classes, on
// the CPU; the same `seed` gives the same weights.
inline std::unique_ptr<ModelRunner> SmallModel(const DatasetManifest& m, uint64_t seed) {
  ModelConfig config;
  config.in_dim = m.feature_dim;
  config.hidden = 8;
  config.num_classes = m.num_classes;
  config.num_layers = 2;
  return ModelRunner::Create(config, 0.01, seed, /*use_cuda=*/false);
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
