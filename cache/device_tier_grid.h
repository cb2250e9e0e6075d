// DeviceTierGrid: `seer stats --device-capacity` as a library call. Replays a recorded
// trace (cache/replay_grid.h's RecordedTrace) through the two-level cache of
// cache/device_tier.h for every (device capacity, host capacity) and every device-tier
// policy — off, previous-batch, presc, belady — at equal device memory, the host tier
// being Belady on each policy's device miss stream. Reports host->device bytes and SSD
// bytes (TwoTierStats).
//
// Sizes: host capacities as `seer stats --capacities` (rows of the dataset's disk dtype);
// device capacities in rows or bytes of float32 rows (feature_dim x 4 B: the device tier
// holds the rows the model reads, and every transfer is one such row). presc ranks nodes
// by the visit counts of the trace's first presc_epochs epochs, as the host grid does.
// BeladyScope::kTrace replays the whole trace as one superbatch (both tiers' lower
// bound), kSuperbatch each recorded superbatch with carried state (what training does);
// the scope applies to every device policy so they see the same host planning.
//
// Blocks, single-threaded apart from the planner. The Dataset must outlive the call.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/device_tier.h"
#include "cache/replay_grid.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer {

struct DeviceTierGridOptions {
  std::vector<CacheCapacity> device_capacities;
  std::vector<CacheCapacity> host_capacities;
  std::vector<DeviceTierPolicy> policies = AllDeviceTierPolicies();
  int64_t presc_epochs = 1;
  PlannerDevice planner = PlannerDevice::kAuto;
  BeladyScope belady_scope = BeladyScope::kTrace;
  int64_t block_bytes = 0;  // 0 = features.bin's O_DIRECT alignment
};

struct DeviceTierGridResult {
  int64_t transfer_row_bytes = 0;  // feature_dim x 4
  int64_t block_bytes = 0;
  // Device capacities ascending, then host capacities ascending, then policies in
  // option order; `off` once per host capacity (at the smallest device capacity).
  std::vector<TwoTierStats> rows;
};

// kInvalidArgument for empty capacity lists or presc_epochs < 1; an id outside the
// dataset is kInvalidArgument naming it.
Result<DeviceTierGridResult> RunDeviceTierGrid(const Dataset& dataset, const RecordedTrace& trace,
                                               const DeviceTierGridOptions& options);

}  // namespace seer
