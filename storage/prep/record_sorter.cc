#include "storage/prep/record_sorter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <tbb/task_arena.h>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/parallel.h"

namespace seer {
namespace {

constexpr int64_t kMaxRuns = 512;
constexpr size_t kIoBufferBytes = 64 << 10;
constexpr uint32_t kHeadBytes = 16;        // key bytes kept in the record itself
constexpr size_t kMinChunkRecords = 1 << 16;  // a run is sorted in parallel above this

uint64_t LoadBigEndian(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

void StoreBigEndian(uint64_t v, char* p) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

Result<SequentialWriter> SequentialWriter::Create(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  return SequentialWriter(path, std::move(fd));
}

SequentialWriter::SequentialWriter(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {
  buffer_.reserve(kIoBufferBytes);
}

Status SequentialWriter::Write(const void* data, size_t length_bytes) {
  const char* p = static_cast<const char*>(data);
  if (buffer_.size() + length_bytes > kIoBufferBytes) SEER_RETURN_IF_ERROR(Flush());
  if (length_bytes >= kIoBufferBytes) return WriteFull(fd_.get(), p, static_cast<int64_t>(length_bytes), path_);
  buffer_.insert(buffer_.end(), p, p + length_bytes);
  return Status::Ok();
}

Status SequentialWriter::Close() {
  SEER_RETURN_IF_ERROR(Flush());
  return fd_.Close(path_);
}

Status SequentialWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status st = WriteFull(fd_.get(), buffer_.data(), static_cast<int64_t>(buffer_.size()), path_);
  buffer_.clear();
  return st;
}

Result<SequentialReader> SequentialReader::Open(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  SEER_ASSIGN_OR_RETURN(int64_t size, FileSizeBytes(fd.get(), path));
  return SequentialReader(path, std::move(fd), size);
}

SequentialReader::SequentialReader(std::string path, UniqueFd fd, int64_t size_bytes)
    : path_(std::move(path)), fd_(std::move(fd)), size_bytes_(size_bytes) {}

Result<bool> SequentialReader::Read(void* out, size_t length_bytes) {
  char* dst = static_cast<char*>(out);
  size_t n = length_bytes;
  while (n > 0) {
    if (begin_ == buffer_.size()) {
      const int64_t len = std::min<int64_t>(kIoBufferBytes, size_bytes_ - offset_bytes_);
      if (len == 0) {
        if (dst != out) return Corrupt(path_ + ": truncated at byte " + std::to_string(offset_bytes_));
        return false;
      }
      buffer_.resize(static_cast<size_t>(len));
      SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), len, offset_bytes_, path_));
      offset_bytes_ += len;
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

RecordSorter::RecordSorter(std::string dir, std::string name, int64_t memory_bytes)
    : dir_(std::move(dir)), name_(std::move(name)), memory_bytes_(std::max<int64_t>(memory_bytes, 64 << 10)) {}

RecordSorter::~RecordSorter() { RemoveRuns(); }

inline bool RecordSorter::Less(const Record& a, const Record& b, const char* arena) {
  if (a.head[0] != b.head[0]) return a.head[0] < b.head[0];
  if (a.head[1] != b.head[1]) return a.head[1] < b.head[1];
  if (a.length > kHeadBytes && b.length > kHeadBytes) {
    const int c = std::memcmp(arena + a.tail, arena + b.tail, std::min(a.length, b.length) - kHeadBytes);
    if (c != 0) return c < 0;
  }
  if (a.length != b.length) return a.length < b.length;  // equal up to the shorter: it goes first
  return a.payload < b.payload;
}

// Half the memory for records, half for the key bytes past each record's 16; both
// reserved up front so neither grows by doubling past the share (untouched pages of the
// arena, when keys are short, cost nothing).
Status RecordSorter::Add(std::string_view key, uint64_t payload) {
  if (!reserved_) {
    reserved_ = true;
    records_.reserve(static_cast<size_t>(memory_bytes_ / 2) / sizeof(Record));
    arena_.reserve(static_cast<size_t>(memory_bytes_ / 2));
  }
  const size_t tail = key.size() > kHeadBytes ? key.size() - kHeadBytes : 0;
  if (!records_.empty() && (arena_.size() + tail > arena_.capacity() || records_.size() == records_.capacity())) {
    SEER_RETURN_IF_ERROR(SpillRun());
  }
  char head[kHeadBytes] = {};
  std::memcpy(head, key.data(), key.size() - tail);
  Record r;
  r.head[0] = LoadBigEndian(head);
  r.head[1] = LoadBigEndian(head + 8);
  r.payload = payload;
  r.tail = arena_.size();
  r.length = static_cast<uint32_t>(key.size());
  if (tail > 0) arena_.append(key.data() + kHeadBytes, tail);
  records_.push_back(r);
  return Status::Ok();
}

Status RecordSorter::WriteRecord(SequentialWriter& out, const Record& r) {
  // length, key, payload in one piece for keys of up to 16 bytes.
  char buffer[sizeof(uint32_t) + kHeadBytes + sizeof(uint64_t)];
  const size_t head = std::min<size_t>(r.length, kHeadBytes);
  char words[kHeadBytes];
  StoreBigEndian(r.head[0], words);
  StoreBigEndian(r.head[1], words + 8);
  std::memcpy(buffer, &r.length, sizeof r.length);
  std::memcpy(buffer + sizeof r.length, words, head);
  if (r.length <= kHeadBytes) {
    std::memcpy(buffer + sizeof r.length + head, &r.payload, sizeof r.payload);
    return out.Write(buffer, sizeof r.length + head + sizeof r.payload);
  }
  SEER_RETURN_IF_ERROR(out.Write(buffer, sizeof r.length + head));
  SEER_RETURN_IF_ERROR(out.Write(arena_.data() + r.tail, r.length - kHeadBytes));
  return out.Write(&r.payload, sizeof r.payload);
}

// The run is cut into one chunk per thread (of at least kMinChunkRecords), the chunks
// sorted in parallel and merged into the run file as it is written: no second copy of
// the records.
Status RecordSorter::SpillRun() {
  if (records_.empty()) return Status::Ok();
  if (static_cast<int64_t>(run_paths_.size()) >= kMaxRuns) {
    return Status(StatusCode::kResourceExhausted, "id remapping needs more than " + std::to_string(kMaxRuns) +
                                                      " sorted runs of " + FormatBytes(memory_bytes_) +
                                                      "; raise --memory-budget");
  }
  const char* arena = arena_.data();
  auto less = [arena](const Record& a, const Record& b) {
    if (a.head[0] != b.head[0]) return a.head[0] < b.head[0];
    return Less(a, b, arena);
  };
  const size_t n = records_.size();
  const size_t chunks = std::clamp<size_t>(n / kMinChunkRecords, 1,
                                           static_cast<size_t>(std::max(1, tbb::this_task_arena::max_concurrency())));
  std::vector<size_t> bounds(chunks + 1);
  for (size_t c = 0; c <= chunks; ++c) bounds[c] = n * c / chunks;
  ParallelFor(size_t{0}, chunks, [&](size_t c) {
    std::sort(records_.begin() + static_cast<std::ptrdiff_t>(bounds[c]),
              records_.begin() + static_cast<std::ptrdiff_t>(bounds[c + 1]), less);
  });
  run_paths_.push_back(dir_ + "/" + name_ + "-" + std::to_string(run_paths_.size()) + ".run");
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(run_paths_.back()));
  if (chunks == 1) {
    for (const Record& r : records_) SEER_RETURN_IF_ERROR(WriteRecord(out, r));
  } else {
    // A heap of the chunks' next records (the chunk index), smallest on top.
    std::vector<size_t> next(bounds.begin(), bounds.end() - 1);
    std::vector<size_t> heap;
    auto later = [&](size_t x, size_t y) { return less(records_[next[y]], records_[next[x]]); };
    for (size_t c = 0; c < chunks; ++c) {
      if (next[c] < bounds[c + 1]) heap.push_back(c);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const size_t c = heap.back();
      SEER_RETURN_IF_ERROR(WriteRecord(out, records_[next[c]]));
      if (++next[c] < bounds[c + 1]) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
    }
  }
  SEER_RETURN_IF_ERROR(out.Close());
  records_.clear();
  arena_.clear();
  return Status::Ok();
}

Status RecordSorter::StartMerge() {
  SEER_RETURN_IF_ERROR(SpillRun());
  // The merge holds one record per run: give the sort share back to the next phase.
  std::string().swap(arena_);
  std::vector<Record>().swap(records_);
  runs_.clear();
  for (const std::string& path : run_paths_) {
    SEER_ASSIGN_OR_RETURN(SequentialReader run, SequentialReader::Open(path));
    runs_.push_back(std::move(run));
  }
  for (size_t r = 0; r < runs_.size(); ++r) {
    Head head;
    SEER_ASSIGN_OR_RETURN(bool more, ReadRecord(r, &head));
    if (!more) continue;
    heap_.push_back(std::move(head));
    std::push_heap(heap_.begin(), heap_.end(), Later());
  }
  return Status::Ok();
}

Result<bool> RecordSorter::ReadRecord(size_t run, Head* head) {
  uint32_t length;
  SEER_ASSIGN_OR_RETURN(bool more, runs_[run].Read(&length, sizeof length));
  if (!more) return false;
  head->key.resize(length);
  head->run = run;
  SEER_ASSIGN_OR_RETURN(bool key_ok, runs_[run].Read(head->key.data(), length));
  SEER_ASSIGN_OR_RETURN(bool payload_ok, runs_[run].Read(&head->payload, sizeof head->payload));
  if (!key_ok || !payload_ok) return Corrupt(run_paths_[run] + ": truncated run file");
  return true;
}

// The smallest head becomes current_; its slot (with current_'s old key buffer, so no
// allocation per record) takes the next record of the same run.
Result<bool> RecordSorter::Next(std::string_view* key, uint64_t* payload) {
  if (heap_.empty()) {
    RemoveRuns();
    return false;
  }
  std::pop_heap(heap_.begin(), heap_.end(), Later());
  Head& slot = heap_.back();
  std::swap(current_, slot);
  SEER_ASSIGN_OR_RETURN(bool more, ReadRecord(current_.run, &slot));
  if (more) {
    std::push_heap(heap_.begin(), heap_.end(), Later());
  } else {
    heap_.pop_back();
  }
  *key = current_.key;
  *payload = current_.payload;
  return true;
}

void RecordSorter::RemoveRuns() {
  runs_.clear();
  for (const std::string& path : run_paths_) ::unlink(path.c_str());
  run_paths_.clear();
}

}  // namespace seer
