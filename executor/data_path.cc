#include "executor/data_path.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "kernels/device.h"
#include "storage/dataset/small_files.h"
#include "storage/base/byte_size.h"
#include "storage/io/mmap_reader.h"

namespace seer {

void KeepLargeAllocationsMapped() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Result<std::unique_ptr<BlockReader>> OpenBlockReader(const Dataset& ds, const std::string& name, const DataIoOptions& io) {
  if (io.mode == DataIoMode::kMmap) return OpenMmapReader(ds.PathOf(name));
  DirectReaderOptions reader;
  reader.mode = DirectReaderMode(io.mode);
  reader.queue_depth = io.queue_depth;
  reader.direct = io.direct;
  reader.quiet = io.quiet;
  return OpenDirectReader(ds.PathOf(name), reader);
}

// A typed dataset's topology: every relation's indptr in RAM (checked) and its indices
// through a reader, with `ncaches[r]` as relation r's neighbor cache (none when empty).
Result<std::unique_ptr<TypedTopology>> OpenTypedTopology(const Dataset& ds, const DataIoOptions& io,
                                                         std::vector<NeighborCache> ncaches) {
  const DatasetManifest& m = ds.manifest();
  SEER_ASSIGN_OR_RETURN(const auto types, RelationTypes(m));
  std::vector<TypedRelationParts> parts;
  for (size_t r = 0; r < m.relations.size(); ++r) {
    const DatasetRelation& rel = m.relations[r];
    TypedRelationParts part;
    const int64_t count_dst = m.node_types[static_cast<size_t>(types[r].second)].count;
    SEER_ASSIGN_OR_RETURN(part.indptr, CompactIndptr::LoadFile(ds.PathOf(rel.indptr), count_dst + 1, rel.num_edges));
    SEER_ASSIGN_OR_RETURN(part.indices, OpenBlockReader(ds, rel.indices, io));
    part.index_dtype = rel.index_dtype;
    part.src_type = types[r].first;
    part.dst_type = types[r].second;
    if (r < ncaches.size()) part.ncache = std::move(ncaches[r]);
    parts.push_back(std::move(part));
  }
  try {
    return std::make_unique<TypedTopology>(NodeTypeOffsets(m), std::move(parts));
  } catch (const std::invalid_argument& e) {
    return Corrupt(ds.dir() + ": " + e.what());
  }
}

// The neighbor cache's share split across a typed dataset's relations in proportion to
// what caching each one's lists whole takes (NeighborCacheFullBytes). Without a sampling
// model per relation (how often the frontier holds each destination type) that is the
// neutral choice: every relation caches about the same fraction of its lists, a share of
// the whole topology caches all of them, and no relation starves because its lists are
// few. A part that cannot hold its relation's table (TableBytes) is 0.
std::vector<int64_t> SplitShareByRelation(const TypedTopology& topology, const DatasetManifest& m, int64_t share) {
  std::vector<int64_t> full(m.relations.size()), parts(m.relations.size(), 0);
  __int128 total = 0;
  for (size_t r = 0; r < full.size(); ++r) {
    const int64_t count_dst = static_cast<int64_t>(topology.relation(static_cast<int32_t>(r)).indptr.size()) - 1;
    full[r] = NeighborCacheFullBytes(count_dst, m.relations[r].num_edges, IndexDtypeBytes(m.relations[r].index_dtype));
    total += full[r];
  }
  for (size_t r = 0; r < full.size() && total > 0; ++r) {
    const int64_t part = share >= total ? full[r] : static_cast<int64_t>(static_cast<__int128>(share) * full[r] / total);
    const int64_t count_dst = static_cast<int64_t>(topology.relation(static_cast<int32_t>(r)).indptr.size()) - 1;
    parts[r] = part >= NeighborCache::TableBytes(count_dst) ? part : 0;
  }
  return parts;
}

// One neighbor cache per relation of `topology` (its indptrs) for the share, ranked by
// out/in over all relations (TypedOutDegrees: 12 B per node while it counts, then 8 B per
// node plus 24 B per destination node of the relation being ranked) when `idle_bytes`
// holds that, else by list length (shortest first, no scan).
Result<std::vector<NeighborCache>> BuildRelationNeighborCaches(const Dataset& ds, const TypedTopology& topology,
                                                               int64_t share, int64_t idle_bytes) {
  const DatasetManifest& m = ds.manifest();
  constexpr int64_t kRankingBytesPerNode = 32;
  std::vector<int64_t> out_degrees;
  if (kRankingBytesPerNode * m.num_nodes <= idle_bytes) {
    SEER_ASSIGN_OR_RETURN(out_degrees, TypedOutDegrees(ds));
  }
  const std::vector<int64_t> parts = SplitShareByRelation(topology, m, share);
  std::vector<NeighborCache> ncaches;
  for (size_t r = 0; r < parts.size(); ++r) {
    SEER_ASSIGN_OR_RETURN(NeighborCache ncache,
                          NeighborCache::BuildForRelation(ds, r, topology.relation(static_cast<int32_t>(r)).indptr,
                                                          out_degrees, parts[r]));
    ncaches.push_back(std::move(ncache));
  }
  return ncaches;
}

// A superbatch has at most the epoch's batches, and the run has at most
// epochs x superbatches-per-epoch traces to keep in flight. An automatic superbatch
// (<= 0) is chosen by the split, knowing the epoch's batches.
void CapSuperbatchToTheRun(const PilotSpec& pilot, int64_t num_seeds, MemoryBudgetRequest* request) {
  if (num_seeds <= 0) return;
  const int64_t batches = CeilDiv(num_seeds, pilot.batch_size);
  request->epoch_batches = batches;
  if (request->traces_in_flight <= 0 || request->superbatch <= 0) return;
  request->superbatch = std::min(request->superbatch, batches);
  const int64_t per_epoch = CeilDiv(batches, request->superbatch);
  request->traces_in_flight = std::min(request->traces_in_flight, std::max<int64_t>(1, pilot.epochs) * per_epoch);
}

// The largest batch's rows, trace bytes and per-block shapes of `trace`.
void RecordBatchShapes(const SuperbatchTrace& trace, size_t num_layers, MemoryBudgetRequest* request) {
  request->measured_blocks.assign(num_layers, BlockShape{});
  for (const BatchTrace& b : trace.batches) {
    request->measured_batch_rows = std::max<int64_t>(request->measured_batch_rows, static_cast<int64_t>(b.node_ids.size()));
    int64_t trace_bytes = 8 * static_cast<int64_t>(b.node_ids.size()) +
                          4 * (2 * b.link.num_pairs() + static_cast<int64_t>(b.link.neg.size()));
    for (const LayerBlock& block : b.blocks) {
      trace_bytes += 8 * static_cast<int64_t>(block.row_ptr.size()) + 4 * static_cast<int64_t>(block.col_idx.size());
    }
    request->measured_trace_bytes = std::max(request->measured_trace_bytes, trace_bytes);
    for (size_t l = 0; l < b.blocks.size() && l < request->measured_blocks.size(); ++l) {
      BlockShape& m = request->measured_blocks[l];
      m.num_dst = std::max(m.num_dst, b.blocks[l].num_dst);
      m.num_src = std::max(m.num_src, b.blocks[l].num_src);
      m.num_edges = std::max<int64_t>(m.num_edges, static_cast<int64_t>(b.blocks[l].col_idx.size()));
    }
  }
  request->measured_batches = static_cast<int64_t>(trace.batches.size());
}

}  // namespace

