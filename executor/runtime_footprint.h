// The runtime's fixed host cost, which --memory-budget pays first (executor/memory_budget.h:
// MemoryBudgetRequest::runtime_bytes): the process's resident bytes before Seer's data
// path allocates anything — the program, libtorch, and, when the run will use a CUDA
// device, what the device's first training step adds to the host: the CUDA context,
// cuBLAS/cuBLASLt, the kernels CUDA loads lazily on first use, autograd's device thread.
// A warm-up makes those resident before the measurement (they stay for the whole run).
// On the H200 box (PyTorch 2.11) the context and one small matmul alone measured 558 MiB,
// and the run's peak RSS still went 112 MiB (8 %) past a 1408M budget: what the first
// real step loaded was not in the measurement; the warm-up step is for that.
// Blocking (CUDA initialisation); call from the run's main thread before DataPath::Open.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "executor/model_config.h"
#include "inspector/trace.h"

namespace seer {

// Resident bytes now, after initialising the CUDA runtime (a small matmul) and running
// `warm_up` when use_cuda and a device is present.
int64_t MeasureRuntimeBytes(bool use_cuda, const std::function<void()>& warm_up = {});

// What a run charges for the runtime: `option` < 0 measures it, otherwise it is used as
// given (0 = not charged).
int64_t RuntimeBytesToCharge(int64_t option, bool use_cuda, const std::function<void()>& warm_up = {});

// One training step and one prediction of a throwaway model of `config` on a synthetic
// batch of `fanouts` (input layer first, clamped to 1..4 neighbours) with 8 seeds: on
// the CUDA device (use_cuda; a no-op without a device) the kernels, handles and threads
// the run's own steps use are then loaded. Leaves nothing behind that changes the run's
// results (initialisation and dropout are seeded per model and per batch). Throws
// std::invalid_argument on an inconsistent config (ModelRunner::Create).
void WarmUpTrainingStep(ModelConfig config, const std::vector<int>& fanouts, bool use_cuda);

// A valid batch (inspector/trace.h) of `seeds` seeds, node ids 0..n-1, where every
// destination of layer l has max(fanouts[l], 1) distinct in-neighbours (the warm-up's).
BatchTrace SyntheticBatch(int64_t seeds, const std::vector<int>& fanouts);

}  // namespace seer
