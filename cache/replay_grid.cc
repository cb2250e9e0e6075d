#include "cache/replay_grid.h"

#include "cache/feature_unit_ids.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "cache/degrees.h"
#include "storage/base/byte_size.h"
#include "storage/base/parse_number.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"
#include "storage/io/direct_reader.h"

namespace seer {
namespace {

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool AllDigits(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The O_DIRECT alignment of features.bin, or of a typed dataset's first featured type's
// features file (512 when no type has features).
Result<int64_t> FeatureBlockBytes(const Dataset& dataset) {
  std::string path = dataset.PathOf(dataset_files::kFeatures);
  if (dataset.manifest().typed()) {
    const auto& types = dataset.manifest().node_types;
    const auto featured = std::find_if(types.begin(), types.end(), [](const DatasetNodeType& t) {
      return t.feature_dim > 0 && !t.features.empty();
    });
    if (featured == types.end()) return int64_t{512};
    path = dataset.PathOf(featured->features);
  }
  SEER_ASSIGN_OR_RETURN(UniqueFd fd, UniqueFd::Open(path, O_RDONLY));
  return DirectIoAlignment(fd.get());
}

// T + 1 global id offsets of a typed manifest's node types (empty for a homogeneous one).
std::vector<int64_t> TypeOffsets(const DatasetManifest& m) {
  if (!m.typed()) return {};
  std::vector<int64_t> offsets(1, 0);
  for (const DatasetNodeType& t : m.node_types) offsets.push_back(offsets.back() + t.count);
  return offsets;
}

}  // namespace

int64_t CacheCapacity::Rows(int64_t num_nodes, int64_t row_bytes) const {
  switch (unit) {
    case Unit::kPercentOfNodes:
      return static_cast<int64_t>(std::floor(percent / 100.0 * static_cast<double>(num_nodes)));
    case Unit::kRows:
      return count;
    case Unit::kBytes:
      return row_bytes > 0 ? count / row_bytes : 0;
  }
  return 0;
}

Result<CacheCapacity> ParseCacheCapacity(const std::string& text) {
  if (text.empty()) return InvalidArgument("empty capacity");
  CacheCapacity c;
  c.text = text;
  if (text.back() == '%') {
    c.unit = CacheCapacity::Unit::kPercentOfNodes;
    c.percent = ParseNumber<double>(std::string_view(text).substr(0, text.size() - 1)).value_or(-1);
    if (!(c.percent >= 0) || c.percent > 100) {
      return InvalidArgument(fmt::format("bad capacity '{}' (expected a percentage 0-100%)", text));
    }
    return c;
  }
  if (AllDigits(text)) {
    c.unit = CacheCapacity::Unit::kRows;
    SEER_ASSIGN_OR_RETURN(c.count, ParseNumberOr<int64_t>(text, "capacity", "a row count below 2^63"));
    return c;
  }
  std::string bytes_text = text;
  if (bytes_text.back() == 'B' && bytes_text.size() > 1 &&
      std::isdigit(static_cast<unsigned char>(bytes_text[bytes_text.size() - 2]))) {
    bytes_text.pop_back();  // "4096B"
  }
  auto bytes = ParseBytes(bytes_text);
  if (!bytes.ok()) {
    return InvalidArgument(fmt::format("bad capacity '{}' (expected 5%, a row count, or bytes like 512M)", text));
  }
  c.unit = CacheCapacity::Unit::kBytes;
  c.count = *bytes;
  return c;
}

Result<std::vector<CacheCapacity>> ParseCacheCapacities(const std::string& comma_list) {
  std::vector<CacheCapacity> out;
  for (const std::string& item : SplitComma(comma_list)) {
    SEER_ASSIGN_OR_RETURN(CacheCapacity c, ParseCacheCapacity(item));
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<PolicyKind>> ParsePolicyKinds(const std::string& comma_list) {
  std::vector<PolicyKind> out;
  for (const std::string& item : SplitComma(comma_list)) {
    SEER_ASSIGN_OR_RETURN(PolicyKind kind, ParsePolicyKind(item));
    out.push_back(kind);
  }
  return out;
}

namespace {
Status CheckTraceIds(const RecordedTrace& trace, int64_t num_nodes, const std::string& trace_name) {
  for (const auto& batches : trace.superbatches) {
    for (const std::vector<int64_t>& batch : batches) {
      for (int64_t v : batch) {
        if (v < 0 || v >= num_nodes) {
          return Corrupt(fmt::format("{}: node id {} outside the dataset's {} nodes (trace of another dataset?)",
                                     trace_name, v, num_nodes));
        }
      }
    }
  }
  return Status::Ok();
}
}  // namespace

Result<ReplayGrid> ReplayGrid::Create(const Dataset& dataset, RecordedTrace trace,
                                      const ReplayGridOptions& options, const std::string& trace_name) {
  return Create(dataset, dataset.manifest(), std::move(trace), options, trace_name);
}

Result<ReplayGrid> ReplayGrid::Create(const Dataset& dataset, const DatasetManifest& view, RecordedTrace trace,
                                      const ReplayGridOptions& options, const std::string& trace_name) {
  if (options.presc_epochs < 1) return InvalidArgument("presc epochs must be at least 1");
  if (view.num_nodes != dataset.manifest().num_nodes) {
    return InvalidArgument(fmt::format("{}: a view of {} nodes, the dataset has {}", dataset.dir(), view.num_nodes,
                                       dataset.manifest().num_nodes));
  }
  if (dataset.manifest().typed() && options.read_block_bytes > 0) {
    return InvalidArgument(dataset.dir() + ": --read-block is not supported on typed datasets yet (rows of several files)");
  }
  ReplayGrid grid;
  grid.dataset_ = &dataset;
  grid.view_ = view;
  grid.type_offsets_ = TypeOffsets(dataset.manifest());
  if (dataset.manifest().typed()) {
    // The feature cache's layout, as training lays it out (DataPath::OpenTypedReaders).
    SEER_ASSIGN_OR_RETURN(grid.units_,
                          FeatureUnits::ForRun(dataset.manifest(), view.feature_row_bytes(), options.typed_rows_padded));
    if (!grid.units_.identity()) {
      // Node ids are checked against the nodes, then replaced by their units.
      SEER_RETURN_IF_ERROR(CheckTraceIds(trace, view.num_nodes, trace_name));
      for (auto& batches : trace.superbatches) {
        for (std::vector<int64_t>& batch : batches) {
          std::vector<int64_t> units_of_batch;
          grid.units_.Expand(batch.data(), static_cast<int64_t>(batch.size()), &units_of_batch);
          batch = std::move(units_of_batch);
        }
      }
      grid.view_ = grid.units_.CacheRows(view);
      grid.type_offsets_ = grid.units_.unit_offsets();
    }
  }
  grid.options_ = options;
  const DatasetManifest& m = grid.view_;
  grid.row_bytes_ = m.feature_row_bytes();
  for (PolicyKind kind : options.policies) {
    if (std::find(grid.policies_.begin(), grid.policies_.end(), kind) == grid.policies_.end()) {
      grid.policies_.push_back(kind);
    }
  }
  for (const CacheCapacity& c : options.capacities) {
    grid.capacity_rows_.push_back(std::min(c.Rows(m.num_nodes, grid.row_bytes_), m.num_nodes));
  }
  std::sort(grid.capacity_rows_.begin(), grid.capacity_rows_.end());
  grid.capacity_rows_.erase(std::unique(grid.capacity_rows_.begin(), grid.capacity_rows_.end()),
                            grid.capacity_rows_.end());
  if (grid.policies_.empty() || grid.capacity_rows_.empty()) {
    return InvalidArgument("no policies or no capacities given");
  }
  grid.block_bytes_ = options.block_bytes;
  if (options.read_block_bytes < 0 || (options.read_block_bytes & (options.read_block_bytes - 1)) != 0) {
    return InvalidArgument(fmt::format("--read-block {}: must be 0 (per-row reads) or a power of two bytes, e.g. 4K",
                                       options.read_block_bytes));
  }
  if (options.read_block_bytes > 0) {
    if (options.block_bytes > 0 && options.block_bytes != options.read_block_bytes) {
      return InvalidArgument(fmt::format("--block-bytes {} and --read-block {} differ: reads are counted in the read "
                                         "blocks; give one of them",
                                         options.block_bytes, options.read_block_bytes));
    }
    grid.block_bytes_ = options.read_block_bytes;
  }
  if (grid.block_bytes_ <= 0) {
    SEER_ASSIGN_OR_RETURN(grid.block_bytes_, FeatureBlockBytes(dataset));
  }

  grid.trace_ = std::move(trace);
  for (const auto& batches : grid.trace_.superbatches) {
    grid.per_superbatch_.push_back(MakeIdSpans(batches));
    grid.whole_.insert(grid.whole_.end(), grid.per_superbatch_.back().begin(), grid.per_superbatch_.back().end());
  }
  for (const IdSpan& b : grid.whole_) grid.accesses_ += b.size;
  // (Units were checked as nodes before they were expanded.)
  if (grid.units_.identity()) SEER_RETURN_IF_ERROR(CheckTraceIds(grid.trace_, m.num_nodes, trace_name));
  return grid;
}

// The node ranking of static-degree (out-degree) and presc (visits in the first
// presc_epochs epochs of the trace), long enough for the largest capacity.
Result<std::vector<int64_t>> ReplayGrid::Ranking(PolicyKind kind) const {
  const int64_t max_capacity = capacity_rows_.back();
  if (kind == PolicyKind::kStaticDegree) {
    // RankNodesByScore(ComputeOutDegrees(dataset), K), streamed, as training ranks it
    // (and over every relation of a typed dataset, in global ids).
    PolicyOptions degree_order;
    SEER_RETURN_IF_ERROR(MakeCacheRowScores(*dataset_, units_, max_capacity, &degree_order));
    return std::move(degree_order.ranking);
  }
  if (kind != PolicyKind::kPresc) return std::vector<int64_t>{};
  const auto& epochs = trace_.epochs;
  const int64_t first_epoch = epochs.empty() ? 0 : *std::min_element(epochs.begin(), epochs.end());
  std::vector<IdSpan> presc_batches;
  for (size_t k = 0; k < per_superbatch_.size(); ++k) {
    if (epochs[k] < first_epoch + options_.presc_epochs) {
      presc_batches.insert(presc_batches.end(), per_superbatch_[k].begin(), per_superbatch_[k].end());
    }
  }
  return RankNodesByScore(CountVisits(presc_batches, view_.num_nodes), max_capacity);
}

std::vector<std::string> ReplayGrid::type_names() const {
  std::vector<std::string> names;
  for (const DatasetNodeType& t : dataset_->manifest().node_types) names.push_back(t.name);
  return names;
}

Result<std::vector<PolicyStats>> ReplayGrid::Run() const {
  SimulationOptions sim;
  sim.num_nodes = view_.num_nodes;
  sim.row_bytes = row_bytes_;
  sim.block_bytes = block_bytes_;
  sim.type_offsets = type_offsets_;
  const std::vector<std::vector<IdSpan>> whole_trace = {whole_};
  std::vector<PolicyStats> results;
  ProgressReporter progress("stats", static_cast<int64_t>(policies_.size() * capacity_rows_.size()), "runs",
                            options_.show_progress);
  for (PolicyKind kind : policies_) {
    PolicyOptions policy_options;
    SEER_ASSIGN_OR_RETURN(policy_options.ranking, Ranking(kind));
    if (kind == PolicyKind::kBelady) {
      // The tie rule's scores and fill ranking, exactly as training sets them.
      SEER_RETURN_IF_ERROR(MakeCacheRowScores(*dataset_, units_, capacity_rows_.back(), &policy_options));
    }
    policy_options.planner.device = options_.planner;
    if (kind == PolicyKind::kBelady && options_.read_block_bytes > 0) {
      policy_options.planner.read_blocks = ReadBlocks{row_bytes_, options_.read_block_bytes, sim.num_nodes};
    }
    for (int64_t capacity : capacity_rows_) {
      if (kind == PolicyKind::kNone && capacity != capacity_rows_.front()) continue;
      policy_options.capacity_rows = capacity;
      SEER_ASSIGN_OR_RETURN(std::unique_ptr<CachePolicy> policy, MakeCachePolicy(kind, policy_options));
      const bool lower_bound = kind == PolicyKind::kBelady && options_.belady_scope == BeladyScope::kTrace;
      SEER_ASSIGN_OR_RETURN(PolicyStats stats,
                            SimulatePolicy(*policy, lower_bound ? whole_trace : per_superbatch_, sim));
      results.push_back(std::move(stats));
      progress.Add(1);
    }
  }
  progress.Finish();
  return results;
}

}  // namespace seer