void RecordNeighborCacheInUse(int64_t bytes, const std::string& source, double edge_fraction,
                              const MemoryBudgetRequest& request, MemoryBudgetSplit* split) {
  const int64_t share = split->ncache_bytes;
  split->ncache_bytes = bytes;
  split->ncache_source = bytes > 0 ? source : std::string();
  split->ncache_edge_fraction = bytes > 0 ? edge_fraction : -1;
  split->ncache_share_bytes = bytes > 0 && bytes != share ? share : -1;
  if (bytes == 0 && share > 0 && split->warnings.empty()) {
    split->warnings.push_back("the neighbor cache's share (" + FormatBytes(share) +
                              ") could not be used: sampling reads every adjacency list from the SSD");
  }
  // The unused share goes to an automatic feature cache (never beyond every row).
  if (request.fcache_budget_bytes < 0 && request.feature_cache_used && request.feature_row_bytes > 0 &&
      share > bytes) {
    const int64_t rows = std::min(request.num_nodes,
                                  FeatureCacheRowsFor(split->fcache_bytes + split->fcache_index_bytes + share - bytes,
                                                      request.feature_row_bytes, request.policy_bytes_per_row));
    split->fcache_rows = std::max(split->fcache_rows, rows);
    split->fcache_bytes = split->fcache_rows * request.feature_row_bytes;
    split->fcache_index_bytes =
        FeatureCacheBytes(split->fcache_rows, request.feature_row_bytes, request.policy_bytes_per_row) -
        split->fcache_bytes;
    if (split->fcache_rows > 0) {
      auto& w = split->warnings;
      w.erase(std::remove_if(w.begin(), w.end(), [](const std::string& line) { return line.rfind("the feature cache", 0) == 0; }),
              w.end());
    }
  }
}

