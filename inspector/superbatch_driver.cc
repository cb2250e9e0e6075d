#include "inspector/superbatch_driver.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include "storage/base/exception_status.h"
#include "storage/base/parallel.h"

namespace seer {

// ---- SuperbatchSampler ----------------------------------------------------------------

namespace {
// Stream word that separates the epoch shuffle from the per-batch generators, which use
// (seed, epoch, batch_index) with batch_index < 2^63.
constexpr uint64_t kShuffleStream = 0xffffffffffffffffULL;
}  // namespace

struct SuperbatchSampler::Impl {
  Impl(TopologyView topology, std::vector<int64_t> seeds, SuperbatchOptions opts)
      : sampler(topology, opts.sampler),
        seed_ids(std::move(seeds)),
        options(std::move(opts)),
        arena(options.num_threads > 0 ? options.num_threads
                                      : tbb::task_arena::automatic),
        seen_bits(static_cast<size_t>((topology.num_nodes() + 63) / 64), 0) {}

  NeighborSampler sampler;
  std::vector<int64_t> seed_ids;
  // Link prediction: the pairs (null for node seeds), and the range of a file's pairs.
  std::shared_ptr<const LinkBatcher> link;
  int64_t pair_begin = 0, pair_end = 0;
  SuperbatchOptions options;
  tbb::task_arena arena;
  std::mutex mu;  // serializes Sample(); guards the fields below
  int64_t order_epoch = -1;
  std::vector<int64_t> order;
  std::vector<uint64_t> seen_bits;  // scratch for unique-node counting, all zero between calls

  std::vector<int64_t> MakeOrder(int64_t epoch) const {
    if (link) return {};
    std::vector<int64_t> out = seed_ids;
    if (!options.shuffle) return out;
    SamplerRng rng(options.sampler.seed, static_cast<uint64_t>(epoch), kShuffleStream);
    for (size_t i = out.size(); i > 1; --i) {  // Fisher-Yates with an unbiased index
      const size_t j = static_cast<size_t>(rng.Below(i));
      std::swap(out[i - 1], out[j]);
    }
    return RankShare(out, options.batch_size, options.rank, options.world_size);
  }

  // Link batch b: this rank's items [begin, end) as positions of the epoch's pair order,
  // their seeds sampled, the pairs attached.
  Status SampleLinkBatch(int64_t epoch, int64_t b, int64_t begin, int64_t end, BatchTrace* trace,
                         SampleStats* stats) const {
    std::vector<int64_t> positions(static_cast<size_t>(end - begin));
    const int64_t n = pair_end - pair_begin;
    for (int64_t i = begin; i < end; ++i) {
      positions[static_cast<size_t>(i - begin)] =
          pair_begin + (options.shuffle ? RankSharePosition(i, n, options.batch_size, options.rank, options.world_size) : i);
    }
    LinkBatch batch;
    SEER_RETURN_IF_ERROR(link->MakeBatch(epoch, b, positions.data(), end - begin, &batch));
    SEER_RETURN_IF_ERROR(sampler.SampleBatch(batch.seeds.data(), static_cast<int64_t>(batch.seeds.size()), epoch, b,
                                             trace, stats));
    trace->link = std::move(batch.pairs);
    return Status::Ok();
  }
};

std::vector<int64_t> RankShare(const std::vector<int64_t>& order, int64_t batch_size, int rank, int world_size) {
  if (world_size <= 1) return order;
  const int64_t n = static_cast<int64_t>(order.size());
  const int64_t global = batch_size * world_size;
  const int64_t full = n / global;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(RankShareSize(n, batch_size, rank, world_size)));
  for (int64_t j = 0; j < full; ++j) {
    const auto first = order.begin() + j * global + rank * batch_size;
    out.insert(out.end(), first, first + batch_size);
  }
  const int64_t m = n - full * global;
  if (m >= world_size) {
    const auto last = order.begin() + full * global;
    out.insert(out.end(), last + rank * m / world_size, last + (rank + 1) * m / world_size);
  }
  return out;
}

