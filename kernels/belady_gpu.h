// The Thrust Belady planner behind cache/belady_planner.h (PlanBelady with
// PlannerDevice::kGpu), in two backends built from ONE source (kernels/belady_thrust.inl):
//   * PlanBeladyGpu: nvcc, Thrust's CUDA system, on the current CUDA device. On a build
//     without CUDA, or without a device, it answers kUnsupported.
//   * PlanBeladyThrustHost: the host compiler, Thrust's TBB system (Debian libthrust-dev),
//     on host threads. Present in every build, so the GPU planner's exact code runs (and is
//     tested) without a GPU.
// Plain C++ entry points; no CUDA or Thrust types.
//
// Both implement exactly the rule and slot assignment documented in
// cache/belady_planner.h, with the tie rule among nodes with no further use ("higher
// score, then cached, then lower id"): same output, byte for byte, as the CPU planner.
// The algorithm (kernels/belady_thrust.inl): next uses by a stable sort of (id, position);
// the cache kept as an array sorted by key, whose hits are a prefix; per iteration a sort
// of the batch's candidates, a co-rank search for the cut and one merge — O(n + K) work
// per iteration of n accesses (radix sorts), one wait for the device per iteration.
// Memory (device or host): about 32 bytes per access + 72 per cache slot + 92 per access
// of the largest batch + 28 per changeset entry held before copy-out (changeset_chunk). Node ids may be any value in [0, 2^63).
//
// Block rule (BeladyGpuInput::block_bytes > 0 and block_row_bytes > 0; cache/belady_planner.h
// "Block-granular reads", geometry of cache/read_blocks.h re-implemented here with the same
// integer arithmetic): a miss forces the read of every block_bytes-aligned block its row
// touches; F_i = the rows (< block_num_rows) lying wholly inside the blocks batch i reads
// (runs of consecutive blocks are one byte range) that are in neither ids_i nor C_i and
// have a finite next use; C_{i+1} = the K smallest of C_i ∪ ids_i ∪ F_i, a free row keyed
// (0, next_use_i(v), 1, v) like a miss. Admitted free rows are listed in block_ids
// (ascending id) and take the free slots after the misses' (block_slots). Same output as
// the CPU block planner (cache/belady_block_planner.cc), byte for byte. Per batch, the
// candidate rows of the batch's blocks are enumerated on the device (misses' block ranges
// sorted, merged into runs, rows of each run), each looked up in the accesses sorted by
// (id, position) (next use, membership in ids_i) and in the sorted cache (membership in
// C_i: a cached row not used in batch i is keyed by that same next use); the rows that
// fail are sorted past the end of the candidates and never reach the cut. Cost of the
// rule: the sorted accesses are kept for the whole plan (+16 bytes per access), 64 bytes
// per access of the largest batch for the block ranges, the candidate buffers (92 bytes
// per entry) grow to n + R entries (R = the rows whose first block batch i reads: at most
// about (block_bytes / block_row_bytes + 1) per block read), the changeset buffers hold
// up to n + R entries per batch (40 bytes each, grown up to changeset_chunk before they
// are copied out; 12 of them for block_ids / block_slots); work O((n + R) log + K) per
// batch, and one more wait for the device per batch (the count R: two in all). n + R
// must stay below 2^31 (kError otherwise). Off (the default): none of it runs or is
// allocated; the output and the work are those of the plain rule.
// Blocking; not thread-safe with itself for the GPU backend (current device, default
// stream); the host backend is reentrant.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace seer::kernels {

