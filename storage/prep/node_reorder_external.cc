// `seer reorder --memory-budget`: the renumbering of storage/prep/node_reorder.h in bounded
// memory (ReorderDatasetExternal, storage/prep/node_reorder_internal.h). Same output,
// byte for byte, as the in-memory pass; what differs is where the per-node and per-edge
// tables live:
//   order      bfs: the queue is a scratch file mapped shared (written at its tail, read at
//              its head: sequential pages), plus a visited bitmap (1 bit per node); the
//              neighbor lists are read through the page cache in BFS order.
//              degree: out-degrees counted over node ranges that fit the budget (one pass
//              over indices.bin per range, uint32 counters), then the nodes sorted by
//              (degree descending, id) with the external RecordSorter.
//   inverse    new_of_old from an external sort of (old id -> new id) records.
//   topology   two external sorts of one 16-byte-key record per edge: (src_old, edge) ->
//              dst_new, joined in src order with the inverse (src_new), then (dst_new,
//              edge) -> src_new, whose merge is the new indices.bin in list order and the
//              new in-degrees (indptr.bin).
//   rows       features and labels: new row k = old row order[k], gathered in chunks from
//              the mapped files (page cache) with the order streamed from its file.
//   splits     ids mapped by a join with the inverse, back in the split's order by a sort.
// Scratch files (runs, the order, the inverse) live in a ScratchDir next to the output,
// removed at the end. Blocking; single-threaded apart from RecordSorter's run sorts.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/scratch_dir.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/node_order.h"
#include "storage/prep/node_reorder_internal.h"
#include "storage/prep/record_sorter.h"

namespace seer::reorder_internal {

Result<Mapping> Mapping::ReadOnly(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  return Map(fd.get(), size, PROT_READ, path);
}

Result<Mapping> Mapping::Scratch(const std::string& path, int64_t size) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDWR | O_CREAT | O_EXCL, 0600));
  if (::ftruncate(fd.get(), size) != 0) return ErrnoStatus(errno, "ftruncate", path);
  return Map(fd.get(), size, PROT_READ | PROT_WRITE, path);
}

