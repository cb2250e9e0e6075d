#include "executor/train_loop.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cache/degrees.h"
#include "cache/feature_cache.h"
#include "executor/cache_policy.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace_store.h"
#include "kernels/device.h"
#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/json.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"
#include "storage/io/mmap_reader.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A closable bounded FIFO between pipeline stages.
template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}
  // False when the queue was closed (the item is dropped).
  bool Push(T item) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  // nullopt when closed and drained.
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

// First error wins; later ones are dropped.
class ErrorSlot {
 public:
  void Set(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok() && !status.ok()) status_ = std::move(status);
  }
  Status Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  std::mutex mu_;
  Status status_;
};

// Labels of a set of nodes, loaded by streaming labels.bin (never the whole array).
class LabelTable {
 public:
  static Result<LabelTable> Load(const Dataset& dataset, std::vector<int64_t> nodes) {
    LabelTable table;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    table.ids_ = std::move(nodes);
    table.labels_.resize(table.ids_.size(), -1);
    const std::string path = dataset.PathOf(dataset_files::kLabels);
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
    constexpr int64_t kChunk = 1 << 18;  // labels per read
    std::vector<int32_t> chunk;
    size_t i = 0;
    while (i < table.ids_.size()) {
      const int64_t begin = table.ids_[i] / kChunk * kChunk;
      const int64_t end = std::min(dataset.manifest().num_nodes, begin + kChunk);
      chunk.resize(static_cast<size_t>(end - begin));
      SEER_RETURN_IF_ERROR(PreadFull(fd.get(), chunk.data(), (end - begin) * 4, begin * 4, path));
      while (i < table.ids_.size() && table.ids_[i] < end) {
        table.labels_[i] = chunk[static_cast<size_t>(table.ids_[i] - begin)];
        ++i;
      }
    }
    return table;
  }
  int32_t Get(int64_t node) const {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), node);
    if (it == ids_.end() || *it != node) return -1;
    return labels_[static_cast<size_t>(it - ids_.begin())];
  }
  void Merge(const LabelTable& other) {
    std::vector<std::pair<int64_t, int32_t>> all;
    for (size_t i = 0; i < ids_.size(); ++i) all.emplace_back(ids_[i], labels_[i]);
    for (size_t i = 0; i < other.ids_.size(); ++i) all.emplace_back(other.ids_[i], other.labels_[i]);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }), all.end());
    ids_.clear();
    labels_.clear();
    for (auto& [id, label] : all) {
      ids_.push_back(id);
      labels_.push_back(label);
    }
  }

 private:
  std::vector<int64_t> ids_;
  std::vector<int32_t> labels_;
};

bool StderrIsTty() { return isatty(STDERR_FILENO) == 1; }

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds)) return "?";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else if (s >= 60) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(s));
  }
  return buf;
}

// The progress line of `seer train`: redrawn on a TTY, periodic plain lines otherwise.
class TrainProgress {
 public:
  TrainProgress(bool enabled, double plain_interval_s, int64_t total_batches)
      : enabled_(enabled), tty_(StderrIsTty()), interval_s_(plain_interval_s),
        total_batches_(total_batches), start_(Clock::now()), last_(start_) {}
  void Update(int64_t epoch, int64_t epochs, int64_t superbatch, int64_t superbatches,
              int64_t batch, int64_t batches_per_epoch, int64_t done_batches, int64_t done_seeds,
              double loss, double hit_ratio) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double since_last = std::chrono::duration<double>(now - last_).count();
    if (tty_ ? since_last < 0.1 : since_last < interval_s_) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? done_seeds / elapsed : 0;
    const double eta = done_batches > 0 ? elapsed * (total_batches_ - done_batches) / done_batches : -1;
    char line[256];
    std::snprintf(line, sizeof(line),
                  "epoch %lld/%lld sb %lld/%lld batch %lld/%lld | %.0f samples/s | ETA %s | loss %.4f | fcache hit %.1f%%",
                  static_cast<long long>(epoch + 1), static_cast<long long>(epochs),
                  static_cast<long long>(superbatch + 1), static_cast<long long>(superbatches),
                  static_cast<long long>(batch + 1), static_cast<long long>(batches_per_epoch), rate,
                  FormatDuration(eta).c_str(), loss, 100 * hit_ratio);
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line);
      dirty_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
  }
  // Ends a redrawn line before other output.
  void Break() {
    if (dirty_) std::fprintf(stderr, "\n");
    dirty_ = false;
  }

 private:
  bool enabled_, tty_;
  double interval_s_;
  int64_t total_batches_;
  Clock::time_point start_, last_;
  bool dirty_ = false;
};

struct PlannedSuperbatch {
  int64_t epoch = 0;
  int64_t index = 0;
  SuperbatchPlan plan;
  SuperbatchStats sample_stats;
};

struct SampledSuperbatch {
  SuperbatchTrace trace;
  SuperbatchStats stats;
};

// A superbatch on its way through the gather thread to the executor. `gather` is
// written by the gather thread only; the executor reads it after popping the
// superbatch's last batch (the queue orders the two).
struct ExecutingSuperbatch {
  PlannedSuperbatch planned;
  SuperbatchTrace trace;
  GatherStats gather;
};

// Per-batch buffers travelling from the gather thread to the executor thread.
struct GatheredBatch {
  std::shared_ptr<ExecutingSuperbatch> superbatch;
  size_t index = 0;
  bool last = false;         // last batch of its superbatch
  std::vector<float> rows;
  int64_t hits_so_far = 0;   // superbatch totals when this batch was gathered
  int64_t rows_so_far = 0;
};

// A mutex, a condition variable and a closed flag: what the two blocking gates below
// share. Close() wakes every waiter; a closed gate never blocks again.
class ClosableGate {
 public:
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 protected:
  // Waits until `ready` or closed; false when closed. Runs `then` under the lock.
  template <typename Ready, typename Then>
  bool WaitThen(Ready ready, Then then) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || ready(); });
    if (closed_) return false;
    then();
    return true;
  }
  template <typename Change>
  void Notify(Change change) {
    std::lock_guard<std::mutex> lock(mu_);
    change();
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
};

// A token one thread takes and another may hand back (std::mutex must be unlocked by
// its owner): without --overlap the inspector holds it while sampling, the gather
// thread takes it before gathering a superbatch and the executor returns it after
// training that superbatch's last batch.
class ExclusionToken : public ClosableGate {
 public:
  bool Acquire() {  // false when closed
    return WaitThen([&] { return !held_; }, [&] { held_ = true; });
  }
  void Release() {
    Notify([&] { held_ = false; });
  }

 private:
  bool held_ = false;
};

