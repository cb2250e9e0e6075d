// `seer ncache`: builds (and describes) the static neighbor cache of a dataset
// (cache/neighbor_cache.h, Ginex §3.2).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cache/neighbor_cache.h"
#include "commands.h"
#include "flag_binding.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/compact_indptr.h"
#include "storage/dataset/dataset.h"
#include "storage/dataset/small_files.h"

namespace seer::cli {

namespace {

void PrintStats(const char* verb, const std::string& dir, const NeighborCache& cache) {
  const NeighborCacheStats& s = cache.stats();
  const double node_pct = s.num_nodes ? 100.0 * s.nodes_cached / s.num_nodes : 0.0;
  const double edge_pct = s.num_edges ? 100.0 * s.edges_cached / s.num_edges : 0.0;
  fmt::print(
      "seer ncache: {} {}: budget {} bytes ({}), uses {} bytes = table {} + lists {}; {} of {} nodes ({:.2f}%), "
      "{} of {} edges ({:.2f}%) cached; score {}{}; dataset {}\n",
      verb, dir, s.budget_bytes, FormatBytes(s.budget_bytes), s.bytes, s.table_bytes, s.lists_bytes, s.nodes_cached,
      s.num_nodes, node_pct, s.edges_cached, s.num_edges, edge_pct, cache.score_rule(),
      cache.ranked_fanouts().empty()
          ? std::string()
          : fmt::format(" (fanouts {}, batch size {})", fmt::join(cache.ranked_fanouts(), ","), cache.ranked_batch_size()),
      cache.dataset_identity().empty() ? std::string("not recorded") : cache.dataset_identity());
}

}  // namespace

CommandMain RegisterNcacheCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("ncache", "Build or describe a dataset's static neighbor cache");
  cmd->require_subcommand(1);
  struct Flags {
    std::string dataset;
    std::string budget = "0";
    std::string out;
    bool force = false;
    bool quiet = false;
    NeighborCacheBuildOptions options;
  };
  auto flags = std::make_shared<Flags>();
  auto* build = cmd->add_subcommand(
      "build",
      "Rank nodes by expected list reads per cached byte (or Ginex's out-degree/in-degree) and "
      "cache their in-neighbor lists up to a byte budget (the per-node table included); writes DIR/ncache/");
  build->add_option("dataset", flags->dataset, "Dataset directory")->required();
  build->add_option("--budget", flags->budget,
                    "Bytes for table + lists: 0 (disabled), 4096, 512M, 2G, or a percentage of "
                    "the topology such as 25%")
      ->capture_default_str();
  build->add_option("--out", flags->out, "Output directory (default: DATASET/ncache)")
      ->capture_default_str();
  AddEnumOption(build, "--score", &flags->options.score, kNeighborCacheScoreNames, "score",
                "Ranking: lookups (expected reads of the list per mini-batch / its bytes, from the train "
                "split, --fanouts and --batch-size) or out-in (out-degree / in-degree, Ginex)");
  AddFanoutsOption(build, "--fanouts", &flags->options.fanouts, "Fan-outs the cache serves (--score lookups)");
  build->add_option("--batch-size", flags->options.batch_size, "Seeds per mini-batch (--score lookups)")
      ->capture_default_str();
  AddBytesOption(build, "--scan-memory", &flags->options.scan_memory_bytes,
                 "--score out-in: bytes of out-degree counters per pass over indices.bin (4 B per node; "
                 "fewer than the nodes need = more passes; the build holds no per-node array)");
  build->add_flag("--force", flags->force, "Overwrite an existing neighbor cache");
  build->add_flag("--quiet", flags->quiet, "No progress lines");
  auto* info = cmd->add_subcommand("info", "Print the manifest of DATASET/ncache (or --out)");
  info->add_option("dataset", flags->dataset, "Dataset directory")->required();
  info->add_option("--out", flags->out, "Neighbor cache directory (default: DATASET/ncache)")
      ->capture_default_str();

  return [flags, build] {
    auto dataset = Dataset::Open(flags->dataset);
    if (!dataset.ok()) return ReportError("ncache", dataset.status());
    const std::string dir = flags->out.empty() ? NeighborCache::DefaultDir(*dataset) : flags->out;
    SweepAtStart({flags->dataset, dir}, false);
    // The small files fully, with their checksums (one sequential pass), before using them.
    if (Status st = ValidateSmallFiles(*dataset, !flags->quiet).status(); !st.ok()) return ReportError("ncache", st);
    if (!build->parsed()) {
      auto cache = NeighborCache::Load(dir, *dataset);
      if (!cache.ok()) return ReportError("ncache", cache.status());
      PrintStats("loaded", dir, *cache);
      return 0;
    }
    auto budget = ParseNeighborCacheBudget(flags->budget, dataset->manifest());
    if (!budget.ok()) return ReportError("ncache", budget.status().WithContext("--budget"));
    ProgressReporter clock("ncache", 0, "", false);
    NeighborCacheBuildOptions options = flags->options;
    options.show_progress = !flags->quiet;
    Result<NeighborCache> cache = NeighborCache();
    if (options.score == NeighborCacheScore::kOutInDegree) {  // streams: no indptr in RAM
      cache = NeighborCache::BuildOutInStreaming(*dataset, *budget, options);
    } else {
      auto indptr = CompactIndptr::Load(*dataset);  // 4.1 B/node, not the file's 8
      if (!indptr.ok()) return ReportError("ncache", indptr.status());
      cache = NeighborCache::Build(*dataset, *indptr, *budget, options);
    }
    if (!cache.ok()) return ReportError("ncache", cache.status());
    Status st = cache->Save(dir, flags->force);
    if (!st.ok()) return ReportError("ncache", st);
    PrintStats("wrote", dir, *cache);
    fmt::print("seer ncache: {:.2f} s, peak memory {}\n", clock.ElapsedSeconds(), FormatBytes(PeakRssBytes()));
    return 0;
  };
}

}  // namespace seer::cli
