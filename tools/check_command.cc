// `seer check DIR [--deep]`: validates a dataset directory (storage/dataset/dataset_check.h).
// Exit 0 only when the dataset is valid; otherwise one error line naming file + position.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "storage/base/byte_size.h"
#include "storage/base/progress.h"
#include "storage/dataset/dataset_check.h"

namespace seer::cli {

CommandMain RegisterCheckCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("check", "Validate a dataset directory (exit 0 only if valid)");
  struct Flags {
    std::string dir;
    bool deep = false;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("dir", flags->dir, "Dataset directory")->required();
  cmd->add_flag("--deep", flags->deep, "Also verify the xxh64 checksum of every file");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");
  return [flags] {
    DatasetCheckOptions options;
    options.deep = flags->deep;
    options.show_progress = !flags->quiet;
    ProgressReporter clock("check", 0, "", false);
    auto summary = CheckDataset(flags->dir, options);
    if (!summary.ok()) return ReportError("check", summary.status());
    const auto& m = summary->manifest;
    const std::string checksums =
        flags->deep ? fmt::format("checksums verified, {} files, ", summary->checksums_verified) : "";
    fmt::print(
        "seer check: {} OK: {} nodes, {} edges ({}, max in-degree {}), {} features x {}, {} classes ({} labeled), "
        "train/valid/test {}/{}/{}, {}{} read in {:.1f} s\n",
        flags->dir, m.num_nodes, m.num_edges, IndexDtypeName(m.index_dtype), summary->max_in_degree, m.feature_dim,
        FeatureDtypeName(m.feature_dtype), m.num_classes, summary->num_labeled, summary->num_train,
        summary->num_valid, summary->num_test, checksums, FormatBytes(summary->bytes_read), clock.ElapsedSeconds());
    return 0;
  };
}

}  // namespace seer::cli
