// DataPath: everything a training or prediction run reads, opened in one step —
//
//   Open  opens the dataset; loads indptr into RAM; opens indices.bin and features.bin
//         through a BlockReader (O_DIRECT io_uring, or the page cache through mmap);
//         samples the pilot batches (PilotSpec) so the memory split is sized from real
//         batch shapes; splits the --memory-budget (SplitMemoryBudget, which also picks
//         --superbatch auto); builds or loads the neighbor cache within its share (a
//         prebuilt DIR/ncache only when it holds about what the share would) and records
//         the cache in use in split(); creates the feature cache and the FeatureGatherer
//         over it.
//
// The DataPath owns all of these; the gatherer points into the cache and the reader, so
// a DataPath is neither copied nor moved (Open returns it by unique_ptr). Open blocks on
// disk reads. Afterwards the topology may be sampled from several threads (the sampler's
// contract), while the gatherer and the cache are one thread's at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/feature_cache.h"
#include "executor/data_io_mode.h"
#include "executor/feature_gather.h"
#include "executor/memory_budget.h"
#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
#include "inspector/typed_topology.h"
#include "executor/label_table.h"
#include "executor/typed_data.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/feature_units.h"
#include "storage/io/direct_reader.h"

namespace seer {

struct DataIoOptions {
  DataIoMode mode = DataIoMode::kAuto;  // kMmap: the page cache through mmap, not the direct reader
  int queue_depth = 64;
  bool direct = true;
  bool quiet = false;
  // Training on a CUDA device: the feature cache's slots in page-locked memory
  // (kernels::CudaAllocPinned), falling back to ordinary memory when pinning fails.
  bool pin_feature_cache = false;
  // Block-granular feature reads (cache/read_blocks.h, FeatureGatherer): 0 = per row;
  // otherwise a power of two.
  int64_t read_block_bytes = 0;
  // Typed datasets: the node type whose labels and splits the run uses ("" = the only
  // labeled one; executor/typed_data.h) and the per-relation fan-outs
  // (ParseRelationFanouts' text, "" = the pilot's fan-outs for every relation). A
  // homogeneous dataset refuses relation fan-outs.
  std::string target_type;
  std::string relation_fanouts;
  // Typed datasets: the feature cache's rows (storage/dataset/feature_units.h). false = by
  // bytes (the default: units, featureless nodes never cached); true = one row per node
  // padded to the widest type's (what the device tier, --device-cache, caches).
  bool pad_typed_rows = false;
};

// Batches sampled before the budget is split, so staging and the model's working set are
// sized from real batch shapes (MemoryBudgetRequest::measured_*) rather than estimated.
struct PilotSpec {
  std::string split;            // seeds from this split file ("train", "test"), or
  std::vector<int64_t> ids;     // these distinct ids when split is empty
  int64_t batch_size = 1000;
  std::vector<int> fanouts;
  std::vector<std::vector<int>> relation_fanouts;  // typed datasets (SamplerOptions); filled by DataPath::Open
  uint64_t seed = 0;
  int num_threads = 0;
  int64_t batches = 2;          // pilot batches (0 = no pilot: the estimate is used)
  // Link prediction: the pilot samples link batches of batch_size training edges with
  // these negatives (inspector/link_batch.h) instead of node seeds; split/ids unused.
  std::optional<LinkSeedOptions> link;
  int64_t epochs = 1;           // with request->superbatch: caps the traces in flight at
                                // the number of superbatches the run has
  // Out: the split as the pilot loaded it, so the run does not read it a second time.
  std::optional<std::vector<int64_t>> loaded;
};

PilotSpec MakePilot(int64_t batch_size, const std::vector<int>& fanouts, uint64_t seed, int num_threads);

// Samples `pilot.batches` batches of evenly spaced seeds (no shuffle, so no copy of a
// large seed list) straight from the topology's files, and records the largest batch's
// rows and per-block shapes in *request; also caps request->superbatch and
// traces_in_flight by what the run has. Ids out of range are skipped (the caller reports
// them). `load_split` reads a split's seeds (a typed dataset's target type's, in global ids).
using SplitLoader = std::function<Result<std::vector<int64_t>>(const std::string&)>;
Status MeasurePilotBatches(const TopologyView& view, const SplitLoader& load_split, PilotSpec& pilot,
                           MemoryBudgetRequest* request);

// Records in *split the neighbor cache actually in use (`bytes`, 0 = none; where it came
// from; the fraction of edges it holds, -1 unknown) in place of the split's share; a share
// it leaves unused goes to the feature cache when that one is automatic.
void RecordNeighborCacheInUse(int64_t bytes, const std::string& source, double edge_fraction,
                              const MemoryBudgetRequest& request, MemoryBudgetSplit* split);

// For the run loops, before opening the data path: batch buffers, traces and plans are
// large, short-lived allocations made on several threads. glibc's dynamic mmap threshold
// would move them onto arena heaps after the first free, where freed pages stay
// resident; a fixed threshold keeps them mmapped so peak RSS tracks the memory budget
// (measured: ~10 MiB less on a 32 MiB budget). Process-wide (mallopt).
void KeepLargeAllocationsMapped();

class DataPath {
 public:
  // `request` needs the run's budget and batch parameters; the graph's sizes are filled in
  // from the dataset. `pilot` may be null (no pilot batches).
  static Result<std::unique_ptr<DataPath>> Open(const std::string& dataset_dir, const MemoryBudgetRequest& request,
                                                const DataIoOptions& io, PilotSpec* pilot);
  DataPath(const DataPath&) = delete;
  DataPath& operator=(const DataPath&) = delete;