Result<Mapping> Mapping::Map(int fd, int64_t size, int prot, const std::string& path) {
  Mapping m;
  m.size_ = size;
  if (size == 0) return m;
  void* p = ::mmap(nullptr, static_cast<size_t>(size), prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return ErrnoStatus(errno, "mmap", path);
  m.data_ = static_cast<char*>(p);
  return m;
}

Mapping::~Mapping() {
  if (data_ != nullptr) ::munmap(data_, static_cast<size_t>(size_));
}

namespace {

constexpr int64_t kBlockBytes = 4096;
constexpr int64_t kMinSortBytes = int64_t{128} << 10;  // two 64 KiB sorters at least

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// 8 bytes big-endian: byte order = numeric order for values >= 0.
void PutKey(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
uint64_t GetKey(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

// int64 values of a file front to back.
class Int64Stream {
 public:
  static Result<Int64Stream> Open(const std::string& path) {
    SEER_ASSIGN_OR_RETURN(SequentialReader reader, SequentialReader::Open(path));
    return Int64Stream(path, std::move(reader));
  }
  // The next value; kCorrupt naming the file at its end.
  Result<int64_t> Next() {
    int64_t v = 0;
    SEER_ASSIGN_OR_RETURN(bool more, reader_.Read(&v, sizeof(v)));
    if (!more) return Corrupt(path_ + ": ends early");
    return v;
  }

 private:
  Int64Stream(std::string path, SequentialReader reader) : path_(std::move(path)), reader_(std::move(reader)) {}
  std::string path_;
  SequentialReader reader_;
};

// new_of_old read from the inverse file for ascending old ids (the merges' order): At(v)
// advances the stream to v. kCorrupt at the file's end.
class InverseCursor {
 public:
  static Result<InverseCursor> Open(const std::string& inverse_path) {
    SEER_ASSIGN_OR_RETURN(Int64Stream stream, Int64Stream::Open(inverse_path));
    return InverseCursor(std::move(stream));
  }
  Result<int64_t> At(int64_t old_id) {
    while (at_ < old_id) {
      SEER_ASSIGN_OR_RETURN(value_, stream_.Next());
      ++at_;
    }
    return value_;
  }

 private:
  explicit InverseCursor(Int64Stream stream) : stream_(std::move(stream)) {}
  Int64Stream stream_;
  int64_t at_ = -1, value_ = -1;
};

// indices.bin's values front to back, as int64, whatever its dtype.
class IndexStream {
 public:
  static Result<IndexStream> Open(const std::string& path, IndexDtype dtype) {
    SEER_ASSIGN_OR_RETURN(SequentialReader reader, SequentialReader::Open(path));
    return IndexStream(path, dtype, std::move(reader));
  }
  Result<int64_t> Next() {
    bool more = false;
    int64_t v = 0;
    if (dtype_ == IndexDtype::kUint32) {
      uint32_t u = 0;
      SEER_ASSIGN_OR_RETURN(more, reader_.Read(&u, sizeof(u)));
      v = u;
    } else {
      SEER_ASSIGN_OR_RETURN(more, reader_.Read(&v, sizeof(v)));
    }
    if (!more) return Corrupt(path_ + ": ends early");
    return v;
  }

 private:
  IndexStream(std::string path, IndexDtype dtype, SequentialReader reader)
      : path_(std::move(path)), dtype_(dtype), reader_(std::move(reader)) {}
  std::string path_;
  IndexDtype dtype_;
  SequentialReader reader_;
};

// The first `bytes` of the file at `path`, appended to `file`.
Status AppendFileBytes(const std::string& path, int64_t bytes, AtomicFileWriter* file) {
  SEER_ASSIGN_OR_RETURN(SequentialReader in, SequentialReader::Open(path));
  std::vector<char> buffer(size_t{1} << 16);
  for (int64_t done = 0; done < bytes;) {
    const size_t step = static_cast<size_t>(std::min<int64_t>(bytes - done, static_cast<int64_t>(buffer.size())));
    SEER_ASSIGN_OR_RETURN(bool more, in.Read(buffer.data(), step));
    if (!more) return Corrupt(path + ": ends early");
    SEER_RETURN_IF_ERROR(file->Append(buffer.data(), static_cast<int64_t>(step)));
    done += static_cast<int64_t>(step);
  }
  return Status::Ok();
}

// Appends int64 values to a scratch file.
Status WriteInt64s(SequentialWriter& out, const int64_t* v, int64_t count) {
  return out.Write(v, static_cast<size_t>(count) * sizeof(int64_t));
}

// Breadth-first order into `order_path` (int64[n]): the queue is the mapped file itself.
Status BfsOrder(const Dataset& dataset, const std::string& order_path, bool show_progress) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  SEER_ASSIGN_OR_RETURN(Mapping indptr_map, Mapping::ReadOnly(dataset.PathOf(dataset_files::kIndptr)));
  if (indptr_map.size() < (n + 1) * 8) return Corrupt(dataset.PathOf(dataset_files::kIndptr) + ": too short");
  const auto* indptr = reinterpret_cast<const int64_t*>(indptr_map.data());
  SEER_ASSIGN_OR_RETURN(Mapping indices_map, Mapping::ReadOnly(dataset.PathOf(dataset_files::kIndices)));
  const bool narrow = m.index_dtype == IndexDtype::kUint32;
  auto neighbor = [&](int64_t e) -> int64_t {
    return narrow ? reinterpret_cast<const uint32_t*>(indices_map.data())[e]
                  : reinterpret_cast<const int64_t*>(indices_map.data())[e];
  };
  SEER_ASSIGN_OR_RETURN(Mapping queue_map, Mapping::Scratch(order_path, n * 8));
  auto* order = reinterpret_cast<int64_t*>(queue_map.data());
  ProgressReporter progress("reorder: bfs", n, "nodes", show_progress);
  SEER_RETURN_IF_ERROR(BreadthFirstOrder(
      n, [&](int64_t v) { return indptr[v]; }, neighbor, order, dataset.PathOf(dataset_files::kIndices),
      [&] { progress.Add(1); }));
  progress.Finish();
  return Status::Ok();
}

// Degree order into `order_path`: out-degrees counted over node ranges of `sort_bytes / 4`
// nodes (one pass over indices.bin each), then (degree descending, id) sorted externally.
Status DegreeOrder(const Dataset& dataset, ScratchDir& scratch, int64_t sort_bytes, const std::string& order_path,
                   bool show_progress) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  const int64_t range = std::max<int64_t>(1, std::min(n, sort_bytes / 4));
  RecordSorter sorter(scratch.path(), "degree", sort_bytes);
  std::vector<uint32_t> count;
  ProgressReporter progress("reorder: degrees", m.num_edges * ((n + range - 1) / range), "edges", show_progress);
  for (int64_t lo = 0; lo < n; lo += range) {
    const int64_t hi = std::min(n, lo + range);
    count.assign(static_cast<size_t>(hi - lo), 0);
    SEER_ASSIGN_OR_RETURN(IndexStream indices,
                          IndexStream::Open(dataset.PathOf(dataset_files::kIndices), m.index_dtype));
    for (int64_t e = 0; e < m.num_edges; ++e) {
      SEER_ASSIGN_OR_RETURN(int64_t u, indices.Next());
      if (u >= lo && u < hi) ++count[static_cast<size_t>(u - lo)];
    }
    progress.Add(m.num_edges);
    char key[16];
    for (int64_t v = lo; v < hi; ++v) {
      PutKey(key, ~static_cast<uint64_t>(count[static_cast<size_t>(v - lo)]));  // highest degree first
      PutKey(key + 8, static_cast<uint64_t>(v));                                 // ties: lower id first
      SEER_RETURN_IF_ERROR(sorter.Add(std::string_view(key, 16), static_cast<uint64_t>(v)));
    }
  }
  progress.Finish();
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(order_path));
  SEER_RETURN_IF_ERROR(sorter.Merge([&](std::string_view, uint64_t v) {
    const int64_t id = static_cast<int64_t>(v);
    return WriteInt64s(out, &id, 1);
  }));
  return out.Close();
}

// inverse_path: int64[n], new_of_old[order[k]] = k, from an external sort by old id.
Status WriteInverse(const std::string& order_path, int64_t n, ScratchDir& scratch, int64_t sort_bytes,
                    const std::string& inverse_path) {
  RecordSorter sorter(scratch.path(), "inverse", sort_bytes);
  SEER_ASSIGN_OR_RETURN(Int64Stream order, Int64Stream::Open(order_path));
  char key[8];
  for (int64_t k = 0; k < n; ++k) {
    SEER_ASSIGN_OR_RETURN(int64_t v, order.Next());
    if (v < 0 || v >= n) return Corrupt(order_path + ": node id out of range");
    PutKey(key, static_cast<uint64_t>(v));
    SEER_RETURN_IF_ERROR(sorter.Add(std::string_view(key, 8), static_cast<uint64_t>(k)));
  }
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(inverse_path));
  int64_t expect = 0;
  SEER_RETURN_IF_ERROR(sorter.Merge([&](std::string_view k, uint64_t payload) -> Status {
    if (static_cast<int64_t>(GetKey(k.data())) != expect++) return Corrupt(order_path + ": not a permutation");
    const int64_t value = static_cast<int64_t>(payload);
    return WriteInt64s(out, &value, 1);
  }));
  return out.Close();
}

