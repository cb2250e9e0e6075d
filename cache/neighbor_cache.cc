#include "cache/neighbor_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "cache/degrees.h"
#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/json.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {

namespace {

// Ginex §3.2: score = out_degree / in_degree, compared exactly as out_a*in_b vs out_b*in_a.
bool RanksBefore(int64_t a, int64_t b, const std::vector<int64_t>& out,
                 const std::vector<int64_t>& in) {
  const __int128 lhs = static_cast<__int128>(out[a]) * in[b];
  const __int128 rhs = static_cast<__int128>(out[b]) * in[a];
  if (lhs != rhs) return lhs > rhs;
  return a < b;
}

template <typename T>
Status ReadArrayFile(const std::string& path, int64_t count, std::vector<T>* out) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  const int64_t want = count * static_cast<int64_t>(sizeof(T));
  if (size != want) {
    return Corrupt(path + ": " + std::to_string(size) + " bytes, the manifest needs " +
                   std::to_string(want));
  }
  (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  out->resize(static_cast<size_t>(count));
  return PreadFull(fd.get(), out->data(), want, 0, path);
}

}  // namespace

NeighborCache NeighborCache::Disabled(const DatasetManifest& m) {
  NeighborCache cache;
  cache.index_dtype_ = m.index_dtype;
  cache.stats_.num_nodes = m.num_nodes;
  cache.stats_.num_edges = m.num_edges;
  return cache;
}

Result<NeighborCache> NeighborCache::Build(const Dataset& dataset,
                                           const std::vector<int64_t>& indptr,
                                           int64_t budget_bytes,
                                           const NeighborCacheBuildOptions& options) {
  if (budget_bytes == 0) return Disabled(dataset.manifest());
  DegreeScanOptions scan;
  scan.chunk_bytes = options.chunk_bytes;
  scan.show_progress = options.show_progress;
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> out_degrees, ComputeOutDegrees(dataset, scan));
  return BuildWithOutDegrees(dataset, indptr, out_degrees, budget_bytes, options);
}

