// Where the Belady planner runs (the choice behind `--planner`): the CPU planner
// (cache/belady_planner.h's own algorithm) or the Thrust planner on a CUDA device
// (kernels/belady_gpu.h). Both give the same plan, byte for byte. kAuto picks the GPU
// when this binary was built with CUDA and a device is present; PlanBelady then falls
// back to the CPU if the GPU path answers kUnsupported.
//
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "storage/base/name_table.h"
#include "storage/base/status.h"

namespace seer {

enum class PlannerDevice { kAuto, kCpu, kGpu };
inline constexpr NameValue<PlannerDevice> kPlannerDeviceNames[] = {
    {"auto", PlannerDevice::kAuto}, {"cpu", PlannerDevice::kCpu}, {"gpu", PlannerDevice::kGpu}};
// "auto" | "cpu" | "gpu"; anything else is kInvalidArgument naming the value.
Result<PlannerDevice> ParsePlannerDevice(const std::string& text);
const char* PlannerDeviceName(PlannerDevice device);
// kAuto -> kGpu when built with CUDA and a device is present, else kCpu; others unchanged.
PlannerDevice ResolvePlannerDevice(PlannerDevice device);

}  // namespace seer
