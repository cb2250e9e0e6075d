#include "storage/dataset/edge_splits.h"

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "storage/base/checksum.h"
#include "storage/base/file_io.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;

// One file read front to back through a 1 MiB buffer, every byte hashed.
class SequentialFile {
 public:
  SequentialFile() = default;  // empty until Open
  static Result<SequentialFile> Open(const std::string& path) {
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
    SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    SequentialFile file;
    file.path_ = path;
    file.fd_ = std::move(fd);
    file.size_ = size;
    file.buffer_.resize(static_cast<size_t>(kChunkBytes));
    return file;
  }

  // The next `bytes` bytes of the file into dest; kUnexpectedEof past its end.
  Status Read(void* dest, int64_t bytes) {
    char* out = static_cast<char*>(dest);
    while (bytes > 0) {
      if (head_ == filled_) {
        const int64_t n = std::min<int64_t>(kChunkBytes, size_ - offset_);
        if (n <= 0) {
          return Status(StatusCode::kUnexpectedEof,
                        path_ + ": unexpected end of file at byte offset " + std::to_string(offset_));
        }
        SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), n, offset_, path_));
        hash_.Update(buffer_.data(), static_cast<size_t>(n));
        offset_ += n;
        head_ = 0;
        filled_ = n;
      }
      const int64_t take = std::min(bytes, filled_ - head_);
      std::memcpy(out, buffer_.data() + head_, static_cast<size_t>(take));
      head_ += take;
      out += take;
      bytes -= take;
    }
    return Status::Ok();
  }

  // The whole file was read and hashes to `listed`'s xxh64 (when it records one).
  Status Finish(const DatasetFileEntry* listed) {
    if (offset_ != size_ || head_ != filled_) {
      return Corrupt(path_ + ": " + std::to_string(size_ - offset_ + filled_ - head_) +
                     " bytes after the data the manifest describes");
    }
    if (listed == nullptr || listed->checksum_kind != "xxh64") return Status::Ok();
    const std::string actual = Xxh64::ToHex(hash_.Digest());
    if (actual != listed->checksum) {
      return Corrupt(path_ + ": xxh64 " + actual + " does not match the manifest's " + listed->checksum +
                     " (the file changed after it was written)");
    }
    return Status::Ok();
  }

  int64_t size() const { return size_; }

 private:
  std::string path_;
  UniqueFd fd_;
  int64_t size_ = 0;
  int64_t offset_ = 0;  // bytes read from the file into the buffer so far
  std::vector<char> buffer_;
  int64_t head_ = 0, filled_ = 0;
  Xxh64 hash_;
};

const DatasetFileEntry* Listed(const Dataset& ds, const std::string& name) {
  auto it = ds.manifest().files.find(name);
  return it == ds.manifest().files.end() ? nullptr : &it->second;
}

}  // namespace

SplitMix64 EvalNegativesStream(uint64_t seed, const std::string& split) {
  const std::string key = "seer-eval-negatives:" + split;
  return SplitMix64(SplitMixFinalize(seed ^ Xxh64::Hash(key.data(), key.size(), 0)));
}

int64_t HeldOutCount(double fraction, int64_t candidates) {
  return static_cast<int64_t>(std::llround(fraction * static_cast<double>(candidates)));
}

// ---- NeighborListReader ------------------------------------------------------

struct NeighborListReader::State {
  const Dataset* dataset = nullptr;
  SequentialFile indptr, indices;
  int64_t num_nodes = 0, num_edges = 0, index_bytes = 8;
  int64_t node = -1;        // the node Next() returned last
  int64_t list_begin = 0;   // its first element
  int64_t list_end = 0;     // one past its last element (= the next list's begin)
  std::vector<char> raw;    // one list's bytes
};

NeighborListReader::NeighborListReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
NeighborListReader::NeighborListReader(NeighborListReader&&) noexcept = default;
NeighborListReader& NeighborListReader::operator=(NeighborListReader&&) noexcept = default;
NeighborListReader::~NeighborListReader() = default;

