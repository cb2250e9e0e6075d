#include <gtest/gtest.h>

#include "kernels/device.h"

namespace seer::kernels {
namespace {

TEST(DeviceTest, DescribesDeviceOrItsAbsence) {
  std::string description = DescribeDevice();
  EXPECT_FALSE(description.empty());
  if (CudaDeviceCount() == 0) {
    EXPECT_EQ(description.rfind("none", 0), 0u) << description;
  } else {
    EXPECT_TRUE(BuiltWithCuda());
    EXPECT_NE(description.rfind("none", 0), 0u) << description;
  }
}

// --device-cache auto sizes the device tier from this: -1 means "unknown" (no device), a
// device reports a positive amount no larger than its total memory.
TEST(DeviceTest, FreeMemoryIsUnknownWithoutADeviceAndPositiveWithOne) {
  if (CudaDeviceCount() == 0) {
    EXPECT_EQ(CudaFreeMemoryBytes(), -1);
  } else {
    EXPECT_GT(CudaFreeMemoryBytes(), 0);
  }
}

// The feature cache's slots are pinned through this when training on CUDA.
TEST(DeviceTest, PinnedMemoryOnlyWithADevice) {
  void* p = CudaAllocPinned(1 << 20);
  if (CudaDeviceCount() == 0) {
    EXPECT_EQ(p, nullptr);
  } else {
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[(1 << 20) - 1] = 7;  // writable to the end
  }
  CudaFreePinned(p);
}

}  // namespace
}  // namespace seer::kernels
