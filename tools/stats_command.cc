// `seer stats`: replays a trace recorded by `seer sample` under every cache policy and
// capacity and prints misses, hit ratio, blocks and bytes read. The replay is
// cache/replay_grid.h, the chart cache/hit_chart_svg.h; flags are bound to
// ReplayGridOptions. A typed dataset is replayed over its TypedTrainingView (the view
// `seer sample` recorded, storage/dataset/typed_target.h) with a row per node type of the
// belady runs' accesses and misses.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/hit_chart_svg.h"
#include "cache/replay_grid.h"
#include "inspector/trace_directory.h"
#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/json_file.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/small_files.h"
#include "storage/dataset/typed_target.h"
#include "flag_binding.h"
#include "stats_device_tier.h"
#include "commands.h"

namespace seer::cli {
namespace {

// What `seer stats` reads and writes besides the grid's options.
struct StatsFiles {
  std::string dataset;
  std::string trace;  // "" = DATASET/trace
  std::string json;
  std::string svg;
};

void AddStatsFlags(CLI::App* cmd, StatsFiles* files, ReplayGridOptions* o) {
  cmd->add_option("dataset", files->dataset, "Dataset directory")->required();
  cmd->add_option("--trace", files->trace, "Trace directory written by `seer sample --out` (default: DATASET/trace)")
      ->capture_default_str();
  std::vector<std::string> capacity_texts;
  for (const CacheCapacity& c : o->capacities) capacity_texts.push_back(c.text);
  AddParsedOption(cmd, "--capacities", &o->capacities, ParseCacheCapacities, fmt::format("{}", fmt::join(capacity_texts, ",")),
                  "Comma-separated cache sizes: N% of the nodes, a row count (digits only), or bytes "
                  "(512M, 2G, 4096B)");
  std::vector<const char*> policy_names;
  for (PolicyKind kind : o->policies) policy_names.push_back(PolicyKindName(kind));
  AddParsedOption(cmd, "--policies", &o->policies, ParsePolicyKinds, fmt::format("{}", fmt::join(policy_names, ",")),
                  "Comma-separated: " + JoinNames(kPolicyKindNames, ", ", ", "));
  cmd->add_option("--presc-epochs", o->presc_epochs,
                  "PreSC pre-sampling epochs: visit counts are taken from the trace's first N epochs "
                  "(misses are still counted over the whole trace)")
      ->capture_default_str();
  AddEnumOption(cmd, "--planner", &o->planner, kPlannerDeviceNames, "planner", "Belady planner device");
  AddEnumOption(cmd, "--belady-scope", &o->belady_scope, kBeladyScopeNames, "belady scope",
                "trace = plan the whole trace at once (the lower bound); superbatch = plan each recorded "
                "superbatch with carried state (what training does)");
  cmd->add_option("--block-bytes", o->block_bytes, "Read granularity of features.bin (0 = its O_DIRECT alignment)")
      ->capture_default_str();
  AddBytesOption(cmd, "--read-block", &o->read_block_bytes,
                 "Block-granular reads as `seer train --read-block`: reads counted in blocks of this size, and "
                 "belady caches a block's other rows used before what they would evict (0 = per-row reads)");
  AddEnumOption(cmd, "--typed-cache", &o->typed_rows_padded, kTypedCacheNames, "typed feature cache",
                "Typed datasets: the feature cache's rows as `seer train --typed-cache` lays them out (bytes: units "
                "of one size, counts in units; padded: one row per node, padded to the widest type's)");
  cmd->add_option("--json", files->json, "Also write the results as JSON to this file")->capture_default_str();
  cmd->add_option("--svg", files->svg, "Also write a hit-ratio chart (SVG) to this file")->capture_default_str();
}

// The dataset the trace is replayed on: its manifest, or for a typed dataset the
// TypedTrainingView of the target type trace.json records (what `seer sample` and
// `seer train` record as the dataset's identity).
Result<DatasetManifest> CacheView(const Dataset& dataset, const TraceRunInfo& run) {
  const DatasetManifest& m = dataset.manifest();
  if (!m.typed()) return m;
  SEER_ASSIGN_OR_RETURN(const TypedTarget target, ResolveTarget(m, run.target_type));
  return TypedTrainingView(m, target);
}

// The node ids of every batch of a trace directory (the blocks are not needed) and the
// manifest the cache is of. A trace recorded on another dataset (its trace.json names
// another identity) is refused.
Result<RecordedTrace> LoadRecordedTrace(const std::string& trace_dir, const Dataset& dataset, DatasetManifest* view) {
  SEER_ASSIGN_OR_RETURN(TraceDirectoryReader reader, TraceDirectoryReader::Open(trace_dir));
  SEER_ASSIGN_OR_RETURN(*view, CacheView(dataset, reader.run_info()));
  const std::string& recorded = reader.run_info().dataset_identity;
  if (!recorded.empty() && recorded != view->Identity()) {
    return Corrupt(trace_dir + "/trace.json: recorded on dataset " + recorded + " (" + reader.dataset_dir() +
                   "), but " + dataset.dir() + " is dataset " + view->Identity() +
                   "; sample it again with seer sample");
  }
  RecordedTrace trace;
  for (int64_t k = 0; k < reader.num_superbatches(); ++k) {
    SEER_ASSIGN_OR_RETURN(SuperbatchTrace sb, reader.Read(k));
    trace.epochs.push_back(sb.epoch);
    auto& batches = trace.superbatches.emplace_back();
    for (BatchTrace& b : sb.batches) batches.push_back(std::move(b.node_ids));
  }
  return trace;
}

// Typed datasets: the belady rows' accesses and misses per node type.
void PrintTypeRows(const std::vector<PolicyStats>& results, const ReplayGrid& grid) {
  const std::vector<std::string> names = grid.type_names();
  const bool any = std::any_of(results.begin(), results.end(), [](const PolicyStats& s) {
    return s.policy == PolicyKindName(PolicyKind::kBelady) && !s.type_accesses.empty();
  });
  if (names.empty() || !any) return;
  fmt::print("belady per node type:\n{:<14} {:>12} {:<16} {:>13} {:>13} {:>9}\n", "policy", "capacity", "node type",
             "accesses", "misses", "hit ratio");
  for (const PolicyStats& s : results) {
    if (s.policy != PolicyKindName(PolicyKind::kBelady) || s.type_accesses.size() != names.size()) continue;
    for (size_t t = 0; t < names.size(); ++t) {
      const int64_t accesses = s.type_accesses[t], misses = s.type_misses[t];
      const double hit = accesses == 0 ? 0.0 : 1.0 - static_cast<double>(misses) / static_cast<double>(accesses);
      fmt::print("{:<14} {:>12} {:<16} {:>13} {:>13} {:>9}\n", s.policy, s.capacity_rows, names[t], accesses, misses,
                 fmt::format("{:.2f}%", 100.0 * hit));
    }
  }
}

// A result row's "by_type" (typed datasets): [{type, accesses, misses, hit_ratio}, ...].
Json TypeRowsJson(const PolicyStats& s, const std::vector<std::string>& names) {
  Json rows = Json::array();
  for (size_t t = 0; t < names.size() && t < s.type_accesses.size(); ++t) {
    const int64_t accesses = s.type_accesses[t], misses = s.type_misses[t];
    rows.push_back({{"type", names[t]},
                    {"accesses", accesses},
                    {"misses", misses},
                    {"hit_ratio", accesses == 0 ? 0.0 : 1.0 - static_cast<double>(misses) / static_cast<double>(accesses)}});
  }
  return rows;
}

void PrintResults(const std::vector<PolicyStats>& results, const ReplayGridOptions& o) {
  fmt::print("{:<14} {:>12} {:>11} {:>13} {:>13} {:>9} {:>10} {:>12} {:>11}\n", "policy", "capacity", "cap bytes",
             "accesses", "misses", "hit ratio", "fill rows", "blocks read", "bytes read");
  for (const PolicyStats& s : results) {
    fmt::print("{:<14} {:>12} {:>11} {:>13} {:>13} {:>9} {:>10} {:>12} {:>11}\n", s.policy, s.capacity_rows,
               FormatBytes(s.capacity_bytes), s.accesses, s.misses, fmt::format("{:.2f}%", 100.0 * s.hit_ratio()),
               s.fill_rows, s.blocks_read, FormatBytes(s.bytes_read));
  }
  if (o.read_block_bytes > 0) {
    fmt::print("belady admitted {} rows from its block reads; with --read-block it is a greedy rule, not a lower "
               "bound (docs/design.md \"Block-granular reads\").\n",
               [&] {
                 int64_t admits = 0;
                 for (const PolicyStats& s : results) admits += s.block_admits;
                 return admits;
               }());
  } else if (o.belady_scope == BeladyScope::kTrace) {
    fmt::print("belady is the lower bound for this trace: no policy can miss less at the same capacity "
               "(every policy starts full by its own rule; fill reads are not counted as misses).\n");
  } else {
    fmt::print("belady was planned per recorded superbatch (what training does); use --belady-scope trace "
               "for the lower bound.\n");
  }
  fmt::print("presc ranks nodes by visit counts of the trace's first {} epoch(s) (its own pre-sampling, "
             "optimistic); static-degree by out-degree; belady keeps, among rows with no further use in "
             "the superbatch, the higher out-degree (as training does).\n",
             o.presc_epochs);
}

Status WriteResultsJson(const std::string& path, const StatsFiles& files, const std::string& trace_dir,
                        const ReplayGrid& grid, const ReplayGridOptions& o,
                        const std::vector<PolicyStats>& results, const Json& device_tier) {
  Json rows = Json::array();
  for (const PolicyStats& s : results) {
    rows.push_back({{"policy", s.policy},           {"capacity_rows", s.capacity_rows},
                    {"capacity_bytes", s.capacity_bytes}, {"accesses", s.accesses},
                    {"misses", s.misses},           {"hit_ratio", s.hit_ratio()},
                    {"fill_rows", s.fill_rows},     {"fill_blocks", s.fill_blocks},
                    {"fill_bytes", s.fill_bytes},   {"blocks_read", s.blocks_read},
                    {"bytes_read", s.bytes_read},   {"block_admits", s.block_admits}});
    if (!s.type_accesses.empty()) rows.back()["by_type"] = TypeRowsJson(s, grid.type_names());
  }
  const Json doc = {{"dataset", files.dataset},
                    {"trace", trace_dir},
                    {"num_nodes", grid.num_nodes()},
                    {"row_bytes", grid.row_bytes()},
                    {"block_bytes", grid.block_bytes()},
                    {"read_block_bytes", o.read_block_bytes},
                    {"belady_scope", NameOf(kBeladyScopeNames, o.belady_scope)},
                    {"presc_epochs", o.presc_epochs},
                    {"results", rows}};
  Json out = doc;
  if (grid.units().num_types() > 0) {
    // Typed datasets: what a cache row is (num_nodes/row_bytes above are the cache's rows).
    out["typed_cache"] = {{"layout", grid.units().by_bytes() ? "bytes" : "padded"},
                          {"unit_bytes", grid.units().unit_bytes()},
                          {"units", grid.units().num_units()},
                          {"nodes", grid.units().num_nodes()}};
  }
  if (!device_tier.is_null()) out["device_tier"] = device_tier;
  return WriteJsonFileAtomically(path, out);
}

Status RunStats(const StatsFiles& files, const ReplayGridOptions& o, const DeviceTierFlags& device) {
  // Outputs are checked before the replay, not after it (storage/base/atomic_file.h).
  for (const std::string& out : {files.json, files.svg}) {
    if (!out.empty()) SEER_RETURN_IF_ERROR(CheckOutputPath(out));
  }
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::OpenAnyKind(files.dataset));
  const bool typed = dataset.manifest().typed();
  if (typed && !device.capacities.empty()) {
    return InvalidArgument(files.dataset + ": --device-capacity is not supported on typed datasets yet");
  }
  if (!typed) SEER_RETURN_IF_ERROR(ValidateSmallFiles(dataset, true).status());
  const std::string trace_dir = files.trace.empty() ? files.dataset + "/trace" : files.trace;
  DatasetManifest view;
  SEER_ASSIGN_OR_RETURN(RecordedTrace trace, LoadRecordedTrace(trace_dir, dataset, &view));
  // The device-tier replay reads the trace before the policy grid takes it over.
  const DeviceTierGridOptions device_options = MakeDeviceTierGridOptions(device, o);
  DeviceTierGridResult device_result;
  if (!device.capacities.empty()) {
    SEER_ASSIGN_OR_RETURN(device_result, RunDeviceTierGrid(dataset, trace, device_options));
  }
  SEER_ASSIGN_OR_RETURN(ReplayGrid grid, ReplayGrid::Create(dataset, view, std::move(trace), o, trace_dir));
  if (typed) {
    fmt::print("seer stats: typed dataset ({}), feature cache {}\n", dataset.manifest().TypedShape(),
               grid.units().Describe(grid.type_names()));
  }
  fmt::print("seer stats: {}, trace {}: {} superbatches, {} batches, {} accesses; {} {} x {} B rows, {} B blocks{}\n",
             files.dataset, trace_dir, grid.num_superbatches(), grid.num_batches(), grid.num_accesses(),
             grid.num_nodes(), grid.units().identity() ? "nodes" : "units", grid.row_bytes(), grid.block_bytes(),
             o.read_block_bytes > 0 ? " (--read-block: one read per distinct block of a batch's misses; belady caches "
                                      "a block's other rows used before what they would evict)"
                                    : " (per-row reads, counted as the distinct aligned blocks of a batch's misses)");
  std::fflush(stdout);
  SEER_ASSIGN_OR_RETURN(std::vector<PolicyStats> results, grid.Run());
  PrintResults(results, o);
  PrintTypeRows(results, grid);
  if (!device.capacities.empty()) PrintDeviceTierResults(device_result, device_options);
  if (!files.json.empty()) {
    SEER_RETURN_IF_ERROR(WriteResultsJson(files.json, files, trace_dir, grid, o, results,
                                          device.capacities.empty() ? Json() : DeviceTierResultsJson(device_result)));
  }
  if (!files.svg.empty()) {
    SEER_RETURN_IF_ERROR(WriteFileAtomically(
        files.svg, RenderHitRatioSvg(results, grid.capacity_rows(), grid.num_nodes(),
                                     "Feature-cache hit ratio vs capacity")));
  }
  return Status::Ok();
}

}  // namespace

CommandMain RegisterStatsCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "stats",
      "Replay a trace from `seer sample` under every feature-cache policy and capacity; "
      "report misses, hit ratio, blocks and bytes read (Belady = lower bound)");
  auto files = std::make_shared<StatsFiles>();
  auto options = std::make_shared<ReplayGridOptions>();
  auto device = std::make_shared<DeviceTierFlags>();
  AddStatsFlags(cmd, files.get(), options.get());
  AddDeviceTierFlags(cmd, device.get());
  return [files, options, device]() -> int {
    Status st = RunStats(*files, *options, *device);
    return st.ok() ? 0 : ReportError("stats", st);
  };
}

}  // namespace seer::cli
