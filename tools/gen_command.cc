// `seer gen`: writes a synthetic dataset (R-MAT power-law topology with a learnable
// class structure; see storage/prep/synthetic_graph.h).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "flag_binding.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/synthetic_graph.h"

namespace seer::cli {

CommandMain RegisterGenCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "gen", "Generate a synthetic power-law dataset with a learnable node-classification task");
  struct Flags {
    SyntheticGraphConfig config;
    std::string out;
    std::string edge_list_out;
    bool force = false;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  auto& c = flags->config;
  cmd->add_option("--nodes", c.num_nodes, "Number of nodes")->capture_default_str();
  cmd->add_option("--avg-degree", c.avg_degree, "Average in-degree (edges = nodes x avg-degree)")
      ->capture_default_str();
  cmd->add_option("--feature-dim", c.feature_dim, "Feature dimension")->capture_default_str();
  cmd->add_option("--classes", c.num_classes, "Number of classes")->capture_default_str();
  cmd->add_option("--out", flags->out, "Output dataset directory (required unless --edge-list-out)")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "Random seed (same seed, same dataset)")->capture_default_str();
  AddEnumOption(cmd, "--feature-dtype", &c.feature_dtype, kFeatureDtypeNames, "feature dtype", "Feature storage");
  cmd->add_option("--train-fraction", c.train_fraction, "Fraction of nodes in train.bin")->capture_default_str();
  cmd->add_option("--valid-fraction", c.valid_fraction, "Fraction of nodes in valid.bin")->capture_default_str();
  cmd->add_option("--test-fraction", c.test_fraction, "Fraction of nodes in test.bin")->capture_default_str();
  cmd->add_option("--homophily", c.homophily, "Fraction of edges joining same-class nodes")
      ->capture_default_str();
  cmd->add_option("--rmat-a", c.rmat_a, "R-MAT probability a")->capture_default_str();
  cmd->add_option("--rmat-b", c.rmat_b, "R-MAT probability b")->capture_default_str();
  cmd->add_option("--rmat-c", c.rmat_c, "R-MAT probability c (d = 1-a-b-c)")->capture_default_str();
  cmd->add_option("--feature-signal", c.feature_signal,
                  "Class centroid separation (higher = features alone are more informative)")
      ->capture_default_str();
  cmd->add_option("--feature-noise", c.feature_noise, "Per-entry feature noise std-dev")
      ->capture_default_str();
  cmd->add_option("--min-in-degree", c.min_in_degree,
                  "Guaranteed in-neighbors per node (-1: avg-degree/2)")
      ->capture_default_str();
  AddBytesOption(cmd, "--memory-budget", &c.memory_budget_bytes, "Peak memory for the build (e.g. 512M, 4G)");
  cmd->add_option("--edge-list-out", flags->edge_list_out,
                  "Write only the (unsorted) edge list to this file instead of a dataset: "
                  "*.txt/*.csv text, else int64 pairs (input for seer prep)")
      ->capture_default_str();
  cmd->add_flag("--direct-csc", c.direct_csc,
                "Write the CSC directly, destination block by block (no edge sort, no spill, no per-node "
                "table: for graphs whose spill would not fit the disk or whose degree table would not fit "
                "--memory-budget). In-degrees are Poisson draws from R-MAT's destination marginal, so the "
                "graph differs from the default mode's");
  cmd->add_option("--block-nodes", c.block_nodes, "With --direct-csc: destinations generated per block")
      ->capture_default_str();
  cmd->add_flag("--force", flags->force, "Overwrite an existing dataset in --out");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");

  return [flags] {
    auto& config = flags->config;
    config.show_progress = !flags->quiet;
    config.created_by = fmt::format("seer gen --nodes {} --seed {}{}", config.num_nodes, config.seed,
                                    config.direct_csc ? " --direct-csc" : "");
    ProgressReporter clock("gen", 0, "", false);
    if (!flags->edge_list_out.empty()) {
      Status st = WriteSyntheticEdgeList(config, flags->edge_list_out);
      if (!st.ok()) return ReportError("gen", st);
      fmt::print("seer gen: wrote edge list {} in {:.1f} s, peak memory {}\n", flags->edge_list_out,
                 clock.ElapsedSeconds(), FormatBytes(PeakRssBytes()));
      return 0;
    }
    if (flags->out.empty()) return ReportError("gen", "--out DIR is required");
    SweepAtStart({flags->out, RealParentDirectory(flags->out)}, false);
    auto summary = GenerateSyntheticDataset(config, flags->out, flags->force);
    if (!summary.ok()) return ReportError("gen", summary.status());
    fmt::print(
        "seer gen: wrote {}: {} nodes, {} edges, {} features x {}, {} classes, train/valid/test {}/{}/{}, {} in "
        "{:.1f} s, peak memory {} (budget {}, {} {})\n",
        flags->out, summary->num_nodes, summary->num_edges, config.feature_dim, FeatureDtypeName(config.feature_dtype),
        config.num_classes, summary->num_train, summary->num_valid, summary->num_test,
        FormatBytes(summary->bytes_written), clock.ElapsedSeconds(), FormatBytes(PeakRssBytes()),
        FormatBytes(config.memory_budget_bytes), summary->num_partitions,
        config.direct_csc ? "blocks" : "partitions");
    return 0;
  };
}

}  // namespace seer::cli
