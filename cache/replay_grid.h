// ReplayGrid: `seer stats` as a library call. Replays a recorded trace (the node ids of
// every batch, grouped by superbatch) under several feature-cache policies and
// capacities with SimulatePolicy (cache/hit_simulator.h) and returns one PolicyStats per
// (policy, capacity): misses, hit ratio, fill and blocks/bytes read from features.bin.
//
// Belady is replayed either over the whole trace at once (BeladyScope::kTrace: the
// lower bound no policy can beat at the same capacity) or per recorded superbatch with
// carried state (kSuperbatch: what training does). presc ranks nodes by the visit counts
// of the trace's first presc_epochs epochs; static-degree by out-degree (read from
// indices.bin); belady's tie rule and fill use out-degree scores (MakeBeladyNodeScores,
// as training does). `none` has no capacity and is replayed once.
//
// Typed datasets (storage/dataset/typed_target.h): the grid is created with the manifest
// the feature cache is of — TypedTrainingView, as training caches it: rows of the view's
// row bytes over global ids, num_nodes of every type — and replays exactly as above:
// belady's scores and static-degree's ranking are out-degrees over every relation
// (MakeBeladyNodeScores), the block size is the first featured type's file alignment.
// Every PolicyStats then also counts accesses and misses per node type (type_accesses,
// type_misses, in manifest order: type_names()). By default the cache is replayed by bytes
// (storage/dataset/feature_units.h, as training caches it): the trace's nodes become their
// units, capacities and every count are in units (a featureless type: none);
// options.typed_rows_padded replays one padded row per node instead.
//
// Create() checks the options and every node id against the dataset; Run() blocks and
// is single-threaded apart from the planner. The Dataset must outlive the grid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/hit_simulator.h"
#include "cache/policies.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/feature_units.h"

namespace seer {

enum class BeladyScope { kTrace, kSuperbatch };
inline constexpr NameValue<BeladyScope> kBeladyScopeNames[] = {{"trace", BeladyScope::kTrace},
                                                               {"superbatch", BeladyScope::kSuperbatch}};

// A cache size as people write it: "5%" of the nodes, "12345" rows (digits only), or
// bytes "512M", "2GiB", "4096B" (rounded down to whole feature rows).
struct CacheCapacity {
  enum class Unit { kPercentOfNodes, kRows, kBytes };
  Unit unit = Unit::kRows;
  double percent = 0;  // kPercentOfNodes: 0..100
  int64_t count = 0;   // kRows: rows; kBytes: bytes
  std::string text;    // as written

  int64_t Rows(int64_t num_nodes, int64_t row_bytes) const;
};
// kInvalidArgument naming the text ("bad capacity '150%' ...").
Result<CacheCapacity> ParseCacheCapacity(const std::string& text);
// Comma-separated lists (blanks around items and empty items ignored).
Result<std::vector<CacheCapacity>> ParseCacheCapacities(const std::string& comma_list);
Result<std::vector<PolicyKind>> ParsePolicyKinds(const std::string& comma_list);

struct ReplayGridOptions {
  std::vector<CacheCapacity> capacities = {
      {CacheCapacity::Unit::kPercentOfNodes, 1, 0, "1%"},
      {CacheCapacity::Unit::kPercentOfNodes, 5, 0, "5%"},
      {CacheCapacity::Unit::kPercentOfNodes, 10, 0, "10%"},
      {CacheCapacity::Unit::kPercentOfNodes, 20, 0, "20%"}};
  std::vector<PolicyKind> policies = AllPolicyKinds();  // repeats are replayed once
  int64_t presc_epochs = 1;       // >= 1
  PlannerDevice planner = PlannerDevice::kAuto;
  BeladyScope belady_scope = BeladyScope::kTrace;
  int64_t block_bytes = 0;        // read granularity of features.bin; 0 = its O_DIRECT alignment
  // Block-granular reads (`--read-block`, cache/read_blocks.h): > 0 = reads are counted in
  // blocks of this size (block_bytes must be 0 or equal) and belady plans the block rule.
  int64_t read_block_bytes = 0;
  bool show_progress = true;      // one progress line per run on stderr
  // Typed datasets: replay the cache with rows padded to the widest type's (--typed-cache
  // padded) instead of by bytes (storage/dataset/feature_units.h), as training would.
  bool typed_rows_padded = false;
};

// The node ids of a recorded trace: superbatches[k][b] = batch b of superbatch k, and
// epochs[k] = the epoch superbatch k belongs to.
struct RecordedTrace {
  std::vector<std::vector<std::vector<int64_t>>> superbatches;
  std::vector<int64_t> epochs;
};

class ReplayGrid {
 public:
  // trace_name names the trace in errors (an id outside the dataset is kCorrupt).
  static Result<ReplayGrid> Create(const Dataset& dataset, RecordedTrace trace,
                                   const ReplayGridOptions& options, const std::string& trace_name);
  // The cache rows are `view`'s (num_nodes rows of view.feature_row_bytes()): a typed
  // dataset's TypedTrainingView; for a homogeneous dataset, its own manifest.
  static Result<ReplayGrid> Create(const Dataset& dataset, const DatasetManifest& view, RecordedTrace trace,
                                   const ReplayGridOptions& options, const std::string& trace_name);

  // Moves keep the grid's id spans valid (they point into the trace's own vectors).
  ReplayGrid(ReplayGrid&&) = default;
  ReplayGrid& operator=(ReplayGrid&&) = default;
  ReplayGrid(const ReplayGrid&) = delete;
  ReplayGrid& operator=(const ReplayGrid&) = delete;

  // Every (policy, capacity): policies in option order (repeats dropped), capacities
  // ascending; `none` once, at the smallest capacity.
  Result<std::vector<PolicyStats>> Run() const;

  const std::vector<PolicyKind>& policies() const { return policies_; }
  const std::vector<int64_t>& capacity_rows() const { return capacity_rows_; }  // sorted, unique
  int64_t num_superbatches() const { return static_cast<int64_t>(trace_.superbatches.size()); }
  int64_t num_batches() const { return static_cast<int64_t>(whole_.size()); }
  int64_t num_accesses() const { return accesses_; }
  int64_t row_bytes() const { return row_bytes_; }
  int64_t block_bytes() const { return block_bytes_; }
  int64_t num_nodes() const { return view_.num_nodes; }  // the cache's rows (typed by bytes: units)
  // A typed dataset's cache layout (identity for homogeneous datasets and padded rows).
  const FeatureUnits& units() const { return units_; }
  // Typed datasets: the node types (manifest order) and their T + 1 global id offsets;
  // empty for a homogeneous dataset.
  std::vector<std::string> type_names() const;
  const std::vector<int64_t>& type_offsets() const { return type_offsets_; }

 private:
  ReplayGrid() = default;
  Result<std::vector<int64_t>> Ranking(PolicyKind kind) const;

  const Dataset* dataset_ = nullptr;
  DatasetManifest view_;               // the cache's rows (the dataset's manifest, a typed view, or its units)
  std::vector<int64_t> type_offsets_;  // typed: T + 1, of the cache's rows
  FeatureUnits units_;                 // typed: the cache's layout (identity otherwise)
  ReplayGridOptions options_;
  RecordedTrace trace_;
  std::vector<std::vector<IdSpan>> per_superbatch_;  // spans into trace_
  std::vector<IdSpan> whole_;                        // every batch, in order
  std::vector<PolicyKind> policies_;
  std::vector<int64_t> capacity_rows_;
  int64_t accesses_ = 0;
  int64_t row_bytes_ = 0;
  int64_t block_bytes_ = 0;
};

}  // namespace seer
