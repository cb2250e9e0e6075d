// Private to storage/ (and its tests): the pieces DirectReader is built from.
//
// ReadPlan: a batch of arbitrary (offset, length, dest) requests turned into aligned
// device reads. Requests are sorted by offset; requests touching the same aligned block
// share one device read, and reads of adjacent blocks are merged up to max_merge_bytes.
// Each device read carries the copy-out pieces (file range -> destination) that it
// serves. A request longer than max_merge_bytes is split over several device reads.
//
// AdvanceRead: the one completion step both backends (io_uring and the pread pool)
// run on each device read's result, so the fault-injection seam exercises the same
// logic whichever backend is in use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer::internal {

struct CopyPiece {
  int64_t file_offset_bytes = 0;
  int64_t length_bytes = 0;
  char* dest = nullptr;
};

struct DeviceRead {
  int64_t offset_bytes = 0;      // aligned
  int64_t length_bytes = 0;      // aligned; may extend past EOF (unpadded files)
  int64_t needed_end_bytes = 0;  // the last requested byte + 1 inside this read
  uint32_t first_piece = 0;      // into ReadPlan::pieces
  uint32_t num_pieces = 0;
};

struct ReadPlan {
  std::vector<DeviceRead> reads;   // sorted by offset, disjoint
  std::vector<CopyPiece> pieces;   // grouped by read
  int64_t max_read_bytes = 0;
  // Scratch reused between calls.
  std::vector<uint32_t> order;
  std::vector<uint32_t> piece_read;
  std::vector<CopyPiece> unsorted_pieces;
};

// Builds the plan. Requests must be validated (non-negative, in bounds) already;
// zero-length requests are skipped. max_merge_bytes is rounded down to the alignment
// (at least one block).
void BuildReadPlan(const ReadRequest* requests, size_t count, int64_t alignment_bytes,
                   int64_t max_merge_bytes, ReadPlan* plan);

// Copies every piece of `read` out of `buffer` (which holds the device bytes starting at
// read.offset_bytes).
void CopyOut(const ReadPlan& plan, const DeviceRead& read, const char* buffer);

// Progress of one device read across resubmissions. The next submission reads
// [read.offset_bytes + done_bytes, read.offset_bytes + read.length_bytes) into
// buffer + done_bytes.
struct ReadProgress {
  int64_t done_bytes = 0;
  int retries = 0;  // consecutive retries without progress (EAGAIN, EINTR, short reads)
};

enum class ReadStep { kComplete, kResubmit, kFailed };

// Retry cap: a device read that makes no progress this many times in a row fails
// instead of spinning forever (a real kernel never gets here; a broken one or a fault
// injector might).
inline constexpr int kMaxRetriesWithoutProgress = 1000;

// Applies one result (bytes read or -errno, already passed through the fault injector)
// of the submission described by `progress` to `read`. On kFailed, *error names the
// path and the byte range of the failed submission. `resubmit_alignment_bytes` is the
// O_DIRECT alignment (1 for buffered reads): a short read that ends mid-block is resumed
// from the aligned-down offset.
ReadStep AdvanceRead(const DeviceRead& read, int result, int64_t resubmit_alignment_bytes,
                     const std::string& path, ReadProgress* progress, Status* error);

// Test hooks: pretend the process-wide io_uring probe returned `result` (0 or -errno;
// 1 restores the real probe), and re-arm the once-per-process fallback warnings.
void OverrideIoUringProbeForTesting(int result);
void ResetFallbackWarningsForTesting();

}  // namespace seer::internal
