#include "cache/belady_initial_fill.h"

#include <algorithm>
#include <unordered_set>

namespace seer {

std::vector<int64_t> BeladyInitialFill(const std::vector<IdSpan>& batches, int64_t capacity_rows,
                                       const std::vector<int64_t>& fill_ranking) {
  std::vector<int64_t> slots = EmptyCacheState(capacity_rows);
  std::unordered_set<int64_t> seen;
  int64_t filled = 0;
  std::vector<int64_t> fresh;
  for (const IdSpan& b : batches) {
    if (filled >= capacity_rows) break;
    fresh.clear();
    for (int64_t p = 0; p < b.size; ++p) {
      if (seen.insert(b.data[p]).second) fresh.push_back(b.data[p]);
    }
    std::sort(fresh.begin(), fresh.end());  // same first use: lower id first
    for (int64_t v : fresh) {
      if (filled >= capacity_rows) break;
      slots[static_cast<size_t>(filled++)] = v;
    }
  }
  for (size_t k = 0; k < fill_ranking.size() && filled < capacity_rows; ++k) {
    if (fill_ranking[k] >= 0 && seen.insert(fill_ranking[k]).second) {
      slots[static_cast<size_t>(filled++)] = fill_ranking[k];
    }
  }
  return slots;
}

}  // namespace seer