  const Dataset& dataset() const { return *dataset_; }
  // The manifest the run reads: the dataset's, or for a typed dataset its training view
  // (executor/typed_data.h: every node type in one global id space, the target's classes).
  const DatasetManifest& manifest() const { return view_ ? *view_ : dataset_->manifest(); }
  // What the samplers read (typed or not).
  TopologyView topology_view() const { return typed_topology_ ? typed_topology_->view() : topology_->view(); }
  // The full graph's indptr (GCN's graph normalisation); null for a typed dataset.
  const CompactIndptr* graph_indptr() const { return topology_ ? &topology_->indptr() : nullptr; }
  // A typed dataset's target node type; null for a homogeneous dataset.
  const TypedTarget* target() const { return target_ ? &*target_ : nullptr; }
  const TypedTopology* typed_topology() const { return typed_topology_.get(); }
  // A typed dataset's per-relation fan-outs (SamplerOptions::relation_fanouts); empty otherwise.
  const std::vector<std::vector<int>>& relation_fanouts() const { return relation_fanouts_; }
  const BlockReader& features() const { return *features_; }
  // A typed dataset's feature cache layout; null for a homogeneous dataset.
  const FeatureUnits* feature_units() const { return units_ ? &*units_ : nullptr; }
  // The feature cache's rows: manifest(), or for a typed dataset its layout's cache rows
  // (FeatureUnits::CacheRows: units when cached by bytes).
  DatasetManifest cache_rows() const { return units_ ? units_->CacheRows(manifest()) : manifest(); }
  FeatureGatherer& gatherer() { return *gatherer_; }
  const MemoryBudgetSplit& split() const { return split_; }

  // `name`'s seed ids: the pilot's copy when it loaded that split (handed over once),
  // else read from disk.
  Result<std::vector<int64_t>> TakeSplit(PilotSpec& pilot, const std::string& name) const;
  // A split's seed ids (a typed dataset: its target type's, in global ids).
  Result<std::vector<int64_t>> LoadSplit(const std::string& name) const;
  // The labels of the union of `sets` (a typed dataset: of its target type).
  Result<LabelTable> LoadLabels(const std::vector<const std::vector<int64_t>*>& sets) const;

 private:
  DataPath() = default;
  Status OpenReaders(const DataIoOptions& io, MemoryBudgetRequest request, PilotSpec* pilot);
  Status OpenCaches(CompactIndptr indptr, std::unique_ptr<BlockReader> indices,
                    const MemoryBudgetRequest& request);
  Status OpenTypedReaders(const DataIoOptions& io, MemoryBudgetRequest request, PilotSpec* pilot);
  Status OpenFeatureCache(const DataIoOptions& io);

  std::optional<Dataset> dataset_;
  std::optional<TypedTarget> target_;      // typed datasets
  std::optional<DatasetManifest> view_;    // typed datasets: TypedTrainingView
  std::optional<FeatureUnits> units_;      // typed datasets: the feature cache's layout
  std::unique_ptr<Topology> topology_;     // homogeneous datasets
  std::unique_ptr<TypedTopology> typed_topology_;  // typed datasets
  std::vector<std::vector<int>> relation_fanouts_;
  std::unique_ptr<BlockReader> features_;
  std::optional<FeatureCache> cache_;
  std::unique_ptr<FeatureGatherer> gatherer_;
  MemoryBudgetSplit split_;
};

}  // namespace seer
