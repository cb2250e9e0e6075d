// External sorting for `seer prep --remap-ids` (storage/prep/id_remap.h) and the joins
// of id tables with the nodes (storage/prep/id_join.h): RecordSorter orders (key bytes,
// uint64 payload) records by (key, payload) within a memory share, by sorting runs that
// fit it, spilling them, and merging them k-way; SequentialWriter/SequentialReader are the
// buffered plain-file streams the runs, and the int64 files built from a merge, go
// through. The sorter owns its run files (removed by the merge, or by the destructor
// after an error). Blocking; a run is sorted on the caller's TBB arena (chunks sorted in
// parallel, merged as the run is written; the order is total, so the files do not
// depend on the thread count), everything else on the calling thread. Errors name the
// file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/base/status.h"
#include "storage/base/unique_fd.h"

namespace seer {

// Appends to a new file (created, truncated) through a 64 KiB buffer; Close() flushes.
class SequentialWriter {
 public:
  static Result<SequentialWriter> Create(const std::string& path);
  Status Write(const void* data, size_t length_bytes);
  Status Close();

 private:
  SequentialWriter(std::string path, UniqueFd fd);
  Status Flush();
  std::string path_;
  UniqueFd fd_;
  std::vector<char> buffer_;
};

// Reads a file front to back through a 64 KiB buffer.
class SequentialReader {
 public:
  static Result<SequentialReader> Open(const std::string& path);
  // Exactly `length_bytes`; false at a clean end of file, kCorrupt ("truncated") when the
  // file ends inside the read.
  Result<bool> Read(void* out, size_t length_bytes);

 private:
  SequentialReader(std::string path, UniqueFd fd, int64_t size_bytes);
  std::string path_;
  UniqueFd fd_;
  int64_t size_bytes_ = 0, offset_bytes_ = 0;
  std::vector<char> buffer_;
  size_t begin_ = 0;
};

class RecordSorter {
 public:
  // Runs are `dir`/`name`-K.run; `memory_bytes` (at least 64 KiB) bounds the records held
  // before a run is spilled. More than 512 runs is kResourceExhausted naming the budget.
  RecordSorter(std::string dir, std::string name, int64_t memory_bytes);
  ~RecordSorter();
  RecordSorter(const RecordSorter&) = delete;
  RecordSorter& operator=(const RecordSorter&) = delete;

  Status Add(std::string_view key, uint64_t payload);

  // Ends the adding: spills the last run, frees the sort memory and opens the merge.
  Status StartMerge();
  // The next record in (key, payload) order; false when all were read (the runs are then
  // removed). The key view is valid until the next call.
  Result<bool> Next(std::string_view* key, uint64_t* payload);

  // StartMerge, then emit(key, payload) -> Status for every record in order.
  template <typename Emit>
  Status Merge(Emit&& emit) {
    SEER_RETURN_IF_ERROR(StartMerge());
    std::string_view key;
    uint64_t payload;
    for (;;) {
      SEER_ASSIGN_OR_RETURN(bool more, Next(&key, &payload));
      if (!more) return Status::Ok();
      SEER_RETURN_IF_ERROR(emit(key, payload));
    }
  }

 private:
  // A key's first 16 bytes as two big-endian words (zero-padded), so most comparisons
  // are two integer compares; bytes past 16 live in arena_ at `tail`.
  struct Record {
    uint64_t head[2];
    uint64_t payload;
    uint64_t tail;
    uint32_t length;
  };
  static bool Less(const Record& a, const Record& b, const char* arena);
  struct Head {
    std::string key;
    uint64_t payload = 0;
    size_t run = 0;
  };
  struct Later {
    bool operator()(const Head& a, const Head& b) const {
      const int c = a.key.compare(b.key);
      return c != 0 ? c > 0 : a.payload > b.payload;
    }
  };

  Status SpillRun();
  Status WriteRecord(SequentialWriter& out, const Record& r);
  Result<bool> ReadRecord(size_t run, Head* head);  // the next record of `run`; false at its end
  void RemoveRuns();

  std::string dir_, name_;
  int64_t memory_bytes_;
  bool reserved_ = false;
  std::string arena_;
  std::vector<Record> records_;
  std::vector<std::string> run_paths_;
  // The merge.
  std::vector<SequentialReader> runs_;
  std::vector<Head> heap_;  // a binary heap (std::push_heap with Later)
  Head current_;
};

}  // namespace seer
