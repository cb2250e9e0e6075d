#include "inspector/trace.h"

namespace seer {

bool BatchTrace::operator==(const BatchTrace& other) const {
  if (epoch != other.epoch || batch_index != other.batch_index ||
      num_seeds != other.num_seeds || node_ids != other.node_ids ||
      blocks.size() != other.blocks.size() || !(link == other.link)) {
    return false;
  }
  for (size_t l = 0; l < blocks.size(); ++l) {
    const LayerBlock& a = blocks[l];
    const LayerBlock& b = other.blocks[l];
    if (a.num_dst != b.num_dst || a.num_src != b.num_src || a.row_ptr != b.row_ptr ||
        a.col_idx != b.col_idx || a.edge_rel != b.edge_rel) {
      return false;
    }
  }
  return true;
}

}  // namespace seer