int64_t RankSharePosition(int64_t i, int64_t num_seeds, int64_t batch_size, int rank, int world_size) {
  if (world_size <= 1) return i;
  const int64_t global = batch_size * world_size;
  const int64_t full = num_seeds / global;
  if (i < full * batch_size) return (i / batch_size) * global + rank * batch_size + i % batch_size;
  const int64_t m = num_seeds - full * global;
  return full * global + rank * m / world_size + (i - full * batch_size);
}

int64_t RankShareSize(int64_t num_seeds, int64_t batch_size, int rank, int world_size) {
  if (world_size <= 1) return num_seeds;
  const int64_t global = batch_size * world_size;
  const int64_t full = num_seeds / global;
  const int64_t m = num_seeds - full * global;
  const int64_t tail = m >= world_size ? (rank + 1) * m / world_size - rank * m / world_size : 0;
  return full * batch_size + tail;
}

SuperbatchSampler::SuperbatchSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SuperbatchSampler::SuperbatchSampler(SuperbatchSampler&&) noexcept = default;
SuperbatchSampler& SuperbatchSampler::operator=(SuperbatchSampler&&) noexcept = default;
SuperbatchSampler::~SuperbatchSampler() = default;

namespace {
Status CheckSuperbatchOptions(const TopologyView& topology, const SuperbatchOptions& options) {
  if (options.batch_size < 1) {
    return InvalidArgument("batch size must be >= 1, got " + std::to_string(options.batch_size));
  }
  if (options.superbatch_size < 1) {
    return InvalidArgument("superbatch size must be >= 1, got " +
                           std::to_string(options.superbatch_size));
  }
  if (options.num_threads < 0) {
    return InvalidArgument("thread count must be >= 0, got " + std::to_string(options.num_threads));
  }
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return InvalidArgument("rank " + std::to_string(options.rank) + " of world size " +
                           std::to_string(options.world_size) + " is out of range");
  }
  // Fan-outs, the view (homogeneous or typed) and the per-relation fan-outs.
  return CheckSamplerOptions(topology, options.sampler);
}
}  // namespace

Result<SuperbatchSampler> SuperbatchSampler::CreateLink(TopologyView topology,
                                                        std::shared_ptr<const LinkBatcher> batcher,
                                                        SuperbatchOptions options, int64_t pair_begin,
                                                        int64_t pair_end) {
  SEER_RETURN_IF_ERROR(CheckSuperbatchOptions(topology, options));
  if (batcher == nullptr) return InvalidArgument("link sampler without pairs");
  if (topology.typed != nullptr) return InvalidArgument("link prediction on typed datasets is not supported yet");
  if (options.shuffle != batcher->shuffled()) {
    throw std::logic_error("CreateLink: training pairs are shuffled, a pair file's are not");
  }
  const int64_t n = batcher->num_pairs();
  if (pair_end < 0) pair_end = n;
  if (pair_begin < 0 || pair_begin > pair_end || pair_end > n || (options.shuffle && (pair_begin != 0 || pair_end != n))) {
    return InvalidArgument(fmt::format("link sampler: pair range [{}, {}) of {} pairs", pair_begin, pair_end, n));
  }
  auto impl = std::make_unique<Impl>(topology, std::vector<int64_t>(), std::move(options));
  impl->link = std::move(batcher);
  impl->pair_begin = pair_begin;
  impl->pair_end = pair_end;
  return SuperbatchSampler(std::move(impl));
}

Result<SuperbatchSampler> SuperbatchSampler::Create(TopologyView topology,
                                                    std::vector<int64_t> seed_ids,
                                                    SuperbatchOptions options) {
  SEER_RETURN_IF_ERROR(CheckSuperbatchOptions(topology, options));
  const int64_t num_nodes = topology.num_nodes();
  // One bit per node (125 MB at 10^9 nodes), freed before returning.
  std::vector<uint64_t> seen(static_cast<size_t>((num_nodes + 63) / 64), 0);
  for (size_t i = 0; i < seed_ids.size(); ++i) {
    const int64_t v = seed_ids[i];
    if (v < 0 || v >= num_nodes) {
      return InvalidArgument("seed id " + std::to_string(v) + " at position " + std::to_string(i) +
                             " is outside [0, " + std::to_string(num_nodes) + ")");
    }
    uint64_t& word = seen[static_cast<size_t>(v) >> 6];
    const uint64_t bit = uint64_t{1} << (v & 63);
    const bool twice = (word & bit) != 0;
    word |= bit;
    if (twice) {
      return InvalidArgument("seed id " + std::to_string(v) + " appears twice (position " +
                             std::to_string(i) + ")");
    }
  }
  return SuperbatchSampler(std::make_unique<Impl>(topology, std::move(seed_ids), std::move(options)));
}

