#include "storage/prep/csc_builder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <vector>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr int64_t kChunkEdges = 16384;  // 256 KiB of Edge per read
constexpr int64_t kMaxPartitions = 1000;  // stays under the usual 1024 open-file limit
constexpr int64_t kMinSpillBufferBytes = 4096;
constexpr int64_t kMaxSpillBufferBytes = 1 << 20;

// A private directory for partition files; removes them and itself when destroyed.
class SpillDir {
 public:
  static Result<std::unique_ptr<SpillDir>> Create(const std::string& parent) {
    std::string pattern = (parent.empty() ? std::string(".") : parent) + "/.seer-csc-spill-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) return ErrnoStatus(errno, "mkdtemp", pattern);
    return std::unique_ptr<SpillDir>(new SpillDir(buf.data()));
  }
  ~SpillDir() {
    for (const auto& f : files_) ::unlink(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string NewFile(int64_t index) {
    files_.push_back(path_ + "/part-" + std::to_string(index) + ".bin");
    return files_.back();
  }

 private:
  explicit SpillDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<std::string> files_;
};

// Applies the options to one input edge and hands 0, 1 or 2 directed edges to `emit`.
// Both passes go through here, so counting and placing always agree.
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

Status BadId(const EdgeSource& source, int64_t edge_number, const Edge& e, int64_t num_nodes) {
  return InvalidArgument(source.name() + ": edge #" + std::to_string(edge_number) + " (" +
                         std::to_string(e.src) + " -> " + std::to_string(e.dst) +
                         "): node id out of range [0, " + std::to_string(num_nodes) + ")");
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
    const int64_t fixed_bytes = table_bytes + kChunkEdges * static_cast<int64_t>(sizeof(Edge));
    const int64_t avail = options_.memory_budget_bytes - fixed_bytes;
    if (avail < 64 * 1024) {
      return Status(StatusCode::kResourceExhausted,
                    "memory budget " + FormatBytes(options_.memory_budget_bytes) +
                        " cannot hold the CSC builder's per-node degree table (" +
                        FormatBytes(table_bytes) + " for " + std::to_string(num_nodes_) +
                        " nodes) plus 64 KiB of edges; raise --memory-budget");
    }
    // Cut [0, num_nodes) into destination ranges whose edges fit in `avail`.
    const int64_t capacity_edges = std::max<int64_t>(1, avail / static_cast<int64_t>(sizeof(T)));
    bounds_.push_back(0);
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
    const int64_t num_partitions = static_cast<int64_t>(bounds_.size()) - 1;
    stats_.num_partitions = num_partitions;
    if (num_partitions > kMaxPartitions) {
      return Status(StatusCode::kResourceExhausted,
                    "memory budget " + FormatBytes(options_.memory_budget_bytes) + " is too small for " +
                        std::to_string(total_edges) + " edges: it would need " +
                        std::to_string(num_partitions) + " partitions (at most " +
                        std::to_string(kMaxPartitions) + "); raise --memory-budget");
    }
    if (num_partitions == 1) {
      // Everything fits: place straight from a second read of the source.
      SEER_RETURN_IF_ERROR(source_.Rewind());
      SEER_RETURN_IF_ERROR(BuildPartition(0, nullptr));
    } else {
      SEER_ASSIGN_OR_RETURN(spill_dir_, SpillDir::Create(options_.spill_dir));
      SEER_RETURN_IF_ERROR(Spill(avail, total_edges));
      ProgressReporter progress("csc: sorting partitions", num_partitions, "partitions",
                                options_.show_progress);
      for (int64_t p = 0; p < num_partitions; ++p) {
        SEER_RETURN_IF_ERROR(BuildPartition(p, &spill_paths_[p]));
        ::unlink(spill_paths_[p].c_str());
        progress.Add(1);
      }
      progress.Finish();
    }
    SEER_RETURN_IF_ERROR(WriteIndptr());
    return stats_;
  }

 private:
  int64_t PartitionOf(int64_t dst) const {
    return static_cast<int64_t>(std::upper_bound(bounds_.begin(), bounds_.end(), dst) -
                                bounds_.begin()) - 1;
  }

  // Pass 2: append every directed edge to its destination partition's file.
  Status Spill(int64_t avail, int64_t total_edges) {
    const int64_t num_partitions = static_cast<int64_t>(bounds_.size()) - 1;
    int64_t buffer_bytes = std::clamp<int64_t>(avail / num_partitions, kMinSpillBufferBytes,
                                               kMaxSpillBufferBytes);
    const size_t buffer_values = static_cast<size_t>(buffer_bytes / (2 * sizeof(T))) * 2;
    std::vector<UniqueFd> fds;
    std::vector<std::vector<T>> buffers(num_partitions);
    for (int64_t p = 0; p < num_partitions; ++p) {
      spill_paths_.push_back(spill_dir_->NewFile(p));
      SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(spill_paths_.back(),
                                                        O_WRONLY | O_CREAT | O_TRUNC, 0600));
      fds.push_back(std::move(fd));
      buffers[p].reserve(buffer_values);
    }
    auto flush = [&](int64_t p) -> Status {
      auto& b = buffers[p];
      if (b.empty()) return Status::Ok();
      int64_t bytes = static_cast<int64_t>(b.size() * sizeof(T));
      SEER_RETURN_IF_ERROR(WriteFull(fds[p].get(), b.data(), bytes, spill_paths_[p]));
      stats_.spill_bytes_written += bytes;
      b.clear();
      return Status::Ok();
    };
    SEER_RETURN_IF_ERROR(source_.Rewind());
    ProgressReporter progress("csc: bucketing edges", total_edges, "edges", options_.show_progress);
    std::vector<Edge> chunk(kChunkEdges);
    Status error;
    int64_t ignored_self_loops = 0;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t n, source_.Read(chunk.data(), kChunkEdges));
      if (n == 0) break;
      for (int64_t i = 0; i < n && error.ok(); ++i) {
        Expand(chunk[i], options_, &ignored_self_loops, [&](int64_t src, int64_t dst) {
          int64_t p = PartitionOf(dst);
          auto& b = buffers[p];
          b.push_back(static_cast<T>(src));
          b.push_back(static_cast<T>(dst));
          if (b.size() >= buffer_values) error = flush(p);
        });
      }
      SEER_RETURN_IF_ERROR(error);
      progress.Add(n);
    }
    for (int64_t p = 0; p < num_partitions; ++p) {
      SEER_RETURN_IF_ERROR(flush(p));
      SEER_RETURN_IF_ERROR(fds[p].Close(spill_paths_[p]));
    }
    progress.Finish();
    return Status::Ok();
  }

  // Pass 3 for one partition: counting-sort placement, per-list sort (+dedup), append.
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
    std::vector<T> lists(static_cast<size_t>(num_edges));
    auto place = [&](int64_t src, int64_t dst) {
      lists[static_cast<size_t>(counts_[dst]++)] = static_cast<T>(src);
    };
    if (spill_path == nullptr) {
      ProgressReporter progress("csc: placing edges", source_.num_edges_hint(), "edges",
                                options_.show_progress);
      std::vector<Edge> chunk(kChunkEdges);
      int64_t ignored_self_loops = 0;
      for (;;) {
        SEER_ASSIGN_OR_RETURN(int64_t n, source_.Read(chunk.data(), kChunkEdges));
        if (n == 0) break;
        for (int64_t i = 0; i < n; ++i) Expand(chunk[i], options_, &ignored_self_loops, place);
        progress.Add(n);
      }
      progress.Finish();
    } else {
      SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(*spill_path, O_RDONLY));
      SEER_ASSIGN_OR_RETURN(int64_t size_bytes, FileSizeBytes(fd.get(), *spill_path));
      if (size_bytes != num_edges * 2 * static_cast<int64_t>(sizeof(T))) {
        return Corrupt("spill file " + *spill_path + " has " + std::to_string(size_bytes) +
                       " bytes, expected " +
                       std::to_string(num_edges * 2 * static_cast<int64_t>(sizeof(T))) +
                       " (edge source changed between passes?)");
      }
      std::vector<T> pairs(2 * kChunkEdges);
      for (int64_t off = 0; off < size_bytes;) {
        int64_t len = std::min<int64_t>(size_bytes - off,
                                        static_cast<int64_t>(pairs.size() * sizeof(T)));
        SEER_RETURN_IF_ERROR(PreadFull(fd.get(), pairs.data(), len, off, *spill_path));
        int64_t values = len / static_cast<int64_t>(sizeof(T));
        for (int64_t i = 0; i < values; i += 2) {
          place(static_cast<int64_t>(pairs[i]), static_cast<int64_t>(pairs[i + 1]));
        }
        off += len;
      }
    }
    // Sort each list; compact in place (dedup may shorten lists); counts_[v] = new degree.
    int64_t begin = 0;
    int64_t write = 0;
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t end = counts_[v];
      T* first = lists.data() + begin;
      T* last = lists.data() + end;
      std::sort(first, last);
      if (options_.dedup) {
        T* new_last = std::unique(first, last);
        stats_.duplicates_dropped += last - new_last;
        last = new_last;
      }
      const int64_t len = last - first;
      if (write != begin) std::copy(first, last, lists.data() + write);
      write += len;
      counts_[v] = len;
      begin = end;
    }
    if (begin != num_edges) {
      return Corrupt(source_.name() + ": edge source returned a different edge set on the "
                     "second pass (partition " + std::to_string(p) + ")");
    }
    stats_.num_edges += write;
    return indices_out_.AppendValues(lists.data(), write);
  }

  Status WriteIndptr() {
    std::vector<int64_t> chunk;
    chunk.reserve(65536);
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
  std::vector<int64_t> counts_;
  std::vector<int64_t> bounds_;
  std::unique_ptr<SpillDir> spill_dir_;
  std::vector<std::string> spill_paths_;
};

}  // namespace

