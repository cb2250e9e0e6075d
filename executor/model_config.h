// ModelConfig: what a GNN is (kind, sizes, dropout, GCN normalisation, the dataset it was
// trained on) — the plain struct that ModelRunner builds a model from, that checkpoints
// and model files record (JSON: executor/checkpoint_file.h) and that the memory split
// sizes the model's working set from. Torch-free, plain values; the name functions are
// pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class ModelKind { kSage, kGcn, kGat, kMlp, kRgcn, kRsage, kRgat };
inline constexpr NameValue<ModelKind> kModelKindNames[] = {
    {"sage", ModelKind::kSage}, {"gcn", ModelKind::kGcn},   {"gat", ModelKind::kGat},  {"mlp", ModelKind::kMlp},
    {"rgcn", ModelKind::kRgcn}, {"rsage", ModelKind::kRsage}, {"rgat", ModelKind::kRgat}};
// "sage" | "gcn" | "gat" | "mlp" (features only: an MLP on each seed's own features);
// the relational models of typed datasets: "rgcn" | "rsage" | "rgat" (ModelConfig::relational()).
Result<ModelKind> ParseModelKind(const std::string& text);
const char* ModelKindName(ModelKind kind);

// GCN's normalisation (ModelConfig::gcn_norm), with D_v = v's in-degree in the FULL graph
// (indptr[v+1] - indptr[v]; PyG's gcn_norm convention, = the degree on undirected graphs)
// and S(d) the k_d in-neighbors of d sampled into the block:
//   graph  h'_d = W( h_d/(D_d+1) + (D_d/k_d) * sum_{s in S(d)} h_s / sqrt((D_d+1)(D_s+1)) ) + b
//          = D^-1/2 (A+I) D^-1/2 H W exactly when every neighbor is sampled (fan-out >=
//          degree), an unbiased estimate of it otherwise. Needs SetGraphIndptr.
//   block  the same with D and k replaced by the sampled block's own in-/out-degrees (what
//          DGL GraphConv / PyG GCNConv compute on a sampled block; model files written
//          before gcn_norm existed load as "block").
enum class GcnNorm { kGraph, kBlock };
inline constexpr NameValue<GcnNorm> kGcnNormNames[] = {{"graph", GcnNorm::kGraph}, {"block", GcnNorm::kBlock}};
Result<GcnNorm> ParseGcnNorm(const std::string& text);
const char* GcnNormName(GcnNorm norm);

// What the model is trained for: node classification (cross-entropy over the seeds'
// labels; the last layer outputs num_classes logits) or link prediction (`--task link`:
// the last layer outputs a `hidden`-wide embedding per node and a scorer turns a pair of
// embeddings into a logit, trained with binary cross-entropy against negatives).
enum class ModelTask { kNode, kLink };
inline constexpr NameValue<ModelTask> kModelTaskNames[] = {{"node", ModelTask::kNode}, {"link", ModelTask::kLink}};
Result<ModelTask> ParseModelTask(const std::string& text);
const char* ModelTaskName(ModelTask task);

// Link prediction's scorer of a pair (u, v) with final embeddings h_u, h_v:
//   dot  <h_u, h_v>
//   mlp  score1(relu(score0(h_u * h_v)))   (element-wise product; score0 hidden->hidden,
//        score1 hidden->1; the OGB link prediction examples' LinkPredictor, one hidden layer)
enum class LinkScorer { kDot, kMlp };
inline constexpr NameValue<LinkScorer> kLinkScorerNames[] = {{"dot", LinkScorer::kDot}, {"mlp", LinkScorer::kMlp}};
Result<LinkScorer> ParseLinkScorer(const std::string& text);
const char* LinkScorerName(LinkScorer scorer);

// LayerBlock::edge_rel is a uint8: a relational model has at most this many relations.
inline constexpr int64_t kMaxModelRelations = 256;

struct ModelConfig {
  ModelKind kind = ModelKind::kSage;
  int64_t in_dim = 0;
  int64_t hidden = 256;
  int64_t num_classes = 0;
  int64_t num_layers = 3;   // = number of fan-outs (blocks per batch)
  double dropout = 0.5;
  int64_t heads = 4;        // GAT only; hidden must be a multiple of heads
  GcnNorm gcn_norm = GcnNorm::kGraph;  // GCN only (stored in the JSON for GCN only)
  // Link prediction (stored in the JSON only for it; num_classes is then 0).
  ModelTask task = ModelTask::kNode;
  LinkScorer scorer = LinkScorer::kDot;
  // Width of the last layer's output: num_classes, or hidden for link prediction.
  int64_t output_dim() const { return task == ModelTask::kLink ? hidden : num_classes; }
  // Relational models (rgcn, rsage, rgat) of a typed dataset, which a batch's global ids
  // index (type offset + local id, storage/dataset/dataset.h): node type t holds the ids
  // [node_type_offsets[t], node_type_offsets[t + 1]) (T + 1 entries, manifest order);
  // relation r (LayerBlock::edge_rel, manifest order) joins relation_types[r] =
  // (src type, dst type); the seeds are of type target_type. Empty / -1 otherwise.
  std::vector<int64_t> node_type_offsets;
  std::vector<std::pair<int32_t, int32_t>> relation_types;
  int32_t target_type = -1;
  bool relational() const {
    return kind == ModelKind::kRgcn || kind == ModelKind::kRsage || kind == ModelKind::kRgat;
  }
  int32_t num_node_types() const {
    return node_type_offsets.empty() ? 0 : static_cast<int32_t>(node_type_offsets.size()) - 1;
  }
  int32_t num_relations() const { return static_cast<int32_t>(relation_types.size()); }
  // A relational config's types fit together: T + 1 >= 2 offsets from 0, never
  // decreasing; 1 to kMaxModelRelations relations, each (src, dst) in [0, T); target_type in
  // [0, T); node classification (link prediction is not supported yet). kInvalidArgument
  // saying what is wrong, else Ok. Ok for every homogeneous kind.
  Status CheckRelationalTypes() const;
  // DatasetManifest::Identity() of the data it is trained on ("" = not recorded: files
  // written before it was); seer predict refuses another dataset's.
  std::string dataset;
  // One-line JSON (keys sorted), as stored in checkpoints and model files; defined with
  // the checkpoint format in executor/checkpoint_file.cc.
  std::string ToJson() const;
  static Result<ModelConfig> FromJson(const std::string& json, const std::string& path);
};

}  // namespace seer