Result<NeighborListReader> NeighborListReader::Open(const Dataset& dataset) {
  auto state = std::make_unique<State>();
  state->dataset = &dataset;
  const DatasetManifest& m = dataset.manifest();
  state->num_nodes = m.num_nodes;
  state->num_edges = m.num_edges;
  state->index_bytes = m.index_bytes();
  SEER_ASSIGN_OR_RETURN(state->indptr, SequentialFile::Open(dataset.PathOf(dataset_files::kIndptr)));
  SEER_ASSIGN_OR_RETURN(state->indices, SequentialFile::Open(dataset.PathOf(dataset_files::kIndices)));
  int64_t first = 0;
  SEER_RETURN_IF_ERROR(state->indptr.Read(&first, 8));
  if (first != 0) {
    return Corrupt(dataset.PathOf(dataset_files::kIndptr) + " at index 0 (byte offset 0): " +
                   std::to_string(first) + ", expected 0");
  }
  return NeighborListReader(std::move(state));
}

Result<bool> NeighborListReader::Next(int64_t* node, std::vector<int64_t>* sources) {
  State& s = *state_;
  if (s.node + 1 >= s.num_nodes) return false;
  int64_t end = 0;
  SEER_RETURN_IF_ERROR(s.indptr.Read(&end, 8));
  ++s.node;
  if (end < s.list_end || end > s.num_edges) {
    return Corrupt(fmt::format("{} at index {} (byte offset {}): {} {} (num_edges = {})",
                               s.dataset->PathOf(dataset_files::kIndptr), s.node + 1, 8 * (s.node + 1), end,
                               end < s.list_end ? "is below the entry before it" : "passes num_edges",
                               s.num_edges));
  }
  if (s.node + 1 == s.num_nodes && end != s.num_edges) {
    return Corrupt(fmt::format("{}: the last entry is {}, expected num_edges = {}",
                               s.dataset->PathOf(dataset_files::kIndptr), end, s.num_edges));
  }
  s.list_begin = s.list_end;
  s.list_end = end;
  const int64_t count = end - s.list_begin;
  s.raw.resize(static_cast<size_t>(count * s.index_bytes));
  SEER_RETURN_IF_ERROR(s.indices.Read(s.raw.data(), count * s.index_bytes));
  sources->resize(static_cast<size_t>(count));
  if (s.index_bytes == 4) {
    for (int64_t i = 0; i < count; ++i) {
      uint32_t v;
      std::memcpy(&v, s.raw.data() + 4 * i, 4);
      (*sources)[static_cast<size_t>(i)] = v;
    }
  } else {
    std::memcpy(sources->data(), s.raw.data(), static_cast<size_t>(count * 8));
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t u = (*sources)[static_cast<size_t>(i)];
    if (u < 0 || u >= s.num_nodes) {
      const int64_t e = s.list_begin + i;
      return Corrupt(fmt::format("{} at index {} (byte offset {}): node id {} out of range [0, {})",
                                 s.dataset->PathOf(dataset_files::kIndices), e, e * s.index_bytes, u, s.num_nodes));
    }
  }
  *node = s.node;
  return true;
}

int64_t NeighborListReader::list_offset() const { return state_->list_begin; }

Status NeighborListReader::Finish() {
  State& s = *state_;
  if (s.node + 1 != s.num_nodes) throw std::logic_error("NeighborListReader::Finish before the last list");
  SEER_RETURN_IF_ERROR(s.indptr.Finish(Listed(*s.dataset, dataset_files::kIndptr)));
  return s.indices.Finish(Listed(*s.dataset, dataset_files::kIndices));
}

int64_t NeighborListReader::bytes_read() const { return state_->indptr.size() + state_->indices.size(); }

// ---- HeldOutEdgeSet ------------------------------------------------------------

HeldOutEdgeSet::Entry HeldOutEdgeSet::KeyOf(int64_t src, int64_t dst) const {
  if (undirected_) return Entry{std::max(src, dst), std::min(src, dst), -1};
  return Entry{dst, src, -1};
}

void HeldOutEdgeSet::Add(int64_t src, int64_t dst, int64_t origin) {
  if (sealed_) throw std::logic_error("HeldOutEdgeSet::Add after Seal");
  Entry e = KeyOf(src, dst);
  e.origin = origin;
  entries_.push_back(e);
}

std::optional<std::pair<int64_t, int64_t>> HeldOutEdgeSet::Seal() {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.hi, a.lo, a.origin) < std::tie(b.hi, b.lo, b.origin);
  });
  sealed_ = true;
  for (size_t i = 1; i < entries_.size(); ++i) {
    if (entries_[i].hi == entries_[i - 1].hi && entries_[i].lo == entries_[i - 1].lo) {
      return std::make_pair(entries_[i - 1].origin, entries_[i].origin);
    }
  }
  return std::nullopt;
}

