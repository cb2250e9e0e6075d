#include <cuda_runtime.h>

#include <iomanip>
#include <sstream>
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

long long CudaFreeMemoryBytes() {
  if (CudaDeviceCount() == 0) return -1;
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return static_cast<long long>(free_bytes);
}

void* CudaAllocPinned(size_t bytes) {
  if (bytes == 0 || CudaDeviceCount() == 0) return nullptr;
  void* pointer = nullptr;
  if (cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return pointer;
}

void CudaFreePinned(void* pointer) {
  if (pointer != nullptr) cudaFreeHost(pointer);
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
  // fmt is not used in device code (nvcc); a stream gives the same "%.1f GiB".
  std::ostringstream out;
  out << prop.name << " (sm_" << prop.major << prop.minor << ", " << std::fixed
      << std::setprecision(1) << static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024)
      << " GiB)";
  return out.str();
}

}  // namespace seer::kernels
