// Cheap integrity check of a dataset's small files, run at open by train, predict,
// sample, stats and ncache: one sequential pass over indptr.bin, labels.bin and the
// split files (train/valid/test.bin) that checks their content and their xxh64 against
// the manifest at the same time.
//
//   indptr.bin   starts at 0, never decreases, ends at num_edges
//   labels.bin   every label in [-1, num_classes)
//   splits       every id in [0, num_nodes), no id twice within or across the splits
//   checksums    each of these files hashes to the manifest's xxh64 (when it records one)
//
// Cost: reads 8(N+1) + 4N + 8(#split ids) bytes once (about 12 bytes per node) and keeps
// a 2-bit-per-node bitmap for the splits; hashing (xxh64) is far faster than the reads.
// The big files (indices.bin, features.bin) are not read: `seer check` streams
// indices.bin, `seer check --deep` hashes every file.
// The first problem is returned as one line naming the file and the element index and
// byte offset (or, for a checksum mismatch, the file and both checksums).
#pragma once

#include <cstdint>

#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

struct SmallFilesSummary {
  int64_t bytes_read = 0;
  int64_t num_labeled = 0;  // labels != -1
  int64_t num_train = 0, num_valid = 0, num_test = 0;
  int64_t max_in_degree = 0;
  int64_t checksums_verified = 0;  // files whose xxh64 matched the manifest
};

// show_progress: a progress line on stderr when the files are large (over 256 MiB in
// all); small datasets print nothing.
Result<SmallFilesSummary> ValidateSmallFiles(const Dataset& ds, bool show_progress = false);

}  // namespace seer
