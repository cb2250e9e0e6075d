// Topology: owns what sampling reads — the dataset's indptr in RAM (CompactIndptr), the
// indices.bin BlockReader (O_DIRECT io_uring, pread pool or mmap: TopologyOptions::reader),
// and an optional neighbor cache, built in memory for a budget or loaded from DIR/ncache.
// view() lends them to a NeighborSampler / SuperbatchSampler as a TopologyView
// (inspector/sampler.h); the Topology must outlive every sampler holding its view.
// Open() blocks on the reads (and on the neighbor cache's build). After that the object
// is immutable; reads through indices() follow the BlockReader's thread-safety.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/neighbor_cache.h"
#include "inspector/sampler.h"
#include "storage/base/status.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/io/block_reader.h"
#include "storage/io/direct_reader.h"

namespace seer {

struct TopologyOptions {
  DirectReaderOptions reader;
  // Neighbor cache: when ncache_dir is non-empty it is loaded from there; otherwise one
  // is built in memory for ncache_budget_bytes (0 = none).
  std::string ncache_dir;
  int64_t ncache_budget_bytes = 0;
  // The built cache's ranking (expected list reads): the run's fan-outs and batch size
  // (empty / 0 = NeighborCacheBuildOptions' defaults).
  std::vector<int> ncache_fanouts;
  int64_t ncache_batch_size = 0;
  bool show_progress = false;
};

class Topology {
 public:
  static Result<std::unique_ptr<Topology>> Open(const Dataset& dataset,
                                                const TopologyOptions& options);
  // For tests and benchmarks: a topology over any reader (e.g. an in-RAM one).
  Topology(CompactIndptr indptr, std::unique_ptr<BlockReader> indices,
           IndexDtype index_dtype, NeighborCache ncache);

  TopologyView view() const;
  const CompactIndptr& indptr() const { return indptr_; }
  const NeighborCache& ncache() const { return ncache_; }
  BlockReader& indices() const { return *indices_; }
  int64_t num_nodes() const { return static_cast<int64_t>(indptr_.size()) - 1; }

 private:
  CompactIndptr indptr_;
  std::unique_ptr<BlockReader> indices_;
  IndexDtype index_dtype_;
  NeighborCache ncache_;
};

}  // namespace seer
