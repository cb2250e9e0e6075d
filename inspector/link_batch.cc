#include "inspector/link_batch.h"

#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "storage/base/file_io.h"
#include "storage/base/random.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

// Seed tweaks that keep the link generators' streams apart from the sampler's
// (SamplerRng::ForNode uses (seed, epoch, node << 8 | hop)) and from each other.
constexpr uint64_t kPairNegativesTweak = 0x6e65672d70616972ULL;    // "neg-pair"
constexpr uint64_t kSharedNegativesTweak = 0x6e65672d62617463ULL;  // "neg-batc"
constexpr uint64_t kEvalNegativesTweak = 0x6e65672d6576616cULL;    // "neg-eval"
constexpr uint64_t kPermutationTweak = 0x7065726d2d656467ULL;      // "perm-edg"

// The node v with indptr[v] <= e < indptr[v + 1] (e < indptr.back()).
int64_t DestinationOfEdge(const CompactIndptr& indptr, int64_t e) {
  int64_t lo = 0, hi = indptr.num_nodes() - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (indptr[mid] <= e) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Distinct seeds in first-appearance order; Position() returns a node's seed position.
class SeedIndex {
 public:
  explicit SeedIndex(LinkBatch* out, size_t expected) : out_(out) {
    out_->seeds.clear();
    out_->seeds.reserve(expected);
    position_.reserve(expected);
  }
  int32_t Position(int64_t node) {
    auto [it, inserted] = position_.emplace(node, static_cast<int32_t>(out_->seeds.size()));
    if (inserted) out_->seeds.push_back(node);
    return it->second;
  }

 private:
  LinkBatch* out_;
  std::unordered_map<int64_t, int32_t> position_;
};

// Reads int64 rows of `width` words for the given row numbers, coalescing runs of
// consecutive rows into one pread.
Status ReadRows(int fd, const std::string& path, int64_t width, const int64_t* rows, int64_t count,
                std::vector<int64_t>* out) {
  out->resize(static_cast<size_t>(count * width));
  int64_t i = 0;
  while (i < count) {
    int64_t j = i + 1;
    while (j < count && rows[j] == rows[j - 1] + 1) ++j;
    SEER_RETURN_IF_ERROR(PreadFull(fd, out->data() + i * width, 8 * width * (j - i), 8 * width * rows[i], path));
    i = j;
  }
  return Status::Ok();
}

}  // namespace

Result<NegativeDistribution> ParseNegativeDistribution(const std::string& text) {
  return ParseName(kNegativeDistributionNames, text, "negative distribution");
}
const char* NegativeDistributionName(NegativeDistribution d) { return NameOf(kNegativeDistributionNames, d); }

// ---- EdgePermutation --------------------------------------------------------------------

EdgePermutation::EdgePermutation(uint64_t n, uint64_t seed, int64_t epoch) : n_(n) {
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  SplitMix64 keys(SplitMixHash(seed ^ kPermutationTweak) ^ static_cast<uint64_t>(epoch));
  for (uint64_t& k : keys_) k = keys.Next();
}

