// `seer predict`: predicted classes (and optionally last-hidden-layer embeddings) for
// given nodes with a model written by `seer train --save-model`, through the same
// out-of-core sampling and gather path as training. Flags are bound to PredictOptions
// (executor/train_options.h).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "executor/train_loop.h"
#include "storage/prep/npy.h"
#include "flag_binding.h"
#include "train_flags.h"
#include "commands.h"

namespace seer::cli {
namespace {

// Node ids from a 1-D (or N x 1) integer .npy.
Result<std::vector<int64_t>> ReadNodeIds(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(NpyFile file, NpyFile::Open(path));
  const NpyHeader& h = file.header();
  const bool column = h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1);
  if ((h.kind != 'i' && h.kind != 'u') || !column) {
    return InvalidArgument(path + ": node ids must be a 1-D integer array, found " + h.descr + " " +
                           h.ShapeString());
  }
  std::vector<int64_t> ids(static_cast<size_t>(h.num_elements()));
  SEER_RETURN_IF_ERROR(file.ReadAsInt64(0, h.num_elements(), ids.data()));
  return ids;
}

// What predict writes besides the library's options.
struct PredictOutputs {
  std::string nodes_path;
  std::string out_path = "preds.npy";
  std::string embeddings_path;
};

Status Predict(PredictOptions o, const PredictOutputs& files) {
  if (!files.nodes_path.empty()) {
    SEER_ASSIGN_OR_RETURN(o.nodes, ReadNodeIds(files.nodes_path));
  }
  o.want_embeddings = !files.embeddings_path.empty();
  SEER_ASSIGN_OR_RETURN(PredictResult result, RunPrediction(o));
  const auto num_nodes = static_cast<int64_t>(result.nodes.size());
  SEER_RETURN_IF_ERROR(WriteNpy(files.out_path, "<i8", {num_nodes}, result.classes.data()));
  if (o.want_embeddings) {
    SEER_RETURN_IF_ERROR(WriteNpy(files.embeddings_path, "<f4", {num_nodes, result.embedding_dim},
                                  result.embeddings.data()));
  }
  if (o.show_progress) {
    fmt::print(stderr, "seer predict: {} nodes -> {}", num_nodes, files.out_path);
    if (result.accuracy >= 0) fmt::print(stderr, " (accuracy vs labels {:.4f})", result.accuracy);
    fmt::print(stderr, "\n");
  }
  return Status::Ok();
}

}  // namespace

CommandMain RegisterPredictCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("predict", "Predict node classes with a trained model (.npy output)");
  auto o = std::make_shared<PredictOptions>();
  auto files = std::make_shared<PredictOutputs>();
  AddSharedDataPathFlags(cmd, o.get());
  cmd->add_option("--model", o->model_path, "Model file from seer train --save-model")->required();
  cmd->add_option("--nodes", files->nodes_path, "Node ids (.npy, int64/int32; default: the test split)")
      ->capture_default_str();
  cmd->add_option("--out", files->out_path, "Predicted classes (.npy int64, one per node)")->capture_default_str();
  cmd->add_option("--embeddings", files->embeddings_path, "Also write the last hidden layer (.npy float32 nodes x dim)")
      ->capture_default_str();
  AddFanoutsOption(cmd, "--fanouts", &o->fanouts, "Fan-outs (default: 10 per model layer)");
  AddEnumOption(cmd, "--io", &o->io, kIoModeNames, "I/O mode", "SSD reads");
  AddSetFlag(cmd, "--quiet", &o->show_progress, false, "No progress on stderr");
  return [o, files]() -> int {
    Status st = Predict(*o, *files);
    return st.ok() ? 0 : ReportError("predict", st);
  };
}

}  // namespace seer::cli
