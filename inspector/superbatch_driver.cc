#include "inspector/superbatch_driver.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace seer {

// ---- Topology -------------------------------------------------------------------------

Topology::Topology(std::vector<int64_t> indptr, std::unique_ptr<BlockReader> indices,
                   IndexDtype index_dtype, NeighborCache ncache)
    : indptr_(std::move(indptr)),
      indices_(std::move(indices)),
      index_dtype_(index_dtype),
      ncache_(std::move(ncache)) {}

TopologyView Topology::view() const {
  TopologyView view;
  view.indptr = &indptr_;
  view.indices = indices_.get();
  view.index_dtype = index_dtype_;
  view.ncache = ncache_.enabled() ? &ncache_ : nullptr;
  return view;
}

Result<std::unique_ptr<Topology>> Topology::Open(const Dataset& dataset,
                                                 const TopologyOptions& options) {
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> indptr, dataset.LoadIndptr());
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<BlockReader> reader,
                        OpenDirectReader(dataset.PathOf(dataset_files::kIndices), options.reader));
  NeighborCache ncache;
  if (!options.ncache_dir.empty()) {
    SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Load(options.ncache_dir, dataset));
  } else if (options.ncache_budget_bytes > 0) {
    NeighborCacheBuildOptions build;
    build.show_progress = options.show_progress;
    SEER_ASSIGN_OR_RETURN(ncache, NeighborCache::Build(dataset, indptr,
                                                       options.ncache_budget_bytes, build));
  }
  return std::make_unique<Topology>(std::move(indptr), std::move(reader),
                                    dataset.manifest().index_dtype, std::move(ncache));
}

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
  SuperbatchOptions options;
  tbb::task_arena arena;
  std::mutex mu;  // serializes Sample(); guards the fields below
  int64_t order_epoch = -1;
  std::vector<int64_t> order;
  std::vector<uint64_t> seen_bits;  // scratch for unique-node counting, all zero between calls

  std::vector<int64_t> MakeOrder(int64_t epoch) const {
    std::vector<int64_t> out = seed_ids;
    if (!options.shuffle) return out;
    SamplerRng rng(options.sampler.seed, static_cast<uint64_t>(epoch), kShuffleStream);
    for (size_t i = out.size(); i > 1; --i) {  // Fisher-Yates with an unbiased index
      const size_t j = static_cast<size_t>(rng.Below(i));
      std::swap(out[i - 1], out[j]);
    }
    return out;
  }
};

SuperbatchSampler::SuperbatchSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SuperbatchSampler::SuperbatchSampler(SuperbatchSampler&&) noexcept = default;
SuperbatchSampler& SuperbatchSampler::operator=(SuperbatchSampler&&) noexcept = default;
SuperbatchSampler::~SuperbatchSampler() = default;

Result<SuperbatchSampler> SuperbatchSampler::Create(TopologyView topology,
                                                    std::vector<int64_t> seed_ids,
                                                    SuperbatchOptions options) {
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
  if (options.sampler.fanouts.empty()) return InvalidArgument("no fan-outs given");
  for (int f : options.sampler.fanouts) {
    if (f == 0 || f < -1) {
      return InvalidArgument("fan-out must be > 0 or -1 (all), got " + std::to_string(f));
    }
  }
  if (topology.indptr == nullptr || topology.indptr->empty() || topology.indices == nullptr) {
    return InvalidArgument("topology has no indptr or indices reader");
  }
  const int64_t num_nodes = topology.num_nodes();
  std::vector<uint8_t> seen(static_cast<size_t>(num_nodes), 0);
  for (size_t i = 0; i < seed_ids.size(); ++i) {
    const int64_t v = seed_ids[i];
    if (v < 0 || v >= num_nodes) {
      return InvalidArgument("seed id " + std::to_string(v) + " at position " + std::to_string(i) +
                             " is outside [0, " + std::to_string(num_nodes) + ")");
    }
    if (seen[static_cast<size_t>(v)]++) {
      return InvalidArgument("seed id " + std::to_string(v) + " appears twice (position " +
                             std::to_string(i) + ")");
    }
  }
  return SuperbatchSampler(std::make_unique<Impl>(topology, std::move(seed_ids), std::move(options)));
}

int64_t SuperbatchSampler::num_seeds() const { return static_cast<int64_t>(impl_->seed_ids.size()); }
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

std::vector<int64_t> SuperbatchSampler::EpochOrder(int64_t epoch) const {
  return impl_->MakeOrder(epoch);
}

Result<SuperbatchTrace> SuperbatchSampler::Sample(int64_t epoch, int64_t k,
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

  SuperbatchTrace out;
  out.epoch = epoch;
  out.superbatch_index = k;
  out.batches.resize(static_cast<size_t>(count));
  std::vector<Status> statuses(static_cast<size_t>(count));
  std::vector<SampleStats> batch_stats(static_cast<size_t>(count));
  std::atomic<bool> failed{false};

  // Each task samples whole batches; nothing escapes a task but Status values.
  impl.arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, 1),
                      [&](const tbb::blocked_range<int64_t>& range) {
      for (int64_t i = range.begin(); i != range.end(); ++i) {
        if (failed.load(std::memory_order_relaxed)) return;  // stop early, cleanly
        const int64_t b = first_batch + i;
        const int64_t begin = b * batch_size;
        const int64_t end = std::min(begin + batch_size, total_seeds);
        Status st;
        try {
          st = impl.sampler.SampleBatch(impl.order.data() + begin, end - begin, epoch, b,
                                        &out.batches[static_cast<size_t>(i)],
                                        &batch_stats[static_cast<size_t>(i)]);
        } catch (const std::bad_alloc&) {
          st = Status(StatusCode::kResourceExhausted,
                      "out of memory sampling epoch " + std::to_string(epoch) + " batch " +
                          std::to_string(b));
        } catch (const std::exception& e) {
          st = Status(StatusCode::kInvalidArgument,
                      "sampling epoch " + std::to_string(epoch) + " batch " + std::to_string(b) +
                          ": " + e.what());
        }
        if (!st.ok()) {
          statuses[static_cast<size_t>(i)] = std::move(st);
          failed.store(true, std::memory_order_relaxed);
        }
      }
    });
  });
  for (Status& st : statuses) {
    if (!st.ok()) return std::move(st);
  }

  SuperbatchStats s;
  s.epoch = epoch;
  s.superbatch_index = k;
  for (const SampleStats& b : batch_stats) s.sample.Add(b);
  // Unique nodes over the superbatch with a bitmap; the bits are cleared again after.
  std::vector<uint64_t>& bits = impl.seen_bits;
  for (const BatchTrace& t : out.batches) {
    for (int64_t v : t.node_ids) {
      uint64_t& word = bits[static_cast<size_t>(v >> 6)];
      const uint64_t mask = uint64_t{1} << (v & 63);
      if (!(word & mask)) {
        word |= mask;
        ++s.unique_nodes;
      }
    }
  }
  for (const BatchTrace& t : out.batches) {
    for (int64_t v : t.node_ids) bits[static_cast<size_t>(v >> 6)] = 0;
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = s;
  return out;
}

}  // namespace seer
