// `seer check DIR [--deep]`: validates a dataset directory (storage/dataset/dataset_check.h),
// homogeneous or typed (then one summary line per node type and per relation).
// Exit 0 only when the dataset is valid; otherwise one error line naming file + position.
// --deep also loads DIR/ncache (when present): built for this dataset, its files' checksums,
// and every cached list equal to indptr's in-degree and inside the packed array.
#include <unistd.h>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "storage/base/byte_size.h"
#include "storage/base/progress.h"
#include "cache/neighbor_cache.h"
#include "storage/dataset/dataset_check.h"

namespace seer::cli {
namespace {

// A typed dataset: one line for the whole, then one per node type and per relation.
void PrintTypedSummary(const std::string& dir, const DatasetCheckSummary& summary, double seconds) {
  const DatasetManifest& m = summary.manifest;
  fmt::print("seer check: {} OK: typed, {}, {} nodes, {} edges, checksums verified, {} files, {} read in {:.1f} s\n",
             dir, m.TypedShape(), m.num_nodes, m.num_edges, summary.checksums_verified,
             FormatBytes(summary.bytes_read), seconds);
  for (size_t i = 0; i < m.node_types.size(); ++i) {
    const DatasetNodeType& t = m.node_types[i];
    const NodeTypeCheckSummary& s = summary.node_types[i];
    std::string features = t.feature_dim > 0 ? fmt::format("{} features x {}", t.feature_dim,
                                                            FeatureDtypeName(t.feature_dtype))
                                             : std::string("no features");
    std::string labels = t.num_classes > 0 ? fmt::format(", {} classes ({} labeled)", t.num_classes, s.num_labeled)
                                           : std::string();
    std::string splits = t.train.empty() && t.valid.empty() && t.test.empty()
                             ? std::string()
                             : fmt::format(", train/valid/test {}/{}/{}", s.num_train, s.num_valid, s.num_test);
    fmt::print("  node type {}: {} nodes, {}{}{}\n", t.name, t.count, features, labels, splits);
  }
  for (size_t i = 0; i < m.relations.size(); ++i) {
    const DatasetRelation& r = m.relations[i];
    fmt::print("  relation {}: {} edges ({}, max in-degree {})\n", r.key(), r.num_edges,
               IndexDtypeName(r.index_dtype), summary.relations[i].max_in_degree);
  }
}

}  // namespace

CommandMain RegisterCheckCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand("check", "Validate a dataset directory (exit 0 only if valid)");
  struct Flags {
    std::string dir;
    bool deep = false;
    bool quiet = false;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("dir", flags->dir, "Dataset directory")->required();
  cmd->add_flag("--deep", flags->deep,
                "Also verify the xxh64 checksum of features.bin (the other files are hashed by every check), that "
                "every feature value is finite (the first NaN/inf is named), "
                "and the neighbor cache in DIR/ncache");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines");
  return [flags] {
    DatasetCheckOptions options;
    options.deep = flags->deep;
    options.show_progress = !flags->quiet;
    ProgressReporter clock("check", 0, "", false);
    auto summary = CheckDataset(flags->dir, options);
    if (!summary.ok()) return ReportError("check", summary.status());
    if (summary->manifest.typed()) {
      PrintTypedSummary(flags->dir, *summary, clock.ElapsedSeconds());
      return 0;
    }
    std::string ncache;
    if (flags->deep) {
      auto dataset = Dataset::Open(flags->dir);
      if (!dataset.ok()) return ReportError("check", dataset.status());
      const std::string dir = NeighborCache::DefaultDir(*dataset);
      if (::access((dir + "/" + NeighborCache::kManifestName).c_str(), F_OK) == 0) {
        auto cache = NeighborCache::Load(dir, *dataset);
        if (!cache.ok()) return ReportError("check", cache.status());
        auto indptr = dataset->LoadIndptr();
        if (!indptr.ok()) return ReportError("check", indptr.status());
        if (Status st = cache->Validate(*indptr); !st.ok()) return ReportError("check", st.WithContext(dir));
        ncache = fmt::format("neighbor cache {} OK ({} lists), ", dir, cache->stats().nodes_cached);
      }
    }
    const auto& m = summary->manifest;
    std::string checksums = fmt::format("checksums verified, {} files, {}", summary->checksums_verified, ncache);
    if (m.edge_splits.present()) {  // seer split-edges
      checksums = fmt::format("held-out edges valid/test {}/{} (none in the topology), {}", m.edge_splits.num_valid,
                              m.edge_splits.num_test, checksums);
      if (m.edge_splits.negatives_per_edge > 0) {
        checksums = fmt::format("{} eval negatives per held-out edge, {}", m.edge_splits.negatives_per_edge, checksums);
      }
    }
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