Result<NeighborCache> NeighborCache::BuildWithOutDegrees(const Dataset& dataset,
                                                         const std::vector<int64_t>& indptr,
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
  const int64_t index_bytes = m.index_bytes();
  const int64_t table_bytes = TableBytes(num_nodes);
  if (budget_bytes < table_bytes) {
    return Status(StatusCode::kResourceExhausted,
                  "neighbor cache budget " + std::to_string(budget_bytes) +
                      " bytes cannot hold its per-node table (2 bits x " + std::to_string(num_nodes) +
                      " nodes = " + std::to_string(table_bytes) + " bytes); use 0 to disable the cache");
  }
  const std::vector<int64_t> in_degrees = InDegreesFromIndptr(indptr);

  // Rank the nodes that have in-neighbors (others are never looked up).
  std::vector<int64_t> ranked;
  ranked.reserve(static_cast<size_t>(num_nodes));
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (in_degrees[v] > 0) ranked.push_back(v);
  }
  std::sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    return RanksBefore(a, b, out_degrees, in_degrees);
  });
  NeighborCache cache;
  cache.bits_.assign(static_cast<size_t>((num_nodes + 63) / 64), 0);
  int64_t left = budget_bytes - table_bytes;
  for (int64_t v : ranked) {
    const int64_t cost = NodeBytes(in_degrees[v], index_bytes);
    if (cost > left) break;  // a prefix of the ranking
    cache.bits_[static_cast<size_t>(v) >> 6] |= uint64_t{1} << (v & 63);
    left -= cost;
    ++cache.stats_.nodes_cached;
    cache.stats_.edges_cached += in_degrees[v];
  }
  ranked.clear();
  ranked.shrink_to_fit();
  auto selected = [&](int64_t v) { return ((cache.bits_[static_cast<size_t>(v) >> 6] >> (v & 63)) & 1u) != 0; };

  cache.index_dtype_ = m.index_dtype;
  cache.BuildRanks();
  cache.offsets_.reserve(static_cast<size_t>(cache.stats_.nodes_cached));
  int64_t next = 0;
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (selected(v)) {
      cache.offsets_.push_back(next);
      next += in_degrees[v];
    }
  }
  const int64_t edges_cached = cache.stats_.edges_cached;
  char* lists = nullptr;
  if (m.index_dtype == IndexDtype::kUint32) {
    cache.lists32_.resize(static_cast<size_t>(edges_cached));
    lists = reinterpret_cast<char*>(cache.lists32_.data());
  } else {
    cache.lists64_.resize(static_cast<size_t>(edges_cached));
    lists = reinterpret_cast<char*>(cache.lists64_.data());
  }

  // Fill with one sequential scan of indices.bin; chunks holding no cached list are skipped.
  if (edges_cached > 0) {
    const std::string path = dataset.PathOf(dataset_files::kIndices);
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
    (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    const int64_t chunk_elements = std::max<int64_t>(1, options.chunk_bytes / index_bytes);
    std::unique_ptr<char[]> buffer(new char[static_cast<size_t>(chunk_elements * index_bytes)]);
    ProgressReporter progress("ncache fill " + path, m.num_edges, "edges", options.show_progress);
    int64_t v = 0;
    for (int64_t e0 = 0; e0 < m.num_edges; e0 += chunk_elements) {
      const int64_t e1 = std::min(m.num_edges, e0 + chunk_elements);
      while (v < num_nodes && indptr[v + 1] <= e0) ++v;
      bool needed = false;
      for (int64_t u = v; u < num_nodes && indptr[u] < e1; ++u) {
        if (selected(u) && indptr[u + 1] > indptr[u]) {
          needed = true;
          break;
        }
      }
      if (needed) {
        SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.get(), (e1 - e0) * index_bytes,
                                       e0 * index_bytes, path));
        for (int64_t u = v; u < num_nodes && indptr[u] < e1; ++u) {
          if (!selected(u)) continue;
          const int64_t lo = std::max(indptr[u], e0);
          const int64_t hi = std::min(indptr[u + 1], e1);
          if (hi <= lo) continue;
          const int64_t dest = cache.Find(u) + (lo - indptr[u]);
          std::memcpy(lists + dest * index_bytes, buffer.get() + (lo - e0) * index_bytes,
                      static_cast<size_t>((hi - lo) * index_bytes));
        }
      }
      progress.Set(e1);
    }
    progress.Finish();
  }
  // Neighbor ids are checked once here, so lookups never hand out an id >= num_nodes.
  for (int64_t i = 0; i < edges_cached; ++i) {
    const int64_t u = m.index_dtype == IndexDtype::kUint32 ? cache.lists32_[i] : cache.lists64_[i];
    if (u < 0 || u >= num_nodes) {
      return Corrupt(dataset.PathOf(dataset_files::kIndices) + ": neighbor id " +
                     std::to_string(u) + " >= num_nodes " + std::to_string(num_nodes) +
                     " (found while filling the neighbor cache)");
    }
  }
  NeighborCacheStats& s = cache.stats_;
  s.budget_bytes = budget_bytes;
  s.table_bytes = table_bytes + 8 * s.nodes_cached;
  s.lists_bytes = edges_cached * index_bytes;
  s.bytes = s.table_bytes + s.lists_bytes;
  s.num_nodes = num_nodes;
  s.num_edges = m.num_edges;
  return cache;
}

void NeighborCache::BuildRanks() {
  rank_.resize(bits_.size());
  int64_t before = 0;
  for (size_t w = 0; w < bits_.size(); ++w) {
    rank_[w] = before;
    before += __builtin_popcountll(bits_[w]);
  }
}

Status NeighborCache::Validate(const std::vector<int64_t>& indptr) const {
  if (!enabled()) return Status::Ok();
  if (static_cast<int64_t>(indptr.size()) != stats_.num_nodes + 1) {
    return Corrupt("neighbor cache has " + std::to_string(stats_.num_nodes) +
                   " nodes, the dataset " + std::to_string(indptr.size() - 1));
  }
  int64_t nodes = 0;
  for (int64_t v = 0; v < stats_.num_nodes; ++v) {
    const int64_t off = Find(v);
    if (off == -1) continue;
    const int64_t degree = indptr[v + 1] - indptr[v];
    if (off < 0 || off + degree > stats_.edges_cached) {
      return Corrupt("neighbor cache table entry of node " + std::to_string(v) + " (offset " +
                     std::to_string(off) + ", in-degree " + std::to_string(degree) +
                     ") lies outside the " + std::to_string(stats_.edges_cached) +
                     " cached edges");
    }
    ++nodes;
  }
  if (nodes != stats_.nodes_cached) {
    return Corrupt("neighbor cache table has " + std::to_string(nodes) +
                   " cached nodes, its manifest says " + std::to_string(stats_.nodes_cached));
  }
  return Status::Ok();
}

