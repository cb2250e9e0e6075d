// A superbatch laid out for the Thrust Belady planner (kernels/belady_gpu.h), for callers
// that hold its batches as separate arrays (planner_bench, the planner tests): the batches
// back to back with their offsets, and the tie rule's scores per access and per slot of
// C0, owned here; Input() points a BeladyGpuInput into them. And the way back:
// CopyBatchChanges, one batch's entries of a BeladyGpuOutput as a changeset.
// (cache/belady_gpu_plan.cc, the planner's own dispatch, flattens in parallel and checks
// the ids as it goes.) Not thread-safe; an Input() lives as long as this object and the
// initial slots it was made from, until the next Add() or Input().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/belady_gpu.h"

namespace seer::kernels {

class FlatBatches {
 public:
  // Writes the scores of ids[0..n) to scores[0..n) (cache/node_scores.h's NodeScoreFn).
  using ScoreFill = std::function<void(const int64_t* ids, int64_t n, uint32_t* scores)>;

  // Appends one batch (its ids are copied).
  void Add(const int64_t* ids, int64_t n);

  // The planner's input for C0 = `initial_slots` (-1 = free) over the batches added so
  // far. With `fill`, the scores of every access and of every occupied slot (a free
  // slot's is 0); without, every score is 0 (null score arrays).
  BeladyGpuInput Input(const std::vector<int64_t>& initial_slots, const ScoreFill& fill = {});

  const std::vector<int64_t>& ids() const { return ids_; }
  int64_t num_batches() const { return static_cast<int64_t>(offsets_.size()) - 1; }

 private:
  std::vector<int64_t> ids_;
  std::vector<int64_t> offsets_{0};
  std::vector<uint32_t> scores_, initial_scores_;
};

// Batch i's misses and inserted/evicted entries of `out`, into `cs`: any struct with the
// fields of cache/changeset_store.h's Changeset (kernels sits below cache and does not
// name it). num_accesses is left to the caller.
template <typename ChangesetT>
void CopyBatchChanges(const BeladyGpuOutput& out, size_t i, ChangesetT* cs) {
  cs->num_misses = out.num_misses[i];
  const auto ib = out.in_offsets[i], ie = out.in_offsets[i + 1];
  const auto ob = out.out_offsets[i], oe = out.out_offsets[i + 1];
  cs->in_ids.assign(out.in_ids.begin() + ib, out.in_ids.begin() + ie);
  cs->in_positions.assign(out.in_positions.begin() + ib, out.in_positions.begin() + ie);
  cs->in_slots.assign(out.in_slots.begin() + ib, out.in_slots.begin() + ie);
  cs->out_ids.assign(out.out_ids.begin() + ob, out.out_ids.begin() + oe);
  cs->out_slots.assign(out.out_slots.begin() + ob, out.out_slots.begin() + oe);
  if (!out.block_offsets.empty()) {  // the block rule's admitted free rows
    const auto bb = out.block_offsets[i], be = out.block_offsets[i + 1];
    cs->block_ids.assign(out.block_ids.begin() + bb, out.block_ids.begin() + be);
    cs->block_slots.assign(out.block_slots.begin() + bb, out.block_slots.begin() + be);
  }
}

}  // namespace seer::kernels
