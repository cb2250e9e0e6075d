#include "cache/feature_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include "storage/base/parallel.h"

namespace seer {

int64_t CapacityRowsForBudget(int64_t budget_bytes, int64_t row_bytes) {
  if (row_bytes <= 0 || budget_bytes <= 0) return 0;
  return budget_bytes / row_bytes;
}

Result<NodeSlotIndex> NodeSlotIndex::Create(int64_t num_nodes, int64_t capacity) {
  if (num_nodes < 0 || capacity < 0 || capacity > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument(fmt::format("slot index: bad size (nodes {}, capacity {})", num_nodes, capacity));
  }
  NodeSlotIndex index;
  int bits = 1;
  while (bits < 31 && (int64_t{1} << bits) < capacity) ++bits;
  index.slot_bits_ = bits;
  index.slot_mask_ = (uint64_t{1} << bits) - 1;
  // Keys are node + 1 <= num_nodes in the 64 - bits high bits.
  if (static_cast<uint64_t>(num_nodes) >= (uint64_t{1} << (64 - bits))) {
    return InvalidArgument(fmt::format("slot index: {} nodes do not fit its {}-bit keys next to {}-bit slots",
                                       num_nodes, 64 - bits, bits));
  }
  try {
    index.table_.assign(static_cast<size_t>(EntriesFor(capacity)), 0);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("slot index: cannot allocate {} bytes for {} rows", BytesFor(capacity), capacity));
  }
  return index;
}

void NodeSlotIndex::Insert(int64_t node, int32_t slot) {
  const uint64_t entry = ((static_cast<uint64_t>(node) + 1) << slot_bits_) | static_cast<uint64_t>(slot);
  size_t i = Home(node);
  while (table_[i] != 0) {
    if (++i == table_.size()) i = 0;
  }
  table_[i] = entry;
}

void NodeSlotIndex::Erase(int64_t node) {
  const uint64_t key = static_cast<uint64_t>(node) + 1;
  const size_t n = table_.size();
  size_t i = Home(node);
  for (;;) {
    if (table_[i] == 0) return;
    if ((table_[i] >> slot_bits_) == key) break;
    if (++i == n) i = 0;
  }
  // Backward shift: move later entries of the probe run into the hole unless their home
  // lies cyclically in (hole, j].
  size_t j = i;
  for (;;) {
    if (++j == n) j = 0;
    const uint64_t e = table_[j];
    if (e == 0) break;
    const size_t home = Home(static_cast<int64_t>((e >> slot_bits_) - 1));
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      table_[i] = e;
      i = j;
    }
  }
  table_[i] = 0;
}

Result<FeatureCache> FeatureCache::Create(const FeatureCacheOptions& options) {
  if (options.num_nodes < 0 || options.capacity_rows < 0 || options.row_bytes < 0) {
    return InvalidArgument(fmt::format("feature cache: negative size (nodes {}, rows {}, row bytes {})",
                                       options.num_nodes, options.capacity_rows, options.row_bytes));
  }
  if (options.capacity_rows > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument(fmt::format("feature cache: {} rows exceed the int32 slot table", options.capacity_rows));
  }
  FeatureCache cache;
  cache.num_nodes_ = options.num_nodes;
  cache.capacity_rows_ = options.capacity_rows;
  cache.row_bytes_ = options.row_bytes;
  const size_t bytes = static_cast<size_t>(options.capacity_rows * options.row_bytes);
  if (bytes > 0) {
    void* p = nullptr;
    std::function<void(void*)> release = options.release;
    if (options.allocate) {
      p = options.allocate(bytes);
    } else {
      const size_t rounded = (bytes + 4095) / 4096 * 4096;
      p = std::aligned_alloc(4096, rounded);
      release = [](void* q) { std::free(q); };
    }
    if (p == nullptr) {
      return Status(StatusCode::kResourceExhausted,
                    fmt::format("feature cache: cannot allocate {} bytes for {} rows", bytes,
                                options.capacity_rows));
    }
    if (!release) release = [](void*) {};
    cache.slots_ = std::unique_ptr<char, std::function<void(char*)>>(
        static_cast<char*>(p), [release](char* q) { release(q); });
  }
  SEER_ASSIGN_OR_RETURN(cache.slot_index_, NodeSlotIndex::Create(options.num_nodes, options.capacity_rows));
  try {
    cache.slot_nodes_.assign(static_cast<size_t>(options.capacity_rows), kFreeSlot);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("feature cache: cannot allocate the slot list for {} rows", options.capacity_rows));
  }
  return cache;
}

