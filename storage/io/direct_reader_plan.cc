#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "storage/base/aligned_buffer.h"
#include "storage/io/direct_reader_internal.h"

namespace seer::internal {

void BuildReadPlan(const ReadRequest* requests, size_t count, int64_t alignment_bytes,
                   int64_t max_merge_bytes, ReadPlan* plan) {
  const int64_t align = alignment_bytes;
  // One device read stays well below 2 GiB: results travel as int (CQE res, -errno).
  constexpr int64_t kMaxDeviceReadBytes = int64_t{1} << 30;
  const int64_t chunk =
      std::max(align, AlignDown(std::min(max_merge_bytes, kMaxDeviceReadBytes), align));
  plan->reads.clear();
  plan->pieces.clear();
  plan->max_read_bytes = 0;
  std::vector<uint32_t>& order = plan->order;
  order.clear();
  for (size_t i = 0; i < count; ++i) {
    if (requests[i].length_bytes > 0) order.push_back(static_cast<uint32_t>(i));
  }
  std::sort(order.begin(), order.end(), [requests](uint32_t a, uint32_t b) {
    if (requests[a].offset_bytes != requests[b].offset_bytes) {
      return requests[a].offset_bytes < requests[b].offset_bytes;
    }
    return a < b;
  });

  // Sweep in offset order. Invariant: reads are disjoint, sorted, and their union covers
  // every block of every request seen so far. Since requests come in increasing start
  // offset, a position of the current request is either inside an existing read (found
  // at the back, or by binary search when an earlier long request was split) or at/after
  // the end of the last read.
  std::vector<uint32_t>& piece_read = plan->piece_read;
  std::vector<CopyPiece>& unsorted = plan->unsorted_pieces;
  piece_read.clear();
  unsorted.clear();
  std::vector<DeviceRead>& reads = plan->reads;
  for (uint32_t index : order) {
    const ReadRequest& request = requests[index];
    int64_t pos = request.offset_bytes;
    const int64_t end = request.offset_bytes + request.length_bytes;
    while (pos < end) {
      const int64_t block = AlignDown(pos, align);
      size_t read_index = reads.size();
      if (!reads.empty()) {
        DeviceRead& last = reads.back();
        const int64_t last_end = last.offset_bytes + last.length_bytes;
        if (block >= last.offset_bytes && block < last_end) {
          read_index = reads.size() - 1;
        } else if (block < last.offset_bytes) {
          auto it = std::upper_bound(
              reads.begin(), reads.end(), block,
              [](int64_t b, const DeviceRead& r) { return b < r.offset_bytes; });
          if (it == reads.begin()) throw std::logic_error("BuildReadPlan: uncovered block");
          --it;
          if (block >= it->offset_bytes + it->length_bytes) {
            throw std::logic_error("BuildReadPlan: uncovered block");
          }
          read_index = static_cast<size_t>(it - reads.begin());
        } else if (block == last_end && last.length_bytes < chunk) {
          // Adjacent block: grow the last read up to the merge limit.
          last.length_bytes = std::min(AlignUp(end, align), last.offset_bytes + chunk) -
                              last.offset_bytes;
          read_index = reads.size() - 1;
        }
      }
      if (read_index == reads.size()) {
        DeviceRead read;
        read.offset_bytes = block;
        read.length_bytes = std::min(AlignUp(end, align), block + chunk) - block;
        reads.push_back(read);
      }
      DeviceRead& read = reads[read_index];
      const int64_t piece_end = std::min(end, read.offset_bytes + read.length_bytes);
      CopyPiece piece;
      piece.file_offset_bytes = pos;
      piece.length_bytes = piece_end - pos;
      piece.dest = static_cast<char*>(request.dest) + (pos - request.offset_bytes);
      unsorted.push_back(piece);
      piece_read.push_back(static_cast<uint32_t>(read_index));
      read.needed_end_bytes = std::max(read.needed_end_bytes, piece_end);
      pos = piece_end;
    }
  }
  if (unsorted.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("BuildReadPlan: too many pieces in one batch");
  }

  // Group pieces by read (counting sort, stable).
  for (size_t i = 0; i < piece_read.size(); ++i) reads[piece_read[i]].num_pieces++;
  uint32_t running = 0;
  for (DeviceRead& read : reads) {
    read.first_piece = running;
    running += read.num_pieces;
    read.num_pieces = 0;
    plan->max_read_bytes = std::max(plan->max_read_bytes, read.length_bytes);
  }
  plan->pieces.resize(unsorted.size());
  for (size_t i = 0; i < unsorted.size(); ++i) {
    DeviceRead& read = reads[piece_read[i]];
    plan->pieces[read.first_piece + read.num_pieces++] = unsorted[i];
  }
}

void CopyOut(const ReadPlan& plan, const DeviceRead& read, const char* buffer) {
  for (uint32_t i = 0; i < read.num_pieces; ++i) {
    const CopyPiece& piece = plan.pieces[read.first_piece + i];
    std::memcpy(piece.dest, buffer + (piece.file_offset_bytes - read.offset_bytes),
                static_cast<size_t>(piece.length_bytes));
  }
}

ReadStep AdvanceRead(const DeviceRead& read, int result, int64_t resubmit_alignment_bytes,
                     const std::string& path, ReadProgress* progress, Status* error) {
  const int64_t submit_offset = read.offset_bytes + progress->done_bytes;
  const int64_t submit_length = read.length_bytes - progress->done_bytes;
  if (result == -EAGAIN || result == -EINTR) {
    if (++progress->retries > kMaxRetriesWithoutProgress) {
      *error = ErrnoStatus(-result, "read (gave up after " +
                                        std::to_string(kMaxRetriesWithoutProgress) +
                                        " retries)",
                           path, submit_offset, submit_length);
      return ReadStep::kFailed;
    }
    return ReadStep::kResubmit;
  }
  if (result < 0) {
    *error = ErrnoStatus(-result, "read", path, submit_offset, submit_length);
    return ReadStep::kFailed;
  }
  if (result == 0) {
    if (submit_offset >= read.needed_end_bytes) return ReadStep::kComplete;
    *error = Status(StatusCode::kUnexpectedEof,
                    "read " + path + " at offset " + std::to_string(submit_offset) + " (+" +
                        std::to_string(read.needed_end_bytes - submit_offset) +
                        " bytes): unexpected end of file");
    return ReadStep::kFailed;
  }
  const int64_t got = std::min<int64_t>(result, submit_length);
  const int64_t done = progress->done_bytes + got;
  if (read.offset_bytes + done >= read.needed_end_bytes) {
    progress->done_bytes = done;
    return ReadStep::kComplete;
  }
  // Short read that stops before the bytes we need: resume from the aligned-down
  // position (O_DIRECT needs an aligned offset, length and buffer; a short read ending
  // mid-block re-reads that block's head).
  const int64_t resume = AlignDown(done, resubmit_alignment_bytes);
  if (resume > progress->done_bytes) {
    progress->retries = 0;
  } else if (++progress->retries > kMaxRetriesWithoutProgress) {
    *error = Status(StatusCode::kIoError,
                    "read " + path + " at offset " + std::to_string(submit_offset) + " (+" +
                        std::to_string(submit_length) + " bytes): no progress after " +
                        std::to_string(kMaxRetriesWithoutProgress) + " short reads");
    return ReadStep::kFailed;
  }
  progress->done_bytes = resume;
  return ReadStep::kResubmit;
}

}  // namespace seer::internal
