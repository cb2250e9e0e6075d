// The relational models (R-GCN, R-SAGE, R-GAT of executor/model_runner.h) on hand-made
// typed batches: the forward pass against a plain-loop re-implementation from the model
// file's tensors; learning what only the relation of an edge tells (which the
// homogeneous GraphSAGE cannot); checkpoints and model files; the config JSON; the memory
// estimate against what libtorch allocates; and the refusals.
#include "executor/model_runner.h"

#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "executor/memory_budget.h"
#include "kernels/device.h"
#include "storage/base/file_io.h"
#include "support/temp_dir.h"

namespace seer {
namespace {

using seer::testing::MakeTempDir;
using TensorDict = c10::impl::GenericDict;

constexpr ModelKind kRelationalKinds[] = {ModelKind::kRgcn, ModelKind::kRsage, ModelKind::kRgat};

// Three node types: paper (0, the target: 4 features), author (1: 3 features, padded to
// 4) and institute (2: featureless, zero rows); global ids paper 0-4, author 5-8,
// institute 9-10. Relations: 0 paper->paper (cites), 1 author->paper (writes),
// 2 paper->author (written_by), 3 institute->author (employs).
ModelConfig TypedConfig(ModelKind kind) {
  ModelConfig c;
  c.kind = kind;
  c.in_dim = 4;
  c.hidden = 8;
  c.num_classes = 3;
  c.num_layers = 2;
  c.dropout = 0;
  c.heads = 2;
  c.node_type_offsets = {0, 5, 9, 11};
  c.relation_types = {{0, 0}, {1, 0}, {0, 1}, {2, 1}};
  c.target_type = 0;
  return c;
}

struct TypedBatch {
  BatchTrace trace;
  std::vector<float> rows;
  std::vector<int32_t> labels;
};

// A block from (dst, relation, src) edges listed by dst, then relation (as the typed
// sampler writes them).
LayerBlock MakeBlock(int64_t num_dst, int64_t num_src, const std::vector<std::array<int, 3>>& edges) {
  LayerBlock b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.row_ptr.assign(static_cast<size_t>(num_dst + 1), 0);
  for (const auto& [d, r, s] : edges) {
    b.col_idx.push_back(s);
    b.edge_rel.push_back(static_cast<uint8_t>(r));
    ++b.row_ptr[static_cast<size_t>(d + 1)];
  }
  for (size_t d = 1; d < b.row_ptr.size(); ++d) b.row_ptr[d] += b.row_ptr[d - 1];
  return b;
}

// Two blocks over TypedConfig's graph; several destinations lack neighbours in some
// relation, one paper has none at all in each block.
TypedBatch HandMadeBatch() {
  TypedBatch b;
  b.trace.num_seeds = 3;
  // local id:       0  1  2  3  4  5  6  7  8  9
  // node type:      P  P  P  A  P  A  A  I  P  I
  b.trace.node_ids = {2, 0, 4, 6, 1, 8, 5, 9, 3, 10};
  b.trace.blocks.push_back(MakeBlock(7, 10,
                                     {{0, 0, 1}, {0, 0, 8}, {0, 1, 3},  // paper: cites 2, written 1
                                      {1, 0, 2},                        // paper: cites only
                                      {2, 1, 5}, {2, 1, 6},             // paper: written only
                                      {3, 2, 0}, {3, 2, 4}, {3, 3, 7},  // author: both relations
                                      // 4: a paper without neighbours
                                      {5, 3, 7}, {5, 3, 9},  // author: employs only
                                      {6, 2, 8}}));          // author: written_by only
  b.trace.blocks.push_back(MakeBlock(3, 7,
                                     {{0, 0, 4}, {0, 0, 1}, {0, 1, 3}, {0, 1, 5},
                                      {1, 1, 6}}));  // 2: a seed without neighbours
  const int type_of_local[] = {0, 0, 0, 1, 0, 1, 1, 2, 0, 2};
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal;
  for (int v = 0; v < 10; ++v) {
    const int dims = type_of_local[v] == 0 ? 4 : type_of_local[v] == 1 ? 3 : 0;
    for (int k = 0; k < 4; ++k) b.rows.push_back(k < dims ? normal(rng) : 0.f);
  }
  b.labels = {0, 2, 1};
  return b;
}

TensorDict ReadModelDict(const std::string& path) {
  const std::string bytes = ReadWholeFile(path).value();
  return torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end())).toGenericDict();
}

// ---- the forward pass in plain loops ---------------------------------------------------

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

