#include "cache/neighbor_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "cache/degrees.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/parse_number.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {

namespace {

// A non-zero budget must hold the per-node table: kResourceExhausted naming both otherwise.
Status CheckBudgetHoldsTable(int64_t budget_bytes, int64_t num_nodes) {
  const int64_t table_bytes = NeighborCache::TableBytes(num_nodes);
  if (budget_bytes >= table_bytes) return Status::Ok();
  return Status(StatusCode::kResourceExhausted,
                fmt::format("neighbor cache budget {} bytes cannot hold its per-node table (2 "
                            "bits x {} nodes = {} bytes); use 0 to disable the cache",
                            budget_bytes, num_nodes, table_bytes));
}

// The sizes of a built cache from its nodes_cached / edges_cached.
void CompleteStats(NeighborCacheStats* s, int64_t budget_bytes, int64_t num_nodes, int64_t num_edges,
                   int64_t index_bytes) {
  s->budget_bytes = budget_bytes;
  s->table_bytes = NeighborCache::TableBytes(num_nodes) + 8 * s->nodes_cached;
  s->lists_bytes = s->edges_cached * index_bytes;
  s->bytes = s->table_bytes + s->lists_bytes;
  s->num_nodes = num_nodes;
  s->num_edges = num_edges;
}
void CompleteStats(NeighborCacheStats* s, int64_t budget_bytes, const DatasetManifest& m) {
  CompleteStats(s, budget_bytes, m.num_nodes, m.num_edges, m.index_bytes());
}

// Ginex §3.2: node a (out-degree out_a, in-degree in_a) ranks before node b when
// out_a / in_a > out_b / in_b, compared exactly as out_a*in_b vs out_b*in_a; ties: lower id.
bool OutInRanksBefore(int64_t out_a, int64_t in_a, int64_t a, int64_t out_b, int64_t in_b, int64_t b) {
  const __int128 lhs = static_cast<__int128>(out_a) * in_b;
  const __int128 rhs = static_cast<__int128>(out_b) * in_a;
  if (lhs != rhs) return lhs > rhs;
  return a < b;
}

// The nodes that have in-neighbors (others are never looked up), best score first.
std::vector<int64_t> RankByScore(const std::vector<int64_t>& out_degrees,
                                 const std::vector<int64_t>& in_degrees) {
  std::vector<int64_t> ranked;
  ranked.reserve(in_degrees.size());
  for (int64_t v = 0; v < static_cast<int64_t>(in_degrees.size()); ++v) {
    if (in_degrees[v] > 0) ranked.push_back(v);
  }
  std::sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    return OutInRanksBefore(out_degrees[a], in_degrees[a], a, out_degrees[b], in_degrees[b], b);
  });
  return ranked;
}

// The nodes with in-neighbors, by descending score (ties: lower id).
std::vector<int64_t> RankByDoubleScore(const std::vector<double>& scores, const std::vector<int64_t>& in_degrees) {
  std::vector<int64_t> ranked;
  ranked.reserve(in_degrees.size());
  for (int64_t v = 0; v < static_cast<int64_t>(in_degrees.size()); ++v) {
    if (in_degrees[v] > 0) ranked.push_back(v);
  }
  std::sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;
  });
  return ranked;
}

// One sequential pass over indices.bin (ScanIndices): visit(w, u) for every in-neighbor u
// of every node w, in file order. Ids >= num_nodes are kCorrupt naming the byte offset.
template <typename Visit>
Status ScanInNeighbors(const Dataset& dataset, const CompactIndptr& indptr, int64_t chunk_bytes,
                       const std::string& what, bool show_progress, Visit&& visit) {
  const DatasetManifest& m = dataset.manifest();
  const std::string path = dataset.PathOf(dataset_files::kIndices);
  if (m.num_edges * m.index_bytes() == 0) return Status::Ok();
  ProgressReporter progress(what + " " + path, m.num_edges, "edges", show_progress);
  int64_t w = 0;
  SEER_RETURN_IF_ERROR(ScanIndices(dataset, chunk_bytes, [&](const void* entries, int64_t count,
                                                             int64_t first) -> Status {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t e = first + i;
      while (indptr[static_cast<size_t>(w) + 1] <= e) ++w;
      const uint64_t u = m.index_dtype == IndexDtype::kUint32
                             ? static_cast<const uint32_t*>(entries)[i]
                             : static_cast<uint64_t>(static_cast<const int64_t*>(entries)[i]);
      if (u >= static_cast<uint64_t>(m.num_nodes)) {
        return NeighborIdOutOfRange(path, static_cast<int64_t>(u), e * m.index_bytes(), m.num_nodes);
      }
      visit(w, static_cast<int64_t>(u));
    }
    progress.Add(count);
    return Status::Ok();
  }));
  progress.Finish();
  return Status::Ok();
}

