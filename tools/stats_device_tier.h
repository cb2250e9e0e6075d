// `seer stats --device-capacity`: the flag, the two-tier replay (cache/device_tier_grid.h)
// and its table. The host-side options (--capacities, --presc-epochs, --planner,
// --belady-scope, --block-bytes) are the ones the policy grid uses.
#pragma once

#include <vector>

#include <CLI/CLI.hpp>

#include "cache/device_tier_grid.h"
#include "cache/replay_grid.h"
#include "storage/base/json_file.h"
#include "storage/base/status.h"
#include "storage/dataset/dataset.h"

namespace seer::cli {

struct DeviceTierFlags {
  std::vector<CacheCapacity> capacities;  // empty = no device-tier replay
};

void AddDeviceTierFlags(CLI::App* cmd, DeviceTierFlags* flags);

// The grid's options from the flags and the host grid's options.
DeviceTierGridOptions MakeDeviceTierGridOptions(const DeviceTierFlags& flags, const ReplayGridOptions& host);

// Prints the table and a note on what the columns count.
void PrintDeviceTierResults(const DeviceTierGridResult& result, const DeviceTierGridOptions& options);

// The rows as a JSON array (one object per TwoTierStats).
Json DeviceTierResultsJson(const DeviceTierGridResult& result);

}  // namespace seer::cli
