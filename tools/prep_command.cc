// `seer prep`: converts an edge list (+ optional .npy node arrays) or an OGB
// node-property folder into a Seer dataset (storage/prep/dataset_prep.h).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/prep/dataset_prep.h"

namespace seer::cli {

CommandMain RegisterPrepCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "prep",
      "Convert an edge list (text/bin32/bin64/npy, + .npy features/labels/splits) or an OGB "
      "node-property folder into a dataset");
  struct Flags {
    PrepInputs in;
    std::string out;
    std::string edges_format = "auto";
    std::string index_dtype = "auto";
    std::string feature_dtype = "auto";
    std::string memory_budget = "512M";
    PrepOptions options;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  auto& in = flags->in;
  cmd->add_option("--edges", in.edges, "Edge list: one 'src dst' per line (src -> dst: src is an in-neighbor of dst)")
      ->capture_default_str();
  cmd->add_option("--edges-format", flags->edges_format,
                  "auto | text | bin32 | bin64 | npy (auto: *.npy, *.bin32, *.bin64, else text; .gz via gzip)")
      ->capture_default_str();
  cmd->add_option("--num-nodes", in.num_nodes,
                  "Node count (-1: feature rows, else labels, else 1 + largest id)")->capture_default_str();
  cmd->add_option("--features", in.features, "Features .npy, shape (N, F), float16/32/64")->capture_default_str();
  cmd->add_option("--labels", in.labels, "Labels .npy, shape (N,) or (N,1); -1 or NaN = unlabeled")
      ->capture_default_str();
  cmd->add_option("--train", in.train, "Train node ids .npy")->capture_default_str();
  cmd->add_option("--valid", in.valid, "Validation node ids .npy")->capture_default_str();
  cmd->add_option("--test", in.test, "Test node ids .npy")->capture_default_str();
  cmd->add_option("--ogb", in.ogb_dir, "OGB node-property folder (raw/*.csv[.gz], split/<scheme>/)")
      ->capture_default_str();
  cmd->add_option("--ogb-split", in.ogb_split, "OGB split scheme under split/ (empty: the only one)")
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "Output dataset directory")->required();
  cmd->add_flag("--undirected", flags->options.undirected, "Also add the reverse of every edge");
  cmd->add_flag("--dedup", flags->options.dedup, "Drop repeated edges");
  cmd->add_flag("--drop-self-loops", flags->options.drop_self_loops, "Drop v -> v edges");
  cmd->add_option("--index-dtype", flags->index_dtype, "auto | uint32 | int64 (auto: uint32 when N < 2^32)")
      ->capture_default_str();
  cmd->add_option("--feature-dtype", flags->feature_dtype, "auto | float32 | float16 (auto: as the input)")
      ->capture_default_str();
  cmd->add_option("--memory-budget", flags->memory_budget, "Peak memory for the build (e.g. 512M, 4G)")
      ->capture_default_str();
  cmd->add_flag("--force", flags->options.force, "Overwrite an existing dataset in --out");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");

  return [flags] {
    auto& options = flags->options;
    auto format = ParseEdgeListFormat(flags->edges_format);
    if (!format.ok()) return ReportError("prep", format.status().WithContext("--edges-format"));
    flags->in.edges_format = *format;
    if (flags->index_dtype != "auto") {
      auto dtype = ParseIndexDtype(flags->index_dtype);
      if (!dtype.ok()) return ReportError("prep", dtype.status().WithContext("--index-dtype"));
      options.index_dtype = *dtype;
    }
    if (flags->feature_dtype != "auto") {
      auto dtype = ParseFeatureDtype(flags->feature_dtype);
      if (!dtype.ok()) return ReportError("prep", dtype.status().WithContext("--feature-dtype"));
      options.feature_dtype = *dtype;
    }
    auto budget = ParseBytes(flags->memory_budget);
    if (!budget.ok()) return ReportError("prep", budget.status().WithContext("--memory-budget"));
    options.memory_budget_bytes = *budget;
    options.show_progress = !flags->quiet;
    options.created_by = "seer prep";
    ProgressReporter clock("prep", 0, "", false);
    auto summary = PrepareDataset(flags->in, options, flags->out);
    if (!summary.ok()) return ReportError("prep", summary.status());
    const auto& s = *summary;
    std::printf(
        "seer prep: wrote %s: %lld nodes, %lld edges (%s; %lld read, %lld self-loops and %lld "
        "duplicates dropped), %lld features x %s, %lld classes (%lld labeled), train/valid/test "
        "%lld/%lld/%lld, %s in %.1f s (%.2fM edges/s), peak memory %s (budget %s, %lld partitions)\n",
        flags->out.c_str(), static_cast<long long>(s.csc.num_nodes), static_cast<long long>(s.csc.num_edges),
        IndexDtypeName(s.csc.index_dtype), static_cast<long long>(s.csc.input_edges),
        static_cast<long long>(s.csc.self_loops_dropped), static_cast<long long>(s.csc.duplicates_dropped),
        static_cast<long long>(s.feature_dim), FeatureDtypeName(s.feature_dtype),
        static_cast<long long>(s.num_classes), static_cast<long long>(s.num_labeled),
        static_cast<long long>(s.num_train), static_cast<long long>(s.num_valid),
        static_cast<long long>(s.num_test), FormatBytes(s.bytes_written).c_str(), clock.ElapsedSeconds(),
        static_cast<double>(s.csc.input_edges) / 1e6 / std::max(1e-9, clock.ElapsedSeconds()),
        FormatBytes(PeakRssBytes()).c_str(), FormatBytes(options.memory_budget_bytes).c_str(),
        static_cast<long long>(s.csc.num_partitions));
    return 0;
  };
}

}  // namespace seer::cli
