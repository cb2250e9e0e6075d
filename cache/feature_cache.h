// FeatureCache: the direct-addressed feature cache every policy goes through
// (DESIGN.md "Feature cache and policies").
//
//   slots:      capacity_rows × row_bytes in host memory (one allocation; the caller may
//               pass an allocator hook, e.g. cudaHostAlloc for pinned memory)
//   slot table: int32 per node, -1 = not cached (4 bytes per node, counted in the
//               memory budget), plus the node id held by every slot (8 bytes per slot)
//
// row_bytes may be 0: the cache then only tracks which node sits in which slot (the hit
// simulator uses this to replay policies without feature data).
//
// Use per batch i: Gather(ids_i) copies the hits into the batch buffer and reports the
// miss positions; the caller reads the misses into the same buffer; then
// Apply(changeset_i, buffer) copies inserted rows from the buffer into their slots and
// updates the table. Gather is parallel (TBB) and const; Apply and Install mutate and
// must not run concurrently with anything else on the same cache. A changeset that
// contradicts the cache (evicting a node that is not in the named slot, filling a slot
// that is still occupied, inserting a node already cached, ids out of range) is a broken
// contract: std::logic_error, the cache is left unchanged. The cache owns its slot
// memory (released through the hook that allocated it) and is move-only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cache/belady_planner.h"
#include "storage/base/status.h"

namespace seer {

struct FeatureCacheOptions {
  int64_t num_nodes = 0;
  int64_t capacity_rows = 0;
  int64_t row_bytes = 0;
  // Allocator hook for the slot array (bytes -> pointer, nullptr on failure) and its
  // release. Default: 4096-aligned host memory.
  std::function<void*(size_t)> allocate;
  std::function<void(void*)> release;
};

// rows = floor(budget_bytes / row_bytes) (0 when row_bytes <= 0 or budget < 0).
int64_t CapacityRowsForBudget(int64_t budget_bytes, int64_t row_bytes);

class FeatureCache {
 public:
  // kResourceExhausted when the slot array cannot be allocated; kInvalidArgument for
  // negative sizes or capacity >= 2^31 rows.
  static Result<FeatureCache> Create(const FeatureCacheOptions& options);
  FeatureCache(FeatureCache&&) noexcept = default;
  FeatureCache& operator=(FeatureCache&&) noexcept = default;
  ~FeatureCache() = default;

  int64_t num_nodes() const { return num_nodes_; }
  int64_t capacity_rows() const { return capacity_rows_; }
  int64_t row_bytes() const { return row_bytes_; }
  int64_t num_cached() const { return num_cached_; }

  // -1 when `node` is not cached.
  int32_t SlotOf(int64_t node) const { return slot_table_[static_cast<size_t>(node)]; }
  int64_t NodeInSlot(int32_t slot) const { return slot_nodes_[static_cast<size_t>(slot)]; }
  const char* Row(int32_t slot) const { return slots_.get() + slot * row_bytes_; }
  // slot -> node id (kFreeSlot when empty): the state to hand to the planner.
  const std::vector<int64_t>& SlotContents() const { return slot_nodes_; }

  // For every position p with ids[p] cached, copies its row to
  // batch_buffer + p*row_bytes (batch_buffer may be null when row_bytes == 0). Appends
  // the positions of the misses, ascending, to *miss_positions (may be null). Returns
  // the number of hits.
  int64_t Gather(const int64_t* ids, int64_t count, char* batch_buffer,
                 std::vector<int32_t>* miss_positions) const;

  // Applies changeset_i: evicts out_ids from out_slots, then copies the rows of in_ids
  // from batch_buffer + in_positions[k]*row_bytes into in_slots[k]. `ids` is ids_i (to
  // check that in_positions point at in_ids). Throws std::logic_error on contradiction.
  void Apply(const Changeset& changeset, const int64_t* ids, int64_t count,
             const char* batch_buffer);

  // Puts `node` into `slot` with the given row bytes (initial fill; row may be null when
  // row_bytes == 0). Whatever the slot held is evicted; a node cached elsewhere is a
  // logic_error.
  void Install(int32_t slot, int64_t node, const void* row);
  // Empties the cache.
  void Clear();

 private:
  FeatureCache() = default;
  int64_t num_nodes_ = 0;
  int64_t capacity_rows_ = 0;
  int64_t row_bytes_ = 0;
  int64_t num_cached_ = 0;
  std::unique_ptr<char, std::function<void(char*)>> slots_;
  std::vector<int32_t> slot_table_;   // node -> slot
  std::vector<int64_t> slot_nodes_;   // slot -> node
};

}  // namespace seer
