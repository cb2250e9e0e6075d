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

}  // namespace
}  // namespace seer::kernels