// dict[key] (2-D, or slice `index` of a 3-D tensor; a 1-D tensor is one row).
Matrix Weight(const TensorDict& dict, const std::string& key, int64_t index = -1) {
  torch::Tensor t = dict.at(key).toTensor();
  if (index >= 0) t = t.select(0, index);
  if (t.dim() == 1) t = t.unsqueeze(0);
  t = t.to(torch::kFloat64).contiguous();
  Matrix m(t.size(0), t.size(1));
  std::memcpy(m.v.data(), t.data_ptr<double>(), sizeof(double) * m.v.size());
  return m;
}

// out[o] += W[o] . x   (W [out, in], x one row of a matrix)
void AddProduct(const Matrix& w, const Matrix& x, int64_t row, std::vector<double>& out) {
  for (int64_t o = 0; o < w.rows; ++o) {
    for (int64_t i = 0; i < w.cols; ++i) out[static_cast<size_t>(o)] += w.at(o, i) * x.at(row, i);
  }
}

std::vector<double> ReferenceLogits(const TensorDict& dict, const ModelConfig& c, const BatchTrace& batch,
                                    const std::vector<float>& rows) {
  const int64_t n0 = batch.blocks[0].num_src;
  std::vector<int> type(static_cast<size_t>(n0));
  for (int64_t v = 0; v < n0; ++v) {
    const int64_t id = batch.node_ids[static_cast<size_t>(v)];
    for (int t = 0; t + 1 < static_cast<int>(c.node_type_offsets.size()); ++t) {
      if (id >= c.node_type_offsets[t] && id < c.node_type_offsets[t + 1]) type[static_cast<size_t>(v)] = t;
    }
  }
  const Matrix embedding = Weight(dict, "type_embedding");
  Matrix h(n0, c.in_dim);
  for (int64_t v = 0; v < n0; ++v) {
    for (int64_t k = 0; k < c.in_dim; ++k) {
      h.at(v, k) = rows[static_cast<size_t>(v * c.in_dim + k)] + embedding.at(type[static_cast<size_t>(v)], k);
    }
  }
  const int num_relations = static_cast<int>(c.relation_types.size());
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    const bool last = l + 1 == c.num_layers;
    const int64_t out_dim = last ? c.num_classes : c.hidden;
    const LayerBlock& blk = batch.blocks[static_cast<size_t>(l)];
    // S_r(d): d's sampled in-neighbours through relation r.
    auto neighbours = [&](int64_t d, int r) {
      std::vector<int32_t> list;
      for (int64_t e = blk.row_ptr[d]; e < blk.row_ptr[d + 1]; ++e) {
        if (blk.edge_rel[static_cast<size_t>(e)] == r) list.push_back(blk.col_idx[static_cast<size_t>(e)]);
      }
      return list;
    };
    auto mean = [&](const std::vector<int32_t>& list) {
      Matrix m(1, h.cols);
      for (int32_t s : list) {
        for (int64_t k = 0; k < h.cols; ++k) m.at(0, k) += h.at(s, k) / static_cast<double>(list.size());
      }
      return m;
    };
    Matrix out(blk.num_dst, out_dim);
    for (int64_t d = 0; d < blk.num_dst; ++d) {
      const int td = type[static_cast<size_t>(d)];
      std::vector<double> y(static_cast<size_t>(out_dim), 0.0);
      if (c.kind == ModelKind::kRgcn) {
        // root h_d + bias + sum_r W_r mean(S_r(d)), relations without neighbours add 0
        AddProduct(Weight(dict, p + "root_weight"), h, d, y);
        const Matrix bias = Weight(dict, p + "bias");
        for (int64_t o = 0; o < out_dim; ++o) y[static_cast<size_t>(o)] += bias.at(0, o);
        for (int r = 0; r < num_relations; ++r) {
          const auto list = neighbours(d, r);
          if (!list.empty()) AddProduct(Weight(dict, p + "rel_weight", r), mean(list), 0, y);
        }
      } else if (c.kind == ModelKind::kRsage) {
        // every relation into d's type: W_r^nbr mean(S_r(d)) + W_r^root h_d + b_r
        for (int r = 0; r < num_relations; ++r) {
          if (c.relation_types[static_cast<size_t>(r)].second != td) continue;
          AddProduct(Weight(dict, p + "root_weight", r), h, d, y);
          const Matrix bias = Weight(dict, p + "bias", r);
          for (int64_t o = 0; o < out_dim; ++o) y[static_cast<size_t>(o)] += bias.at(0, o);
          const auto list = neighbours(d, r);
          if (!list.empty()) AddProduct(Weight(dict, p + "rel_weight", r), mean(list), 0, y);
        }
      } else {
        // root[type(d)] h_d + bias[type(d)] + sum_r GAT_r over S_r(d), no self loop
        AddProduct(Weight(dict, p + "root_weight", td), h, d, y);
        const Matrix bias = Weight(dict, p + "bias", td);
        for (int64_t o = 0; o < out_dim; ++o) y[static_cast<size_t>(o)] += bias.at(0, o);
        for (int r = 0; r < num_relations; ++r) {
          const auto list = neighbours(d, r);
          if (list.empty()) continue;
          const Matrix w = Weight(dict, p + "rel_weight", r), al = Weight(dict, p + "attn_l", r),
                       ar = Weight(dict, p + "attn_r", r);
          const int64_t heads = al.rows, f = al.cols;
          auto z = [&](int64_t v) {
            std::vector<double> zv(static_cast<size_t>(heads * f), 0.0);
            AddProduct(w, h, v, zv);
            return zv;
          };
          const std::vector<double> zd = z(d);
          for (int64_t hd = 0; hd < heads; ++hd) {
            std::vector<double> score;
            for (int32_t s : list) {
              const std::vector<double> zs = z(s);
              double e = 0;
              for (int64_t k = 0; k < f; ++k) {
                e += al.at(hd, k) * zs[static_cast<size_t>(hd * f + k)] + ar.at(hd, k) * zd[static_cast<size_t>(hd * f + k)];
              }
              score.push_back(e > 0 ? e : 0.2 * e);
            }
            const double max = *std::max_element(score.begin(), score.end());
            double denom = 0;
            for (double e : score) denom += std::exp(e - max);
            for (size_t j = 0; j < list.size(); ++j) {
              const double alpha = std::exp(score[j] - max) / denom;
              const std::vector<double> zs = z(list[j]);
              for (int64_t k = 0; k < f; ++k) {
                if (last) {
                  y[static_cast<size_t>(k)] += alpha * zs[static_cast<size_t>(hd * f + k)] / static_cast<double>(heads);
                } else {
                  y[static_cast<size_t>(hd * f + k)] += alpha * zs[static_cast<size_t>(hd * f + k)];
                }
              }
            }
          }
        }
      }
      for (int64_t o = 0; o < out_dim; ++o) {
        double x = y[static_cast<size_t>(o)];
        if (!last) x = c.kind == ModelKind::kRgat ? (x > 0 ? x : std::expm1(x)) : std::max(x, 0.0);
        out.at(d, o) = x;
      }
    }
    h = out;
  }
  return std::vector<double>(h.v.begin(), h.v.begin() + batch.num_seeds * c.num_classes);
}