// The epoch gate: the gather thread may gather epoch e once the executor has finished
// every epoch before it (evaluation reads the cache the gather thread mutates).
class EpochGate : public ClosableGate {
 public:
  explicit EpochGate(int64_t open_through) : open_through_(open_through) {}
  bool WaitFor(int64_t epoch) {  // false when closed
    return WaitThen([&] { return epoch <= open_through_; }, [] {});
  }
  void Open(int64_t epoch) {
    Notify([&] { open_through_ = std::max(open_through_, epoch); });
  }

 private:
  int64_t open_through_;
};

std::string JoinFanouts(const std::vector<int>& fanouts) {
  std::string s;
  for (size_t i = 0; i < fanouts.size(); ++i) s += (i ? "," : "") + std::to_string(fanouts[i]);
  return s;
}

struct DataIoOptions {
  IoMode mode = IoMode::kAuto;
  int queue_depth = 64;
  bool direct = true;
  bool quiet = false;
  bool mmap = false;  // page cache through mmap instead of the direct reader
};

// Everything a run opens, shared by training and prediction.
struct DataPath {
  std::optional<Dataset> dataset;
  std::unique_ptr<Topology> topology;
  std::unique_ptr<BlockReader> features;
  std::optional<FeatureCache> cache;
  std::unique_ptr<FeatureGatherer> gatherer;
  MemoryBudgetSplit split;
};

// Batches sampled before the budget is split, so staging and the model's working set are
// sized from real batch shapes (MemoryBudgetRequest::measured_*) rather than estimated.
struct PilotSpec {
  std::string split;            // seeds from this split file ("train", "test"), or
  std::vector<int64_t> ids;     // these distinct ids when split is empty
  int64_t batch_size = 1000;
  std::vector<int> fanouts;
  uint64_t seed = 0;
  int num_threads = 0;
  int64_t batches = 2;          // pilot batches (0 = no pilot: the estimate is used)
  int64_t epochs = 1;           // with request->superbatch: caps the traces in flight at
                                // the number of superbatches the run has
  // Out: the split as the pilot loaded it, so the run does not read it a second time.
  std::optional<std::vector<int64_t>> loaded;
};

PilotSpec MakePilot(int64_t batch_size, const std::vector<int>& fanouts, uint64_t seed, int num_threads) {
  PilotSpec pilot;
  pilot.batch_size = batch_size;
  pilot.fanouts = fanouts;
  pilot.seed = seed;
  pilot.num_threads = num_threads;
  return pilot;
}

// `name`'s seed ids: the pilot's copy when it loaded that split, else read from disk.
Result<std::vector<int64_t>> TakeSplit(const Dataset& ds, PilotSpec& pilot, const std::string& name) {
  if (pilot.split == name && pilot.loaded) {
    std::vector<int64_t> ids = std::move(*pilot.loaded);
    pilot.loaded.reset();
    return ids;
  }
  return ds.LoadSplit(name);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Samples `pilot.batches` batches of evenly spaced seeds (no shuffle, so no copy of a
// large seed list) straight from indices.bin, and records the largest batch's rows and
// per-block shapes in *request. The neighbor cache is not built yet: these are plain reads.
Status MeasurePilotBatches(const Dataset& ds, const std::vector<int64_t>& indptr, BlockReader* indices,
                           PilotSpec& pilot, MemoryBudgetRequest* request) {
  if (pilot.batches <= 0 || pilot.fanouts.empty()) return Status::Ok();
  if (!pilot.split.empty()) {
    SEER_ASSIGN_OR_RETURN(pilot.loaded, ds.LoadSplit(pilot.split));
  }
  const std::vector<int64_t>& from = pilot.split.empty() ? pilot.ids : *pilot.loaded;
  const int64_t n = static_cast<int64_t>(from.size());
  if (n > 0 && request->traces_in_flight > 0) {
    // A superbatch has at most the epoch's batches.
    const int64_t batches = CeilDiv(n, pilot.batch_size);
    request->superbatch = std::min(std::max<int64_t>(1, request->superbatch), batches);
    const int64_t per_epoch = CeilDiv(batches, request->superbatch);
    request->traces_in_flight = std::min(request->traces_in_flight, std::max<int64_t>(1, pilot.epochs) * per_epoch);
  }
  const int64_t want = std::min(n, pilot.batches * pilot.batch_size);
  if (want <= 0) return Status::Ok();
  std::vector<int64_t> seeds(static_cast<size_t>(want));
  for (int64_t i = 0; i < want; ++i) seeds[static_cast<size_t>(i)] = from[static_cast<size_t>(i * n / want)];
  // Bad ids are the caller's to report (with their position); the pilot just skips them.
  const int64_t num_nodes = ds.manifest().num_nodes;
  seeds.erase(std::remove_if(seeds.begin(), seeds.end(), [&](int64_t v) { return v < 0 || v >= num_nodes; }),
              seeds.end());
  if (seeds.empty()) return Status::Ok();
  TopologyView view;
  view.indptr = &indptr;
  view.indices = indices;
  view.index_dtype = ds.manifest().index_dtype;
  SuperbatchOptions options;
  options.batch_size = pilot.batch_size;
  options.superbatch_size = pilot.batches;
  options.num_threads = pilot.num_threads;
  options.shuffle = false;
  options.sampler.fanouts = pilot.fanouts;
  options.sampler.seed = pilot.seed;
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::Create(view, std::move(seeds), options));
  SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, 0));
  request->measured_blocks.assign(pilot.fanouts.size(), BlockShape{});
  for (const BatchTrace& b : trace.batches) {
    request->measured_batch_rows = std::max<int64_t>(request->measured_batch_rows, static_cast<int64_t>(b.node_ids.size()));
    int64_t trace_bytes = 8 * static_cast<int64_t>(b.node_ids.size());
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
  return Status::Ok();
}

