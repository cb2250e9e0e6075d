#include "storage/dataset/dataset_check.h"

#include <fcntl.h>

#include <algorithm>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "storage/base/aligned_buffer.h"
#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/dataset/edge_splits.h"
#include "storage/dataset/finite_values.h"
#include "storage/dataset/node_ids.h"
#include "storage/dataset/node_order.h"
#include "storage/dataset/small_files.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;

std::string At(const std::string& file, int64_t index, int64_t element_bytes) {
  return file + " at index " + std::to_string(index) + " (byte offset " +
         std::to_string(index * element_bytes) + ")";
}

// Every scan reports its bytes to one progress line (rate, ETA over all the scans), set
// by CheckDataset for the duration of its scans.
thread_local ProgressReporter* scan_progress = nullptr;

// The file's xxh64 is checked in the same pass (the shallow check catches in-range
// changes too): the scans count the files they verified here, so --deep skips them.
thread_local int64_t* scan_checksums_verified = nullptr;

// Points the scan's progress line and checksum count at a check's own for its lifetime.
struct ScanProgressScope {
  ScanProgressScope(ProgressReporter* progress, int64_t* checksums_verified) {
    scan_progress = progress;
    scan_checksums_verified = checksums_verified;
  }
  ~ScanProgressScope() {
    scan_progress = nullptr;
    scan_checksums_verified = nullptr;
  }
  ScanProgressScope(const ScanProgressScope&) = delete;
  ScanProgressScope& operator=(const ScanProgressScope&) = delete;
};

// Calls visit(values, count, first_index) over the first `count` elements of T in `path`,
// chunk by chunk. visit returns a Status; the first error stops the scan. When `listed`
// (the file's manifest entry) records an xxh64 and the scan covers the whole file, the
// bytes read are hashed and compared with it at the end.
template <typename T>
Status StreamArray(const std::string& path, int64_t count, int64_t* bytes_read,
                   const std::function<Status(const T*, int64_t, int64_t)>& visit,
                   const DatasetFileEntry* listed = nullptr) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  std::vector<T> chunk(static_cast<size_t>(kChunkBytes / static_cast<int64_t>(sizeof(T))));
  const bool verify = listed != nullptr && listed->checksum_kind == "xxh64" &&
                      listed->bytes == count * static_cast<int64_t>(sizeof(T));
  Xxh64 hash;
  for (int64_t first = 0; first < count;) {
    int64_t n = std::min<int64_t>(count - first, static_cast<int64_t>(chunk.size()));
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), chunk.data(), n * static_cast<int64_t>(sizeof(T)),
                                   first * static_cast<int64_t>(sizeof(T)), path));
    *bytes_read += n * static_cast<int64_t>(sizeof(T));
    if (verify) hash.Update(chunk.data(), static_cast<size_t>(n) * sizeof(T));
    SEER_RETURN_IF_ERROR(visit(chunk.data(), n, first));
    if (scan_progress != nullptr) scan_progress->Add(n * static_cast<int64_t>(sizeof(T)));
    first += n;
  }
  if (verify) {
    const std::string actual = Xxh64::ToHex(hash.Digest());
    if (actual != listed->checksum) {
      return Corrupt(path + ": xxh64 " + actual + " does not match the manifest's " + listed->checksum +
                     " (the file changed after it was written)");
    }
    if (scan_checksums_verified != nullptr) ++*scan_checksums_verified;
  }
  return Status::Ok();
}

// The manifest's entry for `name`, or nullptr.
const DatasetFileEntry* Listed(const Dataset& ds, const std::string& name) {
  auto it = ds.manifest().files.find(name);
  return it == ds.manifest().files.end() ? nullptr : &it->second;
}

