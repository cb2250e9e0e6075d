// FeatureUnits: how a typed dataset's feature rows map onto the rows of ONE feature cache
// (docs/design.md "Typed (heterogeneous) graphs: a cache planned by bytes").
//
// The feature cache, the Belady planner and the hit simulator work on equal-size "cache
// rows" identified by int64 ids. A typed dataset's node types may have rows of different
// sizes (paper 1024 float32 columns, author 128, institute none). Two layouts:
//
//   padded    (Padded): cache row id = global node id; every cache row is the widest
//             type's row, narrower rows zero-padded, featureless nodes cached as zeros.
//             One cache row per node. The device tier (--device-cache) needs it.
//   by bytes  (ByBytes, the default of typed training): the cache is cut into units of
//             U bytes; a node of type t with a row of w_t bytes owns m_t = ceil(w_t / U)
//             consecutive unit ids, a featureless node owns none (never cached, never
//             planned, never read: its row is zeros). Unit ids are laid out type by type,
//             node by node: unit(t, local r, j) = unit_offsets[t] + r * m_t + j.
//             Each unit has exactly its node's reference string, so Belady over units is
//             Belady over bytes: a node's units leave the cache together, except where the
//             cut falls inside one node (its lowest units stay; the next read of that node
//             is still one read, of the whole row). Exact over the unit reference string,
//             the existing planners and oracles unchanged.
//
// U (ChooseUnitBytes): a multiple of the gcd g of the featured types' row bytes, at most the
// narrowest featured row, minimising the cache bytes every node would need
//   sum_t count_t * m_t * (U + kUnitIndexBytes)
// (padding inside the last unit plus 20 B of slot index per unit); ties to the larger U.
// Equal widths: U = the row, m_t = 1. int8 rows (codes + scale + bias) are never split:
// their types must share one width (TypedTrainingView refuses otherwise).
//
// The virtual features file of a layout: unit k at byte k * U (executor/typed_data.h reads
// it). Pure values; thread-safe to share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/base/name_table.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

// --typed-cache NAME (seer train, predict, stats): the layout's name -> padded?
inline constexpr NameValue<bool> kTypedCacheNames[] = {{"bytes", false}, {"padded", true}};

// Slot index + the node id each slot holds, per cache row (cache/feature_cache.h IndexBytes).
inline constexpr int64_t kUnitIndexBytes = 20;

class FeatureUnits {
 public:
  FeatureUnits() = default;
  // One cache row per node of `typed` (a typed manifest), each `row_bytes` (>= every type's).
  static Result<FeatureUnits> Padded(const DatasetManifest& typed, int64_t row_bytes);
  // Units of ChooseUnitBytes(typed). kInvalidArgument when no type has features.
  static Result<FeatureUnits> ByBytes(const DatasetManifest& typed);
  // The layout of a typed run: Padded(typed, view_row_bytes) when `padded` or when no type
  // has features, else ByBytes (what DataPath and `seer stats` both use).
  static Result<FeatureUnits> ForRun(const DatasetManifest& typed, int64_t view_row_bytes, bool padded);
  // The unit size ByBytes picks (see above); 0 when no type has features.
  static int64_t ChooseUnitBytes(const DatasetManifest& typed);

  // Padded layouts (and by-bytes ones where every type has the same row and features):
  // cache row id == node id.
  bool identity() const { return identity_; }
  bool by_bytes() const { return by_bytes_; }
  int64_t unit_bytes() const { return unit_bytes_; }
  int64_t num_units() const { return unit_offsets_.empty() ? 0 : unit_offsets_.back(); }
  int64_t num_nodes() const { return node_offsets_.empty() ? 0 : node_offsets_.back(); }
  int64_t num_types() const { return static_cast<int64_t>(units_per_row_.size()); }
  int64_t units_per_row(int64_t type) const { return units_per_row_[static_cast<size_t>(type)]; }
  int64_t type_row_bytes(int64_t type) const { return type_row_bytes_[static_cast<size_t>(type)]; }
  const std::vector<int64_t>& node_offsets() const { return node_offsets_; }  // T + 1
  const std::vector<int64_t>& unit_offsets() const { return unit_offsets_; }  // T + 1
  // The type of a global node id / of a unit id (binary search over the offsets).
  int64_t TypeOfNode(int64_t node) const;
  int64_t TypeOfUnit(int64_t unit) const;
  int64_t FirstUnit(int64_t node) const;   // -1 for a featureless node
  int64_t UnitsOf(int64_t node) const { return units_per_row_[static_cast<size_t>(TypeOfNode(node))]; }
  int64_t NodeOfUnit(int64_t unit) const;

  // Appends the units of nodes[0..n) to *units, node by node, each node's units ascending
  // (unique nodes give unique units). Identity layouts append the nodes themselves.
  void Expand(const int64_t* nodes, int64_t n, std::vector<int64_t>* units) const;
  // Every node's units in node order, truncated to at most max_units (a ranking of nodes
  // as a ranking of cache rows).
  std::vector<int64_t> ExpandRanking(const std::vector<int64_t>& nodes, int64_t max_units) const;

  // The global node ids that own units, as ascending [lo, hi) ranges (every node for a
  // padded layout; the featured types' ranges by bytes).
  std::vector<std::pair<int64_t, int64_t>> NodesWithUnits() const;

  // The manifest of the cache's rows: num_nodes = num_units, features of unit_bytes in the
  // view's dtype (int8: whole rows). `view` is the TypedTrainingView.
  DatasetManifest CacheRows(const DatasetManifest& view) const;
  // "units of 512 B, paper 8 per row, author 1, institute none".
  std::string Describe(const std::vector<std::string>& type_names) const;

 private:
  bool identity_ = true;
  bool by_bytes_ = false;
  int64_t unit_bytes_ = 0;
  std::vector<int64_t> node_offsets_;
  std::vector<int64_t> unit_offsets_;
  std::vector<int64_t> units_per_row_;
  std::vector<int64_t> type_row_bytes_;  // 0 = featureless
};

}  // namespace seer
