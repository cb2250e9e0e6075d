// The inspector's superbatch driver (Ginex §3.1 "superbatch sample", docs/design.md "Inspector").
// What it samples from is a TopologyView, usually of a Topology (inspector/topology.h).
//
// SuperbatchSampler: per epoch, shuffles the seed ids (training ids) with a generator
// seeded by (seed, epoch), cuts them into batches of batch_size and superbatches of S
// batches — the last batch and the last superbatch may be short, nothing is dropped —
// and samples superbatch k of epoch e with TBB workers, one batch per task. The result
// is a function of (seed, epoch, k) only: identical for any thread count.
//
// Pipeline use (executor): for e, for k in [0, num_superbatches()): SampleToFile(e, k)
// → hand the TraceFile (on the runtime directory) to the planner. Sample() blocks
// until every batch of the superbatch is done; errors from workers come back as the
// Status of the lowest failing batch (naming file and offset), and no partial trace is
// returned. One Sample() at a time per SuperbatchSampler (calls are serialized by an
// internal mutex); the Topology (or whatever the TopologyView points into) must outlive
// the sampler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "inspector/link_batch.h"
#include "inspector/sampler.h"
#include "inspector/trace.h"
#include "inspector/trace_stream.h"
#include "storage/base/status.h"

namespace seer {

struct SuperbatchOptions {
  int64_t batch_size = 1000;
  int64_t superbatch_size = 100;  // S: batches per superbatch
  int num_threads = 0;            // 0 = TBB default (all cores)
  bool shuffle = true;            // false: seeds in the given order (evaluation)
  SamplerOptions sampler;
  // Data-parallel training (shuffle only): this process is rank `rank` of `world_size`.
  // Every rank shuffles the same (seed, epoch) permutation and takes its share of each
  // global batch of batch_size * world_size seeds (RankShare below), so batch b of every
  // rank together is batch b of one process with batch_size * world_size, and every rank
  // has the same number of batches and superbatches.
  int rank = 0;
  int world_size = 1;
};

// Rank `rank`'s seeds of `order` (world_size > 1): of every full global batch of
// batch_size * world_size seeds, the rank-th run of batch_size; the last, short global
// batch of m seeds is split as evenly as possible (rank r takes [r*m/W, (r+1)*m/W)) and
// dropped when m < world_size (every rank must have a seed in every batch). With
// world_size 1, `order` itself.
std::vector<int64_t> RankShare(const std::vector<int64_t>& order, int64_t batch_size, int rank, int world_size);
// RankShare(order, ...).size() for order.size() == num_seeds.
int64_t RankShareSize(int64_t num_seeds, int64_t batch_size, int rank, int world_size);
// Where RankShare's element i comes from: RankShare(order, ...)[i] == order[RankSharePosition(i, order.size(), ...)].
int64_t RankSharePosition(int64_t i, int64_t num_seeds, int64_t batch_size, int rank, int world_size);

// The options every caller fills the same way: `batches` per superbatch, fan-outs
// (hop 1 first) and the sampling seed, the rest of SamplerOptions at its defaults.
inline SuperbatchOptions MakeSuperbatchOptions(int64_t batch_size, int64_t batches, int num_threads,
                                               const std::vector<int>& fanouts, uint64_t seed,
                                               bool shuffle) {
  SuperbatchOptions options;
  options.batch_size = batch_size;
  options.superbatch_size = batches;
  options.num_threads = num_threads;
  options.shuffle = shuffle;
  options.sampler.fanouts = fanouts;
  options.sampler.seed = seed;
  return options;
}

// What one Sample() call did.
struct SuperbatchStats {
  int64_t epoch = 0;
  int64_t superbatch_index = 0;
  int64_t unique_nodes = 0;   // distinct node ids over all batches of the superbatch
  SampleStats sample;         // batches, sampled nodes, edges, ncache hits, reads
  double seconds = 0;
};

class SuperbatchSampler {
 public:
  // seed_ids: distinct ids < num_nodes (checked: kInvalidArgument naming the first bad
  // one; a typed view's ids are global: type offset + local id). Options are checked too
  // (batch_size, superbatch_size >= 1, fan-outs, CheckSamplerOptions).
  static Result<SuperbatchSampler> Create(TopologyView topology, std::vector<int64_t> seed_ids,
                                          SuperbatchOptions options);
  // Link prediction (inspector/link_batch.h): the items cut into batches are the
  // batcher's pairs, and each batch's seeds are its pairs' endpoints and negatives
  // (BatchTrace::link says which). Shuffled training pairs follow the batcher's
  // per-epoch permutation (options.shuffle must be true, ranks take RankShare's
  // positions); pairs of a file are taken in order, [pair_begin, pair_end) only (an
  // evaluation shard; pair_end -1 = all; options.shuffle must be false). A typed view is
  // kInvalidArgument (link prediction on typed datasets is not supported yet).
  static Result<SuperbatchSampler> CreateLink(TopologyView topology, std::shared_ptr<const LinkBatcher> batcher,
                                              SuperbatchOptions options, int64_t pair_begin = 0,
                                              int64_t pair_end = -1);
  SuperbatchSampler(SuperbatchSampler&&) noexcept;
  SuperbatchSampler& operator=(SuperbatchSampler&&) noexcept;
  ~SuperbatchSampler();

  int64_t num_seeds() const;         // this rank's (RankShareSize of the seed ids); link: of the pairs
  int64_t num_batches() const;        // per epoch: ceil(num_seeds / batch_size)
  int64_t num_superbatches() const;   // per epoch: ceil(num_batches / S)
  int64_t num_batches_in(int64_t k) const;  // S, or fewer for the last superbatch
  const SuperbatchOptions& options() const;
  // 0 for a homogeneous topology, else the typed view's relation count: what the traces
  // record (SuperbatchTrace::num_relations, the .sbt header; pass it to
  // TraceFileWriter::Create when writing this sampler's batches yourself).
  int64_t num_relations() const;

  // The seed order of an epoch (the shuffled ids); batch b is [b*batch_size, ...).
  // Link samplers: empty (their order is the batcher's).
  std::vector<int64_t> EpochOrder(int64_t epoch) const;

  // Samples superbatch k (0 <= k < num_superbatches()) of `epoch` into RAM.
  Result<SuperbatchTrace> Sample(int64_t epoch, int64_t k, SuperbatchStats* stats = nullptr);

  // Streaming: batches are sampled in parallel with at most TraceChunkBatches(threads)
  // in flight (inspector/trace_stream.h) and handed to `sink` one at a time in batch
  // order (on a worker thread); RAM does not grow with S. A sink error stops sampling
  // and is returned. Same batches as Sample() for any thread count.
  using BatchSink = std::function<Status(BatchTrace&& batch)>;
  Status SampleStreaming(int64_t epoch, int64_t k, const BatchSink& sink, SuperbatchStats* stats = nullptr);
  // Streams superbatch k into a .sbt file at `path` (TraceFileWriter; the same bytes as
  // SerializeTrace of Sample()). The handle owns the file; on error no file is left.
  Result<TraceFile> SampleToFile(int64_t epoch, int64_t k, const std::string& path,
                                 SuperbatchStats* stats = nullptr, bool sync = false);

 private:
  struct Impl;
  explicit SuperbatchSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seer