// The loaded model file's Predict against the plain loops on its tensors, for each kind,
// after a few steps have moved every weight (the type embedding included) off its start.
TEST(RelationalModelTest, ForwardPassMatchesPlainLoopsOnTheModelFile) {
  const std::string dir = MakeTempDir("relational_forward");
  for (ModelKind kind : kRelationalKinds) {
    TypedBatch b = HandMadeBatch();
    const ModelConfig config = TypedConfig(kind);
    auto model = ModelRunner::Create(config, 0.05, 7, /*use_cuda=*/false);
    ASSERT_EQ(model->num_parameters(), CountModelParameters(config)) << ModelKindName(kind);
    for (int i = 0; i < 5; ++i) {
      b.trace.batch_index = i;
      model->TrainStep(b.trace, b.rows.data(), b.labels.data());
    }
    const std::string path = dir + "/" + ModelKindName(kind) + ".pt";
    ASSERT_TRUE(model->SaveModel(path, false).ok());
    auto loaded = ModelRunner::LoadModel(path, false);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    std::vector<int64_t> classes(3);
    std::vector<float> logits, original;
    (*loaded)->Predict(b.trace, b.rows.data(), classes.data(), nullptr, &logits);
    model->Predict(b.trace, b.rows.data(), classes.data(), nullptr, &original);
    EXPECT_EQ(logits, original) << ModelKindName(kind);
    const TensorDict dict = ReadModelDict(path);
    const torch::Tensor embedding = dict.at("type_embedding").toTensor();
    EXPECT_EQ(embedding.sizes().vec(), (std::vector<int64_t>{3, 4}));
    EXPECT_GT(embedding.select(0, 2).abs().sum().item<float>(), 0.f)
        << ModelKindName(kind) << ": the featureless type's embedding learned nothing";
    const std::vector<double> expected = ReferenceLogits(dict, config, b.trace, b.rows);
    ASSERT_EQ(logits.size(), expected.size()) << ModelKindName(kind);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(logits[i], expected[i], 1e-5 * (1 + std::abs(expected[i]))) << ModelKindName(kind) << " " << i;
    }
    for (int64_t s = 0; s < 3; ++s) {
      const auto first = logits.begin() + s * 3;
      EXPECT_EQ(classes[static_cast<size_t>(s)], std::max_element(first, first + 3) - first);
    }
  }
}

// ---- learning what only the relation tells --------------------------------------------

