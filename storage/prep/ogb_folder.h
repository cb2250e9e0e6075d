// The files of an OGB node-property folder, as `seer prep --ogb DIR` reads it:
//   raw/edge.csv[.gz]  raw/num-node-list.csv[.gz] (optional)  raw/node-feat.csv[.gz]
//   raw/node-label.csv[.gz]  split/<scheme>/{train,valid,test}.csv[.gz]
// (".gz" preferred when both exist). Only finds the files (and reads the node count);
// storage/prep/dataset_prep.cc converts them. Pure function of the folder; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "storage/base/status.h"

namespace seer {

struct OgbFolder {
  std::string edges;               // raw/edge.csv[.gz]
  std::string features, labels;    // "" when absent
  std::string splits[3];           // train, valid, test of the scheme; "" when absent
  int64_t num_nodes = -1;          // raw/num-node-list.csv's first line, -1 when absent or not read
};

// `scheme` = split/<scheme> ("" = the only one present; several is an error naming them).
// read_num_nodes: read raw/num-node-list.csv (false when the count is given otherwise).
// Errors: a missing edge.csv (kNotFound), a missing scheme, a bad node count (file:1).
Result<OgbFolder> ResolveOgbFolder(const std::string& dir, const std::string& scheme, bool read_num_nodes);

}  // namespace seer
