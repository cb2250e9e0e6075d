#include "inspector/sample_run.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "inspector/topology.h"
#include "inspector/trace_directory.h"
#include "inspector/typed_topology.h"
#include "storage/base/json_file.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/typed_target.h"

namespace seer {
namespace {

std::string DefaultRuntimeDir(const std::string& dataset_dir) {
  std::filesystem::path p = std::filesystem::absolute(dataset_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return (p.parent_path() / "seer-runtime").string();
}

Status CheckOptions(const SampleRunOptions& o, const DatasetManifest& m) {
  if (!m.typed() && (!o.target_type.empty() || !o.relation_fanouts.empty())) {
    return InvalidArgument(o.dataset_dir + ": " + (o.target_type.empty() ? "--relation-fanouts" : "--target-type") +
                           " is for typed datasets; this one has one node type and one relation");
  }
  if (o.epochs < 0) return InvalidArgument(fmt::format("epochs must be >= 0, got {}", o.epochs));
  if (o.queue_depth < 1) return InvalidArgument(fmt::format("queue depth must be >= 1, got {}", o.queue_depth));
  if (o.split != "train" && o.split != "valid" && o.split != "test") {
    return InvalidArgument("split must be train, valid or test, got '" + o.split + "'");
  }
  return Status::Ok();
}

// What the sampler reads: a dataset's Topology, or a typed dataset's TypedTopology with
// its target type, per-relation fan-outs and training view's identity.
struct SampleSource {
  std::unique_ptr<Topology> topology;
  std::unique_ptr<TypedTopology> typed;
  std::optional<TypedTarget> target;
  std::vector<std::vector<int>> relation_fanouts;  // every relation's (recorded in trace.json)
  bool relation_fanouts_given = false;             // --relation-fanouts (else the sampler's default)
  std::string identity;                            // what trace.json records
  TopologyView view() const { return typed ? typed->view() : topology->view(); }
  const BlockReader* indices() const {
    if (topology) return &topology->indices();
    return typed->num_relations() > 0 ? typed->relation(0).indices.get() : nullptr;
  }
};

Result<SampleSource> OpenTopology(const Dataset& dataset, const SampleRunOptions& o) {
  SEER_ASSIGN_OR_RETURN(int64_t ncache_budget, ParseNeighborCacheBudget(o.ncache_budget, dataset.manifest()));
  if (o.use_saved_ncache && ncache_budget != 0) {
    return InvalidArgument("a saved neighbor cache (--ncache) and an ncache budget (--ncache-budget) are exclusive");
  }
  TopologyOptions topo;
  topo.reader.mode = o.io;
  topo.reader.queue_depth = o.queue_depth;
  topo.ncache_budget_bytes = ncache_budget;
  topo.ncache_fanouts = o.fanouts;
  topo.ncache_batch_size = o.batch_size;
  if (o.use_saved_ncache) topo.ncache_dir = NeighborCache::DefaultDir(dataset);
  topo.show_progress = o.show_progress;
  SampleSource source;
  SEER_ASSIGN_OR_RETURN(source.topology, Topology::Open(dataset, topo));
  if (o.use_saved_ncache) SEER_RETURN_IF_ERROR(source.topology->ncache().Validate(source.topology->indptr()));
  source.identity = dataset.manifest().Identity();
  return source;
}

// A typed dataset (storage/dataset/typed_target.h): every relation's topology, the target
// type (--target-type or the only labeled one) and the per-relation fan-outs. No neighbor
// cache and no link prediction on typed datasets yet.
Result<SampleSource> OpenTypedTopology(const Dataset& dataset, const SampleRunOptions& o) {
  const DatasetManifest& m = dataset.manifest();
  if (o.link) return InvalidArgument(o.dataset_dir + ": link prediction on typed datasets is not supported yet");
  SEER_ASSIGN_OR_RETURN(const int64_t ncache_budget, ParseNeighborCacheBudget(o.ncache_budget, m));
  if (o.use_saved_ncache || ncache_budget != 0) {
    return InvalidArgument(o.dataset_dir + ": a neighbor cache (--ncache, --ncache-budget) on typed datasets is not "
                           "supported yet");
  }
  SampleSource source;
  SEER_ASSIGN_OR_RETURN(source.target, ResolveTarget(m, o.target_type));
  SEER_ASSIGN_OR_RETURN(const DatasetManifest view, TypedTrainingView(m, *source.target));
  source.identity = view.Identity();
  SEER_ASSIGN_OR_RETURN(source.relation_fanouts, ParseRelationFanouts(o.relation_fanouts, RelationKeys(m), o.fanouts));
  source.relation_fanouts_given = !o.relation_fanouts.empty();
  DirectReaderOptions reader;
  reader.mode = o.io;
  reader.queue_depth = o.queue_depth;
  SEER_ASSIGN_OR_RETURN(source.typed, TypedTopology::Open(dataset, reader));
  return source;
}

Result<SuperbatchSampler> MakeSampler(const Dataset& dataset, const SampleSource& source, const SampleRunOptions& o) {
  SuperbatchOptions options =
      MakeSuperbatchOptions(o.batch_size, o.superbatch, o.num_threads, o.fanouts, o.seed, /*shuffle=*/true);
  if (o.link) {
    SEER_ASSIGN_OR_RETURN(LinkBatcher edges, LinkBatcher::ForTopologyEdges(source.view(), o.link_options, o.seed));
    return SuperbatchSampler::CreateLink(source.view(), std::make_shared<LinkBatcher>(std::move(edges)),
                                         std::move(options));
  }
  std::vector<int64_t> seeds;
  if (source.target) {
    // As `seer train` samples a typed dataset: the target's split in global ids, and the
    // relation fan-outs only when given (the sampler's default is --fanouts for each).
    SEER_ASSIGN_OR_RETURN(seeds, LoadTargetSplit(dataset, *source.target, o.split));
    if (source.relation_fanouts_given) options.sampler.relation_fanouts = source.relation_fanouts;
  } else {
    SEER_ASSIGN_OR_RETURN(seeds, dataset.LoadSplit(o.split));
  }
  if (seeds.empty()) return InvalidArgument("split '" + o.split + "' of " + o.dataset_dir + " is empty");
  return SuperbatchSampler::Create(source.view(), std::move(seeds), std::move(options));
}

Result<TraceDirectoryWriter> MakeTraceWriter(const SampleRunOptions& o, const Dataset& dataset,
                                             const SampleSource& source) {
  TraceRunInfo run;
  run.dataset_dir = std::filesystem::absolute(o.dataset_dir).lexically_normal().string();
  run.dataset_identity = source.identity;
  run.fanouts = o.fanouts;
  run.batch_size = o.batch_size;
  run.superbatch = o.superbatch;
  run.epochs = o.epochs;
  run.seed = o.seed;
  run.link = o.link;
  run.link_options = o.link_options;
  if (source.target) {
    run.target_type = source.target->name;
    const std::vector<std::string> keys = RelationKeys(dataset.manifest());
    for (size_t r = 0; r < keys.size(); ++r) run.relation_fanouts.emplace_back(keys[r], source.relation_fanouts[r]);
  }
  return TraceDirectoryWriter::Create(o.out_dir, run, o.force);
}

// One JSON object per superbatch, appended to a file (none when the path is empty).
class SuperbatchLog {
 public:
  static Result<SuperbatchLog> Open(const std::string& path) {
    SuperbatchLog log;
    if (path.empty()) return log;
    log.path_ = path;
    log.file_.reset(std::fopen(path.c_str(), "a"));
    if (log.file_ == nullptr) return ErrnoStatus(errno, "open", path);
    return log;
  }

  Status Write(const SuperbatchStats& s) {
    if (file_ == nullptr) return Status::Ok();
    const Json line = {{"epoch", s.epoch},
                       {"superbatch", s.superbatch_index},
                       {"batches", s.sample.batches},
                       {"sampled_nodes", s.sample.sampled_nodes},
                       {"unique_nodes", s.unique_nodes},
                       {"edges", s.sample.edges},
                       {"ncache_lookups", s.sample.neighbor_lookups},
                       {"ncache_hits", s.sample.ncache_hits},
                       {"topology_requests", s.sample.topology_requests},
                       {"blocks_read", s.sample.reads.device_reads},
                       {"bytes_read", s.sample.reads.device_bytes},
                       {"seconds", s.seconds}};
    const std::string text = line.dump() + "\n";
    if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size() || std::fflush(file_.get()) != 0) {
      return ErrnoStatus(errno, "write", path_);
    }
    return Status::Ok();
  }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
};

}  // namespace

Result<SampleRunSummary> RunSampling(const SampleRunOptions& o, const SampleRunObserver& observer) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::OpenAnyKind(o.dataset_dir));
  SEER_RETURN_IF_ERROR(CheckOptions(o, dataset.manifest()));
  auto source = dataset.manifest().typed() ? OpenTypedTopology(dataset, o) : OpenTopology(dataset, o);
  if (!source.ok()) return source.status();
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, MakeSampler(dataset, *source, o));
  SEER_ASSIGN_OR_RETURN(TraceDirectoryWriter writer, MakeTraceWriter(o, dataset, *source));
  SampleRunPlan plan;
  plan.num_seeds = sampler.num_seeds();
  plan.num_batches = sampler.num_batches();
  plan.num_superbatches = sampler.num_superbatches();
  if (const BlockReader* indices = source->indices(); indices != nullptr) {
    plan.io_mode = indices->mode();
    plan.direct_io = indices->direct();
  }
  if (source->topology) {
    plan.ncache_enabled = source->topology->ncache().enabled();
    plan.ncache = source->topology->ncache().stats();
  }
  if (source->target) {
    plan.target_type = source->target->name;
    plan.num_relations = source->typed->num_relations();
  }
  plan.runtime_dir = o.runtime_dir.empty() ? DefaultRuntimeDir(o.dataset_dir) : o.runtime_dir;
  SEER_ASSIGN_OR_RETURN(SuperbatchLog log, SuperbatchLog::Open(o.jsonl_path));
  if (observer.on_start) observer.on_start(plan);
  const auto start = std::chrono::steady_clock::now();  // the sampling, not the set-up

  SampleRunSummary summary;
  for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
    for (int64_t k = 0; k < sampler.num_superbatches(); ++k) {
      // Streamed batch by batch into the trace directory (synced, then renamed into
      // place): RAM does not grow with the superbatch size.
      SuperbatchStats s;
      SEER_ASSIGN_OR_RETURN(TraceFile file,
                            sampler.SampleToFile(epoch, k, writer.TempPathFor(epoch, k), &s, /*sync=*/true));
      summary.total.Add(s.sample);
      ++summary.superbatches;
      summary.traces.pushed += 1;
      summary.traces.peak_ram_bytes = std::max(summary.traces.peak_ram_bytes, kTraceIoBufferBytes);
      if (observer.on_superbatch) observer.on_superbatch(s);
      SEER_RETURN_IF_ERROR(log.Write(s));
      SEER_RETURN_IF_ERROR(writer.AddFile(std::move(file)));
    }
  }
  SEER_RETURN_IF_ERROR(writer.Close());
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace seer