// Mean distinct 4 KiB feature blocks per non-empty neighbor list, accumulated list by list.
struct BlockCounter {
  explicit BlockCounter(int64_t row_bytes_in) : row_bytes(row_bytes_in) {}
  int64_t row_bytes = 0;
  double total = 0;
  int64_t lists = 0;
  std::vector<int64_t> blocks;
  void Add(int64_t u) {
    for (int64_t b = u * row_bytes / kBlockBytes; b <= ((u + 1) * row_bytes - 1) / kBlockBytes; ++b) {
      blocks.push_back(b);
    }
  }
  void EndList() {
    if (blocks.empty()) return;
    std::sort(blocks.begin(), blocks.end());
    total += static_cast<double>(std::unique(blocks.begin(), blocks.end()) - blocks.begin());
    ++lists;
    blocks.clear();
  }
  double Mean() const { return lists == 0 || row_bytes == 0 ? 0.0 : total / static_cast<double>(lists); }
};

// The new indptr.bin and indices.bin (and the blocks-per-list figures before and after).
Status WriteTopology(const Dataset& dataset, const std::string& inverse_path, ScratchDir& scratch,
                     int64_t sort_bytes, DatasetWriter& writer, ReorderSummary* summary, bool show_progress) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  BlockCounter before(m.feature_row_bytes()), after(m.feature_row_bytes());
  // Pass 1: (src_old, edge) -> dst_new, in old list order.
  RecordSorter by_src(scratch.path(), "by-src", sort_bytes / 2);
  {
    SEER_ASSIGN_OR_RETURN(Int64Stream indptr, Int64Stream::Open(dataset.PathOf(dataset_files::kIndptr)));
    SEER_ASSIGN_OR_RETURN(IndexStream indices, IndexStream::Open(dataset.PathOf(dataset_files::kIndices), m.index_dtype));
    SEER_ASSIGN_OR_RETURN(Int64Stream inverse, Int64Stream::Open(inverse_path));
    ProgressReporter progress("reorder: edges by source", m.num_edges, "edges", show_progress);
    SEER_ASSIGN_OR_RETURN(int64_t begin, indptr.Next());
    char key[16];
    for (int64_t v = 0; v < n; ++v) {
      SEER_ASSIGN_OR_RETURN(int64_t end, indptr.Next());
      SEER_ASSIGN_OR_RETURN(int64_t v_new, inverse.Next());
      for (int64_t e = begin; e < end; ++e) {
        SEER_ASSIGN_OR_RETURN(int64_t u, indices.Next());
        if (u < 0 || u >= n) return Corrupt(dataset.PathOf(dataset_files::kIndices) + ": node id out of range");
        before.Add(u);
        PutKey(key, static_cast<uint64_t>(u));
        PutKey(key + 8, static_cast<uint64_t>(e));
        SEER_RETURN_IF_ERROR(by_src.Add(std::string_view(key, 16), static_cast<uint64_t>(v_new)));
      }
      before.EndList();
      progress.Add(end - begin);
      begin = end;
    }
    progress.Finish();
  }
  // Pass 2: the merge in source order meets the inverse in the same order: (dst_new,
  // edge) -> src_new.
  RecordSorter by_dst(scratch.path(), "by-dst", sort_bytes / 2);
  {
    SEER_ASSIGN_OR_RETURN(InverseCursor inverse, InverseCursor::Open(inverse_path));
    char key[16];
    SEER_RETURN_IF_ERROR(by_src.Merge([&](std::string_view k, uint64_t dst_new) -> Status {
      SEER_ASSIGN_OR_RETURN(const int64_t src_new, inverse.At(static_cast<int64_t>(GetKey(k.data()))));
      PutKey(key, dst_new);
      std::memcpy(key + 8, k.data() + 8, 8);  // the edge's old position: its list order
      return by_dst.Add(std::string_view(key, 16), static_cast<uint64_t>(src_new));
    }));
  }
  // Pass 3: the merge is indices.bin in new list order; in-degrees counted on the way.
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* indices_file, writer.OpenFile(dataset_files::kIndices));
  const std::string indptr_scratch_path = scratch.File("indptr");
  SEER_ASSIGN_OR_RETURN(SequentialWriter indptr_out, SequentialWriter::Create(indptr_scratch_path));
  const bool narrow = m.index_dtype == IndexDtype::kUint32;
  constexpr size_t kChunk = size_t{1} << 16;
  std::vector<uint32_t> out32;
  std::vector<int64_t> out64;
  auto flush = [&]() -> Status {
    Status st = narrow ? indices_file->AppendValues(out32.data(), static_cast<int64_t>(out32.size()))
                       : indices_file->AppendValues(out64.data(), static_cast<int64_t>(out64.size()));
    out32.clear();
    out64.clear();
    return st;
  };
  int64_t current = 0, written = 0;  // the destination being written; edges so far
  const int64_t zero = 0;
  SEER_RETURN_IF_ERROR(WriteInt64s(indptr_out, &zero, 1));
  SEER_RETURN_IF_ERROR(by_dst.Merge([&](std::string_view k, uint64_t src_new) -> Status {
    const int64_t d = static_cast<int64_t>(GetKey(k.data()));
    while (current < d) {  // destinations before d end here
      after.EndList();
      SEER_RETURN_IF_ERROR(WriteInt64s(indptr_out, &written, 1));
      ++current;
    }
    after.Add(static_cast<int64_t>(src_new));
    if (narrow) out32.push_back(static_cast<uint32_t>(src_new)); else out64.push_back(static_cast<int64_t>(src_new));
    ++written;
    if ((narrow ? out32.size() : out64.size()) >= kChunk) return flush();
    return Status::Ok();
  }));
  while (current < n) {
    after.EndList();
    SEER_RETURN_IF_ERROR(WriteInt64s(indptr_out, &written, 1));
    ++current;
  }
  SEER_RETURN_IF_ERROR(flush());
  SEER_RETURN_IF_ERROR(indptr_out.Close());
  if (written != m.num_edges) {
    return Corrupt(dataset.PathOf(dataset_files::kIndices) + ": " + std::to_string(written) + " edges, the manifest says " +
                   std::to_string(m.num_edges));
  }
  {  // indptr.bin from its scratch copy (written in order as the lists ended)
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kIndptr));
    SEER_RETURN_IF_ERROR(AppendFileBytes(indptr_scratch_path, (n + 1) * 8, file));
  }
  summary->blocks_per_list_before = before.Mean();
  summary->blocks_per_list_after = after.Mean();
  return Status::Ok();
}