Status NeighborCache::Save(const std::string& dir, bool force) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoStatus(ec.value(), "create directory", dir);
  const std::string manifest_path = dir + "/" + kManifestName;
  if (::access(manifest_path.c_str(), F_OK) == 0) {
    if (!force) {
      return Status(StatusCode::kAlreadyExists,
                    manifest_path + " exists: refusing to overwrite the neighbor cache (use --force)");
    }
    if (::unlink(manifest_path.c_str()) != 0) return ErrnoStatus(errno, "remove", manifest_path);
    SEER_RETURN_IF_ERROR(SyncDirectory(dir));
  }
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter table, AtomicFileWriter::Create(dir + "/" + kTableName));
    SEER_RETURN_IF_ERROR(table.AppendValues(bits_.data(), static_cast<int64_t>(bits_.size())));
    SEER_RETURN_IF_ERROR(table.AppendValues(offsets_.data(), static_cast<int64_t>(offsets_.size())));
    SEER_RETURN_IF_ERROR(table.Close());
  }
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter lists, AtomicFileWriter::Create(dir + "/" + kListsName));
    if (index_dtype_ == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(lists.AppendValues(lists32_.data(), static_cast<int64_t>(lists32_.size())));
    } else {
      SEER_RETURN_IF_ERROR(lists.AppendValues(lists64_.data(), static_cast<int64_t>(lists64_.size())));
    }
    SEER_RETURN_IF_ERROR(lists.Close());
  }
  JsonValue root = JsonValue::Object();
  root.Set("format", JsonValue::String("seer-ncache"));
  root.Set("version", JsonValue::Int(2));
  root.Set("budget_bytes", JsonValue::Int(stats_.budget_bytes));
  root.Set("bytes", JsonValue::Int(stats_.bytes));
  root.Set("table_bytes", JsonValue::Int(stats_.table_bytes));
  root.Set("lists_bytes", JsonValue::Int(stats_.lists_bytes));
  root.Set("num_nodes", JsonValue::Int(stats_.num_nodes));
  root.Set("num_edges", JsonValue::Int(stats_.num_edges));
  root.Set("nodes_cached", JsonValue::Int(stats_.nodes_cached));
  root.Set("edges_cached", JsonValue::Int(stats_.edges_cached));
  root.Set("index_dtype", JsonValue::String(IndexDtypeName(index_dtype_)));
  root.Set("score_rule", JsonValue::String(kScoreRule));
  return WriteFileAtomically(manifest_path, root.Dump(2) + "\n");
}

