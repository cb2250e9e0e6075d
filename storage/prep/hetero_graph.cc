#include "storage/prep/hetero_graph.h"

#include <tbb/blocked_range.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/parallel.h"
#include "storage/base/progress.h"
#include "storage/base/random.h"
#include "storage/prep/node_split.h"

namespace seer {
namespace {

// Salts keep the independent streams apart (and apart from `seer gen`'s).
constexpr uint64_t kBagCountSalt = 0x243f6a8885a308d3ull;
constexpr uint64_t kBagEdgeSalt = 0x13198a2e03707344ull;
constexpr uint64_t kRotationSalt = 0xa4093822299f31d0ull;
constexpr uint64_t kMaskSalt = 0x082efa98ec4e6c89ull;
constexpr uint64_t kCentroidSalt = 0x452821e638d01377ull;
constexpr uint64_t kNoiseSalt = 0xbe5466cf34e90c6cull;
constexpr int64_t kNodeChunk = 8192;
constexpr int kHomophilyAttempts = 16;

enum NodeTypeId { kPaper = 0, kAuthor = 1, kInstitute = 2, kFos = 3, kNumTypes = 4 };
constexpr const char* kTypeNames[kNumTypes] = {"paper", "author", "institute", "fos"};

struct ForwardRelation {
  NodeTypeId src, dst;
  const char* name;
  const char* reverse_name;
};
constexpr ForwardRelation kForward[] = {
    {kPaper, kPaper, "cites", "cited_by"},
    {kPaper, kAuthor, "written_by", "writes"},
    {kAuthor, kInstitute, "affiliated_with", "has_member"},
    {kPaper, kFos, "topic", "topic_of"},
};
constexpr int kNumForward = 4;

int CeilLog2(uint64_t n) {
  int bits = 0;
  while ((uint64_t{1} << bits) < n) ++bits;
  return bits;
}

// Poisson(lambda): Knuth's product method below 30, a rounded normal above (as `seer gen`).
int64_t Poisson(double lambda, SplitMix64& rng) {
  if (!(lambda > 0)) return 0;
  if (lambda >= 30) return std::max<int64_t>(0, std::llround(lambda + std::sqrt(lambda) * rng.Gaussian()));
  const double limit = std::exp(-lambda);
  int64_t k = 0;
  for (double p = rng.Uniform(); p > limit; p *= rng.Uniform()) ++k;
  return k;
}

// The node counts, communities and block geometry: pure functions of the config.
class HeteroModel {
 public:
  explicit HeteroModel(const HeteroGraphConfig& c) : config_(c), classes_(c.num_classes) {
    counts_[kPaper] = c.num_papers;
    counts_[kAuthor] = c.num_authors >= 0 ? c.num_authors : c.num_papers;
    counts_[kInstitute] = c.num_institutes >= 0 ? c.num_institutes : std::max<int64_t>(1, c.num_papers / 1000);
    counts_[kFos] = c.num_fos >= 0 ? c.num_fos : std::max<int64_t>(1, c.num_papers / 100);
    const double per_src[kNumForward] = {c.cites_per_paper, c.authors_per_paper, c.institutes_per_author,
                                         c.topics_per_paper};
    skew_threshold_ = static_cast<uint32_t>(std::lround(c.skew * 65536));
    for (int f = 0; f < kNumForward; ++f) {
      Relation& r = relations_[f];
      r.spec = kForward[f];
      r.expected_edges = per_src[f] * static_cast<double>(counts_[r.spec.src]);
      r.src_block = BlockNodes(counts_[r.spec.src], r.expected_edges);
      r.dst_block = BlockNodes(counts_[r.spec.dst], r.expected_edges);
      r.num_src_blocks = (counts_[r.spec.src] + r.src_block - 1) / r.src_block;
      r.num_dst_blocks = (counts_[r.spec.dst] + r.dst_block - 1) / r.dst_block;
      r.key = SplitMixFinalize(c.seed ^ SplitMixFinalize(static_cast<uint64_t>(f) + 1));
    }
  }

