#include "executor/label_table.h"

#include <fcntl.h>

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {

Result<LabelTable> LabelTable::Load(const Dataset& dataset, std::vector<int64_t> nodes) {
  return LoadFile(dataset.PathOf(dataset_files::kLabels), 0, dataset.manifest().num_nodes,
                  dataset.manifest().num_classes, std::move(nodes));
}

Result<LabelTable> LabelTable::LoadFile(const std::string& path, int64_t first_id, int64_t count, int64_t num_classes,
                                        std::vector<int64_t> nodes) {
  LabelTable table;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const int64_t end_id = first_id + count;
  if (!nodes.empty() && (nodes.front() < first_id || nodes.back() >= end_id)) {  // sorted: the extremes
    const int64_t bad = nodes.front() < first_id ? nodes.front() : nodes.back();
    return InvalidArgument(fmt::format("{}: node id {} is out of range [{}, {})", path, bad, first_id, end_id));
  }
  table.ids_ = std::move(nodes);
  table.labels_.resize(table.ids_.size(), -1);
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  constexpr int64_t kChunk = 1 << 18;  // labels per read
  std::vector<int32_t> chunk;
  size_t i = 0;
  while (i < table.ids_.size()) {
    const int64_t begin = (table.ids_[i] - first_id) / kChunk * kChunk;  // in the file's rows
    const int64_t end = std::min(count, begin + kChunk);
    chunk.resize(static_cast<size_t>(end - begin));
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), chunk.data(), (end - begin) * 4, begin * 4, path));
    while (i < table.ids_.size() && table.ids_[i] - first_id < end) {
      const int64_t row = table.ids_[i] - first_id;
      const int32_t label = chunk[static_cast<size_t>(row - begin)];
      // Nothing reaches the model with a label outside the manifest's classes.
      if (label < -1 || label >= num_classes) {
        return Corrupt(fmt::format("{}: node {} has label {} at byte offset {}, outside [-1, {}) (num_classes {} in "
                                   "the manifest; -1 = unlabeled)",
                                   path, row, label, row * 4, num_classes, num_classes));
      }
      table.labels_[i] = label;
      ++i;
    }
  }
  return table;
}

Result<LabelTable> LabelTable::LoadAll(const Dataset& dataset, const std::vector<const std::vector<int64_t>*>& sets) {
  LabelTable all;
  for (const std::vector<int64_t>* nodes : sets) {
    SEER_ASSIGN_OR_RETURN(LabelTable more, Load(dataset, *nodes));
    all.Merge(more);
  }
  return all;
}

int32_t LabelTable::Get(int64_t node) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), node);
  if (it == ids_.end() || *it != node) return -1;
  return labels_[static_cast<size_t>(it - ids_.begin())];
}

void LabelTable::Merge(const LabelTable& other) {
  std::vector<std::pair<int64_t, int32_t>> all;
  all.reserve(ids_.size() + other.ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) all.emplace_back(ids_[i], labels_[i]);
  for (size_t i = 0; i < other.ids_.size(); ++i) all.emplace_back(other.ids_[i], other.labels_[i]);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  all.erase(std::unique(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
            all.end());
  ids_.clear();
  labels_.clear();
  for (const auto& [id, label] : all) {
    ids_.push_back(id);
    labels_.push_back(label);
  }
}

}  // namespace seer
