// seer._native: the pybind11 module behind the `seer` Python package (python/seer/).
//
// It exposes Seer's own data path, not a re-implementation: a Loader opens the run the
// way `seer train --no-train` does (executor/train_loop.cc: the budget request, the pilot
// batches, DataPath::Open with its memory split, the training sampler, the feature-cache
// policy) and runs a SuperbatchPipeline (inspector -> planner -> gather on its three C++
// threads) over a schedule of epochs, so the next epoch's first superbatch is sampled
// and planned while this one is gathered, as in `seer train`. A fourth C++ thread, the
// feeder, is the pipeline's executor side (SuperbatchPipeline::Next): it turns each
// gathered batch into plain arrays (node ids, PyG-style edge_index per hop, float32 rows,
// seed labels; on a typed dataset also each node's type and local id and each edge's
// relation) and hands them to Python through a bounded queue of one batch. Python's
// thread waits for that queue with the GIL released, waking every 0.1 s to let Python
// see a pending signal (Ctrl-C raises KeyboardInterrupt there after the feeder and the
// pipeline have stopped and joined). EpochRun is Python's view of one epoch.
//
// Ownership: the Loader owns the DataPath, the sampler, the policy, the runtime
// directory (a ScratchDir, removed when the loader closes) and the running stream. The
// arrays handed to Python own their memory (the rows go back to a small pool when Python
// frees them). An epoch given up before its end (break, an exception, Ctrl-C) stops the
// stream and leaves the policy's view of the cache ahead of the cache's content, so the
// next epoch reopens the data path (same split and policy, a fresh cache).
//
// Memory: the split charges the pipeline's two row buffers plus kHandoverBatches (the
// batches on their way to Python or held there) as staging. Not thread-safe: one Python
// thread uses a loader.
//
// Errors: a Seer Status becomes seer.SeerError carrying Seer's one-line message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Python.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cache/degrees.h"
#include "cache/planner_device.h"
#include "cache/policies.h"
#include "executor/bounded_queue.h"
#include "executor/data_io_mode.h"
#include "executor/data_path.h"
#include "executor/label_table.h"
#include "executor/memory_budget.h"
#include "executor/runtime_footprint.h"
#include "executor/superbatch_cache_planner.h"
#include "executor/superbatch_pipeline.h"
#include "inspector/superbatch_driver.h"
#include "inspector/typed_topology.h"
#include "inspector/trace_stream.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/scratch_dir.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/small_files.h"
#include "storage/dataset/typed_target.h"

namespace py = pybind11;

namespace seer {
namespace python {
namespace {

// Carries a Seer Status message to Python as seer.SeerError.
class SeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw SeerError(status.message());
}

template <typename T>
T ValueOrThrow(Result<T> result) {
  ThrowIfError(result.status());
  return std::move(*result);
}

// A numpy array that owns `values` (moved onto the heap, freed with the array).
template <typename T>
py::array_t<T> OwnedArray(std::vector<T> values, std::vector<py::ssize_t> shape) {
  auto* heap = new std::vector<T>(std::move(values));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, heap->data(), owner);
}

// Row buffers Python has freed, handed back to the gather thread (through the feeder's
// Recycle) so a batch's rows reuse a buffer instead of faulting in fresh pages (measured:
// ~20% of the loader's batch rate on 5 MiB batches). Holds at most kCapacity buffers;
// thread-safe (Python frees on its thread, the feeder takes on its own).
class RowPool {
 public:
  static constexpr size_t kCapacity = 2;
  void Put(std::vector<float> rows) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kCapacity) free_.push_back(std::move(rows));
  }
  // A freed buffer (its size kept: the next resize touches only the difference), or an
  // empty one.
  std::vector<float> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return {};
    std::vector<float> rows = std::move(free_.back());
    free_.pop_back();
    return rows;
  }

 private:
  std::mutex mu_;
  std::vector<std::vector<float>> free_;
};

// A float32 numpy array owning `rows`; freeing it hands the buffer to `pool`.
py::array_t<float> PooledRows(std::vector<float> rows, std::vector<py::ssize_t> shape,
                              const std::shared_ptr<RowPool>& pool) {
  struct Owner {
    std::vector<float> rows;
    std::shared_ptr<RowPool> pool;
  };
  auto* owner = new Owner{std::move(rows), pool};
  py::capsule capsule(owner, [](void* p) {
    auto* o = static_cast<Owner*>(p);
    o->pool->Put(std::move(o->rows));
    delete o;
  });
  return py::array_t<float>(shape, owner->rows.data(), capsule);
}

// Batches alive beyond the pipeline's own kPipelineRowBuffers, which the split charges as
// staging: the one the feeder converts, the one in the queue to Python, and the one
// Python holds while asking for the next (a `for batch in loader` body).
constexpr int64_t kHandoverBatches = 3;

