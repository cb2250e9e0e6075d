#include "executor/runtime_footprint.h"

#include <algorithm>

#include <torch/torch.h>

#include "executor/model_runner.h"
#include "storage/base/process_memory.h"

namespace seer {

int64_t MeasureRuntimeBytes(bool use_cuda, const std::function<void()>& warm_up) {
  if (use_cuda && torch::cuda::is_available()) {
    // The context, the caching allocator's first block and a cuBLAS handle.
    const torch::Tensor a = torch::ones({8, 8}, torch::TensorOptions().device(torch::kCUDA));
    const torch::Tensor b = torch::mm(a, a);
    (void)b.sum().item<float>();  // waits for the device
    if (warm_up) warm_up();
  }
  return std::max<int64_t>(0, ResidentBytesNow());
}

int64_t RuntimeBytesToCharge(int64_t option, bool use_cuda, const std::function<void()>& warm_up) {
  return option < 0 ? MeasureRuntimeBytes(use_cuda, warm_up) : option;
}

BatchTrace SyntheticBatch(int64_t seeds, const std::vector<int>& fanouts) {
  BatchTrace batch;
  batch.num_seeds = seeds;
  // Sizes from the output layer down: layer l's src = its dst plus up to fanout new nodes each.
  std::vector<int64_t> dst(fanouts.size()), src(fanouts.size());
  int64_t n = seeds;
  for (size_t k = fanouts.size(); k-- > 0;) {
    dst[k] = n;
    n += n * std::max(fanouts[k], 1);
    src[k] = n;
  }
  for (size_t l = 0; l < fanouts.size(); ++l) {
    LayerBlock b;
    b.num_dst = dst[l];
    b.num_src = src[l];
    const int64_t per = std::min<int64_t>(std::max(fanouts[l], 1), b.num_src - 1);
    b.row_ptr.push_back(0);
    for (int64_t d = 0; d < b.num_dst; ++d) {
      for (int64_t j = 1; j <= per; ++j) b.col_idx.push_back(static_cast<int32_t>((d + j * b.num_dst) % b.num_src));
      b.row_ptr.push_back(static_cast<int64_t>(b.col_idx.size()));
    }
    batch.blocks.push_back(std::move(b));
  }
  const int64_t rows = fanouts.empty() ? seeds : src[0];
  for (int64_t v = 0; v < rows; ++v) batch.node_ids.push_back(v);
  return batch;
}

void WarmUpTrainingStep(ModelConfig config, const std::vector<int>& fanouts, bool use_cuda) {
  if ((use_cuda && !torch::cuda::is_available()) || config.in_dim <= 0 || config.output_dim() <= 0) return;
  config.num_layers = static_cast<int64_t>(fanouts.size());
  // Block normalisation needs no graph degrees; its kernels are the graph rule's.
  config.gcn_norm = GcnNorm::kBlock;
  // A relational model warms up on one node type and one relation: the same kernels
  // (gathers, per-relation means or attention, scatters) on the synthetic batch.
  if (config.relational()) {
    config.node_type_offsets = {0, int64_t{1} << 40};
    config.relation_types = {{0, 0}};
    config.target_type = 0;
  }
  std::unique_ptr<ModelRunner> model = ModelRunner::Create(config, /*learning_rate=*/0.01, /*seed=*/0,
                                                           use_cuda);
  std::vector<int> small(fanouts.size());
  for (size_t l = 0; l < fanouts.size(); ++l) small[l] = std::clamp(fanouts[l], 1, 4);
  BatchTrace batch = SyntheticBatch(8, small);
  if (config.relational()) {
    for (LayerBlock& block : batch.blocks) block.edge_rel.assign(block.col_idx.size(), 0);
  }
  if (config.task == ModelTask::kLink) {  // pairs (0, 1), (2, 3), ... each against one negative
    batch.link.negatives_per_pair = 1;
    for (int32_t i = 0; i + 1 < 8; i += 2) {
      batch.link.src.push_back(i);
      batch.link.dst.push_back(i + 1);
      batch.link.neg.push_back((i + 2) % 8);
    }
  }
  const int64_t rows = batch.blocks.empty() ? batch.num_seeds : batch.blocks[0].num_src;
  std::vector<float> features(static_cast<size_t>(rows * config.in_dim));
  for (size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>(i % 7) * 0.1f;
  std::vector<int32_t> labels(static_cast<size_t>(batch.num_seeds));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % std::max<int64_t>(1, config.num_classes));
  model->TrainStep(batch, features.data(), labels.data());
  std::vector<int64_t> classes(static_cast<size_t>(batch.num_seeds));
  std::vector<float> logits;
  model->Predict(batch, features.data(), classes.data(), nullptr, &logits);  // copies back: waits
}

}  // namespace seer