namespace {

// The per-relation caches in use, recorded in the split like the homogeneous cache.
void RecordTypedNeighborCaches(const TypedTopology& topology, const DatasetManifest& m,
                               const MemoryBudgetRequest& request, MemoryBudgetSplit* split) {
  int64_t edges = 0, edges_cached = 0;
  for (int32_t r = 0; r < topology.num_relations(); ++r) {
    const NeighborCache& ncache = topology.relation(r).ncache;
    edges += m.relations[static_cast<size_t>(r)].num_edges;
    edges_cached += ncache.enabled() ? ncache.stats().edges_cached : 0;
  }
  const int64_t bytes = topology.ncache_bytes();
  const double edge_fraction =
      bytes > 0 && edges > 0 ? static_cast<double>(edges_cached) / static_cast<double>(edges) : -1;
  RecordNeighborCacheInUse(bytes, "built in memory, per relation", edge_fraction, request, split);
}

}  // namespace

PilotSpec MakePilot(int64_t batch_size, const std::vector<int>& fanouts, uint64_t seed, int num_threads) {
  PilotSpec pilot;
  pilot.batch_size = batch_size;
  pilot.fanouts = fanouts;
  pilot.seed = seed;
  pilot.num_threads = num_threads;
  return pilot;
}

Status MeasurePilotBatches(const TopologyView& view, const SplitLoader& load_split, PilotSpec& pilot,
                           MemoryBudgetRequest* request) {
  if (pilot.batches <= 0) return Status::Ok();
  if (pilot.link) {
    // Link batches: the first batches of epoch 0's edge order, negatives included.
    SEER_ASSIGN_OR_RETURN(LinkBatcher batcher, LinkBatcher::ForTopologyEdges(view, *pilot.link, pilot.seed));
    CapSuperbatchToTheRun(pilot, batcher.num_pairs(), request);
    const SuperbatchOptions options = MakeSuperbatchOptions(pilot.batch_size, pilot.batches, pilot.num_threads,
                                                           pilot.fanouts, pilot.seed, /*shuffle=*/true);
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler,
                          SuperbatchSampler::CreateLink(view, std::make_shared<LinkBatcher>(std::move(batcher)), options));
    SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, 0));
    RecordBatchShapes(trace, pilot.fanouts.size(), request);
    return Status::Ok();
  }
  if (!pilot.split.empty()) {
    SEER_ASSIGN_OR_RETURN(pilot.loaded, load_split(pilot.split));
  }
  const std::vector<int64_t>& from = pilot.split.empty() ? pilot.ids : *pilot.loaded;
  const int64_t n = static_cast<int64_t>(from.size());
  CapSuperbatchToTheRun(pilot, n, request);
  const int64_t want = std::min(n, pilot.batches * pilot.batch_size);
  if (want <= 0) return Status::Ok();
  std::vector<int64_t> seeds(static_cast<size_t>(want));
  for (int64_t i = 0; i < want; ++i) seeds[static_cast<size_t>(i)] = from[static_cast<size_t>(i * n / want)];
  // Bad ids are the caller's to report (with their position); the pilot just skips them.
  const int64_t num_nodes = view.num_nodes();
  seeds.erase(std::remove_if(seeds.begin(), seeds.end(), [&](int64_t v) { return v < 0 || v >= num_nodes; }),
              seeds.end());
  if (seeds.empty()) return Status::Ok();
  SuperbatchOptions options = MakeSuperbatchOptions(pilot.batch_size, pilot.batches, pilot.num_threads,
                                                   pilot.fanouts, pilot.seed, /*shuffle=*/false);
  options.sampler.relation_fanouts = pilot.relation_fanouts;
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::Create(view, std::move(seeds), options));
  SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, 0));
  RecordBatchShapes(trace, pilot.fanouts.size(), request);
  return Status::Ok();
}

