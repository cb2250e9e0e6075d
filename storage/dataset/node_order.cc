#include "storage/dataset/node_order.h"

#include <fcntl.h>

#include <algorithm>

#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/node_ids.h"

namespace seer {

Status CheckNodeOrderFile(const std::string& path, int64_t num_nodes) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  if (size != num_nodes * 8) {
    return Corrupt(path + ": " + std::to_string(size) + " bytes, expected " + std::to_string(num_nodes * 8) +
                   " (int64 per node, " + std::to_string(num_nodes) + " nodes)");
  }
  std::vector<uint64_t> seen(static_cast<size_t>((num_nodes + 63) / 64), 0);
  constexpr int64_t kChunk = int64_t{1} << 17;
  std::vector<int64_t> buffer(static_cast<size_t>(std::min(kChunk, std::max<int64_t>(num_nodes, 1))));
  for (int64_t k0 = 0; k0 < num_nodes; k0 += kChunk) {
    const int64_t n = std::min(kChunk, num_nodes - k0);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.data(), n * 8, k0 * 8, path));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = buffer[static_cast<size_t>(i)];
      const std::string where = path + ": entry " + std::to_string(k0 + i) + " (byte " + std::to_string((k0 + i) * 8) + ")";
      if (v < 0 || v >= num_nodes) {
        return Corrupt(where + " is " + std::to_string(v) + ", outside [0, " + std::to_string(num_nodes) + ")");
      }
      uint64_t& word = seen[static_cast<size_t>(v / 64)];
      const uint64_t bit = uint64_t{1} << (v % 64);
      if ((word & bit) != 0) return Corrupt(where + " repeats " + std::to_string(v) + ": not a permutation");
      word |= bit;
    }
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> LoadNodeOrder(const Dataset& dataset) {
  const DatasetManifest& m = dataset.manifest();
  if (m.node_order.empty()) return std::vector<int64_t>{};
  const std::string path = dataset.PathOf(m.node_order);
  SEER_RETURN_IF_ERROR(CheckNodeOrderFile(path, m.num_nodes));
  std::vector<int64_t> order(static_cast<size_t>(m.num_nodes));
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), order.data(), m.num_nodes * 8, 0, path));
  return order;
}

Result<OriginalIds> OriginalIds::Load(const Dataset& dataset) {
  const DatasetManifest& m = dataset.manifest();
  OriginalIds out;
  out.num_nodes_ = m.num_nodes;
  if (!m.node_ids.empty()) {
    SEER_ASSIGN_OR_RETURN(out.ids_, LoadNodeIds(dataset.PathOf(m.node_ids), m.num_nodes));
  }
  SEER_ASSIGN_OR_RETURN(out.order_, LoadNodeOrder(dataset));
  if (!out.order_.empty()) {
    out.node_of_rank_.assign(out.order_.size(), -1);
    for (size_t k = 0; k < out.order_.size(); ++k) {
      out.node_of_rank_[static_cast<size_t>(out.order_[k])] = static_cast<int64_t>(k);
    }
  }
  return out;
}

Result<OriginalIds> OriginalIds::LoadNodeIdsFile(const std::string& path, int64_t count) {
  OriginalIds out;
  out.num_nodes_ = count;
  if (!path.empty()) {
    SEER_ASSIGN_OR_RETURN(out.ids_, LoadNodeIds(path, count));
  }
  return out;
}

std::string OriginalIds::IdOf(int64_t node) const {
  const int64_t rank = order_.empty() ? node : order_[static_cast<size_t>(node)];
  return ids_.empty() ? std::to_string(rank) : ids_[static_cast<size_t>(rank)];
}

int64_t OriginalIds::NodeOf(std::string_view id) const {
  int64_t rank = -1;
  if (ids_.empty()) {
    if (!CanonicalIntegerId(id, &rank) || rank >= num_nodes_) return -1;
  } else {
    rank = FindNodeId(ids_, id);
    if (rank < 0) return -1;
  }
  return order_.empty() ? rank : node_of_rank_[static_cast<size_t>(rank)];
}

}  // namespace seer