// Everything the Python loader passes; the defaults are TrainOptions' (the Python side
// documents them). Plain values.
struct LoaderOptions {
  std::string dataset_dir;
  std::vector<int> fanouts;
  int64_t batch_size = 1000;
  std::string split = "train";
  int64_t memory_budget_bytes = int64_t{4} << 30;
  int64_t runtime_bytes = -1;   // -1: measured now (the process so far); 0: data scope
  int64_t fcache_budget_bytes = -1;
  int64_t ncache_budget_bytes = -1;
  double ncache_share = -1;
  int64_t superbatch = 0;       // 0 = auto
  std::string feature_cache = "belady";
  std::string planner = "auto";
  std::string io = "auto";
  bool direct_io = true;
  uint64_t seed = 0;
  bool shuffle = true;
  int num_threads = 0;
  bool overlap = true;
  std::string runtime_dir;      // "" = $TMPDIR
  bool quiet = true;
  // Link prediction (`seer train --task link`): split "train" = batches of batch_size
  // training edges with their negatives; "valid"/"test" = the held-out edges of `seer
  // split-edges` with their fixed negatives (or eval_negatives drawn once from the seed).
  std::string task = "node";
  int64_t negatives = 1;
  std::string negative_dist = "uniform";
  bool shared_negatives = false;
  int64_t eval_negatives = 100;
  // Typed datasets: the node type whose split and labels are the seeds' ("" = the only
  // labeled one; storage/dataset/typed_target.h).
  std::string target_type;
  std::string relation_fanouts;  // per-relation fan-outs (ParseRelationFanouts' text; "" = fanouts)
};

// One batch as plain arrays, built on the feeder thread.
struct ReadyBatch {
  int64_t epoch = 0;
  int64_t batch_index = 0;
  int64_t num_seeds = 0;
  std::vector<int64_t> node_ids;
  std::vector<float> rows;
  std::vector<int64_t> labels;               // of the seeds (-1 = unlabeled)
  std::vector<int64_t> edge_index;           // [2, E]: row = source (neighbour), col = target; hop 1 first
  std::vector<int64_t> num_sampled_nodes;    // per hop, the seeds first (PyG)
  std::vector<int64_t> num_sampled_edges;    // per hop, hop 1 first
  std::vector<int64_t> block_sizes;          // per hop, hop 1 first: (num_src, num_dst) pairs
  // Typed datasets only (empty otherwise): per node its type index and its id within the
  // type (node_ids are global ids); per edge of edge_index its relation index.
  bool typed = false;
  std::vector<int64_t> node_type, local_id, edge_type;
  // Link prediction: positions into node_ids (int64, for indexing in torch).
  bool link = false;
  bool shared_negatives = false;
  int64_t negatives_per_pair = 0;
  std::vector<int64_t> link_src, link_dst, link_neg;
};

// Running totals (loader.stats()).
struct LoaderStats {
  int64_t epochs = 0;
  int64_t batches = 0;
  int64_t superbatches = 0;
  int64_t sampled_nodes = 0;
  int64_t sampled_edges = 0;
  int64_t topology_reads = 0;
  GatherStats gather;
  double sample_seconds = 0;
  double plan_seconds = 0;
  double wait_seconds = 0;   // Python waiting in next() for a batch
  int64_t reopens = 0;
};

// A typed batch's per-node type and local id (global id = offsets[type] + local id) and
// per-edge relation (LayerBlock::edge_rel, in edge_index order: hop 1 first; -1 where a
// block carries none).
void AddNodeAndEdgeTypes(const BatchTrace& t, const std::vector<int64_t>& offsets, ReadyBatch* b) {
  b->typed = true;
  b->node_type.resize(t.node_ids.size());
  b->local_id.resize(t.node_ids.size());
  for (size_t i = 0; i < t.node_ids.size(); ++i) {
    const int64_t g = t.node_ids[i];
    const auto type = std::upper_bound(offsets.begin(), offsets.end(), g) - offsets.begin() - 1;
    b->node_type[i] = type;
    b->local_id[i] = g - offsets[static_cast<size_t>(type)];
  }
  const size_t layers = t.blocks.size();
  for (size_t hop = 1; hop <= layers; ++hop) {
    const LayerBlock& block = t.blocks[layers - hop];
    if (block.edge_rel.size() == block.col_idx.size()) {
      b->edge_type.insert(b->edge_type.end(), block.edge_rel.begin(), block.edge_rel.end());
    } else {
      b->edge_type.insert(b->edge_type.end(), block.col_idx.size(), -1);
    }
  }
}

