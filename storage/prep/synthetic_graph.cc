#include "storage/prep/synthetic_graph.h"

#include "storage/base/random.h"

#include <sys/stat.h>

#include <tbb/blocked_range.h>
#include "storage/base/parallel.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/dataset/float16.h"
#include "storage/prep/csc_builder.h"
#include "storage/prep/node_split.h"

namespace seer {
namespace {

// Salts keep the independent random streams (edges, features, splits...) apart.
constexpr uint64_t kEdgeSalt = 0x6a09e667f3bcc908ull;
constexpr uint64_t kPermutationSalt = 0xbb67ae8584caa73bull;
constexpr uint64_t kRotationSalt = 0x3c6ef372fe94f82bull;
constexpr uint64_t kCentroidSalt = 0xa54ff53a5f1d36f1ull;
constexpr uint64_t kNoiseSalt = 0x510e527fade682d1ull;
// (the split stream's salt is in storage/prep/node_split.cc: prep draws with the same rule)
constexpr uint64_t kDegreeSalt = 0x1f83d9abfb41bd6bull;
constexpr uint64_t kSourceSalt = 0x5be0cd19137e2179ull;
constexpr int64_t kNodeChunk = 8192;
constexpr int64_t kReservedBytes = int64_t{32} << 20;  // writer buffers, chunks, threads
constexpr int kHomophilyAttempts = 64;


int CeilLog2(uint64_t n) {
  int bits = 0;
  while ((uint64_t{1} << bits) < n) ++bits;
  return bits;
}

// A keyed bijection on [0, n): a 6-round balanced Feistel network on 2·h bits
// (4^h < 4n), cycle-walked until the value lands in range.
class FeistelPermutation {
 public:
  FeistelPermutation(int64_t n, uint64_t key) : n_(static_cast<uint64_t>(n)) {
    half_bits_ = std::max(1, (CeilLog2(n_) + 1) / 2);
    mask_ = (uint64_t{1} << half_bits_) - 1;
    for (int i = 0; i < kRounds; ++i) keys_[i] = SplitMixFinalize(key + static_cast<uint64_t>(i) * 0x9e37ull);
  }
  int64_t Forward(int64_t x) const {
    uint64_t y = static_cast<uint64_t>(x);
    do y = Once(y); while (y >= n_);
    return static_cast<int64_t>(y);
  }
  int64_t Inverse(int64_t y) const {
    uint64_t x = static_cast<uint64_t>(y);
    do x = OnceInverse(x); while (x >= n_);
    return static_cast<int64_t>(x);
  }

 private:
  static constexpr int kRounds = 6;
  uint64_t F(uint64_t half, int round) const { return SplitMixFinalize(half ^ keys_[round]) & mask_; }
  uint64_t Once(uint64_t x) const {
    uint64_t l = x >> half_bits_, r = x & mask_;
    for (int i = 0; i < kRounds; ++i) {
      uint64_t next_r = l ^ F(r, i);
      l = r;
      r = next_r;
    }
    return (l << half_bits_) | r;
  }
  uint64_t OnceInverse(uint64_t y) const {
    uint64_t l = y >> half_bits_, r = y & mask_;
    for (int i = kRounds - 1; i >= 0; --i) {
      uint64_t prev_l = r ^ F(l, i);
      r = l;
      l = prev_l;
    }
    return (l << half_bits_) | r;
  }
  uint64_t n_;
  int half_bits_;
  uint64_t mask_;
  uint64_t keys_[kRounds];
};

// Everything that is a pure function of the config: classes, edges, permutation.
class SyntheticModel {
 public:
  explicit SyntheticModel(const SyntheticGraphConfig& c)
      : config_(c),
        n_(c.num_nodes),
        classes_(c.num_classes),
        scale_(CeilLog2(static_cast<uint64_t>(c.num_nodes))),
        num_edges_(static_cast<int64_t>(std::llround(static_cast<double>(c.num_nodes) * c.avg_degree))),
        permutation_(c.num_nodes, c.seed ^ kPermutationSalt) {
    int64_t min_in = c.min_in_degree >= 0 ? c.min_in_degree
                                          : static_cast<int64_t>(std::floor(c.avg_degree / 2));
    forced_edges_ = std::min(num_edges_, min_in * n_);
    t_a_ = static_cast<uint32_t>(std::lround(c.rmat_a * 65536));
    t_ab_ = static_cast<uint32_t>(std::lround((c.rmat_a + c.rmat_b) * 65536));
    t_abc_ = static_cast<uint32_t>(std::lround((c.rmat_a + c.rmat_b + c.rmat_c) * 65536));
    // direct_csc: every node gets min_in (at most E/N) edges, the rest are spread by
    // R-MAT's destination marginal restricted to [0, N) (mass of the ids < N: at the
    // first bit where x and N differ, x has 0 and N has 1).
    direct_base_degree_ = n_ > 0 ? std::min(min_in, num_edges_ / n_) : 0;
    direct_extra_edges_ = static_cast<double>(num_edges_ - direct_base_degree_ * n_);
    dst_zero_ = c.rmat_a + c.rmat_c;
    double prefix = 1;
    direct_mass_ = 0;
    for (int level = scale_ - 1; level >= 0; --level) {
      if ((static_cast<uint64_t>(n_) >> level) & 1) {
        direct_mass_ += prefix * dst_zero_;
        prefix *= 1 - dst_zero_;
      } else {
        prefix *= dst_zero_;
      }
    }
    if (!(direct_mass_ > 0)) direct_mass_ = 1;
  }

