// The split files of `seer prep` (train.bin, valid.bin, test.bin: int64 node ids), from
// one of two kinds of source:
//   given   per split a .npy array (node ids; with NodeRows, original ids or rows mapped
//           to nodes), a NodeTable id list (storage/prep/node_tables.h), or an OGB
//           split/<scheme>/*.csv: every entry checked by SplitRegistry (in range, in
//           one split only), errors naming the file and element or line;
//   drawn   by fraction among the labeled nodes (storage/prep/node_split.h), fed the
//           labels in node order as they are written.
// Not thread-safe; the DatasetWriter's files are appended to on the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"
#include "storage/prep/node_rows.h"
#include "storage/prep/node_split.h"
#include "storage/prep/node_tables.h"
#include "storage/prep/npy.h"

namespace seer {

struct GivenSplit {
  const NpyFile* npy = nullptr;
  const NodeTable* table = nullptr;  // a finished id list
  std::string ogb_csv;
  bool empty() const { return npy == nullptr && table == nullptr && ogb_csv.empty(); }
};

// Writes the given splits (train, valid, test; empty ones get no file) and their sizes
// into counts[0..2]. node_rows (may be null) maps .npy entries to nodes; chunk_values
// bounds the .npy reads.
Status WriteGivenSplits(const GivenSplit (&splits)[3], const NodeRows* node_rows, int64_t num_nodes,
                        int64_t chunk_values, DatasetWriter& writer, int64_t counts[3]);

class DrawnSplits {
 public:
  // Opens the three files (all written, empty ones too).
  static Result<DrawnSplits> Open(DatasetWriter& writer, const SplitFractions& fractions, uint64_t seed);
  // The labels of nodes [first_node, first_node + n) (-1: unlabeled, in no split).
  Status Add(int64_t first_node, const int32_t* labels, int64_t n);
  int64_t count(int split) const { return counts_[split]; }  // 0 train, 1 valid, 2 test

 private:
  DrawnSplits() = default;
  SplitFractions fractions_;
  uint64_t seed_ = 0;
  AtomicFileWriter* files_[3] = {nullptr, nullptr, nullptr};
  std::vector<int64_t> ids_[3];
  int64_t counts_[3] = {0, 0, 0};
};

}  // namespace seer
