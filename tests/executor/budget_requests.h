// Memory-split requests shared by the budget tests (memory_budget_test.cc: the model's
// reservation; budget_split_test.cc: the split without a model).
#pragma once

#include <cstdint>

#include "executor/memory_budget.h"

namespace seer {

// The feature cache's whole RAM in a split: its rows and their slot index.
inline int64_t FcacheAll(const MemoryBudgetSplit& s) { return s.fcache_bytes + s.fcache_index_bytes; }

// A million-node, 128-dim graph at a 256 MiB budget, batches of 1000 over fan-outs 10,10.
inline MemoryBudgetRequest BenchLikeRequest() {
  MemoryBudgetRequest r;
  r.budget_bytes = int64_t{256} << 20;
  r.num_nodes = 1000003;
  r.feature_dim = 128;
  r.feature_row_bytes = 512;
  r.num_classes = 10;
  r.batch_size = 1000;
  r.fanouts = {10, 10};
  r.model.hidden = 256;
  // The inspector's RAM grows with the sampling threads; 0 (the hardware's) made these
  // splits depend on the machine (a 16-core GPU box refused the 256M budget).
  r.sampling_threads = 2;
  return r;
}

}  // namespace seer
