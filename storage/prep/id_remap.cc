#include "storage/prep/id_remap.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"

namespace seer {
namespace {

constexpr int64_t kMaxRuns = 512;
constexpr size_t kIoBufferBytes = 64 << 10;

// Sequential buffered writer / reader over a plain file.
class OutFile {
 public:
  static Result<OutFile> Create(const std::string& path) {
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    return OutFile(path, std::move(fd));
  }
  Status Write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    if (buffer_.size() + n > kIoBufferBytes) SEER_RETURN_IF_ERROR(Flush());
    if (n >= kIoBufferBytes) return WriteFull(fd_.get(), p, static_cast<int64_t>(n), path_);
    buffer_.insert(buffer_.end(), p, p + n);
    return Status::Ok();
  }
  Status Close() {
    SEER_RETURN_IF_ERROR(Flush());
    return fd_.Close(path_);
  }

 private:
  OutFile(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) { buffer_.reserve(kIoBufferBytes); }
  Status Flush() {
    if (buffer_.empty()) return Status::Ok();
    Status st = WriteFull(fd_.get(), buffer_.data(), static_cast<int64_t>(buffer_.size()), path_);
    buffer_.clear();
    return st;
  }
  std::string path_;
  UniqueFd fd_;
  std::vector<char> buffer_;
};

class InFile {
 public:
  static Result<InFile> Open(const std::string& path) {
    SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
    SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
    return InFile(path, std::move(fd), size);
  }
  // Reads exactly n bytes; false at a clean end of file.
  Result<bool> Read(void* out, size_t n) {
    char* dst = static_cast<char*>(out);
    while (n > 0) {
      if (begin_ == buffer_.size()) {
        const int64_t len = std::min<int64_t>(kIoBufferBytes, size_ - offset_);
        if (len == 0) {
          if (dst != out) return Corrupt(path_ + ": truncated run file");
          return false;
        }
        buffer_.resize(static_cast<size_t>(len));
        SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), len, offset_, path_));
        offset_ += len;
        begin_ = 0;
      }
      const size_t take = std::min(n, buffer_.size() - begin_);
      std::memcpy(dst, buffer_.data() + begin_, take);
      begin_ += take;
      dst += take;
      n -= take;
    }
    return true;
  }

 private:
  InFile(std::string path, UniqueFd fd, int64_t size) : path_(std::move(path)), fd_(std::move(fd)), size_(size) {}
  std::string path_;
  UniqueFd fd_;
  int64_t size_ = 0, offset_ = 0;
  std::vector<char> buffer_;
  size_t begin_ = 0;
};

// External sort of (key bytes, uint64 payload) records by (key, payload): sorted runs of
// at most `memory_bytes`, then one k-way merge.
class RecordSorter {
 public:
  RecordSorter(std::string dir, std::string name, int64_t memory_bytes)
      : dir_(std::move(dir)), name_(std::move(name)), memory_bytes_(std::max<int64_t>(memory_bytes, 64 << 10)) {}

  // Three quarters of the memory for key bytes, a quarter for records; both reserved
  // up front so neither grows by doubling past the share.
  Status Add(std::string_view key, uint64_t payload) {
    if (!reserved_) {
      reserved_ = true;
      arena_.reserve(static_cast<size_t>(memory_bytes_ / 4 * 3));
      records_.reserve(static_cast<size_t>(memory_bytes_ / 4) / sizeof(Record));
    }
    if (!records_.empty() && (arena_.size() + key.size() > arena_.capacity() || records_.size() == records_.capacity())) {
      SEER_RETURN_IF_ERROR(SpillRun());
    }
    records_.push_back(Record{arena_.size(), static_cast<uint32_t>(key.size()), payload});
    arena_.append(key);
    return Status::Ok();
  }

  // Calls emit(key, payload) for every record in order.
  template <typename Emit>
  Status Merge(Emit&& emit) {
    SEER_RETURN_IF_ERROR(SpillRun());
    struct Head {
      std::string key;
      uint64_t payload;
      size_t run;
    };
    auto later = [](const Head& a, const Head& b) {
      return a.key != b.key ? a.key > b.key : a.payload > b.payload;
    };
    std::priority_queue<Head, std::vector<Head>, decltype(later)> heap(later);
    std::vector<InFile> runs;
    for (const std::string& path : run_paths_) {
      SEER_ASSIGN_OR_RETURN(InFile f, InFile::Open(path));
      runs.push_back(std::move(f));
    }
    auto next = [&](size_t r) -> Status {
      uint32_t len;
      SEER_ASSIGN_OR_RETURN(bool more, runs[r].Read(&len, sizeof len));
      if (!more) return Status::Ok();
      Head h{std::string(len, '\0'), 0, r};
      SEER_ASSIGN_OR_RETURN(bool key_ok, runs[r].Read(h.key.data(), len));
      SEER_ASSIGN_OR_RETURN(bool payload_ok, runs[r].Read(&h.payload, sizeof h.payload));
      if (!key_ok || !payload_ok) return Corrupt(run_paths_[r] + ": truncated run file");
      heap.push(std::move(h));
      return Status::Ok();
    };
    for (size_t r = 0; r < runs.size(); ++r) SEER_RETURN_IF_ERROR(next(r));
    while (!heap.empty()) {
      Head h = heap.top();
      heap.pop();
      SEER_RETURN_IF_ERROR(emit(std::string_view(h.key), h.payload));
      SEER_RETURN_IF_ERROR(next(h.run));
    }
    for (const std::string& path : run_paths_) ::unlink(path.c_str());
    run_paths_.clear();
    return Status::Ok();
  }