// Whether a selected node's list overlaps the edges [e0, e1), where `first` is the first
// node whose list ends after e0.
template <typename Selected>
bool AnySelectedListIn(const CompactIndptr& indptr, int64_t first, int64_t e1,
                       const Selected& selected) {
  const int64_t num_nodes = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t u = first; u < num_nodes && indptr[u] < e1; ++u) {
    if (selected(u) && indptr[u + 1] > indptr[u]) return true;
  }
  return false;
}

}  // namespace

// ---- Scores -----------------------------------------------------------------------------

const char* NeighborCacheScoreRule(NeighborCacheScore score) {
  return score == NeighborCacheScore::kExpectedLookups ? "expected_lookups/bytes" : "out_degree/in_degree";
}

Result<std::vector<double>> ExpectedNeighborLookups(const Dataset& dataset, const CompactIndptr& indptr,
                                                    const std::vector<int64_t>& seeds,
                                                    const std::vector<int>& fanouts, int64_t batch_size,
                                                    const NeighborCacheBuildOptions& options) {
  const int64_t n = dataset.manifest().num_nodes;
  if (static_cast<int64_t>(indptr.size()) != n + 1 || fanouts.empty() || batch_size <= 0) {
    throw std::invalid_argument("ExpectedNeighborLookups: indptr/fanouts/batch_size do not fit the dataset");
  }
  const int64_t num_seeds = seeds.empty() ? n : static_cast<int64_t>(seeds.size());
  const double p_seed = num_seeds == 0 ? 0.0 : std::min(1.0, static_cast<double>(batch_size) / num_seeds);
  std::vector<double> p(static_cast<size_t>(n), seeds.empty() ? p_seed : 0.0);
  for (int64_t v : seeds) {
    if (v < 0 || v >= n) return Corrupt(fmt::format("{}: train node {} outside [0, {})", dataset.dir(), v, n));
    p[static_cast<size_t>(v)] = p_seed;
  }
  std::vector<double> lookups = p;
  std::vector<double> log_miss(static_cast<size_t>(n));
  std::vector<double> pick(static_cast<size_t>(n));
  for (size_t hop = 0; hop + 1 < fanouts.size(); ++hop) {
    // pick[w] = P(w expanded) x P(a given position of w's list is sampled).
    for (int64_t w = 0; w < n; ++w) {
      const int64_t degree = indptr[w + 1] - indptr[w];
      const double take = (fanouts[hop] < 0 || degree <= fanouts[hop]) ? 1.0 : static_cast<double>(fanouts[hop]) / degree;
      pick[static_cast<size_t>(w)] = p[static_cast<size_t>(w)] * take;
    }
    std::fill(log_miss.begin(), log_miss.end(), 0.0);
    SEER_RETURN_IF_ERROR(ScanInNeighbors(dataset, indptr, options.chunk_bytes, fmt::format("lookup scores hop {}", hop + 2),
                                         options.show_progress, [&](int64_t w, int64_t u) {
                                           log_miss[static_cast<size_t>(u)] += std::log1p(-pick[static_cast<size_t>(w)]);
                                         }));
    for (int64_t v = 0; v < n; ++v) {
      double& pv = p[static_cast<size_t>(v)];
      pv = 1.0 - (1.0 - pv) * std::exp(log_miss[static_cast<size_t>(v)]);
      lookups[static_cast<size_t>(v)] += pv;
    }
  }
  for (int64_t v = 0; v < n; ++v) {
    if (indptr[v + 1] == indptr[v]) lookups[static_cast<size_t>(v)] = 0;
  }
  return lookups;
}

// ---- Build ------------------------------------------------------------------------------

