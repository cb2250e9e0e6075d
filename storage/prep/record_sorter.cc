#include "storage/prep/record_sorter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"

namespace seer {
namespace {

constexpr int64_t kMaxRuns = 512;
constexpr size_t kIoBufferBytes = 64 << 10;

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

// Three quarters of the memory for key bytes, a quarter for records; both reserved up
// front so neither grows by doubling past the share.
Status RecordSorter::Add(std::string_view key, uint64_t payload) {
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

Status RecordSorter::SpillRun() {
  if (records_.empty()) return Status::Ok();
  if (static_cast<int64_t>(run_paths_.size()) >= kMaxRuns) {
    return Status(StatusCode::kResourceExhausted, "id remapping needs more than " + std::to_string(kMaxRuns) +
                                                      " sorted runs of " + FormatBytes(memory_bytes_) +
                                                      "; raise --memory-budget");
  }
  std::sort(records_.begin(), records_.end(), [&](const Record& a, const Record& b) {
    std::string_view ka(arena_.data() + a.offset, a.length), kb(arena_.data() + b.offset, b.length);
    return ka != kb ? ka < kb : a.payload < b.payload;
  });
  run_paths_.push_back(dir_ + "/" + name_ + "-" + std::to_string(run_paths_.size()) + ".run");
  SEER_ASSIGN_OR_RETURN(SequentialWriter out, SequentialWriter::Create(run_paths_.back()));
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
  for (size_t r = 0; r < runs_.size(); ++r) SEER_RETURN_IF_ERROR(ReadHead(r));
  return Status::Ok();
}

Status RecordSorter::ReadHead(size_t run) {
  uint32_t length;
  SEER_ASSIGN_OR_RETURN(bool more, runs_[run].Read(&length, sizeof length));
  if (!more) return Status::Ok();
  Head head{std::string(length, '\0'), 0, run};
  SEER_ASSIGN_OR_RETURN(bool key_ok, runs_[run].Read(head.key.data(), length));
  SEER_ASSIGN_OR_RETURN(bool payload_ok, runs_[run].Read(&head.payload, sizeof head.payload));
  if (!key_ok || !payload_ok) return Corrupt(run_paths_[run] + ": truncated run file");
  heap_.push(std::move(head));
  return Status::Ok();
}

Result<bool> RecordSorter::Next(std::string_view* key, uint64_t* payload) {
  if (heap_.empty()) {
    RemoveRuns();
    return false;
  }
  current_ = heap_.top();
  heap_.pop();
  SEER_RETURN_IF_ERROR(ReadHead(current_.run));
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