  struct Relation {
    ForwardRelation spec{};
    double expected_edges = 0;
    int64_t src_block = 1, dst_block = 1;  // nodes per block, multiples of C
    int64_t num_src_blocks = 1, num_dst_blocks = 1;
    uint64_t key = 0;
  };

  int64_t count(int type) const { return counts_[type]; }
  const Relation& relation(int f) const { return relations_[f]; }

  // Community of node v of `type`: groups of C consecutive ids hold every community once.
  int64_t Community(int type, int64_t v) const {
    if (classes_ == 1) return 0;
    return (v % classes_ + Rotation(type, v / classes_)) % classes_;
  }

  // Expected edges of the bag (src block a, dst block b) of relation f, and its two
  // streams (count, edges).
  double BagMean(const Relation& r, int64_t a, int64_t b) const {
    // A bag of one node on both sides could only hold a self loop.
    if (r.spec.src == r.spec.dst && a == b && BlockSize(r.src_block, counts_[r.spec.src], a) == 1) return 0;
    const double src_share = static_cast<double>(BlockSize(r.src_block, counts_[r.spec.src], a)) /
                             static_cast<double>(counts_[r.spec.src]);
    const double dst_share = static_cast<double>(BlockSize(r.dst_block, counts_[r.spec.dst], b)) /
                             static_cast<double>(counts_[r.spec.dst]);
    return r.expected_edges * src_share * dst_share;
  }
  static uint64_t BagKey(const Relation& r, int64_t a, int64_t b) {
    return SplitMixFinalize(SplitMixFinalize(r.key ^ static_cast<uint64_t>(a)) + static_cast<uint64_t>(b));
  }
  int64_t BagCount(const Relation& r, int64_t a, int64_t b) const {
    SplitMix64 rng(BagKey(r, a, b) ^ kBagCountSalt);
    return Poisson(BagMean(r, a, b), rng);
  }

  // The edges of bag (a, b), in draw order: emit(src, dst) with global (per-type) ids.
  template <typename Emit>
  void DrawBag(const Relation& r, int64_t a, int64_t b, int64_t count, Emit&& emit) const {
    SplitMix64 rng(BagKey(r, a, b) ^ kBagEdgeSalt);
    const int src = r.spec.src, dst = r.spec.dst;
    const int64_t src_first = a * r.src_block, dst_first = b * r.dst_block;
    const int64_t src_size = BlockSize(r.src_block, counts_[src], a);
    const int64_t dst_size = BlockSize(r.dst_block, counts_[dst], b);
    const uint64_t src_mask = BlockMask(src, a), dst_mask = BlockMask(dst, b);
    for (int64_t k = 0; k < count; ++k) {
      for (int attempt = 0;; ++attempt) {
        const int64_t d = dst_first + Offset(dst_size, dst_mask, rng);
        int64_t s = src_first + Offset(src_size, src_mask, rng);
        if (classes_ > 1 && attempt < kHomophilyAttempts) {
          // Within s's group of C ids (inside block a: blocks are multiples of C).
          const int64_t dst_community = Community(dst, d);
          const int64_t target = rng.Uniform() < config_.homophily
                                     ? dst_community
                                     : (dst_community + 1 + static_cast<int64_t>(rng.Below(classes_ - 1))) % classes_;
          const int64_t group = s / classes_;
          s = group * classes_ + ((target - Rotation(src, group)) % classes_ + classes_) % classes_;
          if (s >= src_first + src_size) continue;  // past the last node: draw again
        }
        if (src == dst && s == d) continue;  // no self loops
        emit(s, d);
        break;
      }
    }
  }

  // Nodes in block `index` of `block` nodes over `n` nodes.
  static int64_t BlockSize(int64_t block, int64_t n, int64_t index) {
    return std::min(block, n - index * block);
  }