  int64_t num_edges() const { return num_edges_; }
  const FeistelPermutation& permutation() const { return permutation_; }

  // ---- direct_csc: per-destination draws (see the header) ----
  // In-degree of the node whose R-MAT-space id is x (final id y seeds the draw).
  int64_t DirectInDegree(int64_t x, int64_t y) const {
    double mass = 1;  // R-MAT's destination marginal: P(v bit 0) = a + c per level
    for (int level = scale_ - 1; level >= 0; --level) {
      mass *= ((x >> level) & 1) ? 1 - dst_zero_ : dst_zero_;
    }
    SplitMix64 rng(SplitMixFinalize(config_.seed ^ kDegreeSalt) ^ SplitMixFinalize(static_cast<uint64_t>(y)));
    return direct_base_degree_ + Poisson(direct_extra_edges_ * mass / direct_mass_, rng);
  }
  // One in-neighbor (R-MAT space, != x) of the node whose R-MAT-space id is x.
  int64_t DirectSource(int64_t x, SplitMix64& rng) const {
    const uint32_t src_zero = t_ab_;  // P(u bit 0) = a + b
    for (int attempt = 0;; ++attempt) {
      uint64_t u = 0, bits = 0;
      int left = 0;
      for (int level = 0; level < scale_; ++level) {
        if (left == 0) {
          bits = rng.Next();
          left = 4;
        }
        u = (u << 1) | static_cast<uint64_t>((bits & 0xffff) >= src_zero);
        bits >>= 16;
        --left;
      }
      int64_t src = static_cast<int64_t>(u);
      if (src >= n_) continue;
      if (classes_ > 1 && attempt < kHomophilyAttempts) {
        src = HomophilousSource(src, x, rng);
        if (src >= n_) continue;
      }
      if (src == x) continue;
      return src;
    }
  }

  // Class of an id in R-MAT space (before the final permutation).
  int64_t ClassOf(int64_t x) const {
    if (classes_ == 1) return 0;
    return (x % classes_ + Rotation(x / classes_)) % classes_;
  }

  // Edge number k, in final ids.
  Edge EdgeAt(int64_t k) const {
    SplitMix64 rng(SplitMixFinalize(config_.seed ^ kEdgeSalt) ^ SplitMixFinalize(static_cast<uint64_t>(k)));
    for (int attempt = 0;; ++attempt) {
      uint64_t u = 0, v = 0, bits = 0;
      int left = 0;
      for (int level = 0; level < scale_; ++level) {
        if (left == 0) {
          bits = rng.Next();
          left = 4;
        }
        uint32_t r = static_cast<uint32_t>(bits & 0xffff);
        bits >>= 16;
        --left;
        int q = r < t_a_ ? 0 : r < t_ab_ ? 1 : r < t_abc_ ? 2 : 3;
        u = (u << 1) | static_cast<uint64_t>(q >> 1);
        v = (v << 1) | static_cast<uint64_t>(q & 1);
      }
      int64_t src = static_cast<int64_t>(u);
      int64_t dst = k < forced_edges_ ? k % n_ : static_cast<int64_t>(v);
      if (src >= n_ || dst >= n_) continue;
      if (classes_ > 1 && attempt < kHomophilyAttempts) {
        src = HomophilousSource(src, dst, rng);
        if (src >= n_) continue;
      }
      if (src == dst) continue;
      return Edge{permutation_.Forward(src), permutation_.Forward(dst)};
    }
  }

