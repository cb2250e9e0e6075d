// MmapReader: a BlockReader (storage/io/block_reader.h) over a read-only memory mapping —
// the I/O path of the conventional pipeline (`seer train --io mmap`, the PyG+ baseline
// of Ginex §5): every read is a memcpy out of the mapping, so data comes through the
// kernel page cache, with read-ahead turned off by madvise(MADV_RANDOM) as Ginex did
// for PyG+. Seer keeps no application cache on this path; the page cache is bounded
// only by the machine (or the cgroup the run is in: bench/e2e.sh sets one).
//
// Stats: `requests` is exact. `device_reads` / `device_bytes` are the calling thread's
// major page faults during the call (getrusage RUSAGE_THREAD) × the page size — the
// pages the kernel had to read from the device; pages already in the page cache cost
// nothing. mode() reports kPread (buffered, synchronous) and direct() false.
//
// Thread safety: ReadBatch may run on many threads at once (the mapping is read-only).
// A request beyond the end of the file is kUnexpectedEof naming the path and offset.
// A file truncated while mapped is kUnexpectedEof too, naming the path, the offset of the
// missing page and the file's size now: the first OpenMmapReader installs a process-wide
// SIGBUS handler that turns a bus error inside ReadBatch's copy into that error (a bus
// error anywhere else still ends the process, through the previous disposition).
#pragma once

#include <memory>
#include <string>

#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer {

// Maps `path` read-only (PROT_READ, MAP_SHARED) and advises MADV_RANDOM. Errors name
// the path. An empty file maps nothing; every non-empty read is then out of range.
Result<std::unique_ptr<BlockReader>> OpenMmapReader(const std::string& path);

}  // namespace seer