Result<NeighborCache> NeighborCache::Load(const std::string& dir, const Dataset& dataset) {
  const std::string path = dir + "/" + kManifestName;
  SEER_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  SEER_ASSIGN_OR_RETURN(JsonValue root, JsonValue::Parse(text, path));
  auto get_int = [&](const char* key) -> Result<int64_t> {
    const JsonValue* v = root.Find(key);
    if (v == nullptr || !v->is_int()) {
      return Corrupt(path + ": field \"" + std::string(key) + "\" missing or not an integer");
    }
    return v->as_int();
  };
  const JsonValue* format = root.Find("format");
  if (format == nullptr || !format->is_string() || format->as_string() != "seer-ncache") {
    return Corrupt(path + ": not a seer-ncache manifest");
  }
  SEER_ASSIGN_OR_RETURN(int64_t version, get_int("version"));
  if (version != 1 && version != 2) return Corrupt(path + ": unsupported version " + std::to_string(version));
  NeighborCache cache;
  NeighborCacheStats& s = cache.stats_;
  SEER_ASSIGN_OR_RETURN(s.budget_bytes, get_int("budget_bytes"));
  SEER_ASSIGN_OR_RETURN(s.bytes, get_int("bytes"));
  SEER_ASSIGN_OR_RETURN(s.table_bytes, get_int("table_bytes"));
  SEER_ASSIGN_OR_RETURN(s.lists_bytes, get_int("lists_bytes"));
  SEER_ASSIGN_OR_RETURN(s.num_nodes, get_int("num_nodes"));
  SEER_ASSIGN_OR_RETURN(s.num_edges, get_int("num_edges"));
  SEER_ASSIGN_OR_RETURN(s.nodes_cached, get_int("nodes_cached"));
  SEER_ASSIGN_OR_RETURN(s.edges_cached, get_int("edges_cached"));
  const JsonValue* dtype = root.Find("index_dtype");
  if (dtype == nullptr || !dtype->is_string()) return Corrupt(path + ": index_dtype missing");
  SEER_ASSIGN_OR_RETURN(cache.index_dtype_, ParseIndexDtype(dtype->as_string()));
  const DatasetManifest& m = dataset.manifest();
  if (s.num_nodes != m.num_nodes || s.num_edges != m.num_edges ||
      cache.index_dtype_ != m.index_dtype) {
    return Corrupt(path + ": built for " + std::to_string(s.num_nodes) + " nodes / " +
                   std::to_string(s.num_edges) + " edges / " + IndexDtypeName(cache.index_dtype_) +
                   ", but dataset " + dataset.dir() + " has " + std::to_string(m.num_nodes) +
                   " / " + std::to_string(m.num_edges) + " / " + IndexDtypeName(m.index_dtype));
  }
  if (s.budget_bytes == 0) return Disabled(m);  // a saved disabled cache
  const std::string table_path = dir + "/" + kTableName;
  const size_t words = static_cast<size_t>((s.num_nodes + 63) / 64);
  if (s.nodes_cached < 0 || s.nodes_cached > s.num_nodes || s.edges_cached < 0 || s.edges_cached > s.num_edges) {
    return Corrupt(path + ": nodes_cached / edges_cached out of range");
  }
  if (version == 1) {  // int64 offset per node, -1 = not cached: converted
    std::vector<int64_t> direct;
    SEER_RETURN_IF_ERROR(ReadArrayFile(table_path, s.num_nodes, &direct));
    cache.bits_.assign(words, 0);
    for (int64_t v = 0; v < s.num_nodes; ++v) {
      if (direct[static_cast<size_t>(v)] == -1) continue;
      if (static_cast<int64_t>(cache.offsets_.size()) == s.nodes_cached) {
        return Corrupt(table_path + ": more cached nodes than the manifest's " + std::to_string(s.nodes_cached));
      }
      cache.bits_[static_cast<size_t>(v) >> 6] |= uint64_t{1} << (v & 63);
      cache.offsets_.push_back(direct[static_cast<size_t>(v)]);
    }
    s.table_bytes = TableBytes(s.num_nodes) + 8 * s.nodes_cached;
    s.bytes = s.table_bytes + s.lists_bytes;
  } else {
    std::vector<uint64_t> table;
    SEER_RETURN_IF_ERROR(ReadArrayFile(table_path, static_cast<int64_t>(words) + s.nodes_cached, &table));
    cache.bits_.assign(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(words));
    cache.offsets_.resize(static_cast<size_t>(s.nodes_cached));
    std::memcpy(cache.offsets_.data(), table.data() + words, static_cast<size_t>(s.nodes_cached) * 8);
  }
  int64_t bits_set = 0;
  for (uint64_t w : cache.bits_) bits_set += __builtin_popcountll(w);
  if (!cache.bits_.empty() && (s.num_nodes & 63) != 0 && (cache.bits_.back() >> (s.num_nodes & 63)) != 0) {
    return Corrupt(table_path + ": bits set past node " + std::to_string(s.num_nodes - 1));
  }
  if (bits_set != s.nodes_cached || static_cast<int64_t>(cache.offsets_.size()) != s.nodes_cached) {
    return Corrupt(table_path + ": " + std::to_string(bits_set) + " cached nodes, the manifest says " +
                   std::to_string(s.nodes_cached));
  }
  for (int64_t off : cache.offsets_) {
    if (off < 0 || off > s.edges_cached) {
      return Corrupt(table_path + ": list offset " + std::to_string(off) + " outside the " +
                     std::to_string(s.edges_cached) + " cached edges");
    }
  }
  cache.BuildRanks();
  if (cache.index_dtype_ == IndexDtype::kUint32) {
    SEER_RETURN_IF_ERROR(ReadArrayFile(dir + "/" + kListsName, s.edges_cached, &cache.lists32_));
  } else {
    SEER_RETURN_IF_ERROR(ReadArrayFile(dir + "/" + kListsName, s.edges_cached, &cache.lists64_));
  }
  for (int64_t i = 0; i < s.edges_cached; ++i) {
    const int64_t u = cache.NeighborAt(0, i);
    if (u < 0 || u >= s.num_nodes) {
      return Corrupt(dir + "/" + kListsName + ": neighbor id " + std::to_string(u) +
                     " at byte offset " + std::to_string(i * IndexDtypeBytes(cache.index_dtype_)) +
                     " is >= num_nodes " + std::to_string(s.num_nodes));
    }
  }
  return cache;
}

Result<int64_t> ParseNeighborCacheBudget(const std::string& text,
                                         const DatasetManifest& manifest) {
  if (!text.empty() && text.back() == '%') {
    const std::string number = text.substr(0, text.size() - 1);
    char* end = nullptr;
    const double percent = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(percent >= 0) ||
        percent > 100) {
      return InvalidArgument("bad neighbor cache budget '" + text +
                             "': a percentage must be within 0%..100%");
    }
    if (percent == 0) return int64_t{0};
    const int64_t lists = manifest.num_edges * manifest.index_bytes() + 8 * manifest.num_nodes;
    return NeighborCache::TableBytes(manifest.num_nodes) +
           static_cast<int64_t>(static_cast<long double>(lists) * percent / 100);
  }
  return ParseBytes(text);
}

}  // namespace seer
