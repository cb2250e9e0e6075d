#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "kernels/device.h"

namespace seer::kernels {

bool BuiltWithCuda() { return true; }

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

std::string DescribeDevice() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("none (") + cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "none (no CUDA device)";
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace seer::kernels