Status ExpectSize(const Dataset& ds, const std::string& name, int64_t expected, bool required) {
  const std::string path = ds.PathOf(name);
  auto size = FileSizeBytes(path);
  if (!size.ok()) {
    if (!required && size.status().code() == StatusCode::kNotFound) return Status::Ok();
    return size.status();
  }
  auto listed = ds.manifest().files.find(name);
  if (listed == ds.manifest().files.end()) {
    return Corrupt(path + ": file exists but " + dataset_files::kManifest + " does not list it");
  }
  if (listed->second.bytes != *size) {
    return Corrupt(path + ": size " + std::to_string(*size) + " bytes, manifest records " +
                   std::to_string(listed->second.bytes));
  }
  if (expected >= 0 && *size != expected) {
    return Corrupt(path + ": size " + std::to_string(*size) + " bytes, expected " +
                   std::to_string(expected) + " for the manifest's shape");
  }
  return Status::Ok();
}

// The node-id range check shared by indices.bin and the split files.
Status CheckNodeId(const std::string& path, int64_t index, int64_t element_bytes, int64_t id,
                   int64_t num_nodes) {
  if (id >= 0 && id < num_nodes) return Status::Ok();
  return Corrupt(At(path, index, element_bytes) + ": node id " + std::to_string(id) +
                 " out of range [0, " + std::to_string(num_nodes) + ")");
}

// Every listed file exists with the recorded size; the fixed files have the size the
// manifest's shape implies.
Status CheckSizes(const Dataset& ds) {
  const DatasetManifest& m = ds.manifest();
  if (m.num_nodes < 0 || m.num_edges < 0 || m.feature_dim < 0 || m.num_classes < 0) {
    return Corrupt(ds.PathOf(dataset_files::kManifest) +
                   ": negative num_nodes/num_edges/feature_dim/num_classes");
  }
  for (const auto& [name, entry] : m.files) {
    SEER_RETURN_IF_ERROR(ExpectSize(ds, name, -1, true));
  }
  SEER_RETURN_IF_ERROR(ExpectSize(ds, dataset_files::kIndptr, (m.num_nodes + 1) * 8, true));
  SEER_RETURN_IF_ERROR(ExpectSize(ds, dataset_files::kIndices, m.num_edges * m.index_bytes(), true));
  const int64_t feature_bytes = m.num_nodes * m.feature_row_bytes();
  SEER_RETURN_IF_ERROR(ExpectSize(ds, dataset_files::kFeatures, AlignUp(feature_bytes, 4096),
                                  m.feature_dim > 0));
  SEER_RETURN_IF_ERROR(ExpectSize(ds, dataset_files::kLabels, m.num_nodes * 4, false));
  for (const char* split : {dataset_files::kTrain, dataset_files::kValid, dataset_files::kTest}) {
    SEER_RETURN_IF_ERROR(ExpectSize(ds, split, -1, false));
  }
  if (m.index_dtype == IndexDtype::kUint32 && m.num_nodes > (int64_t{1} << 32)) {
    return Corrupt(ds.PathOf(dataset_files::kManifest) + ": index_dtype uint32 cannot hold " +
                   std::to_string(m.num_nodes) + " node ids");
  }
  return Status::Ok();
}

// indices: every id < num_nodes.
template <typename Index>
Status CheckIndicesAs(const Dataset& ds, int64_t* bytes_read) {
  const DatasetManifest& m = ds.manifest();
  const std::string path = ds.PathOf(dataset_files::kIndices);
  return StreamArray<Index>(path, m.num_edges, bytes_read,
                            [&](const Index* v, int64_t n, int64_t first) -> Status {
                              for (int64_t i = 0; i < n; ++i) {
                                SEER_RETURN_IF_ERROR(CheckNodeId(path, first + i, sizeof(Index),
                                                                 static_cast<int64_t>(v[i]),
                                                                 m.num_nodes));
                              }
                              return Status::Ok();
                            },
                            Listed(ds, dataset_files::kIndices));
}

Status CheckIndices(const Dataset& ds, int64_t* bytes_read) {
  if (ds.manifest().index_dtype == IndexDtype::kUint32) {
    return CheckIndicesAs<uint32_t>(ds, bytes_read);
  }
  return CheckIndicesAs<int64_t>(ds, bytes_read);
}

