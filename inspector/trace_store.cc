#include "inspector/trace_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "inspector/trace_record_format.h"
#include "inspector/trace_stream.h"
#include "storage/base/aligned_buffer.h"
#include "storage/base/atomic_file.h"
#include "storage/base/file_io.h"
#include "storage/base/json_file.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"

namespace seer {

namespace {

class WordWriter {
 public:
  explicit WordWriter(char* out) : out_(out) {}
  void Word(int64_t v) { Bytes(&v, 8); }
  void Bytes(const void* data, int64_t n) {
    if (n > 0) std::memcpy(out_ + pos_, data, static_cast<size_t>(n));
    pos_ += n;
  }
  void PadTo8() {
    while (pos_ % 8 != 0) out_[pos_++] = 0;
  }
  int64_t pos() const { return pos_; }

 private:
  char* out_;
  int64_t pos_ = 0;
};

void SerializeTo(const SuperbatchTrace& trace, int64_t total_bytes, char* out) {
  WordWriter w(out);
  trace_format::WriteFileHeader(w, trace.epoch, trace.superbatch_index,
                                static_cast<int64_t>(trace.batches.size()), total_bytes);
  for (const BatchTrace& b : trace.batches) trace_format::WriteRecord(w, b);
  if (w.pos() != total_bytes) throw std::logic_error("SerializeTrace: size mismatch");
}

}  // namespace

int64_t SerializedTraceBytes(const SuperbatchTrace& trace) {
  int64_t bytes = 8 * kTraceFileHeaderWords;
  for (const BatchTrace& b : trace.batches) bytes += trace_format::RecordBytes(b);
  return bytes;
}

std::string SerializeTrace(const SuperbatchTrace& trace) {
  const int64_t bytes = SerializedTraceBytes(trace);
  std::string out(static_cast<size_t>(bytes), '\0');
  SerializeTo(trace, bytes, out.data());
  return out;
}

Result<SuperbatchTrace> ParseTrace(const char* data, int64_t size_bytes, const std::string& path) {
  auto corrupt = [&](int64_t offset, const std::string& what) {
    return Corrupt(path + ": trace file corrupt at byte offset " + std::to_string(offset) + ": " +
                   what);
  };
  int64_t pos = 0;
  auto word = [&](int64_t at) {
    int64_t v;
    std::memcpy(&v, data + at, 8);
    return v;
  };
  if (size_bytes < 8 * kTraceFileHeaderWords) return corrupt(0, "shorter than the file header");
  if (static_cast<uint64_t>(word(0)) != kTraceFileMagic) return corrupt(0, "bad magic");
  if (word(8) != kTraceFileVersion) {
    return corrupt(8, "unsupported version " + std::to_string(word(8)));
  }
  if (word(40) != size_bytes) {
    return corrupt(40, "header says " + std::to_string(word(40)) + " bytes, file has " +
                           std::to_string(size_bytes));
  }
  SuperbatchTrace trace;
  trace.epoch = word(16);
  trace.superbatch_index = word(24);
  const int64_t num_batches = word(32);
  if (num_batches < 0 || num_batches > size_bytes / 8) return corrupt(32, "bad batch count");
  pos = 8 * kTraceFileHeaderWords;
  trace.batches.resize(static_cast<size_t>(num_batches));
  for (BatchTrace& b : trace.batches) {
    int64_t record_bytes = 0;
    SEER_RETURN_IF_ERROR(ParseTraceRecord(data + pos, size_bytes - pos, pos, path, &b, &record_bytes));
    pos += record_bytes;
  }
  if (pos != size_bytes) return corrupt(pos, "trailing bytes after the last record");
  return trace;
}

Status WriteTraceFile(const std::string& path, const SuperbatchTrace& trace) {
  const std::string bytes = SerializeTrace(trace);
  return WriteFileAtomically(path, bytes);
}

Result<SuperbatchTrace> ReadTraceFile(const std::string& path) {
  SEER_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  return ParseTrace(bytes.data(), static_cast<int64_t>(bytes.size()), path);
}

// ---- TraceStore -------------------------------------------------------------------------

TraceStore::TraceStore(int64_t budget_bytes, std::string runtime_dir)
    : budget_bytes_(budget_bytes), runtime_dir_(std::move(runtime_dir)) {}

TraceStore::~TraceStore() {
  for (const Entry& e : entries_) {
    if (!e.path.empty()) ::unlink(e.path.c_str());
  }
}

Status TraceStore::Spill(const SuperbatchTrace& trace, const std::string& path) {
  // One large sequential write. O_DIRECT needs an aligned buffer and length, so the
  // buffer is padded and the file truncated back to its real size afterwards; file
  // systems that refuse O_DIRECT (tmpfs: EINVAL) get a buffered write instead.
  const int64_t bytes = SerializedTraceBytes(trace);
  const int64_t padded = AlignUp(bytes, 4096);
  AlignedBuffer buffer(static_cast<size_t>(padded));
  SerializeTo(trace, bytes, buffer.data());
  std::memset(buffer.data() + bytes, 0, static_cast<size_t>(padded - bytes));
  bool direct = true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) {
    direct = false;
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0) return ErrnoStatus(errno, "create trace spill file", path);
  UniqueFd owner(fd);
  Status st = PwriteFull(fd, buffer.data(), direct ? padded : bytes, 0, path);
  if (st.ok() && direct && ::ftruncate(fd, bytes) != 0) {
    st = ErrnoStatus(errno, "truncate trace spill file", path, bytes);
  }
  if (st.ok()) st = owner.Close(path);
  if (!st.ok()) ::unlink(path.c_str());
  return st;
}