// `name` (rows of `row_bytes`) with new row k = old row order[k], gathered in chunks.
Status WriteGatheredRows(const Dataset& dataset, const std::string& name, int64_t row_bytes,
                         const std::string& order_path, DatasetWriter& writer, const char* what, bool show_progress) {
  const int64_t n = dataset.manifest().num_nodes;
  SEER_ASSIGN_OR_RETURN(Mapping mapped, Mapping::ReadOnly(dataset.PathOf(name)));
  if (mapped.size() < n * row_bytes) {
    return Corrupt(dataset.PathOf(name) + ": " + std::to_string(mapped.size()) + " bytes, fewer than " +
                   std::to_string(n * row_bytes));
  }
  if (mapped.size() > 0) ::madvise(mapped.data(), static_cast<size_t>(mapped.size()), MADV_RANDOM);
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(name));
  SEER_ASSIGN_OR_RETURN(Int64Stream order, Int64Stream::Open(order_path));
  ProgressReporter progress(std::string("reorder: ") + what, n, "rows", show_progress);
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t{4} << 20) / std::max<int64_t>(row_bytes, 1));
  std::vector<char> out(static_cast<size_t>(std::min(n, rows_per_chunk) * row_bytes));
  for (int64_t k0 = 0; k0 < n; k0 += rows_per_chunk) {
    const int64_t rows = std::min(rows_per_chunk, n - k0);
    for (int64_t r = 0; r < rows; ++r) {
      SEER_ASSIGN_OR_RETURN(int64_t v, order.Next());
      std::memcpy(out.data() + r * row_bytes, mapped.data() + v * row_bytes, static_cast<size_t>(row_bytes));
    }
    SEER_RETURN_IF_ERROR(file->Append(out.data(), rows * row_bytes));
    progress.Add(rows);
  }
  progress.Finish();
  return Status::Ok();
}