// Converts a gathered batch (moves its rows and trace out). `type_offsets`: a typed
// dataset's NodeTypeOffsets, empty for a homogeneous one.
ReadyBatch ToReadyBatch(GatheredBatch& g, int64_t feature_dim, const LabelTable& labels,
                        const std::vector<int64_t>& type_offsets) {
  ReadyBatch b;
  BatchTrace& t = g.trace;
  b.epoch = t.epoch;
  b.batch_index = t.batch_index;
  b.num_seeds = t.num_seeds;
  b.rows = std::move(g.rows);
  b.rows.resize(t.node_ids.size() * static_cast<size_t>(feature_dim));
  b.labels.resize(static_cast<size_t>(t.num_seeds));
  for (int64_t i = 0; i < t.num_seeds; ++i) b.labels[static_cast<size_t>(i)] = labels.Get(t.node_ids[static_cast<size_t>(i)]);
  if (!t.link.empty()) {
    b.link = true;
    b.shared_negatives = t.link.shared_negatives;
    b.negatives_per_pair = t.link.negatives_per_pair;
    b.link_src.assign(t.link.src.begin(), t.link.src.end());
    b.link_dst.assign(t.link.dst.begin(), t.link.dst.end());
    b.link_neg.assign(t.link.neg.begin(), t.link.neg.end());
  }
  const size_t layers = t.blocks.size();
  int64_t total_edges = 0;
  for (const LayerBlock& block : t.blocks) total_edges += static_cast<int64_t>(block.col_idx.size());
  b.edge_index.resize(2 * static_cast<size_t>(total_edges));
  int64_t* rows_out = b.edge_index.data();
  int64_t* cols_out = rows_out + total_edges;
  b.num_sampled_nodes.push_back(t.num_seeds);
  int64_t reached = t.num_seeds;
  // Hop h is block L - h (blocks are input layer first, the output layer = hop 1 last).
  for (size_t hop = 1; hop <= layers; ++hop) {
    const LayerBlock& block = t.blocks[layers - hop];
    for (int64_t d = 0; d < block.num_dst; ++d) {
      for (int64_t e = block.row_ptr[static_cast<size_t>(d)]; e < block.row_ptr[static_cast<size_t>(d) + 1]; ++e) {
        *rows_out++ = block.col_idx[static_cast<size_t>(e)];
        *cols_out++ = d;
      }
    }
    b.num_sampled_edges.push_back(static_cast<int64_t>(block.col_idx.size()));
    b.num_sampled_nodes.push_back(block.num_src - reached);
    reached = block.num_src;
    b.block_sizes.push_back(block.num_src);
    b.block_sizes.push_back(block.num_dst);
  }
  if (!type_offsets.empty()) AddNodeAndEdgeTypes(t, type_offsets, &b);
  // MLP-like runs (no fan-outs) have no blocks: the seeds are the nodes.
  b.node_ids = std::move(t.node_ids);
  return b;
}

py::dict ToPython(ReadyBatch b, int64_t feature_dim, const std::shared_ptr<RowPool>& pool) {
  py::dict d;
  const auto n = static_cast<py::ssize_t>(b.node_ids.size());
  const auto e = static_cast<py::ssize_t>(b.edge_index.size() / 2);
  const auto hops = static_cast<py::ssize_t>(b.num_sampled_edges.size());
  d["epoch"] = b.epoch;
  d["batch_index"] = b.batch_index;
  d["batch_size"] = b.num_seeds;
  d["n_id"] = OwnedArray(std::move(b.node_ids), {n});
  d["x"] = PooledRows(std::move(b.rows), {n, static_cast<py::ssize_t>(feature_dim)}, pool);
  d["y"] = OwnedArray(std::move(b.labels), {static_cast<py::ssize_t>(b.num_seeds)});
  d["edge_index"] = OwnedArray(std::move(b.edge_index), {2, e});
  d["num_sampled_nodes"] = std::move(b.num_sampled_nodes);
  d["num_sampled_edges"] = std::move(b.num_sampled_edges);
  d["block_sizes"] = OwnedArray(std::move(b.block_sizes), {hops, 2});
  if (b.typed) {
    d["node_type"] = OwnedArray(std::move(b.node_type), {n});
    d["local_id"] = OwnedArray(std::move(b.local_id), {n});
    d["edge_type"] = OwnedArray(std::move(b.edge_type), {e});
  }
  if (b.link) {
    const auto p = static_cast<py::ssize_t>(b.link_src.size());
    const auto k = static_cast<py::ssize_t>(b.negatives_per_pair);
    d["src_index"] = OwnedArray(std::move(b.link_src), {p});
    d["dst_index"] = OwnedArray(std::move(b.link_dst), {p});
    d["neg_index"] = b.shared_negatives ? OwnedArray(std::move(b.link_neg), {k})
                                        : OwnedArray(std::move(b.link_neg), {p, k});
    d["shared_negatives"] = b.shared_negatives;
  }
  return d;
}

class Loader;