uint64_t EdgePermutation::Round(uint64_t value) const {
  uint64_t left = value >> half_bits_, right = value & half_mask_;
  for (uint64_t key : keys_) {
    const uint64_t next = left ^ (SplitMixHash(right ^ key) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t EdgePermutation::operator()(uint64_t i) const {
  uint64_t v = Round(i);
  while (v >= n_) v = Round(v);  // cycle-walking stays a bijection on [0, n)
  return v;
}

// ---- LinkBatcher ------------------------------------------------------------------------

struct LinkBatcher::Impl {
  LinkSeedOptions options;
  uint64_t seed = 0;
  int64_t num_nodes = 0;
  int64_t num_pairs = 0;
  // Training: the topology's edges.
  bool from_topology = false;
  TopologyView topology;
  // Evaluation: the pair file and its negatives.
  std::string pairs_path, negatives_path;
  UniqueFd pairs_fd, negatives_fd;

  Status Positives(int64_t epoch, const int64_t* positions, int64_t count, std::vector<int64_t>* src,
                   std::vector<int64_t>* dst, std::vector<int64_t>* fixed_negatives) const;
  Status TopologyPositives(int64_t epoch, const int64_t* positions, int64_t count, std::vector<int64_t>* src,
                           std::vector<int64_t>* dst) const;
  int64_t DrawNegative(SamplerRng& rng) const {
    if (options.distribution == NegativeDistribution::kDegree) {
      const CompactIndptr& indptr = *topology.indptr;
      return DestinationOfEdge(indptr, static_cast<int64_t>(rng.Below(static_cast<uint64_t>(indptr.back()))));
    }
    return static_cast<int64_t>(rng.Below(static_cast<uint64_t>(num_nodes)));
  }
};

Status LinkBatcher::Impl::TopologyPositives(int64_t epoch, const int64_t* positions, int64_t count,
                                            std::vector<int64_t>* src, std::vector<int64_t>* dst) const {
  const CompactIndptr& indptr = *topology.indptr;
  const EdgePermutation order(static_cast<uint64_t>(num_pairs), seed, epoch);
  const int64_t index_bytes = IndexDtypeBytes(topology.index_dtype);
  std::vector<unsigned char> raw(static_cast<size_t>(count * index_bytes));
  std::vector<ReadRequest> requests(static_cast<size_t>(count));
  std::vector<int64_t> edges(static_cast<size_t>(count));
  dst->resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t e = static_cast<int64_t>(order(static_cast<uint64_t>(positions[i])));
    edges[static_cast<size_t>(i)] = e;
    (*dst)[static_cast<size_t>(i)] = DestinationOfEdge(indptr, e);
    requests[static_cast<size_t>(i)] = ReadRequest{e * index_bytes, index_bytes, raw.data() + i * index_bytes};
  }
  SEER_RETURN_IF_ERROR(topology.indices->ReadBatch(requests));
  src->resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (index_bytes == 4) {
      uint32_t u;
      std::memcpy(&u, raw.data() + 4 * i, 4);
      v = u;
    } else {
      std::memcpy(&v, raw.data() + 8 * i, 8);
    }
    if (v < 0 || v >= num_nodes) {
      return Corrupt(fmt::format("{}: neighbor id {} at byte offset {} is outside [0, {})",
                                 topology.indices->path(), v, edges[static_cast<size_t>(i)] * index_bytes, num_nodes));
    }
    (*src)[static_cast<size_t>(i)] = v;
  }
  return Status::Ok();
}

Status LinkBatcher::Impl::Positives(int64_t epoch, const int64_t* positions, int64_t count, std::vector<int64_t>* src,
                                    std::vector<int64_t>* dst, std::vector<int64_t>* fixed_negatives) const {
  if (from_topology) return TopologyPositives(epoch, positions, count, src, dst);
  std::vector<int64_t> pairs;
  SEER_RETURN_IF_ERROR(ReadRows(pairs_fd.get(), pairs_path, 2, positions, count, &pairs));
  src->resize(static_cast<size_t>(count));
  dst->resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    for (int side = 0; side < 2; ++side) {
      const int64_t v = pairs[static_cast<size_t>(2 * i + side)];
      if (v < 0 || v >= num_nodes) {
        return Corrupt(fmt::format("{}: node id {} at byte offset {} is outside [0, {})", pairs_path, v,
                                   16 * positions[i] + 8 * side, num_nodes));
      }
    }
    (*src)[static_cast<size_t>(i)] = pairs[static_cast<size_t>(2 * i)];
    (*dst)[static_cast<size_t>(i)] = pairs[static_cast<size_t>(2 * i + 1)];
  }
  const int64_t k = options.negatives;
  if (!negatives_path.empty()) {
    SEER_RETURN_IF_ERROR(ReadRows(negatives_fd.get(), negatives_path, k, positions, count, fixed_negatives));
    for (int64_t i = 0; i < count * k; ++i) {
      const int64_t v = (*fixed_negatives)[static_cast<size_t>(i)];
      if (v < 0 || v >= num_nodes) {
        return Corrupt(fmt::format("{}: node id {} at byte offset {} is outside [0, {})", negatives_path, v,
                                   8 * (positions[i / k] * k + i % k), num_nodes));
      }
    }
    return Status::Ok();
  }
  fixed_negatives->resize(static_cast<size_t>(count * k));
  for (int64_t i = 0; i < count; ++i) {
    SamplerRng rng(seed ^ kEvalNegativesTweak, 0, static_cast<uint64_t>(positions[i]));
    for (int64_t j = 0; j < k; ++j) {
      (*fixed_negatives)[static_cast<size_t>(i * k + j)] = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(num_nodes)));
    }
  }
  return Status::Ok();
}

LinkBatcher::LinkBatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LinkBatcher::LinkBatcher(LinkBatcher&&) noexcept = default;
LinkBatcher& LinkBatcher::operator=(LinkBatcher&&) noexcept = default;
LinkBatcher::~LinkBatcher() = default;

namespace {
Status CheckLinkOptions(const LinkSeedOptions& o) {
  if (o.negatives < 1 || o.negatives > LinkSeedOptions::kMaxNegatives) {
    return InvalidArgument(fmt::format("--negatives {}: expected 1 to {}", o.negatives, LinkSeedOptions::kMaxNegatives));
  }
  return Status::Ok();
}
}  // namespace