// deep: every value of the feature file `name` (num_rows rows of dim values of a float
// dtype) is finite; the file's xxh64 is checked in the same pass. Returns whether it
// scanned (and so hashed) the file.
Result<bool> CheckFeatureFileFinite(const Dataset& ds, const std::string& name, int64_t num_rows, int64_t dim,
                                    FeatureDtype dtype, bool show_progress, DatasetCheckSummary* summary) {
  if (dim <= 0 || num_rows <= 0) return false;
  if (dtype != FeatureDtype::kFloat32 && dtype != FeatureDtype::kFloat16 && dtype != FeatureDtype::kBFloat16) {
    return false;  // quantized rows are finite by construction (their checksum is verified as any file's)
  }
  const DatasetFileEntry* listed = Listed(ds, name);
  if (listed == nullptr) return false;
  const std::string path = ds.PathOf(name);
  const int64_t value_bytes = FeatureDtypeBytes(dtype);
  const int64_t row_bytes = FeatureRowBytes(dtype, dim);
  const int64_t data_bytes = num_rows * row_bytes;
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  const int64_t chunk_rows = std::max<int64_t>(1, kChunkBytes / row_bytes);
  std::vector<char> chunk(static_cast<size_t>(std::max(chunk_rows * row_bytes, kChunkBytes)));
  ProgressReporter progress("check: feature values", size, "bytes", show_progress);
  Xxh64 hash;
  for (int64_t offset = 0; offset < size;) {
    // Whole rows while there are rows, then the padding.
    const int64_t n = offset < data_bytes ? std::min(chunk_rows * row_bytes, data_bytes - offset)
                                          : std::min<int64_t>(static_cast<int64_t>(chunk.size()), size - offset);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), chunk.data(), n, offset, path));
    hash.Update(chunk.data(), static_cast<size_t>(n));
    if (offset < data_bytes) {
      const int64_t bad = FirstNonFiniteStored(chunk.data(), dtype, n / value_bytes);
      if (bad >= 0) {
        const int64_t at = offset + bad * value_bytes;
        float value = 0;
        DecodeFeatureValues(chunk.data() + bad * value_bytes, dtype, 1, &value);
        return Corrupt(fmt::format("{}: node {}, feature {} (byte offset {}): value {} is not finite (training "
                                   "fails on it; `seer prep` refuses such values unless --allow-non-finite)",
                                   path, at / row_bytes, (at % row_bytes) / value_bytes, at, value));
      }
    }
    summary->bytes_read += n;
    progress.Add(n);
    offset += n;
  }
  progress.Finish();
  if (listed->checksum_kind == "xxh64" && listed->bytes == size) {
    const std::string actual = Xxh64::ToHex(hash.Digest());
    if (actual != listed->checksum) {
      return Corrupt(path + ": xxh64 " + actual + " does not match the manifest's " + listed->checksum);
    }
    ++summary->checksums_verified;
    return true;
  }
  return false;  // VerifyChecksums reports it
}

Result<bool> CheckFeaturesFinite(const Dataset& ds, bool show_progress, DatasetCheckSummary* summary) {
  const DatasetManifest& m = ds.manifest();
  return CheckFeatureFileFinite(ds, dataset_files::kFeatures, m.num_nodes, m.feature_dim, m.feature_dtype,
                                show_progress, summary);
}

// deep: the xxh64 of every listed file equals the manifest's (the files the scans hashed
// are not read again).
Status VerifyChecksums(const Dataset& ds, bool show_progress, bool features_hashed, DatasetCheckSummary* summary) {
  const DatasetManifest& m = ds.manifest();
  ProgressReporter progress("check: checksums", static_cast<int64_t>(m.files.size()), "files",
                            show_progress, 5.0);
  for (const auto& [name, entry] : m.files) {
    if (name == dataset_files::kIndptr || name == dataset_files::kIndices || name == dataset_files::kLabels ||
        name == dataset_files::kTrain || name == dataset_files::kValid || name == dataset_files::kTest) {
      if (entry.checksum_kind == "xxh64") continue;  // verified by the scans
    }
    if (name == dataset_files::kFeatures && features_hashed) continue;
    const std::string path = ds.PathOf(name);
    if (entry.checksum_kind != "xxh64") {
      return Corrupt(path + ": unsupported checksum kind '" + entry.checksum_kind + "' in manifest");
    }
    SEER_ASSIGN_OR_RETURN(std::string actual, FileXxh64(path));
    if (actual != entry.checksum) {
      return Corrupt(path + ": xxh64 " + actual + " does not match the manifest's " + entry.checksum);
    }
    summary->bytes_read += entry.bytes;
    ++summary->checksums_verified;
    progress.Add(1);
  }
  progress.Finish();
  return Status::Ok();
}

