#include "cache/belady_gpu_plan_internal.h"

#include <cstring>
#include <string>

#include "kernels/belady_gpu.h"
#include "storage/base/parallel.h"

namespace seer::belady_internal {

Result<BeladyPlan> PlanBeladyOnGpu(const std::vector<int64_t>& initial_slots,
                                   const std::vector<IdSpan>& batches,
                                   const BeladyPlannerOptions& options) {
  // Access g belongs to batch b when offsets[b] <= g < offsets[b + 1].
  std::vector<int64_t> offsets(batches.size() + 1, 0);
  for (size_t b = 0; b < batches.size(); ++b) offsets[b + 1] = offsets[b] + batches[b].size;
  std::vector<int64_t> flat(static_cast<size_t>(offsets.back()));
  ParallelFor(size_t{0}, batches.size(), [&](size_t b) {
    if (batches[b].size > 0) {
      std::memcpy(flat.data() + offsets[b], batches[b].data,
                  static_cast<size_t>(batches[b].size) * sizeof(int64_t));
    }
  });
  for (int64_t v : flat) {
    if (v < 0) return InvalidArgument("Belady planner: negative node id in a batch");
  }
  // initial_slots, capacity, ids, batch_offsets, num_batches (scores below).
  kernels::BeladyGpuInput in{initial_slots.data(), static_cast<int64_t>(initial_slots.size()), flat.data(),
                             offsets.data(), static_cast<int64_t>(batches.size())};
  // The tie rule's scores, per access and per slot of C0 (free slots: 0, unused).
  std::vector<uint32_t> scores, initial_scores;
  if (options.node_scores) {
    scores.assign(flat.size(), 0);
    if (!flat.empty()) options.node_scores(flat.data(), static_cast<int64_t>(flat.size()), scores.data());
    std::vector<int64_t> slot_ids = initial_slots;
    for (int64_t& v : slot_ids) v = v == kFreeSlot ? 0 : v;
    initial_scores.assign(slot_ids.size(), 0);
    if (!slot_ids.empty()) {
      options.node_scores(slot_ids.data(), static_cast<int64_t>(slot_ids.size()), initial_scores.data());
    }
    in.scores = scores.data();
    in.initial_scores = initial_scores.data();
  }
  kernels::BeladyGpuOutput out;
  std::string message;
  switch (kernels::PlanBeladyGpu(in, &out, &message)) {
    case kernels::GpuPlanCode::kOk: break;
    case kernels::GpuPlanCode::kUnsupported:
      return Status(StatusCode::kUnsupported, "GPU planner: " + message);
    case kernels::GpuPlanCode::kInvalidArgument:
      return InvalidArgument("Belady planner (GPU): " + message);
    case kernels::GpuPlanCode::kError:
      return Status(StatusCode::kIoError, "GPU planner: " + message);
  }
  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  for (int64_t i = 0; i < in.num_batches; ++i) {
    Changeset cs;
    cs.num_accesses = batches[static_cast<size_t>(i)].size;
    cs.num_misses = out.num_misses[static_cast<size_t>(i)];
    const auto ib = out.in_offsets[static_cast<size_t>(i)], ie = out.in_offsets[static_cast<size_t>(i) + 1];
    const auto ob = out.out_offsets[static_cast<size_t>(i)], oe = out.out_offsets[static_cast<size_t>(i) + 1];
    cs.in_ids.assign(out.in_ids.begin() + ib, out.in_ids.begin() + ie);
    cs.in_positions.assign(out.in_positions.begin() + ib, out.in_positions.begin() + ie);
    cs.in_slots.assign(out.in_slots.begin() + ib, out.in_slots.begin() + ie);
    cs.out_ids.assign(out.out_ids.begin() + ob, out.out_ids.begin() + oe);
    cs.out_slots.assign(out.out_slots.begin() + ob, out.out_slots.begin() + oe);
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.final_slots = std::move(out.final_slots);
  plan.device_used = PlannerDevice::kGpu;
  return plan;
}

}  // namespace seer::belady_internal
