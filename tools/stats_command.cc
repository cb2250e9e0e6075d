// `seer stats`: replays a trace recorded by `seer sample` under every cache policy and
// capacity (cache/hit_simulator.h) and prints misses, hit ratio, blocks and bytes read.
#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cache/degrees.h"
#include "cache/hit_simulator.h"
#include "cache/policies.h"
#include "commands.h"
#include "inspector/trace_store.h"
#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/progress.h"
#include "storage/base/unique_fd.h"
#include "storage/dataset/dataset.h"
#include "storage/io/direct_reader.h"

namespace seer::cli {
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

// "5%" = of num_nodes; "12345" = rows; "512M", "2GiB", "4096B" = bytes (rounded down to
// whole rows).
Result<int64_t> ParseCapacity(const std::string& text, int64_t num_nodes, int64_t row_bytes) {
  if (text.empty()) return InvalidArgument("empty capacity");
  if (text.back() == '%') {
    char* end = nullptr;
    const double pct = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || !(pct >= 0) || pct > 100) {
      return InvalidArgument(fmt::format("bad capacity '{}' (expected a percentage 0-100%)", text));
    }
    return static_cast<int64_t>(std::floor(pct / 100.0 * static_cast<double>(num_nodes)));
  }
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return static_cast<int64_t>(std::stoll(text));
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
  return row_bytes > 0 ? *bytes / row_bytes : 0;
}

std::string Percent(double x) { return fmt::format("{:.2f}%", 100.0 * x); }

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      continue;
    }
    out += c;
  }
  return out;
}

// A standalone SVG line chart: hit ratio (0..1) vs capacity (rows, shown also as % of
// nodes), one polyline per policy, axes with ticks, legend.
std::string RenderSvg(const std::vector<PolicyStats>& rows, const std::vector<std::string>& policies,
                      const std::vector<int64_t>& capacities, int64_t num_nodes,
                      const std::string& title) {
  const double W = 760, H = 460, left = 70, right = 190, top = 50, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  int64_t max_cap = 1;
  for (int64_t c : capacities) max_cap = std::max(max_cap, c);
  auto x_of = [&](int64_t c) { return left + pw * static_cast<double>(c) / static_cast<double>(max_cap); };
  auto y_of = [&](double r) { return top + ph * (1.0 - r); };
  const char* colors[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#7f7f7f", "#9467bd", "#8c564b"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{:.0f}\" y=\"28\" font-size=\"15\" text-anchor=\"middle\">{}</text>\n",
      W, H, W, H, left + pw / 2, title);
  // Axes and grid.
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n",
                     left, top, top + ph);
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\"/>\n",
                     left, top + ph, left + pw);
  for (int t = 0; t <= 10; t += 2) {
    const double r = t / 10.0;
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n",
                       left, y_of(r), left + pw, y_of(r));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}%</text>\n", left - 6,
                       y_of(r) + 4, r * 100);
  }
  for (int64_t c : capacities) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\"/>\n",
                       x_of(c), top + ph, top + ph + 5);
    const double pct = num_nodes > 0 ? 100.0 * static_cast<double>(c) / static_cast<double>(num_nodes) : 0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3g}%</text>\n", x_of(c),
                       top + ph + 18, pct);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">cache capacity (% of {} nodes)</text>\n",
                     left + pw / 2, H - 15, num_nodes);
  svg += fmt::format("<text transform=\"translate(18,{:.1f}) rotate(-90)\" text-anchor=\"middle\">hit ratio</text>\n",
                     top + ph / 2);
  for (size_t k = 0; k < policies.size(); ++k) {
    const char* color = colors[k % (sizeof colors / sizeof colors[0])];
    std::string points;
    for (const PolicyStats& s : rows) {
      if (s.policy != policies[k]) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(s.capacity_rows), y_of(s.hit_ratio()));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x_of(s.capacity_rows),
                         y_of(s.hit_ratio()), color);
    }
    // A policy without capacity (none) is one value: draw it across the chart.
    int n_points = 0;
    double y_single = 0;
    for (const PolicyStats& s : rows) {
      if (s.policy == policies[k]) {
        ++n_points;
        y_single = y_of(s.hit_ratio());
      }
    }
    if (n_points == 1) points = fmt::format("{:.1f},{:.1f} {:.1f},{:.1f}", left, y_single, left + pw, y_single);
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, points);
    const double ly = top + 10 + 22.0 * static_cast<double>(k);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"/>\n",
                       left + pw + 20, ly, left + pw + 45, ly, color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + pw + 52, ly + 4, policies[k]);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace

CommandMain RegisterStatsCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "stats",
      "Replay a trace from `seer sample` under every feature-cache policy and capacity; "
      "report misses, hit ratio, blocks and bytes read (Belady = lower bound)");
  struct Flags {
    std::string dataset;
    std::string trace;
    std::string capacities = "1%,5%,10%,20%";
    std::string policies = "belady,static-degree,presc,lru,none";
    int64_t presc_epochs = 1;
    std::string planner = "auto";
    std::string belady_scope = "trace";
    int64_t block_bytes = 0;
    std::string json;
    std::string svg;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dataset", f->dataset, "Dataset directory")->required();
  cmd->add_option("--trace", f->trace, "Trace directory written by `seer sample --out` (default: DATASET/trace)")
      ->capture_default_str();
  cmd->add_option("--capacities", f->capacities,
                  "Comma-separated cache sizes: N% of the nodes, a row count (digits only), or bytes "
                  "(512M, 2G, 4096B)")
      ->capture_default_str();
  cmd->add_option("--policies", f->policies, "Comma-separated: belady, static-degree, presc, lru, none")
      ->capture_default_str();
  cmd->add_option("--presc-epochs", f->presc_epochs,
                  "PreSC pre-sampling epochs: visit counts are taken from the trace's first N epochs "
                  "(misses are still counted over the whole trace)")
      ->capture_default_str();
  cmd->add_option("--planner", f->planner, "Belady planner device: auto | cpu | gpu")->capture_default_str();
  cmd->add_option("--belady-scope", f->belady_scope,
                  "trace = plan the whole trace at once (the lower bound); superbatch = plan each "
                  "recorded superbatch with carried state (what training does)")
      ->capture_default_str();
  cmd->add_option("--block-bytes", f->block_bytes,
                  "Read granularity of features.bin (0 = its O_DIRECT alignment)")
      ->capture_default_str();
  cmd->add_option("--json", f->json, "Also write the results as JSON to this file")->capture_default_str();
  cmd->add_option("--svg", f->svg, "Also write a hit-ratio chart (SVG) to this file")->capture_default_str();

  return [f]() -> int {
    const char* kCmd = "stats";
    auto dataset = Dataset::Open(f->dataset);
    if (!dataset.ok()) return ReportError(kCmd, dataset.status());
    const DatasetManifest& m = dataset->manifest();
    const int64_t row_bytes = m.feature_row_bytes();
    const std::string trace_dir = f->trace.empty() ? f->dataset + "/trace" : f->trace;
    auto planner_device = ParsePlannerDevice(f->planner);
    if (!planner_device.ok()) return ReportError(kCmd, planner_device.status());
    if (f->belady_scope != "trace" && f->belady_scope != "superbatch") {
      return ReportError(kCmd, fmt::format("bad --belady-scope '{}' (expected trace or superbatch)", f->belady_scope));
    }
    if (f->presc_epochs < 1) return ReportError(kCmd, "--presc-epochs must be at least 1");
    std::vector<PolicyKind> kinds;
    std::vector<std::string> policy_names;
    for (const std::string& name : SplitComma(f->policies)) {
      auto kind = ParsePolicyKind(name);
      if (!kind.ok()) return ReportError(kCmd, kind.status());
      if (std::find(kinds.begin(), kinds.end(), *kind) != kinds.end()) continue;
      kinds.push_back(*kind);
      policy_names.push_back(name);
    }
    std::vector<int64_t> capacities;
    for (const std::string& text : SplitComma(f->capacities)) {
      auto rows = ParseCapacity(text, m.num_nodes, row_bytes);
      if (!rows.ok()) return ReportError(kCmd, rows.status());
      capacities.push_back(std::min(*rows, m.num_nodes));
    }
    std::sort(capacities.begin(), capacities.end());
    capacities.erase(std::unique(capacities.begin(), capacities.end()), capacities.end());
    if (kinds.empty() || capacities.empty()) return ReportError(kCmd, "no policies or no capacities given");

    int64_t block_bytes = f->block_bytes;
    if (block_bytes <= 0) {
      auto fd = UniqueFd::Open(dataset->PathOf(dataset_files::kFeatures), O_RDONLY);
      if (!fd.ok()) return ReportError(kCmd, fd.status());
      block_bytes = DirectIoAlignment(fd->get());
    }

    // Load the node ids of every batch (blocks are not needed here).
    auto reader = TraceDirectoryReader::Open(trace_dir);
    if (!reader.ok()) return ReportError(kCmd, reader.status());
    std::vector<std::vector<std::vector<int64_t>>> ids;  // [superbatch][batch]
    std::vector<int64_t> epochs;
    int64_t accesses = 0;
    for (int64_t k = 0; k < reader->num_superbatches(); ++k) {
      auto sb = reader->Read(k);
      if (!sb.ok()) return ReportError(kCmd, sb.status());
      ids.emplace_back();
      epochs.push_back(sb->epoch);
      for (BatchTrace& b : sb->batches) {
        accesses += static_cast<int64_t>(b.node_ids.size());
        ids.back().push_back(std::move(b.node_ids));
      }
    }
    std::vector<std::vector<IdSpan>> per_superbatch;
    std::vector<IdSpan> whole, presc_batches;
    const int64_t first_epoch = epochs.empty() ? 0 : *std::min_element(epochs.begin(), epochs.end());
    for (size_t k = 0; k < ids.size(); ++k) {
      per_superbatch.push_back(MakeIdSpans(ids[k]));
      whole.insert(whole.end(), per_superbatch.back().begin(), per_superbatch.back().end());
      if (epochs[k] < first_epoch + f->presc_epochs) {
        presc_batches.insert(presc_batches.end(), per_superbatch.back().begin(), per_superbatch.back().end());
      }
    }
    for (const IdSpan& b : whole) {
      for (int64_t p = 0; p < b.size; ++p) {
        if (b.data[p] < 0 || b.data[p] >= m.num_nodes) {
          return ReportError(kCmd, fmt::format("{}: node id {} outside the dataset's {} nodes (trace of another dataset?)",
                                               trace_dir, b.data[p], m.num_nodes));
        }
      }
    }
    const int64_t max_capacity = *std::max_element(capacities.begin(), capacities.end());
    std::printf("seer stats: %s, trace %s: %" PRId64 " superbatches, %zu batches, %" PRId64
                " accesses; %" PRId64 " nodes x %" PRId64 " B rows, %" PRId64 " B blocks\n",
                f->dataset.c_str(), trace_dir.c_str(), reader->num_superbatches(), whole.size(), accesses,
                m.num_nodes, row_bytes, block_bytes);

    std::vector<int64_t> degree_ranking, presc_ranking;
    if (std::find(kinds.begin(), kinds.end(), PolicyKind::kStaticDegree) != kinds.end()) {
      auto degrees = ComputeOutDegrees(*dataset);
      if (!degrees.ok()) return ReportError(kCmd, degrees.status());
      degree_ranking = RankNodesByScore(*degrees, max_capacity);
    }
    if (std::find(kinds.begin(), kinds.end(), PolicyKind::kPresc) != kinds.end()) {
      presc_ranking = RankNodesByScore(CountVisits(presc_batches, m.num_nodes), max_capacity);
    }

    SimulationOptions sim;
    sim.num_nodes = m.num_nodes;
    sim.row_bytes = row_bytes;
    sim.block_bytes = block_bytes;
    std::vector<PolicyStats> results;
    ProgressReporter progress("stats", static_cast<int64_t>(kinds.size() * capacities.size()), "runs");
    for (size_t k = 0; k < kinds.size(); ++k) {
      for (int64_t capacity : capacities) {
        // `none` has no capacity: one run.
        if (kinds[k] == PolicyKind::kNone && capacity != capacities.front()) continue;
        PolicyOptions options;
        options.capacity_rows = capacity;
        options.planner.device = *planner_device;
        if (kinds[k] == PolicyKind::kStaticDegree) options.ranking = degree_ranking;
        if (kinds[k] == PolicyKind::kPresc) options.ranking = presc_ranking;
        auto policy = MakeCachePolicy(kinds[k], options);
        if (!policy.ok()) return ReportError(kCmd, policy.status());
        const bool whole_trace = kinds[k] == PolicyKind::kBelady && f->belady_scope == "trace";
        auto stats = SimulatePolicy(**policy, whole_trace ? std::vector<std::vector<IdSpan>>{whole} : per_superbatch, sim);
        if (!stats.ok()) return ReportError(kCmd, stats.status());
        results.push_back(*stats);
        progress.Add(1);
      }
    }
    progress.Finish();

    std::printf("%-14s %12s %11s %13s %13s %9s %10s %12s %11s\n", "policy", "capacity", "cap bytes",
                "accesses", "misses", "hit ratio", "fill rows", "blocks read", "bytes read");
    for (const PolicyStats& s : results) {
      std::printf("%-14s %12" PRId64 " %11s %13" PRId64 " %13" PRId64 " %9s %10" PRId64 " %12" PRId64 " %11s\n",
                  s.policy.c_str(), s.capacity_rows, FormatBytes(s.capacity_bytes).c_str(), s.accesses,
                  s.misses, Percent(s.hit_ratio()).c_str(), s.fill_rows, s.blocks_read,
                  FormatBytes(s.bytes_read).c_str());
    }
    if (f->belady_scope == "trace") {
      std::printf("belady is the lower bound for this trace: no policy can miss less at the same capacity "
                  "(every policy starts full by its own rule; fill reads are not counted as misses).\n");
    } else {
      std::printf("belady was planned per recorded superbatch (what training does); use --belady-scope trace "
                  "for the lower bound.\n");
    }
    std::printf("presc ranks nodes by visit counts of the trace's first %" PRId64
                " epoch(s) (its own pre-sampling, optimistic); static-degree by out-degree.\n",
                f->presc_epochs);

    if (!f->json.empty()) {
      std::string json = fmt::format(
          "{{\"dataset\":\"{}\",\"trace\":\"{}\",\"num_nodes\":{},\"row_bytes\":{},\"block_bytes\":{},"
          "\"belady_scope\":\"{}\",\"presc_epochs\":{},\"results\":[",
          JsonEscape(f->dataset), JsonEscape(trace_dir), m.num_nodes, row_bytes, block_bytes,
          f->belady_scope, f->presc_epochs);
      for (size_t k = 0; k < results.size(); ++k) {
        const PolicyStats& s = results[k];
        json += fmt::format(
            "{}{{\"policy\":\"{}\",\"capacity_rows\":{},\"capacity_bytes\":{},\"accesses\":{},\"misses\":{},"
            "\"hit_ratio\":{:.6f},\"fill_rows\":{},\"fill_blocks\":{},\"fill_bytes\":{},\"blocks_read\":{},"
            "\"bytes_read\":{}}}",
            k ? "," : "", s.policy, s.capacity_rows, s.capacity_bytes, s.accesses, s.misses, s.hit_ratio(),
            s.fill_rows, s.fill_blocks, s.fill_bytes, s.blocks_read, s.bytes_read);
      }
      json += "]}\n";
      Status st = WriteFileAtomically(f->json, json);
      if (!st.ok()) return ReportError(kCmd, st);
    }
    if (!f->svg.empty()) {
      std::vector<int64_t> sorted_caps = capacities;
      std::sort(sorted_caps.begin(), sorted_caps.end());
      std::vector<PolicyStats> sorted = results;
      std::stable_sort(sorted.begin(), sorted.end(),
                       [](const PolicyStats& a, const PolicyStats& b) { return a.capacity_rows < b.capacity_rows; });
      Status st = WriteFileAtomically(
          f->svg, RenderSvg(sorted, policy_names, sorted_caps, m.num_nodes, "Feature-cache hit ratio vs capacity"));
      if (!st.ok()) return ReportError(kCmd, st);
    }
    return 0;
  };
}

}  // namespace seer::cli
