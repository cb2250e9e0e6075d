#include "cache/node_scores.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

namespace seer {
namespace {

// The one lookup: score = table[v] for v inside the table, else 0.
template <typename T>
NodeScoreFn LookUpIn(std::shared_ptr<const std::vector<T>> table) {
  return [table = std::move(table)](const int64_t* ids, int64_t n, uint32_t* out) {
    const T* t = table->data();
    const uint64_t size = table->size();
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t v = static_cast<uint64_t>(ids[k]);
      out[k] = v < size ? t[v] : 0u;
    }
  };
}

}  // namespace

NodeScoreFn NodeScoresFromTable(const std::vector<int64_t>& table) {
  auto scores = std::make_shared<std::vector<uint32_t>>(table.size());
  for (size_t v = 0; v < table.size(); ++v) {
    (*scores)[v] = static_cast<uint32_t>(std::clamp<int64_t>(table[v], 0, std::numeric_limits<uint32_t>::max()));
  }
  return LookUpIn<uint32_t>(std::move(scores));
}

NodeScoreFn NodeScoresFromBuckets(std::vector<uint8_t> buckets) {
  return LookUpIn<uint8_t>(std::make_shared<const std::vector<uint8_t>>(std::move(buckets)));
}

}  // namespace seer
