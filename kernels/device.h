// Whether a CUDA device can be used. Plain C++ entry points: callers never see CUDA
// headers. On a build without CUDA every function answers "no device". Thread-safe;
// the first call may block while the CUDA runtime initializes.
#pragma once

#include <cstddef>
#include <string>

namespace seer::kernels {

// True when this binary was compiled with the CUDA kernels.
bool BuiltWithCuda();
// Number of usable CUDA devices (0 without CUDA, without a driver or without a GPU).
int CudaDeviceCount();
// "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)" or "none (<reason>)".
std::string DescribeDevice();
// Free bytes on the current CUDA device now (cudaMemGetInfo; memory held by libtorch's
// caching allocator counts as used); -1 without CUDA, a driver or a device.
long long CudaFreeMemoryBytes();
// Page-locked host memory (cudaHostAlloc, portable): host->device copies from it run at
// full speed and asynchronously. nullptr without CUDA/a device or when pinning fails;
// release with CudaFreePinned.
void* CudaAllocPinned(size_t bytes);
void CudaFreePinned(void* pointer);

}  // namespace seer::kernels
