#include "cache/degrees.h"

#include <fcntl.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

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
      return Corrupt(path + ": neighbor id " + std::to_string(static_cast<int64_t>(values[i])) +
                     " at byte offset " +
                     std::to_string((first_element + i) * static_cast<int64_t>(sizeof(Index))) +
                     " is >= num_nodes " + std::to_string(num_nodes));
    }
    ++degrees[u];
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int64_t>> ComputeOutDegrees(const Dataset& dataset,
                                               const DegreeScanOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  const std::string path = dataset.PathOf(dataset_files::kIndices);
  const int64_t index_bytes = m.index_bytes();
  const int64_t total_bytes = m.num_edges * index_bytes;
  std::vector<int64_t> degrees(static_cast<size_t>(m.num_nodes), 0);
  if (total_bytes == 0) return degrees;

  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY | O_CLOEXEC));
  SEER_ASSIGN_OR_RETURN(int64_t file_bytes, FileSizeBytes(fd.get(), path));
  if (file_bytes < total_bytes) {
    return Status(StatusCode::kUnexpectedEof,
                  path + ": " + std::to_string(file_bytes) + " bytes, manifest needs " +
                      std::to_string(total_bytes) + " (num_edges " +
                      std::to_string(m.num_edges) + ")");
  }
  (void)posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

  // Chunks are a multiple of 8 bytes so an entry never straddles two chunks.
  const int64_t chunk_bytes = std::max<int64_t>(8, options.chunk_bytes / 8 * 8);
  std::unique_ptr<char[]> buffer(new char[static_cast<size_t>(chunk_bytes)]);
  ProgressReporter progress("out-degrees " + path, m.num_edges, "edges", options.show_progress);
  for (int64_t offset = 0; offset < total_bytes; offset += chunk_bytes) {
    const int64_t length = std::min(chunk_bytes, total_bytes - offset);
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), buffer.get(), length, offset, path));
    const int64_t count = length / index_bytes;
    const int64_t first = offset / index_bytes;
    if (m.index_dtype == IndexDtype::kUint32) {
      SEER_RETURN_IF_ERROR(CountChunk(reinterpret_cast<const uint32_t*>(buffer.get()), count,
                                      first, m.num_nodes, path, &degrees));
    } else {
      SEER_RETURN_IF_ERROR(CountChunk(reinterpret_cast<const int64_t*>(buffer.get()), count,
                                      first, m.num_nodes, path, &degrees));
    }
    progress.Add(count);
  }
  progress.Finish();
  return degrees;
}

std::vector<int64_t> InDegreesFromIndptr(const std::vector<int64_t>& indptr) {
  if (indptr.empty()) throw std::logic_error("InDegreesFromIndptr: empty indptr");
  std::vector<int64_t> in(indptr.size() - 1);
  for (size_t v = 0; v + 1 < indptr.size(); ++v) in[v] = indptr[v + 1] - indptr[v];
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

NodeScoreFn NodeScoresFromBuckets(std::vector<uint8_t> buckets) {
  auto table = std::make_shared<const std::vector<uint8_t>>(std::move(buckets));
  return [table](const int64_t* ids, int64_t n, uint32_t* out) {
    const uint8_t* t = table->data();
    const uint64_t size = table->size();
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t v = static_cast<uint64_t>(ids[k]);
      out[k] = v < size ? t[v] : 0u;
    }
  };
}

Status MakeBeladyNodeScores(const Dataset& dataset, int64_t max_capacity_rows, PolicyOptions* options) {
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> degrees, ComputeOutDegrees(dataset));
  options->ranking = RankNodesByScore(degrees, max_capacity_rows);
  std::vector<uint8_t> buckets(degrees.size());
  for (size_t v = 0; v < degrees.size(); ++v) buckets[v] = DegreeBucket(degrees[v]);
  std::vector<int64_t>().swap(degrees);
  options->planner.node_scores = NodeScoresFromBuckets(std::move(buckets));
  return Status::Ok();
}

}  // namespace seer
