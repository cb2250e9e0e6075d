#include "cache/degrees.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {

namespace {

template <typename Index>
Status CountChunk(const Index* values, int64_t count, int64_t first_element,
                  int64_t num_nodes, const std::string& path, std::vector<int64_t>* out) {
  int64_t* degrees = out->data();
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t u = static_cast<uint64_t>(values[i]);
    if (u >= static_cast<uint64_t>(num_nodes)) {
      return NeighborIdOutOfRange(path, static_cast<int64_t>(values[i]),
                                  (first_element + i) * static_cast<int64_t>(sizeof(Index)), num_nodes);
    }
    ++degrees[u];
  }
  return Status::Ok();
}

}  // namespace

Status NeighborIdOutOfRange(const std::string& path, int64_t id, int64_t byte_offset, int64_t num_nodes) {
  return Corrupt(fmt::format("{}: neighbor id {} at byte offset {} is >= num_nodes {}", path, id, byte_offset,
                             num_nodes));
}

namespace {

// One indices file of a dataset: a homogeneous dataset's indices.bin, or one relation's of
// a typed dataset, whose source-type local ids become global ids by adding `offset`.
struct IndicesFile {
  std::string path;
  int64_t index_bytes = 4;
  int64_t num_edges = 0;
  int64_t offset = 0;  // global id of local id 0
  int64_t bound = 0;   // ids must be < bound (local)
};

std::vector<IndicesFile> IndicesFiles(const Dataset& dataset) {
  const DatasetManifest& m = dataset.manifest();
  if (!m.typed()) {
    return {IndicesFile{dataset.PathOf(dataset_files::kIndices), m.index_bytes(), m.num_edges, 0, m.num_nodes}};
  }
  std::vector<IndicesFile> files;
  for (const DatasetRelation& r : m.relations) {
    int64_t offset = 0, bound = 0;
    for (const DatasetNodeType& t : m.node_types) {
      if (t.name == r.src) {
        bound = t.count;
        break;
      }
      offset += t.count;
    }
    files.push_back(IndicesFile{dataset.PathOf(r.indices), IndexDtypeBytes(r.index_dtype), r.num_edges, offset, bound});
  }
  return files;
}

Status ScanIndicesFile(const IndicesFile& file, int64_t chunk_bytes_hint, const IndicesChunkFn& visit) {
  const std::string& path = file.path;
  const int64_t index_bytes = file.index_bytes;
  const int64_t total_bytes = file.num_edges * index_bytes;
  if (total_bytes == 0) return Status::Ok();
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(int64_t file_bytes, FileSizeBytes(fd.get(), path));
  if (file_bytes < total_bytes) {
    return Status(StatusCode::kUnexpectedEof, fmt::format("{}: {} bytes, manifest needs {} (num_edges {})", path,
                                                          file_bytes, total_bytes, file.num_edges));
  }
  (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  // Chunks are a multiple of 8 bytes so an entry never straddles two chunks.
  const int64_t chunk_bytes = std::max<int64_t>(8, chunk_bytes_hint / 8 * 8);
  std::unique_ptr<char[]> buffer(new char[static_cast<size_t>(chunk_bytes)]);
  for (int64_t offset = 0; offset < total_bytes; offset += chunk_bytes) {
    const int64_t length = std::min(chunk_bytes, total_bytes - offset);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.get(), length, offset, path));
    SEER_RETURN_IF_ERROR(visit(buffer.get(), length / index_bytes, offset / index_bytes));
  }
  return Status::Ok();
}

}  // namespace

Status ScanIndices(const Dataset& dataset, int64_t chunk_bytes_hint, const IndicesChunkFn& visit) {
  if (dataset.manifest().typed()) throw std::logic_error("ScanIndices on the typed dataset " + dataset.dir());
  return ScanIndicesFile(IndicesFiles(dataset).front(), chunk_bytes_hint, visit);
}

