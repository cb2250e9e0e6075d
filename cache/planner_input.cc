#include "cache/planner_input.h"

#include <fmt/format.h>

namespace seer {

std::vector<IdSpan> MakeIdSpans(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<IdSpan> spans;
  spans.reserve(batches.size());
  for (const auto& b : batches) spans.push_back({b.data(), static_cast<int64_t>(b.size())});
  return spans;
}

Status VectorBatchIdSource::Rewind() {
  next_ = 0;
  return Status::Ok();
}

Result<IdSpan> VectorBatchIdSource::Next() {
  if (next_ >= batches_.size()) {
    return InvalidArgument(fmt::format("batch source: read past the last of {} batches", batches_.size()));
  }
  return batches_[next_++];
}

}  // namespace seer
