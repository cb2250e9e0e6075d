// Built when CUDA is not available: the GPU planner is unsupported.
#include "kernels/belady_gpu.h"

namespace seer::kernels {

GpuPlanCode PlanBeladyGpu(const BeladyGpuInput&, BeladyGpuOutput*, std::string* error_message) {
  if (error_message != nullptr) {
    *error_message = "the GPU Belady planner is not available: this binary was built without CUDA";
  }
  return GpuPlanCode::kUnsupported;
}

}  // namespace seer::kernels
