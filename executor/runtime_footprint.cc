#include "executor/runtime_footprint.h"

#include <torch/torch.h>

#include "storage/base/process_memory.h"

namespace seer {

int64_t MeasureRuntimeBytes(bool use_cuda) {
  if (use_cuda && torch::cuda::is_available()) {
    // The context, the caching allocator's first block and a cuBLAS handle: what the
    // training step creates on its first batch anyway.
    const torch::Tensor a = torch::ones({8, 8}, torch::TensorOptions().device(torch::kCUDA));
    const torch::Tensor b = torch::mm(a, a);
    (void)b.sum().item<float>();  // waits for the device
  }
  return std::max<int64_t>(0, ResidentBytesNow());
}

int64_t RuntimeBytesToCharge(int64_t option, bool use_cuda) {
  return option < 0 ? MeasureRuntimeBytes(use_cuda) : option;
}

}  // namespace seer
