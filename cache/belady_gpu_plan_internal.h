// PlanBelady's device path (internal to cache/): the batches flattened into the Thrust
// planner's input (kernels/belady_gpu.h: ids back to back, batch offsets, the tie rule's
// scores per access and per slot of C0), run on the CUDA device, and its flattened output
// turned back into a BeladyPlan (changesets in a ChangesetStore under the options' budget
// and spill_dir). Which device runs a plan is decided by PlanBelady
// (cache/belady_planner.cc) from options.device (cache/planner_device.h).
//
// Blocking; not thread-safe with itself (kernels::PlanBeladyGpu uses the current device's
// default stream).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/belady_plan.h"
#include "cache/planner_input.h"
#include "kernels/belady_gpu.h"
#include "kernels/belady_gpu_batches.h"

namespace seer::belady_internal {

// initial_slots must be validated (unique ids >= 0 or kFreeSlot, fewer than 2^31 slots)
// and every batch size within [0, 2^31). Errors: kInvalidArgument for a negative id or an
// id repeated inside a batch; kUnsupported without CUDA or a device; kIoError when the
// backend fails (its message).
// A Thrust planner backend: kernels::PlanBeladyGpu (CUDA) or kernels::PlanBeladyThrustHost
// (the same code on host threads).
using ThrustPlanBackend = kernels::GpuPlanCode (*)(const kernels::BeladyGpuInput&, kernels::BeladyGpuOutput*,
                                                   std::string*);

// PlanBeladyOnGpu with another backend: planner_bench times the host backend through the
// same host steps (flattening, scores, changesets) as the device's.
Result<BeladyPlan> PlanBeladyWithBackend(const std::vector<int64_t>& initial_slots,
                                         const std::vector<IdSpan>& batches,
                                         const BeladyPlannerOptions& options, ThrustPlanBackend backend);

Result<BeladyPlan> PlanBeladyOnGpu(const std::vector<int64_t>& initial_slots,
                                   const std::vector<IdSpan>& batches,
                                   const BeladyPlannerOptions& options);

}  // namespace seer::belady_internal
