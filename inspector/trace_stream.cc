#include "inspector/trace_stream.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "inspector/trace_format.h"
#include "storage/base/file_io.h"

namespace seer {

// ---- The inspector's constant -----------------------------------------------------------

int64_t TraceChunkBatches(int num_threads) {
  int threads = num_threads > 0 ? num_threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  return std::max<int64_t>(4, 2 * static_cast<int64_t>(threads));
}

StreamingInspectorParts StreamingInspectorPartsFor(int64_t batch_trace_bytes, int num_threads) {
  const int64_t t = std::max<int64_t>(0, batch_trace_bytes);
  int threads = num_threads > 0 ? num_threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  StreamingInspectorParts p;
  p.sampling = (TraceChunkBatches(num_threads) + kSamplerScratchPerTrace * threads) * t;
  p.writer = kTraceIoBufferBytes;
  p.readers = 2 * (kTraceIoBufferBytes + t);
  p.gather = kGatherBatchesInFlight * t;
  p.changesets = kChangesetStoresInFlight * kChangesetRamBytes;
  return p;
}

int64_t StreamingInspectorBytes(int64_t batch_trace_bytes, int num_threads) {
  return StreamingInspectorPartsFor(batch_trace_bytes, num_threads).total();
}

// ---- TraceFile -----------------------------------------------------------------------------

TraceFile::TraceFile(TraceFile&& other) noexcept
    : path_(std::move(other.path_)),
      epoch_(other.epoch_),
      superbatch_index_(other.superbatch_index_),
      num_relations_(other.num_relations_),
      offsets_(std::move(other.offsets_)),
      largest_record_(other.largest_record_),
      owned_(std::exchange(other.owned_, false)) {}

TraceFile& TraceFile::operator=(TraceFile&& other) noexcept {
  if (this != &other) {
    if (owned_) ::unlink(path_.c_str());
    path_ = std::move(other.path_);
    epoch_ = other.epoch_;
    superbatch_index_ = other.superbatch_index_;
    num_relations_ = other.num_relations_;
    offsets_ = std::move(other.offsets_);
    largest_record_ = other.largest_record_;
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

TraceFile::~TraceFile() {
  if (owned_) ::unlink(path_.c_str());
}

void TraceFile::Remove() {
  if (!path_.empty()) ::unlink(path_.c_str());
  owned_ = false;
  path_.clear();
  offsets_.clear();
}

Result<TraceFile> TraceFile::Open(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open trace file", path);
  SEER_ASSIGN_OR_RETURN(const int64_t size, FileSizeBytes(fd.get(), path));
  char header_bytes[kTraceFileHeaderBytes] = {};
  SEER_RETURN_IF_ERROR(PreadFull(fd.get(), header_bytes, std::min(size, kTraceFileHeaderBytes), 0, path));
  SEER_ASSIGN_OR_RETURN(const TraceFileHeader header, DecodeTraceFileHeader(header_bytes, size, path));
  TraceFile file;
  file.path_ = path;
  file.epoch_ = header.epoch;
  file.superbatch_index_ = header.superbatch_index;
  file.num_relations_ = header.num_relations;
  file.offsets_.reserve(static_cast<size_t>(header.num_batches) + 1);
  // The index: each record's size word (the records are checked as they are read).
  int64_t pos = kTraceFileHeaderBytes;
  for (int64_t i = 0; i < header.num_batches; ++i) {
    const int64_t avail = size - pos;
    if (avail < kTraceRecordHeaderBytes) return TraceCorrupt(path, pos, "truncated record");
    int64_t bytes = 0;
    SEER_RETURN_IF_ERROR(PreadFull(fd.get(), &bytes, sizeof(bytes), pos, path));
    if (bytes <= 0 || bytes % 8 != 0 || bytes > avail) {
      return TraceCorrupt(path, pos, "bad batch record header");
    }
    file.offsets_.push_back(pos);
    file.largest_record_ = std::max(file.largest_record_, bytes);
    pos += bytes;
  }
  if (pos != size) return TraceCorrupt(path, pos, "trailing bytes after the last record");
  file.offsets_.push_back(pos);
  return file;
}

// ---- TraceFileWriter ---------------------------------------------------------------------

namespace {
constexpr int64_t kDirectAlignment = kDirectAlign;

// Word/Bytes/PadTo8 onto the writer (EncodeTraceRecord's sink), stopping at the first error.
class WriterSink {
 public:
  explicit WriterSink(std::function<Status(const void*, int64_t)> put) : put_(std::move(put)) {}
  void Word(int64_t v) { Bytes(&v, 8); }
  void Bytes(const void* data, int64_t n) {
    if (!status_.ok() || n <= 0) return;
    status_ = put_(data, n);
    pos_ += n;
  }
  void PadTo8() {
    static const char zeros[8] = {};
    if (pos_ % 8 != 0) Bytes(zeros, 8 - pos_ % 8);
  }
  Status status() const { return status_; }

 private:
  std::function<Status(const void*, int64_t)> put_;
  Status status_;
  int64_t pos_ = 0;
};

}  // namespace

// A positioned write; a file system that accepted O_DIRECT at open but refuses the write
// (EINVAL) gets the same write buffered from then on.
Status TraceFileWriter::WriteAt(const void* data, int64_t n, int64_t offset) {
  Status st = PwriteFull(fd_.get(), data, n, offset, path_);
  if (!st.ok() && direct_ && st.sys_errno() == EINVAL) {
    const int flags = ::fcntl(fd_.get(), F_GETFL);
    if (flags >= 0 && ::fcntl(fd_.get(), F_SETFL, flags & ~O_DIRECT) == 0) {
      direct_ = false;
      st = PwriteFull(fd_.get(), data, n, offset, path_);
    }
  }
  return st;
}

Result<TraceFileWriter> TraceFileWriter::Create(const std::string& path, int64_t epoch, int64_t superbatch_index,
                                                bool direct, int64_t num_relations) {
  if (num_relations < 0 || num_relations > kTraceMaxRelations) {
    return InvalidArgument(path + ": a trace of " + std::to_string(num_relations) + " relations (0 = homogeneous, at most " +
                           std::to_string(kTraceMaxRelations) + ")");
  }
  TraceFileWriter w;
  w.num_relations_ = num_relations;
  w.path_ = path;
  w.epoch_ = epoch;
  w.superbatch_index_ = superbatch_index;
  int fd = -1;
  if (direct) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
    w.direct_ = fd >= 0;
  }
  if (fd < 0 && (!direct || errno == EINVAL)) {  // tmpfs and friends refuse O_DIRECT
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) return ErrnoStatus(errno, "create trace file", path);
  w.fd_ = UniqueFd(fd);
  // Held until Finish closes the file, like AtomicFileWriter's temporaries: the start-up
  // sweep (storage/base/stale_temp.h) leaves a locked NAME.tmp.PID.N alone even when its
  // pid looks dead (another PID namespace) — seer sample's files are named so.
  (void)::flock(fd, LOCK_EX | LOCK_NB);
  w.finished_ = false;
  w.buffer_ = AlignedBuffer(static_cast<size_t>(kTraceIoBufferBytes), kDirectAlignment);
  const auto header = EncodeTraceFileHeader({epoch, superbatch_index, 0, 0, num_relations});  // patched by Finish
  std::memcpy(w.buffer_.data(), header.data(), kTraceFileHeaderBytes);
  w.used_ = kTraceFileHeaderBytes;
  w.size_ = kTraceFileHeaderBytes;
  return w;
}

TraceFileWriter::~TraceFileWriter() {
  if (!finished_ && !path_.empty()) {
    fd_ = UniqueFd();
    ::unlink(path_.c_str());
  }
}

Status TraceFileWriter::FlushFull() {
  // The buffer is full: one aligned write of all of it.
  if (flushed_ == 0) {
    first_block_ = AlignedBuffer(static_cast<size_t>(kDirectAlignment), kDirectAlignment);
    std::memcpy(first_block_.data(), buffer_.data(), static_cast<size_t>(kDirectAlignment));
  }
  SEER_RETURN_IF_ERROR(WriteAt(buffer_.data(), used_, flushed_));
  flushed_ += used_;
  used_ = 0;
  return Status::Ok();
}

Status TraceFileWriter::Put(const void* data, int64_t n) {
  const char* src = static_cast<const char*>(data);
  while (n > 0) {
    const int64_t take = std::min(n, kTraceIoBufferBytes - used_);
    std::memcpy(buffer_.data() + used_, src, static_cast<size_t>(take));
    used_ += take;
    size_ += take;
    src += take;
    n -= take;
    if (used_ == kTraceIoBufferBytes) SEER_RETURN_IF_ERROR(FlushFull());
  }
  return Status::Ok();
}

Status TraceFileWriter::Append(const BatchTrace& batch) {
  if (finished_) throw std::logic_error("TraceFileWriter::Append after Finish");
  const int64_t start = size_;
  WriterSink sink([this](const void* d, int64_t n) { return Put(d, n); });
  EncodeTraceRecord(sink, batch, num_relations_);
  SEER_RETURN_IF_ERROR(sink.status());
  offsets_.push_back(start);
  largest_record_ = std::max(largest_record_, size_ - start);
  return Status::Ok();
}

Result<TraceFile> TraceFileWriter::Finish(bool sync) {
  if (finished_) throw std::logic_error("TraceFileWriter::Finish twice");
  const auto header =
      EncodeTraceFileHeader({epoch_, superbatch_index_, static_cast<int64_t>(offsets_.size()), size_, num_relations_});
  if (flushed_ == 0) std::memcpy(buffer_.data(), header.data(), kTraceFileHeaderBytes);
  // The tail: O_DIRECT writes whole aligned blocks (zero padding, truncated below).
  const int64_t tail = direct_ ? AlignUp(used_, kDirectAlignment) : used_;
  std::memset(buffer_.data() + used_, 0, static_cast<size_t>(tail - used_));
  if (tail > 0) SEER_RETURN_IF_ERROR(WriteAt(buffer_.data(), tail, flushed_));
  if (flushed_ > 0) {
    if (direct_) {
      std::memcpy(first_block_.data(), header.data(), kTraceFileHeaderBytes);
      SEER_RETURN_IF_ERROR(WriteAt(first_block_.data(), kDirectAlignment, 0));
    } else {
      SEER_RETURN_IF_ERROR(WriteAt(header.data(), kTraceFileHeaderBytes, 0));
    }
  }
  if (::ftruncate(fd_.get(), size_) != 0) return ErrnoStatus(errno, "truncate trace file", path_, size_);
  if (sync && ::fdatasync(fd_.get()) != 0) return ErrnoStatus(errno, "fdatasync", path_);
  SEER_RETURN_IF_ERROR(fd_.Close(path_));
  finished_ = true;
  buffer_ = AlignedBuffer();
  first_block_ = AlignedBuffer();
  TraceFile file;
  file.path_ = path_;
  file.epoch_ = epoch_;
  file.superbatch_index_ = superbatch_index_;
  file.num_relations_ = num_relations_;
  file.offsets_ = std::move(offsets_);
  file.offsets_.push_back(size_);
  file.largest_record_ = largest_record_;
  file.owned_ = true;
  return file;
}

// ---- TraceRecordReader -------------------------------------------------------------------

Result<TraceRecordReader> TraceRecordReader::Open(const TraceFile& file, int64_t read_ahead_bytes) {
  TraceRecordReader r;
  r.file_ = &file;
  r.fd_ = UniqueFd(::open(file.path().c_str(), O_RDONLY | O_CLOEXEC));
  if (!r.fd_.valid()) return ErrnoStatus(errno, "open trace file", file.path());
  (void)::posix_fadvise(r.fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  r.read_ahead_ = std::max<int64_t>(read_ahead_bytes, 4096);
  return r;
}

Result<const char*> TraceRecordReader::Load() {
  if (done()) throw std::logic_error("TraceRecordReader: read past the last record");
  const int64_t begin = file_->record_offset(next_);
  const int64_t end = file_->record_offset(next_ + 1);
  if (begin < window_begin_ || end > window_end_) {
    // Refill from the record's start: the read-ahead, or the record when it is larger.
    const int64_t want = std::min(std::max(read_ahead_, end - begin), file_->file_bytes() - begin);
    buffer_.Reserve(want);
    SEER_RETURN_IF_ERROR(PreadFull(fd_.get(), buffer_.data(), want, begin, file_->path()));
    window_begin_ = begin;
    window_end_ = begin + want;
    // No POSIX_FADV_DONTNEED: the planner reads a file up to three times (first uses, the
    // planner's two passes) and the gather thread once more; the page cache (reclaimable,
    // not the process's RSS) serves the later reads.
  }
  return buffer_.data() + (begin - window_begin_);
}

Status TraceRecordReader::Next(BatchTrace* out) {
  SEER_ASSIGN_OR_RETURN(const char* data, Load());
  const int64_t begin = file_->record_offset(next_);
  const int64_t expected = file_->record_offset(next_ + 1) - begin;
  int64_t bytes = 0;
  SEER_RETURN_IF_ERROR(ParseTraceRecord(data, expected, begin, file_->path(), out, &bytes, file_->num_relations()));
  if (bytes != expected) {
    return TraceCorrupt(file_->path(), begin, "record size differs from the index");
  }
  ++next_;
  return Status::Ok();
}

Result<const int64_t*> TraceRecordReader::NextIds(int64_t* num_ids) {
  SEER_ASSIGN_OR_RETURN(const char* data, Load());
  const int64_t begin = file_->record_offset(next_);
  const int64_t expected = file_->record_offset(next_ + 1) - begin;
  SEER_ASSIGN_OR_RETURN(const TraceRecordHeader h,
                        DecodeTraceRecordHeader(data, expected, begin, file_->path()));
  if (h.record_bytes != expected) {
    return TraceCorrupt(file_->path(), begin, "record size differs from the index");
  }
  ++next_;
  *num_ids = h.num_nodes;
  return reinterpret_cast<const int64_t*>(data + h.node_ids_offset());
}

// ---- TraceIdSource ---------------------------------------------------------------------

Result<TraceIdSource> TraceIdSource::Open(const TraceFile& file, int64_t read_ahead_bytes) {
  SEER_ASSIGN_OR_RETURN(TraceRecordReader reader, TraceRecordReader::Open(file, read_ahead_bytes));
  return TraceIdSource(std::move(reader));
}

Status TraceIdSource::Rewind() {
  reader_.Rewind();
  return Status::Ok();
}

Result<IdSpan> TraceIdSource::Next() {
  if (reader_.done()) throw std::logic_error("TraceIdSource::Next past the last batch");
  int64_t n = 0;
  SEER_ASSIGN_OR_RETURN(const int64_t* ids, reader_.NextIds(&n));
  return IdSpan{ids, n};
}

}  // namespace seer