Result<std::unique_ptr<DataPath>> DataPath::Open(const std::string& dataset_dir, const MemoryBudgetRequest& request,
                                                 const DataIoOptions& io, PilotSpec* pilot) {
  std::unique_ptr<DataPath> path(new DataPath());
  if (io.read_block_bytes < 0 || (io.read_block_bytes & (io.read_block_bytes - 1)) != 0) {
    return InvalidArgument("--read-block " + std::to_string(io.read_block_bytes) +
                           ": must be 0 (per-row reads) or a power of two bytes, e.g. 4K");
  }
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::OpenAnyKind(dataset_dir));
  if (dataset.manifest().typed()) {
    path->dataset_.emplace(std::move(dataset));
    SEER_RETURN_IF_ERROR(path->OpenTypedReaders(io, request, pilot));
    return path;
  }
  const DatasetManifest& m = dataset.manifest();
  if (!io.relation_fanouts.empty() || !io.target_type.empty()) {
    return InvalidArgument(dataset_dir + ": " + (io.target_type.empty() ? "--relation-fanouts" : "--target-type") +
                           " is for typed datasets; this one has one node type and one relation");
  }
  if (m.feature_dim <= 0) {
    return InvalidArgument(dataset_dir + ": the dataset has no node features (feature_dim " +
                           std::to_string(m.feature_dim) +
                           " in the manifest): training and prediction read features.bin; convert it again with "
                           "seer prep --features FILE.npy");
  }
  // indptr, labels and splits in full (one sequential pass): nothing downstream meets a
  // non-monotone indptr, an out-of-range label or overlapping splits.
  SEER_RETURN_IF_ERROR(ValidateSmallFiles(dataset, !io.quiet).status());
  path->dataset_.emplace(std::move(dataset));
  SEER_RETURN_IF_ERROR(path->OpenReaders(io, request, pilot));
  return path;
}

Status DataPath::OpenReaders(const DataIoOptions& io, MemoryBudgetRequest request, PilotSpec* pilot) {
  const Dataset& ds = *dataset_;
  const DatasetManifest& m = ds.manifest();
  request.num_nodes = m.num_nodes;
  request.feature_dim = m.feature_dim;
  request.feature_row_bytes = m.feature_row_bytes();
  request.read_block_bytes = io.read_block_bytes;
  request.num_classes = m.num_classes;
  request.topology_bytes = NeighborCacheFullBytes(m.num_nodes, m.num_edges, m.index_bytes());
  SEER_ASSIGN_OR_RETURN(CompactIndptr indptr, CompactIndptr::Load(ds));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> indices, OpenBlockReader(ds, dataset_files::kIndices, io));
  if (pilot != nullptr) {
    TopologyView view;
    view.indptr = &indptr;
    view.indices = indices.get();
    view.index_dtype = m.index_dtype;
    SEER_RETURN_IF_ERROR(MeasurePilotBatches(view, [this](const std::string& name) { return LoadSplit(name); }, *pilot,
                                             &request));
  }
  SEER_ASSIGN_OR_RETURN(split_, SplitMemoryBudget(request));
  SEER_RETURN_IF_ERROR(OpenCaches(std::move(indptr), std::move(indices), request));
  SEER_ASSIGN_OR_RETURN(features_, OpenBlockReader(ds, dataset_files::kFeatures, io));
  return OpenFeatureCache(io);
}

// The feature cache over features_ (the split's rows) and the gatherer over both.
Status DataPath::OpenFeatureCache(const DataIoOptions& io) {
  const DatasetManifest m = cache_rows();
  FeatureCacheOptions cache_options;
  cache_options.num_nodes = m.num_nodes;
  cache_options.capacity_rows = split_.fcache_rows;
  cache_options.row_bytes = m.feature_row_bytes();
  if (io.pin_feature_cache) {
    // One allocation per cache: the flag says which allocator its release must use.
    auto pinned = std::make_shared<bool>(false);
    cache_options.allocate = [pinned](size_t bytes) -> void* {
      if (void* p = kernels::CudaAllocPinned(bytes)) {
        *pinned = true;
        return p;
      }
      return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    };
    cache_options.release = [pinned](void* p) {
      if (*pinned) {
        kernels::CudaFreePinned(p);
      } else {
        std::free(p);
      }
    };
  }
  SEER_ASSIGN_OR_RETURN(FeatureCache cache, FeatureCache::Create(cache_options));
  cache_.emplace(std::move(cache));
  if (units_) {
    gatherer_ = std::make_unique<FeatureGatherer>(features_.get(), m, &*cache_, *units_, manifest().feature_dim);
  } else {
    gatherer_ = std::make_unique<FeatureGatherer>(features_.get(), m, &*cache_, io.read_block_bytes);
  }
  return Status::Ok();
}