int64_t HeldOutEdgeSet::Find(int64_t src, int64_t dst) const {
  if (!sealed_) throw std::logic_error("HeldOutEdgeSet::Find before Seal");
  const Entry key = KeyOf(src, dst);
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key, [](const Entry& a, const Entry& b) {
    return std::tie(a.hi, a.lo) < std::tie(b.hi, b.lo);
  });
  if (it == entries_.end() || it->hi != key.hi || it->lo != key.lo) return -1;
  return it->origin;
}

// ---- Reading and checking the split files ---------------------------------------

namespace {

// Streams one split file: visit(src, dst, index) per pair, after the range check.
template <typename Visit>
Status StreamSplitFile(const Dataset& ds, const std::string& name, int64_t count, Visit visit) {
  const std::string path = ds.PathOf(name);
  SEER_ASSIGN_OR_RETURN(SequentialFile file, SequentialFile::Open(path));
  if (file.size() != count * kHeldOutEdgeBytes) {
    return Corrupt(path + ": size " + std::to_string(file.size()) + " bytes, expected " +
                   std::to_string(count * kHeldOutEdgeBytes) + " (" + std::to_string(count) +
                   " held-out edges of 16 bytes in " + dataset_files::kManifest + ")");
  }
  const int64_t n = ds.manifest().num_nodes;
  int64_t pair[2];
  for (int64_t i = 0; i < count; ++i) {
    SEER_RETURN_IF_ERROR(file.Read(pair, sizeof pair));
    for (int k = 0; k < 2; ++k) {
      if (pair[k] < 0 || pair[k] >= n) {
        return Corrupt(fmt::format("{} at pair {} (byte offset {}): {} node id {} out of range [0, {})", path, i,
                                   i * kHeldOutEdgeBytes + 8 * k, k == 0 ? "source" : "destination", pair[k], n));
      }
    }
    visit(pair[0], pair[1], i);
  }
  return file.Finish(Listed(ds, name));
}

// Streams one negatives file (K ids per held-out edge): its size, every id in range
// (named by row, column and byte offset), its xxh64. RAM: the 1 MiB read buffer.
Status CheckNegativesFile(const Dataset& ds, const std::string& name, int64_t count, int64_t k) {
  const std::string path = ds.PathOf(name);
  SEER_ASSIGN_OR_RETURN(SequentialFile file, SequentialFile::Open(path));
  if (file.size() != count * k * 8) {
    return Corrupt(fmt::format("{}: size {} bytes, expected {} ({} held-out edges x {} negatives x 8 bytes in {})",
                               path, file.size(), count * k * 8, count, k, dataset_files::kManifest));
  }
  const int64_t n = ds.manifest().num_nodes;
  constexpr int64_t kValues = 8192;
  std::vector<int64_t> values(static_cast<size_t>(kValues));
  const int64_t total = count * k;
  for (int64_t done = 0; done < total;) {
    const int64_t take = std::min(kValues, total - done);
    SEER_RETURN_IF_ERROR(file.Read(values.data(), take * 8));
    for (int64_t j = 0; j < take; ++j) {
      const int64_t id = values[static_cast<size_t>(j)];
      if (id < 0 || id >= n) {
        const int64_t at = done + j;
        return Corrupt(fmt::format("{} at row {}, column {} (byte offset {}): negative node id {} out of range [0, {})",
                                   path, at / k, at % k, at * 8, id, n));
      }
    }
    done += take;
  }
  return file.Finish(Listed(ds, name));
}

}  // namespace

Result<std::vector<std::pair<int64_t, int64_t>>> LoadHeldOutEdges(const Dataset& dataset, const std::string& split) {
  const DatasetEdgeSplits& e = dataset.manifest().edge_splits;
  if (split != "valid" && split != "test") throw std::logic_error("LoadHeldOutEdges: unknown split '" + split + "'");
  if (!e.present()) {
    return Status(StatusCode::kNotFound, dataset.PathOf(dataset_files::kManifest) +
                                             " has no edge splits (make them with `seer split-edges`)");
  }
  const bool valid = split == "valid";
  std::vector<std::pair<int64_t, int64_t>> edges;
  edges.reserve(static_cast<size_t>(valid ? e.num_valid : e.num_test));
  SEER_RETURN_IF_ERROR(StreamSplitFile(dataset, valid ? e.valid : e.test, valid ? e.num_valid : e.num_test,
                                       [&](int64_t src, int64_t dst, int64_t) { edges.emplace_back(src, dst); }));
  return edges;
}