struct BeladyGpuInput {
  const int64_t* initial_slots = nullptr;    // capacity entries, -1 = free
  int64_t capacity = 0;
  const int64_t* ids = nullptr;              // all batches back to back
  const int64_t* batch_offsets = nullptr;    // num_batches + 1 entries, offsets into ids
  int64_t num_batches = 0;
  // Static per-node scores (higher = more worth keeping among nodes with no further use
  // in the superbatch). score(v) must not depend on where v appears.
  const uint32_t* scores = nullptr;          // aligned with ids (all accesses); null = 0
  const uint32_t* initial_scores = nullptr;  // aligned with initial_slots; null = 0
  // Diagnostics: fill BeladyGpuOutput::phase_seconds. Opt-in because, on CUDA, each phase
  // boundary then waits for the device (so the phases do not overlap and their sum exceeds
  // an untimed run's time); the host backend only reads the clock.
  bool time_phases = false;
  // Changeset entries (each of inserted and evicted) held on the device before they are
  // copied to the host in one copy per array; raised to the largest batch. 0 = 2^21
  // (about 56 MiB of buffers). Small values are for tests of the copy-out path.
  int64_t changeset_chunk = 0;
  // Block rule (see above): on when block_bytes > 0 && block_row_bytes > 0. Row v is bytes
  // [v*block_row_bytes, (v+1)*block_row_bytes) of the features file of block_num_rows rows
  // (free rows are < block_num_rows; batch ids must be below it, as the caller checks).
  int64_t block_row_bytes = 0;
  int64_t block_bytes = 0;
  int64_t block_num_rows = 0;
};

// The phases of one plan, for BeladyGpuOutput::phase_seconds. The per-batch phases are
// summed over the batches.
enum PlanPhase : int {
  kPhaseUpload = 0,   // inputs to the device, buffers allocated
  kPhaseNextUse,      // next access of every access (sort by id), duplicate check
  kPhaseInitialFill,  // C0 as sorted entries, its free slots
  kPhaseHits,         // per batch: the cache's hits marked by position
  kPhaseCandidates,   // per batch: candidates built and sorted by key (block rule: with
                      // the rows of the batch's blocks, their count read by the host)
  kPhaseCoRank,       // per batch: the cut (hit count, co-rank) read by the host
  kPhaseEvict,        // per batch: evicted entries listed by slot, free list merged
  kPhaseInsert,       // per batch: kept misses placed in free slots, re-sorted
  kPhaseMerge,        // per batch: the new cache, merged
  kPhaseCopyOut,      // changesets and final slots to the host
  kNumPlanPhases,
};
inline const char* PlanPhaseName(int phase) {
  static constexpr const char* kNames[kNumPlanPhases] = {
      "upload", "next-use", "initial fill", "hits", "candidates", "co-rank", "evict", "insert", "merge", "copy out"};
  return phase >= 0 && phase < kNumPlanPhases ? kNames[phase] : "?";
}

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
  // Block rule: batch i's admitted free rows are [block_offsets[i], block_offsets[i+1]),
  // ascending id, each with the slot it takes.
  std::vector<int64_t> block_offsets;  // num_batches + 1 (empty when the block rule is off)
  std::vector<int64_t> block_ids;
  std::vector<int32_t> block_slots;
  // Diagnostics: the algorithms' temporary storage comes from a pool that lives for one
  // call; these count the algorithms' requests, the pool's device allocations (cudaMalloc
  // on CUDA) and the bytes it held. Requests grow with the batches, allocations do not.
  int64_t temp_requests = 0;
  int64_t temp_allocations = 0;
  int64_t temp_bytes = 0;
  // Times the host waited for the device's results (a count, the cut, copies out); on the
  // host backend the same points are counted though nothing waits there.
  int64_t host_syncs = 0;
  // Seconds per PlanPhase, only with BeladyGpuInput::time_phases (else zeros).
  std::array<double, kNumPlanPhases> phase_seconds{};
};

enum class GpuPlanCode {
  kOk = 0,
  kUnsupported,      // GPU backend: no CUDA build / no device
  kInvalidArgument,  // an id repeated inside a batch
  kError,            // the backend failed (out of memory, a CUDA error; message says which)
};

// Inputs must already be validated: ids >= 0, C0 ids unique, capacity and batch sizes
// below 2^31.
GpuPlanCode PlanBeladyGpu(const BeladyGpuInput& input, BeladyGpuOutput* output,
                          std::string* error_message);
GpuPlanCode PlanBeladyThrustHost(const BeladyGpuInput& input, BeladyGpuOutput* output,
                                 std::string* error_message);

}  // namespace seer::kernels