// The pipeline and its feeder thread over epochs [first, first + epochs): one stream
// runs across epoch boundaries (the next epoch's first superbatch is sampled and planned
// while this one's last is gathered, as in `seer train`). Stop() (or the destructor)
// stops and joins everything.
class Stream {
 public:
  Stream(Loader* loader, int64_t first_epoch, int64_t epochs);
  ~Stream() { (void)Stop(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The next batch in schedule order; nullopt with *timed_out after `timeout`, nullopt
  // alone once the stream ended (the schedule is done, a stage failed or it stopped).
  std::optional<ReadyBatch> PopFor(std::chrono::milliseconds timeout, bool* timed_out) {
    return out_.PopFor(timeout, timed_out);
  }
  // Closes the queue and the pipeline, joins the feeder; the first stage error. Idempotent.
  Status Stop();
  int64_t end_epoch() const { return end_epoch_; }

 private:
  void Feed();

  Loader* loader_;
  int64_t end_epoch_;
  int64_t batches_per_epoch_;
  std::unique_ptr<SuperbatchPipeline> pipeline_;
  BoundedQueue<ReadyBatch> out_{1};
  std::atomic<int> give_up_{0};
  std::thread feeder_;
  bool stopped_ = false;
  Status status_;
};

// Python's view of one epoch: hands over the stream's batches of that epoch. Close()
// before the last batch stops the stream (the next epoch reopens the data path).
class EpochRun {
 public:
  EpochRun(Loader* loader, int64_t epoch, int64_t num_batches)
      : loader_(loader), epoch_(epoch), num_batches_(num_batches) {}
  ~EpochRun() { Close(); }
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;

  // The next batch (a dict) or None at the end of the epoch; raises SeerError on a
  // pipeline error and KeyboardInterrupt (after stopping) on Ctrl-C. Python's thread.
  py::object Next();
  // Idempotent; never raises (errors are next()'s).
  void Close();
  int64_t epoch() const { return epoch_; }

 private:
  Loader* loader_;
  int64_t epoch_;
  int64_t num_batches_;
  int64_t delivered_ = 0;
  bool closed_ = false;
  bool finished_ = false;   // every batch of the epoch was handed to Python
};

class Loader {
 public:
  explicit Loader(LoaderOptions options) : options_(std::move(options)) {
    py::gil_scoped_release release;
    ThrowIfError(Open());
  }
  ~Loader() { Close(); }

  // Starts epoch `epoch_` (then the next one); one at a time.
  std::unique_ptr<EpochRun> StartEpoch() {
    if (closed_) throw SeerError("the loader is closed");
    if (running_) throw SeerError("an epoch of this loader is still running: finish or close it first");
    if (needs_reopen_) {
      py::gil_scoped_release release;
      Reset();
      ThrowIfError(Open());
      ++stats_.reopens;
    }
    // The running stream delivers this epoch next, or a new one starts here (epochs
    // in chunks, so the schedule stays small).
    if (stream_ != nullptr && next_epoch_ >= stream_->end_epoch()) {
      py::gil_scoped_release release;
      const Status status = StopStream();
      ThrowIfError(status);
    }
    if (stream_ == nullptr) {
      const int64_t chunk = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, sampler_->num_superbatches()));
      py::gil_scoped_release release;
      stream_ = std::make_unique<Stream>(this, next_epoch_, chunk);
    }
    running_ = true;
    auto run = std::make_unique<EpochRun>(this, next_epoch_, sampler_->num_batches());
    current_ = run.get();
    ++next_epoch_;
    return run;
  }

  // Stops and frees the stream; its first stage error.
  Status StopStream() {
    if (stream_ == nullptr) return Status::Ok();
    Status status = stream_->Stop();
    stream_.reset();
    return status;
  }

  // Stops a running epoch, frees the data path and removes the runtime directory.
  void Close() {
    if (current_ != nullptr) current_->Close();
    (void)StopStream();
    closed_ = true;
    Reset();
  }