 private:
  // Nodes per block: about block_edges edges, at most block_nodes nodes, a multiple of C.
  int64_t BlockNodes(int64_t n, double edges) const {
    double nodes = static_cast<double>(config_.block_nodes);
    if (edges > 0) nodes = std::min(nodes, static_cast<double>(config_.block_edges) * static_cast<double>(n) / edges);
    int64_t block = std::min<int64_t>(n, static_cast<int64_t>(nodes));
    block = std::max<int64_t>(classes_, block / classes_ * classes_);
    return block;
  }
  int64_t Rotation(int type, int64_t group) const {
    return static_cast<int64_t>(SplitMixFinalize(config_.seed ^ kRotationSalt ^
                                                 SplitMixFinalize(static_cast<uint64_t>(type) * 0x9e37ull) ^
                                                 SplitMixFinalize(static_cast<uint64_t>(group) + 1)) %
                                static_cast<uint64_t>(classes_));
  }
  uint64_t BlockMask(int type, int64_t block) const {
    return SplitMixFinalize(config_.seed ^ kMaskSalt ^ SplitMixFinalize(static_cast<uint64_t>(type) << 48) ^
                            SplitMixFinalize(static_cast<uint64_t>(block)));
  }
  // An offset in [0, size): R-MAT style bits (0 with probability skew), XOR the block's
  // mask, redrawn when past the block's end.
  int64_t Offset(int64_t size, uint64_t mask, SplitMix64& rng) const {
    const int bits = CeilLog2(static_cast<uint64_t>(size));
    const uint64_t low = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (;;) {
      uint64_t u = 0, word = 0;
      int left = 0;
      for (int level = 0; level < bits; ++level) {
        if (left == 0) {
          word = rng.Next();
          left = 4;
        }
        u = (u << 1) | static_cast<uint64_t>((word & 0xffff) >= skew_threshold_);
        word >>= 16;
        --left;
      }
      u = (u ^ mask) & low;
      if (static_cast<int64_t>(u) < size) return static_cast<int64_t>(u);
    }
  }

  const HeteroGraphConfig& config_;
  int64_t classes_;
  int64_t counts_[kNumTypes] = {};
  uint32_t skew_threshold_ = 32768;
  Relation relations_[kNumForward];
};

// One relation's CSC, written block by block of its destination type: forward (the
// relation as drawn) or reverse (its transpose: the draws grouped by their source).
class RelationWriter {
 public:
  RelationWriter(const HeteroModel& model, int f, bool reverse, bool show_progress)
      : model_(model), r_(model.relation(f)), reverse_(reverse), show_progress_(show_progress) {}

