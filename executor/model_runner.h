// ModelRunner: a GNN (GraphSAGE / GCN / GAT, or the features-only MLP baseline) with its
// Adam optimizer, driven one mini-batch at a time from a BatchTrace (inspector/trace.h)
// and the batch's gathered feature rows. This header is torch-free on purpose: the run
// loops (train_loop.cc), the memory split and the tests include it without paying
// libtorch's compile time; all libtorch code (layers, optimizer, checkpoint payloads,
// model files) lives in model_runner.cc.
//
// Rows: float32, row-major [trace.node_ids.size() x in_dim], row r = features of
// node_ids[r] (only the first blocks[0].num_src rows are read).
// Relational models (rgcn, rsage, rgat; ModelConfig::relational()) read a typed dataset's
// batches: global node ids (the node type of each from ModelConfig::node_type_offsets),
// LayerBlock::edge_rel on every block, every edge joining its relation's types and every
// seed of the target type; anything else throws std::invalid_argument naming the block
// and edge. Rows of a featureless type are zeros (a learned per-type vector is added). Labels: one int32 per
// seed, -1 = unlabeled (ignored by the loss and by accuracy).
//
// Determinism (CPU): parameters are initialised from `seed`; the dropout RNG is reseeded
// before every training step from (seed, epoch, batch_index), so the losses of a run
// depend only on the seed, the batches and the model/optimizer state — which is what a
// checkpoint stores. A resumed run therefore reproduces the uninterrupted run exactly.
// On CUDA the same seed gives other dropout masks (the device's own generator) and sums
// run through atomics (index_add): close to the CPU's losses without dropout, not equal.
//
// Device: CUDA when `use_cuda` and a device is present (rows are staged in pinned host
// memory and copied asynchronously), else the CPU. Not thread-safe: one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/model_config.h"
#include "executor/train_position.h"
#include "inspector/trace.h"
#include "storage/base/status.h"
#include "storage/dataset/compact_indptr.h"

namespace seer {

class DeviceRows;    // executor/device_feature_tier.h
class ProcessGroup;  // executor/process_group.h

// What a model was trained with, beyond its ModelConfig: recorded in the model file
// ("seer.training", docs/formats.md) so `seer predict` samples as training did.
struct TrainingRecord {
  std::vector<int> fanouts;  // per layer, input layer first; -1 = all neighbours
  int64_t batch_size = 0;    // 0 = not recorded (files written before it was)
  // Typed datasets: --relation-fanouts as given ("" = `fanouts` for every relation).
  std::string relation_fanouts;
};

struct StepResult {
  double loss = 0;           // mean cross-entropy over labeled seeds (0 when none)
  int64_t num_labeled = 0;
  int64_t num_correct = 0;   // argmax == label among labeled seeds
  // Link prediction: loss = mean BCE of the positives + mean BCE of the negatives;
  // num_labeled = scored pairs (positives and negatives; the data-parallel weight),
  // num_correct = those on the right side of 0.
};

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;

  // Throws std::invalid_argument on an inconsistent config (e.g. GAT hidden % heads).
  static std::unique_ptr<ModelRunner> Create(const ModelConfig& config, double learning_rate,
                                             uint64_t seed, bool use_cuda);

  virtual const ModelConfig& config() const = 0;
  // The full graph's CSC indptr (num_nodes + 1 entries), borrowed: it must outlive every
  // later TrainStep/Predict. Read only by GCN with gcn_norm=graph, where a batch before
  // this call, a node id outside it, or a block sampling more in-neighbors of a node than
  // its full in-degree throws std::logic_error / std::invalid_argument.
  virtual void SetGraphIndptr(const CompactIndptr* indptr) = 0;
  virtual bool on_cuda() const = 0;
  virtual int64_t num_parameters() const = 0;

