// The CUDA Belady planner behind cache/belady_planner.h (PlanBelady with
// PlannerDevice::kGpu). Plain C++ entry point; no CUDA types. On a build without CUDA
// it answers kUnsupported.
//
// It implements exactly the rule and slot assignment documented in
// cache/belady_planner.h (same output, byte for byte, as the CPU planner):
//   1. next use of every access: stable radix sort of (node id, access position);
//   2. per iteration, on the device: hits = slots whose next access falls in batch i;
//      candidates = occupied slots (key (next_use, 0, id)) ∪ misses (key (next_use, 1,
//      id)) packed into one uint64 key; if more than K candidates, the largest are cut
//      after a radix sort; evicted slots and the inserted misses are listed by
//      stream compaction (ascending slot / ascending position), and the k-th inserted
//      miss takes the k-th free slot in ascending order.
// Device memory: about 40 bytes per access + 40 bytes per cache slot.
// Blocking; not thread-safe with itself (uses the current device, default stream).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seer::kernels {

struct BeladyGpuInput {
  const int64_t* initial_slots = nullptr;  // capacity entries, -1 = free
  int64_t capacity = 0;
  const int64_t* ids = nullptr;            // all batches back to back
  const int64_t* batch_offsets = nullptr;  // num_batches + 1 entries, offsets into ids
  int64_t num_batches = 0;
};

// Flattened changesets: batch i's inserted entries are [in_offsets[i], in_offsets[i+1]).
struct BeladyGpuOutput {
  std::vector<int64_t> num_misses;   // per batch
  std::vector<int64_t> in_offsets;   // num_batches + 1
  std::vector<int64_t> in_ids;
  std::vector<int32_t> in_positions;
  std::vector<int32_t> in_slots;
  std::vector<int64_t> out_offsets;  // num_batches + 1
  std::vector<int64_t> out_ids;
  std::vector<int32_t> out_slots;
  std::vector<int64_t> final_slots;  // capacity entries
};

enum class GpuPlanCode {
  kOk = 0,
  kUnsupported,      // no CUDA build / no device / ids too large to pack in 64-bit keys
  kInvalidArgument,  // an id repeated inside a batch
  kError,            // a CUDA call failed (message says which)
};

// Inputs must already be validated for negative ids and a valid C0 (unique ids).
GpuPlanCode PlanBeladyGpu(const BeladyGpuInput& input, BeladyGpuOutput* output,
                          std::string* error_message);

}  // namespace seer::kernels
