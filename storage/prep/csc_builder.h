// External-memory CSC construction: turns a stream of directed edges src->dst (in any
// order, possibly larger than RAM) into indptr.bin (int64[num_nodes+1]) and indices.bin
// (uint32|int64[num_edges]) where indices[indptr[v] .. indptr[v+1]) are the in-neighbors
// of v, sorted ascending (so the output is deterministic whatever the input order).
//
// How (Ginex-style, three sequential passes):
//   1. count in-degrees (the per-node table, 8 B/node, stays in RAM);
//   2. cut the node range into destination partitions whose edges fit the memory budget,
//      and append every edge to its partition's spill file (in a private temp directory
//      under `spill_dir`, removed at the end) — skipped when everything fits in one;
//   3. load one partition at a time, place each source at its destination's slot
//      (counting sort), sort each neighbor list, optionally drop duplicates, and append
//      to indices.bin. indptr.bin is written last from the (deduplicated) degrees.
// Memory: the degree table + the batch buffers (edges read at a time, the source's own
// read buffer, two spill scatter buffers; sized from the budget, at most a quarter of what
// the table leaves) + partition edges × index bytes; a single node whose in-degree alone
// exceeds the budget gets its own partition, which then exceeds the budget (reported in
// CscBuildStats).
// Parallel (TBB, in the caller's task arena: wrap the call in a tbb::task_arena to bound
// the threads): the source parses a batch with all threads; degrees are counted and edges
// placed by destination owners (from 3 threads on each thread owns a node range, every
// batch is routed once into per-owner groups, so each owner reads only its edges and no
// atomics are needed; with 1 or 2 threads one owner does it, with prefetching, since the
// routing pass costs what a second owner saves), edges bucketed by slices; neighbor lists
// sorted in parallel (insertion sort for short lists) and appended in segments, each
// segment's write overlapping the next one's sort; spill and indices writes run on one
// background thread, overlapped with the next batch or partition, and the next spill
// chunk is read while one is placed. The output does not depend on the number of threads
// (lists are sorted).
// indices.bin is written with O_DIRECT straight from the page-aligned partition buffers
// where the file system allows it (AtomicFileWriter::EnableDirect; whole blocks, the
// partition's last partial block and any later partition buffered).
// Temporary files (partition spills; a costly source's staged edges) are written and read
// with O_DIRECT where the file system allows it (storage/prep/direct_file.h), buffered
// where it does not (tmpfs) or where the alignment padding (16 KiB per partition) would
// take over an eighth of the budget. A source that is CostlyToReread (text) is read once:
// pass 1 stages its edges as uint32 pairs (8 B/edge of disk in the spill directory, while
// every id fits 32 bits) and the later pass reads those.
// Blocks on file I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/base/atomic_file.h"
#include "storage/dataset/dataset.h"
#include "storage/base/status.h"

namespace seer {

struct Edge {
  int64_t src = 0;
  int64_t dst = 0;
};

// A restartable stream of edges. The builder reads it twice (Rewind() in between), or
// once when CostlyToReread() and every id fits 32 bits.
// Implementations validate ids themselves (non-negative; < num_nodes() when known)
// so errors can name the file and the position (line, byte offset).
class EdgeSource {
 public:
  virtual ~EdgeSource() = default;
  // Starts again from the first edge.
  [[nodiscard]] virtual Status Rewind() = 0;
  // Fills up to max_edges edges; returns how many, 0 at the end of the stream.
  virtual Result<int64_t> Read(Edge* out, int64_t max_edges) = 0;
  // Number of nodes when the source knows it, else -1 (then 1 + the largest id is used).
  virtual int64_t num_nodes() const { return -1; }
  // Expected number of edges for progress lines, -1 when unknown.
  virtual int64_t num_edges_hint() const { return -1; }
  // Name for messages ("edges.txt", "R-MAT generator").
  virtual std::string name() const = 0;
  // Bytes the source itself holds to hand out `max_edges` edges per Read (its read or
  // parse buffer), so the builder can keep the total within the budget.
  virtual int64_t BufferBytes(int64_t max_edges) const { return max_edges * 0; }
  // True when reading the edges again costs much more than reading 8 bytes per edge
  // back from a file (text: parsing): the builder then stages pass 1's edges as uint32
  // pairs in its spill directory (while every id fits 32 bits) and reads those instead.
  virtual bool CostlyToReread() const { return false; }
  // Frees what the source holds for reading (its buffers) until the next Rewind/Read;
  // the builder calls it when it will not read the source again.
  virtual void ReleaseBuffers() {}
};

struct CscBuildOptions {
  int64_t num_nodes = -1;             // -1: source's num_nodes(), else 1 + largest id
  int64_t min_num_nodes = 0;          // with num_nodes -1: at least this many nodes
  bool undirected = false;            // also add dst->src for every edge
  bool dedup = false;                 // drop repeated (src, dst) pairs
  bool drop_self_loops = false;       // drop v->v
  std::optional<IndexDtype> index_dtype;  // nullopt: uint32 when num_nodes < 2^32
  int64_t memory_budget_bytes = int64_t{512} << 20;
  // What each output writer buffers at most (AtomicFileWriter: 1 MiB); charged against
  // the budget as min(this, the file's size) for indptr and indices.
  int64_t writer_buffer_bytes = 0;
  // Edges per segment of sorted lists appended at a time (each segment's write overlaps
  // the next one's sort); tests make it small to cross many segment boundaries.
  int64_t write_segment_edges = int64_t{1} << 21;
  std::string spill_dir = ".";        // a private temp dir is made (and removed) inside
  bool show_progress = false;
};

struct CscBuildStats {
  int64_t num_nodes = 0;
  int64_t num_edges = 0;              // edges written to indices.bin
  int64_t input_edges = 0;            // edges read from the source
  int64_t self_loops_dropped = 0;
  int64_t duplicates_dropped = 0;
  int64_t num_partitions = 0;
  int64_t largest_partition_edges = 0;
  int64_t spill_bytes_written = 0;
  bool spill_direct = false;          // spill files opened with O_DIRECT (not refused)
  bool staged_edges = false;          // later passes read pass 1's staged edges (CostlyToReread)
  bool indices_direct = false;        // indices.bin written with O_DIRECT (whole blocks)
  IndexDtype index_dtype = IndexDtype::kUint32;
};

// Writes indptr and indices through the given writers (the caller closes/commits them).
// Errors: the source's errors as-is; an id >= num_nodes (kInvalidArgument naming the
// source and edge number); a budget that cannot hold the degree table
// (kResourceExhausted); uint32 forced with num_nodes >= 2^32 (kInvalidArgument);
// spill I/O errors with the path.
Result<CscBuildStats> BuildCsc(EdgeSource& source, const CscBuildOptions& options,
                               AtomicFileWriter& indptr_out, AtomicFileWriter& indices_out);

}  // namespace seer