// The neighbor cache: a prebuilt DIR/ncache when it fits its share of the budget and
// holds about what a cache built for the share would (every list, or >= 90 % of the
// share), else built in memory for the share; then the topology over it. The split then
// records the cache in use, and a share it does not use goes to the feature cache (when
// that one's share is automatic).
Status DataPath::OpenCaches(CompactIndptr indptr, std::unique_ptr<BlockReader> indices,
                            const MemoryBudgetRequest& request) {
  const Dataset& ds = *dataset_;
  NeighborCache ncache;
  std::string source;
  const int64_t share = split_.ncache_bytes;
  if (share > 0) {
    const std::string ncache_dir = NeighborCache::DefaultDir(ds);
    if (std::filesystem::exists(ncache_dir + "/" + NeighborCache::kManifestName)) {
      auto loaded = NeighborCache::Load(ncache_dir, ds);
      if (!loaded.ok()) {
        source = "built in memory; prebuilt " + ncache_dir + " unreadable: " + loaded.status().message();
      } else if (loaded->stats().bytes > share) {
        source = "built in memory; prebuilt " + ncache_dir + " (" + FormatBytes(loaded->stats().bytes) +
                 ") exceeds the share";
      } else if (loaded->stats().edges_cached < loaded->stats().num_edges &&
                 10 * loaded->stats().bytes < 9 * share) {
        source = "built in memory; prebuilt " + ncache_dir + " (" + FormatBytes(loaded->stats().bytes) +
                 ") holds less than the share";
      } else {
        ncache = std::move(loaded).value();
        source = "prebuilt " + ncache_dir;
      }
    }
    if (!ncache.enabled()) {
      // Ranked by the expected list reads of this run's sampling (fan-outs, batch size).
      // That ranking holds ~32 B per node while it runs (visit probabilities, in-degrees,
      // the order); it may use what the budget holds besides the tables and this cache
      // (nothing else is allocated yet). Beyond that — a billion nodes — rank by out/in
      // degree, streaming: the cache + a scan buffer + 32 B per cached node, whatever N.
      NeighborCacheBuildOptions build;
      if (!request.fanouts.empty()) build.fanouts = request.fanouts;
      if (request.batch_size > 0) build.batch_size = request.batch_size;
      constexpr int64_t kLookupsRankingBytesPerNode = 32;
      const int64_t ranking_bytes = kLookupsRankingBytesPerNode * ds.manifest().num_nodes;
      const int64_t idle = request.budget_bytes - split_.runtime_bytes - split_.table_bytes - share;
      if (request.budget_bytes > 0 && ranking_bytes > idle) {
        build.score = NeighborCacheScore::kOutInDegree;
        build.scan_memory_bytes = std::clamp<int64_t>(idle, int64_t{16} << 20, int64_t{1} << 30);
        SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::BuildOutInStreaming(ds, share, build));
        source = (source.empty() ? std::string("built in memory") : source) +
                 ", ranked by out/in degree (streaming): ranking by expected lookups needs " +
                 FormatBytes(ranking_bytes) + " here, the budget leaves " + FormatBytes(std::max<int64_t>(0, idle)) +
                 " (prebuild it with seer ncache build on a machine with more memory)";
      } else {
        SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Build(ds, indptr, share, build));
        if (source.empty()) source = "built in memory";
      }
    }
  }
  RecordNeighborCacheInUse(ncache.enabled() ? ncache.stats().bytes : 0, source,
                           ncache.enabled() && ncache.stats().num_edges > 0
                               ? static_cast<double>(ncache.stats().edges_cached) /
                                     static_cast<double>(ncache.stats().num_edges)
                               : -1,
                           request, &split_);
  topology_ = std::make_unique<Topology>(std::move(indptr), std::move(indices), ds.manifest().index_dtype,
                                         std::move(ncache));
  return Status::Ok();
}

Result<std::vector<int64_t>> DataPath::TakeSplit(PilotSpec& pilot, const std::string& name) const {
  if (pilot.split == name && pilot.loaded) {
    std::vector<int64_t> ids = std::move(*pilot.loaded);
    pilot.loaded.reset();
    return ids;
  }
  return LoadSplit(name);
}

Result<std::vector<int64_t>> DataPath::LoadSplit(const std::string& name) const {
  if (target_) return LoadTargetSplit(*dataset_, *target_, name);
  return dataset_->LoadSplit(name);
}

Result<LabelTable> DataPath::LoadLabels(const std::vector<const std::vector<int64_t>*>& sets) const {
  if (target_) return LoadTargetLabels(*dataset_, *target_, sets);
  return LabelTable::LoadAll(*dataset_, sets);
}

