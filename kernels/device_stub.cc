// Built when CUDA is not available: every query answers "no device".
#include "kernels/device.h"

namespace seer::kernels {

bool BuiltWithCuda() { return false; }
int CudaDeviceCount() { return 0; }
std::string DescribeDevice() { return "none (built without CUDA)"; }
long long CudaFreeMemoryBytes() { return -1; }
void* CudaAllocPinned(size_t) { return nullptr; }
void CudaFreePinned(void*) {}

}  // namespace seer::kernels
