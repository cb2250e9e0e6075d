#include "storage/dataset/feature_units.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace seer {
namespace {

int64_t OwnRowBytes(const DatasetNodeType& t) { return t.feature_dim > 0 ? t.feature_row_bytes() : 0; }

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t FeatureUnits::ChooseUnitBytes(const DatasetManifest& typed) {
  int64_t g = 0, narrowest = 0;
  bool int8 = false;
  for (const DatasetNodeType& t : typed.node_types) {
    const int64_t w = OwnRowBytes(t);
    if (w == 0) continue;
    g = std::gcd(g, w);
    narrowest = narrowest == 0 ? w : std::min(narrowest, w);
    int8 = int8 || t.feature_dtype == FeatureDtype::kInt8;
  }
  if (g == 0) return 0;
  if (int8) return narrowest;  // whole rows: their types share one width
  int64_t best = 0;
  __int128 best_cost = 0;
  for (int64_t u = g; u <= narrowest; u += g) {
    __int128 cost = 0;
    for (const DatasetNodeType& t : typed.node_types) {
      const int64_t w = OwnRowBytes(t);
      if (w > 0) cost += static_cast<__int128>(t.count) * CeilDiv(w, u) * (u + kUnitIndexBytes);
    }
    if (best == 0 || cost <= best_cost) {  // ties: the larger unit (fewer ids to plan)
      best = u;
      best_cost = cost;
    }
  }
  return best;
}

Result<FeatureUnits> FeatureUnits::Padded(const DatasetManifest& typed, int64_t row_bytes) {
  FeatureUnits u;
  u.unit_bytes_ = row_bytes;
  u.node_offsets_.push_back(0);
  for (const DatasetNodeType& t : typed.node_types) {
    if (OwnRowBytes(t) > row_bytes) {
      return InvalidArgument(fmt::format("node type {}: rows of {} B do not fit cache rows of {} B", t.name,
                                         OwnRowBytes(t), row_bytes));
    }
    u.node_offsets_.push_back(u.node_offsets_.back() + t.count);
    u.units_per_row_.push_back(1);
    u.type_row_bytes_.push_back(OwnRowBytes(t));
  }
  u.unit_offsets_ = u.node_offsets_;
  return u;
}

Result<FeatureUnits> FeatureUnits::ByBytes(const DatasetManifest& typed) {
  const int64_t unit = ChooseUnitBytes(typed);
  if (unit == 0) return InvalidArgument("no node type has features: nothing to cache");
  FeatureUnits u;
  u.by_bytes_ = true;
  u.unit_bytes_ = unit;
  u.node_offsets_.push_back(0);
  u.unit_offsets_.push_back(0);
  for (const DatasetNodeType& t : typed.node_types) {
    const int64_t w = OwnRowBytes(t);
    const int64_t m = w == 0 ? 0 : CeilDiv(w, unit);
    u.identity_ = u.identity_ && m == 1;
    u.node_offsets_.push_back(u.node_offsets_.back() + t.count);
    u.unit_offsets_.push_back(u.unit_offsets_.back() + t.count * m);
    u.units_per_row_.push_back(m);
    u.type_row_bytes_.push_back(w);
  }
  return u;
}

Result<FeatureUnits> FeatureUnits::ForRun(const DatasetManifest& typed, int64_t view_row_bytes, bool padded) {
  if (padded || ChooseUnitBytes(typed) == 0) return Padded(typed, view_row_bytes);
  return ByBytes(typed);
}

int64_t FeatureUnits::TypeOfNode(int64_t node) const {
  return static_cast<int64_t>(std::upper_bound(node_offsets_.begin(), node_offsets_.end(), node) -
                              node_offsets_.begin()) - 1;
}

int64_t FeatureUnits::TypeOfUnit(int64_t unit) const {
  // Featureless types own empty ranges: upper_bound skips them.
  return static_cast<int64_t>(std::upper_bound(unit_offsets_.begin(), unit_offsets_.end(), unit) -
                              unit_offsets_.begin()) - 1;
}

int64_t FeatureUnits::FirstUnit(int64_t node) const {
  if (identity_) return node;
  const size_t t = static_cast<size_t>(TypeOfNode(node));
  const int64_t m = units_per_row_[t];
  return m == 0 ? -1 : unit_offsets_[t] + (node - node_offsets_[t]) * m;
}

int64_t FeatureUnits::NodeOfUnit(int64_t unit) const {
  if (identity_) return unit;
  const size_t t = static_cast<size_t>(TypeOfUnit(unit));
  return node_offsets_[t] + (unit - unit_offsets_[t]) / units_per_row_[t];
}

void FeatureUnits::Expand(const int64_t* nodes, int64_t n, std::vector<int64_t>* units) const {
  if (identity_) {
    units->insert(units->end(), nodes, nodes + n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const size_t t = static_cast<size_t>(TypeOfNode(nodes[i]));
    const int64_t m = units_per_row_[t];
    const int64_t first = unit_offsets_[t] + (nodes[i] - node_offsets_[t]) * m;
    for (int64_t j = 0; j < m; ++j) units->push_back(first + j);
  }
}

std::vector<int64_t> FeatureUnits::ExpandRanking(const std::vector<int64_t>& nodes, int64_t max_units) const {
  std::vector<int64_t> units;
  for (size_t i = 0; i < nodes.size() && static_cast<int64_t>(units.size()) < max_units; ++i) {
    Expand(&nodes[i], 1, &units);
  }
  if (static_cast<int64_t>(units.size()) > max_units) units.resize(static_cast<size_t>(max_units));
  return units;
}

std::vector<std::pair<int64_t, int64_t>> FeatureUnits::NodesWithUnits() const {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t t = 0; t < units_per_row_.size(); ++t) {
    if (units_per_row_[t] == 0 || node_offsets_[t] == node_offsets_[t + 1]) continue;
    if (!ranges.empty() && ranges.back().second == node_offsets_[t]) {
      ranges.back().second = node_offsets_[t + 1];
    } else {
      ranges.emplace_back(node_offsets_[t], node_offsets_[t + 1]);
    }
  }
  return ranges;
}

DatasetManifest FeatureUnits::CacheRows(const DatasetManifest& view) const {
  DatasetManifest rows = view;
  rows.num_nodes = num_units();
  if (view.feature_dtype != FeatureDtype::kInt8) {
    rows.feature_dim = unit_bytes_ / FeatureRowBytes(view.feature_dtype, 1);
  }
  return rows;
}

std::string FeatureUnits::Describe(const std::vector<std::string>& type_names) const {
  std::string per_type;
  for (size_t t = 0; t < units_per_row_.size(); ++t) {
    const std::string name = t < type_names.size() ? type_names[t] : std::to_string(t);
    per_type += fmt::format("{}{} {}", t == 0 ? "" : ", ", name,
                            type_row_bytes_[t] == 0 ? std::string("none")
                                                    : fmt::format("{} per row", units_per_row_[t]));
  }
  if (!by_bytes_) return fmt::format("rows of {} B (every type padded to the widest)", unit_bytes_);
  return fmt::format("by bytes: units of {} B ({})", unit_bytes_, per_type);
}

}  // namespace seer
