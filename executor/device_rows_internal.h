// DeviceRows (executor/device_feature_tier.h) with its tensor: for the executor's .cc files that
// use libtorch (the device tier and the model runner). Not installed.
#pragma once

#include <torch/torch.h>

namespace seer {

class DeviceRows {
 public:
  torch::Tensor tensor;  // [batch rows x feature_dim] float32 on the tier's device
};

}  // namespace seer
