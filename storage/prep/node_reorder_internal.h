// Internal to storage/prep's node reordering (storage/prep/node_reorder.h): the bounded-
// memory pass (storage/prep/node_reorder_external.cc) and what it shares with the
// in-memory one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

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

// The output's manifest: the input's, with node_order.bin and the composed method.
DatasetManifest ReorderedManifest(const DatasetManifest& m, const ReorderOptions& options);

// ReorderDataset with options.memory_budget_bytes > 0: the same files, byte for byte,
// with external sorts and streamed passes instead of per-node tables
// (node_reorder_external.cc's header comment says what each step holds).
Result<ReorderSummary> ReorderDatasetExternal(const Dataset& dataset, const std::string& out_dir,
                                              const ReorderOptions& options);

}  // namespace seer::reorder_internal
