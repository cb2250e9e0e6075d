// Pass 1 of the CPU Belady planner (internal to cache/; the rule and the public entry
// points are cache/belady_planner.h): for every access of a superbatch, where the same
// node is accessed next.
//
// Records (node, e, position) — e = batch + 1, and e = 0 for the initial cache state C0
// with position = slot, so the first use of every cached node comes out of the same
// sort — are collected in access order into a run buffer; a full buffer is sorted (LSD
// radix sort of 64-bit keys node | e | position, cache/radix_sort_internal.h; two words
// per record when the widths do not fit 64 bits) and consecutive records of a node link
// an access to the next one: NextRef = (next batch, position in it).
//  * In RAM (no runtime directory, or everything fits): one run; the sort's scratch
//    becomes the table of all NextRefs (16 bytes per access at the peak).
//  * Spilled (a runtime directory and more accesses than working_memory_bytes / 16):
//    each run is written with one sequential write to a runs file, the runs are k-way
//    merged (one heap sift per record) and each NextRef (12-byte records) is appended to
//    the file segment of its batch range (ranges of working_memory_bytes / 16 accesses);
//    BatchNext loads one range at a time. Both files are RuntimeFiles
//    (cache/runtime_file.h: seer-trace-PID-belady-runs-*, seer-trace-PID-belady-next-*),
//    removed with the table.
// A node twice in one batch, a negative id, a batch size outside [0, 2^31) or 2^31-2
// batches or more are kInvalidArgument; runtime-file I/O errors name the file.
//
// Ownership: the table owns its RAM and runtime files. Single-threaded object (Build's
// sort and walk run on TBB threads internally).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/planner_input.h"
#include "cache/runtime_file.h"
#include "storage/base/status.h"

namespace seer::belady_internal {

// The next access to the same node, packed in one word (so the sort's scratch buffer
// can hold the table): batch (high 32 bits; num_batches = none in this superbatch),
// position in it (low 32 bits).
using NextRef = uint64_t;
inline NextRef MakeNextRef(int32_t batch, int32_t pos) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(batch)) << 32) | static_cast<uint32_t>(pos);
}
inline int32_t NextBatch(NextRef r) { return static_cast<int32_t>(r >> 32); }
inline int32_t NextPos(NextRef r) { return static_cast<int32_t>(r & 0xffffffffu); }

struct AccessRecord;  // a sorted record: node, e, position
struct SortedRun;     // a run in RAM
struct RunOnDisk;     // a run in the runs file

// Every access's NextRef, for the forward pass: all in RAM, or spilled by batch range.
// Batches are read back in order 0..S-1.
class NextUseTable {
 public:
  // Pass 1 over `source` (which it rewinds first). runtime_dir "" = never spill;
  // working_memory_bytes bounds the run buffer (16 bytes per access) when spilling.
  // accesses_hint: the superbatch's total accesses when known (-1 = unknown).
  static Result<std::unique_ptr<NextUseTable>> Build(const std::vector<int64_t>& initial_slots,
                                                     BatchIdSource& source, const std::string& runtime_dir,
                                                     int64_t working_memory_bytes, int64_t accesses_hint);

  // NextRef of each slot of C0 (free slots: none).
  const std::vector<NextRef>& initial_next() const { return initial_next_; }
  int64_t num_batches() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t batch_size(int64_t b) const { return offsets_[static_cast<size_t>(b) + 1] - offsets_[static_cast<size_t>(b)]; }
  int64_t total() const { return offsets_.back(); }
  // NextRefs of batch b's accesses, valid until the next call; b ascending.
  Result<const NextRef*> BatchNext(int64_t b);

 private:
  // A batch range's NextRef segments in the next-use file.
  struct Range {
    int64_t first_batch = 0;
    int64_t end_batch = 0;
    std::vector<std::pair<int64_t, int64_t>> segments;  // (offset, bytes)
  };
  // Spilled record: index within the range, and the NextRef's batch and position.
  struct RangeRecord {
    uint32_t local;
    int32_t batch;
    int32_t pos;
  };
  static_assert(sizeof(RangeRecord) == 12);

  Status Walk(SortedRun& run);
  Status MergeRuns(const std::vector<RunOnDisk>& runs, int64_t working_memory_bytes);
  Status Emit(const AccessRecord& prev, NextRef ref);
  Status LoadRange(size_t r);

  std::vector<int64_t> offsets_;    // batch -> first access (num_batches + 1)
  std::vector<NextRef> initial_next_;
  std::vector<NextRef> in_ram_;     // all accesses (RAM mode) or the loaded range
  bool spilled_ = false;
  std::string runtime_dir_;
  RuntimeFile runs_file_;
  RuntimeFile next_file_;
  std::vector<Range> ranges_;
  std::vector<int32_t> range_of_batch_;
  std::vector<std::vector<RangeRecord>> out_buffers_;
  size_t out_buffer_records_ = 0;
  size_t loaded_range_ = SIZE_MAX;
};

}  // namespace seer::belady_internal
