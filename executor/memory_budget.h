// How `seer train` splits its one --memory-budget (DESIGN.md "Errors, determinism,
// budgets"). Plain arithmetic, no allocation, torch-free.
//
//   per-node tables   indptr 8 B × (N+1)  +  feature slot table 4 B × N
//                     (+ the neighbor cache's 8 B × N table, counted in its budget)
//   staging           batch buffers of the gather pipeline: `pipeline_depth` float32
//                     batches (one trains while the next is gathered), + one raw batch
//                     for float16 features, sized by the estimated rows of a batch (below)
//   trace buffers     RAM for superbatch traces and changesets before they spill to
//                     runtime files: an eighth of what is left, at least 1 MiB
//   caches            the rest: auto = 1/4 neighbor cache (only if it covers its own
//                     table, else 0) and 3/4 feature cache; --cache-split NC:FC sets the
//                     neighbor cache's share instead (same rule: a share that cannot
//                     hold the 8 B/node table goes to the feature cache);
//                     --ncache-budget / --fcache-budget override either (the other gets
//                     the remainder).
//
// A budget that cannot hold the per-node tables plus a minimal staging area is refused
// (kResourceExhausted) with a one-line message saying how much is needed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/status.h"

namespace seer {

struct MemoryBudgetRequest {
  int64_t budget_bytes = 0;
  int64_t num_nodes = 0;
  int64_t feature_dim = 0;
  int64_t feature_row_bytes = 0;         // on disk (float16 rows are half of float32)
  int64_t batch_size = 1000;
  std::vector<int> fanouts = {10, 10, 10};
  int64_t pipeline_depth = 2;            // float32 batch buffers alive at once
  int64_t ncache_budget_bytes = -1;      // -1 = auto
  int64_t fcache_budget_bytes = -1;      // -1 = auto
  double ncache_share = -1;              // [0, 1]: neighbor cache's share of the caches; -1 = auto (1/4)
};

struct MemoryBudgetSplit {
  int64_t budget_bytes = 0;
  int64_t table_bytes = 0;          // indptr + feature slot table
  int64_t staging_bytes = 0;
  int64_t trace_bytes = 0;
  int64_t ncache_bytes = 0;         // neighbor cache budget (its 8 B/node table included)
  int64_t fcache_bytes = 0;         // feature cache slots
  int64_t fcache_rows = 0;          // = fcache_bytes / feature_row_bytes
  int64_t estimated_batch_rows = 0; // the staging estimate's rows per batch
  // "memory budget 1.0 GiB: tables 12 MiB, staging ..., feature cache 600 MiB (N rows)"
  std::string ToString() const;
};

// Estimated unique nodes of one batch: s = B × Σ_l Π_{j<=l} f_j sampled ids (fan-out -1
// counted as 32), of which N (1 - e^{-s/N}) are distinct if draws were uniform; at least
// min(B, N), at most N.
int64_t EstimateBatchRows(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts);

Result<MemoryBudgetSplit> SplitMemoryBudget(const MemoryBudgetRequest& request);

}  // namespace seer
