// Streaming superbatch traces (issue 12 "memory independent of S"): a superbatch's
// trace lives in one .sbt file on the runtime directory while it waits, and is written
// and read one batch record at a time, so the inspector's RAM does not grow with the
// superbatch size S. The bytes are the format's (inspector/trace_format.h, docs/formats.md
// "Trace files"): the same as SerializeTrace of the whole superbatch.
//
//   TraceFileWriter  appends batch records through one aligned buffer of
//                    kTraceIoBufferBytes, written with large sequential O_DIRECT writes
//                    (buffered when the file system refuses O_DIRECT), holding a flock on
//                    the file until Finish(), which patches the file header, truncates
//                    the padding and hands back a TraceFile.
//   TraceFile        the handle the pipeline passes instead of a SuperbatchTrace: path,
//                    epoch, superbatch index and the byte offset of every record (8 B per
//                    batch in RAM). An owned handle removes its file when destroyed (RAII:
//                    consumed, failed or abandoned superbatches leave no runtime file).
//   TraceRecordReader streams the records front to back with a bounded read-ahead
//                    (kTraceIoBufferBytes, or one record when a record is larger); Next()
//                    parses one BatchTrace, NextIds() only borrows its node ids.
//
// What the inspector side of a streaming run holds in RAM, whatever S is:
// StreamingInspectorBytes below (the planner's O(cache rows) comes on top: see
// cache/belady_planner.h, BeladyPlannerOptions::working_memory_bytes).
//
// Thread safety: each object is single-threaded; different objects may be used on
// different threads (the pipeline's inspector writes, the planner and the gather thread
// each read the same file through their own reader).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cache/belady_planner.h"
#include "inspector/trace.h"
#include "storage/base/aligned_buffer.h"
#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

// The writer's aligned buffer, and each reader's read-ahead.
inline constexpr int64_t kTraceIoBufferBytes = int64_t{4} << 20;
// RAM a superbatch's Belady changesets may hold before they spill to the runtime dir.
inline constexpr int64_t kChangesetRamBytes = int64_t{4} << 20;
// Superbatches whose changesets can be alive at once: planned, queued, executing.
inline constexpr int64_t kChangesetStoresInFlight = 3;
// Parsed batches alive in the gather path: being gathered, queued, being trained.
inline constexpr int64_t kGatherBatchesInFlight = 3;
// The sampler's per-thread scratch while it samples one batch (local-id hash map,
// picked ids, their element offsets, read requests), in units of that batch's trace.
inline constexpr int64_t kSamplerScratchPerTrace = 6;

// Batches the streaming sampler keeps in flight (sampled, not yet written): 2 per
// worker thread, at least 4. num_threads 0 = the hardware's threads.
int64_t TraceChunkBatches(int num_threads);

// The inspector's RAM in a streaming run, by part (bytes). batch_trace_bytes: the
// largest batch's trace (ids + blocks, e.g. the pilot's measured_trace_bytes, with margin).
struct StreamingInspectorParts {
  int64_t sampling = 0;     // (TraceChunkBatches + kSamplerScratchPerTrace x threads) traces
  int64_t writer = 0;       // kTraceIoBufferBytes
  int64_t readers = 0;      // 2 x (kTraceIoBufferBytes + one record): planner's and gather's
  int64_t gather = 0;       // kGatherBatchesInFlight parsed batches
  int64_t changesets = 0;   // kChangesetStoresInFlight x kChangesetRamBytes
  int64_t total() const { return sampling + writer + readers + gather + changesets; }
};
StreamingInspectorParts StreamingInspectorPartsFor(int64_t batch_trace_bytes, int num_threads);
// = StreamingInspectorPartsFor(...).total(): independent of S.
int64_t StreamingInspectorBytes(int64_t batch_trace_bytes, int num_threads);

// A superbatch's trace file and its record index. Move-only.
class TraceFile {
 public:
  TraceFile() = default;
  // Indexes an existing .sbt file (checks the header and every record header; the
  // records themselves are checked as they are read). Not owned: never removed.
  static Result<TraceFile> Open(const std::string& path);
  TraceFile(TraceFile&& other) noexcept;
  TraceFile& operator=(TraceFile&& other) noexcept;
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile();  // removes the file when owned