// A split file's ids mapped through the inverse, kept in the split's order.
Status WriteMappedSplit(const Dataset& dataset, const std::string& name, const std::string& inverse_path,
                        ScratchDir& scratch, int64_t sort_bytes, DatasetWriter& writer) {
  const std::string path = dataset.PathOf(name);
  SEER_ASSIGN_OR_RETURN(int64_t bytes, FileSizeBytes(path));
  const int64_t count = bytes / 8;
  RecordSorter by_id(scratch.path(), "split-id", sort_bytes / 2);
  {
    SEER_ASSIGN_OR_RETURN(Int64Stream ids, Int64Stream::Open(path));
    char key[16];
    for (int64_t p = 0; p < count; ++p) {
      SEER_ASSIGN_OR_RETURN(int64_t id, ids.Next());
      if (id < 0 || id >= dataset.manifest().num_nodes) return Corrupt(path + ": node id out of range");
      PutKey(key, static_cast<uint64_t>(id));
      PutKey(key + 8, static_cast<uint64_t>(p));
      SEER_RETURN_IF_ERROR(by_id.Add(std::string_view(key, 16), static_cast<uint64_t>(p)));
    }
  }
  RecordSorter by_position(scratch.path(), "split-pos", sort_bytes / 2);
  {
    SEER_ASSIGN_OR_RETURN(InverseCursor inverse, InverseCursor::Open(inverse_path));
    char key[8];
    SEER_RETURN_IF_ERROR(by_id.Merge([&](std::string_view k, uint64_t position) -> Status {
      SEER_ASSIGN_OR_RETURN(const int64_t mapped, inverse.At(static_cast<int64_t>(GetKey(k.data()))));
      PutKey(key, position);
      return by_position.Add(std::string_view(key, 8), static_cast<uint64_t>(mapped));
    }));
  }
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(name));
  std::vector<int64_t> out;
  SEER_RETURN_IF_ERROR(by_position.Merge([&](std::string_view, uint64_t id) -> Status {
    out.push_back(static_cast<int64_t>(id));
    if (out.size() < (size_t{1} << 16)) return Status::Ok();
    Status st = file->AppendValues(out.data(), static_cast<int64_t>(out.size()));
    out.clear();
    return st;
  }));
  return file->AppendValues(out.data(), static_cast<int64_t>(out.size()));
}