// Opens the dataset, samples the pilot batches (when `pilot` is given), splits the budget,
// and opens what the run reads: indptr in RAM, indices.bin and features.bin through a
// BlockReader (O_DIRECT io_uring, or the page cache through mmap), the neighbor cache (a
// prebuilt DIR/ncache when it fits the budget, else built in memory for it) and the
// feature cache.
Status OpenDataPath(const std::string& dir, const MemoryBudgetRequest& request_in, const DataIoOptions& io,
                    PilotSpec* pilot, DataPath* path) {
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(dir));
  path->dataset.emplace(std::move(dataset));
  const Dataset& ds = *path->dataset;
  const DatasetManifest& m = ds.manifest();
  MemoryBudgetRequest request = request_in;
  request.num_nodes = m.num_nodes;
  request.feature_dim = m.feature_dim;
  request.feature_row_bytes = m.feature_row_bytes();
  request.num_classes = m.num_classes;

  DirectReaderOptions reader;
  reader.mode = io.mode;
  reader.queue_depth = io.queue_depth;
  reader.direct = io.direct;
  reader.quiet = io.quiet;
  auto open_reader = [&](const char* name) -> Result<std::unique_ptr<BlockReader>> {
    return io.mmap ? OpenMmapReader(ds.PathOf(name)) : OpenDirectReader(ds.PathOf(name), reader);
  };
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr, ds.LoadIndptr());
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> indices, open_reader(dataset_files::kIndices));
  if (pilot != nullptr) SEER_RETURN_IF_ERROR(MeasurePilotBatches(ds, indptr, indices.get(), *pilot, &request));
  SEER_ASSIGN_OR_RETURN(path->split, SplitMemoryBudget(request));
  NeighborCache ncache;
  if (path->split.ncache_bytes > 0) {
    const std::string ncache_dir = NeighborCache::DefaultDir(ds);
    if (std::filesystem::exists(ncache_dir + "/" + NeighborCache::kManifestName)) {
      auto loaded = NeighborCache::Load(ncache_dir, ds);
      if (loaded.ok() && loaded->stats().bytes <= path->split.ncache_bytes) ncache = std::move(loaded).value();
    }
    if (!ncache.enabled()) {
      SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Build(ds, indptr, path->split.ncache_bytes));
    }
  }
  path->split.ncache_bytes = ncache.enabled() ? path->split.ncache_bytes : 0;
  path->topology = std::make_unique<Topology>(std::move(indptr), std::move(indices), m.index_dtype, std::move(ncache));
  SEER_ASSIGN_OR_RETURN(path->features, open_reader(dataset_files::kFeatures));
  FeatureCacheOptions cache_options;
  cache_options.num_nodes = m.num_nodes;
  cache_options.capacity_rows = path->split.fcache_rows;
  cache_options.row_bytes = m.feature_row_bytes();
  SEER_ASSIGN_OR_RETURN(FeatureCache cache, FeatureCache::Create(cache_options));
  path->cache.emplace(std::move(cache));
  path->gatherer = std::make_unique<FeatureGatherer>(path->features.get(), m, &*path->cache);
  return Status::Ok();
}

struct EvalResult {
  double accuracy = -1;
  int64_t labeled = 0;
};

// Samples `sampler`'s seeds (fixed epoch 0) and runs the model on them, gathering
// read-only through the shared cache. per_batch receives every batch's predictions.
Status EvaluateSplit(SuperbatchSampler& sampler, FeatureGatherer& gatherer, ModelRunner& model,
                     const LabelTable& labels, bool want_embeddings, EvalResult* result,
                     const std::function<void(const BatchTrace&, const int64_t*, const std::vector<float>&)>& per_batch,
                     GatherStats* gather_stats) {
  int64_t correct = 0, labeled = 0;
  std::vector<float> rows;
  std::vector<int64_t> classes;
  std::vector<float> embeddings;
  for (int64_t k = 0; k < sampler.num_superbatches(); ++k) {
    SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, k));
    for (const BatchTrace& batch : trace.batches) {
      SEER_RETURN_IF_ERROR(gatherer.GatherReadOnly(batch, &rows, gather_stats));
      classes.resize(static_cast<size_t>(batch.num_seeds));
      model.Predict(batch, rows.data(), classes.data(), want_embeddings ? &embeddings : nullptr);
      for (int64_t s = 0; s < batch.num_seeds; ++s) {
        const int32_t label = labels.Get(batch.node_ids[static_cast<size_t>(s)]);
        if (label < 0) continue;
        ++labeled;
        correct += classes[static_cast<size_t>(s)] == label;
      }
      if (per_batch) per_batch(batch, classes.data(), embeddings);
    }
  }
  result->labeled = labeled;
  result->accuracy = labeled > 0 ? static_cast<double>(correct) / labeled : -1;
  return Status::Ok();
}

// Batch buffers, traces and plans are large, short-lived allocations made on several
// threads. glibc's dynamic mmap threshold would move them onto arena heaps after the
// first free, where freed pages stay resident; a fixed threshold keeps them mmapped so
// peak RSS tracks the memory budget (measured: ~10 MiB less on a 32 MiB budget).
void KeepLargeAllocationsMapped() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

}  // namespace

Result<PipelineKind> ParsePipelineKind(const std::string& text) {
  if (text == "superbatch") return PipelineKind::kSuperbatch;
  if (text == "conventional") return PipelineKind::kConventional;
  return InvalidArgument("unknown pipeline '" + text + "' (expected superbatch or conventional)");
}

const char* PipelineKindName(PipelineKind kind) {
  return kind == PipelineKind::kConventional ? "conventional" : "superbatch";
}

std::string EpochReport::ToJson() const {
  JsonValue j = JsonValue::Object();
  j.Set("type", JsonValue::String("epoch"));
  j.Set("epoch", JsonValue::Int(epoch));
  j.Set("batches", JsonValue::Int(batches));
  j.Set("seeds", JsonValue::Int(seeds));
  j.Set("train_loss", JsonValue::Double(train_loss));
  j.Set("train_accuracy", JsonValue::Double(train_accuracy));
  if (valid_accuracy >= 0) j.Set("valid_accuracy", JsonValue::Double(valid_accuracy));
  if (test_accuracy >= 0) j.Set("test_accuracy", JsonValue::Double(test_accuracy));
  JsonValue t = JsonValue::Object();
  t.Set("epoch", JsonValue::Double(seconds));
  t.Set("inspect", JsonValue::Double(inspect_seconds));
  t.Set("plan", JsonValue::Double(plan_seconds));
  t.Set("gather", JsonValue::Double(gather_seconds));
  t.Set("io_wait", JsonValue::Double(io_wait_seconds));
  t.Set("cache_update", JsonValue::Double(cache_update_seconds));
  t.Set("transfer", JsonValue::Double(transfer_seconds));
  t.Set("compute", JsonValue::Double(compute_seconds));
  t.Set("stall", JsonValue::Double(stall_seconds));
  t.Set("eval", JsonValue::Double(eval_seconds));
  j.Set("seconds", t);
  j.Set("samples_per_second", JsonValue::Double(seconds > 0 ? seeds / seconds : 0));
  j.Set("fcache_accesses", JsonValue::Int(gather.rows));
  j.Set("fcache_hits", JsonValue::Int(gather.hits));
  j.Set("fcache_hit_ratio", JsonValue::Double(gather.hit_ratio()));
  j.Set("fcache_fill_rows", JsonValue::Int(gather.fill_rows));
  j.Set("ncache_lookups", JsonValue::Int(ncache_lookups));
  j.Set("ncache_hits", JsonValue::Int(ncache_hits));
  j.Set("ncache_hit_ratio", JsonValue::Double(ncache_lookups ? static_cast<double>(ncache_hits) / ncache_lookups : 0));
  j.Set("feature_ssd_bytes", JsonValue::Int(gather.reads.device_bytes + gather.fill_reads.device_bytes));
  j.Set("feature_ssd_reads", JsonValue::Int(gather.reads.device_reads + gather.fill_reads.device_reads));
  j.Set("topology_ssd_bytes", JsonValue::Int(topology_reads.device_bytes));
  j.Set("topology_ssd_reads", JsonValue::Int(topology_reads.device_reads));
  return j.Dump();
}