 private:
  // Homophily: with probability `homophily` the source moves to the destination's class
  // within its block of `classes_` ids, else to another class (the result may be >= n_:
  // the caller draws again).
  int64_t HomophilousSource(int64_t src, int64_t dst, SplitMix64& rng) const {
    const int64_t dst_class = ClassOf(dst);
    const int64_t target = rng.Uniform() < config_.homophily
                               ? dst_class
                               : (dst_class + 1 + static_cast<int64_t>(rng.Below(classes_ - 1))) % classes_;
    const int64_t block = src / classes_;
    return block * classes_ + ((target - Rotation(block)) % classes_ + classes_) % classes_;
  }

  int64_t Rotation(int64_t block) const {
    return static_cast<int64_t>(SplitMixFinalize(config_.seed ^ kRotationSalt ^ SplitMixFinalize(static_cast<uint64_t>(block))) %
                                static_cast<uint64_t>(classes_));
  }

  // Poisson(lambda): Knuth's product method below 30, a rounded normal above.
  static int64_t Poisson(double lambda, SplitMix64& rng) {
    if (!(lambda > 0)) return 0;
    if (lambda >= 30) {
      return std::max<int64_t>(0, std::llround(lambda + std::sqrt(lambda) * rng.Gaussian()));
    }
    const double limit = std::exp(-lambda);
    int64_t k = 0;
    for (double p = rng.Uniform(); p > limit; p *= rng.Uniform()) ++k;
    return k;
  }

  const SyntheticGraphConfig& config_;
  int64_t n_;
  int64_t classes_;
  int scale_;
  int64_t num_edges_;
  int64_t forced_edges_ = 0;
  uint32_t t_a_, t_ab_, t_abc_;
  int64_t direct_base_degree_ = 0;
  double direct_extra_edges_ = 0, direct_mass_ = 1, dst_zero_ = 0.5;
  FeistelPermutation permutation_;
};

// direct_csc: indptr and indices appended block by block of destinations.
template <typename Index>
Status WriteDirectTopology(const SyntheticModel& model, const SyntheticGraphConfig& config,
                           AtomicFileWriter& indptr, AtomicFileWriter& indices,
                           SyntheticGraphSummary* summary) {
  const int64_t n = config.num_nodes;
  const int64_t block = std::max<int64_t>(1, std::min(config.block_nodes, n));
  std::vector<int64_t> rmat_ids(static_cast<size_t>(block));
  std::vector<int64_t> offsets(static_cast<size_t>(block) + 1);
  std::vector<int64_t> global(static_cast<size_t>(block));
  std::vector<Index> lists;
  const uint64_t source_key = SplitMixFinalize(config.seed ^ kSourceSalt);
  int64_t edges = 0;
  const int64_t zero = 0;
  SEER_RETURN_IF_ERROR(indptr.AppendValues(&zero, 1));
  ProgressReporter progress("gen: topology (direct)", n, "nodes", config.show_progress);
  for (int64_t first = 0; first < n; first += block) {
    const int64_t count = std::min(block, n - first);
    ParallelFor(tbb::blocked_range<int64_t>(0, count, 256), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) {
        const int64_t x = model.permutation().Inverse(first + i);
        rmat_ids[i] = x;
        offsets[i + 1] = model.DirectInDegree(x, first + i);
      }
    });
    offsets[0] = 0;
    for (int64_t i = 0; i < count; ++i) offsets[i + 1] += offsets[i];
    const int64_t block_edges = offsets[count];
    if (static_cast<int64_t>(lists.size()) < block_edges) lists.resize(static_cast<size_t>(block_edges));
    summary->max_block_edges = std::max(summary->max_block_edges, block_edges);
    ParallelFor(tbb::blocked_range<int64_t>(0, count, 64), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) {
        const int64_t y = first + i;
        SplitMix64 rng(source_key ^ SplitMixFinalize(static_cast<uint64_t>(y)));
        Index* list = lists.data() + offsets[i];
        const int64_t degree = offsets[i + 1] - offsets[i];
        for (int64_t j = 0; j < degree; ++j) {
          list[j] = static_cast<Index>(model.permutation().Forward(model.DirectSource(rmat_ids[i], rng)));
        }
        std::sort(list, list + degree);
      }
    });
    for (int64_t i = 0; i < count; ++i) global[i] = edges + offsets[i + 1];
    SEER_RETURN_IF_ERROR(indptr.AppendValues(global.data(), count));
    SEER_RETURN_IF_ERROR(indices.AppendValues(lists.data(), block_edges));
    edges += block_edges;
    ++summary->num_partitions;
    progress.Add(count);
  }
  progress.Finish();
  summary->num_edges = edges;
  return Status::Ok();
}