Status ScanOutDegreesByRange(const Dataset& dataset, const DegreeScanOptions& scan, const std::string& what,
                             const OutDegreeRangeFn& on_range) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  const std::vector<IndicesFile> files = IndicesFiles(dataset);
  const int64_t range = std::max<int64_t>(1, std::min(n, std::max<int64_t>(4, scan.scan_memory_bytes) / 4));
  const int64_t passes = (n + range - 1) / range;
  std::vector<uint32_t> counts(static_cast<size_t>(range));
  const std::string where = m.typed() ? dataset.dir() + " (" + m.TypedShape() + ")" : files.front().path;
  ProgressReporter progress(what + " " + where + (passes > 1 ? fmt::format(" ({} passes)", passes) : ""),
                            passes * m.num_edges, "edges", scan.show_progress);
  for (int64_t lo = 0; lo < n; lo += range) {
    const uint64_t width = static_cast<uint64_t>(std::min(range, n - lo));
    std::fill(counts.begin(), counts.end(), 0u);
    for (const IndicesFile& file : files) {
      const bool narrow = file.index_bytes == 4;
      SEER_RETURN_IF_ERROR(ScanIndicesFile(file, scan.chunk_bytes, [&](const void* entries, int64_t count,
                                                                       int64_t first) -> Status {
        for (int64_t i = 0; i < count; ++i) {
          const uint64_t u = narrow ? static_cast<const uint32_t*>(entries)[i]
                                    : static_cast<uint64_t>(static_cast<const int64_t*>(entries)[i]);
          if (u >= static_cast<uint64_t>(file.bound)) {
            return NeighborIdOutOfRange(file.path, static_cast<int64_t>(u), (first + i) * file.index_bytes, file.bound);
          }
          const uint64_t k = u + static_cast<uint64_t>(file.offset) - static_cast<uint64_t>(lo);
          if (k < width && counts[k] != UINT32_MAX) ++counts[k];
        }
        progress.Add(count);
        return Status::Ok();
      }));
    }
    SEER_RETURN_IF_ERROR(on_range(lo, lo + static_cast<int64_t>(width), counts.data()));
  }
  progress.Finish();
  return Status::Ok();
}

Result<std::vector<int64_t>> ComputeOutDegrees(const Dataset& dataset,
                                               const DegreeScanOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  const std::string path = dataset.PathOf(dataset_files::kIndices);
  std::vector<int64_t> degrees(static_cast<size_t>(m.num_nodes), 0);
  if (m.num_edges * m.index_bytes() == 0) return degrees;
  ProgressReporter progress("out-degrees " + path, m.num_edges, "edges", options.show_progress);
  SEER_RETURN_IF_ERROR(ScanIndices(dataset, options.chunk_bytes, [&](const void* entries, int64_t count,
                                                                     int64_t first) -> Status {
    if (m.index_dtype == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(CountChunk(static_cast<const uint32_t*>(entries), count, first, m.num_nodes, path,
                                      &degrees));
    } else {
      SEER_RETURN_IF_ERROR(CountChunk(static_cast<const int64_t*>(entries), count, first, m.num_nodes, path,
                                      &degrees));
    }
    progress.Add(count);
    return Status::Ok();
  }));
  progress.Finish();
  return degrees;
}

std::vector<int64_t> InDegreesFromIndptr(const std::vector<int64_t>& indptr) {
  if (indptr.empty()) throw std::logic_error("InDegreesFromIndptr: empty indptr");
  std::vector<int64_t> in(indptr.size() - 1);
  for (size_t v = 0; v + 1 < indptr.size(); ++v) in[v] = indptr[v + 1] - indptr[v];
  return in;
}

std::vector<int64_t> InDegreesFromIndptr(const CompactIndptr& indptr) {
  if (indptr.empty()) throw std::logic_error("InDegreesFromIndptr: empty indptr");
  std::vector<int64_t> in(static_cast<size_t>(indptr.num_nodes()));
  for (int64_t v = 0; v < indptr.num_nodes(); ++v) in[static_cast<size_t>(v)] = indptr.Degree(v);
  return in;
}

NodeScoreFn NodeScoresFromDegrees(const std::vector<int64_t>& out_degrees) {
  return NodeScoresFromTable(out_degrees);
}