 private:
  struct Record {
    size_t offset;
    uint32_t length;
    uint64_t payload;
  };

  Status SpillRun() {
    if (records_.empty()) return Status::Ok();
    if (static_cast<int64_t>(run_paths_.size()) >= kMaxRuns) {
      return Status(StatusCode::kResourceExhausted,
                    "id remapping needs more than " + std::to_string(kMaxRuns) + " sorted runs of " +
                        FormatBytes(memory_bytes_) + "; raise --memory-budget");
    }
    std::sort(records_.begin(), records_.end(), [&](const Record& a, const Record& b) {
      std::string_view ka(arena_.data() + a.offset, a.length), kb(arena_.data() + b.offset, b.length);
      return ka != kb ? ka < kb : a.payload < b.payload;
    });
    run_paths_.push_back(dir_ + "/" + name_ + "-" + std::to_string(run_paths_.size()) + ".run");
    SEER_ASSIGN_OR_RETURN(OutFile out, OutFile::Create(run_paths_.back()));
    for (const Record& r : records_) {
      SEER_RETURN_IF_ERROR(out.Write(&r.length, sizeof r.length));
      SEER_RETURN_IF_ERROR(out.Write(arena_.data() + r.offset, r.length));
      SEER_RETURN_IF_ERROR(out.Write(&r.payload, sizeof r.payload));
    }
    SEER_RETURN_IF_ERROR(out.Close());
    records_.clear();
    arena_.clear();
    return Status::Ok();
  }

  std::string dir_, name_;
  int64_t memory_bytes_;
  bool reserved_ = false;
  std::string arena_;
  std::vector<Record> records_;
  std::vector<std::string> run_paths_;
};

}  // namespace

IdRemap::~IdRemap() {
  if (!edges_path_.empty()) ::unlink(edges_path_.c_str());
  if (!original_ids_path_.empty()) ::unlink(original_ids_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

Result<std::unique_ptr<IdRemap>> IdRemap::Build(const std::string& text_path, const TextColumns& columns,
                                                int64_t memory_budget_bytes, const std::string& work_dir,
                                                AtomicFileWriter& node_ids, bool show_progress) {
  std::unique_ptr<IdRemap> remap(new IdRemap());
  {
    std::string pattern = (work_dir.empty() ? std::string(".") : work_dir) + "/.seer-remap-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) return ErrnoStatus(errno, "mkdtemp", pattern);
    remap->dir_ = buf.data();
  }
  // Half the budget for the run being sorted; the rest covers the readers and buffers.
  const int64_t sort_bytes = std::max<int64_t>(memory_budget_bytes / 2, 256 << 10);
  RecordSorter by_id(remap->dir_, "ids", sort_bytes);
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<TextPairReader> reader, TextPairReader::Open(text_path, columns));
  {
    ProgressReporter progress("remap: reading ids", -1, "edges", show_progress);
    std::string_view src, dst;
    for (int64_t e = 0;; ++e) {
      SEER_ASSIGN_OR_RETURN(bool more, reader->Next(&src, &dst));
      if (!more) break;
      SEER_RETURN_IF_ERROR(by_id.Add(IdSortKey(src), 2 * static_cast<uint64_t>(e)));
      SEER_RETURN_IF_ERROR(by_id.Add(IdSortKey(dst), 2 * static_cast<uint64_t>(e) + 1));
      ++remap->num_edges_;
      if ((e & 0xffff) == 0) progress.Add(0x10000);
    }
    progress.Finish();
  }
  // Merge 1: distinct ids in order -> dense numbers, the mapping file, (position, dense).
  RecordSorter by_position(remap->dir_, "positions", sort_bytes);
  remap->original_ids_path_ = remap->dir_ + "/original_ids.bin";
  SEER_ASSIGN_OR_RETURN(OutFile originals, OutFile::Create(remap->original_ids_path_));
  std::string previous;
  bool any = false;
  int64_t dense = -1;
  char position_key[8];
  std::string line;
  SEER_RETURN_IF_ERROR(by_id.Merge([&](std::string_view key, uint64_t position) -> Status {
    if (!any || key != previous) {
      any = true;
      previous.assign(key);
      ++dense;
      const std::string id = IdFromSortKey(key);
      line = id;
      line.push_back('\n');
      SEER_RETURN_IF_ERROR(node_ids.Append(line.data(), static_cast<int64_t>(line.size())));
      if (key[0] == '\0') {
        const int64_t value = static_cast<int64_t>(GetBigEndian(key.data() + 1));
        SEER_RETURN_IF_ERROR(originals.Write(&value, sizeof value));
      } else {
        remap->integer_ids_ = false;
      }
    }
    PutBigEndian(position, position_key);
    return by_position.Add(std::string_view(position_key, 8), static_cast<uint64_t>(dense));
  }));
  SEER_RETURN_IF_ERROR(originals.Close());
  remap->num_nodes_ = dense + 1;
  // Merge 2: dense ids back in edge order, as int64 pairs.
  remap->edges_path_ = remap->dir_ + "/edges.bin64";
  SEER_ASSIGN_OR_RETURN(OutFile edges, OutFile::Create(remap->edges_path_));
  SEER_RETURN_IF_ERROR(by_position.Merge([&](std::string_view, uint64_t value) -> Status {
    const int64_t id = static_cast<int64_t>(value);
    return edges.Write(&id, sizeof id);
  }));
  SEER_RETURN_IF_ERROR(edges.Close());
  return remap;
}

}  // namespace seer
