#include "storage/prep/csc_builder.h"

#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include "storage/base/parallel.h"
#include <tbb/task_arena.h>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/scratch_dir.h"
#include "storage/base/unique_fd.h"
#include "storage/prep/csc_parallel_internal.h"
#include "storage/prep/csc_sort_internal.h"
#include "storage/prep/direct_file.h"
#include "storage/prep/edge_stager_internal.h"

namespace seer {
namespace {

using namespace csc_internal;  // NOLINT(google-build-using-namespace): the builder's own parts

constexpr int64_t kMinBatchEdges = 1024;
constexpr int64_t kMaxBatchEdges = int64_t{1} << 20;  // 16 MiB of Edge per read
constexpr int64_t kMaxPartitions = 1000;  // stays under the usual 1024 open-file limit

// Applies the options to one input edge and hands 0, 1 or 2 directed edges to `emit`.
// Every pass goes through here, so counting and placing always agree.
template <typename Emit>
inline void Expand(const Edge& e, const CscBuildOptions& options, int64_t* self_loops,
                   Emit&& emit) {
  if (e.src == e.dst) {
    if (options.drop_self_loops) {
      ++*self_loops;
      return;
    }
    emit(e.src, e.dst);  // the reverse of a self-loop is itself: added once
    return;
  }
  emit(e.src, e.dst);
  if (options.undirected) emit(e.dst, e.src);
}

// Where nothing is expanded, a batch of Edges is read as interleaved (src, dst) int64
// pairs by CountRun and PlaceRun.
static_assert(sizeof(Edge) == 2 * sizeof(int64_t) && std::is_standard_layout_v<Edge>);

Status BadId(const EdgeSource& source, int64_t edge_number, const Edge& e, int64_t num_nodes) {
  return InvalidArgument(source.name() + ": edge #" + std::to_string(edge_number) + " (" +
                         std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                         "): node id out of range [0, " + std::to_string(num_nodes) + ")");
}

// Bytes per batch edge of the buffers besides the batch itself: the spill's two scatter
// buffers of index pairs and 2 B partition ids per emitted edge; with several owners,
// placement from a spill also holds two read chunks and the chunk routed by owner
// (3 x a pair + 2 B per spilled edge).
int64_t ScatterBytesPerEdge(const CscBuildOptions& options, int64_t index_bytes) {
  const int64_t spill = (options.undirected ? 2 : 1) * (2 * 2 * index_bytes + 2);
  if (Owners() == 1) return spill;
  return std::max(spill, 3 * 2 * index_bytes + 2);
}

// Edges handed out per Read: a quarter of what the degree table leaves, spread over the
// batch's per-edge bytes (Edge + the source's buffer + two scatter buffers).
int64_t BatchEdgesFor(const EdgeSource& source, const CscBuildOptions& options, int64_t table_bytes,
                      int64_t index_bytes, int64_t extra_per_edge = 0) {
  const int64_t scatter = ScatterBytesPerEdge(options, index_bytes);
  const int64_t per_edge = static_cast<int64_t>(sizeof(Edge)) +
                           source.BufferBytes(kMaxBatchEdges) / kMaxBatchEdges + scatter + extra_per_edge;
  const int64_t share = std::max<int64_t>(0, options.memory_budget_bytes - table_bytes) / 4;
  return std::clamp<int64_t>(share / per_edge, kMinBatchEdges, kMaxBatchEdges);
}

int64_t BatchBytes(const EdgeSource& source, int64_t batch_edges) {
  return batch_edges * static_cast<int64_t>(sizeof(Edge)) + source.BufferBytes(batch_edges);
}

template <typename T>
class CscBuild {
 public:
  CscBuild(EdgeSource& source, const CscBuildOptions& options, AtomicFileWriter& indptr_out,
           AtomicFileWriter& indices_out)
      : source_(source), options_(options), indptr_out_(indptr_out), indices_out_(indices_out) {}

