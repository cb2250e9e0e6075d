// What a cache planner reads (cache/belady_planner.h, cache/policies.h): the cache state
// C (slot -> node id, kFreeSlot = empty; its length is the capacity K in rows) and a
// superbatch's batches, each the batch's unique node ids — borrowed as IdSpans, or read
// one batch at a time from a BatchIdSource (e.g. a trace file on the runtime directory,
// inspector/trace_stream.h).
//
// Ownership: an IdSpan borrows its ids; VectorBatchIdSource borrows the spans' ids (they
// must outlive it). Thread-safety: a BatchIdSource is read by one planner at a time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "storage/base/status.h"

namespace seer {

inline constexpr int64_t kFreeSlot = -1;

// An empty cache of `capacity_rows` slots.
inline std::vector<int64_t> EmptyCacheState(int64_t capacity_rows) {
  return std::vector<int64_t>(static_cast<size_t>(capacity_rows), kFreeSlot);
}

// A batch's unique node ids, borrowed (e.g. BatchTrace::node_ids).
struct IdSpan {
  const int64_t* data = nullptr;
  int64_t size = 0;
};
std::vector<IdSpan> MakeIdSpans(const std::vector<std::vector<int64_t>>& batches);

// A superbatch's per-batch unique ids, front to back, read one batch at a time (e.g.
// from a trace on the runtime directory). The planner may read the batches twice
// (Rewind), so a source must give the same ids each pass.
class BatchIdSource {
 public:
  virtual ~BatchIdSource() = default;
  virtual int64_t num_batches() const = 0;
  virtual Status Rewind() = 0;        // back to batch 0
  virtual Result<IdSpan> Next() = 0;  // the next batch's ids; valid until the next call
};

// A BatchIdSource over spans held in RAM (borrowed; they must outlive the source).
// Reading past the last batch is kInvalidArgument.
class VectorBatchIdSource : public BatchIdSource {
 public:
  explicit VectorBatchIdSource(std::vector<IdSpan> batches) : batches_(std::move(batches)) {}
  int64_t num_batches() const override { return static_cast<int64_t>(batches_.size()); }
  Status Rewind() override;
  Result<IdSpan> Next() override;

 private:
  std::vector<IdSpan> batches_;
  size_t next_ = 0;
};

}  // namespace seer
