#include "executor/memory_budget.h"

#include <algorithm>

#include "storage/progress.h"

namespace seer {

int64_t EstimateBatchRows(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts) {
  // Saturating: the product overflows quickly for deep fan-outs.
  int64_t total = batch_size;
  int64_t layer = batch_size;
  for (int f : fanouts) {
    const int64_t fanout = f < 0 ? 32 : f;
    if (layer > num_nodes) break;
    layer *= fanout;
    total += layer;
    if (total >= num_nodes) break;
  }
  return std::max<int64_t>(0, std::min(num_nodes, total));
}

std::string MemoryBudgetSplit::ToString() const {
  return "memory budget " + FormatBytes(budget_bytes) + ": per-node tables " +
         FormatBytes(table_bytes) + ", staging " + FormatBytes(staging_bytes) + " (~" +
         std::to_string(estimated_batch_rows) + " rows/batch), trace buffers " +
         FormatBytes(trace_bytes) + ", neighbor cache " + FormatBytes(ncache_bytes) +
         ", feature cache " + FormatBytes(fcache_bytes) + " (" + std::to_string(fcache_rows) +
         " rows)";
}

Result<MemoryBudgetSplit> SplitMemoryBudget(const MemoryBudgetRequest& r) {
  if (r.num_nodes < 0 || r.feature_row_bytes < 0 || r.batch_size <= 0) {
    return InvalidArgument("memory budget: bad graph or batch parameters");
  }
  MemoryBudgetSplit s;
  s.budget_bytes = r.budget_bytes;
  s.table_bytes = 8 * (r.num_nodes + 1) + 4 * r.num_nodes;
  s.estimated_batch_rows = EstimateBatchRows(r.num_nodes, r.batch_size, r.fanouts);
  // The gather pipeline holds `pipeline_depth` float32 batch buffers (one trains while
  // the next is gathered) plus one raw batch buffer in the disk dtype.
  s.staging_bytes = s.estimated_batch_rows * (r.pipeline_depth * 4 * r.feature_dim + r.feature_row_bytes);
  const int64_t required = s.table_bytes + s.staging_bytes + (2 << 20);
  if (r.budget_bytes < required) {
    return Status(StatusCode::kResourceExhausted,
                  "memory budget " + FormatBytes(r.budget_bytes) + " is too small: the per-node tables of " +
                      std::to_string(r.num_nodes) + " nodes need " + FormatBytes(s.table_bytes) +
                      " and the batch staging buffers (~" + std::to_string(s.estimated_batch_rows) +
                      " rows per batch) " + FormatBytes(s.staging_bytes) + "; use --memory-budget " +
                      FormatBytes(required) + " or more, or a smaller --batch-size / --fanouts");
  }
  int64_t left = r.budget_bytes - s.table_bytes - s.staging_bytes;
  s.trace_bytes = std::max<int64_t>(1 << 20, left / 8);
  left = std::max<int64_t>(0, left - s.trace_bytes);

  const int64_t ncache_table = 8 * r.num_nodes;
  if (r.ncache_budget_bytes >= 0 && r.fcache_budget_bytes >= 0) {
    s.ncache_bytes = r.ncache_budget_bytes;
    s.fcache_bytes = r.fcache_budget_bytes;
  } else if (r.ncache_budget_bytes >= 0) {
    s.ncache_bytes = r.ncache_budget_bytes;
    s.fcache_bytes = std::max<int64_t>(0, left - s.ncache_bytes);
  } else if (r.fcache_budget_bytes >= 0) {
    s.fcache_bytes = r.fcache_budget_bytes;
    s.ncache_bytes = std::max<int64_t>(0, left - s.fcache_bytes);
    if (s.ncache_bytes < ncache_table) s.ncache_bytes = 0;
  } else {
    s.ncache_bytes = left / 4;
    // A neighbor cache smaller than its own table caches nothing: give it all to features.
    if (s.ncache_bytes < ncache_table + ncache_table / 4) s.ncache_bytes = 0;
    s.fcache_bytes = left - s.ncache_bytes;
  }
  if (s.ncache_bytes + s.fcache_bytes > left && (r.ncache_budget_bytes >= 0 || r.fcache_budget_bytes >= 0)) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget + --fcache-budget (" + FormatBytes(s.ncache_bytes + s.fcache_bytes) +
                      ") exceed what the memory budget leaves after tables, staging and traces (" +
                      FormatBytes(left) + ")");
  }
  if (r.ncache_budget_bytes > 0 && r.ncache_budget_bytes < ncache_table) {
    return Status(StatusCode::kResourceExhausted,
                  "--ncache-budget " + FormatBytes(r.ncache_budget_bytes) +
                      " cannot hold the neighbor cache's table (" + FormatBytes(ncache_table) +
                      "); use 0 to disable it");
  }
  s.fcache_rows = r.feature_row_bytes > 0 ? std::min(r.num_nodes, s.fcache_bytes / r.feature_row_bytes) : 0;
  s.fcache_bytes = s.fcache_rows * r.feature_row_bytes;
  return s;
}

}  // namespace seer