  Result<CscBuildStats> Run(std::vector<int64_t> counts, int64_t num_nodes,
                            int64_t total_edges, CscBuildStats stats) {
    stats_ = stats;
    num_nodes_ = num_nodes;
    counts_ = std::move(counts);
    const int64_t table_bytes = (num_nodes_ + 1) * 8;
    batch_edges_ = BatchEdgesFor(source_, options_, table_bytes, sizeof(T));
    const int64_t scatter_bytes = batch_edges_ * ScatterBytesPerEdge(options_, sizeof(T)) +
                                  4 * kDirectAlign;  // the aligned buffers' rounding
    // The writers' buffers fill only as far as their files go; indptr is written from
    // 64 Ki-entry chunks after the partition buffers are freed.
    const int64_t writer_bytes =
        std::min<int64_t>(options_.writer_buffer_bytes, table_bytes) +
        std::min<int64_t>(options_.writer_buffer_bytes, total_edges * static_cast<int64_t>(sizeof(T)));
    // What the process holds besides the counted buffers while it builds (the I/O
    // threads' stacks, the allocator's freed-but-kept pages, code pages first touched
    // here, TBB's workers) shows in peak RSS: about 0.5-1.5 MiB (2M edges at an 8 MB
    // budget: 7.9 MiB above the start for 7.6 MiB; 2M text edges at 6 MiB: 7.0). Up to
    // 2 MiB (a quarter of the budget) is kept for it, as far as the budget leaves 64 KiB
    // of edges after it.
    const int64_t counted = table_bytes + BatchBytes(source_, batch_edges_) + scatter_bytes + writer_bytes;
    const int64_t slack_bytes = std::clamp<int64_t>(options_.memory_budget_bytes - counted - 64 * 1024, 0,
                                                    std::min<int64_t>(2 << 20, options_.memory_budget_bytes / 4));
    const int64_t fixed_bytes = counted + slack_bytes;
    int64_t avail = options_.memory_budget_bytes - fixed_bytes;
    // The radix sort's per-thread scratch, when it takes under an eighth of what is left.
    const int64_t radix_bytes = Threads() * kRadixMaxList * static_cast<int64_t>(sizeof(T));
    use_radix_ = radix_bytes * 8 <= avail;
    if (use_radix_) avail -= radix_bytes;
    if (avail < 64 * 1024) {
      return Status(StatusCode::kResourceExhausted,
                    "memory budget " + FormatBytes(options_.memory_budget_bytes) +
                        " cannot hold the CSC builder's per-node degree table (" +
                        FormatBytes(table_bytes) + " for " + std::to_string(num_nodes_) +
                        " nodes) plus " + FormatBytes(fixed_bytes - table_bytes) +
                        " of batch buffers and 64 KiB of edges; raise --memory-budget");
    }
    // Cut [0, num_nodes) into destination ranges whose edges fit in `avail`. With more
    // than one, the spill's scatter buffers also hold up to 2 x kDirectAlign of alignment
    // and carried tail per partition (twice: two buffers): cut again with that reserved.
    auto cut = [&](int64_t bytes) {
      const int64_t capacity_edges = std::max<int64_t>(1, bytes / static_cast<int64_t>(sizeof(T)));
      bounds_.assign(1, 0);
      stats_.largest_partition_edges = 0;
      int64_t acc = 0;
      for (int64_t v = 0; v < num_nodes_; ++v) {
        int64_t d = counts_[v];
        if (acc > 0 && acc + d > capacity_edges) {
          bounds_.push_back(v);
          stats_.largest_partition_edges = std::max(stats_.largest_partition_edges, acc);
          acc = 0;
        }
        acc += d;
      }
      stats_.largest_partition_edges = std::max(stats_.largest_partition_edges, acc);
      bounds_.push_back(num_nodes_);
      return capacity_edges;
    };
    int64_t capacity_edges = cut(avail);
    spill_direct_ = false;
    if (bounds_.size() > 2) {
      // O_DIRECT spills only when that reserve is under an eighth of the budget (else
      // buffered writes, no padding).
      for (int round = 0; round < 3 && !spill_direct_; ++round) {  // the count grows a little at most
        const int64_t reserve = static_cast<int64_t>(bounds_.size()) * 4 * kDirectAlign;
        if (reserve * 8 > avail) break;
        capacity_edges = cut(avail - reserve);
        spill_direct_ = (static_cast<int64_t>(bounds_.size()) - 1) * 4 * kDirectAlign <= reserve;
      }
      if (!spill_direct_) capacity_edges = cut(avail);
    }
    const int64_t num_partitions = static_cast<int64_t>(bounds_.size()) - 1;
    stats_.num_partitions = num_partitions;
    if (num_partitions > kMaxPartitions) {
      return Status(StatusCode::kResourceExhausted,
                    "memory budget " + FormatBytes(options_.memory_budget_bytes) + " is too small for " +
                        std::to_string(total_edges) + " edges: it would need " +
                        std::to_string(num_partitions) + " partitions (at most " +
                        std::to_string(kMaxPartitions) + "); raise --memory-budget");
    }
    // Two partition buffers (one being written while the next is built) when the budget
    // holds both; else the indices writes wait.
    overlap_indices_ = 2 * stats_.largest_partition_edges <= capacity_edges;
    if (num_partitions == 1) {
      // Everything fits: place straight from a second read of the source.
      SEER_RETURN_IF_ERROR(source_.Rewind());
      SEER_RETURN_IF_ERROR(BuildPartition(0, nullptr));
    } else {
      SEER_ASSIGN_OR_RETURN(spill_dir_, ScratchDir::Create(options_.spill_dir, "csc-spill"));
      SEER_RETURN_IF_ERROR(Spill(total_edges));
      ReturnFreedMemory();  // the scatter buffers, before the partitions' lists
      ProgressReporter progress("csc: sorting partitions", num_partitions, "partitions",
                                options_.show_progress);
      for (int64_t p = 0; p < num_partitions; ++p) {
        SEER_RETURN_IF_ERROR(BuildPartition(p, &spill_paths_[p]));
        ::unlink(spill_paths_[p].c_str());
        progress.Add(1);
      }
      progress.Finish();
    }
    SEER_RETURN_IF_ERROR(writer_.Wait());
    for (AlignedBuffer& lists : lists_) lists.Release();
    SEER_RETURN_IF_ERROR(WriteIndptr());
    return stats_;
  }

