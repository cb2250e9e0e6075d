// Conversion of a user's graph into a Seer dataset (what `seer prep` runs).
// Inputs: an edge list (storage/prep/edge_list.h formats) plus optional .npy node arrays
// (features N×F float16/32/64, labels N or N×1 int/float with NaN = unlabeled, split id
// arrays) or text tables keyed by node id (a labels table "id,label", split id lists:
// storage/prep/node_tables.h), or an OGB node-property folder:
//   raw/edge.csv[.gz]  raw/num-node-list.csv[.gz] (optional)  raw/node-feat.csv[.gz]
//   raw/node-label.csv[.gz]  split/<scheme>/{train,valid,test}.csv[.gz]
// The node count is --num-nodes, else the feature rows, else the label count, else
// OGB's num-node-list, else 1 + the largest edge id; every array must agree with it.
// Splits are given (arrays, id lists, OGB's) or drawn among the labeled nodes by fraction
// with `seer gen`'s rule (storage/prep/node_split.h). Topology goes through the external
// CSC builder (memory_budget_bytes); node arrays are streamed in chunks. Every input error is one line naming the file and the position,
// and no dataset.json is written unless everything succeeded. Blocking; parsing, degree
// counting, placement and sorting run on `threads` TBB threads (the output does not
// depend on how many).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/prep/csc_builder.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/edge_list.h"
#include "storage/prep/id_remap.h"
#include "storage/prep/node_split.h"
#include "storage/base/status.h"

namespace seer {

struct PrepInputs {
  std::string edges;                        // edge list file (not with ogb_dir)
  EdgeListFormat edges_format = EdgeListFormat::kAuto;
  TextColumns columns;                      // --src-col/--dst-col of a CSV/TSV edge list
  int64_t num_nodes = -1;
  std::string features;                     // .npy
  // Labels: a .npy array, or (any other name) a text table: label_id_col, label_col
  // name (or index) its id and label columns ("": columns 0 and 1).
  std::string labels;
  std::string label_id_col, label_col;
  // Splits: .npy arrays (node ids, or rows with node_ids), or (any other name) text
  // lists of node ids (original ids with remap_ids), split_id_col naming the column.
  std::string train, valid, test;
  std::string split_id_col;
  // Any fraction > 0: train/valid/test drawn among the labeled nodes (not with split
  // files or OGB splits; needs labels).
  SplitFractions split_fractions;
  uint64_t split_seed = 1;
  std::string ogb_dir;                      // OGB node-property folder
  std::string ogb_split;                    // split/<scheme>; "" = the only one present
  // Ids of the (text) edge list are arbitrary tokens: renumber them 0..N-1 in id order
  // (storage/dataset/node_ids.h) and write node_ids.txt; ids that node_ids.txt could not
  // give back (a '\r' or NUL byte, invalid UTF-8, a blank at either end) are refused
  // naming the file and line. Which row of the node arrays each node takes
  // (storage/prep/node_rows.h): with `node_ids`, a text file whose line r+1 is the
  // original id of row r (features/labels have exactly its line count of rows, split
  // arrays list rows; every node of the edges needs a line, and every id of the file is
  // a node: those in no edge have degree 0, counted in PrepSummary::nodes_without_edges);
  // without it ids must be integers, row r belongs to original id r (any row count
  // covering the largest id; rows of ids in no edge are skipped) and split arrays list
  // original ids.
  bool remap_ids = false;
  std::string node_ids;  // needs remap_ids
};

// Without --num-classes, labels must be below this (a sanity limit against a stray value).
inline constexpr int64_t kMaxAutoClasses = 100000;

struct PrepOptions {
  bool undirected = false;
  bool dedup = false;
  bool drop_self_loops = false;
  std::optional<IndexDtype> index_dtype;      // nullopt: auto
  std::optional<FeatureDtype> feature_dtype;  // nullopt: the input's (float64 -> float32)
  int64_t memory_budget_bytes = int64_t{512} << 20;
  // Number of classes: 0 = 1 + the largest label, which must be below kMaxAutoClasses
  // (a label of 1e9 is refused, not turned into 10^9 classes); > 0 = labels must be
  // below it and the manifest records it (classes without a labeled node allowed).
  int64_t num_classes = 0;
  // Features that are NaN/inf in the input, or finite but beyond the stored dtype (70000
  // as float16, 1e300 from float64), are refused naming the file, row and column; true
  // stores them (as NaN/±inf; int8 rows: their finite range) and counts them.
  bool allow_non_finite = false;
  int threads = 0;                            // 0: every core (TBB's default)
  bool force = false;
  bool show_progress = false;
  std::string created_by = "seer prep";
};

struct PrepSummary {
  CscBuildStats csc;
  int64_t feature_dim = 0;
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  int64_t num_classes = 0;
  int64_t num_labeled = 0;
  int64_t num_train = 0, num_valid = 0, num_test = 0;
  int64_t nodes_without_edges = 0;    // ids of PrepInputs::node_ids in no edge: nodes of degree 0
  // --remap-ids: the edge list's first line read as a header by the header rule's
  // detection (storage/prep/edge_list.h; "" when none or declared) and its line number;
  // comment lines after the first data line.
  std::string detected_header;
  int64_t detected_header_line = 0;
  int64_t comments_after_data = 0;
  // allow_non_finite: NaN/inf feature values of the input stored, and finite values
  // beyond the stored dtype stored as ±inf.
  int64_t non_finite_kept = 0, overflowed_to_inf = 0;
  bool splits_drawn = false;          // by PrepInputs::split_fractions
  // Text tables (labels, split lists) with ids that are not nodes: (path, distinct ids).
  std::vector<std::pair<std::string, int64_t>> ids_not_in_graph;
  int64_t bytes_written = 0;
};

Result<PrepSummary> PrepareDataset(const PrepInputs& inputs, const PrepOptions& options,
                                   const std::string& out_dir);

}  // namespace seer
