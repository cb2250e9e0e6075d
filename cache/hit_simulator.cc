#include "cache/hit_simulator.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "cache/feature_cache.h"

namespace seer {

int64_t CountDistinctBlocks(std::vector<int64_t> rows, int64_t row_bytes, int64_t block_bytes) {
  if (row_bytes <= 0 || rows.empty()) return 0;
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  // Walk rows in order; blocks of consecutive rows overlap only at the boundary.
  int64_t count = 0;
  int64_t last_block = -1;
  for (int64_t v : rows) {
    const int64_t first = v * row_bytes / block_bytes;
    const int64_t last = ((v + 1) * row_bytes - 1) / block_bytes;
    const int64_t start = std::max(first, last_block + 1);
    if (last >= start) count += last - start + 1;
    last_block = std::max(last_block, last);
  }
  return count;
}

int32_t NodeTypeOfId(const std::vector<int64_t>& offsets, int64_t id) {
  // The last offset <= id: types before an empty type share its offset.
  const auto it = std::upper_bound(offsets.begin(), offsets.end(), id);
  return static_cast<int32_t>(it - offsets.begin()) - 1;
}

Result<PolicyStats> SimulatePolicy(CachePolicy& policy,
                                   const std::vector<std::vector<IdSpan>>& superbatches,
                                   const SimulationOptions& options) {
  if (options.block_bytes <= 0) return InvalidArgument("simulator: block_bytes must be positive");
  const std::vector<int64_t>& offsets = options.type_offsets;
  const bool typed = !offsets.empty();
  if (typed && (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != options.num_nodes ||
                !std::is_sorted(offsets.begin(), offsets.end()))) {
    return InvalidArgument(fmt::format("simulator: {} type offsets do not cut [0, {}) into node types", offsets.size(),
                                       options.num_nodes));
  }
  PolicyStats stats;
  if (typed) {
    stats.type_accesses.assign(offsets.size() - 1, 0);
    stats.type_misses.assign(offsets.size() - 1, 0);
  }
  stats.policy = PolicyKindName(policy.kind());
  stats.capacity_rows = policy.capacity_rows();
  stats.capacity_bytes = policy.capacity_rows() * options.row_bytes;

  FeatureCacheOptions cache_options;
  cache_options.num_nodes = options.num_nodes;
  cache_options.capacity_rows = policy.capacity_rows();
  cache_options.row_bytes = 0;
  SEER_ASSIGN_OR_RETURN(FeatureCache cache, FeatureCache::Create(cache_options));

  std::vector<IdSpan> all;
  for (const auto& sb : superbatches) all.insert(all.end(), sb.begin(), sb.end());
  for (const IdSpan& b : all) {
    for (int64_t p = 0; p < b.size; ++p) {
      if (b.data[p] < 0 || b.data[p] >= options.num_nodes) {
        return InvalidArgument(fmt::format("trace holds node id {} outside [0, {})", b.data[p],
                                           options.num_nodes));
      }
    }
  }
  // The initial content is chosen from the first superbatch only, as the executor does
  // (executor/cache_policy.h): it installs the fill before the first batch, when no later
  // superbatch has been sampled yet. With per-superbatch replay this makes the counts
  // equal to training's; with the whole trace as one superbatch it is the optimal
  // prefetch of the lower bound. (Seeing the whole trace here would count as fill the
  // rows that training reads as misses when the first superbatch touches fewer than K
  // distinct nodes.)
  std::vector<int64_t> initial =
      policy.InitialSlots(superbatches.empty() ? std::vector<IdSpan>{} : superbatches.front());
  if (static_cast<int64_t>(initial.size()) != policy.capacity_rows()) {
    throw std::logic_error("policy returned an initial state of the wrong size");
  }
  std::vector<int64_t> fill;
  for (size_t s = 0; s < initial.size(); ++s) {
    if (initial[s] == kFreeSlot) continue;
    cache.Install(static_cast<int32_t>(s), initial[s], nullptr);
    fill.push_back(initial[s]);
  }
  stats.fill_rows = static_cast<int64_t>(fill.size());
  stats.fill_blocks = CountDistinctBlocks(std::move(fill), options.row_bytes, options.block_bytes);
  stats.fill_bytes = stats.fill_blocks * options.block_bytes;

  std::vector<int32_t> miss_positions;
  std::vector<int64_t> miss_rows;
  for (const auto& sb : superbatches) {
    SEER_ASSIGN_OR_RETURN(ChangesetStore changesets, policy.Plan(cache.SlotContents(), sb));
    if (changesets.size() != static_cast<int64_t>(sb.size())) {
      throw std::logic_error("policy returned the wrong number of changesets");
    }
    for (size_t i = 0; i < sb.size(); ++i) {
      const IdSpan& b = sb[i];
      miss_positions.clear();
      cache.Gather(b.data, b.size, nullptr, &miss_positions);
      SEER_ASSIGN_OR_RETURN(Changeset cs, changesets.Get(static_cast<int64_t>(i)));
      if (cs.num_misses != static_cast<int64_t>(miss_positions.size())) {
        throw std::logic_error(fmt::format("policy {} counted {} misses in a batch, the cache {}",
                                           stats.policy, cs.num_misses, miss_positions.size()));
      }
      stats.accesses += b.size;
      stats.misses += static_cast<int64_t>(miss_positions.size());
      miss_rows.clear();
      for (int32_t p : miss_positions) miss_rows.push_back(b.data[p]);
      if (typed) {
        for (int64_t p = 0; p < b.size; ++p) ++stats.type_accesses[static_cast<size_t>(NodeTypeOfId(offsets, b.data[p]))];
        for (int64_t v : miss_rows) ++stats.type_misses[static_cast<size_t>(NodeTypeOfId(offsets, v))];
      }
      stats.blocks_read += CountDistinctBlocks(miss_rows, options.row_bytes, options.block_bytes);
      stats.block_admits += static_cast<int64_t>(cs.block_ids.size());
      cache.Apply(cs, b.data, b.size, nullptr);
    }
  }
  stats.bytes_read = stats.blocks_read * options.block_bytes;
  return stats;
}

}  // namespace seer
