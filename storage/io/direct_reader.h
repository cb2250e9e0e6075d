// DirectReader: the BlockReader (storage/io/block_reader.h) every topology and feature
// read takes — batched random reads of (offset, length, destination) requests from one
// read-only file.
//
// DirectReader reads with O_DIRECT through io_uring at the file's alignment
// (statx stx_dio_offset_align when the kernel reports it, else the device's logical
// sector size, else 4096). Requests are arbitrary byte ranges into arbitrary
// destinations: the reader reads the aligned spans that cover them into its own aligned
// bounce buffers and copies out; requests falling in the same aligned block are read
// once. It keeps `queue_depth` reads in flight. Completion handling follows docs/contributing.md:
// -EAGAIN/-EINTR resubmit, short reads resubmit the remainder, 0 = unexpected EOF,
// other errors are remembered and reported after every in-flight read was reaped.
//
// Fallback: when io_uring is refused (seccomp: EPERM/ENOSYS) or O_DIRECT is refused
// (tmpfs: EINVAL), IoMode::kAuto falls back to a pread thread pool (buffered when
// O_DIRECT is refused) and prints one warning naming the cause to stderr.
//
// Large batches are split over a few rings on helper threads (DirectReaderOptions::
// rings), one ring per thread, because one ring thread could not keep a virtio disk as
// busy as a pread pool on a small VM.
//
// Thread safety: ReadBatch may be called from many threads at once (each thread gets
// its own ring; the pread pool and the ring helper threads are shared). ReadBatch
// blocks until every request has landed or an error was reported; on error the
// destination bytes are unspecified.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer {

// Knobs, with the defaults measured best in bench/RESULTS.md ("Direct reader (issue 2)").
struct DirectReaderOptions {
  IoMode mode = IoMode::kAuto;
  int queue_depth = 64;        // reads kept in flight per ReadBatch call (all its rings)
  // io_uring only: a ReadBatch with at least 64 device reads per ring is split over
  // this many rings, each driven by its own thread (the caller runs one; the reader
  // starts the others on first use and keeps them until it is destroyed); the
  // queue_depth reads in flight are divided among them. 0 = one ring per CPU this process
  // may run on, at most 4. 1 = everything on the caller's ring. Only helpers idle at
  // the time are used: when other callers' batches keep them busy, a batch stays on its
  // caller's ring with the whole queue_depth. Errors from any ring stop the others;
  // ReadBatch returns after every ring has reaped all it submitted.
  int rings = 0;
  // io_uring only: submit each read with its own io_uring_enter as soon as its slot is
  // free, instead of all ready reads in one io_uring_submit_and_wait. About 30% more
  // CPU per read (~5 us instead of ~4 us on the bench VM), but the virtio disk served a
  // steady trickle of single requests faster than bursts: +10-30% IOPS at QD 16-64, no
  // change at QD 256. false = fewer syscalls, for a device where that is the limit.
  bool submit_per_read = true;
  int pread_threads = 16;      // pool size for the pread fallback
  bool direct = true;          // O_DIRECT; false = buffered (tests, tmpfs)
  int64_t max_merge_bytes = 1 << 20;  // adjacent blocks are merged up to this size
  std::shared_ptr<FaultInjector> faults;  // tests only
  bool quiet = false;          // suppress the fallback warning
};

// Opens `path` read-only. Errors name the path; with IoMode::kUring a refused
// io_uring is an error (kUnsupported) rather than a fallback.
Result<std::unique_ptr<BlockReader>> OpenDirectReader(const std::string& path,
                                                      const DirectReaderOptions& options = {});

// The alignment O_DIRECT needs for `path` (see the header comment for the rule).
int64_t DirectIoAlignment(int fd);

}  // namespace seer
