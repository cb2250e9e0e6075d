#include "cache/device_tier_grid.h"

#include <fcntl.h>

#include <algorithm>

#include "cache/degrees.h"
#include "storage/base/unique_fd.h"
#include "storage/io/direct_reader.h"

namespace seer {
namespace {

std::vector<int64_t> SortedRows(const std::vector<CacheCapacity>& capacities, int64_t num_nodes, int64_t row_bytes) {
  std::vector<int64_t> rows;
  for (const CacheCapacity& c : capacities) rows.push_back(std::min(c.Rows(num_nodes, row_bytes), num_nodes));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace

Result<DeviceTierGridResult> RunDeviceTierGrid(const Dataset& dataset, const RecordedTrace& trace,
                                               const DeviceTierGridOptions& options) {
  if (options.presc_epochs < 1) return InvalidArgument("presc epochs must be at least 1");
  if (options.device_capacities.empty() || options.host_capacities.empty() || options.policies.empty()) {
    return InvalidArgument("device tier: no device capacities, host capacities or policies given");
  }
  const DatasetManifest& m = dataset.manifest();
  DeviceTierGridResult result;
  result.transfer_row_bytes = m.feature_dim * static_cast<int64_t>(sizeof(float));
  result.block_bytes = options.block_bytes;
  if (result.block_bytes <= 0) {
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(dataset.PathOf(dataset_files::kFeatures), O_RDONLY));
    result.block_bytes = DirectIoAlignment(fd.get());
  }
  const std::vector<int64_t> device_rows = SortedRows(options.device_capacities, m.num_nodes, result.transfer_row_bytes);
  const std::vector<int64_t> host_rows = SortedRows(options.host_capacities, m.num_nodes, m.feature_row_bytes());

  std::vector<std::vector<IdSpan>> per_superbatch;
  std::vector<IdSpan> whole, presc_batches;
  const int64_t first_epoch = trace.epochs.empty() ? 0 : *std::min_element(trace.epochs.begin(), trace.epochs.end());
  for (size_t k = 0; k < trace.superbatches.size(); ++k) {
    per_superbatch.push_back(MakeIdSpans(trace.superbatches[k]));
    whole.insert(whole.end(), per_superbatch.back().begin(), per_superbatch.back().end());
    if (k < trace.epochs.size() && trace.epochs[k] < first_epoch + options.presc_epochs) {
      presc_batches.insert(presc_batches.end(), per_superbatch.back().begin(), per_superbatch.back().end());
    }
  }
  for (const IdSpan& b : whole) {
    for (int64_t p = 0; p < b.size; ++p) {
      if (b.data[p] < 0 || b.data[p] >= m.num_nodes) {
        return InvalidArgument("trace holds node id " + std::to_string(b.data[p]) + " outside the dataset's " +
                               std::to_string(m.num_nodes) + " nodes");
      }
    }
  }
  std::vector<int64_t> ranking;
  if (std::find(options.policies.begin(), options.policies.end(), DeviceTierPolicy::kPresc) != options.policies.end()) {
    ranking = RankNodesByScore(CountVisits(presc_batches, m.num_nodes), device_rows.back());
  }
  const std::vector<std::vector<IdSpan>> whole_trace = {whole};
  const auto& replayed = options.belady_scope == BeladyScope::kTrace ? whole_trace : per_superbatch;

  TwoTierOptions sim;
  sim.sim.num_nodes = m.num_nodes;
  sim.sim.row_bytes = m.feature_row_bytes();
  sim.sim.block_bytes = result.block_bytes;
  sim.transfer_row_bytes = result.transfer_row_bytes;
  sim.planner.device = options.planner;
  {
    // The host tier's scores as training gives its host policy (train misses = stats).
    PolicyOptions host_scores;
    SEER_RETURN_IF_ERROR(MakeBeladyNodeScores(dataset, host_rows.empty() ? 0 : host_rows.back(), &host_scores));
    sim.host_node_scores = host_scores.planner.node_scores;
    sim.host_fill_ranking = std::move(host_scores.ranking);
  }
  std::vector<DeviceTierPolicy> policies;
  for (DeviceTierPolicy p : options.policies) {
    if (std::find(policies.begin(), policies.end(), p) == policies.end()) policies.push_back(p);
  }
  for (int64_t d : device_rows) {
    for (int64_t h : host_rows) {
      for (DeviceTierPolicy policy : policies) {
        if (policy == DeviceTierPolicy::kOff && d != device_rows.front()) continue;
        SEER_ASSIGN_OR_RETURN(TwoTierStats stats, SimulateTwoTier(policy, d, h, ranking, replayed, sim));
        result.rows.push_back(std::move(stats));
      }
    }
  }
  return result;
}

}  // namespace seer
