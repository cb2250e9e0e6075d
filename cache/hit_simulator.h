// Hit-statistics simulator: replays a recorded trace (superbatches of batches of node
// ids) under a cache policy, applying its changesets through a FeatureCache without row
// data (row_bytes 0), and counts what a real run would read from features.bin.
//
// Counting (docs/design.md "Fair comparison"): the policy's initial content is loaded first
// as one bulk sorted read (fill_rows / fill_blocks / fill_bytes); accesses and misses are
// counted after it. For every batch, the rows of its misses are mapped to the aligned
// blocks of features.bin that hold them (row v spans bytes [v*row_bytes,
// (v+1)*row_bytes)); rows sharing a block within one batch cost one block read.
// bytes_read = blocks_read * block_bytes.
//
// Each changeset is checked against the cache (a wrong changeset is a logic_error),
// and the policy's miss count against the cache's own lookups. Single-threaded.
//
// Typed datasets (ids are global: a node type's offset + its local id): with type_offsets
// set, every access and every miss is also counted by its node type (NodeTypeOfId, a
// binary search over the T + 1 offsets) in PolicyStats::type_accesses / type_misses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/policies.h"
#include "storage/base/status.h"

namespace seer {

struct SimulationOptions {
  int64_t num_nodes = 0;
  int64_t row_bytes = 0;      // feature_row_bytes of the dataset
  int64_t block_bytes = 4096; // O_DIRECT alignment of features.bin
  // Typed datasets: T + 1 node type offsets from 0 to num_nodes (type t = ids [offsets[t],
  // offsets[t + 1])); empty = no per-type counts.
  std::vector<int64_t> type_offsets;
};

struct PolicyStats {
  std::string policy;
  int64_t capacity_rows = 0;
  int64_t capacity_bytes = 0;
  int64_t accesses = 0;
  int64_t misses = 0;
  int64_t fill_rows = 0;
  int64_t fill_blocks = 0;
  int64_t fill_bytes = 0;
  int64_t blocks_read = 0;
  int64_t bytes_read = 0;
  int64_t block_admits = 0;  // rows admitted from block reads (changesets' block_ids)
  // Per node type (SimulationOptions::type_offsets given; else empty): T entries each,
  // summing to accesses and misses.
  std::vector<int64_t> type_accesses;
  std::vector<int64_t> type_misses;
  double hit_ratio() const {
    return accesses == 0 ? 0.0 : 1.0 - static_cast<double>(misses) / static_cast<double>(accesses);
  }
};

// superbatches[k] = the batches of superbatch k, in order. The policy's InitialSlots sees
// the batches of the first superbatch (what the executor knows when it fills the cache;
// pass the whole trace as one superbatch for the lower bound); Plan is called once per
// superbatch with the carried state.
Result<PolicyStats> SimulatePolicy(CachePolicy& policy,
                                   const std::vector<std::vector<IdSpan>>& superbatches,
                                   const SimulationOptions& options);

// The node type t with offsets[t] <= id < offsets[t + 1] (offsets: T + 1 entries from 0,
// non-decreasing; an empty type is skipped); the id must be in [0, offsets.back()).
int32_t NodeTypeOfId(const std::vector<int64_t>& offsets, int64_t id);

// Distinct aligned blocks covering the given rows (ids need not be sorted or unique).
int64_t CountDistinctBlocks(std::vector<int64_t> rows, int64_t row_bytes, int64_t block_bytes);

}  // namespace seer
