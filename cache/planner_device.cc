#include "cache/planner_device.h"

#include "kernels/device.h"

namespace seer {

Result<PlannerDevice> ParsePlannerDevice(const std::string& text) {
  return ParseName(kPlannerDeviceNames, text, "planner");
}

const char* PlannerDeviceName(PlannerDevice device) { return NameOf(kPlannerDeviceNames, device); }

PlannerDevice ResolvePlannerDevice(PlannerDevice device) {
  if (device != PlannerDevice::kAuto) return device;
  return kernels::BuiltWithCuda() && kernels::CudaDeviceCount() > 0 ? PlannerDevice::kGpu
                                                                     : PlannerDevice::kCpu;
}

}  // namespace seer