class SyntheticEdgeSource : public EdgeSource {
 public:
  SyntheticEdgeSource(const SyntheticModel& model, int64_t num_nodes)
      : model_(model), num_nodes_(num_nodes) {}
  Status Rewind() override {
    next_ = 0;
    return Status::Ok();
  }
  Result<int64_t> Read(Edge* out, int64_t max_edges) override {
    int64_t n = std::min(max_edges, model_.num_edges() - next_);
    if (n <= 0) return int64_t{0};
    const int64_t first = next_;
    ParallelFor(tbb::blocked_range<int64_t>(0, n, 1024), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) out[i] = model_.EdgeAt(first + i);
    });
    next_ += n;
    return n;
  }
  int64_t num_nodes() const override { return num_nodes_; }
  int64_t num_edges_hint() const override { return model_.num_edges(); }
  std::string name() const override { return "R-MAT generator"; }

 private:
  const SyntheticModel& model_;
  int64_t num_nodes_;
  int64_t next_ = 0;
};

SplitFractions SplitFractionsOf(const SyntheticGraphConfig& c) {
  return SplitFractions{c.train_fraction, c.valid_fraction, c.test_fraction};
}

Status CheckRange(const char* field, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi)) {
    return InvalidArgument(std::string(field) + " = " + std::to_string(value) +
                           " is out of range [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "]");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateSyntheticGraphConfig(const SyntheticGraphConfig& c) {
  if (c.num_nodes < 1) return InvalidArgument("nodes = " + std::to_string(c.num_nodes) + " must be >= 1");
  SEER_RETURN_IF_ERROR(CheckRange("avg-degree", c.avg_degree, 0, 1e6));
  if (c.num_nodes < 2 && c.avg_degree > 0) {
    return InvalidArgument("a graph with edges needs at least 2 nodes (self-loops are not generated)");
  }
  if (c.feature_dim < 0) return InvalidArgument("feature-dim must be >= 0");
  if (c.num_classes < 1) return InvalidArgument("classes = " + std::to_string(c.num_classes) + " must be >= 1");
  if (c.num_classes > (int64_t{1} << 31) - 1) return InvalidArgument("classes must fit in int32");
  SEER_RETURN_IF_ERROR(ValidateSplitFractions(SplitFractionsOf(c)));
  SEER_RETURN_IF_ERROR(CheckRange("homophily", c.homophily, 0, 1));
  SEER_RETURN_IF_ERROR(CheckRange("rmat a", c.rmat_a, 0, 1));
  SEER_RETURN_IF_ERROR(CheckRange("rmat b", c.rmat_b, 0, 1));
  SEER_RETURN_IF_ERROR(CheckRange("rmat c", c.rmat_c, 0, 1));
  SEER_RETURN_IF_ERROR(CheckRange("rmat a+b+c", c.rmat_a + c.rmat_b + c.rmat_c, 0, 1));
  SEER_RETURN_IF_ERROR(CheckRange("feature-signal", c.feature_signal, 0, 1e6));
  SEER_RETURN_IF_ERROR(CheckRange("feature-noise", c.feature_noise, 0, 1e6));
  if (c.block_nodes < 1) return InvalidArgument("block-nodes must be >= 1");
  if (!c.direct_csc && c.memory_budget_bytes < kReservedBytes + (c.num_nodes + 1) * 8 + (int64_t{1} << 20)) {
    return Status(StatusCode::kResourceExhausted,
                  "memory budget " + FormatBytes(c.memory_budget_bytes) + " is too small for " +
                      std::to_string(c.num_nodes) + " nodes: need at least " +
                      FormatBytes(kReservedBytes + (c.num_nodes + 1) * 8 + (int64_t{1} << 20)) +
                      " (or generate with direct_csc / --direct-csc, which has no per-node table)");
  }
  return Status::Ok();
}