  // Data-parallel training (null = off, the default: every step is this process's own).
  // With a group every TrainStep joins one allreduce of the flattened gradients, each
  // rank's weighted by its labeled seeds, plus (labeled, loss sum, correct): W ranks with
  // b/W seeds each take the step one process takes with b seeds, and the StepResult is
  // the whole step's (mean loss and counts over every rank's seeds). A rank whose batch
  // has no labeled seed still joins with weight 0; no rank updates when no rank has one.
  // A failed collective throws CollectiveError (executor/process_group.h); the weights
  // are then not updated. The group is borrowed.
  virtual void SetProcessGroup(ProcessGroup* group) = 0;
  // Rank `root`'s weights to every rank (at start and after a resume); Adam's state is
  // not sent (a resume loads the same checkpoint on every rank).
  virtual Status BroadcastParameters(ProcessGroup& group, int root) = 0;

  // One forward/backward/Adam step. A batch without labeled seeds does no update.
  virtual StepResult TrainStep(const BatchTrace& batch, const float* rows,
                               const int32_t* seed_labels) = 0;
  // The same step on rows already assembled on the device by the device feature tier
  // (executor/device_feature_tier.h; a CPU tensor on a CPU build): identical result for
  // identical rows, no host staging.
  virtual StepResult TrainStepRows(const BatchTrace& batch, const DeviceRows& rows,
                                   const int32_t* seed_labels) = 0;
  // Link prediction (config().task == kLink; throws std::invalid_argument otherwise or
  // for a batch without link pairs): inference scores (logits) of the batch's pairs:
  // pos[i] of positive pair i, neg[i * k + j] of its negative j (shared negatives too:
  // every pair's k scores). No dropout, no grad.
  virtual void ScoreLinks(const BatchTrace& batch, const float* rows, std::vector<float>* pos,
                          std::vector<float>* neg) = 0;
  // The scorer on given final embeddings (count rows of embedding_dim() floats each).
  virtual void ScoreEmbeddings(const float* u, const float* v, int64_t count, float* scores) = 0;
  // Inference (no dropout, no grad). classes: num_seeds predicted classes (-1 each for a
  // link prediction model, whose embeddings are its final output, what its scorer reads). embeddings
  // (optional): num_seeds x embedding_dim() floats, the input of the last layer. logits
  // (optional): num_seeds x num_classes floats, the last layer's output (argmax = class).
  virtual void Predict(const BatchTrace& batch, const float* rows, int64_t* classes,
                       std::vector<float>* embeddings, std::vector<float>* logits = nullptr) = 0;
  virtual int64_t embedding_dim() const = 0;

  // Best-validation model: Snapshot copies the current weights aside, RestoreBest copies
  // them back (no-op without a snapshot).
  virtual void SnapshotBest() = 0;
  virtual void RestoreBest() = 0;
  virtual bool has_best() const = 0;

  // Checkpoint = config + position + weights + Adam state (+ best weights), written
  // atomically with an xxh64 of the payload (format: executor/checkpoint_file.h). Load
  // refuses a truncated or corrupt file or one whose config differs from this runner's,
  // naming the path.
  virtual Status SaveCheckpoint(const std::string& path, const TrainPosition& position) = 0;
  virtual Result<TrainPosition> LoadCheckpoint(const std::string& path) = 0;

  // What the model was trained with (SaveModel records it, LoadModel reads it back).
  virtual void SetTrainingRecord(const TrainingRecord& record) = 0;
  virtual const TrainingRecord& training_record() const = 0;

  // The weights (the best-validation ones when a snapshot exists and best=true) as a
  // dict name -> tensor that Python's torch.load opens, plus keys "seer.config" (the
  // ModelConfig JSON, a str), "seer.training" (the TrainingRecord JSON) and
  // "seer.checksum" (XXH64 over every other entry: ModelFileChecksum, docs/formats.md).
  // Key names and the forward pass: docs/formats.md ("Model file").
  virtual Status SaveModel(const std::string& path, bool best) = 0;
  // Refuses (kCorrupt, naming the path) an unreadable file, a checksum mismatch, a
  // missing or misshapen tensor and a non-finite weight. A file written before the
  // checksum existed loads; *warning (when given) then says it could not be verified.
  static Result<std::unique_ptr<ModelRunner>> LoadModel(const std::string& path,
                                                         bool use_cuda, std::string* warning = nullptr);
};

}  // namespace seer
