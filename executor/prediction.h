// RunPrediction: `seer predict` — a trained model file's classes (and, when asked, the
// embeddings fed to its last layer) for the test split or the given nodes, through the
// same out-of-core path as training (DataPath: readers, neighbor and feature caches; the
// sampler with a fixed seed, no shuffle; EvaluateSplit's gather and forward pass).
//
// Nodes may repeat and come in any order: each distinct id is predicted once and the
// results are returned in the caller's order. A node's prediction does not depend on the
// nodes predicted with it (the sampler draws by (seed, epoch, node, hop)), so any batching
// and any number of ranks give the same answers. Data-parallel (PredictOptions::dist,
// executor/data_parallel.h): rank r predicts a contiguous share of the distinct ids and
// the results are summed over the ranks, so every rank returns the whole result.
//
// Fan-outs: PredictOptions::fanouts, else the model file's training fan-outs
// (TrainingRecord), else 10 per layer. Logits on request (want_logits). The model file is
// verified at load (ModelRunner::LoadModel: checksum, finite weights); a file without a
// checksum gives PredictResult::warning.
//
// Link prediction models: the embeddings of the given nodes (default: every node), or
// the scores of the given pairs (the scorer on the endpoints' embeddings; a pair's score
// does not depend on the others predicted with it either).
//
// Refusals (kInvalidArgument): a node id outside the graph (naming it and its position),
// --fanouts with another number of layers than the model, a model trained on another
// dataset (unless allow_other_dataset) or with other feature/class sizes. Torch-free
// header; one call at a time per process (the model and the caches are the call's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/train_options.h"
#include "storage/base/status.h"

namespace seer {

struct PredictResult {
  // A link prediction model (--task link): classes are -1, the embeddings are the final
  // output (what the scorer compares), and pair_scores holds PredictOptions::pairs' scores.
  bool link = false;
  std::vector<float> pair_scores;    // one logit per pair, in PredictOptions::pairs order
  std::vector<int64_t> nodes;
  std::vector<int64_t> classes;      // per node
  std::vector<float> embeddings;     // nodes × embedding_dim (when asked)
  int64_t embedding_dim = 0;
  std::vector<float> logits;         // nodes × num_classes (PredictOptions::want_logits)
  int64_t num_classes = 0;
  double accuracy = -1;              // against labels.bin over labeled nodes
  int64_t distinct_nodes = 0;        // nodes predicted (each distinct id once)
  int64_t labeled = 0;               // of those, the labelled ones (accuracy's denominator)
  int64_t correct = 0;
  std::vector<int> fanouts;          // the fan-outs used (given, or the model's training ones)
  std::string warning;               // e.g. a model file without checksum ("" = none)
  int rank = 0;                      // this process's rank (data-parallel prediction)
  int world_size = 1;
};

Result<PredictResult> RunPrediction(const PredictOptions& options);

}  // namespace seer