 private:
  int64_t PartitionOf(int64_t dst) const {
    return static_cast<int64_t>(std::upper_bound(bounds_.begin(), bounds_.end(), dst) -
                                bounds_.begin()) - 1;
  }

  // Pass 2: append every directed edge to its destination partition's file. Each batch
  // is bucketed by partition in parallel (slice-major counts, then a scatter into one
  // buffer grouped by partition) and written by the background writer while the next
  // batch is read and bucketed into the other buffer.
  Status Spill(int64_t total_edges) {
    const int64_t num_partitions = static_cast<int64_t>(bounds_.size()) - 1;
    std::vector<DirectAppendFile> files;
    for (int64_t p = 0; p < num_partitions; ++p) {
      spill_paths_.push_back(spill_dir_.File(fmt::format("part-{}.bin", p)));
      SEER_ASSIGN_OR_RETURN(DirectAppendFile file, DirectAppendFile::Create(spill_paths_.back(), spill_direct_));
      stats_.spill_direct = stats_.spill_direct || file.direct();
      files.push_back(std::move(file));
    }
    SEER_RETURN_IF_ERROR(source_.Rewind());
    ProgressReporter progress("csc: bucketing edges", total_edges, "edges", options_.show_progress);
    std::vector<Edge> chunk(static_cast<size_t>(batch_edges_));
    const int64_t per_input = options_.undirected ? 2 : 1;
    constexpr int64_t kPairBytes = 2 * static_cast<int64_t>(sizeof(T));
    // Two scatter buffers: one written by the background writer while the next batch is
    // bucketed into the other. Partition p's region in a buffer starts at a
    // kDirectAlign-aligned byte (when its file is direct) with the unwritten tail of its
    // previous region (< kDirectAlign bytes) copied in front, so every write is whole
    // aligned blocks; the last tails are written padded and truncated (Finish).
    AlignedBuffer buffers[2];
    std::vector<int64_t> region[2] = {std::vector<int64_t>(static_cast<size_t>(num_partitions)),
                                      std::vector<int64_t>(static_cast<size_t>(num_partitions))};
    std::vector<int64_t> tail(static_cast<size_t>(num_partitions));     // bytes not yet written
    std::vector<int64_t> tail_at(static_cast<size_t>(num_partitions));  // where, in the last buffer
    int current = 0;
    const int64_t slices = std::max<int64_t>(1, tbb::this_task_arena::max_concurrency()) * 4;
    std::vector<int64_t> slice_counts(static_cast<size_t>(slices * num_partitions));
    std::vector<int64_t> cursor(slice_counts.size());
    static_assert(kMaxPartitions <= 65535, "partition ids are uint16");
    std::vector<uint16_t> part_of(static_cast<size_t>(per_input * batch_edges_));
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t n, source_.Read(chunk.data(), batch_edges_));
      if (n == 0) break;
      const int64_t slice_len = (n + slices - 1) / slices;
      std::fill(slice_counts.begin(), slice_counts.end(), 0);
      auto for_slices = [&](auto&& body) {
        auto run = [&](int64_t s) {
          const int64_t b = std::min(n, s * slice_len), e = std::min(n, b + slice_len);
          int64_t ignored_self_loops = 0;
          for (int64_t i = b; i < e; ++i) {
            int64_t slot = per_input * i;  // the input's 1 or 2 emitted edges
            Expand(chunk[i], options_, &ignored_self_loops,
                   [&](int64_t src, int64_t dst) { body(s, slot++, src, dst); });
          }
        };
        if (n <= kGrainEdges) {
          for (int64_t s = 0; s < slices; ++s) run(s);
        } else {
          ParallelFor(int64_t{0}, slices, run);
        }
      };
      // The partition of every emitted edge, found once.
      if (num_partitions == 2) {
        const int64_t cut = bounds_[1];
        for_slices([&](int64_t s, int64_t slot, int64_t, int64_t dst) {
          const int64_t p = dst >= cut;
          part_of[static_cast<size_t>(slot)] = static_cast<uint16_t>(p);
          ++slice_counts[static_cast<size_t>(s * num_partitions + p)];
        });
      } else {
        for_slices([&](int64_t s, int64_t slot, int64_t, int64_t dst) {
          const int64_t p = PartitionOf(dst);
          part_of[static_cast<size_t>(slot)] = static_cast<uint16_t>(p);
          ++slice_counts[static_cast<size_t>(s * num_partitions + p)];
        });
      }
      // Regions, partition-major: the carried tail, then partition p's pairs from every
      // slice in slice order.
      const int previous = current ^ 1;
      std::vector<int64_t>& at = region[current];
      std::vector<int64_t> end(static_cast<size_t>(num_partitions));
      int64_t running = 0;
      for (int64_t p = 0; p < num_partitions; ++p) {
        // Every region starts aligned (direct), so a Finish()'s padding never reaches the next.
        if (spill_direct_) running = AlignUp(running);
        at[p] = running;
        int64_t pair_at = (running + tail[p]) / kPairBytes;
        for (int64_t s = 0; s < slices; ++s) {
          cursor[static_cast<size_t>(s * num_partitions + p)] = pair_at;
          pair_at += slice_counts[static_cast<size_t>(s * num_partitions + p)];
        }
        running = pair_at * kPairBytes;
        end[p] = running;
      }
      AlignedBuffer& buffer = buffers[current];
      // This buffer's last write (two batches ago) is done: Start() waited for it.
      buffer.Reserve(AlignUp(running) + kDirectAlign);
      for (int64_t p = 0; p < num_partitions; ++p) {
        if (tail[p] > 0) {
          std::memcpy(buffer.data() + at[p], buffers[previous].data() + tail_at[p], static_cast<size_t>(tail[p]));
        }
      }
      T* out = reinterpret_cast<T*>(buffer.data());
      for_slices([&](int64_t s, int64_t slot, int64_t src, int64_t dst) {
        int64_t& pos = cursor[static_cast<size_t>(s * num_partitions + part_of[static_cast<size_t>(slot)])];
        out[2 * pos] = static_cast<T>(src);
        out[2 * pos + 1] = static_cast<T>(dst);
        ++pos;
      });
      // What each partition writes now (whole aligned blocks when direct; everything
      // otherwise) and the tail it carries to the next batch.
      std::vector<std::pair<int64_t, int64_t>> jobs(static_cast<size_t>(num_partitions));
      for (int64_t p = 0; p < num_partitions; ++p) {
        const int64_t bytes = end[p] - at[p];
        const int64_t now = files[p].direct() ? AlignDown(bytes) : bytes;
        jobs[p] = {at[p], now};
        tail[p] = bytes - now;
        tail_at[p] = at[p] + now;
      }
      SEER_RETURN_IF_ERROR(writer_.Start([this, &files, &buffer, jobs = std::move(jobs)]() -> Status {
        for (size_t p = 0; p < jobs.size(); ++p) {
          if (jobs[p].second == 0) continue;
          SEER_RETURN_IF_ERROR(files[p].AppendAligned(buffer.data() + jobs[p].first, jobs[p].second));
          stats_.spill_bytes_written += jobs[p].second;
        }
        return Status::Ok();
      }));
      current ^= 1;
      progress.Add(n);
    }
    SEER_RETURN_IF_ERROR(writer_.Wait());
    const int last = current ^ 1;
    for (int64_t p = 0; p < num_partitions; ++p) {
      SEER_RETURN_IF_ERROR(files[p].Finish(buffers[last].data() + tail_at[p], tail[p]));
      stats_.spill_bytes_written += tail[p];
    }
    progress.Finish();
    return Status::Ok();
  }

