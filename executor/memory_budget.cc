#include "executor/memory_budget.h"

#include <algorithm>
#include <cmath>

#include "storage/progress.h"

namespace seer {

int64_t EstimateBatchRows(int64_t num_nodes, int64_t batch_size, const std::vector<int>& fanouts) {
  if (num_nodes <= 0) return 0;
  // Sampled ids with repetition: B × Σ_l Π_{j<=l} f_j (saturating).
  double sampled = static_cast<double>(batch_size);
  double layer = static_cast<double>(batch_size);
  for (int f : fanouts) {
    layer *= f < 0 ? 32 : f;
    sampled += layer;
    if (sampled > 1e15) break;
  }
  // Distinct ids among `sampled` draws from N nodes, as if uniform: N (1 - e^{-s/N}).
  // (Power-law graphs repeat hubs more, so this errs on the large side.)
  const double n = static_cast<double>(num_nodes);
  const double distinct = n * -std::expm1(-sampled / n);
  return std::min<int64_t>(num_nodes, std::max<int64_t>(std::min<int64_t>(batch_size, num_nodes),
                                                        static_cast<int64_t>(std::ceil(distinct))));
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
  // the next is gathered); float16 features also need one raw batch buffer.
  const int64_t raw_row_bytes = r.feature_row_bytes == 4 * r.feature_dim ? 0 : r.feature_row_bytes;
  s.staging_bytes = s.estimated_batch_rows * (r.pipeline_depth * 4 * r.feature_dim + raw_row_bytes);
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
  } else if (r.ncache_share >= 0) {
    s.ncache_bytes = static_cast<int64_t>(static_cast<double>(left) * std::min(1.0, r.ncache_share));
    // A share that cannot hold the neighbor cache's table caches nothing: features get it.
    if (s.ncache_bytes <= ncache_table) s.ncache_bytes = 0;
    s.fcache_bytes = left - s.ncache_bytes;
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
