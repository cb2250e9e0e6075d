#include "stats_device_tier.h"

#include <fmt/format.h>

#include "storage/base/byte_size.h"
#include "flag_binding.h"

namespace seer::cli {

void AddDeviceTierFlags(CLI::App* cmd, DeviceTierFlags* flags) {
  AddParsedOption(cmd, "--device-capacity", &flags->capacities, ParseCacheCapacities, "",
                  "Also simulate a device feature-cache tier of this size in front of the host cache "
                  "(comma-separated: a row count, bytes of float32 rows like 256M, or N% of the nodes) and report "
                  "host->device and SSD bytes for device policies " +
                      JoinNames(kDeviceTierPolicyNames, ", ", ", ") + " at equal device memory");
}

DeviceTierGridOptions MakeDeviceTierGridOptions(const DeviceTierFlags& flags, const ReplayGridOptions& host) {
  DeviceTierGridOptions o;
  o.device_capacities = flags.capacities;
  o.host_capacities = host.capacities;
  o.presc_epochs = host.presc_epochs;
  o.planner = host.planner;
  o.belady_scope = host.belady_scope;
  o.block_bytes = host.block_bytes;
  return o;
}

void PrintDeviceTierResults(const DeviceTierGridResult& result, const DeviceTierGridOptions& options) {
  fmt::print("\ndevice tier (host tier = belady on the device misses; rows sent to the device are {} B float32):\n",
             result.transfer_row_bytes);
  fmt::print("{:<15} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "device policy",
             "dev rows", "dev bytes", "host rows", "dev hits", "h2d bytes", "h2d fill", "host miss", "ssd bytes",
             "ssd fill");
  for (const TwoTierStats& s : result.rows) {
    fmt::print("{:<15} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>11} {:>11}\n", s.device_policy,
               s.device_capacity_rows, FormatBytes(s.device_capacity_bytes), s.host_capacity_rows,
               fmt::format("{:.2f}%", 100.0 * s.device_hit_ratio()), FormatBytes(s.h2d_bytes),
               FormatBytes(s.h2d_fill_bytes), s.host_misses, FormatBytes(s.ssd_bytes), FormatBytes(s.ssd_fill_bytes));
  }
  fmt::print("h2d = rows copied host->device per batch (fill = installed before the first batch); ssd = blocks "
             "read from features.bin for host misses. {}\n",
             options.belady_scope == BeladyScope::kTrace
                 ? "Whole trace planned at once (--belady-scope trace): belady's h2d is the lower bound."
                 : "Planned per recorded superbatch (what training does).");
}

Json DeviceTierResultsJson(const DeviceTierGridResult& result) {
  Json rows = Json::array();
  for (const TwoTierStats& s : result.rows) {
    rows.push_back({{"device_policy", s.device_policy},
                    {"device_capacity_rows", s.device_capacity_rows},
                    {"device_capacity_bytes", s.device_capacity_bytes},
                    {"host_capacity_rows", s.host_capacity_rows},
                    {"accesses", s.accesses},
                    {"device_hits", s.device_hits},
                    {"device_fill_rows", s.device_fill_rows},
                    {"h2d_rows", s.h2d_rows},
                    {"h2d_bytes", s.h2d_bytes},
                    {"h2d_fill_bytes", s.h2d_fill_bytes},
                    {"host_misses", s.host_misses},
                    {"host_fill_rows", s.host_fill_rows},
                    {"ssd_blocks", s.ssd_blocks},
                    {"ssd_bytes", s.ssd_bytes},
                    {"ssd_fill_bytes", s.ssd_fill_bytes}});
  }
  return rows;
}

}  // namespace seer::cli
