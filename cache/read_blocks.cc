#include "cache/read_blocks.h"

#include <algorithm>

namespace seer {

std::vector<int64_t> BlocksOfRows(const int64_t* rows, int64_t count, const ReadBlocks& geometry) {
  std::vector<int64_t> blocks;
  if (!geometry.enabled()) return blocks;
  blocks.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t last = geometry.LastBlock(rows[k]);
    for (int64_t b = geometry.FirstBlock(rows[k]); b <= last; ++b) blocks.push_back(b);
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

std::vector<int64_t> RowsInsideBlocks(const std::vector<int64_t>& blocks, const ReadBlocks& geometry) {
  std::vector<int64_t> rows;
  if (!geometry.enabled()) return rows;
  const int64_t r = geometry.row_bytes, bb = geometry.block_bytes;
  size_t k = 0;
  while (k < blocks.size()) {
    // A run of consecutive blocks [first, last] covers bytes [first*B, (last+1)*B).
    size_t end = k + 1;
    while (end < blocks.size() && blocks[end] == blocks[end - 1] + 1) ++end;
    const int64_t begin_byte = blocks[k] * bb, end_byte = (blocks[end - 1] + 1) * bb;
    const int64_t first_row = (begin_byte + r - 1) / r;
    const int64_t last_row = std::min(end_byte / r, geometry.num_rows);  // exclusive
    for (int64_t v = first_row; v < last_row; ++v) rows.push_back(v);
    k = end;
  }
  return rows;
}

}  // namespace seer
