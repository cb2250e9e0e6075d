// The neighbor cache's files, DIR/ncache/ (format: cache/neighbor_cache.h): Save writes
// table.bin, lists.bin and ncache.json (last, atomically); Load reads them back (version 2,
// or version 1's direct offsets converted) and checks them against the dataset and the
// recorded checksums.
#include "cache/neighbor_cache.h"

#include <fcntl.h>

#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "storage/base/atomic_file.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "storage/base/unique_fd.h"

namespace seer {

namespace {

// The ncache.json fields that mirror NeighborCacheStats one to one.
constexpr std::pair<const char*, int64_t NeighborCacheStats::*> kStatsFields[] = {
    {"budget_bytes", &NeighborCacheStats::budget_bytes},
    {"bytes", &NeighborCacheStats::bytes},
    {"table_bytes", &NeighborCacheStats::table_bytes},
    {"lists_bytes", &NeighborCacheStats::lists_bytes},
    {"num_nodes", &NeighborCacheStats::num_nodes},
    {"num_edges", &NeighborCacheStats::num_edges},
    {"nodes_cached", &NeighborCacheStats::nodes_cached},
    {"edges_cached", &NeighborCacheStats::edges_cached},
};

template <typename T>
Status ReadArrayFile(const std::string& path, int64_t count, std::vector<T>* out) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  const int64_t want = count * static_cast<int64_t>(sizeof(T));
  if (size != want) {
    return Corrupt(fmt::format("{}: {} bytes, the manifest needs {}", path, size, want));
  }
  (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  out->resize(static_cast<size_t>(count));
  return PreadFull(fd.get(), out->data(), want, 0, path);
}


}  // namespace

Status NeighborCache::Save(const std::string& dir, bool force) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoStatus(ec.value(), "create directory", dir);
  const std::string manifest_path = dir + "/" + kManifestName;
  SEER_RETURN_IF_ERROR(RemoveManifestBeforeRewrite(manifest_path, force, "the neighbor cache"));
  std::string table_xxh64, lists_xxh64;
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter table, AtomicFileWriter::Create(dir + "/" + kTableName));
    SEER_RETURN_IF_ERROR(table.AppendValues(bits_.data(), static_cast<int64_t>(bits_.size())));
    SEER_RETURN_IF_ERROR(table.AppendValues(offsets_.data(), static_cast<int64_t>(offsets_.size())));
    table_xxh64 = Xxh64::ToHex(table.xxh64());
    SEER_RETURN_IF_ERROR(table.Close());
  }
  {
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter lists, AtomicFileWriter::Create(dir + "/" + kListsName));
    if (index_dtype_ == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(lists.AppendValues(lists32_.data(), static_cast<int64_t>(lists32_.size())));
    } else {
      SEER_RETURN_IF_ERROR(lists.AppendValues(lists64_.data(), static_cast<int64_t>(lists64_.size())));
    }
    lists_xxh64 = Xxh64::ToHex(lists.xxh64());
    SEER_RETURN_IF_ERROR(lists.Close());
  }
  Json root = Json::object();
  root["format"] = "seer-ncache";
  root["version"] = 2;
  for (const auto& [key, member] : kStatsFields) root[key] = stats_.*member;
  root["index_dtype"] = IndexDtypeName(index_dtype_);
  root["score_rule"] = score_rule_;
  root["dataset_identity"] = dataset_identity_;
  if (!ranked_fanouts_.empty()) {
    root["fanouts"] = ranked_fanouts_;
    root["batch_size"] = ranked_batch_size_;
  }
  root["table_xxh64"] = table_xxh64;
  root["lists_xxh64"] = lists_xxh64;
  return WriteJsonFileAtomically(manifest_path, root);
}