  // Places `count` (src, dst) pairs of a spill chunk: one owner places them all (the
  // degree counters of the destinations a few pairs ahead are prefetched); several owners
  // get the chunk routed to them (RouteToOwners) and place in parallel.
  // Places count (src, dst) pairs into lists: each takes the next slot of its
  // destination (counts_[dst]++). Two prefetch stages hide the random accesses: the
  // counter of the destination 16 pairs ahead, and the list slot 8 pairs ahead (the
  // counter read early may be a slot or two behind by then: a neighbouring line at worst).
  // A slot beyond num_edges (an edge pass 1 did not count) sets *overflow.
  template <typename V>
  void PlaceRun(const V* pairs, int64_t count, T* lists, int64_t num_edges, bool* overflow) {
    constexpr int64_t kFar = 16, kNear = 8;
    int64_t* counts = counts_.data();
    bool over = false;
    for (int64_t i = 0; i < count; ++i) {
      if (i + kFar < count) __builtin_prefetch(counts + pairs[2 * (i + kFar) + 1], 1);
      if (i + kNear < count) {
        const int64_t ahead = counts[pairs[2 * (i + kNear) + 1]];
        if (ahead < num_edges) __builtin_prefetch(lists + ahead, 1);
      }
      const int64_t at = counts[pairs[2 * i + 1]]++;
      if (at < num_edges) {
        lists[at] = static_cast<T>(pairs[2 * i]);
      } else {
        over = true;
      }
    }
    if (over) *overflow = true;
  }

  // Places the pairs of a spill chunk: one owner directly; several get the chunk routed
  // to them (RouteToOwners) and place their groups in parallel.
  void PlacePairs(const T* pairs, int64_t count, const std::vector<int64_t>& cuts, T* lists, int64_t num_edges,
                  std::atomic<bool>* overflow) {
    if (cuts.size() == 2) {
      bool over = false;
      PlaceRun(pairs, count, lists, num_edges, &over);
      if (over) overflow->store(true);
      return;
    }
    RouteToOwners(
        count, 1, cuts, route_pairs_, route_owner_,
        [&](int64_t i, auto&& f) { f(static_cast<int64_t>(pairs[2 * i]), static_cast<int64_t>(pairs[2 * i + 1])); },
        [&](const T* group, int64_t n) {
          bool over = false;
          PlaceRun(group, n, lists, num_edges, &over);
          if (over) overflow->store(true);
        });
  }