// node_order.bin: the new order composed with an earlier one (previous[order[k]]).
Status WriteComposedOrder(const Dataset& dataset, const std::string& order_path, DatasetWriter& writer) {
  const DatasetManifest& m = dataset.manifest();
  SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(dataset_files::kNodeOrder));
  Mapping previous;
  if (!m.node_order.empty()) {
    SEER_ASSIGN_OR_RETURN(previous, Mapping::ReadOnly(dataset.PathOf(m.node_order)));
    if (previous.size() < m.num_nodes * 8) return Corrupt(dataset.PathOf(m.node_order) + ": too short");
  }
  SEER_ASSIGN_OR_RETURN(Int64Stream order, Int64Stream::Open(order_path));
  std::vector<int64_t> out;
  for (int64_t k = 0; k < m.num_nodes; ++k) {
    SEER_ASSIGN_OR_RETURN(int64_t v, order.Next());
    out.push_back(previous.data() == nullptr ? v : reinterpret_cast<const int64_t*>(previous.data())[v]);
    if (out.size() == (size_t{1} << 16)) {
      SEER_RETURN_IF_ERROR(file->AppendValues(out.data(), static_cast<int64_t>(out.size())));
      out.clear();
    }
  }
  return file->AppendValues(out.data(), static_cast<int64_t>(out.size()));
}

}  // namespace

Result<ReorderSummary> ReorderDatasetExternal(const Dataset& dataset, const std::string& out_dir,
                                              const ReorderOptions& options) {
  const DatasetManifest& m = dataset.manifest();
  const int64_t n = m.num_nodes;
  const int64_t sort_bytes = std::max(kMinSortBytes, options.memory_budget_bytes);
  ReorderSummary summary;
  summary.num_nodes = n;
  summary.num_edges = m.num_edges;
  // Scratch next to the output (the same file system as the result, not /tmp).
  std::string parent = std::filesystem::path(out_dir).lexically_normal().parent_path().string();
  if (parent.empty()) parent = ".";
  SEER_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create(parent, "reorder"));
  const std::string order_path = scratch.File("order"), inverse_path = scratch.File("inverse");

  auto start = std::chrono::steady_clock::now();
  if (options.method == NodeOrderMethod::kBfs) {
    SEER_RETURN_IF_ERROR(BfsOrder(dataset, order_path, options.show_progress));
  } else {
    SEER_RETURN_IF_ERROR(DegreeOrder(dataset, scratch, sort_bytes, order_path, options.show_progress));
  }
  SEER_RETURN_IF_ERROR(WriteInverse(order_path, n, scratch, sort_bytes, inverse_path));
  summary.order_seconds = Seconds(start);

  start = std::chrono::steady_clock::now();
  SEER_ASSIGN_OR_RETURN(DatasetWriter writer, DatasetWriter::Create(out_dir, options.force));
  SEER_RETURN_IF_ERROR(
      WriteTopology(dataset, inverse_path, scratch, sort_bytes, writer, &summary, options.show_progress));
  SEER_RETURN_IF_ERROR(WriteGatheredRows(dataset, dataset_files::kFeatures, m.feature_row_bytes(), order_path, writer,
                                         "feature rows", options.show_progress));
  SEER_RETURN_IF_ERROR(WriteGatheredRows(dataset, dataset_files::kLabels, 4, order_path, writer, "labels", false));
  for (const char* split : {"train.bin", "valid.bin", "test.bin"}) {
    if (m.files.count(split) == 0) continue;
    SEER_RETURN_IF_ERROR(WriteMappedSplit(dataset, split, inverse_path, scratch, sort_bytes, writer));
  }
  if (!m.node_ids.empty()) {  // unchanged: node_order.bin points into it
    SEER_ASSIGN_OR_RETURN(AtomicFileWriter* file, writer.OpenFile(m.node_ids));
    SEER_ASSIGN_OR_RETURN(int64_t bytes, FileSizeBytes(dataset.PathOf(m.node_ids)));
    SEER_RETURN_IF_ERROR(AppendFileBytes(dataset.PathOf(m.node_ids), bytes, file));
  }
  SEER_RETURN_IF_ERROR(WriteComposedOrder(dataset, order_path, writer));
  SEER_RETURN_IF_ERROR(writer.Commit(ReorderedManifest(m, options)));
  SEER_RETURN_IF_ERROR(scratch.Remove());
  summary.rewrite_seconds = Seconds(start);
  return summary;
}

}  // namespace seer::reorder_internal