std::string EpochReport::Summary() const {
  char buf[1024];
  std::string acc;
  if (valid_accuracy >= 0) {
    char a[96];
    std::snprintf(a, sizeof(a), ", valid acc %.4f, test acc %.4f", valid_accuracy, test_accuracy);
    acc = a;
  }
  std::snprintf(
      buf, sizeof(buf),
      "epoch %lld: %.2f s, %lld batches, %.0f samples/s, train loss %.4f, train acc %.4f%s\n"
      "  time: inspect %.2f s, plan %.2f s (both overlapped), gather %.2f s (I/O wait %.2f s, "
      "cache update %.2f s), transfer %.2f s, compute %.2f s, stall %.2f s, eval %.2f s\n"
      "  feature cache hit %.1f%% (%lld/%lld, fill %lld rows), neighbor cache hit %.1f%%, "
      "SSD: features %s in %lld reads, topology %s in %lld reads",
      static_cast<long long>(epoch + 1), seconds, static_cast<long long>(batches),
      seconds > 0 ? seeds / seconds : 0.0, train_loss, train_accuracy, acc.c_str(), inspect_seconds,
      plan_seconds, gather_seconds, io_wait_seconds, cache_update_seconds, transfer_seconds,
      compute_seconds, stall_seconds, eval_seconds, 100 * gather.hit_ratio(),
      static_cast<long long>(gather.hits), static_cast<long long>(gather.rows),
      static_cast<long long>(gather.fill_rows),
      ncache_lookups ? 100.0 * ncache_hits / ncache_lookups : 0.0,
      FormatBytes(gather.reads.device_bytes + gather.fill_reads.device_bytes).c_str(),
      static_cast<long long>(gather.reads.device_reads + gather.fill_reads.device_reads),
      FormatBytes(topology_reads.device_bytes).c_str(), static_cast<long long>(topology_reads.device_reads));
  return buf;
}