// What a build reads: one CSC adjacency (a homogeneous dataset's indices.bin, or one
// relation's indices file of a typed dataset), its lists keyed by num_nodes nodes and
// holding ids < num_sources.
struct NeighborCache::ListFile {
  std::string indices_path;
  IndexDtype index_dtype = IndexDtype::kUint32;
  int64_t num_nodes = 0, num_edges = 0, num_sources = 0;
  std::string identity;  // dataset_identity of the cache
  int64_t index_bytes() const { return index_dtype == IndexDtype::kUint32 ? 4 : 8; }
};

NeighborCache::ListFile NeighborCache::ListFileOf(const Dataset& dataset) {
  const DatasetManifest& m = dataset.manifest();
  return ListFile{dataset.PathOf(dataset_files::kIndices), m.index_dtype, m.num_nodes, m.num_edges, m.num_nodes,
                  m.Identity()};
}

NeighborCache NeighborCache::Disabled(const DatasetManifest& m) {
  NeighborCache cache;
  cache.index_dtype_ = m.index_dtype;
  cache.dataset_identity_ = m.Identity();
  cache.stats_.num_nodes = m.num_nodes;
  cache.stats_.num_edges = m.num_edges;
  return cache;
}

NeighborCache NeighborCache::Disabled(const ListFile& file) {
  NeighborCache cache;
  cache.index_dtype_ = file.index_dtype;
  cache.dataset_identity_ = file.identity;
  cache.stats_.num_nodes = file.num_nodes;
  cache.stats_.num_edges = file.num_edges;
  return cache;
}

Result<NeighborCache> NeighborCache::Build(const Dataset& dataset,
                                           const CompactIndptr& indptr,
                                           int64_t budget_bytes,
                                           const NeighborCacheBuildOptions& options) {
  if (budget_bytes == 0) return Disabled(dataset.manifest());
  if (options.score == NeighborCacheScore::kExpectedLookups) {
    SEER_ASSIGN_OR_RETURN(std::vector<int64_t> seeds, dataset.LoadSplit("train"));
    SEER_ASSIGN_OR_RETURN(std::vector<double> lookups,
                          ExpectedNeighborLookups(dataset, indptr, seeds, options.fanouts, options.batch_size, options));
    const int64_t index_bytes = dataset.manifest().index_bytes();
    for (size_t v = 0; v < lookups.size(); ++v) {
      lookups[v] /= static_cast<double>(NodeBytes(indptr[v + 1] - indptr[v], index_bytes));
    }
    return BuildWithScores(dataset, indptr, lookups, options.score, budget_bytes, options);
  }
  DegreeScanOptions scan;
  scan.chunk_bytes = options.chunk_bytes;
  scan.show_progress = options.show_progress;
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> out_degrees, ComputeOutDegrees(dataset, scan));
  return BuildWithOutDegrees(dataset, indptr, out_degrees, budget_bytes, options);
}

Result<NeighborCache> NeighborCache::BuildWithOutDegrees(const Dataset& dataset,
                                                         const CompactIndptr& indptr,
                                                         const std::vector<int64_t>& out_degrees,
                                                         int64_t budget_bytes,
                                                         const NeighborCacheBuildOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t num_nodes = m.num_nodes;
  if (static_cast<int64_t>(indptr.size()) != num_nodes + 1 ||
      static_cast<int64_t>(out_degrees.size()) != num_nodes) {
    throw std::invalid_argument("NeighborCache::Build: indptr/out_degrees do not match num_nodes");
  }
  if (budget_bytes < 0) return InvalidArgument("neighbor cache budget must be >= 0");
  if (budget_bytes == 0) return Disabled(m);
  return BuildRanked(ListFileOf(dataset), indptr, RankByScore(out_degrees, InDegreesFromIndptr(indptr)),
                     NeighborCacheScore::kOutInDegree, budget_bytes, options);
}

Result<NeighborCache> NeighborCache::BuildWithScores(const Dataset& dataset, const CompactIndptr& indptr,
                                                     const std::vector<double>& scores, NeighborCacheScore rule,
                                                     int64_t budget_bytes,
                                                     const NeighborCacheBuildOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  if (static_cast<int64_t>(indptr.size()) != m.num_nodes + 1 || static_cast<int64_t>(scores.size()) != m.num_nodes) {
    throw std::invalid_argument("NeighborCache::BuildWithScores: indptr/scores do not match num_nodes");
  }
  if (budget_bytes < 0) return InvalidArgument("neighbor cache budget must be >= 0");
  if (budget_bytes == 0) return Disabled(m);
  return BuildRanked(ListFileOf(dataset), indptr, RankByDoubleScore(scores, InDegreesFromIndptr(indptr)), rule,
                     budget_bytes, options);
}

