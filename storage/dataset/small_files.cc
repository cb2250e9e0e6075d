#include "storage/dataset/small_files.h"

#include <fcntl.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;
constexpr int64_t kProgressMinBytes = int64_t{256} << 20;

std::string At(const std::string& path, int64_t index, int64_t element_bytes) {
  return path + " at index " + std::to_string(index) + " (byte offset " +
         std::to_string(index * element_bytes) + ")";
}

// Streams the whole file `name` of `ds` as elements of T: visit(values, count, first_index)
// per chunk, the xxh64 of every byte compared with the manifest's at the end.
template <typename T>
Status StreamAndHash(const Dataset& ds, const std::string& name, ProgressReporter* progress,
                     SmallFilesSummary* summary,
                     const std::function<Status(const T*, int64_t, int64_t)>& visit) {
  const std::string path = ds.PathOf(name);
  const auto listed = ds.manifest().files.find(name);
  if (listed == ds.manifest().files.end()) return Status::Ok();
  const int64_t bytes = listed->second.bytes;
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  if (bytes % elem != 0) {
    return Corrupt(path + ": size " + std::to_string(bytes) + " is not a multiple of " +
                   std::to_string(elem) + " bytes");
  }
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  if (size != bytes) {
    return Corrupt(path + ": size is " + std::to_string(size) + " bytes but the manifest records " +
                   std::to_string(bytes));
  }
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  Xxh64 hash;
  std::vector<T> chunk(static_cast<size_t>(kChunkBytes / elem));
  const int64_t count = bytes / elem;
  for (int64_t first = 0; first < count;) {
    const int64_t n = std::min<int64_t>(count - first, static_cast<int64_t>(chunk.size()));
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), chunk.data(), n * elem, first * elem, path));
    hash.Update(chunk.data(), static_cast<size_t>(n * elem));
    SEER_RETURN_IF_ERROR(visit(chunk.data(), n, first));
    summary->bytes_read += n * elem;
    if (progress != nullptr) progress->Add(n * elem);
    first += n;
  }
  const DatasetFileEntry& entry = listed->second;
  if (entry.checksum_kind.empty()) return Status::Ok();
  if (entry.checksum_kind != "xxh64") {
    return Corrupt(path + ": unsupported checksum kind '" + entry.checksum_kind + "' in " +
                   ds.PathOf(dataset_files::kManifest));
  }
  const std::string actual = Xxh64::ToHex(hash.Digest());
  if (actual != entry.checksum) {
    return Corrupt(path + ": xxh64 " + actual + " does not match " +
                   ds.PathOf(dataset_files::kManifest) + "'s " + entry.checksum +
                   " (the file changed after prep)");
  }
  ++summary->checksums_verified;
  return Status::Ok();
}

// indptr: starts at 0, never decreases, ends at num_edges.
Status ValidateIndptr(const Dataset& ds, ProgressReporter* progress, SmallFilesSummary* summary) {
  const DatasetManifest& m = ds.manifest();
  const std::string path = ds.PathOf(dataset_files::kIndptr);
  if (m.files.count(dataset_files::kIndptr) == 0) {
    return Corrupt(ds.PathOf(dataset_files::kManifest) + ": files does not list " +
                   dataset_files::kIndptr);
  }
  if (m.files.at(dataset_files::kIndptr).bytes != (m.num_nodes + 1) * 8) {
    return Corrupt(path + ": size " + std::to_string(m.files.at(dataset_files::kIndptr).bytes) +
                   " bytes, expected " + std::to_string((m.num_nodes + 1) * 8) + " for num_nodes=" +
                   std::to_string(m.num_nodes));
  }
  int64_t previous = 0;
  return StreamAndHash<int64_t>(
      ds, dataset_files::kIndptr, progress, summary,
      [&](const int64_t* v, int64_t n, int64_t first) -> Status {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t index = first + i;
          if (index == 0 && v[i] != 0) {
            return Corrupt(At(path, 0, 8) + ": indptr[0] = " + std::to_string(v[i]) + ", expected 0");
          }
          if (v[i] < previous) {
            return Corrupt(At(path, index, 8) + ": indptr decreases (" + std::to_string(previous) +
                           " then " + std::to_string(v[i]) + ")");
          }
          if (v[i] > m.num_edges) {
            return Corrupt(At(path, index, 8) + ": indptr " + std::to_string(v[i]) +
                           " exceeds num_edges = " + std::to_string(m.num_edges));
          }
          summary->max_in_degree = std::max(summary->max_in_degree, v[i] - previous);
          previous = v[i];
          if (index == m.num_nodes && v[i] != m.num_edges) {
            return Corrupt(At(path, index, 8) + ": last indptr = " + std::to_string(v[i]) +
                           ", expected num_edges = " + std::to_string(m.num_edges));
          }
        }
        return Status::Ok();
      });
}