Result<TrainSummary> RunTraining(const TrainOptions& o) {
  const auto run_start = Clock::now();
  KeepLargeAllocationsMapped();
  if (o.epochs < 0 || o.batch_size <= 0 || o.superbatch <= 0 || o.prefetch_batches <= 0 || o.fanouts.empty()) {
    return InvalidArgument(
        "train: epochs >= 0, batch size >= 1, superbatch >= 1, prefetch >= 1 and at least one fan-out are required");
  }
  const bool conventional = o.pipeline == PipelineKind::kConventional;
  if (conventional && o.cache_policy == PolicyKind::kBelady) {
    return InvalidArgument(
        "--feature-cache belady needs the superbatch pipeline's lookahead; with --pipeline conventional use "
        "static-degree, presc, lru or none");
  }
  if (o.ncache_share > 1) return InvalidArgument("the neighbor cache's share of the cache memory must be <= 1");
  const std::string checkpoint_path = o.checkpoint_dir.empty() ? "" : o.checkpoint_dir + "/checkpoint.ckpt";
  if (o.resume) {
    if (checkpoint_path.empty()) return InvalidArgument("--resume needs --checkpoint-dir");
    if (o.no_train) return InvalidArgument("--resume cannot be combined with --no-train");
    if (!std::filesystem::exists(checkpoint_path)) {
      return Status(StatusCode::kNotFound, checkpoint_path + ": no checkpoint to resume from");
    }
    // Refuse a damaged checkpoint before any work is done.
    SEER_RETURN_IF_ERROR(ReadCheckpointPosition(checkpoint_path).status());
  }
  TrainSummary summary;
  DataPath data;
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  request.batch_size = o.batch_size;
  request.fanouts = o.fanouts;
  request.ncache_budget_bytes = o.ncache_budget_bytes;
  request.fcache_budget_bytes = o.fcache_budget_bytes;
  request.ncache_share = o.ncache_share;
  // Training reserves the model's host working set; on a GPU its activations live in
  // device memory (ModelRunner trains on CUDA when asked and a device is present).
  request.reserve_model = !o.no_train;
  request.model.kind = o.model;
  request.model.hidden = o.hidden;
  request.model.heads = o.heads;
  request.model_on_host = !(o.use_cuda && kernels::CudaDeviceCount() > 0);
  DataIoOptions io;
  io.mode = o.io;
  io.queue_depth = o.queue_depth;
  io.direct = o.direct_io;
  io.quiet = o.quiet;
  io.mmap = o.mmap_io;
  // The inspector's traces in RAM outside the trace store: the one executing, one queued
  // for the planner and one being sampled (the planner hands its trace to the store before
  // it waits) — never more than the run has. Belady's CPU planner needs ~37 B per access
  // including the trace's own 8 B id (planner_bench), LRU's bookkeeping less.
  request.superbatch = conventional ? o.prefetch_batches : o.superbatch;
  request.traces_in_flight = 3;
  request.planner_bytes_per_access = o.cache_policy == PolicyKind::kBelady ? 32
                                     : o.cache_policy == PolicyKind::kLru  ? 16
                                                                           : 0;
  PilotSpec pilot = MakePilot(o.batch_size, o.fanouts, o.seed, o.num_threads);
  pilot.split = "train";
  pilot.epochs = o.epochs;
  SEER_RETURN_IF_ERROR(OpenDataPath(o.dataset_dir, request, io, &pilot, &data));
  summary.split = data.split;
  const Dataset& dataset = *data.dataset;
  const DatasetManifest& m = dataset.manifest();
  if (!o.quiet) std::fprintf(stderr, "seer train: %s\n", data.split.ToString().c_str());

  // Seeds and labels.
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> train_ids, TakeSplit(dataset, pilot, "train"));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> valid_ids, dataset.LoadSplit("valid"));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> test_ids, dataset.LoadSplit("test"));
  if (train_ids.empty()) return InvalidArgument(dataset.PathOf(dataset_files::kTrain) + ": no training nodes");
  SEER_ASSIGN_OR_RETURN(LabelTable labels, LabelTable::Load(dataset, train_ids));
  {
    SEER_ASSIGN_OR_RETURN(LabelTable more, LabelTable::Load(dataset, valid_ids));
    labels.Merge(more);
    SEER_ASSIGN_OR_RETURN(LabelTable test_labels, LabelTable::Load(dataset, test_ids));
    labels.Merge(test_labels);
  }

  SuperbatchOptions sb_options;
  sb_options.batch_size = o.batch_size;
  // Conventional pipeline: no superbatch lookahead, just `prefetch_batches` sampled
  // together one group ahead (the planner then only runs the online/static policies).
  sb_options.superbatch_size = conventional ? o.prefetch_batches : o.superbatch;
  sb_options.num_threads = o.num_threads;
  sb_options.sampler.fanouts = o.fanouts;
  sb_options.sampler.seed = o.seed;
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler train_sampler,
                        SuperbatchSampler::Create(data.topology->view(), train_ids, sb_options));
  SuperbatchOptions eval_options = sb_options;
  eval_options.shuffle = false;
  std::optional<SuperbatchSampler> valid_sampler, test_sampler;
  if (!valid_ids.empty()) {
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler s, SuperbatchSampler::Create(data.topology->view(), valid_ids, eval_options));
    valid_sampler.emplace(std::move(s));
  }
  if (!test_ids.empty()) {
    SEER_ASSIGN_OR_RETURN(SuperbatchSampler s, SuperbatchSampler::Create(data.topology->view(), test_ids, eval_options));
    test_sampler.emplace(std::move(s));
  }

  // Runtime directory for spilled traces and changesets.
  std::string runtime_dir = o.runtime_dir;
  if (runtime_dir.empty()) {
    runtime_dir = (std::filesystem::temp_directory_path() /
                   ("seer-train-" + std::to_string(getpid()) + "-" +
                    std::to_string(Clock::now().time_since_epoch().count())))
                      .string();
  }
  SEER_RETURN_IF_ERROR(MakeDirectories(runtime_dir));
  struct DirRemover {
    std::string dir;
    bool owned;
    ~DirRemover() {
      std::error_code ec;
      if (owned) std::filesystem::remove_all(dir, ec);
    }
  } remover{runtime_dir, o.runtime_dir.empty()};
  const int64_t trace_budget = o.trace_budget_bytes >= 0 ? o.trace_budget_bytes : data.split.trace_bytes;

  // Feature-cache policy (cache/policies.h) behind the per-superbatch adapter.
  PolicyOptions policy_options;
  policy_options.capacity_rows = o.cache_policy == PolicyKind::kNone ? 0 : data.split.fcache_rows;
  policy_options.planner.device = o.planner;
  policy_options.planner.changeset_budget_bytes = std::max<int64_t>(0, trace_budget / 2);
  policy_options.planner.spill_dir = runtime_dir;
  if (o.cache_policy == PolicyKind::kStaticDegree && policy_options.capacity_rows > 0) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> degrees, ComputeOutDegrees(dataset));
    policy_options.ranking = RankNodesByScore(degrees, policy_options.capacity_rows);
  } else if (o.cache_policy == PolicyKind::kPresc && policy_options.capacity_rows > 0) {
    // PreSC: visit counts over one pre-sampling epoch (an epoch number training never
    // uses), accumulated superbatch by superbatch (CountVisits per superbatch would cost
    // a node-sized array each time).
    constexpr int64_t kPresamplingEpoch = int64_t{1} << 40;
    std::vector<int64_t> visits(static_cast<size_t>(m.num_nodes), 0);
    for (int64_t k = 0; k < train_sampler.num_superbatches(); ++k) {
      SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, train_sampler.Sample(kPresamplingEpoch, k));
      for (const BatchTrace& b : trace.batches) {
        for (int64_t v : b.node_ids) ++visits[static_cast<size_t>(v)];
      }
    }
    policy_options.ranking = RankNodesByScore(visits, policy_options.capacity_rows);
  }
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<CachePolicy> cache_policy,
                        MakeCachePolicy(o.cache_policy, std::move(policy_options)));
  SuperbatchCachePlanner policy(std::move(cache_policy));

  // Model.
  std::unique_ptr<ModelRunner> model;
  TrainPosition position;
  position.seed = o.seed;
  if (!o.no_train) {
    ModelConfig config;
    config.kind = o.model;
    config.in_dim = m.feature_dim;
    config.hidden = o.hidden;
    config.num_classes = m.num_classes;
    config.num_layers = static_cast<int64_t>(o.fanouts.size());
    config.dropout = o.dropout;
    config.heads = o.heads;
    try {
      model = ModelRunner::Create(config, o.learning_rate, o.seed, o.use_cuda);
    } catch (const std::invalid_argument& e) {
      return InvalidArgument(std::string("model: ") + e.what());
    }
    if (!o.quiet) {
      std::fprintf(stderr, "seer train: model %s, %d layers (fan-outs %s), hidden %lld, %lld parameters, on %s\n",
                   ModelKindName(o.model), static_cast<int>(o.fanouts.size()), JoinFanouts(o.fanouts).c_str(),
                   static_cast<long long>(o.hidden), static_cast<long long>(model->num_parameters()),
                   model->on_cuda() ? "cuda" : "cpu");
    }
    if (!o.quiet && !request.model_on_host && !model->on_cuda()) {
      std::fprintf(stderr, "seer train: WARNING: the memory split assumed GPU training but the model runs on the "
                           "CPU; its activations are not reserved (peak RSS may exceed the budget)\n");
    }
  }
  if (!checkpoint_path.empty()) SEER_RETURN_IF_ERROR(MakeDirectories(o.checkpoint_dir));
  if (o.resume) {
    SEER_ASSIGN_OR_RETURN(position, model->LoadCheckpoint(checkpoint_path));
    if (position.seed != o.seed) {
      return InvalidArgument(checkpoint_path + ": checkpoint was written with --seed " +
                             std::to_string(position.seed) + ", this run uses " + std::to_string(o.seed));
    }
    if (!o.quiet) {
      std::fprintf(stderr, "seer train: resuming from %s at epoch %lld, superbatch %lld\n", checkpoint_path.c_str(),
                   static_cast<long long>(position.epoch + 1), static_cast<long long>(position.next_superbatch));
    }
  }
  summary.best_valid_accuracy = position.best_valid_accuracy;
  summary.best_epoch = position.best_epoch;

  std::unique_ptr<AtomicFileWriter> metrics;  // JSON lines, renamed into place at the end
  std::string metrics_text;
  auto emit_metrics = [&](const std::string& line) {
    if (!o.metrics_path.empty()) metrics_text += line + "\n";
  };
  {
    JsonValue start = JsonValue::Object();
    start.Set("type", JsonValue::String("start"));
    start.Set("budget_bytes", JsonValue::Int(data.split.budget_bytes));
    start.Set("table_bytes", JsonValue::Int(data.split.table_bytes));
    start.Set("staging_bytes", JsonValue::Int(data.split.staging_bytes));
    start.Set("trace_bytes", JsonValue::Int(data.split.trace_bytes));
    start.Set("inspector_bytes", JsonValue::Int(data.split.inspector_bytes));
    start.Set("ncache_bytes", JsonValue::Int(data.split.ncache_bytes));
    start.Set("fcache_bytes", JsonValue::Int(data.split.fcache_bytes));
    start.Set("fcache_rows", JsonValue::Int(data.split.fcache_rows));
    start.Set("policy", JsonValue::String(PolicyKindName(o.cache_policy)));
    start.Set("model", JsonValue::String(o.no_train ? "none" : ModelKindName(o.model)));
    start.Set("overlap", JsonValue::Bool(o.overlap));
    start.Set("pipeline", JsonValue::String(PipelineKindName(o.pipeline)));
    start.Set("batches_per_superbatch", JsonValue::Int(sb_options.superbatch_size));
    start.Set("io", JsonValue::String(o.mmap_io ? "mmap" : IoModeName(data.features->mode())));
    start.Set("direct", JsonValue::Bool(data.features->direct()));
    if (o.ncache_share >= 0) start.Set("ncache_share", JsonValue::Double(o.ncache_share));
    emit_metrics(start.Dump());
  }

  // The schedule: (epoch, superbatch) from the resume position to the end.
  const int64_t num_sb = train_sampler.num_superbatches();
  std::vector<std::pair<int64_t, int64_t>> schedule;
  for (int64_t e = position.epoch; e < o.epochs; ++e) {
    for (int64_t k = (e == position.epoch ? position.next_superbatch : 0); k < num_sb; ++k) schedule.emplace_back(e, k);
  }

  ErrorSlot error;
  std::atomic<bool> stop{false};
  ExclusionToken exclusion;  // without overlap: sampling and executing take turns
  BoundedQueue<SampledSuperbatch> sampled(1);
  BoundedQueue<PlannedSuperbatch> planned(1);
  TraceStore trace_store(trace_budget / 2, runtime_dir);

  std::thread inspector([&] {
    for (const auto& [e, k] : schedule) {
      if (stop) break;
      SampledSuperbatch s;
      Result<SuperbatchTrace> trace = Status(StatusCode::kInvalidArgument, "unset");
      if (!o.overlap && !exclusion.Acquire()) break;
      trace = train_sampler.Sample(e, k, &s.stats);
      if (!o.overlap) exclusion.Release();
      if (!trace.ok()) {
        error.Set(trace.status());
        break;
      }
      s.trace = std::move(trace).value();
      if (!sampled.Push(std::move(s))) break;
    }
    sampled.Close();
  });
  std::thread planner([&] {
    while (auto s = sampled.Pop()) {
      PlannedSuperbatch p;
      p.epoch = s->trace.epoch;
      p.index = s->trace.superbatch_index;
      p.sample_stats = s->stats;
      auto plan = policy.Plan(s->trace);
      if (!plan.ok()) {
        error.Set(plan.status());
        break;
      }
      p.plan = std::move(plan).value();
      Status pushed = trace_store.Push(std::move(s->trace));
      if (!pushed.ok()) {
        error.Set(pushed);
        break;
      }
      if (!planned.Push(std::move(p))) break;
    }
    planned.Close();
    sampled.Close();
  });

  // Gather thread: batch after batch, one ahead of the model, across superbatches. Two
  // float buffers (MemoryBudgetRequest::pipeline_depth): one trains, one fills.
  BoundedQueue<GatheredBatch> ready(1);
  BoundedQueue<std::vector<float>> free_buffers(2);
  for (int i = 0; i < 2; ++i) free_buffers.Push(std::vector<float>());
  EpochGate epoch_gate(position.epoch);
  std::thread gatherer([&] {
    Status status = [&]() -> Status {
      while (std::optional<PlannedSuperbatch> p = planned.Pop()) {
        auto sb = std::make_shared<ExecutingSuperbatch>();
        sb->planned = std::move(*p);
        SEER_ASSIGN_OR_RETURN(sb->trace, trace_store.Pop());
        if (!epoch_gate.WaitFor(sb->planned.epoch)) return Status::Ok();
        if (!o.overlap && !exclusion.Acquire()) return Status::Ok();
        const SuperbatchPlan& plan = sb->planned.plan;
        if (!plan.fill_slots.empty()) SEER_RETURN_IF_ERROR(data.gatherer->Fill(plan.fill_slots, &sb->gather));
        const size_t n = sb->trace.batches.size();
        for (size_t i = 0; i < n; ++i) {
          std::optional<std::vector<float>> buffer = free_buffers.Pop();
          if (!buffer) return Status::Ok();
          std::optional<Changeset> cs;
          if (plan.changesets) {
            SEER_ASSIGN_OR_RETURN(Changeset got, plan.changesets->Get(static_cast<int64_t>(i)));
            cs.emplace(std::move(got));
          }
          GatheredBatch g;
          g.superbatch = sb;
          g.index = i;
          g.last = i + 1 == n;
          g.rows = std::move(*buffer);
          SEER_RETURN_IF_ERROR(data.gatherer->Gather(sb->trace.batches[i], cs ? &*cs : nullptr, &g.rows, &sb->gather));
          g.hits_so_far = sb->gather.hits;
          g.rows_so_far = sb->gather.rows;
          if (!ready.Push(std::move(g))) return Status::Ok();
        }
      }
      return Status::Ok();
    }();
    error.Set(status);
    ready.Close();
  });
  auto shutdown = [&] {
    stop = true;
    sampled.Close();
    planned.Close();
    ready.Close();
    free_buffers.Close();
    epoch_gate.Close();
    exclusion.Close();
    if (inspector.joinable()) inspector.join();
    if (planner.joinable()) planner.join();
    if (gatherer.joinable()) gatherer.join();
  };

  const int64_t total_batches = static_cast<int64_t>(schedule.size()) > 0
                                    ? train_sampler.num_batches() * (o.epochs - position.epoch)
                                    : 0;
  TrainProgress progress(o.show_progress && !o.quiet, o.progress_interval_s, total_batches);
  int64_t done_batches = 0, done_seeds = 0;
  int64_t executed_superbatches = 0;
  std::optional<EpochReport> report;
  // An epoch's wall time runs from the end of the previous one (or the pipeline start),
  // so time spent waiting for the first superbatch's sampling and plan is included.
  Clock::time_point epoch_start = Clock::now();
  double epoch_loss_sum = 0;
  int64_t epoch_loss_batches = 0, epoch_correct = 0, epoch_labeled = 0;

  auto save_checkpoint = [&](const TrainPosition& pos) -> Status {
    if (checkpoint_path.empty() || !model) return Status::Ok();
    return model->SaveCheckpoint(checkpoint_path, pos);
  };

  auto finish_epoch = [&](int64_t epoch) -> Status {
    EpochReport& r = *report;
    r.train_loss = epoch_loss_batches ? epoch_loss_sum / epoch_loss_batches : 0;
    r.train_accuracy = epoch_labeled ? static_cast<double>(epoch_correct) / epoch_labeled : 0;
    const bool last = epoch + 1 == o.epochs;
    const bool eval_now = model && (last || (o.eval_every > 0 && (epoch + 1) % o.eval_every == 0));
    if (eval_now) {
      const auto eval_start = Clock::now();
      EvalResult valid, test;
      if (valid_sampler) {
        SEER_RETURN_IF_ERROR(EvaluateSplit(*valid_sampler, *data.gatherer, *model, labels, false, &valid, nullptr, nullptr));
      }
      if (test_sampler) {
        SEER_RETURN_IF_ERROR(EvaluateSplit(*test_sampler, *data.gatherer, *model, labels, false, &test, nullptr, nullptr));
      }
      r.valid_accuracy = valid.accuracy;
      r.test_accuracy = test.accuracy;
      if (valid.accuracy > position.best_valid_accuracy) {
        position.best_valid_accuracy = valid.accuracy;
        position.best_epoch = epoch;
        model->SnapshotBest();
      }
      r.eval_seconds = Since(eval_start);
    }
    r.seconds = Since(epoch_start);
    epoch_start = Clock::now();
    progress.Break();
    if (!o.quiet) std::fprintf(stderr, "%s\n", r.Summary().c_str());
    emit_metrics(r.ToJson());
    summary.epochs.push_back(r);
    position.epoch = epoch + 1;
    position.next_superbatch = 0;
    report.reset();
    return save_checkpoint(position);
  };

  Status run_status = [&]() -> Status {
    std::vector<int32_t> seed_labels;
    while (true) {
      const auto wait_start = Clock::now();
      std::optional<GatheredBatch> g = ready.Pop();
      const double waited = Since(wait_start);
      if (!g) break;
      ExecutingSuperbatch& sb = *g->superbatch;
      const PlannedSuperbatch& p = sb.planned;
      if (!report) {
        report.emplace();
        report->epoch = p.epoch;
        epoch_loss_sum = 0;
        epoch_loss_batches = epoch_correct = epoch_labeled = 0;
      }
      EpochReport& r = *report;
      r.stall_seconds += waited;
      if (g->index == 0) {
        r.inspect_seconds += p.sample_stats.seconds;
        r.plan_seconds += p.plan.seconds;
        r.ncache_lookups += p.sample_stats.sample.neighbor_lookups;
        r.ncache_hits += p.sample_stats.sample.ncache_hits;
        r.topology_reads.Add(p.sample_stats.sample.reads);
      }
      const BatchTrace& batch = sb.trace.batches[g->index];
      const int64_t num_rows = static_cast<int64_t>(batch.node_ids.size());
      if (o.batch_hook) o.batch_hook(batch, g->rows.data(), num_rows, m.feature_dim);
      double loss = 0;
      if (model) {
        seed_labels.resize(static_cast<size_t>(batch.num_seeds));
        for (int64_t s = 0; s < batch.num_seeds; ++s) seed_labels[static_cast<size_t>(s)] = labels.Get(batch.node_ids[static_cast<size_t>(s)]);
        const auto compute_start = Clock::now();
        StepResult step;
        try {
          step = model->TrainStep(batch, g->rows.data(), seed_labels.data());
        } catch (const std::exception& e) {
          return Status(StatusCode::kInvalidArgument, std::string("training step failed: ") + e.what());
        }
        r.compute_seconds += Since(compute_start);
        loss = step.loss;
        if (step.num_labeled > 0) {
          epoch_loss_sum += step.loss;
          ++epoch_loss_batches;
          epoch_correct += step.num_correct;
          epoch_labeled += step.num_labeled;
        }
        ++position.global_step;
        if (o.step_hook) o.step_hook(batch.epoch, batch.batch_index, step.loss);
      }
      ++r.batches;
      r.seeds += batch.num_seeds;
      ++done_batches;
      done_seeds += batch.num_seeds;
      free_buffers.Push(std::move(g->rows));
      progress.Update(p.epoch, o.epochs, p.index, num_sb, batch.batch_index, train_sampler.num_batches(),
                      done_batches, done_seeds, epoch_loss_batches ? epoch_loss_sum / epoch_loss_batches : loss,
                      (r.gather.hits + g->hits_so_far) / std::max<double>(1.0, r.gather.rows + g->rows_so_far));
      if (!g->last) continue;

      // The superbatch is done: its gather stats are complete.
      r.gather.Add(sb.gather);
      r.gather_seconds += sb.gather.gather_seconds;
      r.io_wait_seconds += sb.gather.io_seconds;
      r.cache_update_seconds += sb.gather.update_seconds;
      r.transfer_seconds += sb.gather.convert_seconds;
      if (!o.overlap) exclusion.Release();
      ++executed_superbatches;
      const bool epoch_done = p.index + 1 == num_sb;
      if (epoch_done) {
        SEER_RETURN_IF_ERROR(finish_epoch(p.epoch));
        epoch_gate.Open(p.epoch + 1);
      } else {
        position.epoch = p.epoch;
        position.next_superbatch = p.index + 1;
        if (o.checkpoint_every > 0 && executed_superbatches % o.checkpoint_every == 0) {
          SEER_RETURN_IF_ERROR(save_checkpoint(position));
        }
      }
      if (o.stop_after_superbatches >= 0 && executed_superbatches >= o.stop_after_superbatches) {
        if (!epoch_done) SEER_RETURN_IF_ERROR(save_checkpoint(position));
        summary.stopped_early = true;
        break;
      }
    }
    return Status::Ok();
  }();
  shutdown();
  SEER_RETURN_IF_ERROR(error.Get());
  SEER_RETURN_IF_ERROR(run_status);
  progress.Break();

  // Final evaluation of the best-validation model.
  if (model && !summary.stopped_early) {
    summary.best_valid_accuracy = position.best_valid_accuracy;
    summary.best_epoch = position.best_epoch;
    if (model->has_best()) {
      model->RestoreBest();
      if (test_sampler) {
        EvalResult test;
        SEER_RETURN_IF_ERROR(EvaluateSplit(*test_sampler, *data.gatherer, *model, labels, false, &test, nullptr, nullptr));
        summary.test_accuracy = test.accuracy;
      }
    } else if (!summary.epochs.empty()) {
      summary.test_accuracy = summary.epochs.back().test_accuracy;
    }
    if (!o.save_model_path.empty()) SEER_RETURN_IF_ERROR(model->SaveModel(o.save_model_path, /*best=*/true));
  }
  summary.final_position = position;
  summary.peak_rss_bytes = PeakRssBytes();
  summary.seconds = Since(run_start);
  {
    JsonValue fin = JsonValue::Object();
    fin.Set("type", JsonValue::String("final"));
    fin.Set("best_valid_accuracy", JsonValue::Double(summary.best_valid_accuracy));
    fin.Set("best_epoch", JsonValue::Int(summary.best_epoch));
    fin.Set("test_accuracy", JsonValue::Double(summary.test_accuracy));
    fin.Set("peak_rss_bytes", JsonValue::Int(summary.peak_rss_bytes));
    fin.Set("seconds", JsonValue::Double(summary.seconds));
    fin.Set("stopped_early", JsonValue::Bool(summary.stopped_early));
    emit_metrics(fin.Dump());
  }
  if (!o.metrics_path.empty()) SEER_RETURN_IF_ERROR(WriteFileAtomically(o.metrics_path, metrics_text));
  if (!o.quiet) {
    if (model && !summary.stopped_early) {
      std::fprintf(stderr, "seer train: best valid acc %.4f (epoch %lld), test acc %.4f (best-validation model)\n",
                   summary.best_valid_accuracy, static_cast<long long>(summary.best_epoch + 1), summary.test_accuracy);
    }
    std::fprintf(stderr, "seer train: done in %.1f s, peak RSS %s (budget %s)\n", summary.seconds,
                 FormatBytes(summary.peak_rss_bytes).c_str(), FormatBytes(o.memory_budget_bytes).c_str());
  }
  return summary;
}