Result<SyntheticGraphSummary> GenerateSyntheticDataset(const SyntheticGraphConfig& config,
                                                       const std::string& out_dir, bool force) {
  SEER_RETURN_IF_ERROR(ValidateSyntheticGraphConfig(config));
  SEER_RETURN_IF_ERROR(MakeDirectories(out_dir));
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir, force));
  const SyntheticModel model(config);
  const int64_t n = config.num_nodes;
  SyntheticGraphSummary summary;
  summary.num_nodes = n;

  // Topology through the external builder.
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* indptr, writer.OpenFile(dataset_files::kIndptr));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* indices, writer.OpenFile(dataset_files::kIndices));
  IndexDtype index_dtype = IndexDtypeFor(n);
  if (config.direct_csc) {
    if (index_dtype == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(WriteDirectTopology<uint32_t>(model, config, *indptr, *indices, &summary));
    } else {
      SEER_RETURN_IF_ERROR(WriteDirectTopology<int64_t>(model, config, *indptr, *indices, &summary));
    }
  } else {
    SyntheticEdgeSource source(model, n);
    CscBuildOptions build;
    build.num_nodes = n;
    build.memory_budget_bytes = config.memory_budget_bytes - kReservedBytes;
    build.spill_dir = out_dir;
    build.show_progress = config.show_progress;
    SEER_ASSIGN_OR_RETURN(CscBuildStats stats, BuildCsc(source, build, *indptr, *indices));
    summary.num_edges = stats.num_edges;
    summary.num_partitions = stats.num_partitions;
    index_dtype = stats.index_dtype;
  }

  // Node data, streamed in chunks of kNodeChunk nodes.
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* features, writer.OpenFile(dataset_files::kFeatures));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* labels, writer.OpenFile(dataset_files::kLabels));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* train, writer.OpenFile(dataset_files::kTrain));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* valid, writer.OpenFile(dataset_files::kValid));
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* test, writer.OpenFile(dataset_files::kTest));
  const int64_t f = config.feature_dim;
  const int64_t c = config.num_classes;
  std::vector<float> centroids(static_cast<size_t>(c * f));
  for (int64_t k = 0; k < c; ++k) {
    SplitMix64 rng(SplitMixFinalize(config.seed ^ kCentroidSalt) ^ SplitMixFinalize(static_cast<uint64_t>(k)));
    double scale = f > 0 ? config.feature_signal / std::sqrt(static_cast<double>(f)) : 0;
    for (int64_t j = 0; j < f; ++j) centroids[k * f + j] = static_cast<float>(scale * rng.Gaussian());
  }
  // Rows are drawn as float32, then stored as the dtype (rounded or row-wise quantized).
  const bool convert = config.feature_dtype != FeatureDtype::kFloat32;
  const int64_t row_bytes = FeatureRowBytes(config.feature_dtype, f);
  std::vector<float> rows32(static_cast<size_t>(kNodeChunk * f));
  std::vector<char> stored(convert ? static_cast<size_t>(kNodeChunk * row_bytes) : 0);
  std::vector<int32_t> chunk_labels(kNodeChunk);
  std::vector<NodeSplit> chunk_split(kNodeChunk);
  std::vector<int64_t> split_ids[4];
  const SplitFractions fractions = SplitFractionsOf(config);
  ProgressReporter progress("gen: node data", n, "nodes", config.show_progress);
  for (int64_t first = 0; first < n; first += kNodeChunk) {
    const int64_t count = std::min(kNodeChunk, n - first);
    ParallelFor(tbb::blocked_range<int64_t>(0, count, 256), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) {
        const int64_t y = first + i;
        const int64_t cls = model.ClassOf(model.permutation().Inverse(y));
        chunk_labels[i] = static_cast<int32_t>(cls);
        chunk_split[i] = DrawNodeSplit(fractions, config.seed, y);
        SplitMix64 rng(SplitMixFinalize(config.seed ^ kNoiseSalt) ^ SplitMixFinalize(static_cast<uint64_t>(y)));
        const float* centroid = centroids.data() + cls * f;
        float* row = rows32.data() + i * f;
        for (int64_t j = 0; j < f; ++j) row[j] = centroid[j] + static_cast<float>(config.feature_noise * rng.Gaussian());
        if (convert) EncodeFeatureRows(row, config.feature_dtype, f, 1, stored.data() + i * row_bytes);
      }
    });
    if (convert) SEER_RETURN_IF_ERROR(features->Append(stored.data(), count * row_bytes));
    else SEER_RETURN_IF_ERROR(features->AppendValues(rows32.data(), count * f));
    SEER_RETURN_IF_ERROR(labels->AppendValues(chunk_labels.data(), count));
    for (auto& ids : split_ids) ids.clear();
    for (int64_t i = 0; i < count; ++i) split_ids[static_cast<int>(chunk_split[i])].push_back(first + i);
    SEER_RETURN_IF_ERROR(train->AppendValues(split_ids[1].data(), static_cast<int64_t>(split_ids[1].size())));
    SEER_RETURN_IF_ERROR(valid->AppendValues(split_ids[2].data(), static_cast<int64_t>(split_ids[2].size())));
    SEER_RETURN_IF_ERROR(test->AppendValues(split_ids[3].data(), static_cast<int64_t>(split_ids[3].size())));
    summary.num_train += static_cast<int64_t>(split_ids[1].size());
    summary.num_valid += static_cast<int64_t>(split_ids[2].size());
    summary.num_test += static_cast<int64_t>(split_ids[3].size());
    progress.Add(count);
  }
  progress.Finish();

  DatasetManifest manifest;
  manifest.num_nodes = n;
  manifest.num_edges = summary.num_edges;
  manifest.index_dtype = index_dtype;
  manifest.feature_dim = f;
  manifest.feature_dtype = config.feature_dtype;
  manifest.num_classes = c;
  manifest.created_by = config.created_by;
  SEER_RETURN_IF_ERROR(writer.Commit(manifest));
  SEER_ASSIGN_OR_RETURN(Dataset written, Dataset::Open(out_dir));
  for (const auto& [name, entry] : written.manifest().files) summary.bytes_written += entry.bytes;
  return summary;
}

