// `seer reorder DIR --order bfs|degree --out OUT`: renumbers a dataset's nodes for read
// locality (storage/prep/node_reorder.h) and writes the renumbered dataset; predictions
// keep reporting the original ids (node_order.bin, storage/dataset/node_order.h).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/stale_temp.h"
#include "storage/prep/node_reorder.h"

namespace seer::cli {

CommandMain RegisterReorderCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "reorder", "Renumber a dataset's nodes so rows sampled together share 4 KiB blocks (read locality)");
  struct Flags {
    std::string dir;
    std::string out;
    std::string order = "bfs";
    std::string memory_budget;
    bool force = false;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("dir", flags->dir, "Dataset directory to read")->required();
  cmd->add_option("--out", flags->out, "Where to write the renumbered dataset (the input itself with --force)")
      ->required();
  cmd->add_option("--order", flags->order,
                  "bfs: breadth-first over in-neighbor lists (a node's in-neighbors get consecutive numbers); "
                  "degree: by out-degree, hottest rows first")
      ->check(CLI::IsMember({"bfs", "degree"}))
      ->capture_default_str();
  cmd->add_option("--memory-budget", flags->memory_budget,
                  "Bounded memory for graphs larger than RAM (e.g. 2G): external sorts and streamed passes "
                  "within this budget, scratch files next to --out, the same output; without it the pass keeps "
                  "24 B per node in memory");
  cmd->add_flag("--force", flags->force, "Overwrite an existing dataset in --out (it stays intact until the end)");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");
  return [flags] {
    ReorderOptions options;
    auto method = ParseNodeOrderMethod(flags->order);
    if (!method.ok()) return ReportError("reorder", method.status());
    options.method = *method;
    options.force = flags->force;
    if (!flags->memory_budget.empty()) {
      auto budget = ParseBytes(flags->memory_budget);
      if (!budget.ok() || *budget <= 0) {
        return ReportError("reorder", InvalidArgument("--memory-budget: '" + flags->memory_budget +
                                                      "' is not a positive size (e.g. 512M, 2G)"));
      }
      options.memory_budget_bytes = *budget;
    }
    options.show_progress = !flags->quiet;
    options.created_by = fmt::format("seer reorder --order {}", flags->order);
    SweepAtStart({flags->out, RealParentDirectory(flags->out)}, false);
    auto summary = ReorderDataset(flags->dir, flags->out, options);
    if (!summary.ok()) return ReportError("reorder", summary.status());
    const double seconds = summary->order_seconds + summary->rewrite_seconds;
    fmt::print(
        "seer reorder: wrote {}: {} nodes, {} edges renumbered by {}; a neighbor list's rows span {:.2f} blocks of "
        "4 KiB on average (was {:.2f}); order {:.1f} s, rewrite {:.1f} s ({:.0f} ns per edge), peak RSS {} (with the "
        "dataset's pages mapped read-only, which the kernel reclaims under a memory limit)\n",
        flags->out, summary->num_nodes, summary->num_edges, flags->order, summary->blocks_per_list_after,
        summary->blocks_per_list_before, summary->order_seconds, summary->rewrite_seconds,
        summary->num_edges > 0 ? seconds * 1e9 / static_cast<double>(summary->num_edges) : 0.0,
        FormatBytes(PeakRssBytes()));
    return 0;
  };
}

}  // namespace seer::cli
