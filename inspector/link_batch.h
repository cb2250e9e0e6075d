// Link prediction batches (`seer train --task link`, docs/design.md "Link prediction"):
// which scored pairs a batch holds and which nodes the inspector must sample for them.
//
// A link batch is a run of positive edges, each with k negatives. Its seeds are the
// distinct nodes among them in first-appearance order (pair by pair: source, destination,
// then that pair's negatives; shared negatives after the last pair), and its LinkPairs
// (inspector/trace.h) say which seed positions form each scored pair. Because the
// negatives are drawn here, before sampling, their rows are in the superbatch's trace and
// the feature-cache planner plans them like every other row.
//
// Where the positives come from (LinkBatcher):
//   ForTopologyEdges  training: every edge stored in the topology (indices.bin entry e is
//                     the edge (indices[e], v) with indptr[v] <= e < indptr[v+1]), in a
//                     per-(seed, epoch) permutation of [0, E) computed on the fly
//                     (EdgePermutation: no array of E edge ids in RAM). A batch's sources
//                     are read from indices.bin (one small read per positive, in one
//                     ReadBatch); destinations come from the in-RAM indptr.
//   ForPairFile       evaluation: the (src, dst) pairs of a held-out edge file of
//                     `seer split-edges` in file order, each with the K fixed negatives of
//                     its negatives file, or (no file) K uniform negatives drawn from
//                     (seed, pair index) — the same for every evaluation of a run.
// Negatives of training pairs: uniform over the nodes, or proportional to in-degree
// (`degree`: the destination of a uniformly drawn stored edge), drawn from a generator
// keyed by (seed, epoch, the pair's position in the epoch's order) — so a pair's
// negatives do not depend on its batch or rank; shared negatives (k per batch, every pair
// of the batch scored against them) are keyed by (seed, epoch, batch index). Negatives
// are not filtered against the graph (as OGB's training samplers).
//
// Thread safety: MakeBatch is const and may run on many threads at once (the reader is
// thread-safe; pair files are read with pread). The topology must outlive the batcher.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inspector/sampler.h"
#include "inspector/trace.h"
#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class NegativeDistribution { kUniform, kDegree };
inline constexpr NameValue<NegativeDistribution> kNegativeDistributionNames[] = {
    {"uniform", NegativeDistribution::kUniform}, {"degree", NegativeDistribution::kDegree}};
Result<NegativeDistribution> ParseNegativeDistribution(const std::string& text);
const char* NegativeDistributionName(NegativeDistribution d);

struct LinkSeedOptions {
  int64_t negatives = 1;  // k: per positive pair, or per batch when shared
  NegativeDistribution distribution = NegativeDistribution::kUniform;
  bool shared = false;
  // Largest k accepted (a batch of B pairs holds up to B * (2 + k) seeds).
  static constexpr int64_t kMaxNegatives = 4096;
};

// A pseudo-random bijection of [0, n) keyed by (seed, epoch): a 4-round Feistel network
// over the smallest even number of bits covering n, cycle-walking values >= n back into
// range (fewer than 4 steps on average). O(1) memory; operator() is const.
class EdgePermutation {
 public:
  EdgePermutation(uint64_t n, uint64_t seed, int64_t epoch);
  uint64_t operator()(uint64_t i) const;  // requires i < n
  uint64_t size() const { return n_; }

 private:
  uint64_t Round(uint64_t value) const;
  uint64_t n_ = 0;
  int half_bits_ = 1;
  uint64_t half_mask_ = 1;
  uint64_t keys_[4] = {};
};

// The seeds and pairs of one link batch.
struct LinkBatch {
  std::vector<int64_t> seeds;  // distinct global node ids
  LinkPairs pairs;
};

class LinkBatcher {
 public:
  // Training pairs: every stored edge of `topology`. k >= 1 (<= kMaxNegatives). A typed
  // view is kInvalidArgument (link prediction on typed datasets is not supported yet).
  static Result<LinkBatcher> ForTopologyEdges(TopologyView topology, LinkSeedOptions options, uint64_t seed);
  // Evaluation pairs from `pairs_path` (int64 (src, dst) pairs, the format of
  // storage/dataset/edge_splits.h) with `negatives_path`'s K = negatives_per_pair fixed
  // negatives each, or, when negatives_path is "", K uniform ones drawn from (seed, pair).
  // Ids are checked against num_nodes when read (kCorrupt naming the file and offset).
  static Result<LinkBatcher> ForPairFile(const std::string& pairs_path, const std::string& negatives_path,
                                         int64_t negatives_per_pair, int64_t num_nodes, uint64_t seed);
  LinkBatcher(LinkBatcher&&) noexcept;
  LinkBatcher& operator=(LinkBatcher&&) noexcept;
  ~LinkBatcher();

  int64_t num_pairs() const;
  const LinkSeedOptions& options() const;
  bool shuffled() const;  // training pairs: position p of epoch e is pair Permutation(e)(p)

  // The batch of the pairs at `positions` (count of them) of `epoch`'s order (global
  // positions, < num_pairs()); `batch_index` keys shared negatives. I/O errors name the
  // file and offset.
  Status MakeBatch(int64_t epoch, int64_t batch_index, const int64_t* positions, int64_t count,
                   LinkBatch* out) const;

 private:
  struct Impl;
  explicit LinkBatcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The most seeds a link batch of `batch_pairs` pairs can hold.
inline int64_t LinkBatchMaxSeeds(int64_t batch_pairs, const LinkSeedOptions& o) {
  return o.shared ? 2 * batch_pairs + o.negatives : batch_pairs * (2 + o.negatives);
}

}  // namespace seer
