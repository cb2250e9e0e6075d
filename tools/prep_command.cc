// `seer prep`: converts an edge list (+ optional .npy node arrays) or an OGB
// node-property folder into a Seer dataset (storage/prep/dataset_prep.h).
#include <algorithm>
#include <fstream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "storage/prep/edge_list.h"
#include "flag_binding.h"
#include "storage/base/byte_size.h"
#include "storage/dataset/node_ids.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/stale_temp.h"
#include "storage/prep/node_reorder.h"
#include "storage/prep/dataset_prep.h"

namespace seer::cli {
namespace {

// After the split sizes: how they were drawn, or, when train is empty, that `seer train`
// will refuse the dataset and the flag that fixes it.
std::string SplitNote(const PrepInputs& in, const PrepSummary& s) {
  if (s.num_train > 0) {
    return s.splits_drawn ? fmt::format(" (drawn among the {} labeled nodes, seed {})", s.num_labeled, in.split_seed)
                          : std::string();
  }
  std::string fix;
  if (s.num_labeled == 0) {
    fix = in.labels.empty() ? "give --labels FILE and --train-fraction F (or --train FILE)"
                            : "no node has a label: check --labels " + in.labels;
  } else if (s.splits_drawn) {
    fix = in.split_fractions.train > 0 ? "raise --train-fraction (too few labeled nodes drawn)"
                                       : "give --train-fraction F";
  } else if (!in.train.empty()) {
    fix = in.train + " names no node of the graph";
  } else {
    fix = "add --train-fraction F (e.g. 0.8, with --valid-fraction/--test-fraction) or --train FILE";
  }
  return " (no train split: `seer train` will refuse this dataset; " + fix + ")";
}

}  // namespace

namespace {

// prep --order: the dataset prep just wrote, renumbered in place (seer reorder's pass).
Status ReorderAfterPrep(const std::string& out, const std::string& order, bool quiet) {
  ReorderOptions reorder;
  SEER_ASSIGN_OR_RETURN(reorder.method, ParseNodeOrderMethod(order));
  reorder.force = true;
  reorder.show_progress = !quiet;
  reorder.created_by = "seer prep --order " + order;
  auto reordered = ReorderDataset(out, out, reorder);
  if (!reordered.ok()) return reordered.status().WithContext("--order " + order);
  fmt::print("seer prep: renumbered by {}: a neighbor list's rows span {:.2f} blocks of 4 KiB on average (was "
             "{:.2f}), {:.1f} s; original numbers in {}/node_order.bin\n",
             order, reordered->blocks_per_list_after, reordered->blocks_per_list_before,
             reordered->order_seconds + reordered->rewrite_seconds, out);
  return Status::Ok();
}

}  // namespace

CommandMain RegisterPrepCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "prep",
      "Convert an edge list (text/bin32/bin64/npy, + .npy features, labels and splits as .npy or "
      "tables) or an OGB node-property folder into a dataset");
  struct Flags {
    PrepInputs in;
    std::string out;
    PrepOptions options;
    std::string order = "none";
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  auto& in = flags->in;
  cmd->add_option("--edges", in.edges, "Edge list: one 'src dst' per line (src -> dst: src is an in-neighbor of dst)")
      ->capture_default_str();
  AddEnumOption(cmd, "--edges-format", &in.edges_format, kEdgeListFormatNames, "edge list format",
                "Edge list format (auto: *.npy, *.bin32, *.bin64, else text; .gz decompressed)");
  cmd->add_option("--src-col", in.columns.src,
                  "CSV/TSV edge list: the source column, by header name or 0-based index (other columns ignored)");
  cmd->add_option("--dst-col", in.columns.dst, "CSV/TSV edge list: the destination column, by header name or index");
  AddEnumOption(cmd, "--edges-header", &in.columns.header, kHeaderRuleNames, "header rule",
                "Whether the edge list's first data line is a header (auto: when a column is named, or when both "
                "its ids are not integers and, with --remap-ids, neither occurs on another line)");
  cmd->add_flag("--remap-ids", in.remap_ids,
                "Ids are any tokens (strings, sparse integers): renumber them 0..N-1 (sorted) and write node_ids.txt");
  cmd->add_option("--node-ids", in.node_ids,
                  "With --remap-ids: text file, line r+1 = the original id of row r of --features/--labels "
                  "(exactly that many rows; every node of the edges needs a line, and ids in no edge are kept as "
                  "nodes of degree 0); .npy --train/--valid/--test then hold rows. Empty: row r = integer id r")
      ->capture_default_str();
  cmd->add_option("--num-nodes", in.num_nodes,
                  "Node count (-1: feature rows, else labels, else 1 + largest id)")->capture_default_str();
  cmd->add_option("--features", in.features, "Features .npy, shape (N, F), float16/32/64")->capture_default_str();
  cmd->add_option("--labels", in.labels,
                  "Labels: .npy of shape (N,) or (N,1) (-1 or NaN = unlabeled), or a table (.csv/.tsv/.txt[.gz]) "
                  "of node id and label (0..C-1; empty = unlabeled); ids are original ids with --remap-ids")
      ->capture_default_str();
  cmd->add_option("--label-id-col", in.label_id_col,
                  "Labels table: the node id column, by header name or 0-based index (default: 0)");
  cmd->add_option("--label-col", in.label_col,
                  "Labels table: the label column, by header name or 0-based index (default: 1)");
  const char* split_help =
      " node ids: .npy (rows of --node-ids with it), or a text/CSV list of node ids, one per line "
      "(original ids with --remap-ids)";
  cmd->add_option("--train", in.train, std::string("Train") + split_help)->capture_default_str();
  cmd->add_option("--valid", in.valid, std::string("Validation") + split_help)->capture_default_str();
  cmd->add_option("--test", in.test, std::string("Test") + split_help)->capture_default_str();
  cmd->add_option("--split-id-col", in.split_id_col,
                  "Text --train/--valid/--test: the id column, by header name (then line 1 is the header) or "
                  "0-based index (default: 0)");
  cmd->add_option("--train-fraction", in.split_fractions.train,
                  "Draw train.bin: this fraction of the labeled nodes (as seer gen; not with --train/--valid/--test)")
      ->capture_default_str();
  cmd->add_option("--valid-fraction", in.split_fractions.valid, "Draw valid.bin: this fraction of the labeled nodes")
      ->capture_default_str();
  cmd->add_option("--test-fraction", in.split_fractions.test, "Draw test.bin: this fraction of the labeled nodes")
      ->capture_default_str();
  cmd->add_option("--split-seed", in.split_seed, "Seed of the drawn splits (same seed, same splits)")
      ->capture_default_str();
  cmd->add_option("--num-classes", flags->options.num_classes,
                  "Number of classes (0: 1 + the largest label, which must then be below 100000)")
      ->capture_default_str();
  cmd->add_option("--ogb", in.ogb_dir, "OGB node-property folder (raw/*.csv[.gz], split/<scheme>/)")
      ->capture_default_str();
  cmd->add_option("--ogb-split", in.ogb_split, "OGB split scheme under split/ (empty: the only one)")
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "Output dataset directory")->required();
  cmd->add_flag("--undirected", flags->options.undirected, "Also add the reverse of every edge");
  cmd->add_flag("--dedup", flags->options.dedup, "Drop repeated edges");
  cmd->add_flag("--drop-self-loops", flags->options.drop_self_loops, "Drop v -> v edges");
  AddOptionalEnumOption(cmd, "--index-dtype", &flags->options.index_dtype, kIndexDtypeNames, "index dtype",
                        "Index type of indices.bin (auto: uint32 when N < 2^32)");
  AddOptionalEnumOption(cmd, "--feature-dtype", &flags->options.feature_dtype, kFeatureDtypeNames, "feature dtype",
                        "Feature storage (auto: as the input)");
  cmd->add_flag("--allow-non-finite", flags->options.allow_non_finite,
                "Store NaN/inf feature values, and values beyond --feature-dtype's range as +-inf, instead of "
                "refusing them (they are counted)");
  AddBytesOption(cmd, "--memory-budget", &flags->options.memory_budget_bytes,
                 "Peak memory for the build (e.g. 512M, 4G)");
  cmd->add_option("--threads", flags->options.threads, "Threads for parsing and the CSC build (0: every core)")
      ->capture_default_str();
  cmd->add_option("--order", flags->order,
                  "Then renumber the nodes for read locality, as `seer reorder` does: none | bfs | degree")
      ->check(CLI::IsMember({"none", "bfs", "degree"}))
      ->capture_default_str();
  cmd->add_flag("--force", flags->options.force, "Overwrite an existing dataset in --out");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");

  return [flags] {
    auto& options = flags->options;
    options.show_progress = !flags->quiet;
    options.created_by = "seer prep";
    const int64_t start_rss = ResidentBytesNow();
    // Leftovers of killed runs: temp files and spill dirs in --out, --force staging beside it.
    SweepAtStart({flags->out, RealParentDirectory(flags->out)}, false);
    ProgressReporter clock("prep", 0, "", false);
    auto summary = PrepareDataset(flags->in, options, flags->out);
    if (!summary.ok()) return ReportError("prep", summary.status());
    const auto& s = *summary;
    std::string not_in_graph;
    for (const auto& [path, count] : s.ids_not_in_graph) {
      not_in_graph += fmt::format("; {} ids of {} are not nodes of the graph (skipped)", count, path);
    }
    if (!s.detected_header.empty()) {
      not_in_graph += fmt::format("; {}:{} '{}' read as a header (its ids are not integers and occur on no other "
                                  "line; --edges-header no reads it as an edge)",
                                  flags->in.edges, s.detected_header_line, EscapeId(s.detected_header, 80));
    }
    if (s.comments_after_data > 0) {
      not_in_graph += fmt::format("; {} lines of {} after the first edge start with '#' or '%' and were skipped as "
                                  "comments (ids starting so need a header naming the columns)",
                                  s.comments_after_data, flags->in.edges);
    }
    if (s.non_finite_kept + s.overflowed_to_inf > 0) {
      not_in_graph += fmt::format("; --allow-non-finite: {} NaN/inf feature values kept, {} values beyond {} "
                                  "stored as +-inf",
                                  s.non_finite_kept, s.overflowed_to_inf, FeatureDtypeName(s.feature_dtype));
    }
    fmt::print(
        "seer prep: wrote {}: {} nodes, {} edges ({}; {} read, {} self-loops and {} duplicates dropped), {} "
        "features x {}, {} classes ({} labeled), train/valid/test {}/{}/{}{}, {} in {:.1f} s ({:.2f}M edges/s), "
        "peak memory {} ({} above the {} the program takes at start; budget {}, {} partitions){}{}{}\n",
        flags->out, s.csc.num_nodes, s.csc.num_edges, IndexDtypeName(s.csc.index_dtype), s.csc.input_edges,
        s.csc.self_loops_dropped, s.csc.duplicates_dropped, s.feature_dim, FeatureDtypeName(s.feature_dtype),
        s.num_classes, s.num_labeled, s.num_train, s.num_valid, s.num_test, SplitNote(flags->in, s),
        FormatBytes(s.bytes_written),
        clock.ElapsedSeconds(), static_cast<double>(s.csc.input_edges) / 1e6 / std::max(1e-9, clock.ElapsedSeconds()),
        FormatBytes(PeakRssBytes()), FormatBytes(std::max<int64_t>(0, PeakRssBytes() - start_rss)),
        FormatBytes(start_rss), FormatBytes(options.memory_budget_bytes), s.csc.num_partitions,
        flags->in.remap_ids ? fmt::format(", original ids in {}/node_ids.txt", flags->out) : std::string(),
        flags->in.node_ids.empty()
            ? std::string()
            : fmt::format("; {} ids of {} are in no edge (nodes of degree 0)", s.nodes_without_edges,
                          flags->in.node_ids),
        not_in_graph);
    if (flags->order != "none") {
      if (Status st = ReorderAfterPrep(flags->out, flags->order, flags->quiet); !st.ok()) return ReportError("prep", st);
    }
    return 0;
  };
}

}  // namespace seer::cli