int64_t SuperbatchSampler::num_seeds() const {
  const SuperbatchOptions& o = impl_->options;
  const int64_t n = impl_->link ? impl_->pair_end - impl_->pair_begin : static_cast<int64_t>(impl_->seed_ids.size());
  return o.shuffle ? RankShareSize(n, o.batch_size, o.rank, o.world_size) : n;
}
int64_t SuperbatchSampler::num_batches() const {
  return (num_seeds() + impl_->options.batch_size - 1) / impl_->options.batch_size;
}
int64_t SuperbatchSampler::num_superbatches() const {
  return (num_batches() + impl_->options.superbatch_size - 1) / impl_->options.superbatch_size;
}
int64_t SuperbatchSampler::num_batches_in(int64_t k) const {
  const int64_t s = impl_->options.superbatch_size;
  return std::max<int64_t>(0, std::min(s, num_batches() - k * s));
}
const SuperbatchOptions& SuperbatchSampler::options() const { return impl_->options; }
int64_t SuperbatchSampler::num_relations() const {
  const TypedTopologyView* typed = impl_->sampler.topology().typed;
  return typed == nullptr ? 0 : static_cast<int64_t>(typed->relations.size());
}

std::vector<int64_t> SuperbatchSampler::EpochOrder(int64_t epoch) const {
  return impl_->MakeOrder(epoch);
}

