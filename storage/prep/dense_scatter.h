// DenseScatter: int64 values addressed by a dense index [0, count), set in any order and
// written out in index order: the inverse of a permutation without sorting it (what
// `seer prep --remap-ids` needs to put the dense ids back in edge order, and the
// --node-ids join to list the node of every row). Linear time, within `memory_bytes`:
//   count × 8 bytes fit  one in-memory table, written out by WriteTo;
//   otherwise           the indices are cut into ranges whose table fits half the
//                        memory; Set appends (index, value) to its range's bucket file
//                        (64 KiB buffer each), and WriteTo loads one range at a time.
// Owns its bucket files (in `dir`, removed by WriteTo or the destructor). Not
// thread-safe; errors name the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/base/status.h"
#include "storage/prep/record_sorter.h"

namespace seer {

class DenseScatter {
 public:
  // kResourceExhausted when even one bucket buffer per range does not fit the memory.
  // Slots never set read `unset`.
  static Result<DenseScatter> Create(const std::string& dir, const std::string& name, int64_t count,
                                     int64_t memory_bytes, int64_t unset = -1);
  DenseScatter(DenseScatter&&) noexcept = default;
  DenseScatter& operator=(DenseScatter&&) noexcept = default;
  ~DenseScatter();

  // index in [0, count), each set at most once (a second Set of an index overwrites it).
  Status Set(int64_t index, int64_t value);
  // Every value in index order as int64; then the buckets are gone.
  Status WriteTo(SequentialWriter& out);
  int64_t num_buckets() const { return static_cast<int64_t>(bucket_paths_.size()); }

 private:
  struct Entry {
    int64_t index, value;
  };
  static constexpr int kBatch = 32;

  DenseScatter() = default;
  void RemoveBuckets();
  void Store(int64_t slot, int64_t value);  // table_[slot] = value, batched
  void FlushPending();

  int64_t count_ = 0, unset_ = -1;
  int64_t range_ = 0;  // indices per bucket (count_ when in memory)
  std::vector<int64_t> table_;  // in memory: the whole table; else one range at a time
  Entry pending_[kBatch];       // stores prefetched, not yet done
  int pending_count_ = 0;
  std::vector<std::string> bucket_paths_;
  std::vector<SequentialWriter> buckets_;
};

}  // namespace seer
