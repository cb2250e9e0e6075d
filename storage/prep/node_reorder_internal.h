// Internal to storage/prep's node reordering (storage/prep/node_reorder.h): the bounded-
// memory pass (storage/prep/node_reorder_external.cc) and what it shares with the
// in-memory one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/node_reorder.h"

namespace seer::reorder_internal {

// A file mapped shared (the page cache, no copy): read-only, or read-write over a new
// scratch file of `size` bytes; unmapped on destruction. An empty file maps to nullptr.
class Mapping {
 public:
  static Result<Mapping> ReadOnly(const std::string& path);
  static Result<Mapping> Scratch(const std::string& path, int64_t size);
  Mapping() = default;
  Mapping(Mapping&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  Mapping& operator=(Mapping&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();
  char* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  static Result<Mapping> Map(int fd, int64_t size, int prot, const std::string& path);
  char* data_ = nullptr;
  int64_t size_ = 0;
};

// Breadth-first numbering over in-neighbor lists, roots in node order (ComputeNodeOrder's
// kBfs): fills order[0..n) with the old node of each new number; order doubles as the
// queue (head chases tail), so it may be a mapped file. indptr(v) and neighbor(e) read
// the lists; after each dequeued node, on_node() (progress). kCorrupt, naming
// `indices_path`, for a neighbor outside [0, n).
template <typename Indptr, typename Neighbor, typename OnNode>
Status BreadthFirstOrder(int64_t n, const Indptr& indptr, const Neighbor& neighbor, int64_t* order,
                         const std::string& indices_path, const OnNode& on_node) {
  std::vector<uint64_t> visited(static_cast<size_t>((n + 63) / 64), 0);
  auto visit = [&](int64_t v) {
    uint64_t& word = visited[static_cast<size_t>(v >> 6)];
    const uint64_t bit = uint64_t{1} << (v & 63);
    if ((word & bit) != 0) return false;
    word |= bit;
    return true;
  };
  int64_t tail = 0;
  for (int64_t root = 0; root < n; ++root) {
    if (!visit(root)) continue;
    int64_t head = tail;
    order[tail++] = root;
    while (head < tail) {
      const int64_t v = order[head++];
      for (int64_t e = indptr(v), end = indptr(v + 1); e < end; ++e) {
        const int64_t u = neighbor(e);
        if (u < 0 || u >= n) return Corrupt(indices_path + ": node id " + std::to_string(u) + " out of range");
        if (visit(u)) order[tail++] = u;
      }
      on_node();
    }
  }
  return Status::Ok();
}

// The output's manifest: the input's, with node_order.bin and the composed method.
DatasetManifest ReorderedManifest(const DatasetManifest& m, const ReorderOptions& options);

// ReorderDataset with options.memory_budget_bytes > 0: the same files, byte for byte,
// with external sorts and streamed passes instead of per-node tables
// (node_reorder_external.cc's header comment says what each step holds).
Result<ReorderSummary> ReorderDatasetExternal(const Dataset& dataset, const std::string& out_dir,
                                              const ReorderOptions& options);

}  // namespace seer::reorder_internal