// A typed dataset (executor/typed_data.h): the target and the training view; every
// relation's indptr in RAM and its indices through a reader; the pilot; the split (the
// neighbor cache's share capped at every relation's lists); the per-relation neighbor
// caches; the features of every type behind one TypedFeatureReader; the feature cache
// over global ids.
Status DataPath::OpenTypedReaders(const DataIoOptions& io, MemoryBudgetRequest request, PilotSpec* pilot) {
  const Dataset& ds = *dataset_;
  const DatasetManifest& m = ds.manifest();
  if (io.read_block_bytes > 0) {
    return InvalidArgument(ds.dir() + ": --read-block is not supported on typed datasets yet (rows of several files)");
  }
  if (pilot != nullptr && pilot->link) {
    return InvalidArgument(ds.dir() + ": link prediction on typed datasets is not supported yet");
  }
  SEER_ASSIGN_OR_RETURN(target_, ResolveTarget(m, io.target_type));
  SEER_ASSIGN_OR_RETURN(view_, TypedTrainingView(m, *target_));
  SEER_ASSIGN_OR_RETURN(const auto types, RelationTypes(m));
  SEER_ASSIGN_OR_RETURN(typed_topology_, OpenTypedTopology(ds, io, {}));
  const DatasetManifest& v = *view_;
  // The cache's rows: by bytes unless padded rows are asked for (or nothing has features).
  SEER_ASSIGN_OR_RETURN(FeatureUnits units, FeatureUnits::ForRun(m, v.feature_row_bytes(), io.pad_typed_rows));
  units_.emplace(std::move(units));
  request.num_nodes = v.num_nodes;
  request.feature_dim = v.feature_dim;
  request.feature_row_bytes = v.feature_row_bytes();
  if (!units_->identity()) {
    request.feature_row_bytes = units_->unit_bytes();
    request.feature_cache_rows_max = units_->num_units();
  }
  request.num_classes = v.num_classes;
  request.indptr_entries = 0;
  for (const auto& [src, dst] : types) request.indptr_entries += m.node_types[static_cast<size_t>(dst)].count + 1;
  request.topology_bytes = 0;  // every relation's lists cached
  for (size_t r = 0; r < m.relations.size(); ++r) {
    request.topology_bytes += NeighborCacheFullBytes(m.node_types[static_cast<size_t>(types[r].second)].count,
                                                     m.relations[r].num_edges, IndexDtypeBytes(m.relations[r].index_dtype));
  }
  if (!io.relation_fanouts.empty()) {
    const std::vector<int>& fanouts = pilot != nullptr ? pilot->fanouts : request.fanouts;
    SEER_ASSIGN_OR_RETURN(relation_fanouts_, ParseRelationFanouts(io.relation_fanouts, RelationKeys(m), fanouts));
  }
  if (pilot != nullptr) {
    pilot->relation_fanouts = relation_fanouts_;
    SEER_RETURN_IF_ERROR(MeasurePilotBatches(typed_topology_->view(),
                                             [this](const std::string& name) { return LoadSplit(name); }, *pilot,
                                             &request));
  }
  SEER_ASSIGN_OR_RETURN(split_, SplitMemoryBudget(request));
  if (split_.ncache_bytes > 0) {
    const int64_t idle = request.budget_bytes > 0
                             ? request.budget_bytes - split_.runtime_bytes - split_.table_bytes - split_.ncache_bytes
                             : std::numeric_limits<int64_t>::max();
    SEER_ASSIGN_OR_RETURN(auto ncaches, BuildRelationNeighborCaches(ds, *typed_topology_, split_.ncache_bytes, idle));
    typed_topology_.reset();  // its indptrs go before the cached topology loads them again
    SEER_ASSIGN_OR_RETURN(typed_topology_, OpenTypedTopology(ds, io, std::move(ncaches)));
  }
  RecordTypedNeighborCaches(*typed_topology_, m, request, &split_);
  std::vector<std::unique_ptr<BlockReader>> readers;
  for (const DatasetNodeType& t : m.node_types) {
    readers.emplace_back();
    if (t.feature_dim > 0) {
      SEER_ASSIGN_OR_RETURN(readers.back(), OpenBlockReader(ds, t.features, io));
    }
  }
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<TypedFeatureReader> features,
                        TypedFeatureReader::Create(ds, std::move(readers), *units_));
  features_ = std::move(features);
  return OpenFeatureCache(io);
}

}  // namespace seer