uint8_t DegreeBucket(int64_t degree) {
  if (degree < 32) return static_cast<uint8_t>(std::max<int64_t>(0, degree));
  const int top = 63 - __builtin_clzll(static_cast<uint64_t>(degree));  // >= 5
  const int64_t mantissa = (degree >> (top - 2)) & 3;                   // the 2 bits after the top one
  return static_cast<uint8_t>(std::min<int64_t>(255, 32 + 4 * (top - 5) + mantissa));
}

Status MakeBeladyNodeScores(const Dataset& dataset, int64_t max_capacity_rows, PolicyOptions* options) {
  return MakeBeladyNodeScores(dataset, max_capacity_rows, options, DegreeScanOptions{});
}

Status MakeBeladyNodeScores(const Dataset& dataset, int64_t max_capacity_rows, PolicyOptions* options,
                            const DegreeScanOptions& scan) {
  const int64_t n = dataset.manifest().num_nodes;
  std::vector<uint8_t> buckets(static_cast<size_t>(n), 0);
  constexpr int64_t kExact = 32;  // DegreeBucket(d) == d below this
  std::vector<int64_t> per_degree(kExact, 0);    // nodes of each degree < 32
  std::vector<std::pair<int64_t, int64_t>> high;  // (degree, node) for degree >= 32
  const auto& ranges = scan.ranked_ranges;
  auto ranked = [&ranges](int64_t v) {
    if (ranges.empty()) return true;
    auto it = std::upper_bound(ranges.begin(), ranges.end(), std::make_pair(v, std::numeric_limits<int64_t>::max()));
    return it != ranges.begin() && v < std::prev(it)->second;
  };
  SEER_RETURN_IF_ERROR(ScanOutDegreesByRange(dataset, scan, "out-degrees", [&](int64_t lo, int64_t hi,
                                                                               const uint32_t* counts) {
    for (int64_t v = lo; v < hi; ++v) {
      const int64_t d = counts[v - lo];
      buckets[static_cast<size_t>(v)] = DegreeBucket(d);
      if (!ranked(v)) continue;
      if (d < kExact) {
        ++per_degree[static_cast<size_t>(d)];
      } else {
        high.emplace_back(d, v);
      }
    }
    return Status::Ok();
  }));
  // The ranking: degree descending, ties by lower id (RankNodesByScore's order).
  const int64_t limit = std::clamp<int64_t>(max_capacity_rows, 0, n);
  std::sort(high.begin(), high.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<int64_t> ranking;
  ranking.reserve(static_cast<size_t>(limit));
  for (size_t i = 0; i < high.size() && static_cast<int64_t>(ranking.size()) < limit; ++i) {
    ranking.push_back(high[i].second);
  }
  std::vector<std::pair<int64_t, int64_t>>().swap(high);
  // Degrees below 32, highest first, each in id order: one scan of the buckets places
  // every taken node at its degree's next slot.
  std::vector<int64_t> start(kExact, 0), taken(kExact, 0), filled(kExact, 0);
  int64_t quota = limit - static_cast<int64_t>(ranking.size());
  int64_t at = static_cast<int64_t>(ranking.size());
  for (int64_t d = kExact - 1; d >= 0; --d) {
    taken[static_cast<size_t>(d)] = std::min(per_degree[static_cast<size_t>(d)], quota);
    start[static_cast<size_t>(d)] = at;
    at += taken[static_cast<size_t>(d)];
    quota -= taken[static_cast<size_t>(d)];
  }
  ranking.resize(static_cast<size_t>(at));
  if (at > static_cast<int64_t>(start[kExact - 1])) {
    for (int64_t v = 0; v < n; ++v) {
      const uint8_t d = buckets[static_cast<size_t>(v)];
      if (d < kExact && filled[d] < taken[d] && ranked(v)) ranking[static_cast<size_t>(start[d] + filled[d]++)] = v;
    }
  }
  options->ranking = std::move(ranking);
  options->planner.node_scores = NodeScoresFromBuckets(std::move(buckets));
  return Status::Ok();
}

}  // namespace seer
