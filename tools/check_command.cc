// `seer check DIR [--deep]`: validates a dataset directory (storage/dataset/dataset_check.h).
// Exit 0 only when the dataset is valid; otherwise one error line naming file + position.
#include <cstdio>
#include <memory>
#include <string>

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
    std::printf(
        "seer check: %s OK: %lld nodes, %lld edges (%s, max in-degree %lld), %lld features x %s, "
        "%lld classes (%lld labeled), train/valid/test %lld/%lld/%lld, %s%s read in %.1f s\n",
        flags->dir.c_str(), static_cast<long long>(m.num_nodes), static_cast<long long>(m.num_edges),
        IndexDtypeName(m.index_dtype), static_cast<long long>(summary->max_in_degree),
        static_cast<long long>(m.feature_dim), FeatureDtypeName(m.feature_dtype),
        static_cast<long long>(m.num_classes), static_cast<long long>(summary->num_labeled),
        static_cast<long long>(summary->num_train), static_cast<long long>(summary->num_valid),
        static_cast<long long>(summary->num_test),
        flags->deep ? ("checksums verified, " + std::to_string(summary->checksums_verified) + " files, ").c_str() : "",
        FormatBytes(summary->bytes_read).c_str(), clock.ElapsedSeconds());
    return 0;
  };
}

}  // namespace seer::cli