// ---- typed datasets ----

// A relation's indptr: count_dst + 1 entries (its size is checked at open), from 0, never
// decreasing, ending at the relation's num_edges.
Status CheckRelationIndptr(const Dataset& ds, const DatasetRelation& r, int64_t num_dst, int64_t* bytes_read,
                           RelationCheckSummary* summary) {
  const std::string path = ds.PathOf(r.indptr);
  int64_t previous = 0;
  return StreamArray<int64_t>(
      path, num_dst + 1, bytes_read,
      [&](const int64_t* v, int64_t n, int64_t first) -> Status {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t index = first + i;
          if (index == 0 && v[i] != 0) {
            return Corrupt(At(path, 0, 8) + ": indptr[0] = " + std::to_string(v[i]) + ", expected 0");
          }
          if (v[i] < previous) {
            return Corrupt(At(path, index, 8) + ": indptr decreases (" + std::to_string(previous) + " then " +
                           std::to_string(v[i]) + ")");
          }
          if (v[i] > r.num_edges) {
            return Corrupt(At(path, index, 8) + ": indptr " + std::to_string(v[i]) + " exceeds the relation's " +
                           "num_edges = " + std::to_string(r.num_edges));
          }
          summary->max_in_degree = std::max(summary->max_in_degree, v[i] - previous);
          previous = v[i];
          if (index == num_dst && v[i] != r.num_edges) {
            return Corrupt(At(path, index, 8) + ": last indptr = " + std::to_string(v[i]) +
                           ", expected the relation's num_edges = " + std::to_string(r.num_edges));
          }
        }
        return Status::Ok();
      },
      Listed(ds, r.indptr));
}

// A relation's indices: every id a local id of the source type.
template <typename Index>
Status CheckRelationIndicesAs(const Dataset& ds, const DatasetRelation& r, int64_t num_src, int64_t* bytes_read) {
  const std::string path = ds.PathOf(r.indices);
  return StreamArray<Index>(
      path, r.num_edges, bytes_read,
      [&](const Index* v, int64_t n, int64_t first) -> Status {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t id = static_cast<int64_t>(v[i]);
          if (id < 0 || id >= num_src) {
            return Corrupt(At(path, first + i, sizeof(Index)) + ": " + r.src + " id " + std::to_string(id) +
                           " out of range [0, " + std::to_string(num_src) + ") (the source type of " + r.key() +
                           ")");
          }
        }
        return Status::Ok();
      },
      Listed(ds, r.indices));
}