// labels: every label in [-1, num_classes).
Status ValidateLabels(const Dataset& ds, ProgressReporter* progress, SmallFilesSummary* summary) {
  const DatasetManifest& m = ds.manifest();
  const std::string path = ds.PathOf(dataset_files::kLabels);
  auto labels = m.files.find(dataset_files::kLabels);
  if (labels != m.files.end() && labels->second.bytes != m.num_nodes * 4) {
    return Corrupt(path + ": size " + std::to_string(labels->second.bytes) + " bytes, expected " +
                   std::to_string(m.num_nodes * 4) + " for num_nodes=" + std::to_string(m.num_nodes));
  }
  return StreamAndHash<int32_t>(
      ds, dataset_files::kLabels, progress, summary,
      [&](const int32_t* v, int64_t n, int64_t first) -> Status {
        for (int64_t i = 0; i < n; ++i) {
          if (v[i] < -1 || v[i] >= m.num_classes) {
            return Corrupt(At(path, first + i, 4) + ": label " + std::to_string(v[i]) +
                           " out of range [-1, " + std::to_string(m.num_classes) + ")");
          }
          summary->num_labeled += v[i] >= 0;
        }
        return Status::Ok();
      });
}

// splits: ids in range, disjoint within and across; owner = 1 + split holding the node
// (2 bits per node).
Status ValidateSplits(const Dataset& ds, ProgressReporter* progress, SmallFilesSummary* summary) {
  const DatasetManifest& m = ds.manifest();
  const char* split_files[3] = {dataset_files::kTrain, dataset_files::kValid, dataset_files::kTest};
  std::vector<uint8_t> owner(static_cast<size_t>((m.num_nodes + 3) / 4), 0);
  int64_t* split_counts[3] = {&summary->num_train, &summary->num_valid, &summary->num_test};
  for (int s = 0; s < 3; ++s) {
    const std::string path = ds.PathOf(split_files[s]);
    auto listed = m.files.find(split_files[s]);
    if (listed == m.files.end()) continue;
    *split_counts[s] = listed->second.bytes / 8;
    SEER_RETURN_IF_ERROR(StreamAndHash<int64_t>(
        ds, split_files[s], progress, summary,
        [&](const int64_t* v, int64_t n, int64_t first) -> Status {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t id = v[i];
            if (id < 0 || id >= m.num_nodes) {
              return Corrupt(At(path, first + i, 8) + ": node id " + std::to_string(id) +
                             " out of range [0, " + std::to_string(m.num_nodes) + ")");
            }
            uint8_t& byte = owner[static_cast<size_t>(id / 4)];
            const int shift = static_cast<int>(id % 4) * 2;
            const int previous_owner = (byte >> shift) & 3;
            if (previous_owner != 0) {
              return Corrupt(At(path, first + i, 8) + ": node " + std::to_string(id) +
                             " is already in " + split_files[previous_owner - 1]);
            }
            byte = static_cast<uint8_t>(byte | ((s + 1) << shift));
          }
          return Status::Ok();
        }));
  }
  return Status::Ok();
}

}  // namespace

Result<SmallFilesSummary> ValidateSmallFiles(const Dataset& ds, bool show_progress) {
  const DatasetManifest& m = ds.manifest();
  int64_t total = 0;
  for (const char* name : {dataset_files::kIndptr, dataset_files::kLabels, dataset_files::kTrain,
                           dataset_files::kValid, dataset_files::kTest}) {
    auto it = m.files.find(name);
    if (it != m.files.end()) total += it->second.bytes;
  }
  std::unique_ptr<ProgressReporter> progress;
  if (show_progress && total >= kProgressMinBytes) {
    progress = std::make_unique<ProgressReporter>("validating small files", total, "bytes", true, 5.0);
  }
  SmallFilesSummary summary;
  SEER_RETURN_IF_ERROR(ValidateIndptr(ds, progress.get(), &summary));
  SEER_RETURN_IF_ERROR(ValidateLabels(ds, progress.get(), &summary));
  SEER_RETURN_IF_ERROR(ValidateSplits(ds, progress.get(), &summary));
  if (progress) progress->Finish();
  return summary;
}

}  // namespace seer
