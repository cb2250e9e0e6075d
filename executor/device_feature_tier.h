// DeviceFeatureTier: the device tier of the feature cache in a training run (the
// two-level plan of cache/device_tier.h). Rows hot enough to stay on the training device
// live in a [capacity_rows x feature_dim] float32 tensor there (a CPU tensor on a CPU
// build or without a device, so CI runs the same code path). Per superbatch:
//
//   planner thread   PlanSuperbatch(trace file): Belady for the device tier on each
//                    batch's ids (read into RAM: the device tier's plan is in-memory;
//                    carried state, starts empty and fills on demand), then writes the
//                    host tier's trace — every batch reduced to its device misses D_i —
//                    to a file beside it, which the host policy plans as usual (host
//                    changesets have positions in D_i); that file is removed once planned.
//   gather thread    HostBatch(batch): the batch's D_i as a BatchTrace; the gatherer
//                    reads only those rows (host cache hits, SSD misses), packed.
//   executor thread  Assemble(batch, packed rows): the batch's rows on the device — device
//                    hits gathered from the tier, device misses copied host->device (the
//                    only transfer) — then the device changeset is applied on the device
//                    (inserted rows come from the assembled batch: no extra transfer).
//
// WithDeviceTier(stages, tier) wraps a pipeline's plan and gather stages this way. The
// per-batch plans are handed from the planner thread to the other two under a mutex,
// keyed by (epoch, batch index); each is dropped once assembled. Under CUDA the packed
// misses are staged in pinned memory and copied on a side stream that the compute stream
// waits on (an event), so the copy overlaps whatever the compute stream is still doing.
//
// A plan that disagrees with the tier's own slot table (a broken contract) throws
// std::logic_error; the pipeline's stage guard turns it into a Status.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cache/belady_planner.h"
#include "cache/feature_cache.h"
#include "executor/superbatch_pipeline.h"
#include "inspector/trace.h"
#include "inspector/trace_stream.h"
#include "storage/base/status.h"

namespace seer {

// The assembled rows of a batch on the tier's device (a tensor; see
// executor/device_rows_internal.h). ModelRunner::TrainStepRows reads it.
class DeviceRows;

struct DeviceTierOptions {
  int64_t num_nodes = 0;
  int64_t capacity_rows = 0;
  int64_t feature_dim = 0;
  bool use_cuda = true;  // a CUDA tensor when a device is present, else a CPU tensor
  BeladyPlannerOptions planner;
};

// What the tier did for the batches it assembled.
struct DeviceTierStats {
  int64_t rows = 0;        // accesses
  int64_t hits = 0;        // served from the tier
  int64_t h2d_rows = 0;    // copied host -> device (= rows - hits)
  int64_t h2d_bytes = 0;   // h2d_rows x feature_dim x 4
  double transfer_seconds = 0;
};

class DeviceFeatureTier {
 public:
  // kInvalidArgument for negative sizes; kResourceExhausted when the tensor cannot be
  // allocated.
  static Result<std::unique_ptr<DeviceFeatureTier>> Create(const DeviceTierOptions& options);
  ~DeviceFeatureTier();
  DeviceFeatureTier(const DeviceFeatureTier&) = delete;
  DeviceFeatureTier& operator=(const DeviceFeatureTier&) = delete;

  bool on_cuda() const;
  int64_t capacity_rows() const { return options_.capacity_rows; }
  int64_t row_bytes() const { return options_.feature_dim * static_cast<int64_t>(sizeof(float)); }

  // Planner thread.
  // Returns the host tier's trace file (owned: removed when the handle goes).
  Result<TraceFile> PlanSuperbatch(const TraceFile& trace);
  // Gather thread: the batch's device misses (node_ids = D_i, ascending position).
  Result<const BatchTrace*> HostBatch(const BatchTrace& batch);
  // Executor thread: `miss_rows` = the packed float32 rows of HostBatch(batch).node_ids.
  // The result stays valid until the next Assemble.
  Result<const DeviceRows*> Assemble(const BatchTrace& batch, const std::vector<float>& miss_rows,
                                     DeviceTierStats* stats);
  // The last assembled batch's rows in host memory (copied back under CUDA; debug hook).
  const float* HostRows();

 private:
  struct BatchPlan {
    Changeset changeset;
    std::vector<int32_t> miss_positions;
    BatchTrace host_batch;  // node_ids = D_i
  };
  struct Impl;
  DeviceFeatureTier(const DeviceTierOptions& options, FeatureCache table);
  std::shared_ptr<BatchPlan> Find(const BatchTrace& batch, bool erase);

  DeviceTierOptions options_;
  std::vector<int64_t> planned_slots_;  // planner thread: content after the last plan
  FeatureCache table_;                  // executor thread: node -> slot of the tensor
  std::mutex mu_;
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<BatchPlan>> plans_;
  std::unique_ptr<Impl> impl_;          // tensors, staging, streams (torch)
};

// `stages` with the device tier in front of the host cache (see above); `tier` must
// outlive the pipeline. A null tier returns `stages` unchanged.
PipelineStages WithDeviceTier(PipelineStages stages, DeviceFeatureTier* tier);

// --device-cache: bytes (>0), 0 = off, -1 = auto. The tier's rows for it: bytes / row bytes;
// auto = what the device has left after the model's measured working set, which needs a
// CUDA device; *reason says what was chosen and why (for the split line).
int64_t DeviceCacheRows(int64_t requested_bytes, int64_t feature_dim, bool cuda_device, int64_t device_free_bytes,
                        std::string* reason);

}  // namespace seer