// A node type's labels in [-1, num_classes) and its split ids in [0, count), no id twice
// within or across the splits (2 bits per node).
Status CheckNodeTypeFiles(const Dataset& ds, const DatasetNodeType& t, int64_t* bytes_read,
                          NodeTypeCheckSummary* summary) {
  if (!t.labels.empty()) {
    const std::string path = ds.PathOf(t.labels);
    SEER_RETURN_IF_ERROR(StreamArray<int32_t>(
        path, t.count, bytes_read,
        [&](const int32_t* v, int64_t n, int64_t first) -> Status {
          for (int64_t i = 0; i < n; ++i) {
            if (v[i] < -1 || v[i] >= t.num_classes) {
              return Corrupt(At(path, first + i, 4) + ": label " + std::to_string(v[i]) + " out of range [-1, " +
                             std::to_string(t.num_classes) + ") (node type " + t.name + ")");
            }
            summary->num_labeled += v[i] >= 0;
          }
          return Status::Ok();
        },
        Listed(ds, t.labels)));
  }
  const std::string* split_files[3] = {&t.train, &t.valid, &t.test};
  int64_t* split_counts[3] = {&summary->num_train, &summary->num_valid, &summary->num_test};
  if (t.train.empty() && t.valid.empty() && t.test.empty()) return Status::Ok();
  std::vector<uint8_t> owner(static_cast<size_t>((t.count + 3) / 4), 0);
  for (int s = 0; s < 3; ++s) {
    if (split_files[s]->empty()) continue;
    const std::string path = ds.PathOf(*split_files[s]);
    const DatasetFileEntry* listed = Listed(ds, *split_files[s]);
    *split_counts[s] = listed->bytes / 8;  // a multiple of 8: checked at open
    SEER_RETURN_IF_ERROR(StreamArray<int64_t>(
        path, listed->bytes / 8, bytes_read,
        [&](const int64_t* v, int64_t n, int64_t first) -> Status {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t id = v[i];
            if (id < 0 || id >= t.count) {
              return Corrupt(At(path, first + i, 8) + ": " + t.name + " id " + std::to_string(id) +
                             " out of range [0, " + std::to_string(t.count) + ")");
            }
            uint8_t& byte = owner[static_cast<size_t>(id / 4)];
            const int shift = static_cast<int>(id % 4) * 2;
            const int previous_owner = (byte >> shift) & 3;
            if (previous_owner != 0) {
              return Corrupt(At(path, first + i, 8) + ": " + t.name + " node " + std::to_string(id) +
                             " is already in " + *split_files[previous_owner - 1]);
            }
            byte = static_cast<uint8_t>(byte | ((s + 1) << shift));
          }
          return Status::Ok();
        },
        listed));
  }
  return Status::Ok();
}

// A type's node_ids file (`seer prep --remap-ids`): count lines, ascending, each id reads
// back (CheckNodeIdsFile), and its checksum, which no scan above hashes.
Status CheckTypeNodeIds(const Dataset& ds, const DatasetNodeType& t, DatasetCheckSummary* summary) {
  const std::string path = ds.PathOf(t.node_ids);
  const Status lines = CheckNodeIdsFile(path, t.count);
  if (!lines.ok()) return Status(lines.code(), lines.message() + " (node type " + t.name + ")");
  const DatasetFileEntry& entry = ds.manifest().files.at(t.node_ids);
  if (entry.checksum_kind != "xxh64") return Status::Ok();
  SEER_ASSIGN_OR_RETURN(std::string actual, FileXxh64(path));
  if (actual != entry.checksum) {
    return Corrupt(path + ": xxh64 " + actual + " does not match the manifest's " + entry.checksum);
  }
  summary->bytes_read += entry.bytes;
  ++summary->checksums_verified;
  return Status::Ok();
}