  py::dict Stats() const {
    py::dict d;
    LoaderStats s;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      s = stats_;
    }
    d["epochs"] = s.epochs;
    d["batches"] = s.batches;
    d["superbatches"] = s.superbatches;
    d["sampled_nodes"] = s.sampled_nodes;
    d["sampled_edges"] = s.sampled_edges;
    d["topology_reads"] = s.topology_reads;
    d["accesses"] = s.gather.rows;
    d["hits"] = s.gather.hits;
    d["misses"] = s.gather.misses;
    d["fill_rows"] = s.gather.fill_rows;
    d["miss_reads"] = s.gather.reads.device_reads;
    d["miss_read_bytes"] = s.gather.reads.device_bytes;
    d["fill_reads"] = s.gather.fill_reads.device_reads;
    d["hit_ratio"] = s.gather.hit_ratio();
    d["sample_seconds"] = s.sample_seconds;
    d["plan_seconds"] = s.plan_seconds;
    d["gather_seconds"] = s.gather.gather_seconds;
    d["io_seconds"] = s.gather.io_seconds;
    d["wait_seconds"] = s.wait_seconds;
    d["reopens"] = s.reopens;
    return d;
  }

  py::dict Split() const {
    if (data_ == nullptr) throw SeerError("the loader is closed");
    const MemoryBudgetSplit& s = data_->split();
    py::dict d;
    d["budget_bytes"] = s.budget_bytes;
    d["runtime_bytes"] = s.runtime_bytes;
    d["table_bytes"] = s.table_bytes;
    d["staging_bytes"] = s.staging_bytes;
    d["trace_bytes"] = s.trace_bytes;
    d["ncache_bytes"] = s.ncache_bytes;
    d["fcache_bytes"] = s.fcache_bytes;
    d["fcache_rows"] = s.fcache_rows;
    d["inspector_bytes"] = s.inspector_bytes;
    d["planner_working_bytes"] = s.planner_working_bytes;
    d["superbatch"] = s.superbatch;
    d["superbatch_reason"] = s.superbatch_reason;
    d["ncache_source"] = s.ncache_source;
    d["warnings"] = s.warnings;
    d["text"] = s.ToString();
    return d;
  }

  int64_t num_batches() const { return Sampler().num_batches(); }
  int64_t num_seeds() const { return Sampler().num_seeds(); }
  int64_t feature_dim() const { return feature_dim_; }
  int64_t next_epoch() const { return next_epoch_; }
  // A typed dataset's target node type (its name), "" for a homogeneous dataset.
  std::string target_type() const {
    if (data_ == nullptr) throw SeerError("the loader is closed");
    return data_->target() != nullptr ? data_->target()->name : std::string();
  }

 private:
  friend class EpochRun;
  friend class Stream;

  const SuperbatchSampler& Sampler() const {
    if (!sampler_) throw SeerError("the loader is closed");
    return *sampler_;
  }

  Status OpenNodeSampler(const LoaderOptions& o, PilotSpec& pilot) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> seeds, data_->TakeSplit(pilot, o.split));
    if (seeds.empty()) {
      const TypedTarget* target = data_->target();
      const std::string file = target == nullptr ? o.split + ".bin" : NodeTypeFileName(target->name, o.split);
      return InvalidArgument(data_->dataset().PathOf(file) + ": no " + o.split + " nodes");
    }
    SEER_ASSIGN_OR_RETURN(labels_, data_->LoadLabels({&seeds}));
    SuperbatchOptions sb = MakeSuperbatchOptions(o.batch_size, data_->split().superbatch, o.num_threads, o.fanouts,
                                                 o.seed, o.shuffle);
    sb.sampler.relation_fanouts = data_->relation_fanouts();
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler,
                          SuperbatchSampler::Create(data_->topology_view(), std::move(seeds), sb));
    sampler_.emplace(std::move(sampler));
    return Status::Ok();
  }

  // Link prediction: the training edges, or a held-out edge file with its negatives (as
  // `seer train --task link` evaluates them).
  Status OpenLinkSampler(const LoaderOptions& o, const LinkSeedOptions& link) {
    if (o.split != "train" && o.split != "valid" && o.split != "test") {
      return InvalidArgument("split '" + o.split + "': expected train, valid or test");
    }
    const TopologyView view = data_->topology_view();
    SuperbatchOptions sb = MakeSuperbatchOptions(o.batch_size, data_->split().superbatch, o.num_threads, o.fanouts,
                                                 o.seed, /*shuffle=*/o.split == "train");
    std::shared_ptr<LinkBatcher> batcher;
    if (o.split == "train") {
      SEER_ASSIGN_OR_RETURN(LinkBatcher edges, LinkBatcher::ForTopologyEdges(view, link, o.seed));
      batcher = std::make_shared<LinkBatcher>(std::move(edges));
    } else {
      const Dataset& dataset = data_->dataset();
      const DatasetEdgeSplits& splits = dataset.manifest().edge_splits;
      if (!splits.present()) {
        return InvalidArgument(dataset.dir() + ": no held-out edges for split '" + o.split +
                               "' (make them with seer split-edges)");
      }
      const bool fixed = splits.negatives_per_edge > 0;
      const std::string pairs = o.split == "valid" ? splits.valid : splits.test;
      const std::string negatives = o.split == "valid" ? splits.valid_negatives : splits.test_negatives;
      const int64_t k = fixed ? splits.negatives_per_edge : o.eval_negatives;
      SEER_ASSIGN_OR_RETURN(LinkBatcher file,
                            LinkBatcher::ForPairFile(dataset.PathOf(pairs), fixed ? dataset.PathOf(negatives) : "", k,
                                                     dataset.manifest().num_nodes, o.seed));
      batcher = std::make_shared<LinkBatcher>(std::move(file));
      // At most a training batch's seeds per batch (what the split sized the buffers for):
      // K negatives per pair means fewer pairs, as `seer train --task link` evaluates.
      sb.batch_size = std::max<int64_t>(1, LinkBatchMaxSeeds(o.batch_size, link) / (2 + k));
    }
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::CreateLink(view, std::move(batcher), sb));
    if (sampler.num_batches() == 0) return InvalidArgument("split '" + o.split + "' has no edges");
    sampler_.emplace(std::move(sampler));
    return Status::Ok();
  }

  // RunTraining's opening steps for `seer train --no-train` (executor/train_loop.cc).
  Status Open() {
    const LoaderOptions& o = options_;
    if (o.batch_size <= 0) return InvalidArgument("batch_size: expected 1 or more");
    if (o.superbatch < 0) return InvalidArgument("superbatch: expected 1 or more, or \"auto\"");
    if (o.memory_budget_bytes <= 0) return InvalidArgument("memory_budget: expected a size > 0");
    for (int f : o.fanouts) {
      if (f == 0 || f < -1) return InvalidArgument("fan-out " + std::to_string(f) + ": expected >= 1, or -1 for all neighbours");
    }
    SEER_ASSIGN_OR_RETURN(const PolicyKind policy, ParsePolicyKind(o.feature_cache));
    SEER_ASSIGN_OR_RETURN(const PlannerDevice planner, ParsePlannerDevice(o.planner));
    SEER_ASSIGN_OR_RETURN(const DataIoMode io_mode, ParseName(kDataIoModeNames, o.io, "io"));
    KeepLargeAllocationsMapped();

    if (o.task != "node" && o.task != "link") return InvalidArgument("task '" + o.task + "': expected node or link");
    const bool link = o.task == "link";
    LinkSeedOptions link_options;
    link_options.negatives = o.negatives;
    link_options.shared = o.shared_negatives;
    SEER_ASSIGN_OR_RETURN(link_options.distribution, ParseNegativeDistribution(o.negative_dist));
    if (link && o.split == "train" && !o.shuffle) {
      return InvalidArgument("task 'link': training edges are taken in a per-epoch shuffle (shuffle=False is for "
                             "node seeds)");
    }

    MemoryBudgetRequest request;
    request.budget_bytes = o.memory_budget_bytes;
    request.batch_size = link ? LinkBatchMaxSeeds(o.batch_size, link_options) : o.batch_size;
    request.fanouts = o.fanouts;
    request.ncache_budget_bytes = o.ncache_budget_bytes;
    request.fcache_budget_bytes = o.fcache_budget_bytes;
    request.ncache_share = o.ncache_share;
    request.reserve_model = false;  // the model is the caller's (charged when measured in runtime_bytes)
    request.feature_cache_used = policy != PolicyKind::kNone;
    request.model_on_host = true;
    request.superbatch = o.superbatch;
    request.traces_in_flight = kPipelineTracesInFlight;
    // Batch buffers: the pipeline's two, plus the ones the handover to Python holds
    // (kHandoverBatches); the rows go to Python, so the gather thread never waits for one.
    request.pipeline_depth = kPipelineRowBuffers + kHandoverBatches;
    request.streaming_inspector = true;
    request.sampling_threads = o.num_threads;
    request.planner_working_bytes = policy == PolicyKind::kBelady ? kPlannerWorkingAuto : 0;
    request.node_score_bytes_per_node = policy == PolicyKind::kBelady ? kBeladyScoreBytesPerNode : 0;
    request.policy_bytes_per_row = PolicyBytesPerCachedRow(policy);
    request.planner_bytes_per_access = policy == PolicyKind::kLru ? kLruPlannerBytesPerAccess : 0;
    request.runtime_bytes = RuntimeBytesToCharge(o.runtime_bytes, /*use_cuda=*/false);

    DataIoOptions io;
    io.mode = io_mode;
    io.direct = o.direct_io;
    io.quiet = o.quiet;
    io.target_type = o.target_type;
    io.relation_fanouts = o.relation_fanouts;
    PilotSpec pilot = MakePilot(o.batch_size, o.fanouts, o.seed, o.num_threads);
    pilot.split = o.split;
    pilot.epochs = int64_t{1} << 20;  // the epochs are the caller's: never a cap on the traces in flight
    if (link) {
      pilot.split.clear();
      pilot.link = link_options;
    }
    SEER_ASSIGN_OR_RETURN(data_, DataPath::Open(o.dataset_dir, request, io, &pilot));
    if (link) {
      SEER_RETURN_IF_ERROR(OpenLinkSampler(o, link_options));
    } else {
      SEER_RETURN_IF_ERROR(OpenNodeSampler(o, pilot));
    }

    std::string parent = o.runtime_dir;
    if (parent.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    } else {
      SEER_RETURN_IF_ERROR(MakeDirectories(parent));
    }
    SEER_ASSIGN_OR_RETURN(ScratchDir dir, ScratchDir::Create(parent, "python"));
    runtime_dir_.emplace(std::move(dir));

    CachePolicySpec spec;
    spec.kind = policy;
    spec.capacity_rows = data_->split().fcache_rows;
    spec.units = data_->feature_units();
    spec.planner = planner;
    if (data_->split().planner_working_bytes > 0) spec.planner_working_bytes = data_->split().planner_working_bytes;
    spec.changeset_budget_bytes = std::min<int64_t>(kChangesetRamBytes, std::max<int64_t>(0, data_->split().trace_bytes / 2));
    spec.spill_dir = runtime_dir_->path();
    SEER_ASSIGN_OR_RETURN(SuperbatchCachePlanner planner_object,
                          MakeSuperbatchCachePlanner(spec, data_->dataset(), *sampler_));
    policy_.emplace(std::move(planner_object));
    feature_dim_ = data_->manifest().feature_dim;  // a typed dataset's: the widest type's
    type_offsets_ = data_->target() != nullptr ? NodeTypeOffsets(data_->dataset().manifest()) : std::vector<int64_t>{};
    needs_reopen_ = false;
    return Status::Ok();
  }

  // Frees the data path (the caller holds no epoch).
  void Reset() {
    (void)StopStream();
    policy_.reset();
    sampler_.reset();
    labels_ = LabelTable();
    data_.reset();
    runtime_dir_.reset();
  }

  LoaderOptions options_;
  std::unique_ptr<DataPath> data_;
  LabelTable labels_;
  std::optional<SuperbatchSampler> sampler_;
  std::optional<ScratchDir> runtime_dir_;
  std::optional<SuperbatchCachePlanner> policy_;
  int64_t next_epoch_ = 0;
  int64_t feature_dim_ = 0;
  std::vector<int64_t> type_offsets_;  // a typed dataset's NodeTypeOffsets; empty otherwise
  std::unique_ptr<Stream> stream_;  // the running pipeline (across epochs)
  EpochRun* current_ = nullptr;  // the running epoch (it outlives neither the loader nor its Close)
  bool running_ = false;
  bool needs_reopen_ = false;
  bool closed_ = false;
  mutable std::mutex stats_mu_;  // the feeder thread adds, Python reads
  LoaderStats stats_;
  std::shared_ptr<RowPool> row_pool_ = std::make_shared<RowPool>();  // shared with the arrays
};

