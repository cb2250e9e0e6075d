// `seer predict`: predicted classes (and optionally last-hidden-layer embeddings) for
// given nodes with a model written by `seer train --save-model`, through the same
// out-of-core sampling and gather path as training. Flags are bound to PredictOptions
// (executor/train_options.h).
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "executor/prediction.h"
#include "storage/base/atomic_file.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/node_ids.h"
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

// Original ids, one per line (a dataset prepared with --remap-ids), as nodes.
Result<std::vector<int64_t>> ReadOriginalIds(const std::string& path, const std::vector<std::string>& mapping) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open");
  std::vector<int64_t> nodes;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    const int64_t node = FindNodeId(mapping, line);
    if (node < 0) return InvalidArgument(path + ":" + std::to_string(number) + ": node id '" + line + "' is not in the dataset");
    nodes.push_back(node);
  }
  return nodes;
}

// What predict writes besides the library's options.
struct PredictOutputs {
  std::string nodes_path;
  std::string out_path = "preds.npy";
  std::string embeddings_path;
  std::string ids_out_path;  // "original_id,class" lines; default for remapped datasets
};

Status Predict(PredictOptions o, PredictOutputs files) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(o.dataset_dir));
  std::vector<std::string> mapping;
  if (!dataset.manifest().node_ids.empty()) {
    SEER_ASSIGN_OR_RETURN(mapping, LoadNodeIds(dataset.PathOf(dataset.manifest().node_ids), dataset.manifest().num_nodes));
    if (files.ids_out_path.empty()) {
      const std::string& out = files.out_path;
      files.ids_out_path = (out.size() > 4 && out.compare(out.size() - 4, 4, ".npy") == 0 ? out.substr(0, out.size() - 4) : out) + ".csv";
    }
  } else if (!files.ids_out_path.empty()) {
    return InvalidArgument("--out-ids: " + o.dataset_dir + " has no node-id mapping (prep it with --remap-ids)");
  }
  if (!files.nodes_path.empty()) {
    const bool npy = files.nodes_path.size() > 4 && files.nodes_path.compare(files.nodes_path.size() - 4, 4, ".npy") == 0;
    if (!npy && !mapping.empty()) {
      SEER_ASSIGN_OR_RETURN(o.nodes, ReadOriginalIds(files.nodes_path, mapping));
    } else {
      SEER_ASSIGN_OR_RETURN(o.nodes, ReadNodeIds(files.nodes_path));
    }
  }
  o.want_embeddings = !files.embeddings_path.empty();
  SEER_ASSIGN_OR_RETURN(PredictResult result, RunPrediction(o));
  // Data-parallel: every rank predicted its share and holds the gathered result; rank 0
  // alone writes the files.
  if (result.rank != 0) return Status::Ok();
  const auto num_nodes = static_cast<int64_t>(result.nodes.size());
  SEER_RETURN_IF_ERROR(WriteNpy(files.out_path, "<i8", {num_nodes}, result.classes.data()));
  if (!files.ids_out_path.empty()) {
    std::ofstream csv(files.ids_out_path);
    csv << "id,class\n";
    for (int64_t i = 0; i < num_nodes; ++i) {
      csv << mapping[static_cast<size_t>(result.nodes[static_cast<size_t>(i)])] << ',' << result.classes[static_cast<size_t>(i)] << '\n';
    }
    csv.flush();
    if (!csv) return Status(StatusCode::kInternal, files.ids_out_path + ": write failed");
  }
  if (o.want_embeddings) {
    SEER_RETURN_IF_ERROR(WriteNpy(files.embeddings_path, "<f4", {num_nodes, result.embedding_dim},
                                  result.embeddings.data()));
  }
  if (o.show_progress) {
    fmt::print(stderr, "seer predict: {} nodes -> {}{}", num_nodes, files.out_path,
               files.ids_out_path.empty() ? "" : " and " + files.ids_out_path);
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
  cmd->add_option("--nodes", files->nodes_path,
                  "Node ids (.npy, int64/int32; or, for a --remap-ids dataset, a text file of original ids; "
                  "default: the test split)")
      ->capture_default_str();
  cmd->add_option("--out", files->out_path, "Predicted classes (.npy int64, one per node)")->capture_default_str();
  cmd->add_option("--out-ids", files->ids_out_path,
                  "Also write 'id,class' lines with the original ids (default for a --remap-ids dataset: --out with .csv)")
      ->capture_default_str();
  cmd->add_option("--embeddings", files->embeddings_path, "Also write the last hidden layer (.npy float32 nodes x dim)")
      ->capture_default_str();
  AddFanoutsOption(cmd, "--fanouts", &o->fanouts, "Fan-outs (default: 10 per model layer)");
  AddEnumOption(cmd, "--io", &o->io, kDataIoModeNames, "I/O mode", "SSD reads");
  AddSetFlag(cmd, "--quiet", &o->show_progress, false, "No progress on stderr");
  cmd->add_flag("--allow-other-dataset", o->allow_other_dataset,
                "Predict even when the model records another dataset's identity (refused by default)");
  auto nproc = std::make_shared<int>(1);
  AddDistributedFlags(cmd, o.get(), nproc.get());
  return [o, files, nproc]() -> int {
    if (int launched = LaunchRanksIfAsked("predict", *nproc, *o); launched >= 0) return launched;
    SweepAtStart({});  // dead runs' runtime directories under $TMPDIR
    for (const std::string& out : {files->out_path, files->ids_out_path, files->embeddings_path}) {
      if (out.empty()) continue;
      if (Status st = CheckOutputPath(out); !st.ok()) return ReportError("predict", st);
    }
    Status st = Predict(*o, *files);
    return st.ok() ? 0 : ReportError("predict", st);
  };
}

}  // namespace seer::cli