Result<CscBuildStats> BuildCsc(EdgeSource& source, const CscBuildOptions& options,
                               AtomicFileWriter& indptr_out, AtomicFileWriter& indices_out) {
  CscBuildStats stats;
  int64_t num_nodes = options.num_nodes >= 0 ? options.num_nodes : source.num_nodes();
  const bool known = num_nodes >= 0;
  if (known && (num_nodes + 1) * 8 > options.memory_budget_bytes) {
    return Status(StatusCode::kResourceExhausted,
                  "memory budget " + FormatBytes(options.memory_budget_bytes) +
                      " cannot hold the per-node degree table (" +
                      FormatBytes((num_nodes + 1) * 8) + " for " + std::to_string(num_nodes) +
                      " nodes); raise --memory-budget");
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
  {
    ProgressReporter progress("csc: counting degrees", source.num_edges_hint(), "edges",
                              options.show_progress);
    std::vector<Edge> chunk(kChunkEdges);
    for (;;) {
      SEER_ASSIGN_OR_RETURN(int64_t n, source.Read(chunk.data(), kChunkEdges));
      if (n == 0) break;
      for (int64_t i = 0; i < n; ++i) {
        const Edge& e = chunk[i];
        const int64_t edge_number = stats.input_edges + i;
        if (e.src < 0 || e.dst < 0 || (known && (e.src >= num_nodes || e.dst >= num_nodes))) {
          return BadId(source, edge_number, e, num_nodes);
        }
        if (!known) {
          int64_t hi = std::max(e.src, e.dst);
          if (hi >= static_cast<int64_t>(counts.size())) {
            if ((hi + 2) * 8 > options.memory_budget_bytes) {
              return Status(StatusCode::kResourceExhausted,
                            source.name() + ": edge #" + std::to_string(edge_number) +
                                " has node id " + std::to_string(hi) +
                                ", whose degree table would exceed the memory budget " +
                                FormatBytes(options.memory_budget_bytes) + "; raise --memory-budget");
            }
            const size_t cap = static_cast<size_t>(options.memory_budget_bytes / 8 - 1);
            counts.resize(std::max<size_t>(static_cast<size_t>(hi) + 1,
                                           std::min(counts.size() * 2, cap)), 0);
          }
          max_id = std::max(max_id, hi);
        }
        Expand(e, options, &stats.self_loops_dropped, [&](int64_t, int64_t dst) {
          ++counts[static_cast<size_t>(dst)];
          ++total_edges;
        });
      }
      stats.input_edges += n;
      progress.Add(n);
    }
    progress.Finish();
  }
  if (!known) {
    num_nodes = max_id + 1;
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
  if (dtype == IndexDtype::kUint32) {
    CscBuild<uint32_t> build(source, options, indptr_out, indices_out);
    return build.Run(std::move(counts), num_nodes, total_edges, stats);
  }
  CscBuild<int64_t> build(source, options, indptr_out, indices_out);
  return build.Run(std::move(counts), num_nodes, total_edges, stats);
}

}  // namespace seer