Result<NeighborCache> NeighborCache::Load(const std::string& dir, const Dataset& dataset) {
  const std::string path = dir + "/" + kManifestName;
  NeighborCache cache;
  SEER_ASSIGN_OR_RETURN(const int64_t version, cache.ReadManifest(path));
  const NeighborCacheStats& s = cache.stats_;
  const DatasetManifest& m = dataset.manifest();
  if (!cache.dataset_identity_.empty() && cache.dataset_identity_ != m.Identity()) {
    return Corrupt(fmt::format("{}: built for dataset {}, but {} is dataset {} (a cache of another dataset or of "
                               "an earlier version of this one; rebuild it with seer ncache build)",
                               path, cache.dataset_identity_, dataset.dir(), m.Identity()));
  }
  if (s.num_nodes != m.num_nodes || s.num_edges != m.num_edges ||
      cache.index_dtype_ != m.index_dtype) {
    return Corrupt(fmt::format("{}: built for {} nodes / {} edges / {}, but dataset {} has {} / {} / {}",
                               path, s.num_nodes, s.num_edges, IndexDtypeName(cache.index_dtype_),
                               dataset.dir(), m.num_nodes, m.num_edges,
                               IndexDtypeName(m.index_dtype)));
  }
  if (s.budget_bytes == 0) return Disabled(m);  // a saved disabled cache
  if (s.nodes_cached < 0 || s.nodes_cached > s.num_nodes || s.edges_cached < 0 ||
      s.edges_cached > s.num_edges) {
    return Corrupt(path + ": nodes_cached / edges_cached out of range");
  }
  const std::string table_path = dir + "/" + kTableName;
  SEER_RETURN_IF_ERROR(version == 1 ? cache.ReadVersion1Table(table_path)
                                    : cache.ReadTable(table_path));
  if (!cache.table_xxh64_.empty()) {
    Xxh64 hash;
    hash.Update(cache.bits_.data(), cache.bits_.size() * 8);
    hash.Update(cache.offsets_.data(), cache.offsets_.size() * 8);
    if (Xxh64::ToHex(hash.Digest()) != cache.table_xxh64_) {
      return Corrupt(fmt::format("{}: xxh64 {} does not match {}'s {} (the file changed after it was built)",
                                 table_path, Xxh64::ToHex(hash.Digest()), path, cache.table_xxh64_));
    }
  }
  SEER_RETURN_IF_ERROR(cache.CheckTable(table_path));
  cache.BuildRanks();
  SEER_RETURN_IF_ERROR(cache.ReadLists(dir + "/" + kListsName));
  SEER_RETURN_IF_ERROR(cache.CheckListsChecksum(dir + "/" + kListsName, path));
  return cache;
}

Status NeighborCache::CheckListsChecksum(const std::string& lists_path, const std::string& manifest_path) const {
  if (lists_xxh64_.empty()) return Status::Ok();
  const uint64_t digest = index_dtype_ == IndexDtype::kUint32 ? Xxh64::Hash(lists32_.data(), lists32_.size() * 4)
                                                               : Xxh64::Hash(lists64_.data(), lists64_.size() * 8);
  if (Xxh64::ToHex(digest) != lists_xxh64_) {
    return Corrupt(fmt::format("{}: xxh64 {} does not match {}'s {} (the file changed after it was built)",
                               lists_path, Xxh64::ToHex(digest), manifest_path, lists_xxh64_));
  }
  return Status::Ok();
}

Result<int64_t> NeighborCache::ReadManifest(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json root, ReadJsonFile(path));
  SEER_ASSIGN_OR_RETURN(const std::string format, JsonString(root, "format", path));
  if (format != "seer-ncache") return Corrupt(path + ": not a seer-ncache manifest");
  SEER_ASSIGN_OR_RETURN(const int64_t version, JsonInt(root, "version", path));
  if (version != 1 && version != 2) {
    return Corrupt(fmt::format("{}: unsupported version {}", path, version));
  }
  for (const auto& [key, member] : kStatsFields) {
    SEER_ASSIGN_OR_RETURN(stats_.*member, JsonInt(root, key, path));
  }
  SEER_ASSIGN_OR_RETURN(const std::string dtype_name, JsonString(root, "index_dtype", path));
  Result<IndexDtype> dtype = ParseIndexDtype(dtype_name);
  if (!dtype.ok()) return dtype.status().WithContext(path + ": field 'index_dtype'");
  index_dtype_ = *dtype;
  if (root.contains("score_rule")) {
    SEER_ASSIGN_OR_RETURN(score_rule_, JsonString(root, "score_rule", path));
  }
  // Caches saved before these fields existed have none of them.
  SEER_ASSIGN_OR_RETURN(dataset_identity_, JsonOptionalString(root, "dataset_identity", "", path));
  SEER_ASSIGN_OR_RETURN(table_xxh64_, JsonOptionalString(root, "table_xxh64", "", path));
  SEER_ASSIGN_OR_RETURN(lists_xxh64_, JsonOptionalString(root, "lists_xxh64", "", path));
  if (root.contains("batch_size")) {
    SEER_ASSIGN_OR_RETURN(ranked_batch_size_, JsonInt(root, "batch_size", path));
  }
  if (root.contains("fanouts")) {
    const Json& fanouts = root["fanouts"];
    if (!fanouts.is_array()) return Corrupt(path + ": field 'fanouts' must be an array of integers");
    for (const Json& f : fanouts) {
      if (!f.is_number_integer()) return Corrupt(path + ": field 'fanouts' must be an array of integers");
      ranked_fanouts_.push_back(f.get<int>());
    }
  }
  return version;
}