Result<PredictResult> RunPrediction(const PredictOptions& o) {
  KeepLargeAllocationsMapped();
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<ModelRunner> model, ModelRunner::LoadModel(o.model_path, o.use_cuda));
  std::vector<int> fanouts = o.fanouts;
  if (fanouts.empty()) fanouts.assign(static_cast<size_t>(model->config().num_layers), 10);
  if (model->config().kind != ModelKind::kMlp && static_cast<int64_t>(fanouts.size()) != model->config().num_layers) {
    return InvalidArgument("--fanouts has " + std::to_string(fanouts.size()) + " layers, the model " +
                           std::to_string(model->config().num_layers));
  }
  DataPath data;
  MemoryBudgetRequest request;
  request.budget_bytes = o.memory_budget_bytes;
  request.batch_size = o.batch_size;
  request.fanouts = fanouts;
  DataIoOptions io;
  io.mode = o.io;
  io.direct = o.direct_io;
  PilotSpec pilot = MakePilot(o.batch_size, fanouts, o.seed, o.num_threads);
  if (o.nodes.empty()) {
    pilot.split = "test";
  } else {  // the first distinct ids (the sampler needs distinct seeds); range-checked below
    std::unordered_set<int64_t> seen;
    for (int64_t v : o.nodes) {
      if (static_cast<int64_t>(pilot.ids.size()) >= pilot.batches * o.batch_size) break;
      if (v >= 0 && seen.insert(v).second) pilot.ids.push_back(v);
    }
  }
  SEER_RETURN_IF_ERROR(OpenDataPath(o.dataset_dir, request, io, &pilot, &data));
  const Dataset& dataset = *data.dataset;
  const DatasetManifest& m = dataset.manifest();
  if (m.feature_dim != model->config().in_dim || m.num_classes != model->config().num_classes) {
    return InvalidArgument(o.model_path + ": model expects feature_dim " + std::to_string(model->config().in_dim) +
                           " and " + std::to_string(model->config().num_classes) + " classes, dataset " +
                           dataset.dir() + " has " + std::to_string(m.feature_dim) + " and " +
                           std::to_string(m.num_classes));
  }
  PredictResult result;
  result.nodes = o.nodes;
  if (result.nodes.empty()) {
    SEER_ASSIGN_OR_RETURN(result.nodes, TakeSplit(dataset, pilot, "test"));
  }
  for (size_t i = 0; i < result.nodes.size(); ++i) {
    if (result.nodes[i] < 0 || result.nodes[i] >= m.num_nodes) {
      return InvalidArgument("node id " + std::to_string(result.nodes[i]) + " at position " + std::to_string(i) +
                             " is out of range [0, " + std::to_string(m.num_nodes) + ")");
    }
  }
  // The sampler needs distinct seeds: predict the distinct ids (in first-occurrence
  // order, so the test split gives the batches evaluation used), then map back.
  std::vector<int64_t> distinct;
  std::unordered_map<int64_t, size_t> index_by_node;
  for (int64_t v : result.nodes) {
    if (index_by_node.emplace(v, distinct.size()).second) distinct.push_back(v);
  }
  SEER_ASSIGN_OR_RETURN(LabelTable labels, LabelTable::Load(dataset, distinct));
  SuperbatchOptions sb;
  sb.batch_size = o.batch_size;
  sb.superbatch_size = o.superbatch;
  sb.num_threads = o.num_threads;
  sb.shuffle = false;
  sb.sampler.fanouts = fanouts;
  sb.sampler.seed = o.seed;
  result.embedding_dim = model->embedding_dim();
  if (distinct.empty()) return result;
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler, SuperbatchSampler::Create(data.topology->view(), distinct, sb));
  std::vector<int64_t> classes_sorted(distinct.size(), -1);
  std::vector<float> emb_sorted;
  if (o.want_embeddings) emb_sorted.resize(distinct.size() * static_cast<size_t>(result.embedding_dim));
  auto index_of = [&](int64_t node) { return index_by_node.at(node); };
  EvalResult eval;
  ProgressReporter progress("predict", static_cast<int64_t>(distinct.size()), "nodes", o.show_progress);
  SEER_RETURN_IF_ERROR(EvaluateSplit(
      sampler, *data.gatherer, *model, labels, o.want_embeddings, &eval,
      [&](const BatchTrace& batch, const int64_t* classes, const std::vector<float>& emb) {
        for (int64_t s = 0; s < batch.num_seeds; ++s) {
          const size_t idx = index_of(batch.node_ids[static_cast<size_t>(s)]);
          classes_sorted[idx] = classes[s];
          if (o.want_embeddings) {
            std::copy(emb.begin() + s * result.embedding_dim, emb.begin() + (s + 1) * result.embedding_dim,
                      emb_sorted.begin() + static_cast<int64_t>(idx) * result.embedding_dim);
          }
        }
        progress.Add(batch.num_seeds);
      },
      nullptr));
  progress.Finish();
  result.accuracy = eval.accuracy;
  result.classes.resize(result.nodes.size());
  if (o.want_embeddings) result.embeddings.resize(result.nodes.size() * static_cast<size_t>(result.embedding_dim));
  for (size_t i = 0; i < result.nodes.size(); ++i) {
    const size_t idx = index_of(result.nodes[i]);
    result.classes[i] = classes_sorted[idx];
    if (o.want_embeddings) {
      std::copy(emb_sorted.begin() + static_cast<int64_t>(idx) * result.embedding_dim,
                emb_sorted.begin() + static_cast<int64_t>(idx + 1) * result.embedding_dim,
                result.embeddings.begin() + static_cast<int64_t>(i) * result.embedding_dim);
    }
  }
  return result;
}

}  // namespace seer
