// `seer prep`: converts an edge list (+ optional .npy node arrays) or an OGB
// node-property folder into a Seer dataset (storage/prep/dataset_prep.h).
#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "storage/prep/edge_list.h"
#include "flag_binding.h"
#include "storage/base/byte_size.h"
#include "storage/base/parse_number.h"
#include "storage/dataset/node_ids.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/stale_temp.h"
#include "storage/prep/node_reorder.h"
#include "storage/prep/dataset_prep.h"
#include "storage/prep/typed_prep.h"

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

namespace {

// The typed flags of `seer prep --relation ...` (storage/prep/typed_prep.h).
struct TypedFlags {
  std::vector<std::string> relations, node_types, features, labels, train, valid, test, node_ids;
  bool reverse = false;
};

// "KEY=VALUE" of a repeatable typed flag.
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& flag, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(flag + " '" + text + "': expected " +
                           (flag == "--relation" ? "SRC,NAME,DST=FILE" : flag == "--node-type" ? "TYPE=COUNT"
                                                                                                : "TYPE=FILE"));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Result<TypedRelationInput> ParseRelationFlag(const std::string& text) {
  SEER_ASSIGN_OR_RETURN(auto parts, SplitAssignment("--relation", text));
  const std::string& key = parts.first;
  const size_t a = key.find(','), b = a == std::string::npos ? a : key.find(',', a + 1);
  if (b == std::string::npos || key.find(',', b + 1) != std::string::npos) {
    return InvalidArgument("--relation '" + text + "': expected SRC,NAME,DST=FILE (three names before '=')");
  }
  return TypedRelationInput{key.substr(0, a), key.substr(a + 1, b - a - 1), key.substr(b + 1), parts.second};
}

TypedNodeTypeInput& TypeInput(TypedPrepInputs* typed, const std::string& name) {
  for (TypedNodeTypeInput& t : typed->node_types) {
    if (t.name == name) return t;
  }
  TypedNodeTypeInput input;
  input.name = name;
  typed->node_types.push_back(std::move(input));
  return typed->node_types.back();
}

// The per-type flags, each TYPE=VALUE, into typed->node_types (a type once per flag).
Status ParseTypeFlags(const TypedFlags& f, TypedPrepInputs* typed) {
  for (const std::string& text : f.node_types) {
    SEER_ASSIGN_OR_RETURN(auto parts, SplitAssignment("--node-type", text));
    const std::optional<int64_t> count = ParseNumber<int64_t>(parts.second);
    if (!count || *count < 0) return InvalidArgument("--node-type '" + text + "': COUNT must be an integer >= 0");
    TypedNodeTypeInput& t = TypeInput(typed, parts.first);
    if (t.count >= 0) return InvalidArgument("--node-type " + parts.first + " is given twice");
    t.count = *count;
  }
  const std::pair<const char*, const std::vector<std::string>*> files[] = {
      {"--type-features", &f.features}, {"--type-labels", &f.labels}, {"--type-train", &f.train},
      {"--type-valid", &f.valid},       {"--type-test", &f.test},         {"--type-node-ids", &f.node_ids}};
  for (const auto& [flag, values] : files) {
    for (const std::string& text : *values) {
      SEER_ASSIGN_OR_RETURN(auto parts, SplitAssignment(flag, text));
      TypedNodeTypeInput& t = TypeInput(typed, parts.first);
      std::string& slot = flag == std::string("--type-features") ? t.features
                          : flag == std::string("--type-labels") ? t.labels
                          : flag == std::string("--type-train")  ? t.train
                          : flag == std::string("--type-valid")  ? t.valid
                          : flag == std::string("--type-test")   ? t.test
                                                                 : t.node_ids;
      if (!slot.empty()) return InvalidArgument(std::string(flag) + " " + parts.first + " is given twice");
      slot = parts.second;
    }
  }
  return Status::Ok();
}

// Flags of the homogeneous prep that a typed prep does not take.
std::string HomogeneousOnlyFlag(const PrepInputs& in, const PrepOptions& options, const std::string& order) {
  if (!in.edges.empty()) return "--edges";
  if (!in.ogb_dir.empty()) return "--ogb";
  if (!in.features.empty()) return "--features (use --type-features TYPE=FILE)";
  if (!in.labels.empty()) return "--labels (use --type-labels TYPE=FILE)";
  if (!in.train.empty() || !in.valid.empty() || !in.test.empty()) return "--train/--valid/--test (use --type-train ...)";
  if (!in.node_ids.empty()) return "--node-ids";
  if (in.num_nodes >= 0) return "--num-nodes (use --node-type TYPE=COUNT)";
  if (options.undirected) return "--undirected (use --reverse)";
  if (options.index_dtype) return "--index-dtype";
  if (order != "none") return "--order";
  return "";
}

int RunTypedPrep(const PrepInputs& in, const PrepOptions& options, const TypedFlags& f, const std::string& out,
                 const std::string& order, bool quiet) {
  if (const std::string flag = HomogeneousOnlyFlag(in, options, order); !flag.empty()) {
    return ReportError("prep", "--relation (a typed dataset) cannot be combined with " + flag);
  }
  TypedPrepInputs typed;
  for (const std::string& text : f.relations) {
    auto relation = ParseRelationFlag(text);
    if (!relation.ok()) return ReportError("prep", relation.status());
    typed.relations.push_back(std::move(*relation));
  }
  if (Status st = ParseTypeFlags(f, &typed); !st.ok()) return ReportError("prep", st);
  typed.columns = in.columns;
  typed.label_id_col = in.label_id_col;
  typed.label_col = in.label_col;
  typed.split_id_col = in.split_id_col;
  typed.split_fractions = in.split_fractions;
  typed.split_seed = in.split_seed;
  typed.remap_ids = in.remap_ids;
  TypedPrepOptions typed_options;
  typed_options.reverse = f.reverse;
  typed_options.dedup = options.dedup;
  typed_options.drop_self_loops = options.drop_self_loops;
  typed_options.feature_dtype = options.feature_dtype;
  typed_options.num_classes = options.num_classes;
  typed_options.threads = options.threads;
  typed_options.force = options.force;
  typed_options.show_progress = !quiet;
  typed_options.created_by = "seer prep --relation";
  const int64_t start_rss = ResidentBytesNow();
  SweepAtStart({out, RealParentDirectory(out)}, false);
  ProgressReporter clock("prep", 0, "", false);
  auto summary = PrepareTypedDataset(typed, typed_options, out);
  if (!summary.ok()) return ReportError("prep", summary.status());
  const DatasetManifest& m = summary->manifest;
  fmt::print("seer prep: wrote {}: typed dataset ({}): {} nodes, {} edges ({} read, {} self-loops and {} duplicates "
             "dropped), {} in {:.1f} s, peak memory {} ({} above the {} at start; at most {} edges of one relation "
             "in RAM)\n",
             out, m.TypedShape(), m.num_nodes, m.num_edges, summary->input_edges, summary->self_loops_dropped,
             summary->duplicates_dropped, FormatBytes(summary->bytes_written), clock.ElapsedSeconds(),
             FormatBytes(PeakRssBytes()), FormatBytes(std::max<int64_t>(0, PeakRssBytes() - start_rss)),
             FormatBytes(start_rss), summary->max_relation_edges);
  for (size_t i = 0; i < m.node_types.size(); ++i) {
    const DatasetNodeType& t = m.node_types[i];
    fmt::print("  type {}: {} nodes, {}{}{}{}\n", t.name, t.count,
               t.feature_dim == 0 ? std::string("no features")
                                  : fmt::format("features {} x {}", t.feature_dim, FeatureDtypeName(t.feature_dtype)),
               t.labels.empty() ? std::string()
                                : fmt::format(", {} classes ({} labeled)", t.num_classes, summary->num_labeled[i]),
               t.train.empty() ? std::string() : ", splits " + t.train + "/" + t.valid + "/" + t.test,
               t.node_ids.empty() ? std::string() : ", original ids in " + out + "/" + t.node_ids);
  }
  for (const DatasetRelation& r : m.relations) fmt::print("  relation {}: {} edges\n", r.key(), r.num_edges);
  return 0;
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
    TypedFlags typed;
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
  auto& typed = flags->typed;
  cmd->add_option("--relation", typed.relations,
                  "Typed dataset: SRC,NAME,DST=FILE, repeatable: the edges src -> dst of relation NAME from SRC "
                  "nodes to DST nodes (text 'src dst' per line, .gz, CSV/TSV with --src-col/--dst-col, or an (E,2) "
                  ".npy); per-type local ids; not with --edges");
  cmd->add_option("--node-type", typed.node_types,
                  "Typed: TYPE=COUNT, repeatable: the type's node count (default: its feature rows, else 1 + its "
                  "largest id in any relation or table)");
  cmd->add_option("--type-features", typed.features,
                  "Typed: TYPE=FILE.npy, repeatable: (count, F) float16/32/64 features (with --remap-ids: rows "
                  "named by --type-node-ids)");
  cmd->add_option("--type-node-ids", typed.node_ids,
                  "Typed, with --remap-ids: TYPE=FILE, repeatable: line r+1 = the original id of row r of the type's "
                  "--type-features and labels .npy (every node of the type needs a line; ids in no edge are nodes)");
  cmd->add_option("--type-labels", typed.labels,
                  "Typed: TYPE=FILE, repeatable: labels as --labels (.npy, or a table with --label-id-col/--label-col)");
  cmd->add_option("--type-train", typed.train, "Typed: TYPE=FILE, repeatable: train ids of the type, as --train");
  cmd->add_option("--type-valid", typed.valid, "Typed: TYPE=FILE, repeatable: validation ids, as --valid");
  cmd->add_option("--type-test", typed.test, "Typed: TYPE=FILE, repeatable: test ids, as --test");
  cmd->add_flag("--reverse", typed.reverse,
                "Typed: after each relation SRC,NAME,DST also write its reverse DST,rev_NAME,SRC (the transposed "
                "edges)");

  return [flags] {
    if (!flags->typed.relations.empty()) {
      return RunTypedPrep(flags->in, flags->options, flags->typed, flags->out, flags->order, flags->quiet);
    }
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