Stream::Stream(Loader* loader, int64_t first_epoch, int64_t epochs)
    : loader_(loader), end_epoch_(first_epoch + epochs), batches_per_epoch_(loader->sampler_->num_batches()) {
  PipelineOptions options;
  for (int64_t e = first_epoch; e < end_epoch_; ++e) {
    for (int64_t k = 0; k < loader->sampler_->num_superbatches(); ++k) options.schedule.emplace_back(e, k);
  }
  options.overlap = loader->options_.overlap;
  options.runtime_dir = loader->runtime_dir_->path();
  options.first_epoch = first_epoch;
  pipeline_ = SuperbatchPipeline::Start(TrainingStages(*loader->sampler_, *loader->policy_, loader->data_->gatherer()),
                                        options);
  feeder_ = std::thread([this] { Feed(); });
}

// The feeder thread: the executor's side of the pipeline. Nothing reads the cache
// between epochs (evaluation is the caller's, through its own loader), so the gather
// thread may go on into the next epoch as soon as this one's last batch is taken.
void Stream::Feed() {
  const int64_t dim = loader_->feature_dim_;
  LoaderStats& stats = loader_->stats_;
  while (true) {
    std::optional<GatheredBatch> g = pipeline_->Next(&give_up_);
    if (!g) break;
    ReadyBatch batch = ToReadyBatch(*g, dim, loader_->labels_, loader_->type_offsets_);
    pipeline_->Recycle(loader_->row_pool_->Take());  // the rows went to Python: a freed buffer, or a new one
    if (g->last) {
      std::lock_guard<std::mutex> lock(loader_->stats_mu_);
      const ExecutingSuperbatch& sb = *g->superbatch;
      ++stats.superbatches;
      stats.sampled_nodes += sb.planned.sample_stats.sample.sampled_nodes;
      stats.sampled_edges += sb.planned.sample_stats.sample.edges;
      stats.topology_reads += sb.planned.sample_stats.sample.reads.device_reads;
      stats.sample_seconds += sb.planned.sample_stats.seconds;
      stats.plan_seconds += sb.planned.plan.seconds;
      stats.gather.Add(sb.gather);
    }
    if (g->last) pipeline_->SuperbatchDone();
    if (batch.batch_index + 1 == batches_per_epoch_) pipeline_->EpochDone(batch.epoch);
    if (!out_.Push(std::move(batch))) break;
  }
  out_.Close();
}