Result<DatasetCheckSummary> CheckTypedDataset(const Dataset& ds, const DatasetCheckOptions& options) {
  const DatasetManifest& m = ds.manifest();
  DatasetCheckSummary summary;
  summary.manifest = m;
  for (const auto& [name, entry] : m.files) SEER_RETURN_IF_ERROR(ExpectSize(ds, name, -1, true));
  int64_t scan_bytes = 0;  // everything but the features
  for (const auto& [name, entry] : m.files) scan_bytes += entry.bytes;
  for (const DatasetNodeType& t : m.node_types) {
    if (!t.features.empty()) scan_bytes -= m.files.at(t.features).bytes;
  }
  ProgressReporter progress("check: scan", scan_bytes, "bytes", options.show_progress);
  const ScanProgressScope scan_scope(&progress, &summary.checksums_verified);
  for (const DatasetNodeType& t : m.node_types) {
    summary.node_types.push_back(NodeTypeCheckSummary{t.name});
    SEER_RETURN_IF_ERROR(CheckNodeTypeFiles(ds, t, &summary.bytes_read, &summary.node_types.back()));
    if (!t.node_ids.empty()) SEER_RETURN_IF_ERROR(CheckTypeNodeIds(ds, t, &summary));
  }
  for (const DatasetRelation& r : m.relations) {
    summary.relations.push_back(RelationCheckSummary{r.key()});
    const int64_t num_src = m.FindNodeType(r.src)->count, num_dst = m.FindNodeType(r.dst)->count;
    SEER_RETURN_IF_ERROR(CheckRelationIndptr(ds, r, num_dst, &summary.bytes_read, &summary.relations.back()));
    if (r.index_dtype == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(CheckRelationIndicesAs<uint32_t>(ds, r, num_src, &summary.bytes_read));
    } else {
      SEER_RETURN_IF_ERROR(CheckRelationIndicesAs<int64_t>(ds, r, num_src, &summary.bytes_read));
    }
  }
  progress.Finish();
  scan_progress = nullptr;
  scan_checksums_verified = nullptr;
  if (!options.deep) return summary;
  // deep: the feature files (values finite, checksum) and any file the scans did not hash.
  for (const DatasetNodeType& t : m.node_types) {
    if (t.features.empty()) continue;
    SEER_ASSIGN_OR_RETURN(bool hashed, CheckFeatureFileFinite(ds, t.features, t.count, t.feature_dim,
                                                              t.feature_dtype, options.show_progress, &summary));
    if (hashed) continue;
    const DatasetFileEntry& entry = m.files.at(t.features);
    const std::string path = ds.PathOf(t.features);
    if (entry.checksum_kind != "xxh64") {
      return Corrupt(path + ": no xxh64 in " + ds.PathOf(dataset_files::kManifest) + ": cannot be verified");
    }
    SEER_ASSIGN_OR_RETURN(std::string actual, FileXxh64(path));
    if (actual != entry.checksum) {
      return Corrupt(path + ": xxh64 " + actual + " does not match the manifest's " + entry.checksum);
    }
    summary.bytes_read += entry.bytes;
    ++summary.checksums_verified;
  }
  return summary;
}

}  // namespace

Result<DatasetCheckSummary> CheckDataset(const std::string& dir, const DatasetCheckOptions& options) {
  SEER_ASSIGN_OR_RETURN(Dataset ds, Dataset::OpenAnyKind(dir));
  if (ds.manifest().typed()) return CheckTypedDataset(ds, options);
  SEER_RETURN_IF_ERROR(CheckSizes(ds));
  // indptr, labels and the splits: the same pass (and checksums) as every command's open.
  SEER_ASSIGN_OR_RETURN(SmallFilesSummary small, ValidateSmallFiles(ds, options.show_progress));
  DatasetCheckSummary summary;
  static_cast<SmallFilesSummary&>(summary) = small;
  summary.manifest = ds.manifest();
  // indices.bin, the one large file the shallow check reads.
  auto indices_size = FileSizeBytes(ds.PathOf(dataset_files::kIndices));
  ProgressReporter progress("check: scan", indices_size.ok() ? *indices_size : 0, "bytes",
                            options.show_progress);
  const ScanProgressScope scan_scope(&progress, &summary.checksums_verified);
  SEER_RETURN_IF_ERROR(CheckIndices(ds, &summary.bytes_read));
  if (!ds.manifest().node_ids.empty()) {
    SEER_RETURN_IF_ERROR(CheckNodeIdsFile(ds.PathOf(ds.manifest().node_ids), ds.manifest().num_nodes));
  }
  if (!ds.manifest().node_order.empty()) {  // a permutation of the nodes (seer reorder)
    SEER_RETURN_IF_ERROR(CheckNodeOrderFile(ds.PathOf(ds.manifest().node_order), ds.manifest().num_nodes));
  }
  progress.Finish();
  scan_progress = nullptr;
  // Held-out edges (seer split-edges): their files, and none of them in the topology.
  SEER_RETURN_IF_ERROR(CheckEdgeSplits(ds, &summary.bytes_read, &summary.checksums_verified));
  if (options.deep) {
    SEER_ASSIGN_OR_RETURN(bool features_hashed, CheckFeaturesFinite(ds, options.show_progress, &summary));
    SEER_RETURN_IF_ERROR(VerifyChecksums(ds, options.show_progress, features_hashed, &summary));
  }
  return summary;
}

}  // namespace seer