int64_t FeatureCache::Gather(const int64_t* ids, int64_t count, char* batch_buffer,
                             std::vector<int32_t>* miss_positions) const {
  for (int64_t p = 0; p < count; ++p) {
    if (ids[p] < 0 || ids[p] >= num_nodes_) {
      throw std::out_of_range(fmt::format("feature cache: id {} at position {} out of range [0, {})",
                                          ids[p], p, num_nodes_));
    }
  }
  // One index lookup per position (parallel), then the rows and the miss list.
  std::vector<int32_t> slots(static_cast<size_t>(count));
  const bool copy = row_bytes_ > 0 && batch_buffer != nullptr;
  ParallelFor(tbb::blocked_range<int64_t>(0, count, 256), [&](const auto& r) {
    constexpr int64_t kAhead = 16;  // ids whose first probe is in flight
    for (int64_t p = r.begin(); p < r.end() && p < r.begin() + kAhead; ++p) slot_index_.Prefetch(ids[p]);
    for (int64_t p = r.begin(); p != r.end(); ++p) {
      if (p + kAhead < r.end()) slot_index_.Prefetch(ids[p + kAhead]);
      const int32_t slot = slot_index_.Find(ids[p]);
      slots[static_cast<size_t>(p)] = slot;
      if (copy && slot >= 0) {
        std::memcpy(batch_buffer + p * row_bytes_, slots_.get() + slot * row_bytes_,
                    static_cast<size_t>(row_bytes_));
      }
    }
  });
  int64_t hits = 0;
  for (int64_t p = 0; p < count; ++p) {
    if (slots[static_cast<size_t>(p)] >= 0) {
      ++hits;
    } else if (miss_positions != nullptr) {
      miss_positions->push_back(static_cast<int32_t>(p));
    }
  }
  return hits;
}

void FeatureCache::CheckChangeset(const Changeset& cs, const int64_t* ids, int64_t count) const {
  auto fail = [](const std::string& what) { throw std::logic_error("feature cache: bad changeset: " + what); };
  if (cs.out_ids.size() != cs.out_slots.size() || cs.in_ids.size() != cs.in_positions.size() ||
      cs.in_ids.size() != cs.in_slots.size() || cs.block_ids.size() != cs.block_slots.size()) {
    fail("array lengths differ");
  }
  // Validate everything before touching state, so a bad changeset leaves the cache as
  // is. Cost O(n log n) in the changeset size, never O(capacity).
  std::vector<int32_t> freed(cs.out_slots.begin(), cs.out_slots.end());
  std::sort(freed.begin(), freed.end());
  if (std::adjacent_find(freed.begin(), freed.end()) != freed.end()) fail("evicts a slot twice");
  for (size_t k = 0; k < cs.out_ids.size(); ++k) {
    const int32_t slot = cs.out_slots[k];
    if (slot < 0 || slot >= capacity_rows_ || cs.out_ids[k] == kFreeSlot ||
        slot_nodes_[static_cast<size_t>(slot)] != cs.out_ids[k]) {
      fail(fmt::format("evicts node {} from slot {}, which holds {}", cs.out_ids[k], slot,
                       slot >= 0 && slot < capacity_rows_ ? slot_nodes_[static_cast<size_t>(slot)] : -2));
    }
  }
  std::vector<int32_t> filled(cs.in_slots.begin(), cs.in_slots.end());
  filled.insert(filled.end(), cs.block_slots.begin(), cs.block_slots.end());
  std::sort(filled.begin(), filled.end());
  if (std::adjacent_find(filled.begin(), filled.end()) != filled.end()) fail("fills a slot twice");
  for (size_t k = 0; k < cs.in_ids.size(); ++k) {
    const int32_t slot = cs.in_slots[k];
    const int32_t pos = cs.in_positions[k];
    const int64_t node = cs.in_ids[k];
    if (pos < 0 || pos >= count || ids[pos] != node) {
      fail(fmt::format("inserts node {} from position {}, which holds {}", node, pos,
                       pos >= 0 && pos < count ? ids[pos] : -2));
    }
    if (node < 0 || node >= num_nodes_ || slot_index_.Find(node) >= 0) {
      fail(fmt::format("inserts node {} which is out of range or already cached", node));
    }
    if (slot < 0 || slot >= capacity_rows_ ||
        (slot_nodes_[static_cast<size_t>(slot)] != kFreeSlot &&
         !std::binary_search(freed.begin(), freed.end(), slot))) {
      fail(fmt::format("inserts node {} into occupied or invalid slot {}", node, slot));
    }
  }
  std::vector<int64_t> block_nodes(cs.block_ids.begin(), cs.block_ids.end());
  block_nodes.insert(block_nodes.end(), cs.in_ids.begin(), cs.in_ids.end());
  std::sort(block_nodes.begin(), block_nodes.end());
  if (std::adjacent_find(block_nodes.begin(), block_nodes.end()) != block_nodes.end()) fail("inserts a node twice");
  for (size_t k = 0; k < cs.block_ids.size(); ++k) {
    const int32_t slot = cs.block_slots[k];
    const int64_t node = cs.block_ids[k];
    if (node < 0 || node >= num_nodes_ || slot_index_.Find(node) >= 0) {
      fail(fmt::format("admits block row {} which is out of range or already cached", node));
    }
    if (slot < 0 || slot >= capacity_rows_ ||
        (slot_nodes_[static_cast<size_t>(slot)] != kFreeSlot &&
         !std::binary_search(freed.begin(), freed.end(), slot))) {
      fail(fmt::format("admits block row {} into occupied or invalid slot {}", node, slot));
    }
  }
}