Status Stream::Stop() {
  if (stopped_) return status_;
  stopped_ = true;
  // The feeder is the pipeline's executor thread: it leaves first (its Next gives up
  // within a quarter second, its Push fails on the closed queue), then the pipeline
  // stops on this thread (Next and Stop are one thread's at a time).
  give_up_ = 1;
  out_.Close();
  if (feeder_.joinable()) feeder_.join();
  status_ = pipeline_->Stop();
  return status_;
}

py::object EpochRun::Next() {
  if (closed_) return py::none();
  if (delivered_ == num_batches_) {
    finished_ = true;
    Close();
    return py::none();
  }
  const int64_t dim = loader_->feature_dim_;
  while (true) {
    bool timed_out = false;
    std::optional<ReadyBatch> batch;
    {
      py::gil_scoped_release release;
      const auto start = std::chrono::steady_clock::now();
      batch = loader_->stream_->PopFor(std::chrono::milliseconds(100), &timed_out);
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard<std::mutex> lock(loader_->stats_mu_);
      loader_->stats_.wait_seconds += waited;
    }
    if (timed_out) {
      if (PyErr_CheckSignals() != 0) {  // Ctrl-C: a KeyboardInterrupt is pending
        {
          py::gil_scoped_release release;
          Close();
        }
        throw py::error_already_set();
      }
      continue;
    }
    if (!batch) {  // the stream ended inside the epoch: a stage failed
      Status status;
      {
        py::gil_scoped_release release;
        status = loader_->StopStream();
        Close();
      }
      ThrowIfError(status);
      throw SeerError("the pipeline ended before epoch " + std::to_string(epoch_) + "'s last batch");
    }
    if (batch->epoch != epoch_ || batch->batch_index != delivered_) {
      throw SeerError("internal: batch " + std::to_string(batch->batch_index) + " of epoch " +
                      std::to_string(batch->epoch) + " where batch " + std::to_string(delivered_) + " of epoch " +
                      std::to_string(epoch_) + " was due");
    }
    ++delivered_;
    {
      std::lock_guard<std::mutex> lock(loader_->stats_mu_);
      ++loader_->stats_.batches;  // handed to Python
    }
    return ToPython(std::move(*batch), dim, loader_->row_pool_);
  }
}