Status WriteSyntheticEdgeList(const SyntheticGraphConfig& config, const std::string& path) {
  SEER_RETURN_IF_ERROR(ValidateSyntheticGraphConfig(config));
  const SyntheticModel model(config);
  SyntheticEdgeSource source(model, config.num_nodes);
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter out, AtomicFileWriter::Create(path));
  const bool text = path.size() > 4 && (path.compare(path.size() - 4, 4, ".txt") == 0 ||
                                        path.compare(path.size() - 4, 4, ".csv") == 0);
  std::vector<Edge> chunk(65536);
  std::string lines;
  ProgressReporter progress("gen: edge list", model.num_edges(), "edges", config.show_progress);
  for (;;) {
    SEER_ASSIGN_OR_RETURN(int64_t n, source.Read(chunk.data(), static_cast<int64_t>(chunk.size())));
    if (n == 0) break;
    if (text) {
      lines.clear();
      for (int64_t i = 0; i < n; ++i) {
        lines += std::to_string(chunk[i].src);
        lines += ' ';
        lines += std::to_string(chunk[i].dst);
        lines += '\n';
      }
      SEER_RETURN_IF_ERROR(out.Append(lines.data(), static_cast<int64_t>(lines.size())));
    } else {
      static_assert(sizeof(Edge) == 16, "Edge is two int64");
      SEER_RETURN_IF_ERROR(out.Append(chunk.data(), n * 16));
    }
    progress.Add(n);
  }
  progress.Finish();
  return out.Close();
}

}  // namespace seer
