// `seer gen`: writes a synthetic dataset (R-MAT power-law topology with a learnable
// class structure; see storage/prep/synthetic_graph.h), or with --hetero a typed one with
// an IGBH-like schema (storage/prep/hetero_graph.h).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "flag_binding.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/hetero_graph.h"
#include "storage/prep/synthetic_graph.h"

namespace seer::cli {
namespace {

// The flags only one kind of `seer gen` reads: given to the other kind, they are refused.
constexpr const char* kHomogeneousOnlyFlags[] = {"--nodes",  "--avg-degree",    "--rmat-a",        "--rmat-b",
                                                 "--rmat-c", "--min-in-degree", "--memory-budget", "--edge-list-out",
                                                 "--direct-csc"};
constexpr const char* kHeteroOnlyFlags[] = {"--papers",           "--authors",           "--institutes",
                                            "--fos",              "--cites-per-paper",   "--authors-per-paper",
                                            "--institutes-per-author", "--topics-per-paper", "--featureless",
                                            "--no-reverse",       "--skew",              "--block-edges"};

// seer gen --hetero: the flags both kinds share are copied from the homogeneous config
// when given (the typed generator has its own defaults), then the typed dataset is written.
int RunHeteroGen(CLI::App* cmd, const SyntheticGraphConfig& shared, HeteroGraphConfig config, const std::string& out,
                 bool force, bool quiet) {
  for (const char* flag : kHomogeneousOnlyFlags) {
    if (cmd->count(flag) > 0) return ReportError("gen", std::string(flag) + " does not apply to --hetero");
  }
  if (out.empty()) return ReportError("gen", "--out DIR is required");
  if (cmd->count("--feature-dim") > 0) config.feature_dim = shared.feature_dim;
  if (cmd->count("--feature-dtype") > 0) config.feature_dtype = shared.feature_dtype;
  if (cmd->count("--classes") > 0) config.num_classes = shared.num_classes;
  if (cmd->count("--seed") > 0) config.seed = shared.seed;
  if (cmd->count("--homophily") > 0) config.homophily = shared.homophily;
  if (cmd->count("--feature-signal") > 0) config.feature_signal = shared.feature_signal;
  if (cmd->count("--feature-noise") > 0) config.feature_noise = shared.feature_noise;
  if (cmd->count("--block-nodes") > 0) config.block_nodes = shared.block_nodes;
  if (cmd->count("--train-fraction") + cmd->count("--valid-fraction") + cmd->count("--test-fraction") > 0) {
    config.train_fraction = shared.train_fraction;  // all three, as for the homogeneous kind
    config.valid_fraction = shared.valid_fraction;
    config.test_fraction = shared.test_fraction;
  }
  config.show_progress = !quiet;
  config.created_by = fmt::format("seer gen --hetero --papers {} --seed {}", config.num_papers, config.seed);
  ProgressReporter clock("gen", 0, "", false);
  SweepAtStart({out, RealParentDirectory(out)}, false);
  auto summary = GenerateHeteroDataset(config, out, force);
  if (!summary.ok()) return ReportError("gen", summary.status());
  const DatasetManifest& m = summary->manifest;
  std::string types;
  for (const DatasetNodeType& t : m.node_types) {
    types += fmt::format("{}{} {}", types.empty() ? "" : ", ", t.count, t.name);
  }
  fmt::print(
      "seer gen: wrote {}: typed, {} ({}), {} nodes, {} edges, {} features x {}{}, {} paper classes, "
      "papers train/valid/test {}/{}/{}, {} in {:.1f} s, peak memory {} (largest block {} edges)\n",
      out, m.TypedShape(), types, summary->num_nodes, summary->num_edges, config.feature_dim,
      FeatureDtypeName(config.feature_dtype),
      config.featureless.empty() ? "" : " (none for " + fmt::format("{}", fmt::join(config.featureless, ", ")) + ")",
      config.num_classes, summary->num_train, summary->num_valid, summary->num_test,
      FormatBytes(summary->bytes_written), clock.ElapsedSeconds(), FormatBytes(PeakRssBytes()),
      summary->max_block_edges);
  return 0;
}

}  // namespace

CommandMain RegisterGenCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "gen", "Generate a synthetic power-law dataset with a learnable node-classification task");
  struct Flags {
    SyntheticGraphConfig config;
    std::string out;
    std::string edge_list_out;
    bool force = false;
    bool quiet = false;
    bool hetero = false;
    HeteroGraphConfig hetero_config;
    bool no_reverse = false;
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
  auto& h = flags->hetero_config;
  cmd->add_flag("--hetero", flags->hetero,
                "Write a typed dataset with an IGBH-like schema (paper, author, institute, fos; cites, written_by, "
                "affiliated_with, topic and their reverses; learnable paper labels), CSC block by block in bounded "
                "memory. Its defaults: --papers 10000, --feature-dim 128, --classes 19, train/valid/test fractions "
                "0.6/0.2/0.2; --feature-dtype, --seed, --homophily, --feature-signal/-noise and --block-nodes apply");
  cmd->add_option("--papers", h.num_papers, "With --hetero: papers")->capture_default_str();
  cmd->add_option("--authors", h.num_authors, "With --hetero: authors (-1: as many as papers)")->capture_default_str();
  cmd->add_option("--institutes", h.num_institutes, "With --hetero: institutes (-1: papers / 1000, at least 1)")
      ->capture_default_str();
  cmd->add_option("--fos", h.num_fos, "With --hetero: fields of study (-1: papers / 100, at least 1)")
      ->capture_default_str();
  cmd->add_option("--cites-per-paper", h.cites_per_paper, "With --hetero: expected citations per paper")
      ->capture_default_str();
  cmd->add_option("--authors-per-paper", h.authors_per_paper, "With --hetero: expected authors per paper")
      ->capture_default_str();
  cmd->add_option("--institutes-per-author", h.institutes_per_author,
                  "With --hetero: expected institutes per author")
      ->capture_default_str();
  cmd->add_option("--topics-per-paper", h.topics_per_paper, "With --hetero: expected fields of study per paper")
      ->capture_default_str();
  cmd->add_option("--featureless", h.featureless,
                  "With --hetero: node types written without features, e.g. institute,fos")
      ->delimiter(',');
  cmd->add_flag("--no-reverse", flags->no_reverse, "With --hetero: only the four forward relations");
  cmd->add_option("--skew", h.skew,
                  "With --hetero: degree skew, the probability of a 0 bit when an endpoint is drawn (0.5: uniform)")
      ->capture_default_str();
  cmd->add_option("--block-edges", h.block_edges, "With --hetero: target edges per block (bounds the memory)")
      ->capture_default_str();

  return [flags, cmd] {
    if (flags->hetero) {
      flags->hetero_config.reverse = !flags->no_reverse;
      return RunHeteroGen(cmd, flags->config, flags->hetero_config, flags->out, flags->force, flags->quiet);
    }
    for (const char* flag : kHeteroOnlyFlags) {
      if (cmd->count(flag) > 0) return ReportError("gen", std::string(flag) + " needs --hetero");
    }
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