Status SuperbatchSampler::SampleStreaming(int64_t epoch, int64_t k, const BatchSink& sink,
                                          SuperbatchStats* stats) {
  if (k < 0 || k >= num_superbatches()) {
    throw std::out_of_range("SuperbatchSampler::Sample: superbatch " + std::to_string(k) +
                            " of " + std::to_string(num_superbatches()));
  }
  Impl& impl = *impl_;
  std::lock_guard<std::mutex> lock(impl.mu);
  const auto start = std::chrono::steady_clock::now();
  if (impl.order_epoch != epoch) {
    impl.order = impl.MakeOrder(epoch);
    impl.order_epoch = epoch;
  }
  const int64_t batch_size = impl.options.batch_size;
  const int64_t first_batch = k * impl.options.superbatch_size;
  const int64_t count = num_batches_in(k);
  const int64_t total_seeds = num_seeds();

  SuperbatchStats s;
  s.epoch = epoch;
  s.superbatch_index = k;
  std::vector<uint64_t>& bits = impl.seen_bits;  // all zero between calls
  struct Token {
    int64_t i = 0;
    BatchTrace trace;
    SampleStats stats;
    Status status;
  };
  int64_t next = 0;
  std::atomic<bool> failed{false};
  Status first_error;
  // An ordered pipeline: batches are sampled in parallel, at most TraceChunkBatches in
  // flight, and handed to `sink` one at a time in batch order; the first failure in
  // batch order (the lowest failing batch) stops it. Nothing escapes a filter but Status values.
  // The Tsan* calls state TBB's ordering for ThreadSanitizer (storage/base/parallel.h): this
  // call before every filter, a token's filters in order, a serial filter's invocations in
  // order, and every filter before the return. Parallel invocations stay unordered. The
  // edges are statics and the filters are built before the first edge: a filter acquires
  // before it reads its captures (storage/base/parallel.h says why).
  static struct { char start, done, serial_in, serial_out; } edge;  // addresses only
  const tbb::filter<void, void> filters =
        tbb::make_filter<void, Token*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> Token* {
                                         TsanAcquire(&edge.start);
                                         TsanAcquire(&edge.serial_in);
                                         Token* t = nullptr;
                                         if (next >= count || failed.load()) {
                                           fc.stop();
                                         } else {
                                           t = new Token;
                                           t->i = next++;
                                           TsanRelease(t);
                                         }
                                         TsanRelease(&edge.serial_in);
                                         TsanRelease(&edge.done);
                                         return t;
                                       }) &
            tbb::make_filter<Token*, Token*>(
                tbb::filter_mode::parallel,
                [&](Token* t) -> Token* {
                  TsanAcquire(&edge.start);
                  TsanAcquire(t);
                  struct Handoff {  // on every return path
                    Token* t;
                    char* done;
                    ~Handoff() { TsanRelease(t); TsanRelease(done); }
                  } handoff{t, &edge.done};
                  if (failed.load(std::memory_order_relaxed)) return t;
                  const int64_t b = first_batch + t->i;
                  const int64_t begin = b * batch_size;
                  const int64_t end = std::min(begin + batch_size, total_seeds);
                  try {
                    if (impl.link) {
                      t->status = impl.SampleLinkBatch(epoch, b, begin, end, &t->trace, &t->stats);
                    } else {
                      t->status = impl.sampler.SampleBatch(impl.order.data() + begin, end - begin, epoch, b,
                                                           &t->trace, &t->stats);
                    }
                  } catch (...) {
                    t->status = StatusFromCurrentException(fmt::format("sampling epoch {} batch {}", epoch, b));
                  }
                  return t;
                }) &
            tbb::make_filter<Token*, void>(tbb::filter_mode::serial_in_order, [&](Token* raw) {
              TsanAcquire(&edge.start);
              TsanAcquire(raw);
              TsanAcquire(&edge.serial_out);
              struct Handoff {  // on every return path
                char* serial_out;
                char* done;
                ~Handoff() { TsanRelease(serial_out); TsanRelease(done); }
              } handoff{&edge.serial_out, &edge.done};
              std::unique_ptr<Token> t(raw);
              if (failed.load()) return;
              Status st = std::move(t->status);
              if (st.ok()) {
                s.sample.Add(t->stats);
                for (int64_t v : t->trace.node_ids) {
                  uint64_t& word = bits[static_cast<size_t>(v >> 6)];
                  const uint64_t mask = uint64_t{1} << (v & 63);
                  if (!(word & mask)) {
                    word |= mask;
                    ++s.unique_nodes;
                  }
                }
                try {
                  st = sink(std::move(t->trace));
                } catch (...) {
                  st = StatusFromCurrentException("storing a sampled batch");
                }
              }
              if (!st.ok()) {
                first_error = std::move(st);
                failed.store(true);
              }
            });
  TsanRelease(&edge.start);
  impl.arena.execute(
      [&] { tbb::parallel_pipeline(static_cast<size_t>(TraceChunkBatches(impl.options.num_threads)), filters); });
  TsanAcquire(&edge.done);
  std::fill(bits.begin(), bits.end(), 0);
  if (failed.load()) return first_error;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = s;
  return Status::Ok();
}

Result<SuperbatchTrace> SuperbatchSampler::Sample(int64_t epoch, int64_t k, SuperbatchStats* stats) {
  SuperbatchTrace out;
  out.epoch = epoch;
  out.superbatch_index = k;
  out.num_relations = num_relations();
  if (k >= 0 && k < num_superbatches()) out.batches.reserve(static_cast<size_t>(num_batches_in(k)));
  SEER_RETURN_IF_ERROR(SampleStreaming(
      epoch, k,
      [&out](BatchTrace&& batch) {
        out.batches.push_back(std::move(batch));
        return Status::Ok();
      },
      stats));
  return out;
}

Result<TraceFile> SuperbatchSampler::SampleToFile(int64_t epoch, int64_t k, const std::string& path,
                                                  SuperbatchStats* stats, bool sync) {
  SEER_ASSIGN_OR_RETURN(TraceFileWriter writer, TraceFileWriter::Create(path, epoch, k, true, num_relations()));
  SEER_RETURN_IF_ERROR(
      SampleStreaming(epoch, k, [&writer](BatchTrace&& batch) { return writer.Append(batch); }, stats));
  return writer.Finish(sync);
}

}  // namespace seer
