// BlockReader / DirectReader: batched random reads of (offset, length, destination)
// requests from one read-only file — the path every topology and feature read takes.
//
// DirectReader reads with O_DIRECT through io_uring at the file's alignment
// (statx stx_dio_offset_align when the kernel reports it, else the device's logical
// sector size, else 4096). Requests are arbitrary byte ranges into arbitrary
// destinations: the reader reads the aligned spans that cover them into its own aligned
// bounce buffers and copies out; requests falling in the same aligned block are read
// once. It keeps `queue_depth` reads in flight. Completion handling follows STYLE.md:
// -EAGAIN/-EINTR resubmit, short reads resubmit the remainder, 0 = unexpected EOF,
// other errors are remembered and reported after every in-flight read was reaped.
//
// Fallback: when io_uring is refused (seccomp: EPERM/ENOSYS) or O_DIRECT is refused
// (tmpfs: EINVAL), IoMode::kAuto falls back to a pread thread pool (buffered when
// O_DIRECT is refused) and prints one warning naming the cause to stderr.
//
// Thread safety: ReadBatch may be called from many threads at once (each thread gets
// its own ring; the pread pool is shared). ReadBatch blocks until every request has
// landed or an error was reported; on error the destination bytes are unspecified.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/status.h"

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

struct DirectReaderOptions {
  IoMode mode = IoMode::kAuto;
  int queue_depth = 64;        // reads kept in flight per calling thread
  int pread_threads = 16;      // pool size for the pread fallback
  bool direct = true;          // O_DIRECT; false = buffered (tests, tmpfs)
  int64_t max_merge_bytes = 1 << 20;  // adjacent blocks are merged up to this size
  std::shared_ptr<FaultInjector> faults;  // tests only
  bool quiet = false;          // suppress the fallback warning
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

// Opens `path` read-only. Errors name the path; with IoMode::kUring a refused
// io_uring is an error (kUnsupported) rather than a fallback.
Result<std::unique_ptr<BlockReader>> OpenDirectReader(const std::string& path,
                                                      const DirectReaderOptions& options = {});

// The alignment O_DIRECT needs for `path` (see the header comment for the rule).
int64_t DirectIoAlignment(int fd);

}  // namespace seer
