#include "cache/feature_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <tbb/parallel_for.h>

namespace seer {

int64_t CapacityRowsForBudget(int64_t budget_bytes, int64_t row_bytes) {
  if (row_bytes <= 0 || budget_bytes <= 0) return 0;
  return budget_bytes / row_bytes;
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
  try {
    cache.slot_table_.assign(static_cast<size_t>(options.num_nodes), -1);
    cache.slot_nodes_.assign(static_cast<size_t>(options.capacity_rows), kFreeSlot);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("feature cache: cannot allocate the slot table for {} nodes", options.num_nodes));
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
  if (row_bytes_ > 0 && batch_buffer != nullptr) {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, 256), [&](const auto& r) {
      for (int64_t p = r.begin(); p != r.end(); ++p) {
        const int32_t slot = slot_table_[static_cast<size_t>(ids[p])];
        if (slot >= 0) {
          std::memcpy(batch_buffer + p * row_bytes_, slots_.get() + slot * row_bytes_,
                      static_cast<size_t>(row_bytes_));
        }
      }
    });
  }
  int64_t hits = 0;
  for (int64_t p = 0; p < count; ++p) {
    if (slot_table_[static_cast<size_t>(ids[p])] >= 0) {
      ++hits;
    } else if (miss_positions != nullptr) {
      miss_positions->push_back(static_cast<int32_t>(p));
    }
  }
  return hits;
}

void FeatureCache::Apply(const Changeset& cs, const int64_t* ids, int64_t count,
                         const char* batch_buffer) {
  auto fail = [](const std::string& what) { throw std::logic_error("feature cache: bad changeset: " + what); };
  if (cs.out_ids.size() != cs.out_slots.size() || cs.in_ids.size() != cs.in_positions.size() ||
      cs.in_ids.size() != cs.in_slots.size()) {
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
    if (node < 0 || node >= num_nodes_ || slot_table_[static_cast<size_t>(node)] >= 0) {
      fail(fmt::format("inserts node {} which is out of range or already cached", node));
    }
    if (slot < 0 || slot >= capacity_rows_ ||
        (slot_nodes_[static_cast<size_t>(slot)] != kFreeSlot &&
         !std::binary_search(freed.begin(), freed.end(), slot))) {
      fail(fmt::format("inserts node {} into occupied or invalid slot {}", node, slot));
    }
  }
  for (size_t k = 0; k < cs.out_ids.size(); ++k) {
    slot_table_[static_cast<size_t>(cs.out_ids[k])] = -1;
    slot_nodes_[static_cast<size_t>(cs.out_slots[k])] = kFreeSlot;
    --num_cached_;
  }
  for (size_t k = 0; k < cs.in_ids.size(); ++k) {
    slot_table_[static_cast<size_t>(cs.in_ids[k])] = cs.in_slots[k];
    slot_nodes_[static_cast<size_t>(cs.in_slots[k])] = cs.in_ids[k];
    ++num_cached_;
  }
  if (row_bytes_ > 0) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, cs.in_ids.size(), 256), [&](const auto& r) {
      for (size_t k = r.begin(); k != r.end(); ++k) {
        std::memcpy(slots_.get() + static_cast<int64_t>(cs.in_slots[k]) * row_bytes_,
                    batch_buffer + static_cast<int64_t>(cs.in_positions[k]) * row_bytes_,
                    static_cast<size_t>(row_bytes_));
      }
    });
  }
}

void FeatureCache::Install(int32_t slot, int64_t node, const void* row) {
  if (slot < 0 || slot >= capacity_rows_ || node < 0 || node >= num_nodes_) {
    throw std::logic_error(fmt::format("feature cache: Install(slot {}, node {}) out of range", slot, node));
  }
  const int32_t existing = slot_table_[static_cast<size_t>(node)];
  if (existing >= 0 && existing != slot) {
    throw std::logic_error(fmt::format("feature cache: node {} already in slot {}", node, existing));
  }
  const int64_t old = slot_nodes_[static_cast<size_t>(slot)];
  if (old != kFreeSlot) {
    slot_table_[static_cast<size_t>(old)] = -1;
    --num_cached_;
  }
  slot_nodes_[static_cast<size_t>(slot)] = node;
  slot_table_[static_cast<size_t>(node)] = slot;
  ++num_cached_;
  if (row_bytes_ > 0 && row != nullptr) {
    std::memcpy(slots_.get() + static_cast<int64_t>(slot) * row_bytes_, row, static_cast<size_t>(row_bytes_));
  }
}

void FeatureCache::Clear() {
  for (int64_t& node : slot_nodes_) {
    if (node != kFreeSlot) slot_table_[static_cast<size_t>(node)] = -1;
    node = kFreeSlot;
  }
  num_cached_ = 0;
}

}  // namespace seer