void FeatureCache::ApplyEvictions(const Changeset& cs) {
  for (size_t k = 0; k < cs.out_ids.size(); ++k) {
    slot_index_.Erase(cs.out_ids[k]);
    slot_nodes_[static_cast<size_t>(cs.out_slots[k])] = kFreeSlot;
    --num_cached_;
  }
}

void FeatureCache::WriteFreeSlot(int32_t slot, const char* row) {
  if (slot < 0 || slot >= capacity_rows_ || slot_nodes_[static_cast<size_t>(slot)] != kFreeSlot) {
    throw std::logic_error(fmt::format("feature cache: WriteFreeSlot({}) on an occupied or invalid slot", slot));
  }
  if (row_bytes_ > 0) {
    std::memcpy(slots_.get() + static_cast<int64_t>(slot) * row_bytes_, row, static_cast<size_t>(row_bytes_));
  }
}

void FeatureCache::ApplyInsertions(const Changeset& cs, const char* batch_buffer) {
  // Every target slot free (after ApplyEvictions of this changeset), checked before any
  // change; the rest was checked by CheckChangeset.
  auto occupied = [this](int32_t slot) {
    return slot < 0 || slot >= capacity_rows_ || slot_nodes_[static_cast<size_t>(slot)] != kFreeSlot;
  };
  if (cs.in_ids.size() != cs.in_slots.size() || cs.in_ids.size() != cs.in_positions.size() ||
      cs.block_ids.size() != cs.block_slots.size() ||
      std::any_of(cs.in_slots.begin(), cs.in_slots.end(), occupied) ||
      std::any_of(cs.block_slots.begin(), cs.block_slots.end(), occupied)) {
    throw std::logic_error("feature cache: bad changeset: ApplyInsertions into an occupied or invalid slot");
  }
  for (size_t k = 0; k < cs.in_ids.size(); ++k) {
    slot_index_.Insert(cs.in_ids[k], cs.in_slots[k]);
    slot_nodes_[static_cast<size_t>(cs.in_slots[k])] = cs.in_ids[k];
    ++num_cached_;
  }
  for (size_t k = 0; k < cs.block_ids.size(); ++k) {
    slot_index_.Insert(cs.block_ids[k], cs.block_slots[k]);
    slot_nodes_[static_cast<size_t>(cs.block_slots[k])] = cs.block_ids[k];
    ++num_cached_;
  }
  if (row_bytes_ > 0) {
    ParallelFor(tbb::blocked_range<size_t>(0, cs.in_ids.size(), 256), [&](const auto& r) {
      for (size_t k = r.begin(); k != r.end(); ++k) {
        std::memcpy(slots_.get() + static_cast<int64_t>(cs.in_slots[k]) * row_bytes_,
                    batch_buffer + static_cast<int64_t>(cs.in_positions[k]) * row_bytes_,
                    static_cast<size_t>(row_bytes_));
      }
    });
  }
}

void FeatureCache::Apply(const Changeset& cs, const int64_t* ids, int64_t count,
                         const char* batch_buffer, const char* block_rows) {
  CheckChangeset(cs, ids, count);
  if (!cs.block_ids.empty() && row_bytes_ > 0 && block_rows == nullptr) {
    throw std::logic_error("feature cache: bad changeset: block rows without their data");
  }
  ApplyEvictions(cs);
  for (size_t k = 0; k < cs.block_ids.size(); ++k) {
    WriteFreeSlot(cs.block_slots[k], block_rows == nullptr ? nullptr : block_rows + static_cast<int64_t>(k) * row_bytes_);
  }
  ApplyInsertions(cs, batch_buffer);
}

void FeatureCache::Install(int32_t slot, int64_t node, const void* row) {
  if (slot < 0 || slot >= capacity_rows_ || node < 0 || node >= num_nodes_) {
    throw std::logic_error(fmt::format("feature cache: Install(slot {}, node {}) out of range", slot, node));
  }
  const int32_t existing = slot_index_.Find(node);
  if (existing >= 0 && existing != slot) {
    throw std::logic_error(fmt::format("feature cache: node {} already in slot {}", node, existing));
  }
  const int64_t old = slot_nodes_[static_cast<size_t>(slot)];
  if (old != kFreeSlot) {
    slot_index_.Erase(old);
    --num_cached_;
  }
  slot_nodes_[static_cast<size_t>(slot)] = node;
  slot_index_.Insert(node, slot);
  ++num_cached_;
  if (row_bytes_ > 0 && row != nullptr) {
    std::memcpy(slots_.get() + static_cast<int64_t>(slot) * row_bytes_, row, static_cast<size_t>(row_bytes_));
  }
}

void FeatureCache::Clear() {
  for (int64_t& node : slot_nodes_) node = kFreeSlot;
  slot_index_.Clear();
  num_cached_ = 0;
}

}  // namespace seer