Result<LinkBatcher> LinkBatcher::ForTopologyEdges(TopologyView topology, LinkSeedOptions options, uint64_t seed) {
  SEER_RETURN_IF_ERROR(CheckLinkOptions(options));
  if (topology.typed != nullptr) return InvalidArgument("link prediction on typed datasets is not supported yet");
  if (topology.indptr == nullptr || topology.indptr->empty() || topology.indices == nullptr) {
    return InvalidArgument("link batches: topology has no indptr or indices reader");
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->seed = seed;
  impl->num_nodes = topology.num_nodes();
  impl->num_pairs = topology.indptr->back();
  impl->from_topology = true;
  impl->topology = topology;
  if (impl->num_pairs == 0) return InvalidArgument("link prediction: the graph has no edge to train on");
  return LinkBatcher(std::move(impl));
}

Result<LinkBatcher> LinkBatcher::ForPairFile(const std::string& pairs_path, const std::string& negatives_path,
                                             int64_t negatives_per_pair, int64_t num_nodes, uint64_t seed) {
  LinkSeedOptions options;
  options.negatives = negatives_per_pair;
  SEER_RETURN_IF_ERROR(CheckLinkOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->seed = seed;
  impl->num_nodes = num_nodes;
  impl->pairs_path = pairs_path;
  impl->negatives_path = negatives_path;
  SEER_ASSIGN_OR_RETURN(impl->pairs_fd, UniqueFd::Open(pairs_path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(const int64_t bytes, FileSizeBytes(impl->pairs_fd.get(), pairs_path));
  if (bytes % 16 != 0) {
    return Corrupt(fmt::format("{}: {} bytes is not a whole number of 16-byte (src, dst) pairs", pairs_path, bytes));
  }
  impl->num_pairs = bytes / 16;
  if (!negatives_path.empty()) {
    SEER_ASSIGN_OR_RETURN(impl->negatives_fd, UniqueFd::Open(negatives_path, O_RDONLY | O_CLOEXEC));
    SEER_ASSIGN_OR_RETURN(const int64_t neg_bytes, FileSizeBytes(impl->negatives_fd.get(), negatives_path));
    if (neg_bytes != 8 * negatives_per_pair * impl->num_pairs) {
      return Corrupt(fmt::format("{}: {} bytes, expected {} ({} negatives for each of the {} pairs of {})",
                                 negatives_path, neg_bytes, 8 * negatives_per_pair * impl->num_pairs,
                                 negatives_per_pair, impl->num_pairs, pairs_path));
    }
  }
  return LinkBatcher(std::move(impl));
}

int64_t LinkBatcher::num_pairs() const { return impl_->num_pairs; }
const LinkSeedOptions& LinkBatcher::options() const { return impl_->options; }
bool LinkBatcher::shuffled() const { return impl_->from_topology; }

Status LinkBatcher::MakeBatch(int64_t epoch, int64_t batch_index, const int64_t* positions, int64_t count,
                              LinkBatch* out) const {
  const Impl& impl = *impl_;
  for (int64_t i = 0; i < count; ++i) {
    if (positions[i] < 0 || positions[i] >= impl.num_pairs) {
      throw std::out_of_range(fmt::format("link batch: pair position {} of {}", positions[i], impl.num_pairs));
    }
  }
  std::vector<int64_t> src, dst, fixed;
  SEER_RETURN_IF_ERROR(impl.Positives(epoch, positions, count, &src, &dst, &fixed));
  const LinkSeedOptions& o = impl.options;
  const int64_t k = o.negatives;
  const bool shared = o.shared && impl.from_topology;
  SeedIndex index(out, static_cast<size_t>(LinkBatchMaxSeeds(count, o)));
  LinkPairs& pairs = out->pairs;
  pairs = LinkPairs();
  pairs.negatives_per_pair = k;
  pairs.shared_negatives = shared;
  pairs.src.resize(static_cast<size_t>(count));
  pairs.dst.resize(static_cast<size_t>(count));
  pairs.neg.resize(static_cast<size_t>(shared ? k : count * k));
  for (int64_t i = 0; i < count; ++i) {
    pairs.src[static_cast<size_t>(i)] = index.Position(src[static_cast<size_t>(i)]);
    pairs.dst[static_cast<size_t>(i)] = index.Position(dst[static_cast<size_t>(i)]);
    if (shared) continue;
    if (!impl.from_topology) {
      for (int64_t j = 0; j < k; ++j) {
        pairs.neg[static_cast<size_t>(i * k + j)] = index.Position(fixed[static_cast<size_t>(i * k + j)]);
      }
      continue;
    }
    SamplerRng rng(impl.seed ^ kPairNegativesTweak, static_cast<uint64_t>(epoch), static_cast<uint64_t>(positions[i]));
    for (int64_t j = 0; j < k; ++j) pairs.neg[static_cast<size_t>(i * k + j)] = index.Position(impl.DrawNegative(rng));
  }
  if (shared) {
    SamplerRng rng(impl.seed ^ kSharedNegativesTweak, static_cast<uint64_t>(epoch), static_cast<uint64_t>(batch_index));
    for (int64_t j = 0; j < k; ++j) pairs.neg[static_cast<size_t>(j)] = index.Position(impl.DrawNegative(rng));
  }
  return Status::Ok();
}

}  // namespace seer
