#include "cache/belady_gpu_plan_internal.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "cache/read_blocks.h"
#include "storage/base/parallel.h"

namespace seer::belady_internal {
namespace {

constexpr int64_t kScoreChunk = int64_t{1} << 16;  // accesses per parallel score call

// scores[0..n) of ids[0..n), in parallel chunks (a NodeScoreFn is read-only: node_scores.h).
void FillScores(const NodeScoreFn& fn, const int64_t* ids, int64_t n, uint32_t* scores) {
  const int64_t chunks = (n + kScoreChunk - 1) / kScoreChunk;
  ParallelFor(int64_t{0}, chunks, [&](int64_t c) {
    const int64_t begin = c * kScoreChunk;
    fn(ids + begin, std::min(kScoreChunk, n - begin), scores + begin);
  });
}

}  // namespace

Result<BeladyPlan> PlanBeladyWithBackend(const std::vector<int64_t>& initial_slots,
                                         const std::vector<IdSpan>& batches,
                                         const BeladyPlannerOptions& options, ThrustPlanBackend backend) {
  // Access g belongs to batch b when offsets[b] <= g < offsets[b + 1]. The copy and the
  // id check run per batch on every core (at 100K ids per batch the host steps, done
  // serially, took as long as the device's whole plan).
  std::vector<int64_t> offsets(batches.size() + 1, 0);
  for (size_t b = 0; b < batches.size(); ++b) offsets[b + 1] = offsets[b] + batches[b].size;
  std::vector<int64_t> flat(static_cast<size_t>(offsets.back()));
  std::atomic<bool> negative{false};
  std::atomic<int64_t> beyond{-1};  // block rule: an id at or past the features' rows
  const ReadBlocks& blocks = options.read_blocks;
  ParallelFor(size_t{0}, batches.size(), [&](size_t b) {
    const int64_t n = batches[b].size;
    if (n <= 0) return;
    const int64_t* src = batches[b].data;
    int64_t* dst = flat.data() + offsets[b];
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(int64_t));
    int64_t low = 0, high = 0;
    for (int64_t k = 0; k < n; ++k) {
      low = std::min(low, dst[k]);
      high = std::max(high, dst[k]);
    }
    if (low < 0) negative.store(true, std::memory_order_relaxed);
    if (blocks.enabled() && high >= blocks.num_rows) beyond.store(high, std::memory_order_relaxed);
  });
  if (negative.load()) return InvalidArgument("Belady planner: negative node id in a batch");
  if (beyond.load() >= 0) {
    return InvalidArgument("Belady planner: node " + std::to_string(beyond.load()) + " outside the " +
                           std::to_string(blocks.num_rows) + " rows of the block reads");
  }
  // initial_slots, capacity, ids, batch_offsets, num_batches (scores below).
  kernels::BeladyGpuInput in{initial_slots.data(), static_cast<int64_t>(initial_slots.size()), flat.data(),
                             offsets.data(), static_cast<int64_t>(batches.size())};
  // The tie rule's scores, per access and per slot of C0 (free slots: 0, unused).
  std::vector<uint32_t> scores, initial_scores;
  if (options.node_scores) {
    scores.resize(flat.size());
    FillScores(options.node_scores, flat.data(), static_cast<int64_t>(flat.size()), scores.data());
    std::vector<int64_t> slot_ids = initial_slots;
    for (int64_t& v : slot_ids) v = v == kFreeSlot ? 0 : v;
    initial_scores.resize(slot_ids.size());
    FillScores(options.node_scores, slot_ids.data(), static_cast<int64_t>(slot_ids.size()), initial_scores.data());
    in.scores = scores.data();
    in.initial_scores = initial_scores.data();
  }
  if (blocks.enabled()) {
    // The block rule (cache/belady_planner.h "Block-granular reads"), on the device too.
    in.block_row_bytes = blocks.row_bytes;
    in.block_bytes = blocks.block_bytes;
    in.block_num_rows = blocks.num_rows;
  }
  kernels::BeladyGpuOutput out;
  std::string message;
  switch (backend(in, &out, &message)) {
    case kernels::GpuPlanCode::kOk: break;
    case kernels::GpuPlanCode::kUnsupported:
      return Status(StatusCode::kUnsupported, "GPU planner: " + message);
    case kernels::GpuPlanCode::kInvalidArgument:
      return InvalidArgument("Belady planner (GPU): " + message);
    case kernels::GpuPlanCode::kError:
      return Status(StatusCode::kIoError, "GPU planner: " + message);
  }
  // Per-batch changesets from the flat output, built in parallel (their arrays are
  // fresh allocations: the copies and page faults are the cost), appended in order.
  std::vector<Changeset> changesets(batches.size());
  ParallelFor(size_t{0}, batches.size(), [&](size_t i) {
    changesets[i].num_accesses = batches[i].size;
    kernels::CopyBatchChanges(out, i, &changesets[i]);
  });
  BeladyPlan plan;
  plan.changesets = ChangesetStore(options.changeset_budget_bytes, options.spill_dir);
  for (Changeset& cs : changesets) {
    plan.num_accesses += cs.num_accesses;
    plan.num_misses += cs.num_misses;
    plan.num_block_admits += static_cast<int64_t>(cs.block_ids.size());
    SEER_RETURN_IF_ERROR(plan.changesets.Append(std::move(cs)));
  }
  plan.final_slots = std::move(out.final_slots);
  plan.device_used = PlannerDevice::kGpu;
  return plan;
}

Result<BeladyPlan> PlanBeladyOnGpu(const std::vector<int64_t>& initial_slots,
                                   const std::vector<IdSpan>& batches,
                                   const BeladyPlannerOptions& options) {
  return PlanBeladyWithBackend(initial_slots, batches, options, kernels::PlanBeladyGpu);
}

}  // namespace seer::belady_internal
