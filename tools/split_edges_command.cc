// `seer split-edges DIR --out OUT [--valid-fraction F] [--test-fraction F] [--seed S]
// [--undirected]`: holds out validation and test edges for link prediction
// (storage/prep/edge_split.h) and writes the dataset without them, plus the held-out
// edges (edges_valid.bin, edges_test.bin). DIR is only read; OUT follows `seer reorder`'s
// rules (a new directory, or an existing dataset only with --force, replaced at the end).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/stale_temp.h"
#include "storage/prep/edge_split.h"

namespace seer::cli {

CommandMain RegisterSplitEdgesCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "split-edges", "Hold out validation and test edges for link prediction (removed from the training topology)");
  struct Flags {
    std::string dir;
    std::string out;
    EdgeSplitOptions options;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  EdgeSplitOptions& o = flags->options;
  cmd->add_option("dir", flags->dir, "Dataset directory to read (left unchanged)")->required();
  cmd->add_option("--out", flags->out, "Where to write the dataset with its edge splits (the input itself with --force)")
      ->required();
  cmd->add_option("--valid-fraction", o.valid_fraction, "Fraction of the candidate edges held out for validation")
      ->capture_default_str();
  cmd->add_option("--test-fraction", o.test_fraction, "Fraction of the candidate edges held out for test")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Random seed (same seed, same split, byte for byte)")->capture_default_str();
  cmd->add_flag("--undirected", o.undirected,
                "The graph is undirected (each edge stored both ways): draw each edge once (src <= dst) and remove "
                "its reverse too");
  cmd->add_option("--eval-negatives", o.eval_negatives,
                  "K fixed evaluation negatives per held-out edge, uniform over the nodes (edges_valid_negatives.bin, "
                  "edges_test_negatives.bin; 0 = none)")
      ->capture_default_str();
  cmd->add_flag("--force", o.force, "Overwrite an existing dataset in --out (it stays intact until the end)");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");
  return [flags] {
    EdgeSplitOptions options = flags->options;
    if (Status st = ValidateEdgeSplitFractions(options.valid_fraction, options.test_fraction); !st.ok()) {
      return ReportError("split-edges", st);
    }
    if (Status st = ValidateEvalNegatives(options.eval_negatives); !st.ok()) return ReportError("split-edges", st);
    options.show_progress = !flags->quiet;
    options.created_by = fmt::format("seer split-edges --valid-fraction {} --test-fraction {} --seed {}{}",
                                     options.valid_fraction, options.test_fraction, options.seed,
                                     options.undirected ? " --undirected" : "");
    if (options.eval_negatives > 0) options.created_by += fmt::format(" --eval-negatives {}", options.eval_negatives);
    SweepAtStart({flags->out, RealParentDirectory(flags->out)}, false);
    auto summary = SplitEdges(flags->dir, flags->out, options);
    if (!summary.ok()) return ReportError("split-edges", summary.status());
    fmt::print(
        "seer split-edges: wrote {}: {} validation and {} test edges held out of {} candidate {}edges (seed {}) in "
        "edges_valid.bin and edges_test.bin; training topology {} of {} edges ({} removed{}); {:.1f} s, peak "
        "memory {}\n",
        flags->out, summary->num_valid, summary->num_test, summary->candidate_edges,
        options.undirected ? "undirected " : "", options.seed, summary->output_edges, summary->input_edges,
        summary->input_edges - summary->output_edges,
        options.undirected ? ": the held-out edges, their copies and reverses" : ": the held-out edges and copies",
        summary->seconds, FormatBytes(PeakRssBytes()));
    if (options.eval_negatives > 0) {
      fmt::print("seer split-edges: {} evaluation negatives per held-out edge in edges_valid_negatives.bin and "
                 "edges_test_negatives.bin (uniform over the {} nodes, not filtered against true edges)\n",
                 options.eval_negatives, summary->num_nodes);
    }
    return 0;
  };
}

}  // namespace seer::cli
