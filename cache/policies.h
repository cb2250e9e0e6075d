// Feature-cache policies behind one interface (docs/design.md "Feature cache and policies").
// Every policy expresses its decisions as Changesets (cache/belady_planner.h) so the
// executor and the hit simulator apply all of them through the same FeatureCache path.
//
//   belady         the exact Belady planner, optimal prefetch as initial fill
//   static-degree  PaGraph: the top-K nodes by out-degree, fixed (empty changesets)
//   presc          GNNLab/FGNN PreSC: top-K by visit counts of pre-sampling epochs, fixed
//   lru            classic LRU at batch granularity: after batch i the cache holds the K
//                  most recently used nodes of C_i ∪ ids_i (inside a batch a later
//                  position counts as more recent); initial fill: the first K distinct
//                  nodes of the trace
//   none           capacity 0: every access reads the SSD
//
// Fair comparison: each policy chooses its own initial content (InitialSlots; its loads
// are "fill reads", counted apart), then changesets follow the slot rule of the planner
// (free slots ascending, given to inserted nodes in ascending batch position).
// A policy object is single-threaded and keeps per-run state (LRU recency).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class PolicyKind { kBelady, kStaticDegree, kPresc, kLru, kNone };
inline constexpr NameValue<PolicyKind> kPolicyKindNames[] = {
    {"belady", PolicyKind::kBelady}, {"static-degree", PolicyKind::kStaticDegree},
    {"presc", PolicyKind::kPresc},   {"lru", PolicyKind::kLru},
    {"none", PolicyKind::kNone}};
// "belady" | "static-degree" | "presc" | "lru" | "none".
Result<PolicyKind> ParsePolicyKind(const std::string& text);
const char* PolicyKindName(PolicyKind kind);
std::vector<PolicyKind> AllPolicyKinds();

// LRU reads a superbatch's ids into RAM to plan it: 8 B per access plus its recency
// bookkeeping; what the memory split charges per access.
inline constexpr int64_t kLruPlannerBytesPerAccess = 16;

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  virtual PolicyKind kind() const = 0;
  int64_t capacity_rows() const { return capacity_rows_; }

  // Content before the first batch (slot -> node, kFreeSlot), given the batches the run
  // will see first (Belady and LRU look at them; static policies do not).
  virtual std::vector<int64_t> InitialSlots(const std::vector<IdSpan>& upcoming) = 0;
  // One changeset per batch, turning `slots` (the current content) into the next states.
  virtual Result<ChangesetStore> Plan(const std::vector<int64_t>& slots,
                                      const std::vector<IdSpan>& batches) = 0;

 protected:
  explicit CachePolicy(int64_t capacity_rows) : capacity_rows_(capacity_rows) {}
  int64_t capacity_rows_;
};

struct PolicyOptions {
  int64_t capacity_rows = 0;
  // static-degree and presc: nodes in rank order (best first); the first capacity_rows
  // are cached. Build it with RankNodesByScore.
  // belady: the fill ranking (BeladyInitialFill: slots its first superbatch leaves free
  // take these nodes, best first). Set it with SetBeladyNodeScores.
  std::vector<int64_t> ranking;
  BeladyPlannerOptions planner;  // belady (planner.node_scores: the tie rule's scores)
};

// The policy object; static-degree/presc without a ranking is kInvalidArgument.
Result<std::unique_ptr<CachePolicy>> MakeCachePolicy(PolicyKind kind, PolicyOptions options);

// Node ids sorted by descending score, ties by ascending id; only the first `limit`
// are returned (nodes with score 0 are included only when needed to reach the limit).
std::vector<int64_t> RankNodesByScore(const std::vector<int64_t>& score, int64_t limit);
// Visit counts per node over `batches` (PreSC pre-sampling); ids must be < num_nodes.
std::vector<int64_t> CountVisits(const std::vector<IdSpan>& batches, int64_t num_nodes);

// node_scores from PreSC visit counts (CountVisits / pre-sampling): score = count.
NodeScoreFn NodeScoresFromVisitCounts(const std::vector<int64_t>& visit_counts);

// Belady's static scores, the same in training and in `seer stats`: the planner's tie
// rule among rows with no further use inside the superbatch (planner.node_scores) and the
// fill ranking (ranking = the top `max_capacity_rows` nodes by score). The default score
// is the out-degree (cache/degrees.h MakeBeladyNodeScores).
void SetBeladyNodeScores(const std::vector<int64_t>& scores, int64_t max_capacity_rows,
                         PolicyOptions* options);

}  // namespace seer
