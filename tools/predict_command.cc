// `seer predict`: predicted classes (and optionally last-hidden-layer embeddings) for
// given nodes with a model written by `seer train --save-model`, through the same
// out-of-core sampling and gather path as training.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "executor/train_loop.h"
#include "inspector/sampler.h"
#include "storage/base/byte_size.h"
#include "storage/prep/npy.h"

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

}  // namespace

CommandMain RegisterPredictCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("predict", "Predict node classes with a trained model (.npy output)");
  struct Flags {
    std::string dataset;
    std::string model;
    std::string nodes;
    std::string out = "preds.npy";
    std::string embeddings;
    std::string fanouts;
    int64_t batch_size = 1000;
    uint64_t seed = 0;
    int threads = 0;
    std::string io = "auto";
    bool buffered = false;
    bool cpu = false;
    std::string memory_budget = "4G";
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dataset", f->dataset, "Dataset directory")->required();
  cmd->add_option("--model", f->model, "Model file from seer train --save-model")->required();
  cmd->add_option("--nodes", f->nodes, "Node ids (.npy, int64/int32; default: the test split)")->capture_default_str();
  cmd->add_option("--out", f->out, "Predicted classes (.npy int64, one per node)")->capture_default_str();
  cmd->add_option("--embeddings", f->embeddings, "Also write the last hidden layer (.npy float32 nodes x dim)")->capture_default_str();
  cmd->add_option("--fanouts", f->fanouts, "Fan-outs (default: 10 per model layer)")->capture_default_str();
  cmd->add_option("--batch-size", f->batch_size, "Nodes per mini-batch")->capture_default_str();
  cmd->add_option("--seed", f->seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--threads", f->threads, "Sampling threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--io", f->io, "SSD reads: auto | uring | pread")->capture_default_str();
  cmd->add_flag("--buffered", f->buffered, "Buffered reads instead of O_DIRECT");
  cmd->add_flag("--cpu", f->cpu, "Run on the CPU even when a GPU is present");
  cmd->add_option("--memory-budget", f->memory_budget, "Host memory budget")->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "No progress on stderr");
  return [f]() -> int {
    const char* name = "predict";
    PredictOptions o;
    o.dataset_dir = f->dataset;
    o.model_path = f->model;
    if (!f->nodes.empty()) {
      auto nodes = ReadNodeIds(f->nodes);
      if (!nodes.ok()) return ReportError(name, nodes.status());
      o.nodes = std::move(nodes).value();
    }
    if (!f->fanouts.empty()) {
      auto fanouts = ParseFanouts(f->fanouts);
      if (!fanouts.ok()) return ReportError(name, fanouts.status());
      o.fanouts = *fanouts;
    }
    o.batch_size = f->batch_size;
    o.seed = f->seed;
    o.num_threads = f->threads;
    auto io = ParseIoMode(f->io);
    if (!io.ok()) return ReportError(name, io.status());
    o.io = *io;
    o.direct_io = !f->buffered;
    o.use_cuda = !f->cpu;
    auto budget = ParseBytes(f->memory_budget);
    if (!budget.ok()) return ReportError(name, budget.status());
    o.memory_budget_bytes = *budget;
    o.want_embeddings = !f->embeddings.empty();
    o.show_progress = !f->quiet;
    auto result = RunPrediction(o);
    if (!result.ok()) return ReportError(name, result.status());
    Status st = WriteNpy(f->out, "<i8", {static_cast<int64_t>(result->classes.size())}, result->classes.data());
    if (!st.ok()) return ReportError(name, st);
    if (o.want_embeddings) {
      st = WriteNpy(f->embeddings, "<f4", {static_cast<int64_t>(result->nodes.size()), result->embedding_dim},
                    result->embeddings.data());
      if (!st.ok()) return ReportError(name, st);
    }
    if (!f->quiet) {
      std::fprintf(stderr, "seer predict: %zu nodes -> %s", result->nodes.size(), f->out.c_str());
      if (result->accuracy >= 0) std::fprintf(stderr, " (accuracy vs labels %.4f)", result->accuracy);
      std::fprintf(stderr, "\n");
    }
    return 0;
  };
}

}  // namespace seer::cli