Status CheckEdgeSplits(const Dataset& dataset, int64_t* bytes_read, int64_t* checksums_verified) {
  const DatasetManifest& m = dataset.manifest();
  const DatasetEdgeSplits& e = m.edge_splits;
  if (!e.present()) return Status::Ok();
  const std::string manifest_path = dataset.PathOf(dataset_files::kManifest);
  for (const auto& [what, count, fraction] : {std::tuple<const char*, int64_t, double>{"num_valid", e.num_valid,
                                                                                         e.valid_fraction},
                                              {"num_test", e.num_test, e.test_fraction}}) {
    if (count != HeldOutCount(fraction, e.candidate_edges)) {
      return Corrupt(fmt::format("{} (edge_splits): {} = {}, but round({} x candidate_edges {}) = {}", manifest_path,
                                 what, count, fraction, e.candidate_edges, HeldOutCount(fraction, e.candidate_edges)));
    }
  }
  // Both files into one set; origin = 2 × index + (0 valid, 1 test).
  HeldOutEdgeSet held_out(e.undirected);
  const std::string names[2] = {e.valid, e.test};
  const int64_t counts[2] = {e.num_valid, e.num_test};
  for (int f = 0; f < 2; ++f) {
    SEER_RETURN_IF_ERROR(StreamSplitFile(dataset, names[f], counts[f], [&](int64_t src, int64_t dst, int64_t i) {
      held_out.Add(src, dst, 2 * i + f);
    }));
    *bytes_read += counts[f] * kHeldOutEdgeBytes;
    if (Listed(dataset, names[f]) != nullptr && Listed(dataset, names[f])->checksum_kind == "xxh64") {
      ++*checksums_verified;
    }
  }
  if (e.negatives_per_edge > 0) {  // --eval-negatives K
    const std::string negatives[2] = {e.valid_negatives, e.test_negatives};
    for (int f = 0; f < 2; ++f) {
      SEER_RETURN_IF_ERROR(CheckNegativesFile(dataset, negatives[f], counts[f], e.negatives_per_edge));
      *bytes_read += counts[f] * e.negatives_per_edge * 8;
      if (Listed(dataset, negatives[f]) != nullptr && Listed(dataset, negatives[f])->checksum_kind == "xxh64") {
        ++*checksums_verified;
      }
    }
  }
  const char* either_way = e.undirected ? " (undirected: in either direction)" : "";
  if (auto repeat = held_out.Seal()) {
    const int64_t a = repeat->first, b = repeat->second;
    return Corrupt(fmt::format("{} at pair {}: the held-out edge is also {} at pair {}{}; {} and {} must be "
                               "disjoint and hold each edge once",
                               dataset.PathOf(names[b & 1]), b >> 1, names[a & 1], a >> 1, either_way, names[0],
                               names[1]));
  }
  // No held-out edge left in the training topology.
  SEER_ASSIGN_OR_RETURN(NeighborListReader lists, NeighborListReader::Open(dataset));
  std::vector<int64_t> sources;
  int64_t node = 0;
  while (true) {
    SEER_ASSIGN_OR_RETURN(bool more, lists.Next(&node, &sources));
    if (!more) break;
    for (size_t i = 0; i < sources.size(); ++i) {
      const int64_t origin = held_out.Find(sources[i], node);
      if (origin < 0) continue;
      const int64_t position = lists.list_offset() + static_cast<int64_t>(i);
      return Corrupt(fmt::format(
          "{} at index {} (byte offset {}): edge {} -> {} is in the training topology, but it is held out{} in {} at "
          "pair {}: a held-out edge would leak into training",
          dataset.PathOf(dataset_files::kIndices), position, position * m.index_bytes(), sources[i], node,
          e.undirected ? " (itself or its reverse: undirected)" : "", names[origin & 1], origin >> 1));
    }
  }
  SEER_RETURN_IF_ERROR(lists.Finish());
  *bytes_read += lists.bytes_read();
  return Status::Ok();
}

}  // namespace seer