Status TraceStore::Push(SuperbatchTrace trace) {
  const int64_t bytes = SerializedTraceBytes(trace);
  std::unique_lock<std::mutex> lock(mu_);
  Entry entry;
  entry.bytes = bytes;
  if (stats_.ram_bytes + bytes <= budget_bytes_) {
    entry.trace = std::make_unique<SuperbatchTrace>(std::move(trace));
    stats_.ram_bytes += bytes;
    stats_.peak_ram_bytes = std::max(stats_.peak_ram_bytes, stats_.ram_bytes);
  } else {
    const int64_t file_index = next_file_++;
    // The write happens outside the lock so Pop() is not held up; with one producer
    // (the inspector) entries keep push order, concurrent producers land in completion order.
    lock.unlock();
    SEER_RETURN_IF_ERROR(MakeDirectories(runtime_dir_));
    entry.path = runtime_dir_ + "/seer-trace-" + std::to_string(::getpid()) + "-" +
                 std::to_string(reinterpret_cast<uintptr_t>(this)) + "-" +
                 std::to_string(file_index) + ".sbt";
    SEER_RETURN_IF_ERROR(Spill(trace, entry.path));
    lock.lock();
    ++stats_.spilled;
    stats_.spilled_bytes += bytes;
  }
  ++stats_.pushed;
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Result<SuperbatchTrace> TraceStore::Pop() {
  Entry entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.empty()) throw std::logic_error("TraceStore::Pop on an empty store");
    entry = std::move(entries_.front());
    entries_.pop_front();
    if (entry.trace) stats_.ram_bytes -= entry.bytes;
  }
  if (entry.trace) return std::move(*entry.trace);
  Result<SuperbatchTrace> trace = ReadTraceFile(entry.path);
  ::unlink(entry.path.c_str());
  return trace;
}

bool TraceStore::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.empty();
}

int64_t TraceStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

TraceStoreStats TraceStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

// ---- Trace directory ------------------------------------------------------------------------

namespace {
constexpr const char* kTraceManifest = "trace.json";

std::string TraceFileName(int64_t epoch, int64_t k) {
  return fmt::format("e{:04d}_sb{:06d}.sbt", epoch, k);
}

Json SuperbatchEntry(const TraceSuperbatchInfo& f) {
  Json item = Json::object();
  item["epoch"] = f.epoch;
  item["superbatch_index"] = f.superbatch_index;
  item["num_batches"] = f.num_batches;
  item["file"] = f.path;
  return item;
}

// The seed is a decimal string: a uint64 does not fit every JSON reader's numbers.
Result<uint64_t> ParseSeed(const std::string& text, const std::string& path) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE) {
    return Corrupt(path + ": field 'seed' must be a decimal uint64 string, found \"" + text + "\"");
  }
  return static_cast<uint64_t>(seed);
}

Result<TraceRunInfo> ReadRunInfo(const Json& root, const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const std::string format, JsonString(root, "format", path));
  if (format != "seer-trace") return Corrupt(path + ": format is not seer-trace");
  SEER_ASSIGN_OR_RETURN(const int64_t version, JsonInt(root, "version", path));
  if (version != 1) return Corrupt(path + ": unsupported trace version " + std::to_string(version));
  TraceRunInfo run;
  SEER_ASSIGN_OR_RETURN(run.dataset_dir, JsonString(root, "dataset", path));
  SEER_ASSIGN_OR_RETURN(const std::vector<int64_t> fanouts, JsonIntArray(root, "fanouts", path));
  for (int64_t f : fanouts) {
    if (f < std::numeric_limits<int>::min() || f > std::numeric_limits<int>::max()) {
      return Corrupt(path + ": field 'fanouts' holds " + std::to_string(f) +
                     ", outside the int range");
    }
    run.fanouts.push_back(static_cast<int>(f));
  }
  SEER_ASSIGN_OR_RETURN(run.batch_size, JsonInt(root, "batch_size", path));
  SEER_ASSIGN_OR_RETURN(run.superbatch, JsonInt(root, "superbatch", path));
  SEER_ASSIGN_OR_RETURN(run.epochs, JsonInt(root, "epochs", path));
  SEER_ASSIGN_OR_RETURN(const std::string seed, JsonString(root, "seed", path));
  SEER_ASSIGN_OR_RETURN(run.seed, ParseSeed(seed, path));
  SEER_ASSIGN_OR_RETURN(run.dataset_identity, JsonOptionalString(root, "dataset_identity", "", path));
  return run;
}