Result<NeighborCache> NeighborCache::BuildRanked(const ListFile& file, const CompactIndptr& indptr,
                                                 const std::vector<int64_t>& ranked, NeighborCacheScore rule,
                                                 int64_t budget_bytes, const NeighborCacheBuildOptions& options) {
  const int64_t num_nodes = file.num_nodes;
  const int64_t index_bytes = file.index_bytes();
  const int64_t table_bytes = TableBytes(num_nodes);
  SEER_RETURN_IF_ERROR(CheckBudgetHoldsTable(budget_bytes, num_nodes));
  const std::vector<int64_t> in_degrees = InDegreesFromIndptr(indptr);

  NeighborCache cache = Disabled(file);
  cache.score_rule_ = NeighborCacheScoreRule(rule);
  if (rule == NeighborCacheScore::kExpectedLookups) {
    cache.ranked_fanouts_ = options.fanouts;
    cache.ranked_batch_size_ = options.batch_size;
  }
  cache.SelectPrefix(ranked, in_degrees,
                     budget_bytes - table_bytes, index_bytes);
  cache.BuildRanks();
  cache.LayOutLists(in_degrees);
  if (cache.stats_.edges_cached > 0) SEER_RETURN_IF_ERROR(cache.FillLists(file, indptr, options));
  // Neighbor ids are checked once here, so lookups never hand out an id >= num_sources.
  const int64_t bad = cache.FirstNeighborOutsideGraph(file.num_sources);
  if (bad >= 0) {
    return Corrupt(fmt::format("{}: neighbor id {} >= {} {} (found while filling the neighbor cache)",
                               file.indices_path, cache.NeighborAt(0, bad),
                               file.num_sources == num_nodes ? "num_nodes" : "the source type's count",
                               file.num_sources));
  }
  CompleteStats(&cache.stats_, budget_bytes, num_nodes, file.num_edges, index_bytes);
  return cache;
}

// ---- One relation of a typed dataset --------------------------------------------------

namespace {

// The nodes with a list, shortest first (ties: lower id): the most lists per byte.
std::vector<int64_t> RankShortestFirst(const std::vector<int64_t>& in_degrees) {
  std::vector<int64_t> ranked;
  ranked.reserve(in_degrees.size());
  for (int64_t v = 0; v < static_cast<int64_t>(in_degrees.size()); ++v) {
    if (in_degrees[v] > 0) ranked.push_back(v);
  }
  std::sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    if (in_degrees[a] != in_degrees[b]) return in_degrees[a] < in_degrees[b];
    return a < b;
  });
  return ranked;
}

// The first global id of node type `name` and its count; -1 count when no type has it.
std::pair<int64_t, int64_t> NodeTypeRange(const DatasetManifest& m, const std::string& name) {
  int64_t offset = 0;
  for (const DatasetNodeType& t : m.node_types) {
    if (t.name == name) return {offset, t.count};
    offset += t.count;
  }
  return {offset, -1};
}

}  // namespace

