#include "inspector/topology.h"

#include <utility>

namespace seer {

Topology::Topology(CompactIndptr indptr, std::unique_ptr<BlockReader> indices,
                   IndexDtype index_dtype, NeighborCache ncache)
    : indptr_(std::move(indptr)),
      indices_(std::move(indices)),
      index_dtype_(index_dtype),
      ncache_(std::move(ncache)) {}

TopologyView Topology::view() const {
  TopologyView view;
  view.indptr = &indptr_;
  view.indices = indices_.get();
  view.index_dtype = index_dtype_;
  view.ncache = ncache_.enabled() ? &ncache_ : nullptr;
  return view;
}

Result<std::unique_ptr<Topology>> Topology::Open(const Dataset& dataset,
                                                 const TopologyOptions& options) {
  SEER_ASSIGN_OR_RETURN(CompactIndptr indptr, CompactIndptr::Load(dataset));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> reader,
                        OpenDirectReader(dataset.PathOf(dataset_files::kIndices), options.reader));
  NeighborCache ncache;
  if (!options.ncache_dir.empty()) {
    SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Load(options.ncache_dir, dataset));
  } else if (options.ncache_budget_bytes > 0) {
    NeighborCacheBuildOptions build;
    build.show_progress = options.show_progress;
    if (!options.ncache_fanouts.empty()) build.fanouts = options.ncache_fanouts;
    if (options.ncache_batch_size > 0) build.batch_size = options.ncache_batch_size;
    SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Build(dataset, indptr,
                                                       options.ncache_budget_bytes, build));
  }
  return std::make_unique<Topology>(std::move(indptr), std::move(reader),
                                    dataset.manifest().index_dtype, std::move(ncache));
}

}  // namespace seer