void EpochRun::Close() {
  if (closed_) return;
  closed_ = true;
  if (finished_) {
    std::lock_guard<std::mutex> lock(loader_->stats_mu_);
    ++loader_->stats_.epochs;
  } else {
    (void)loader_->StopStream();
    loader_->needs_reopen_ = true;  // the policy planned batches the cache never saw
  }
  loader_->running_ = false;
  loader_->current_ = nullptr;
}

// seer.Dataset's checks: the manifest and the small files, as every command opens them
// (a typed dataset: its manifest; the loader's DataPath checks what it reads).
std::string OpenDatasetManifest(const std::string& dir) {
  py::gil_scoped_release release;
  Dataset dataset = ValueOrThrow(Dataset::OpenAnyKind(dir));
  if (!dataset.manifest().typed()) ThrowIfError(ValidateSmallFiles(dataset).status());
  return dataset.manifest().ToJson();
}

int64_t ParseByteSize(const std::string& text) { return ValueOrThrow(ParseBytes(text)); }

}  // namespace
}  // namespace python
}  // namespace seer

PYBIND11_MODULE(_native, m) {
  using namespace seer::python;
  m.doc() = "Seer's data path (inspector -> planner -> gather) for Python; see the seer package";
  static py::exception<SeerError> seer_error(m, "SeerError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SeerError& e) {
      seer_error(e.what());
    }
  });
  m.def("open_dataset", &OpenDatasetManifest, py::arg("path"),
        "Opens and checks a dataset directory; returns its manifest as JSON text");
  m.def("parse_bytes", &ParseByteSize, py::arg("text"), "'64M', '1.5G', '4096' -> bytes (Seer's rule)");

  py::class_<LoaderOptions>(m, "LoaderOptions")
      .def(py::init<>())
      .def_readwrite("dataset_dir", &LoaderOptions::dataset_dir)
      .def_readwrite("fanouts", &LoaderOptions::fanouts)
      .def_readwrite("batch_size", &LoaderOptions::batch_size)
      .def_readwrite("split", &LoaderOptions::split)
      .def_readwrite("memory_budget_bytes", &LoaderOptions::memory_budget_bytes)
      .def_readwrite("runtime_bytes", &LoaderOptions::runtime_bytes)
      .def_readwrite("fcache_budget_bytes", &LoaderOptions::fcache_budget_bytes)
      .def_readwrite("ncache_budget_bytes", &LoaderOptions::ncache_budget_bytes)
      .def_readwrite("ncache_share", &LoaderOptions::ncache_share)
      .def_readwrite("superbatch", &LoaderOptions::superbatch)
      .def_readwrite("feature_cache", &LoaderOptions::feature_cache)
      .def_readwrite("planner", &LoaderOptions::planner)
      .def_readwrite("io", &LoaderOptions::io)
      .def_readwrite("direct_io", &LoaderOptions::direct_io)
      .def_readwrite("seed", &LoaderOptions::seed)
      .def_readwrite("shuffle", &LoaderOptions::shuffle)
      .def_readwrite("num_threads", &LoaderOptions::num_threads)
      .def_readwrite("overlap", &LoaderOptions::overlap)
      .def_readwrite("runtime_dir", &LoaderOptions::runtime_dir)
      .def_readwrite("quiet", &LoaderOptions::quiet)
      .def_readwrite("task", &LoaderOptions::task)
      .def_readwrite("negatives", &LoaderOptions::negatives)
      .def_readwrite("negative_dist", &LoaderOptions::negative_dist)
      .def_readwrite("shared_negatives", &LoaderOptions::shared_negatives)
      .def_readwrite("eval_negatives", &LoaderOptions::eval_negatives)
      .def_readwrite("target_type", &LoaderOptions::target_type)
      .def_readwrite("relation_fanouts", &LoaderOptions::relation_fanouts);

  py::class_<EpochRun>(m, "EpochRun")
      .def("next", &EpochRun::Next)
      // Ends the epoch (stops the stream when it is not finished); an error is raised
      // by next(), not here (close runs in finally).
      .def("close", [](EpochRun& run) {
        py::gil_scoped_release release;
        run.Close();
      })
      .def_property_readonly("epoch", &EpochRun::epoch);

  py::class_<Loader>(m, "Loader")
      .def(py::init<LoaderOptions>())
      .def("start_epoch", &Loader::StartEpoch, py::keep_alive<0, 1>())
      .def("close", [](Loader& loader) {
        py::gil_scoped_release release;
        loader.Close();
      })
      .def("stats", &Loader::Stats)
      .def("split", &Loader::Split)
      .def_property_readonly("num_batches", &Loader::num_batches)
      .def_property_readonly("num_seeds", &Loader::num_seeds)
      .def_property_readonly("feature_dim", &Loader::feature_dim)
      .def_property_readonly("next_epoch", &Loader::next_epoch)
      .def_property_readonly("target_type", &Loader::target_type);
}
