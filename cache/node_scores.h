// Node scores for Belady's tie rule (cache/belady_planner.h): among rows with no further
// use in the superbatch the higher static score is kept. A NodeScoreFn fills
// scores[k] = score(ids[k]) for k < n. The score tables behind them are built here, in
// one way: a shared per-node table (index = node id), ids outside it score 0. Where the
// scores come from (out-degrees and their one-byte buckets, PreSC visit counts) is
// cache/degrees.h and cache/policies.h.
//
// Ownership: a NodeScoreFn shares its table (copies of the function share one table).
// Thread-safety: calling a NodeScoreFn is read-only, so it may run on several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace seer {

// Static per-node score for the tie rule among rows with no further use in the
// superbatch (higher = more worth keeping). Fills scores[k] = score(ids[k]) for k < n.
using NodeScoreFn = std::function<void(const int64_t* ids, int64_t n, uint32_t* scores)>;

// node_scores from a per-node table (index = node id): score = table[v] saturated to
// [0, 2^32-1]; ids outside the table score 0. The table is converted once and shared,
// not copied per call.
NodeScoreFn NodeScoresFromTable(const std::vector<int64_t>& table);

// node_scores from a per-node table of one-byte scores (e.g. DegreeBucket, cache/degrees.h;
// index = node id; ids beyond it score 0). The table is moved in and shared.
NodeScoreFn NodeScoresFromBuckets(std::vector<uint8_t> buckets);

}  // namespace seer