// Papers (target, global 0..63) and authors (64..111); relations 0 and 1 both join
// author -> paper. Every paper has 3 author neighbours and every paper (and every author)
// the same features: a paper's label is 1 exactly when a neighbour comes through relation
// 0. Only the relation of its edges tells a paper's class.
constexpr int64_t kPapers = 64, kAuthors = 48, kSeedsPerBatch = 16;

ModelConfig RelationOnlyConfig(ModelKind kind) {
  ModelConfig c;
  c.kind = kind;
  c.in_dim = 4;
  c.hidden = 16;
  c.num_classes = 2;
  c.num_layers = 1;
  c.dropout = 0.1;
  c.heads = 2;
  if (c.relational()) {
    c.node_type_offsets = {0, kPapers, kPapers + kAuthors};
    c.relation_types = {{1, 0}, {1, 0}};
    c.target_type = 0;
  }
  return c;
}

std::vector<TypedBatch> RelationOnlyBatches(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<TypedBatch> batches;
  for (int64_t first = 0; first < kPapers; first += kSeedsPerBatch) {
    TypedBatch b;
    b.trace.batch_index = static_cast<int64_t>(batches.size());
    b.trace.num_seeds = kSeedsPerBatch;
    for (int64_t i = 0; i < kSeedsPerBatch; ++i) b.trace.node_ids.push_back(first + i);
    std::vector<std::array<int, 3>> edges;
    for (int64_t i = 0; i < kSeedsPerBatch; ++i) {
      const int label = static_cast<int>(i % 2);
      b.labels.push_back(label);
      const int through_first = label == 1 ? 1 + static_cast<int>(rng() % 3) : 0;
      std::vector<int64_t> authors;
      while (authors.size() < 3) {
        const int64_t a = kPapers + static_cast<int64_t>(rng() % kAuthors);
        if (std::find(authors.begin(), authors.end(), a) == authors.end()) authors.push_back(a);
      }
      for (int j = 0; j < 3; ++j) {
        const auto it = std::find(b.trace.node_ids.begin(), b.trace.node_ids.end(), authors[static_cast<size_t>(j)]);
        const auto local = static_cast<int>(it - b.trace.node_ids.begin());
        if (it == b.trace.node_ids.end()) b.trace.node_ids.push_back(authors[static_cast<size_t>(j)]);
        edges.push_back({static_cast<int>(i), j < through_first ? 0 : 1, local});
      }
    }
    const auto rows = static_cast<int64_t>(b.trace.node_ids.size());
    b.trace.blocks.push_back(MakeBlock(kSeedsPerBatch, rows, edges));
    for (int64_t v = 0; v < rows; ++v) {
      const bool paper = v < kSeedsPerBatch;
      const float paper_row[] = {1.f, 0.5f, -0.5f, 0.25f}, author_row[] = {0.3f, -1.f, 0.7f, 0.f};
      b.rows.insert(b.rows.end(), paper ? paper_row : author_row, (paper ? paper_row : author_row) + 4);
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

double TrainAccuracy(ModelKind kind, int steps) {
  std::vector<TypedBatch> batches = RelationOnlyBatches(5);
  auto model = ModelRunner::Create(RelationOnlyConfig(kind), 0.02, 3, /*use_cuda=*/false);
  for (int step = 0; step < steps; ++step) {
    TypedBatch& b = batches[static_cast<size_t>(step) % batches.size()];
    b.trace.batch_index = step;
    model->TrainStep(b.trace, b.rows.data(), b.labels.data());
  }
  int64_t correct = 0, total = 0;
  for (const TypedBatch& b : batches) {
    std::vector<int64_t> classes(static_cast<size_t>(b.trace.num_seeds));
    model->Predict(b.trace, b.rows.data(), classes.data(), nullptr);
    for (size_t i = 0; i < classes.size(); ++i) correct += classes[i] == b.labels[i];
    total += b.trace.num_seeds;
  }
  return static_cast<double>(correct) / static_cast<double>(total);
}

TEST(RelationalModelTest, LearnsWhatOnlyTheRelationTells) {
  constexpr int kSteps = 120;
  const double sage = TrainAccuracy(ModelKind::kSage, kSteps);
  std::printf("sage (relations ignored): train accuracy %.3f after %d steps\n", sage, kSteps);
  EXPECT_LE(sage, 0.6) << "the homogeneous model sees the same inputs for every paper";
  for (ModelKind kind : kRelationalKinds) {
    const double accuracy = TrainAccuracy(kind, kSteps);
    std::printf("%s: train accuracy %.3f after %d steps\n", ModelKindName(kind), accuracy, kSteps);
    EXPECT_GE(accuracy, 0.95) << ModelKindName(kind);
  }
}

// The same model file on a CUDA device predicts the CPU's logits, and its first training
// step has the CPU's loss (dropout 0; sums in another order, so close, not equal).
TEST(RelationalModelTest, CudaMatchesCpu) {
  if (kernels::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const std::string dir = MakeTempDir("relational_cuda");
  for (ModelKind kind : kRelationalKinds) {
    TypedBatch b = HandMadeBatch();
    auto model = ModelRunner::Create(TypedConfig(kind), 0.05, 4, /*use_cuda=*/false);
    for (int i = 0; i < 3; ++i) {
      b.trace.batch_index = i;
      model->TrainStep(b.trace, b.rows.data(), b.labels.data());
    }
    const std::string path = dir + "/" + ModelKindName(kind) + ".pt";
    ASSERT_TRUE(model->SaveModel(path, false).ok());
    auto cpu = ModelRunner::LoadModel(path, false);
    auto gpu = ModelRunner::LoadModel(path, true);
    ASSERT_TRUE(cpu.ok() && gpu.ok());
    if (!(*gpu)->on_cuda()) GTEST_SKIP() << "libtorch built without CUDA";
    std::vector<int64_t> classes(3);
    std::vector<float> lc, lg;
    (*cpu)->Predict(b.trace, b.rows.data(), classes.data(), nullptr, &lc);
    (*gpu)->Predict(b.trace, b.rows.data(), classes.data(), nullptr, &lg);
    ASSERT_EQ(lc.size(), lg.size());
    for (size_t i = 0; i < lc.size(); ++i) EXPECT_NEAR(lc[i], lg[i], 1e-4 * (1 + std::abs(lc[i]))) << ModelKindName(kind);
    const double loss_cpu = (*cpu)->TrainStep(b.trace, b.rows.data(), b.labels.data()).loss;
    const double loss_gpu = (*gpu)->TrainStep(b.trace, b.rows.data(), b.labels.data()).loss;
    EXPECT_NEAR(loss_cpu, loss_gpu, 1e-4) << ModelKindName(kind);
  }
}

// ---- checkpoints, model files, the config JSON ------------------------------------------

TEST(RelationalModelTest, CheckpointAndModelFileRoundTrip) {
  const std::string dir = MakeTempDir("relational_files");
  for (ModelKind kind : kRelationalKinds) {
    TypedBatch b = HandMadeBatch();
    ModelConfig config = TypedConfig(kind);
    config.dropout = 0.3;
    auto model = ModelRunner::Create(config, 0.05, 21, false);
    for (int i = 0; i < 3; ++i) {
      b.trace.batch_index = i;
      model->TrainStep(b.trace, b.rows.data(), b.labels.data());
    }
    TrainPosition position;
    position.epoch = 1;
    const std::string checkpoint = dir + "/" + ModelKindName(kind) + ".ckpt";
    ASSERT_TRUE(model->SaveCheckpoint(checkpoint, position).ok());
    std::vector<int64_t> classes(3), loaded_classes(3);
    std::vector<float> logits, loaded_logits, embeddings, loaded_embeddings;
    model->Predict(b.trace, b.rows.data(), classes.data(), &embeddings, &logits);

    // Same seed, untrained weights: the checkpoint brings weights and Adam's state, so
    // the next step's loss is the original's.
    auto resumed = ModelRunner::Create(config, 0.05, 21, false);
    auto loaded_position = resumed->LoadCheckpoint(checkpoint);
    ASSERT_TRUE(loaded_position.ok()) << loaded_position.status().message();
    EXPECT_EQ(loaded_position->epoch, 1);
    resumed->Predict(b.trace, b.rows.data(), loaded_classes.data(), &loaded_embeddings, &loaded_logits);
    EXPECT_EQ(loaded_logits, logits) << ModelKindName(kind);
    EXPECT_EQ(loaded_embeddings, embeddings) << ModelKindName(kind);
    EXPECT_EQ(loaded_classes, classes) << ModelKindName(kind);
    EXPECT_EQ(static_cast<int64_t>(embeddings.size()), 3 * resumed->embedding_dim());
    b.trace.batch_index = 3;
    const double next = model->TrainStep(b.trace, b.rows.data(), b.labels.data()).loss;
    EXPECT_EQ(resumed->TrainStep(b.trace, b.rows.data(), b.labels.data()).loss, next) << ModelKindName(kind);

    // Another graph's model (other relation types) refuses the checkpoint.
    ModelConfig other = config;
    other.relation_types[1] = {0, 0};
    auto refused = ModelRunner::Create(other, 0.05, 21, false)->LoadCheckpoint(checkpoint);
    EXPECT_FALSE(refused.ok()) << ModelKindName(kind);

    // The model file: the same predictions and config after loading.
    const std::string path = dir + "/" + ModelKindName(kind) + ".pt";
    ASSERT_TRUE(model->SaveModel(path, false).ok());
    model->Predict(b.trace, b.rows.data(), classes.data(), nullptr, &logits);
    auto file = ModelRunner::LoadModel(path, false);
    ASSERT_TRUE(file.ok()) << file.status().message();
    EXPECT_EQ((*file)->config().ToJson(), model->config().ToJson());
    EXPECT_EQ((*file)->config().node_type_offsets, config.node_type_offsets);
    EXPECT_EQ((*file)->config().relation_types, config.relation_types);
    EXPECT_EQ((*file)->config().target_type, config.target_type);
    (*file)->Predict(b.trace, b.rows.data(), loaded_classes.data(), nullptr, &loaded_logits);
    EXPECT_EQ(loaded_logits, logits) << ModelKindName(kind);
    EXPECT_EQ(loaded_classes, classes) << ModelKindName(kind);
  }
}

TEST(RelationalModelTest, ConfigJsonKeepsTypesForRelationalKindsOnly) {
  // A homogeneous config's JSON has no relational keys, whatever the fields hold.
  ModelConfig sage = TypedConfig(ModelKind::kSage);
  ModelConfig plain = sage;
  plain.node_type_offsets.clear();
  plain.relation_types.clear();
  plain.target_type = -1;
  EXPECT_EQ(sage.ToJson(), plain.ToJson());
  EXPECT_EQ(sage.ToJson().find("relation"), std::string::npos);
  EXPECT_EQ(sage.ToJson().find("target_type"), std::string::npos);

  const ModelConfig rgat = TypedConfig(ModelKind::kRgat);
  const std::string json = rgat.ToJson();
  EXPECT_NE(json.find("\"node_type_offsets\":[0,5,9,11]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"relation_types\":[[0,0],[1,0],[0,1],[2,1]]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"target_type\":0"), std::string::npos) << json;
  auto back = ModelConfig::FromJson(json, "model.pt");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToJson(), json);
  EXPECT_EQ(back->relation_types, rgat.relation_types);

  // FromJson refuses types that do not fit together, naming the file.
  auto refused = [&](const std::string& from, const std::string& to) {
    std::string bad = json;
    const size_t at = bad.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    auto r = ModelConfig::FromJson(bad, "model.pt");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
      EXPECT_EQ(r.status().message().rfind("model.pt: ", 0), 0u) << r.status().message();
    }
  };
  refused("[0,5,9,11]", "[0,5,4,11]");           // decreasing offsets
  refused("[0,5,9,11]", "[1,5,9,11]");           // not from 0
  refused("[0,5,9,11]", "[0]");                  // no node type
  refused("[[0,0],[1,0]", "[[0,3],[1,0]");       // a type out of range
  refused("[[0,0],[1,0]", "[[0,0,1],[1,0]");     // not a pair
  refused("\"target_type\":0", "\"target_type\":3");
  refused("\"relation_types\":[[0,0],[1,0],[0,1],[2,1]]", "\"relation_types\":[]");
  refused("\"target_type\":0", "\"target_typo\":0");  // missing
}

// ---- refusals ---------------------------------------------------------------------------

void ExpectInvalid(const ModelConfig& config, const std::string& words) {
  try {
    ModelRunner::Create(config, 0.01, 1, false);
    ADD_FAILURE() << "accepted " << config.ToJson() << ", expected: " << words;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(RelationalModelTest, RefusesConfigsWithoutFittingTypes) {
  for (ModelKind kind : kRelationalKinds) {
    ModelConfig link = TypedConfig(kind);
    link.task = ModelTask::kLink;
    link.num_classes = 0;
    ExpectInvalid(link, "link prediction with relational models is not supported yet");
    ModelConfig c = TypedConfig(kind);
    c.node_type_offsets.clear();
    ExpectInvalid(c, "node_type_offsets");
    c = TypedConfig(kind);
    c.node_type_offsets = {0, 5, 3, 11};
    ExpectInvalid(c, "node_type_offsets decrease");
    c = TypedConfig(kind);
    c.relation_types.clear();
    ExpectInvalid(c, "relation_types");
    c = TypedConfig(kind);
    c.relation_types[2] = {0, 3};
    ExpectInvalid(c, "relation 2");
    c = TypedConfig(kind);
    c.target_type = -1;
    ExpectInvalid(c, "target_type");
  }
  ModelConfig heads = TypedConfig(ModelKind::kRgat);
  heads.heads = 3;
  ExpectInvalid(heads, "multiple of --heads");
}

TEST(RelationalModelTest, RefusesBatchesThatDoNotFitTheTypes) {
  for (ModelKind kind : kRelationalKinds) {
    auto model = ModelRunner::Create(TypedConfig(kind), 0.01, 1, false);
    auto expect_refused = [&](const TypedBatch& b, const std::string& words) {
      std::vector<int64_t> classes(3);
      for (int predict = 0; predict < 2; ++predict) {
        try {
          if (predict) {
            model->Predict(b.trace, b.rows.data(), classes.data(), nullptr);
          } else {
            model->TrainStep(b.trace, b.rows.data(), b.labels.data());
          }
          ADD_FAILURE() << ModelKindName(kind) << " accepted a batch; expected: " << words;
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
      }
    };
    TypedBatch b = HandMadeBatch();
    b.trace.blocks[1].edge_rel.clear();  // a homogeneous dataset's batch
    expect_refused(b, "edge_rel");
    b = HandMadeBatch();
    b.trace.blocks[0].edge_rel.pop_back();
    expect_refused(b, "edge_rel");
    b = HandMadeBatch();
    b.trace.blocks[0].edge_rel[4] = 4;  // the model has 4 relations
    expect_refused(b, "has relation 4");
    b = HandMadeBatch();
    b.trace.blocks[1].edge_rel[0] = 1;  // paper -> paper edge called author -> paper
    expect_refused(b, "joins node types 0 -> 0, the relation joins 1 -> 0");
    b = HandMadeBatch();
    b.trace.node_ids[3] = 9;  // an author's row given an institute's id
    expect_refused(b, "joins node types");
    b = HandMadeBatch();
    std::swap(b.trace.node_ids[0], b.trace.node_ids[3]);  // an author among the seeds
    expect_refused(b, "the model predicts type 0");
    b = HandMadeBatch();
    b.trace.node_ids[9] = 11;  // past the last type
    expect_refused(b, "outside the typed dataset's 11 nodes");
    // The untouched batch is fine.
    b = HandMadeBatch();
    EXPECT_NO_THROW(model->TrainStep(b.trace, b.rows.data(), b.labels.data()));
  }
}

// ---- the memory estimate ----------------------------------------------------------------

// Counts the bytes of every live CPU tensor allocation and their peak while installed,
// allocating through the allocator it replaced (so another counter installed before it
// keeps counting too). c10::Allocator's interface differs across PyTorch versions: see
// tests/executor/memory_budget_test.cc's CountingAllocator.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t n) { return Allocate(n); }
  c10::DataPtr allocate(size_t n) const { return Allocate(n); }
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }
  void ResetPeak() { peak_.store(current_.load()); }
  int64_t current() const { return current_.load(); }
  int64_t peak() const { return peak_.load(); }

 private:
  struct Block {
    c10::DataPtr inner;
    size_t bytes;
    const CountingAllocator* owner;
  };
  c10::DataPtr Allocate(size_t n) const {
    c10::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    auto* block = new Block{std::move(inner), n, this};
    const int64_t now = current_.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {data, block, &Delete, c10::Device(c10::DeviceType::CPU)};
  }
  static void Delete(void* ctx) {
    auto* block = static_cast<Block*>(ctx);
    block->owner->current_.fetch_sub(static_cast<int64_t>(block->bytes));
    delete block;  // frees through the inner allocator's deleter
  }
  c10::Allocator* inner_;
  mutable std::atomic<int64_t> current_{0};
  mutable std::atomic<int64_t> peak_{0};
};

// A typed batch with the given block shapes over 3 node types and 5 relations (every
// type the destination of one or two): seeds of type 0, other rows of a random type; each
// destination draws num_edges / num_dst edges through random relations into its type.
struct ShapedTypedBatch {
  ModelConfig config;
  TypedBatch batch;
};

ShapedTypedBatch MakeShapedTypedBatch(const std::vector<BlockShape>& shapes, int64_t num_seeds, int64_t in_dim,
                                      int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ShapedTypedBatch out;
  const int64_t rows = shapes[0].num_src;
  ModelConfig& c = out.config;
  c.in_dim = in_dim;
  c.num_classes = classes;
  c.num_layers = static_cast<int64_t>(shapes.size());
  c.node_type_offsets = {0, rows, 2 * rows, 3 * rows};
  c.relation_types = {{0, 0}, {1, 0}, {0, 1}, {2, 1}, {1, 2}};
  c.target_type = 0;
  std::vector<int> type(static_cast<size_t>(rows));
  int64_t count[3] = {0, 0, 0};
  BatchTrace& trace = out.batch.trace;
  trace.num_seeds = num_seeds;
  trace.batch_index = 1;
  for (int64_t v = 0; v < rows; ++v) {
    const int t = v < num_seeds ? 0 : static_cast<int>(rng() % 3);
    type[static_cast<size_t>(v)] = t;
    trace.node_ids.push_back(c.node_type_offsets[static_cast<size_t>(t)] + count[t]++);
  }
  for (const BlockShape& s : shapes) {
    std::vector<std::vector<int32_t>> pool(3);  // this block's sources of each type
    for (int64_t v = 0; v < s.num_src; ++v) pool[static_cast<size_t>(type[static_cast<size_t>(v)])].push_back(static_cast<int32_t>(v));
    std::vector<std::array<int, 3>> edges;
    const int64_t fanout = s.num_dst == 0 ? 0 : s.num_edges / s.num_dst;
    for (int64_t d = 0; d < s.num_dst; ++d) {
      std::vector<int> into;
      for (int r = 0; r < 5; ++r) {
        if (c.relation_types[static_cast<size_t>(r)].second == type[static_cast<size_t>(d)]) into.push_back(r);
      }
      std::vector<std::pair<int, int>> picks;  // (relation, src)
      for (int64_t j = 0; j < fanout; ++j) {
        const int r = into[rng() % into.size()];
        const auto& sources = pool[static_cast<size_t>(c.relation_types[static_cast<size_t>(r)].first)];
        picks.emplace_back(r, sources[rng() % sources.size()]);
      }
      std::stable_sort(picks.begin(), picks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [r, src] : picks) edges.push_back({static_cast<int>(d), r, src});
    }
    trace.blocks.push_back(MakeBlock(s.num_dst, s.num_src, edges));
  }
  std::normal_distribution<float> normal;
  out.batch.rows.resize(static_cast<size_t>(rows * in_dim));
  for (float& x : out.batch.rows) x = normal(rng);
  for (int64_t i = 0; i < num_seeds; ++i) out.batch.labels.push_back(static_cast<int32_t>(rng() % classes));
  return out;
}

// The estimate bounds the bytes libtorch holds during a relational training step from
// above, on the split's own estimated shapes, and is not loose by more than 2.5x
// (ModelFootprintTest allows the homogeneous kinds 2x: a block shape does not say how
// its edges split over the relations, so the estimate takes each relation's temporaries
// at the whole block's size).
TEST(RelationalModelFootprintTest, BoundsTheAllocatorPeakOfATrainingStep) {
  const int64_t num_nodes = 50021, batch = 97, in_dim = 47, classes = 7;
  const std::vector<int> fanouts = {10, 6};
  const std::vector<BlockShape> shapes = EstimateBlockShapes(num_nodes, batch, fanouts);
  const uint64_t seed = 20240612;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  const ShapedTypedBatch shaped = MakeShapedTypedBatch(shapes, batch, in_dim, classes, seed);
  c10::Allocator* previous = c10::GetCPUAllocator();
  auto* counter = new CountingAllocator(previous);  // outlives every tensor it allocates
  c10::SetCPUAllocator(counter, /*priority=*/200);
  for (ModelKind kind : kRelationalKinds) {
    for (int64_t hidden : {64, 200}) {
      ModelConfig config = shaped.config;
      config.kind = kind;
      config.hidden = hidden;
      config.heads = 4;
      const int64_t before_model = counter->current();
      auto runner = ModelRunner::Create(config, 0.01, seed, /*use_cuda=*/false);
      ASSERT_EQ(CountModelParameters(config), runner->num_parameters()) << ModelKindName(kind);
      const TypedBatch& b = shaped.batch;
      runner->TrainStep(b.trace, b.rows.data(), b.labels.data());  // creates gradients and Adam's moments
      runner->SnapshotBest();
      const int64_t persistent = counter->current() - before_model;
      counter->ResetPeak();
      const int64_t baseline = counter->current();
      runner->TrainStep(b.trace, b.rows.data(), b.labels.data());
      const int64_t step_peak = counter->peak() - baseline;
      const ModelFootprint f = EstimateModelFootprint(config, shapes, batch, /*on_host=*/true);
      std::printf("%s hidden %lld: step peak %.2f MiB, estimate %.2f MiB; parameters+Adam+best %.2f MiB, "
                  "estimate %.2f MiB\n",
                  ModelKindName(kind), static_cast<long long>(hidden), step_peak / 1048576.0,
                  f.activation_bytes / 1048576.0, persistent / 1048576.0, f.parameter_bytes / 1048576.0);
      EXPECT_GE(f.activation_bytes, step_peak) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_LE(f.activation_bytes, 5 * step_peak / 2) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_GE(f.parameter_bytes, persistent) << ModelKindName(kind) << " hidden " << hidden;
      EXPECT_LE(f.parameter_bytes, 2 * persistent + 4096) << ModelKindName(kind) << " hidden " << hidden;
    }
  }
  c10::SetCPUAllocator(previous, /*priority=*/200);
}

}  // namespace
}  // namespace seer
