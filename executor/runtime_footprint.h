// The runtime's fixed host cost, which --memory-budget pays first (executor/memory_budget.h:
// MemoryBudgetRequest::runtime_bytes): the process's resident bytes before Seer's data
// path allocates anything — the program, libtorch, and, when the run will use a CUDA
// device, the CUDA context and cuBLAS (created here first, since they stay resident for
// the whole run: ~850 MiB measured on an H200 with PyTorch 2.11). Blocking (CUDA
// initialisation); call from the run's main thread before DataPath::Open.
#pragma once

#include <cstdint>

namespace seer {

// Resident bytes now, after initialising the CUDA runtime when use_cuda and a device
// is present.
int64_t MeasureRuntimeBytes(bool use_cuda);

// What a run charges for the runtime: `option` < 0 measures it, otherwise it is used as
// given (0 = not charged).
int64_t RuntimeBytesToCharge(int64_t option, bool use_cuda);

}  // namespace seer