// Version 2: the rank bitmap's words, then one int64 offset per cached node.
Status NeighborCache::ReadTable(const std::string& table_path) {
  const size_t words = Words(stats_.num_nodes);
  std::vector<uint64_t> table;
  SEER_RETURN_IF_ERROR(
      ReadArrayFile(table_path, static_cast<int64_t>(words) + stats_.nodes_cached, &table));
  bits_.assign(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(words));
  offsets_.resize(static_cast<size_t>(stats_.nodes_cached));
  std::memcpy(offsets_.data(), table.data() + words, static_cast<size_t>(stats_.nodes_cached) * 8);
  return Status::Ok();
}

// Version 1: an int64 offset per node, -1 = not cached; converted to the rank bitmap.
Status NeighborCache::ReadVersion1Table(const std::string& table_path) {
  NeighborCacheStats& s = stats_;
  std::vector<int64_t> direct;
  SEER_RETURN_IF_ERROR(ReadArrayFile(table_path, s.num_nodes, &direct));
  bits_.assign(Words(s.num_nodes), 0);
  for (int64_t v = 0; v < s.num_nodes; ++v) {
    if (direct[static_cast<size_t>(v)] == -1) continue;
    if (static_cast<int64_t>(offsets_.size()) == s.nodes_cached) {
      return Corrupt(fmt::format("{}: more cached nodes than the manifest's {}", table_path, s.nodes_cached));
    }
    bits_[static_cast<size_t>(v) >> 6] |= uint64_t{1} << (v & 63);
    offsets_.push_back(direct[static_cast<size_t>(v)]);
  }
  s.table_bytes = TableBytes(s.num_nodes) + 8 * s.nodes_cached;
  s.bytes = s.table_bytes + s.lists_bytes;
  return Status::Ok();
}

Status NeighborCache::CheckTable(const std::string& table_path) const {
  const NeighborCacheStats& s = stats_;
  int64_t bits_set = 0;
  for (uint64_t w : bits_) bits_set += __builtin_popcountll(w);
  if (!bits_.empty() && (s.num_nodes & 63) != 0 && (bits_.back() >> (s.num_nodes & 63)) != 0) {
    return Corrupt(fmt::format("{}: bits set past node {}", table_path, s.num_nodes - 1));
  }
  if (bits_set != s.nodes_cached || static_cast<int64_t>(offsets_.size()) != s.nodes_cached) {
    return Corrupt(fmt::format("{}: {} cached nodes, the manifest says {}", table_path, bits_set,
                               s.nodes_cached));
  }
  for (int64_t off : offsets_) {
    if (off < 0 || off > s.edges_cached) {
      return Corrupt(fmt::format("{}: list offset {} outside the {} cached edges", table_path, off,
                                 s.edges_cached));
    }
  }
  return Status::Ok();
}

Status NeighborCache::ReadLists(const std::string& lists_path) {
  if (index_dtype_ == IndexDtype::kUint32) {
    SEER_RETURN_IF_ERROR(ReadArrayFile(lists_path, stats_.edges_cached, &lists32_));
  } else {
    SEER_RETURN_IF_ERROR(ReadArrayFile(lists_path, stats_.edges_cached, &lists64_));
  }
  const int64_t bad = FirstNeighborOutsideGraph(stats_.num_nodes);
  if (bad >= 0) {
    return Corrupt(fmt::format("{}: neighbor id {} at byte offset {} is >= num_nodes {}",
                               lists_path, NeighborAt(0, bad),
                               bad * IndexDtypeBytes(index_dtype_), stats_.num_nodes));
  }
  return Status::Ok();
}

}  // namespace seer
