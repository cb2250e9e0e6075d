// Validation of an on-disk dataset (what `seer check` runs): the manifest and file
// sizes, indptr (starts at 0, monotone, ends at num_edges), every index < num_nodes,
// labels in [-1, num_classes), split ids in range and disjoint across (and within)
// train/valid/test, the held-out edges of `seer split-edges` (edge_splits.h: none left in
// the topology); with deep = true also the xxh64 checksum of every listed file and
// every feature value finite (float dtypes; the first NaN/inf is named by node and
// feature).
// Streams every file in fixed-size chunks (1 MiB): memory is O(chunk + num_nodes/4) (2 bits
// per node for split disjointness: 250 MB at a billion nodes), whatever the file sizes,
// plus 24 B per held-out edge when the dataset has edge splits.
// With show_progress one progress line (bytes, rate, ETA) covers the scans. Blocking,
// single-threaded.
// The first problem found is returned as one line naming the file and the position
// (element index and byte offset).
//
// A typed dataset (DatasetManifest::typed()) is checked by the same rules, per node type
// and per relation: each relation's indptr (count_dst + 1 entries, from 0, never
// decreasing, to the relation's num_edges), every index < the source type's count, each
// type's labels in [-1, num_classes) and split ids in [0, count) and disjoint, every
// file's checksum (features with deep, and their values finite). Memory: 1 MiB chunks and
// 2 bits per node of the largest type with splits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/dataset/dataset.h"
#include "storage/dataset/small_files.h"
#include "storage/base/status.h"

namespace seer {

struct DatasetCheckOptions {
  bool deep = false;           // also verify checksums (reads every byte)
  bool show_progress = false;
};

// The small files' counts (SmallFilesSummary: labeled nodes, split sizes, max in-degree,
// bytes read, checksums verified), plus the manifest; bytes_read and checksums_verified
// also cover indices.bin and, with deep, every other file.
struct NodeTypeCheckSummary {
  std::string name;
  int64_t num_labeled = 0;  // labels != -1
  int64_t num_train = 0, num_valid = 0, num_test = 0;
};
struct RelationCheckSummary {
  std::string key;  // "paper__cites__paper"
  int64_t max_in_degree = 0;
};

struct DatasetCheckSummary : SmallFilesSummary {
  DatasetManifest manifest;
  // A typed dataset: one entry per node type and per relation, in manifest order (the
  // homogeneous counts above are then 0 but bytes_read and checksums_verified).
  std::vector<NodeTypeCheckSummary> node_types;
  std::vector<RelationCheckSummary> relations;
};

Result<DatasetCheckSummary> CheckDataset(const std::string& dir, const DatasetCheckOptions& options);

}  // namespace seer
