// `seer prep --relation SRC,NAME,DST=FILE ...`: a typed (heterogeneous) dataset
// (docs/formats.md "Typed datasets") from one edge list per relation and per-type node
// tables.
//
// Inputs per relation: a text edge list ('src dst' per line, ".gz" too), a CSV/TSV table
// (columns by --src-col/--dst-col, the same for every relation; default the first two),
// or an (E, 2)/(2, E) integer .npy: the readers and header rule of
// storage/prep/edge_list.h. Edge src -> dst: src is a SRC node, dst a DST node, and the
// relation is stored as a CSC over DST with SRC local ids, each neighbor list sorted
// ascending (so the output does not depend on the input order).
// Node types, in manifest order: as they first appear in the relations (src, then dst),
// then those only named by a per-type option, in the order given.
// Counts: a type's `count` when given (ids must be below it: an id beyond is refused
// naming the file, line and type), else the feature rows, else 1 + the largest id of the
// type in any relation or table (and at least a labels .npy's length).
// Ids (remap_ids false): non-negative integers, node k = id k. With remap_ids: any
// tokens (text edge lists and tables only), renumbered per type in the order of
// storage/dataset/node_ids.h (integers by value, then other tokens by bytes: the order
// the node_ids file format needs), over the relations' ids and then the node tables'
// ids (ids only in a table are nodes of degree 0); each type's original ids go to
// TYPE.node_ids.txt (DatasetNodeType::node_ids). The same string in two types is two
// nodes. A header of a table without a named column is recognised by edge_list.h's rule
// (both fields not integers and neither occurs on another line of that file).
// Features (.npy, (count, F), float16/32/64; stored as feature_dtype, else float16 for
// float16 input and float32 otherwise); with remap_ids they need the type's node_ids
// file naming each row's id. Labels: a (count,) .npy (-1/NaN = unlabeled; with
// remap_ids rows as the features') or a table
// (id, label columns: label_id_col/label_col; an empty label = unlabeled). Splits: id
// lists (.npy of ids without remap_ids, or text, split_id_col), or drawn among each
// labeled type's labeled nodes by fraction with node_split.h's rule (types with given
// splits excepted). A table id that is not a node of its type (beyond a given count) is
// refused naming the file and line.
// Reverses (reverse): after each relation, DST,rev_NAME,SRC holding exactly the
// transposed edges (the rule of hetero_graph.h's reverses; "rev_" + name).
// dedup drops repeated (src, dst) pairs; drop_self_loops drops v -> v within one type.
//
// Memory: the topology is built in RAM ONE relation at a time: 16 B per edge of the
// largest relation (exact: counted in a first pass) + 8 B per destination node; labels
// and splits 5 B per node of a type; features in 4 MiB chunks; with remap_ids a hash map
// of every distinct id of every type (about 64 B + the id's length per id) and, with a
// node_ids file, 8 B per node (its row). Every input
// is read twice (a first pass for counts, id ranges and ids, so that an input error
// leaves no output), relations on the caller's TBB arena (parsing).
// Errors are one line naming the file and position; nothing is written before the
// first pass succeeds, and DatasetWriter commits everything or leaves no dataset (an
// --out this call created is removed again). Blocking; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/edge_list.h"
#include "storage/prep/node_split.h"

namespace seer {

struct TypedRelationInput {
  std::string src, name, dst;  // node type names (ValidTypeName)
  std::string path;            // edge list
  std::string key() const { return src + "__" + name + "__" + dst; }
};

// Per-type options (--node-type, --type-features, ...); a type named only by relations
// needs none.
struct TypedNodeTypeInput {
  std::string name;
  int64_t count = -1;  // -1: from the inputs (above)
  // (Each with an initializer, so TypedNodeTypeInput{name, count} names what it sets.)
  std::string features{}, labels{}, train{}, valid{}, test{};
  // With remap_ids (--type-node-ids): line r+1 is the original id of row r of `features`
  // and of a labels .npy (node_rows.h's file rule: one id per line, blanks trimmed, each
  // once; every id is a node, every node of the type needs a line).
  std::string node_ids{};
};

struct TypedPrepInputs {
  std::vector<TypedRelationInput> relations;  // at least one
  std::vector<TypedNodeTypeInput> node_types;
  TextColumns columns;                         // every relation table's endpoint columns
  std::string label_id_col, label_col;         // labels tables ("": columns 0 and 1)
  std::string split_id_col;                    // split lists ("": column 0)
  SplitFractions split_fractions;              // drawn splits (types without given ones)
  uint64_t split_seed = 1;
  bool remap_ids = false;
};

struct TypedPrepOptions {
  bool reverse = false;
  bool dedup = false;
  bool drop_self_loops = false;
  std::optional<FeatureDtype> feature_dtype;  // nullopt: the input's (float64 -> float32)
  int64_t num_classes = 0;                    // per labeled type; 0: 1 + its largest label
  int threads = 0;                            // 0: every core
  bool force = false;
  bool show_progress = false;
  std::string created_by = "seer prep";
};

struct TypedPrepSummary {
  DatasetManifest manifest;  // as committed
  int64_t input_edges = 0;   // read from the relation files
  int64_t self_loops_dropped = 0, duplicates_dropped = 0;  // per forward relation, summed
  int64_t max_relation_edges = 0;  // the most edges held in RAM at once
  std::vector<int64_t> num_labeled;  // per node type, manifest order
  int64_t bytes_written = 0;
};

// "rev_" + name: the name of a relation's reverse.
std::string ReverseRelationName(const std::string& name);

Result<TypedPrepSummary> PrepareTypedDataset(const TypedPrepInputs& inputs, const TypedPrepOptions& options,
                                             const std::string& out_dir);

}  // namespace seer