  const std::string& path() const { return path_; }
  int64_t epoch() const { return epoch_; }
  int64_t superbatch_index() const { return superbatch_index_; }
  // The header's relation count: 0 = homogeneous, else a typed trace (LayerBlock::edge_rel).
  int64_t num_relations() const { return num_relations_; }
  int64_t num_batches() const { return static_cast<int64_t>(offsets_.empty() ? 0 : offsets_.size() - 1); }
  int64_t file_bytes() const { return offsets_.empty() ? 0 : offsets_.back(); }
  // Byte offset of record i; record_offset(num_batches()) = file_bytes().
  int64_t record_offset(int64_t i) const { return offsets_.at(static_cast<size_t>(i)); }
  int64_t largest_record_bytes() const { return largest_record_; }
  bool owned() const { return owned_; }
  // Stops owning the file (it stays on disk), e.g. after renaming it into place.
  void Release() { owned_ = false; }
  // Removes the file now (owned or not); the handle becomes empty.
  void Remove();

 private:
  friend class TraceFileWriter;
  std::string path_;
  int64_t epoch_ = 0;
  int64_t superbatch_index_ = 0;
  int64_t num_relations_ = 0;
  std::vector<int64_t> offsets_;  // num_batches + 1
  int64_t largest_record_ = 0;
  bool owned_ = false;
};

class TraceFileWriter {
 public:
  // Creates (truncates) `path`. direct: try O_DIRECT first. num_relations: 0 for a
  // homogeneous dataset's batches; a typed dataset's relation count (1..256) for batches
  // with LayerBlock::edge_rel (Append throws std::logic_error on a batch of the other
  // kind: trace_format.h CheckTraceRecordKind); kInvalidArgument outside [0, 256].
  static Result<TraceFileWriter> Create(const std::string& path, int64_t epoch, int64_t superbatch_index,
                                        bool direct = true, int64_t num_relations = 0);
  TraceFileWriter(TraceFileWriter&&) noexcept = default;
  TraceFileWriter& operator=(TraceFileWriter&&) noexcept = default;
  ~TraceFileWriter();  // an unfinished file is removed

  Status Append(const BatchTrace& batch);
  // Writes what is buffered and the final header; sync: fdatasync before closing.
  // The returned handle owns the file.
  Result<TraceFile> Finish(bool sync = false);

  bool direct() const { return direct_; }
  int64_t bytes_written() const { return size_; }

 private:
  TraceFileWriter() = default;
  Status Put(const void* data, int64_t n);  // into the buffer, flushing full buffers
  Status FlushFull();
  Status WriteAt(const void* data, int64_t n, int64_t offset);
  std::string path_;
  UniqueFd fd_;
  bool direct_ = false;
  bool finished_ = true;
  int64_t epoch_ = 0, superbatch_index_ = 0;
  int64_t num_relations_ = 0;
  AlignedBuffer buffer_;
  int64_t used_ = 0;          // bytes in buffer_
  int64_t flushed_ = 0;       // bytes already in the file
  int64_t size_ = 0;          // logical bytes so far
  AlignedBuffer first_block_; // the file's first 4 KiB once flushed (O_DIRECT header patch)
  std::vector<int64_t> offsets_;
  int64_t largest_record_ = 0;
};

class TraceRecordReader {
 public:
  // Borrows `file` (it must outlive the reader).
  static Result<TraceRecordReader> Open(const TraceFile& file, int64_t read_ahead_bytes = kTraceIoBufferBytes);
  TraceRecordReader(TraceRecordReader&&) noexcept = default;
  TraceRecordReader& operator=(TraceRecordReader&&) noexcept = default;

  int64_t num_batches() const { return file_->num_batches(); }
  int64_t next_index() const { return next_; }
  bool done() const { return next_ >= num_batches(); }
  // The next record, parsed and checked (kCorrupt naming the file and byte offset).
  Status Next(BatchTrace* out);
  // The next record's node ids, borrowed from the read-ahead buffer (valid until the
  // next call); the record's header is checked, its blocks are not parsed.
  Result<const int64_t*> NextIds(int64_t* num_ids);
  void Rewind() { next_ = 0; }

 private:
  TraceRecordReader() = default;
  // Makes record next_ resident; returns its pointer.
  Result<const char*> Load();
  const TraceFile* file_ = nullptr;
  UniqueFd fd_;
  AlignedBuffer buffer_;
  int64_t read_ahead_ = 0;
  int64_t window_begin_ = 0, window_end_ = 0;  // file range resident in buffer_
  int64_t next_ = 0;
};

// The planner's view of a trace file (cache/belady_planner.h BatchIdSource): each
// record's node ids, front to back, borrowed from the reader's read-ahead buffer.
class TraceIdSource : public BatchIdSource {
 public:
  static Result<TraceIdSource> Open(const TraceFile& file, int64_t read_ahead_bytes = kTraceIoBufferBytes);
  int64_t num_batches() const override { return reader_.num_batches(); }
  Status Rewind() override;
  Result<IdSpan> Next() override;

 private:
  explicit TraceIdSource(TraceRecordReader reader) : reader_(std::move(reader)) {}
  TraceRecordReader reader_;
};

}  // namespace seer
