#include "kernels/belady_gpu_batches.h"

namespace seer::kernels {

void FlatBatches::Add(const int64_t* ids, int64_t n) {
  ids_.insert(ids_.end(), ids, ids + n);
  offsets_.push_back(static_cast<int64_t>(ids_.size()));
}

BeladyGpuInput FlatBatches::Input(const std::vector<int64_t>& initial_slots, const ScoreFill& fill) {
  BeladyGpuInput in;
  in.initial_slots = initial_slots.data();
  in.capacity = static_cast<int64_t>(initial_slots.size());
  in.ids = ids_.data();
  in.batch_offsets = offsets_.data();
  in.num_batches = num_batches();
  scores_.clear();
  initial_scores_.clear();
  if (!fill) return in;
  scores_.resize(ids_.size());
  if (!ids_.empty()) fill(ids_.data(), static_cast<int64_t>(ids_.size()), scores_.data());
  // Free slots (-1) are scored as id 0 and then zeroed: the planner never reads them.
  std::vector<int64_t> slot_ids = initial_slots;
  for (int64_t& v : slot_ids) v = v < 0 ? 0 : v;
  initial_scores_.resize(slot_ids.size());
  if (!slot_ids.empty()) fill(slot_ids.data(), static_cast<int64_t>(slot_ids.size()), initial_scores_.data());
  for (size_t s = 0; s < initial_slots.size(); ++s) {
    if (initial_slots[s] < 0) initial_scores_[s] = 0;
  }
  in.scores = scores_.data();
  in.initial_scores = initial_scores_.data();
  return in;
}

}  // namespace seer::kernels
