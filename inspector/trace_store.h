// Trace files and the trace store (DESIGN.md "Trace"; format in inspector/README.md).
//
// Superbatch trace file (".sbt"): little-endian int64 words, so numpy can read it with
// np.fromfile(path, "<i8"):
//   file header, 8 words: magic 0x3154425352454553 ("SEERSBT1"), version 1, epoch,
//     superbatch_index, num_batches, file_bytes, 0, 0
//   then num_batches batch records, each:
//     6 words: record_bytes (this record, header included; a multiple of 8), epoch,
//              batch_index, num_seeds, num_nodes, num_layers
//     3 words per layer (input layer first): num_dst, num_src, num_edges
//     int64 node_ids[num_nodes]                           (seeds first)
//     per layer: int64 row_ptr[num_dst+1], int32 col_idx[num_edges], zero-padded to 8 bytes
//
// TraceStore: a FIFO of whole SuperbatchTrace values (Push/Pop). seer train and seer
// sample no longer use it — their traces stream through files (inspector/trace_stream.h),
// so RAM does not grow with S; it remains for callers that want whole traces in RAM. Traces stay in RAM while the RAM-resident total fits
// budget_bytes (measured as their serialized size); a trace that does not fit is written
// to a runtime file in runtime_dir with one large sequential write (O_DIRECT when the
// file system allows it), read back when popped, and the file is removed then. The
// store's destructor removes files never popped. Push/Pop are thread-safe (a mutex);
// Pop never blocks (empty store = contract violation, check empty()).
//
// TraceDirectoryWriter / TraceDirectoryReader: the trace directory written by
// `seer sample --out DIR`: DIR/trace.json (format "seer-trace", version 1, dataset
// path, fanouts, batch_size, superbatch, epochs, seed, "dataset_identity" (the dataset's
// DatasetManifest::Identity(), so `seer stats` can refuse a trace recorded on another
// dataset; absent in traces written before it existed) and the list of superbatch files
// {epoch, superbatch_index, num_batches, file}) plus one .sbt file per superbatch. A
// trace.json member that is missing or of the wrong type is kCorrupt naming the file and
// the field (never a default). Both are single-threaded objects whose calls block on
// file I/O; the reader keeps only trace.json in memory and reads a .sbt per Read().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "inspector/trace.h"
#include "inspector/trace_stream.h"
#include "storage/base/status.h"

namespace seer {

inline constexpr uint64_t kTraceFileMagic = 0x3154425352454553ULL;  // "SEERSBT1" LE
inline constexpr int64_t kTraceFileVersion = 1;
inline constexpr int64_t kTraceFileHeaderWords = 8;
inline constexpr int64_t kTraceRecordHeaderWords = 6;

// Serialized size in bytes of a superbatch trace file (header + records).
int64_t SerializedTraceBytes(const SuperbatchTrace& trace);
// Serializes into a byte string laid out as above.
std::string SerializeTrace(const SuperbatchTrace& trace);
// Parses bytes laid out as above; `path` only names the source in errors (kCorrupt
// with the byte offset of the first inconsistency).
Result<SuperbatchTrace> ParseTrace(const char* data, int64_t size_bytes, const std::string& path);

// Writes a trace file atomically (temp + fsync + rename).
Status WriteTraceFile(const std::string& path, const SuperbatchTrace& trace);
Result<SuperbatchTrace> ReadTraceFile(const std::string& path);

struct TraceStoreStats {
  int64_t pushed = 0;
  int64_t spilled = 0;           // traces written to runtime files
  int64_t spilled_bytes = 0;
  int64_t ram_bytes = 0;         // currently RAM-resident (serialized size)
  int64_t peak_ram_bytes = 0;
};

class TraceStore {
 public:
  // runtime_dir is created if missing (only when something spills).
  TraceStore(int64_t budget_bytes, std::string runtime_dir);
  ~TraceStore();
  TraceStore(const TraceStore&) = delete;
  TraceStore& operator=(const TraceStore&) = delete;

  Status Push(SuperbatchTrace trace);
  // The oldest trace; reads it back if it was spilled and removes its file.
  Result<SuperbatchTrace> Pop();
  bool empty() const;
  int64_t size() const;
  TraceStoreStats stats() const;
  const std::string& runtime_dir() const { return runtime_dir_; }

 private:
  struct Entry {
    std::unique_ptr<SuperbatchTrace> trace;  // RAM-resident, or null when spilled
    std::string path;                        // spill file
    int64_t bytes = 0;
  };
  Status Spill(const SuperbatchTrace& trace, const std::string& path);

  const int64_t budget_bytes_;
  const std::string runtime_dir_;
  mutable std::mutex mu_;
  std::deque<Entry> entries_;
  TraceStoreStats stats_;
  int64_t next_file_ = 0;
};

struct TraceSuperbatchInfo {
  int64_t epoch = 0;
  int64_t superbatch_index = 0;
  int64_t num_batches = 0;
  std::string path;  // absolute or relative to the cwd: ready to open
};

// Metadata recorded in trace.json.
struct TraceRunInfo {
  std::string dataset_dir;
  // DatasetManifest::Identity() of the dataset sampled; "" = unknown (an older trace).
  // TraceDirectoryWriter::Create fills it from dataset_dir when left empty.
  std::string dataset_identity;
  std::vector<int> fanouts;
  int64_t batch_size = 0;
  int64_t superbatch = 0;
  int64_t epochs = 0;
  uint64_t seed = 0;
};

class TraceDirectoryWriter {
 public:
  // Creates dir; refuses a dir that already holds trace.json unless force (then the old
  // trace.json is removed first, so a failure never leaves it describing new files).
  static Result<TraceDirectoryWriter> Create(const std::string& dir, TraceRunInfo info,
                                             bool force);
  Status Add(const SuperbatchTrace& trace);
  // Streaming: where to write superbatch (epoch, k) before AddFile (a temporary name
  // in the directory, NAME.tmp.PID.0, swept by a later run if this process dies), and
  // moving the finished file into place under its final name.
  std::string TempPathFor(int64_t epoch, int64_t k) const;
  Status AddFile(TraceFile file);
  // Writes trace.json last.
  Status Close();
  const std::string& dir() const { return dir_; }

 private:
  TraceDirectoryWriter(std::string dir, TraceRunInfo info)
      : dir_(std::move(dir)), info_(std::move(info)) {}
  std::string dir_;
  TraceRunInfo info_;
  std::vector<TraceSuperbatchInfo> files_;
};

class TraceDirectoryReader {
 public:
  static Result<TraceDirectoryReader> Open(const std::string& dir);
  int64_t num_superbatches() const { return static_cast<int64_t>(infos_.size()); }
  const TraceSuperbatchInfo& info(int64_t i) const { return infos_.at(static_cast<size_t>(i)); }
  Result<SuperbatchTrace> Read(int64_t i) const;
  const std::string& dataset_dir() const { return run_.dataset_dir; }
  const TraceRunInfo& run_info() const { return run_; }

 private:
  TraceRunInfo run_;
  std::vector<TraceSuperbatchInfo> infos_;
};

}  // namespace seer
