// FeatureCache: the direct-addressed feature cache every policy goes through
// (docs/design.md "Feature cache and policies").
//
//   slots:      capacity_rows × row_bytes in host memory (one allocation; the caller may
//               pass an allocator hook, e.g. cudaHostAlloc for pinned memory)
//   slot index: node -> slot, a NodeSlotIndex (below) sized by the cache's rows, not by
//               the graph's nodes: 12 bytes per row, plus the node id held by every slot
//               (8 bytes per row) — FeatureCache::IndexBytes(rows), counted in the
//               feature cache's budget. (It was an int32 per node: 4 GB at 1 G nodes.)
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

#include <algorithm>
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

// node id -> slot for at most `capacity` nodes: open addressing with linear probing in
// capacity * 3/2 + 1 uint64 entries (load <= 2/3), each entry (node + 1) << slot_bits | slot
// (0 = empty), so a lookup reads one entry per probe and compares the key in the same word
// (no second lookup). Erase shifts the following entries back (no tombstones), so lookups
// never slow down with churn. Needs num_nodes < 2^(64 - slot_bits) - 1, slot_bits =
// bits of capacity - 1 (>= 2^33 nodes for any int32 capacity; Create checks). Lookups are
// const and thread-safe; Insert/Erase are not. The caller keeps at most `capacity` nodes.
class NodeSlotIndex {
 public:
  NodeSlotIndex() = default;
  // kInvalidArgument when num_nodes is too large for the packed entries.
  static Result<NodeSlotIndex> Create(int64_t num_nodes, int64_t capacity);
  static int64_t EntriesFor(int64_t capacity) { return capacity + capacity / 2 + 1; }
  static int64_t BytesFor(int64_t capacity) { return 8 * EntriesFor(capacity); }
  int64_t bytes() const { return static_cast<int64_t>(table_.size() * sizeof(uint64_t)); }

  // -1 when `node` has no slot.
  int32_t Find(int64_t node) const {
    const uint64_t key = static_cast<uint64_t>(node) + 1;
    size_t i = Home(node);
    for (;;) {
      const uint64_t e = table_[i];
      if (e == 0) return -1;
      if ((e >> slot_bits_) == key) return static_cast<int32_t>(e & slot_mask_);
      if (++i == table_.size()) i = 0;
    }
  }
  // Hints the CPU to load `node`'s first probe (batched lookups prefetch a few ids ahead).
  void Prefetch(int64_t node) const { __builtin_prefetch(table_.data() + Home(node)); }
  // `node` must not be present.
  void Insert(int64_t node, int32_t slot);
  // No-op when absent.
  void Erase(int64_t node);
  void Clear() { std::fill(table_.begin(), table_.end(), uint64_t{0}); }

 private:
  size_t Home(int64_t node) const {
    const uint64_t h = static_cast<uint64_t>(node) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * table_.size()) >> 64);
  }
  std::vector<uint64_t> table_;
  int slot_bits_ = 1;
  uint64_t slot_mask_ = 1;
};

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
  // RAM of the slot index and the slots' node ids for `capacity_rows` rows (beyond the
  // rows themselves): what the memory budget charges the feature cache per row.
  static int64_t IndexBytes(int64_t capacity_rows) {
    return NodeSlotIndex::BytesFor(capacity_rows) + 8 * capacity_rows;
  }
  int64_t index_bytes() const { return IndexBytes(capacity_rows_); }

  // -1 when `node` is not cached.
  int32_t SlotOf(int64_t node) const { return slot_index_.Find(node); }
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
  // check that in_positions point at in_ids). The rows of block_ids (free rows of the
  // batch's block reads) are copied from block_rows + k*row_bytes (k = index in
  // block_ids; may be null when row_bytes == 0 or block_ids is empty). Throws
  // std::logic_error on contradiction.
  void Apply(const Changeset& changeset, const int64_t* ids, int64_t count,
             const char* batch_buffer, const char* block_rows = nullptr);

  // Apply in steps, for a caller that writes the admitted block rows into their slots as
  // it reads them (FeatureGatherer with --read-block: no buffer of the batch's block
  // rows). CheckChangeset validates everything Apply does and changes nothing (throws
  // std::logic_error on a contradiction); then ApplyEvictions evicts out_ids (their slots
  // become free); WriteFreeSlot copies block_ids[k]'s row into block_slots[k] (any order,
  // each once); ApplyInsertions enters in_ids and block_ids into the table and copies the
  // inserted rows from batch_buffer. CheckChangeset + ApplyEvictions + the writes +
  // ApplyInsertions end in Apply's state, byte for byte (table, slot list and slot bytes).
  // The steps take the same changeset, with nothing else mutating the cache in between.
  // Between the steps the cache is consistent: a slot written but not yet inserted is free,
  // so a caller that stops after ApplyEvictions (an I/O error) leaves a cache that has
  // lost the evicted rows and holds no unfinished ones.
  void CheckChangeset(const Changeset& changeset, const int64_t* ids, int64_t count) const;
  void ApplyEvictions(const Changeset& changeset);
  // `slot` must be free (std::logic_error otherwise); `row` holds row_bytes bytes.
  void WriteFreeSlot(int32_t slot, const char* row);
  // The slots of in_ids and block_ids must be free (std::logic_error otherwise, nothing
  // changed): call after ApplyEvictions of the same, checked changeset.
  void ApplyInsertions(const Changeset& changeset, const char* batch_buffer);

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
  NodeSlotIndex slot_index_;         // node -> slot
  std::vector<int64_t> slot_nodes_;   // slot -> node
};

}  // namespace seer
