// ReadBlocks: the geometry of block-granular feature reads (`--read-block B`,
// docs/design.md "Block-granular reads"). features.bin holds row v at bytes
// [v*row_bytes, (v+1)*row_bytes); block b is bytes [b*B, (b+1)*B). A row miss forces
// the read of every block its bytes touch (a row straddling a boundary = both blocks);
// the misses of one batch that touch the same block share one read. The rows lying
// wholly inside the blocks a batch reads are that read's "free" rows: the Belady
// planner may admit them to the cache (cache/belady_planner.h). block_bytes 0 = off
// (per-row reads, the default): no free rows, the planner's plans are unchanged.
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace seer {

struct ReadBlocks {
  int64_t row_bytes = 0;    // feature_row_bytes of the dataset
  int64_t block_bytes = 0;  // B; 0 = off
  int64_t num_rows = 0;     // rows in features.bin (free rows are < num_rows)

  bool enabled() const { return block_bytes > 0 && row_bytes > 0; }
  int64_t FirstBlock(int64_t row) const { return row * row_bytes / block_bytes; }
  int64_t LastBlock(int64_t row) const { return ((row + 1) * row_bytes - 1) / block_bytes; }
};

// The distinct blocks touched by `rows` (any order, repeats allowed), ascending.
std::vector<int64_t> BlocksOfRows(const int64_t* rows, int64_t count, const ReadBlocks& geometry);

// The rows (< num_rows) whose bytes lie wholly inside the union of `blocks` (ascending,
// distinct), ascending.
std::vector<int64_t> RowsInsideBlocks(const std::vector<int64_t>& blocks, const ReadBlocks& geometry);

}  // namespace seer
