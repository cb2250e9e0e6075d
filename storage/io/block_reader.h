// BlockReader: the seam every topology and feature read goes through — batched random
// reads of (offset, length, destination) requests from one read-only file. Callers
// (sampler, executor, stats) depend on this interface; the implementations are
// DirectReader (storage/io/direct_reader.h: O_DIRECT io_uring with a pread fallback)
// and MmapReader (storage/io/mmap_reader.h).
//
// ReadBatch blocks until every request has landed or an error was reported; on error
// the destination bytes are unspecified. Implementations say whether ReadBatch may run
// on many threads at once (both of ours allow it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

struct ReadRequest {
  int64_t offset_bytes = 0;
  int64_t length_bytes = 0;
  void* dest = nullptr;
};

// What a ReadBatch call cost on the device: aligned reads issued (after merging) and
// bytes transferred from the device (aligned spans, so >= requested bytes).
struct ReadStats {
  int64_t requests = 0;       // ReadRequests asked for
  int64_t device_reads = 0;   // aligned reads issued after same-block merging
  int64_t device_bytes = 0;   // bytes the device transferred
  void Add(const ReadStats& other) {
    requests += other.requests;
    device_reads += other.device_reads;
    device_bytes += other.device_bytes;
  }
};

enum class IoMode { kAuto, kUring, kPread };
inline constexpr NameValue<IoMode> kIoModeNames[] = {
    {"auto", IoMode::kAuto}, {"uring", IoMode::kUring}, {"pread", IoMode::kPread}};
// Parses "auto" | "uring" | "pread"; anything else is kInvalidArgument naming the value.
Result<IoMode> ParseIoMode(const std::string& text);
const char* IoModeName(IoMode mode);

// Fault-injection seam used by tests: consulted for every completed device read
// (io_uring CQE or pread return value). It may replace the result: a smaller positive
// value (short read), -EAGAIN, -EINTR, -EIO, 0 (EOF). The default passes it through.
class FaultInjector {
 public:
  virtual ~FaultInjector() = default;
  // offset/length: the aligned device read; result: what the kernel returned.
  virtual int FilterResult(int64_t offset_bytes, int64_t length_bytes, int result) = 0;
};

// The seam: callers (sampler, executor, stats) depend on this interface.
class BlockReader {
 public:
  virtual ~BlockReader() = default;
  virtual Status ReadBatch(const ReadRequest* requests, size_t count,
                           ReadStats* stats = nullptr) = 0;
  Status ReadBatch(const std::vector<ReadRequest>& requests, ReadStats* stats = nullptr) {
    return ReadBatch(requests.data(), requests.size(), stats);
  }
  virtual const std::string& path() const = 0;
  virtual int64_t file_size_bytes() const = 0;
  virtual int64_t alignment_bytes() const = 0;
  // The backend actually in use after fallback: kUring or kPread.
  virtual IoMode mode() const = 0;
  virtual bool direct() const = 0;
};

}  // namespace seer