  // Pass 3 for one partition: parallel placement (each edge takes the next slot of its
  // destination with an atomic increment), parallel per-list sort, dedup, append.
  // Reads the partition's spill file, or the source itself when spill_path is null.
  Status BuildPartition(int64_t p, const std::string* spill_path) {
    const int64_t lo = bounds_[p];
    const int64_t hi = bounds_[p + 1];
    // counts_[v] becomes v's cursor (local offset); after placement it is v's end.
    int64_t num_edges = 0;
    for (int64_t v = lo; v < hi; ++v) {
      int64_t d = counts_[v];
      counts_[v] = num_edges;
      num_edges += d;
    }
    // With two buffers, partition p-1's may still be written (one job at a time, so
    // p-2's, which used this one, is done); with one, wait for its write.
    AlignedBuffer& buffer = lists_[overlap_indices_ ? p % 2 : 0];
    if (!overlap_indices_) SEER_RETURN_IF_ERROR(writer_.Wait());
    // Exactly the partition's lists (the budget counts them), rounded to a block. Not
    // cleared: placement fills every slot, or the check after it refuses the partition.
    buffer.Reserve(num_edges * static_cast<int64_t>(sizeof(T)));
    T* const lists = reinterpret_cast<T*>(buffer.data());
    // Owners get node ranges holding about equal numbers of edges (counts_ holds each
    // node's start offset here).
    std::vector<int64_t> cuts = {lo};
    for (int64_t t = 1, owners = Owners(); t < owners; ++t) {
      const int64_t target = num_edges * t / owners;
      cuts.push_back(std::max(cuts.back(), static_cast<int64_t>(
          std::lower_bound(counts_.begin() + lo, counts_.begin() + hi, target) - counts_.begin())));
    }
    cuts.push_back(hi);
    std::atomic<bool> overflow{false};
    auto place = [&](int64_t src, int64_t dst) {
      const int64_t at = counts_[dst]++;
      if (at < num_edges) {
        lists[at] = static_cast<T>(src);
      } else {
        overflow.store(true, std::memory_order_relaxed);
      }
    };
    if (spill_path == nullptr) {
      ProgressReporter progress("csc: placing edges", source_.num_edges_hint(), "edges",
                                options_.show_progress);
      std::vector<Edge> chunk(static_cast<size_t>(batch_edges_));
      for (;;) {
        SEER_ASSIGN_OR_RETURN(int64_t n, source_.Read(chunk.data(), batch_edges_));
        if (n == 0) break;
        int64_t ignored_self_loops = 0;
        if (cuts.size() == 2 && !options_.undirected && !options_.drop_self_loops) {
          // Every edge is placed as it is: the batch is (src, dst) int64 pairs, placed with
          // the prefetching loop (20M R-MAT edges, 1 thread: placement ~35 % less CPU).
          bool over = false;
          PlaceRun(reinterpret_cast<const int64_t*>(chunk.data()), n, lists, num_edges, &over);
          if (over) overflow.store(true);
        } else if (cuts.size() == 2) {
          for (int64_t i = 0; i < n; ++i) Expand(chunk[i], options_, &ignored_self_loops, place);
        } else {
          RouteToOwners(
              n, options_.undirected ? 2 : 1, cuts, route_pairs_, route_owner_,
              [&](int64_t i, auto&& f) {
                int64_t ignored = 0;
                Expand(chunk[i], options_, &ignored, f);
              },
              [&](const T* group, int64_t count) {
                bool over = false;
                PlaceRun(group, count, lists, num_edges, &over);
                if (over) overflow.store(true);
              });
        }
        progress.Add(n);
      }
      progress.Finish();
    } else {
      SEER_ASSIGN_OR_RETURN(DirectReadFile file, DirectReadFile::Open(*spill_path, spill_direct_));
      const int64_t size_bytes = file.size();
      if (size_bytes != num_edges * 2 * static_cast<int64_t>(sizeof(T))) {
        return Corrupt("spill file " + *spill_path + " has " + std::to_string(size_bytes) +
                       " bytes, expected " +
                       std::to_string(num_edges * 2 * static_cast<int64_t>(sizeof(T))) +
                       " (edge source changed between passes?)");
      }
      // Chunks of whole aligned blocks (whole pairs too: kDirectAlign is a multiple of
      // 16), the next one read in the background while this one is placed: two chunks of
      // half a batch of pairs each, so together no more than one batch of pairs.
      const int64_t chunk_bytes =
          std::max(kDirectAlign, AlignDown(batch_edges_ * static_cast<int64_t>(sizeof(T))));
      for (AlignedBuffer& b : read_buffers_) b.Reserve(chunk_bytes);
      auto read = [&file, size_bytes, chunk_bytes](AlignedBuffer* b, int64_t off) -> Status {
        return file.Read(b->data(), off, std::min(chunk_bytes, size_bytes - off));
      };
      if (size_bytes > 0) SEER_RETURN_IF_ERROR(read(&read_buffers_[0], 0));
      int cur = 0;
      for (int64_t off = 0; off < size_bytes; off += chunk_bytes) {
        const int64_t count = std::min(chunk_bytes, size_bytes - off) / static_cast<int64_t>(2 * sizeof(T));
        std::future<Status> ahead;
        if (off + chunk_bytes < size_bytes) {
          ahead = std::async(std::launch::async, read, &read_buffers_[cur ^ 1], off + chunk_bytes);
        }
        const T* pairs = reinterpret_cast<const T*>(read_buffers_[cur].data());
        PlacePairs(pairs, count, cuts, lists, num_edges, &overflow);
        if (ahead.valid()) SEER_RETURN_IF_ERROR(ahead.get());
        cur ^= 1;
      }
    }
    // The second pass must give exactly the edges the first one counted: then the ends
    // are non-decreasing and the last one is the partition's edge count.
    const int64_t disorder = FirstBad(hi - lo, [&](int64_t i) {
      const int64_t v = lo + i;
      return counts_[v] < (v == lo ? 0 : counts_[v - 1]) || counts_[v] > num_edges;
    });
    if (overflow.load() || disorder >= 0 || (hi > lo && counts_[hi - 1] != num_edges)) {
      return Corrupt(source_.name() + ": edge source returned a different edge set on the "
                     "second pass (partition " + std::to_string(p) + ")");
    }
    // Sort each list (parallel over nodes; the list of v is [end of v-1, end of v)),
    // compact in place (dedup may shorten lists; counts_[v] becomes v's new degree) and
    // append, in segments of about options_.write_segment_edges (default 2 Mi: 8 MiB of
    // uint32 indices, so the last segment's write, which nothing overlaps, is short; a
    // list longer than that is a segment alone): segment k's write runs on the
    // background writer while segment k+1 is sorted, so the output's kernel copy overlaps
    // the sort instead of following it. Compaction moves lists left only into bytes no
    // pending write covers (a segment's write ends where its compacted lists end).
    int64_t begin = 0;
    int64_t write = 0;
    int64_t segment_first = 0;  // the first list entry not yet handed to the writer
    for (int64_t seg_lo = lo; seg_lo < hi;) {
      // The segment: nodes from seg_lo whose lists end within write_segment_edges.
      // counts_ before seg_lo already holds new degrees: the segment starts at `begin`.
      const int64_t base = begin;
      int64_t seg_hi = static_cast<int64_t>(
          std::upper_bound(counts_.begin() + seg_lo, counts_.begin() + hi, base + std::max<int64_t>(1, options_.write_segment_edges)) -
          counts_.begin());
      seg_hi = std::min(hi, std::max(seg_hi, seg_lo + 1));
      ParallelFor(tbb::blocked_range<int64_t>(seg_lo, seg_hi, 256), [&](const tbb::blocked_range<int64_t>& r) {
        for (int64_t v = r.begin(); v < r.end(); ++v) {
          const int64_t first = v == seg_lo ? base : counts_[v - 1];
          SortList(lists + first, lists + counts_[v], use_radix_);
        }
      });
      // Sequential: later lists move left over earlier ones.
      for (int64_t v = seg_lo; v < seg_hi; ++v) {
        const int64_t end = counts_[v];
        T* first = lists + begin;
        T* last = lists + end;
        if (options_.dedup) {
          T* new_last = std::unique(first, last);
          stats_.duplicates_dropped += last - new_last;
          last = new_last;
        }
        const int64_t len = last - first;
        if (write != begin) std::copy(first, last, lists + write);
        write += len;
        counts_[v] = len;
        begin = end;
      }
      // With an O_DIRECT writer, whole blocks go now and the partial last block waits
      // for the next segment (the partition's last segment writes all it has: its tail
      // goes buffered, and a later partition, now at an unaligned offset, buffered too).
      int64_t upto = write;
      if (indices_out_.direct() && seg_hi < hi) {
        constexpr int64_t kBlock = kDirectAlign;
        upto = write * static_cast<int64_t>(sizeof(T)) / kBlock * kBlock / static_cast<int64_t>(sizeof(T));
      }
      if (upto > segment_first) {
        const T* from = lists + segment_first;
        const int64_t bytes = (upto - segment_first) * static_cast<int64_t>(sizeof(T));
        SEER_RETURN_IF_ERROR(writer_.Start([this, from, bytes]() -> Status {
          return indices_out_.AppendDirect(from, bytes);
        }));
        segment_first = upto;
      }
      seg_lo = seg_hi;
    }
    stats_.num_edges += write;
    // The buffer stays as it is: a pending write may still read it.
    return Status::Ok();
  }