  template <typename Index>
  Status Write(AtomicFileWriter& indptr, AtomicFileWriter& indices, int64_t* num_edges, int64_t* max_block_edges) {
    // Grouped by `key` type (the CSC's destination), values of the `other` type.
    const int key_type = reverse_ ? r_.spec.src : r_.spec.dst;
    const int64_t key_block = reverse_ ? r_.src_block : r_.dst_block;
    const int64_t key_blocks = reverse_ ? r_.num_src_blocks : r_.num_dst_blocks;
    const int64_t other_blocks = reverse_ ? r_.num_dst_blocks : r_.num_src_blocks;
    const int64_t n_key = model_.count(key_type);
    std::vector<int64_t> bag_offsets(static_cast<size_t>(other_blocks) + 1);
    std::vector<uint32_t> keys;  // local to the block (< block_nodes)
    std::vector<int64_t> values;
    std::vector<Index> lists;
    std::vector<int64_t> starts;
    std::vector<int64_t> ends;
    int64_t written = 0;
    const int64_t zero = 0;
    SEER_RETURN_IF_ERROR(indptr.AppendValues(&zero, 1));
    const std::string label = std::string("gen: ") + (reverse_ ? "reverse of " : "") + kTypeNames[r_.spec.src] +
                              "__" + r_.spec.name + "__" + kTypeNames[r_.spec.dst];
    ProgressReporter progress(label, n_key, "nodes", show_progress_);
    for (int64_t kb = 0; kb < key_blocks; ++kb) {
      const int64_t key_first = kb * key_block;
      const int64_t key_size = HeteroModel::BlockSize(key_block, n_key, kb);
      auto bag = [&](int64_t ob) { return reverse_ ? std::pair(kb, ob) : std::pair(ob, kb); };  // (a, b)
      // Every bag into this block: its size, then its edges at fixed offsets (deterministic).
      ParallelFor(tbb::blocked_range<int64_t>(0, other_blocks, 16), [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t ob = range.begin(); ob < range.end(); ++ob) {
          const auto [a, b] = bag(ob);
          bag_offsets[static_cast<size_t>(ob) + 1] = model_.BagCount(r_, a, b);
        }
      });
      bag_offsets[0] = 0;
      for (int64_t ob = 0; ob < other_blocks; ++ob) bag_offsets[ob + 1] += bag_offsets[ob];
      const int64_t total = bag_offsets[static_cast<size_t>(other_blocks)];
      *max_block_edges = std::max(*max_block_edges, total);
      keys.resize(static_cast<size_t>(total));
      values.resize(static_cast<size_t>(total));
      ParallelFor(tbb::blocked_range<int64_t>(0, other_blocks, 1), [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t ob = range.begin(); ob < range.end(); ++ob) {
          const auto [a, b] = bag(ob);
          int64_t at = bag_offsets[static_cast<size_t>(ob)];
          model_.DrawBag(r_, a, b, bag_offsets[ob + 1] - at, [&](int64_t s, int64_t d) {
            keys[static_cast<size_t>(at)] = static_cast<uint32_t>((reverse_ ? s : d) - key_first);
            values[static_cast<size_t>(at)] = reverse_ ? d : s;
            ++at;
          });
        }
      });
      // Group by key (counting sort), sort each list, drop repeated edges.
      starts.assign(static_cast<size_t>(key_size) + 1, 0);
      for (int64_t i = 0; i < total; ++i) ++starts[keys[static_cast<size_t>(i)] + 1];
      for (int64_t k = 0; k < key_size; ++k) starts[k + 1] += starts[k];
      lists.resize(static_cast<size_t>(total));
      ends.assign(starts.begin(), starts.end() - 1);
      for (int64_t i = 0; i < total; ++i) {
        lists[static_cast<size_t>(ends[keys[static_cast<size_t>(i)]]++)] =
            static_cast<Index>(values[static_cast<size_t>(i)]);
      }
      ParallelFor(tbb::blocked_range<int64_t>(0, key_size, 64), [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t k = range.begin(); k < range.end(); ++k) {
          Index* first = lists.data() + starts[k];
          Index* last = lists.data() + starts[k + 1];
          std::sort(first, last);
          ends[k] = starts[k] + (std::unique(first, last) - first);
        }
      });
      // Compact the lists in key order and write them with their indptr.
      std::vector<int64_t>& indptr_values = starts;  // reused: starts[k] is read before it is overwritten
      int64_t kept = 0;
      for (int64_t k = 0; k < key_size; ++k) {
        const int64_t begin = starts[k], length = ends[k] - begin;
        std::copy(lists.data() + begin, lists.data() + begin + length, lists.data() + kept);
        kept += length;
        indptr_values[k] = written + kept;
      }
      SEER_RETURN_IF_ERROR(indptr.AppendValues(indptr_values.data(), key_size));
      SEER_RETURN_IF_ERROR(indices.AppendValues(lists.data(), kept));
      written += kept;
      progress.Add(key_size);
    }
    progress.Finish();
    *num_edges = written;
    return Status::Ok();
  }

 private:
  const HeteroModel& model_;
  const HeteroModel::Relation& r_;
  bool reverse_;
  bool show_progress_;
};

