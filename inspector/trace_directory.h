// The trace directory written by `seer sample --out DIR` and read by `seer stats`
// (docs/formats.md "Trace files", "trace.json"): DIR/trace.json (format "seer-trace",
// version 1, dataset path, fanouts, batch_size, superbatch, epochs, seed, "dataset_identity"
// (the dataset's DatasetManifest::Identity(), so `seer stats` can refuse a trace recorded
// on another dataset; absent in traces written before it existed) and the list of
// superbatch files {epoch, superbatch_index, num_batches, file}; a typed dataset's trace
// adds "target_type" and "relation_fanouts" {relation key: fan-outs}, and its identity is
// the TypedTrainingView's, storage/dataset/typed_target.h) plus one .sbt file per
// superbatch (inspector/trace_format.h). trace.json is written last, so a directory
// without it is not a trace. A trace.json member that is missing or of the wrong type is
// kCorrupt naming the file and the field (never a default).
//
// TraceDirectoryWriter / TraceDirectoryReader are single-threaded objects whose calls
// block on file I/O; the reader keeps only trace.json in memory and reads a .sbt per Read().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "inspector/link_batch.h"
#include "inspector/trace.h"
#include "inspector/trace_stream.h"
#include "storage/base/status.h"

namespace seer {

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
  // Link prediction traces (`seer sample --task link`): batch_size counts edges and
  // these negatives were drawn with them ("link" in trace.json; absent for node seeds).
  bool link = false;
  LinkSeedOptions link_options;
  // Typed datasets: the target node type sampled ("" = a homogeneous dataset) and every
  // relation's fan-outs (key src__name__dst; trace.json holds them as one object, so they
  // read back in key order, not manifest order); dataset_identity is then
  // the TypedTrainingView's Identity(), what `seer train` records.
  std::string target_type;
  std::vector<std::pair<std::string, std::vector<int>>> relation_fanouts;
};

// One superbatch file, as trace.json lists it.
struct TraceSuperbatchInfo {
  // Reader: absolute or relative to the cwd, ready to open; writer: the file's name.
  std::string path;
  int64_t epoch = 0;
  int64_t superbatch_index = 0;
  int64_t num_batches = 0;
};

class TraceDirectoryWriter {
 public:
  // Creates dir; refuses a dir that already holds trace.json unless force (then the old
  // trace.json is removed first, so a failure never leaves it describing new files).
  static Result<TraceDirectoryWriter> Create(const std::string& dir, TraceRunInfo info,
                                             bool force);
  // Writes a whole superbatch held in RAM (WriteTraceFile: atomically).
  Status Add(const SuperbatchTrace& trace);
  // Streaming: where to write superbatch (epoch, k) before AddFile — a temporary name in
  // the directory, .NAME.tmp.PID.0, which the start-up sweep (storage/base/stale_temp.h)
  // removes if this process dies — and moving the finished file into place under its
  // final name. (Not an AtomicFileWriter: TraceFileWriter patches the file header at
  // offset 0 when it finishes, and the file outlives the writer as a TraceFile.)
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
  // Superbatch i, checked against its trace.json entry (epoch, index, batch count).
  Result<SuperbatchTrace> Read(int64_t i) const;
  const std::string& dataset_dir() const { return run_.dataset_dir; }
  const TraceRunInfo& run_info() const { return run_; }

 private:
  TraceRunInfo run_;
  std::vector<TraceSuperbatchInfo> infos_;
};

}  // namespace seer