  Status WriteIndptr() {
    std::vector<int64_t> chunk;
    chunk.reserve(static_cast<size_t>(std::min<int64_t>(65536, num_nodes_ + 1)));
    int64_t running = 0;
    chunk.push_back(0);
    for (int64_t v = 0; v < num_nodes_; ++v) {
      running += counts_[v];
      chunk.push_back(running);
      if (chunk.size() == chunk.capacity()) {
        SEER_RETURN_IF_ERROR(indptr_out_.AppendValues(chunk.data(), static_cast<int64_t>(chunk.size())));
        chunk.clear();
      }
    }
    return indptr_out_.AppendValues(chunk.data(), static_cast<int64_t>(chunk.size()));
  }

  EdgeSource& source_;
  const CscBuildOptions& options_;
  AtomicFileWriter& indptr_out_;
  AtomicFileWriter& indices_out_;
  CscBuildStats stats_;
  int64_t num_nodes_ = 0;
  int64_t batch_edges_ = kMinBatchEdges;
  std::vector<int64_t> counts_;
  std::vector<int64_t> bounds_;
  ScratchDir spill_dir_;  // .seer-csc-spill-PID-*: the partition files
  std::vector<std::string> spill_paths_;
  // Partition buffers (aligned: whole blocks of sorted lists go to an O_DIRECT writer
  // straight from them).
  AlignedBuffer lists_[2];
  bool overlap_indices_ = false;
  bool use_radix_ = false;     // long lists radix-sorted (the scratch fits the budget)
  bool spill_direct_ = false;
  AlignedBuffer read_buffers_[2];  // spill chunks: one placed, the next being read
  std::vector<T> route_pairs_;     // a chunk routed by owner (several owners only)
  std::vector<uint16_t> route_owner_;  // spill files written and read with O_DIRECT where allowed
  BackgroundWriter writer_;  // last: destroyed (joined) first
};

}  // namespace
Result<CscBuildStats> BuildCsc(EdgeSource& source, const CscBuildOptions& options,
                               AtomicFileWriter& indptr_out, AtomicFileWriter& indices_out) {
  CscBuildStats stats;
  int64_t num_nodes = options.num_nodes >= 0 ? options.num_nodes : source.num_nodes();
  const bool known = num_nodes >= 0;
  // Compared as num_nodes > budget / 8 - 1: (num_nodes + 1) * 8 overflows for ids near 2^63.
  if (known && num_nodes > options.memory_budget_bytes / 8 - 1) {
    return Status(StatusCode::kResourceExhausted,
                  "memory budget " + FormatBytes(options.memory_budget_bytes) +
                      " cannot hold the per-node degree table (" +
                      (num_nodes < (int64_t{1} << 59) ? FormatBytes((num_nodes + 1) * 8) : std::string("over 4 EiB")) +
                      " for " + std::to_string(num_nodes) + " nodes); raise --memory-budget");
  }
  if (known && options.index_dtype == IndexDtype::kUint32 && num_nodes > (int64_t{1} << 32)) {
    return InvalidArgument("index dtype uint32 cannot address " + std::to_string(num_nodes) +
                           " nodes (ids must be < 2^32); use int64");
  }
  // Pass 1: in-degrees (after self-loop removal and reverse edges).
  std::vector<int64_t> counts(known ? static_cast<size_t>(num_nodes) + 1 : 0, 0);
  int64_t max_id = -1;
  int64_t total_edges = 0;
  SEER_RETURN_IF_ERROR(source.Rewind());
  // A source costly to read again (text) has its edges staged for the later passes.
  ScratchDir stage_dir;
  std::unique_ptr<EdgeStager> stager;
  constexpr uint64_t kStagedIdLimit = uint64_t{1} << 32;
  if (source.CostlyToReread() && (!known || static_cast<uint64_t>(num_nodes) <= kStagedIdLimit)) {
    SEER_ASSIGN_OR_RETURN(stage_dir, ScratchDir::Create(options.spill_dir, "csc-spill"));
    SEER_ASSIGN_OR_RETURN(stager, EdgeStager::Create(stage_dir.File("staged-edges.bin")));
  }
  BackgroundWriter stage_writer;  // after the stager: joined before it goes
  {
    ProgressReporter progress("csc: counting degrees", source.num_edges_hint(), "edges",
                              options.show_progress);
    // The batch is sized before the table is known: charge it as if int64 indices.
    const int64_t batch_edges = BatchEdgesFor(source, options, known ? (num_nodes + 1) * 8 : 0, 8,
                                              stager ? EdgeStager::kBytesPerEdge : 0);
    const int64_t batch_bytes =
        BatchBytes(source, batch_edges) +
        (stager ? batch_edges * EdgeStager::kBytesPerEdge + EdgeStager::kFixedBytes : 0);
    std::vector<Edge> chunk(static_cast<size_t>(batch_edges));
    // With several owners: the batch routed by owner (int64 pairs and 2 B owner ids per
    // emitted edge: within the scatter share BatchEdgesFor charges).
    const int64_t per_input = options.undirected ? 2 : 1;
    std::vector<int64_t> route_pairs;
    std::vector<uint16_t> route_owner;
    // (hi + 2) * 8 + batch_bytes > budget, without overflowing for ids near 2^63.
    auto too_large = [&](int64_t hi) { return hi > (options.memory_budget_bytes - batch_bytes) / 8 - 2; };
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t n, source.Read(chunk.data(), batch_edges));
      if (n == 0) break;
      // One vectorisable pass: the largest id as unsigned (a negative id is huge), then
      // the exact first bad edge only when there is one.
      const uint64_t umax = MaxIdUnsigned(chunk.data(), n);
      const bool suspect = known ? umax >= static_cast<uint64_t>(num_nodes)
                                 : (umax > static_cast<uint64_t>(INT64_MAX) || too_large(static_cast<int64_t>(umax)));
      const int64_t bad = !suspect ? -1 : FirstBad(n, [&](int64_t i) {
        const Edge& e = chunk[i];
        if (e.src < 0 || e.dst < 0) return true;
        return known ? (e.src >= num_nodes || e.dst >= num_nodes) : too_large(std::max(e.src, e.dst));
      });
      if (bad >= 0) {
        const Edge& e = chunk[bad];
        const int64_t edge_number = stats.input_edges + bad;
        if (known || e.src < 0 || e.dst < 0) return BadId(source, edge_number, e, num_nodes);
        return Status(StatusCode::kResourceExhausted,
                      source.name() + ": edge #" + std::to_string(edge_number) + " has node id " +
                          std::to_string(std::max(e.src, e.dst)) +
                          ", whose degree table would exceed the memory budget " +
                          FormatBytes(options.memory_budget_bytes) + "; raise --memory-budget");
      }
      if (stager) {
        if (umax >= kStagedIdLimit) {  // ids beyond 32 bits: read the source again instead
          (void)stage_writer.Wait();
          const std::string path = stager->path();
          stager.reset();
          ::unlink(path.c_str());
        } else {
          SEER_RETURN_IF_ERROR(stager->Add(chunk.data(), n, stage_writer));
        }
      }
      if (!known) {
        const int64_t hi = static_cast<int64_t>(umax);
        if (hi >= static_cast<int64_t>(counts.size())) {
          const size_t cap = static_cast<size_t>((options.memory_budget_bytes - batch_bytes) / 8 - 1);
          counts.resize(std::max<size_t>(static_cast<size_t>(hi) + 1,
                                         std::min(counts.size() * 2, cap)), 0);
        }
        max_id = std::max(max_id, hi);
      }
      std::atomic<int64_t> self_loops{0}, expanded{0};
      const std::vector<int64_t> cuts = EqualCuts(0, static_cast<int64_t>(counts.size()));
      if (cuts.size() == 2 && !options.undirected && !options.drop_self_loops) {
        // Every edge counts once as it is: the batch is (src, dst) int64 pairs.
        CountRun(reinterpret_cast<const int64_t*>(chunk.data()), n, counts.data());
        expanded += n;
      } else if (cuts.size() == 2) {
        int64_t local_loops = 0, local_edges = 0;
        for (int64_t i = 0; i < n; ++i) {
          Expand(chunk[i], options, &local_loops, [&](int64_t, int64_t dst) {
            ++counts[static_cast<size_t>(dst)];
            ++local_edges;
          });
        }
        self_loops += local_loops;
        expanded += local_edges;
      } else {
        expanded += RouteToOwners(
            n, per_input, cuts, route_pairs, route_owner,
            [&](int64_t i, auto&& f) {
              int64_t ignored_self_loops = 0;
              Expand(chunk[i], options, &ignored_self_loops, f);
            },
            [&](const int64_t* pairs, int64_t count) { CountRun(pairs, count, counts.data()); });
        if (options.drop_self_loops) {
          std::atomic<int64_t> loops{0};
          ParallelChunks(n, [&](int64_t b, int64_t e) {
            int64_t local = 0;
            for (int64_t i = b; i < e; ++i) local += chunk[i].src == chunk[i].dst;
            loops += local;
          });
          self_loops += loops.load();
        }
      }
      stats.self_loops_dropped += self_loops.load();
      total_edges += expanded.load();
      stats.input_edges += n;
      progress.Add(n);
    }
    progress.Finish();
  }
  if (!known) {
    num_nodes = std::max(max_id + 1, options.min_num_nodes);
    if (num_nodes > options.memory_budget_bytes / 8 - 1) {
      return Status(StatusCode::kResourceExhausted,
                    "memory budget " + FormatBytes(options.memory_budget_bytes) +
                        " cannot hold the per-node degree table for " + std::to_string(num_nodes) +
                        " nodes; raise --memory-budget");
    }
    counts.resize(static_cast<size_t>(num_nodes) + 1);
    counts.shrink_to_fit();
  }
  stats.num_nodes = num_nodes;
  IndexDtype dtype = options.index_dtype.value_or(IndexDtypeFor(num_nodes));
  if (dtype == IndexDtype::kUint32 && num_nodes > (int64_t{1} << 32)) {
    return InvalidArgument("index dtype uint32 cannot address " + std::to_string(num_nodes) +
                           " nodes (ids must be < 2^32); use int64");
  }
  stats.index_dtype = dtype;
  std::unique_ptr<StagedEdgeSource> staged;
  if (stager) {
    SEER_RETURN_IF_ERROR(stager->Finish(stage_writer));
    staged = std::make_unique<StagedEdgeSource>(stager->path(), stager->edges(), num_nodes, source.name(),
                                                stager->direct());
    stager.reset();  // its buffers
    source.ReleaseBuffers();  // the text reader's block: not read again
    ReturnFreedMemory();
    stats.staged_edges = true;
  }
  EdgeSource& again = staged ? *staged : source;
  // indices.bin's blocks go from the partition buffers with O_DIRECT where the file
  // system allows it (no page-cache copy of the largest output; buffered on tmpfs).
  if (indices_out.bytes_written() == 0) stats.indices_direct = indices_out.EnableDirect();
  if (dtype == IndexDtype::kUint32) {
    CscBuild<uint32_t> build(again, options, indptr_out, indices_out);
    return build.Run(std::move(counts), num_nodes, total_edges, stats);
  }
  CscBuild<int64_t> build(again, options, indptr_out, indices_out);
  return build.Run(std::move(counts), num_nodes, total_edges, stats);
}

}  // namespace seer
