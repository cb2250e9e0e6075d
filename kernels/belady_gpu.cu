// The Thrust Belady planner on the CUDA device: kernels/belady_thrust.inl compiled by
// nvcc with Thrust's CUDA system (the Thrust bundled with the CUDA toolkit). The same
// source runs on host threads in kernels/belady_thrust_host.cc.
#include <thrust/system_error.h>

#define SEER_THRUST_BACKEND thrust_cuda
#include "kernels/belady_thrust.inl"

#include <string>

#include "kernels/device.h"

namespace seer::kernels {

GpuPlanCode PlanBeladyGpu(const BeladyGpuInput& input, BeladyGpuOutput* output,
                          std::string* error_message) {
  return thrust_cuda::PlanCatching(error_message, "device memory exhausted: ", "", [&](std::string* error) {
    if (CudaDeviceCount() == 0) {
      *error = "no CUDA device: " + DescribeDevice();
      return GpuPlanCode::kUnsupported;
    }
    try {
      return thrust_cuda::PlanBeladyThrust(input, output, error);
    } catch (const thrust::system_error& e) {
      *error = std::string("CUDA: ") + e.what();
    }
    return GpuPlanCode::kError;
  });
}

}  // namespace seer::kernels