Status CheckRange(const char* field, double value, double lo, double hi) {
  if (!(value >= lo && value <= hi)) {
    return InvalidArgument(std::string(field) + " = " + std::to_string(value) + " is out of range [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return Status::Ok();
}

SplitFractions PaperSplitFractions(const HeteroGraphConfig& c) {
  return SplitFractions{c.train_fraction, c.valid_fraction, c.test_fraction};
}

// Features (and, for papers, labels and splits) of one node type, kNodeChunk nodes at a time.
Status WriteNodeData(const HeteroModel& model, const HeteroGraphConfig& config, int type, DatasetWriter& writer,
                     DatasetNodeType* out, HeteroGraphSummary* summary) {
  const int64_t n = model.count(type);
  const int64_t f = out->feature_dim;
  const int64_t c = config.num_classes;
  const bool papers = type == kPaper;
  AtomicFileWriter* features = nullptr;
  AtomicFileWriter* labels = nullptr;
  AtomicFileWriter* splits[4] = {nullptr, nullptr, nullptr, nullptr};  // by NodeSplit
  if (f > 0) {
    out->features = NodeTypeFileName(out->name, "features");
    SEER_ASSIGN_OR_RETURN(features, writer.OpenFile(out->features));
  }
  if (papers) {
    out->labels = NodeTypeFileName(out->name, "labels");
    out->num_classes = c;
    SEER_ASSIGN_OR_RETURN(labels, writer.OpenFile(out->labels));
    out->train = NodeTypeFileName(out->name, "train");
    out->valid = NodeTypeFileName(out->name, "valid");
    out->test = NodeTypeFileName(out->name, "test");
    SEER_ASSIGN_OR_RETURN(splits[1], writer.OpenFile(out->train));
    SEER_ASSIGN_OR_RETURN(splits[2], writer.OpenFile(out->valid));
    SEER_ASSIGN_OR_RETURN(splits[3], writer.OpenFile(out->test));
  }
  if (features == nullptr && labels == nullptr) return Status::Ok();
  std::vector<float> centroids(static_cast<size_t>(c * f));
  for (int64_t k = 0; k < c; ++k) {
    SplitMix64 rng(SplitMixFinalize(config.seed ^ kCentroidSalt ^ (static_cast<uint64_t>(type) << 40)) ^
                   SplitMixFinalize(static_cast<uint64_t>(k)));
    const double scale = f > 0 ? config.feature_signal / std::sqrt(static_cast<double>(f)) : 0;
    for (int64_t j = 0; j < f; ++j) centroids[k * f + j] = static_cast<float>(scale * rng.Gaussian());
  }
  const uint64_t noise_key = SplitMixFinalize(config.seed ^ kNoiseSalt ^ (static_cast<uint64_t>(type) << 40));
  const int64_t row_bytes = FeatureRowBytes(out->feature_dtype, f);
  std::vector<float> rows32(static_cast<size_t>(kNodeChunk * f));
  std::vector<char> stored(static_cast<size_t>(kNodeChunk * row_bytes));
  std::vector<int32_t> chunk_labels(kNodeChunk);
  std::vector<NodeSplit> chunk_split(kNodeChunk);
  std::vector<int64_t> split_ids[4];
  const SplitFractions fractions = PaperSplitFractions(config);
  ProgressReporter progress(std::string("gen: ") + kTypeNames[type] + " data", n, "nodes", config.show_progress);
  for (int64_t first = 0; first < n; first += kNodeChunk) {
    const int64_t count = std::min(kNodeChunk, n - first);
    ParallelFor(tbb::blocked_range<int64_t>(0, count, 256), [&](const tbb::blocked_range<int64_t>& r) {
      for (int64_t i = r.begin(); i < r.end(); ++i) {
        const int64_t v = first + i;
        const int64_t community = model.Community(type, v);
        if (papers) {
          chunk_labels[i] = static_cast<int32_t>(community);
          chunk_split[i] = DrawNodeSplit(fractions, config.seed, v);
        }
        if (f == 0) continue;
        SplitMix64 rng(noise_key ^ SplitMixFinalize(static_cast<uint64_t>(v)));
        const float* centroid = centroids.data() + community * f;
        float* row = rows32.data() + i * f;
        for (int64_t j = 0; j < f; ++j) row[j] = centroid[j] + static_cast<float>(config.feature_noise * rng.Gaussian());
        EncodeFeatureRows(row, out->feature_dtype, f, 1, stored.data() + i * row_bytes);
      }
    });
    if (features != nullptr) SEER_RETURN_IF_ERROR(features->Append(stored.data(), count * row_bytes));
    if (papers) {
      SEER_RETURN_IF_ERROR(labels->AppendValues(chunk_labels.data(), count));
      for (auto& ids : split_ids) ids.clear();
      for (int64_t i = 0; i < count; ++i) split_ids[static_cast<int>(chunk_split[i])].push_back(first + i);
      for (int s = 1; s <= 3; ++s) {
        SEER_RETURN_IF_ERROR(
            splits[s]->AppendValues(split_ids[s].data(), static_cast<int64_t>(split_ids[s].size())));
      }
      summary->num_train += static_cast<int64_t>(split_ids[1].size());
      summary->num_valid += static_cast<int64_t>(split_ids[2].size());
      summary->num_test += static_cast<int64_t>(split_ids[3].size());
    }
    progress.Add(count);
  }
  progress.Finish();
  return Status::Ok();
}

}  // namespace

Status ValidateHeteroGraphConfig(const HeteroGraphConfig& c) {
  if (c.num_papers < 1) return InvalidArgument("papers = " + std::to_string(c.num_papers) + " must be >= 1");
  for (const auto& [field, value] : {std::pair<const char*, int64_t>{"authors", c.num_authors},
                                     {"institutes", c.num_institutes},
                                     {"fos", c.num_fos}}) {
    if (value != -1 && value < 1) {
      return InvalidArgument(std::string(field) + " = " + std::to_string(value) + " must be >= 1 (or -1: by ratio)");
    }
  }
  for (const int64_t count : {c.num_papers, c.num_authors, c.num_institutes, c.num_fos}) {
    if (count > (int64_t{1} << 38)) return InvalidArgument("a node type's count must be at most 2^38");
  }
  SEER_RETURN_IF_ERROR(CheckRange("cites-per-paper", c.cites_per_paper, 0, 1e6));
  SEER_RETURN_IF_ERROR(CheckRange("authors-per-paper", c.authors_per_paper, 0, 1e6));
  SEER_RETURN_IF_ERROR(CheckRange("institutes-per-author", c.institutes_per_author, 0, 1e6));
  SEER_RETURN_IF_ERROR(CheckRange("topics-per-paper", c.topics_per_paper, 0, 1e6));
  if (c.num_papers < 2 && c.cites_per_paper > 0) {
    return InvalidArgument("citations need at least 2 papers (self-loops are not generated); use --cites-per-paper 0");
  }
  if (c.feature_dim < 0 || c.feature_dim > (int64_t{1} << 20)) return InvalidArgument("feature-dim must be in [0, 2^20]");
  if (c.num_classes < 1 || c.num_classes > (int64_t{1} << 20)) {
    return InvalidArgument("classes = " + std::to_string(c.num_classes) + " must be in [1, 2^20]");
  }
  for (const std::string& name : c.featureless) {
    if (std::find(std::begin(kTypeNames), std::end(kTypeNames), name) == std::end(kTypeNames)) {
      return InvalidArgument("featureless names '" + name + "', not a node type (paper, author, institute, fos)");
    }
  }
  SEER_RETURN_IF_ERROR(ValidateSplitFractions(PaperSplitFractions(c)));
  SEER_RETURN_IF_ERROR(CheckRange("homophily", c.homophily, 0, 1));
  if (!(c.skew > 0 && c.skew < 1)) return InvalidArgument("skew = " + std::to_string(c.skew) + " must be in (0, 1)");
  SEER_RETURN_IF_ERROR(CheckRange("feature-signal", c.feature_signal, 0, 1e6));
  SEER_RETURN_IF_ERROR(CheckRange("feature-noise", c.feature_noise, 0, 1e6));
  if (c.block_edges < 1024) return InvalidArgument("block-edges must be >= 1024");
  if (c.block_nodes < 1024 || c.block_nodes > (int64_t{1} << 30)) {
    return InvalidArgument("block-nodes must be in [1024, 2^30]");
  }
  return Status::Ok();
}

Result<HeteroGraphSummary> GenerateHeteroDataset(const HeteroGraphConfig& config, const std::string& out_dir,
                                                 bool force) {
  SEER_RETURN_IF_ERROR(ValidateHeteroGraphConfig(config));
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir, force));
  const HeteroModel model(config);
  HeteroGraphSummary summary;
  DatasetManifest manifest;
  manifest.created_by = config.created_by;
  for (int type = 0; type < kNumTypes; ++type) {
    DatasetNodeType t;
    t.name = kTypeNames[type];
    t.count = model.count(type);
    const bool featureless =
        std::find(config.featureless.begin(), config.featureless.end(), t.name) != config.featureless.end();
    t.feature_dim = featureless ? 0 : config.feature_dim;
    t.feature_dtype = config.feature_dtype;
    SEER_RETURN_IF_ERROR(WriteNodeData(model, config, type, writer, &t, &summary));
    manifest.num_nodes += t.count;
    manifest.node_types.push_back(std::move(t));
  }
  for (int f = 0; f < kNumForward; ++f) {
    const ForwardRelation& spec = kForward[f];
    for (const bool reverse : {false, true}) {
      if (reverse && !config.reverse) continue;
      DatasetRelation r;
      r.src = kTypeNames[reverse ? spec.dst : spec.src];
      r.dst = kTypeNames[reverse ? spec.src : spec.dst];
      r.name = reverse ? spec.reverse_name : spec.name;
      r.index_dtype = IndexDtypeFor(model.count(reverse ? spec.dst : spec.src));
      r.indptr = RelationFileName(r, "indptr");
      r.indices = RelationFileName(r, "indices");
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indptr, writer.OpenFile(r.indptr));
      SEER_ASSIGN_OR_RETURN(AtomicFileWriter * indices, writer.OpenFile(r.indices));
      RelationWriter relation_writer(model, f, reverse, config.show_progress);
      if (r.index_dtype == IndexDtype::kUint32) {
        SEER_RETURN_IF_ERROR(
            relation_writer.Write<uint32_t>(*indptr, *indices, &r.num_edges, &summary.max_block_edges));
      } else {
        SEER_RETURN_IF_ERROR(
            relation_writer.Write<int64_t>(*indptr, *indices, &r.num_edges, &summary.max_block_edges));
      }
      manifest.num_edges += r.num_edges;
      manifest.relations.push_back(std::move(r));
    }
  }
  manifest.index_dtype = IndexDtypeFor(manifest.num_nodes);
  SEER_RETURN_IF_ERROR(writer.Commit(manifest));
  SEER_ASSIGN_OR_RETURN(Dataset written, Dataset::OpenAnyKind(out_dir));
  for (const auto& [name, entry] : written.manifest().files) summary.bytes_written += entry.bytes;
  summary.num_nodes = written.manifest().num_nodes;
  summary.num_edges = written.manifest().num_edges;
  summary.manifest = written.manifest();
  return summary;
}

}  // namespace seer