Result<NeighborCache> NeighborCache::BuildForRelation(const Dataset& dataset, size_t relation,
                                                      const CompactIndptr& indptr,
                                                      const std::vector<int64_t>& out_degrees, int64_t budget_bytes,
                                                      const NeighborCacheBuildOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  if (!m.typed() || relation >= m.relations.size()) {
    throw std::invalid_argument("NeighborCache::BuildForRelation: no relation " + std::to_string(relation) + " in " +
                                dataset.dir());
  }
  const DatasetRelation& rel = m.relations[relation];
  const auto [src_offset, src_count] = NodeTypeRange(m, rel.src);
  const auto [dst_offset, dst_count] = NodeTypeRange(m, rel.dst);
  if (src_count < 0 || dst_count < 0) {
    return Corrupt(fmt::format("{}: relation {} names a node type the manifest does not have", dataset.dir(), rel.key()));
  }
  if (static_cast<int64_t>(indptr.size()) != dst_count + 1 ||
      (!out_degrees.empty() && static_cast<int64_t>(out_degrees.size()) != m.num_nodes)) {
    throw std::invalid_argument("NeighborCache::BuildForRelation: indptr/out_degrees do not fit relation " + rel.key());
  }
  if (budget_bytes < 0) return InvalidArgument("neighbor cache budget must be >= 0");
  const ListFile file{dataset.PathOf(rel.indices), rel.index_dtype, dst_count, rel.num_edges, src_count,
                      m.Identity() + " relation " + rel.key()};
  if (budget_bytes == 0) return Disabled(file);
  const std::vector<int64_t> in_degrees = InDegreesFromIndptr(indptr);
  if (out_degrees.empty()) {
    SEER_ASSIGN_OR_RETURN(NeighborCache cache, BuildRanked(file, indptr, RankShortestFirst(in_degrees),
                                                          NeighborCacheScore::kOutInDegree, budget_bytes, options));
    cache.score_rule_ = "in_degree";
    return cache;
  }
  const std::vector<int64_t> dst_out(out_degrees.begin() + dst_offset, out_degrees.begin() + dst_offset + dst_count);
  return BuildRanked(file, indptr, RankByScore(dst_out, in_degrees), NeighborCacheScore::kOutInDegree, budget_bytes,
                     options);
}

Result<std::vector<int64_t>> TypedOutDegrees(const Dataset& dataset, const NeighborCacheBuildOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  std::vector<int64_t> degrees(static_cast<size_t>(m.num_nodes), 0);
  DegreeScanOptions scan;
  scan.chunk_bytes = options.chunk_bytes;
  scan.show_progress = options.show_progress;
  scan.scan_memory_bytes = 4 * std::max<int64_t>(1, m.num_nodes);  // one range: one pass
  SEER_RETURN_IF_ERROR(ScanOutDegreesByRange(dataset, scan, "ncache out-degrees",
                                             [&](int64_t lo, int64_t hi, const uint32_t* counts) -> Status {
                                               for (int64_t v = lo; v < hi; ++v) {
                                                 degrees[static_cast<size_t>(v)] = counts[v - lo];
                                               }
                                               return Status::Ok();
                                             }));
  return degrees;
}

// ---- Streaming out/in build ------------------------------------------------------------

namespace {

// A cached-node candidate of the streaming build.
struct OutInCandidate {
  int64_t out;    // out-degree (saturated at 2^32 - 1)
  int64_t in;     // in-degree (> 0)
  int64_t node;
  int64_t start;  // indptr[node]
};

// a ranks before b (Ginex's out/in, exact by cross-multiplication; ties: lower id).
bool CandidateRanksBefore(const OutInCandidate& a, const OutInCandidate& b) {
  return OutInRanksBefore(a.out, a.in, a.node, b.out, b.in, b.node);
}

// Reads `count` int64 of `path` from element `first` on, in chunks, calling visit(v, n, first).
template <typename Visit>
Status StreamInt64(int fd, const std::string& path, int64_t first, int64_t count, int64_t chunk_elements,
                   std::vector<int64_t>* buffer, Visit&& visit) {
  buffer->resize(static_cast<size_t>(chunk_elements));
  for (int64_t i = 0; i < count; i += chunk_elements) {
    const int64_t n = std::min(chunk_elements, count - i);
    SEER_RETURN_IF_ERROR(PreadFull(fd, buffer->data(), n * 8, (first + i) * 8, path));
    SEER_RETURN_IF_ERROR(visit(buffer->data(), n, first + i));
  }
  return Status::Ok();
}

}  // namespace