// The "superbatches" list; errors name the element ("trace.json: superbatches[2]: ...").
Result<std::vector<TraceSuperbatchInfo>> ReadSuperbatchList(const Json& root,
                                                            const std::string& dir,
                                                            const std::string& path) {
  SEER_ASSIGN_OR_RETURN(const Json* list, JsonMember(root, "superbatches", path));
  if (!list->is_array()) {
    return Corrupt(path + ": field 'superbatches' must be an array, found " + list->type_name());
  }
  std::vector<TraceSuperbatchInfo> infos;
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    const std::string where = path + ": superbatches[" + std::to_string(i) + "]";
    TraceSuperbatchInfo info;
    SEER_ASSIGN_OR_RETURN(info.epoch, JsonInt(item, "epoch", where));
    SEER_ASSIGN_OR_RETURN(info.superbatch_index, JsonInt(item, "superbatch_index", where));
    SEER_ASSIGN_OR_RETURN(info.num_batches, JsonInt(item, "num_batches", where));
    SEER_ASSIGN_OR_RETURN(const std::string file, JsonString(item, "file", where));
    info.path = dir + "/" + file;
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace

Result<TraceDirectoryWriter> TraceDirectoryWriter::Create(const std::string& dir, TraceRunInfo info,
                                                          bool force) {
  SEER_RETURN_IF_ERROR(MakeDirectories(dir));
  const std::string manifest = dir + "/" + kTraceManifest;
  SEER_RETURN_IF_ERROR(RemoveManifestBeforeRewrite(manifest, force, "a trace directory"));
  if (info.dataset_identity.empty() && !info.dataset_dir.empty()) {
    auto dataset = Dataset::Open(info.dataset_dir);
    if (dataset.ok()) info.dataset_identity = dataset->manifest().Identity();
  }
  return TraceDirectoryWriter(dir, std::move(info));
}

Status TraceDirectoryWriter::Add(const SuperbatchTrace& trace) {
  const std::string name = TraceFileName(trace.epoch, trace.superbatch_index);
  SEER_RETURN_IF_ERROR(WriteTraceFile(dir_ + "/" + name, trace));
  files_.push_back(TraceSuperbatchInfo{trace.epoch, trace.superbatch_index,
                                       static_cast<int64_t>(trace.batches.size()), name});
  return Status::Ok();
}

std::string TraceDirectoryWriter::TempPathFor(int64_t epoch, int64_t k) const {
  return dir_ + "/." + TraceFileName(epoch, k) + ".tmp." + std::to_string(::getpid()) + ".0";
}

Status TraceDirectoryWriter::AddFile(TraceFile file) {
  const std::string name = TraceFileName(file.epoch(), file.superbatch_index());
  const std::string final_path = dir_ + "/" + name;
  if (::rename(file.path().c_str(), final_path.c_str()) != 0) {
    return ErrnoStatus(errno, "rename " + file.path() + " to", final_path);
  }
  file.Release();
  files_.push_back(TraceSuperbatchInfo{file.epoch(), file.superbatch_index(), file.num_batches(), name});
  return Status::Ok();
}

Status TraceDirectoryWriter::Close() {
  Json root = Json::object();
  root["format"] = "seer-trace";
  root["version"] = 1;
  root["dataset"] = info_.dataset_dir;
  root["fanouts"] = info_.fanouts;
  root["batch_size"] = info_.batch_size;
  root["superbatch"] = info_.superbatch;
  root["epochs"] = info_.epochs;
  root["seed"] = std::to_string(info_.seed);
  if (!info_.dataset_identity.empty()) root["dataset_identity"] = info_.dataset_identity;
  Json files = Json::array();
  for (const TraceSuperbatchInfo& f : files_) files.push_back(SuperbatchEntry(f));
  root["superbatches"] = std::move(files);
  return WriteJsonFileAtomically(dir_ + "/" + kTraceManifest, root);
}

Result<TraceDirectoryReader> TraceDirectoryReader::Open(const std::string& dir) {
  const std::string path = dir + "/" + kTraceManifest;
  SEER_ASSIGN_OR_RETURN(const Json root, ReadJsonFile(path));
  TraceDirectoryReader reader;
  SEER_ASSIGN_OR_RETURN(reader.run_, ReadRunInfo(root, path));
  SEER_ASSIGN_OR_RETURN(reader.infos_, ReadSuperbatchList(root, dir, path));
  return reader;
}

Result<SuperbatchTrace> TraceDirectoryReader::Read(int64_t i) const {
  const TraceSuperbatchInfo& meta = info(i);
  SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, ReadTraceFile(meta.path));
  if (trace.epoch != meta.epoch || trace.superbatch_index != meta.superbatch_index ||
      static_cast<int64_t>(trace.batches.size()) != meta.num_batches) {
    return Corrupt(fmt::format(
        "{}: header (epoch {}, superbatch {}, {} batches) does not match trace.json", meta.path,
        trace.epoch, trace.superbatch_index, trace.batches.size()));
  }
  return trace;
}

}  // namespace seer