Result<NeighborCache> NeighborCache::BuildOutInStreaming(const Dataset& dataset, int64_t budget_bytes,
                                                         const NeighborCacheBuildOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  if (budget_bytes < 0) return InvalidArgument("neighbor cache budget must be >= 0");
  if (budget_bytes == 0) return Disabled(m);
  const int64_t num_nodes = m.num_nodes;
  const int64_t index_bytes = m.index_bytes();
  const int64_t table_bytes = TableBytes(num_nodes);
  SEER_RETURN_IF_ERROR(CheckBudgetHoldsTable(budget_bytes, num_nodes));
  const std::string indices_path = dataset.PathOf(dataset_files::kIndices);
  const std::string indptr_path = dataset.PathOf(dataset_files::kIndptr);
  SEER_ASSIGN_OR_RETURN(UniqueFd indices_fd, UniqueFd::Open(indices_path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(UniqueFd indptr_fd, UniqueFd::Open(indptr_path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(int64_t indptr_size, FileSizeBytes(indptr_fd.get(), indptr_path));
  if (indptr_size != (num_nodes + 1) * 8) {
    return Corrupt(fmt::format("{}: {} bytes, the manifest needs {}", indptr_path, indptr_size, (num_nodes + 1) * 8));
  }
  (void)posix_fadvise(indices_fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  (void)posix_fadvise(indptr_fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  const int64_t chunk_elements = std::max<int64_t>(1, options.chunk_bytes / 8);
  std::vector<int64_t> indptr_chunk;

  // The longest prefix of the ranking seen so far that fits (heap: worst on top).
  const int64_t bytes_left = budget_bytes - table_bytes;
  std::vector<OutInCandidate> kept;
  int64_t kept_bytes = 0;
  // The best-ranked node that alone costs more than bytes_left: the prefix ends before it.
  OutInCandidate blocker{0, 0, 0, 0};
  bool has_blocker = false;
  auto worse_on_top = [](const OutInCandidate& a, const OutInCandidate& b) { return CandidateRanksBefore(a, b); };
  // Out-degrees range by range (ScanOutDegreesByRange); after each range's count, its
  // in-degrees are streamed from indptr and its candidates offered to `kept`.
  DegreeScanOptions scan;
  scan.chunk_bytes = options.chunk_bytes;
  scan.scan_memory_bytes = options.scan_memory_bytes;
  scan.show_progress = options.show_progress;
  auto on_range = [&](int64_t lo, int64_t hi, const uint32_t* out) -> Status {
    int64_t previous = -1;
    SEER_RETURN_IF_ERROR(StreamInt64(
        indptr_fd.get(), indptr_path, lo, hi - lo + 1, chunk_elements, &indptr_chunk,
        [&](const int64_t* v, int64_t n, int64_t first) -> Status {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t node = first + i - 1;  // v[i] = indptr[node + 1]
            if (previous >= 0 && node >= lo) {
              const int64_t in = v[i] - previous;
              if (in < 0 || v[i] > m.num_edges) {
                return Corrupt(fmt::format("{}: indptr[{}] = {} after {}", indptr_path, node + 1, v[i], previous));
              }
              const int64_t cost = NodeBytes(in, index_bytes);
              const OutInCandidate c{static_cast<int64_t>(out[node - lo]), in, node, previous};
              if (in > 0 && cost > bytes_left) {
                if (!has_blocker || CandidateRanksBefore(c, blocker)) blocker = c;
                has_blocker = true;
              } else if (in > 0) {
                if (kept_bytes + cost <= bytes_left || CandidateRanksBefore(c, kept.front())) {
                  kept.push_back(c);
                  std::push_heap(kept.begin(), kept.end(), worse_on_top);
                  kept_bytes += cost;
                  while (kept_bytes > bytes_left) {
                    std::pop_heap(kept.begin(), kept.end(), worse_on_top);
                    kept_bytes -= NodeBytes(kept.back().in, index_bytes);
                    kept.pop_back();
                  }
                }
              }
            }
            previous = v[i];
          }
          return Status::Ok();
        }));
    return Status::Ok();
  };
  SEER_RETURN_IF_ERROR(ScanOutDegreesByRange(dataset, scan, "ncache out/in", on_range));
  // The in-RAM build's rule: the first node that does not fit ends the fill, so nothing
  // ranked after the blocker is cached (kept is the longest fitting prefix of the other
  // nodes' ranking; cut it at the blocker).
  if (has_blocker) {
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const OutInCandidate& c) { return !CandidateRanksBefore(c, blocker); }),
               kept.end());
  }
  std::sort(kept.begin(), kept.end(), [](const OutInCandidate& a, const OutInCandidate& b) { return a.node < b.node; });

  NeighborCache cache = Disabled(m);
  cache.score_rule_ = NeighborCacheScoreRule(NeighborCacheScore::kOutInDegree);
  cache.bits_.assign(Words(num_nodes), 0);
  cache.offsets_.reserve(kept.size());
  int64_t next = 0;
  for (const OutInCandidate& c : kept) {
    cache.bits_[static_cast<size_t>(c.node) >> 6] |= uint64_t{1} << (c.node & 63);
    cache.offsets_.push_back(next);
    next += c.in;
  }
  cache.stats_.nodes_cached = static_cast<int64_t>(kept.size());
  cache.stats_.edges_cached = next;
  cache.BuildRanks();
  if (cache.index_dtype_ == IndexDtype::kUint32) {
    cache.lists32_.resize(static_cast<size_t>(next));
  } else {
    cache.lists64_.resize(static_cast<size_t>(next));
  }
  // Fill: one pass over the selected lists in file order, coalescing nearby lists into
  // chunk-sized reads.
  char* lists = cache.index_dtype_ == IndexDtype::kUint32 ? reinterpret_cast<char*>(cache.lists32_.data())
                                                          : reinterpret_cast<char*>(cache.lists64_.data());
  ProgressReporter fill("ncache fill " + indices_path, static_cast<int64_t>(kept.size()), "lists",
                        options.show_progress);
  const int64_t chunk_index_elements = chunk_elements;  // what `chunk` holds
  std::unique_ptr<char[]> chunk(new char[static_cast<size_t>(chunk_elements * index_bytes)]);
  for (size_t i = 0; i < kept.size();) {
    const int64_t e0 = kept[i].start;
    size_t j = i;
    int64_t e1 = e0;
    while (j < kept.size() && (j == i || kept[j].start + kept[j].in - e0 <= chunk_index_elements)) {
      e1 = kept[j].start + kept[j].in;
      ++j;
    }
    if (e1 - e0 > chunk_index_elements) {  // one list longer than a chunk: read it in place
      SEER_RETURN_IF_ERROR(PreadFull(indices_fd.get(), lists + cache.offsets_[i] * index_bytes,
                                     (e1 - e0) * index_bytes, e0 * index_bytes, indices_path));
    } else {
      SEER_RETURN_IF_ERROR(PreadFull(indices_fd.get(), chunk.get(), (e1 - e0) * index_bytes, e0 * index_bytes,
                                     indices_path));
      for (size_t k = i; k < j; ++k) {
        std::memcpy(lists + cache.offsets_[k] * index_bytes, chunk.get() + (kept[k].start - e0) * index_bytes,
                    static_cast<size_t>(kept[k].in * index_bytes));
      }
    }
    fill.Add(static_cast<int64_t>(j - i));
    i = j;
  }
  fill.Finish();
  CompleteStats(&cache.stats_, budget_bytes, m);
  return cache;
}

void NeighborCache::SelectPrefix(const std::vector<int64_t>& ranked,
                                 const std::vector<int64_t>& in_degrees, int64_t bytes_left,
                                 int64_t index_bytes) {
  bits_.assign(Words(static_cast<int64_t>(in_degrees.size())), 0);
  for (int64_t v : ranked) {
    const int64_t cost = NodeBytes(in_degrees[v], index_bytes);
    if (cost > bytes_left) break;  // a prefix of the ranking
    bits_[static_cast<size_t>(v) >> 6] |= uint64_t{1} << (v & 63);
    bytes_left -= cost;
    ++stats_.nodes_cached;
    stats_.edges_cached += in_degrees[v];
  }
}

void NeighborCache::LayOutLists(const std::vector<int64_t>& in_degrees) {
  offsets_.reserve(static_cast<size_t>(stats_.nodes_cached));
  int64_t next = 0;
  for (int64_t v = 0; v < static_cast<int64_t>(in_degrees.size()); ++v) {
    if (BitSet(v)) {
      offsets_.push_back(next);
      next += in_degrees[v];
    }
  }
  if (index_dtype_ == IndexDtype::kUint32) {
    lists32_.resize(static_cast<size_t>(stats_.edges_cached));
  } else {
    lists64_.resize(static_cast<size_t>(stats_.edges_cached));
  }
}

// One sequential scan of indices.bin; chunks holding no cached list are skipped.
Status NeighborCache::FillLists(const ListFile& file, const CompactIndptr& indptr,
                                const NeighborCacheBuildOptions& options) {
  const int64_t index_bytes = file.index_bytes();
  char* lists = index_dtype_ == IndexDtype::kUint32 ? reinterpret_cast<char*>(lists32_.data())
                                                    : reinterpret_cast<char*>(lists64_.data());
  const std::string& path = file.indices_path;
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
  (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  const int64_t chunk_elements = std::max<int64_t>(1, options.chunk_bytes / index_bytes);
  std::unique_ptr<char[]> buffer(new char[static_cast<size_t>(chunk_elements * index_bytes)]);
  ProgressReporter progress("ncache fill " + path, file.num_edges, "edges", options.show_progress);
  auto selected = [this](int64_t u) { return BitSet(u); };
  int64_t v = 0;  // the first node whose list ends after e0
  for (int64_t e0 = 0; e0 < file.num_edges; e0 += chunk_elements) {
    const int64_t e1 = std::min(file.num_edges, e0 + chunk_elements);
    while (v < file.num_nodes && indptr[v + 1] <= e0) ++v;
    if (AnySelectedListIn(indptr, v, e1, selected)) {
      SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.get(), (e1 - e0) * index_bytes,
                                     e0 * index_bytes, path));
      for (int64_t u = v; u < file.num_nodes && indptr[u] < e1; ++u) {
        if (!BitSet(u)) continue;
        const int64_t lo = std::max(indptr[u], e0);
        const int64_t hi = std::min(indptr[u + 1], e1);
        if (hi <= lo) continue;
        const int64_t dest = Find(u) + (lo - indptr[u]);
        std::memcpy(lists + dest * index_bytes, buffer.get() + (lo - e0) * index_bytes,
                    static_cast<size_t>((hi - lo) * index_bytes));
      }
    }
    progress.Set(e1);
  }
  progress.Finish();
  return Status::Ok();
}

void NeighborCache::BuildRanks() {
  rank_.resize(bits_.size());
  int64_t before = 0;
  for (size_t w = 0; w < bits_.size(); ++w) {
    rank_[w] = before;
    before += __builtin_popcountll(bits_[w]);
  }
}

int64_t NeighborCache::FirstNeighborOutsideGraph(int64_t num_nodes) const {
  for (int64_t i = 0; i < stats_.edges_cached; ++i) {
    const int64_t u = NeighborAt(0, i);
    if (u < 0 || u >= num_nodes) return i;
  }
  return -1;
}

Status NeighborCache::Validate(const CompactIndptr& indptr) const {
  if (!enabled()) return Status::Ok();
  if (static_cast<int64_t>(indptr.size()) != stats_.num_nodes + 1) {
    return Corrupt(fmt::format("neighbor cache has {} nodes, the dataset {}", stats_.num_nodes,
                               indptr.size() - 1));
  }
  int64_t nodes = 0;
  for (int64_t v = 0; v < stats_.num_nodes; ++v) {
    const int64_t off = Find(v);
    if (off == -1) continue;
    const int64_t degree = indptr[v + 1] - indptr[v];
    if (off < 0 || off + degree > stats_.edges_cached) {
      return Corrupt(fmt::format(
          "neighbor cache table entry of node {} (offset {}, in-degree {}) lies outside the {} "
          "cached edges",
          v, off, degree, stats_.edges_cached));
    }
    ++nodes;
  }
  if (nodes != stats_.nodes_cached) {
    return Corrupt(fmt::format("neighbor cache table has {} cached nodes, its manifest says {}",
                               nodes, stats_.nodes_cached));
  }
  return Status::Ok();
}

Result<int64_t> ParseNeighborCacheBudget(const std::string& text,
                                         const DatasetManifest& manifest) {
  if (!text.empty() && text.back() == '%') {
    const std::optional<double> parsed = ParseNumber<double>(std::string_view(text).substr(0, text.size() - 1));
    const double percent = parsed.value_or(-1);
    if (!(percent >= 0) || percent > 100) {
      return InvalidArgument(fmt::format("bad neighbor cache budget '{}': a percentage must be within 0%..100%", text));
    }
    if (percent == 0) return int64_t{0};
    const int64_t lists = manifest.num_edges * manifest.index_bytes() + 8 * manifest.num_nodes;
    return NeighborCache::TableBytes(manifest.num_nodes) +
           static_cast<int64_t>(static_cast<long double>(lists) * percent / 100);
  }
  return ParseBytes(text);
}

}  // namespace seer
