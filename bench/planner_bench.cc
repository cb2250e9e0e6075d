// planner_bench: Belady planner throughput (accesses/s), CPU and (when a device is lent)
// GPU, on synthetic superbatches; and, with --dataset, planning time as a fraction of
// the sampling time of the same superbatch (inspector's SuperbatchSampler).
//
//   planner_bench --batches 1000 --batch-ids 100000 --nodes 100000000 --capacity 10%
//   planner_bench --dataset DIR --batches 100 --batch-size 1000 --fanouts 10,10,10
//
// Prints its configuration, WARNING lines when numbers are not to be trusted, and writes
// JSON with --json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "bench_report.h"
#include "cache/belady_planner.h"
#include "inspector/superbatch_driver.h"
#include "kernels/device.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

// Unique ids per batch drawn from a Zipf-like law over num_nodes (hot ids spread over
// the id range by a multiplicative hash). Per-batch seeds: reproducible in parallel.
std::vector<std::vector<int64_t>> SyntheticSuperbatch(int64_t batches, int64_t ids_per_batch,
                                                      int64_t num_nodes, double alpha, uint64_t seed) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(batches));
  tbb::parallel_for(int64_t{0}, batches, [&](int64_t b) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(b));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::unordered_set<int64_t> seen;
    seen.reserve(static_cast<size_t>(ids_per_batch) * 2);
    auto& ids = out[static_cast<size_t>(b)];
    ids.reserve(static_cast<size_t>(ids_per_batch));
    while (static_cast<int64_t>(ids.size()) < ids_per_batch) {
      int64_t r = std::min<int64_t>(num_nodes - 1, static_cast<int64_t>(num_nodes * std::pow(u(rng), alpha)));
      int64_t v = static_cast<int64_t>((static_cast<unsigned __int128>(r) * 2654435761u) % num_nodes);
      if (seen.insert(v).second) ids.push_back(v);
    }
  });
  return out;
}

struct PlanTiming {
  double seconds = -1;
  int64_t misses = 0;
  std::string error;
};

PlanTiming TimePlan(const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans, PlannerDevice device) {
  BeladyPlannerOptions options;
  options.device = device;
  auto start = std::chrono::steady_clock::now();
  auto plan = PlanBelady(c0, spans, options);
  PlanTiming t;
  if (!plan.ok()) {
    t.error = plan.status().ToString();
    return t;
  }
  t.seconds = bench::SecondsSince(start);
  t.misses = plan->num_misses;
  return t;
}

// ---- configuration ------------------------------------------------------------------

struct BenchConfig {
  int64_t batches = 1000;
  int64_t batch_ids = 100000;
  int64_t num_nodes = 100000000;
  std::string capacity_text = "10%";
  double alpha = 3.0;
  uint64_t seed = 1;
  std::string dataset_dir;
  std::string fanouts_text = "10,10,10";
  std::string json;
  int64_t batch_size = 1000;
  bool gpu = true;
};

// Parses the flags; returns the exit code when the bench should not run.
std::optional<int> ParseFlags(int argc, char** argv, BenchConfig* c) {
  CLI::App app{"Belady planner throughput and planning/sampling time ratio"};
  app.add_option("--batches", c->batches, "S: batches per superbatch")->capture_default_str();
  app.add_option("--batch-ids", c->batch_ids, "Synthetic: unique ids per batch")->capture_default_str();
  app.add_option("--nodes", c->num_nodes, "Synthetic: number of nodes")->capture_default_str();
  app.add_option("--alpha", c->alpha, "Synthetic: skew (id = N*u^alpha; 1 = uniform)")->capture_default_str();
  app.add_option("--capacity", c->capacity_text, "Cache rows, or N% of the nodes")->capture_default_str();
  app.add_option("--seed", c->seed, "Random seed")->capture_default_str();
  app.add_option("--dataset", c->dataset_dir, "Sample one superbatch of this dataset instead (timed)")
      ->capture_default_str();
  app.add_option("--batch-size", c->batch_size, "With --dataset: seeds per batch")->capture_default_str();
  app.add_option("--fanouts", c->fanouts_text, "With --dataset: fan-outs")->capture_default_str();
  app.add_option("--gpu", c->gpu, "Also time the GPU planner when a device is present")->capture_default_str();
  app.add_option("--json", c->json, "Write results as JSON to this file")->capture_default_str();
  return bench::ParseCommandLine(app, argc, argv);
}

// "N%" of num_nodes (rounded down) or a row count.
Result<int64_t> ParseCapacity(const std::string& text, int64_t num_nodes) {
  try {
    if (!text.empty() && text.back() == '%') {
      return static_cast<int64_t>(std::stod(text) / 100.0 * static_cast<double>(num_nodes));
    }
    return static_cast<int64_t>(std::stoll(text));
  } catch (const std::logic_error&) {
    return InvalidArgument("bad --capacity '" + text + "' (rows, or N% of the nodes)");
  }
}

// ---- setup: the superbatch to plan ---------------------------------------------------

struct Superbatch {
  std::vector<std::vector<int64_t>> ids;  // unique node ids per batch
  int64_t num_nodes = 0;
  double sample_seconds = -1;             // sampling time, when sampled from a dataset
};

Superbatch Synthetic(const BenchConfig& c) {
  Superbatch sb;
  sb.num_nodes = c.num_nodes;
  const auto start = std::chrono::steady_clock::now();
  sb.ids = SyntheticSuperbatch(c.batches, c.batch_ids, c.num_nodes, c.alpha, c.seed);
  fmt::print("generated synthetic superbatch in {:.2f} s (not a sampling time)\n",
             bench::SecondsSince(start));
  return sb;
}

// Superbatch 0 of epoch 0 of the dataset, sampled (and timed) by SuperbatchSampler.
Result<Superbatch> Sampled(const BenchConfig& c) {
  SEER_ASSIGN_OR_RETURN(const Dataset dataset, Dataset::Open(c.dataset_dir));
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<Topology> topology,
                        Topology::Open(dataset, TopologyOptions{}));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> seeds, dataset.LoadSplit("train"));
  SuperbatchOptions o;
  o.batch_size = c.batch_size;
  o.superbatch_size = c.batches;
  SEER_ASSIGN_OR_RETURN(o.sampler.fanouts, ParseFanouts(c.fanouts_text));
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler,
                        SuperbatchSampler::Create(topology->view(), std::move(seeds), o));
  SuperbatchStats stats;
  SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(0, 0, &stats));
  Superbatch sb;
  sb.num_nodes = dataset.manifest().num_nodes;
  sb.sample_seconds = stats.seconds;
  for (auto& b : trace.batches) sb.ids.push_back(std::move(b.node_ids));
  fmt::print("sampled superbatch 0: {} batches in {:.3f} s (SuperbatchSampler, page cache may be warm)\n",
             sb.ids.size(), sb.sample_seconds);
  return sb;
}

// ---- measurement and report -----------------------------------------------------------

struct Results {
  int64_t accesses = 0;
  int64_t capacity = 0;
  PlanTiming cpu;
  PlanTiming gpu;  // seconds -1 when not timed
};

Result<Results> TimePlanners(const BenchConfig& c, const Superbatch& sb) {
  Results r;
  for (const auto& b : sb.ids) r.accesses += static_cast<int64_t>(b.size());
  SEER_ASSIGN_OR_RETURN(r.capacity, ParseCapacity(c.capacity_text, sb.num_nodes));
  fmt::print("accesses {}, capacity {} rows, cold start\n", r.accesses, r.capacity);
  const auto spans = MakeIdSpans(sb.ids);
  const auto c0 = EmptyCacheState(r.capacity);

  r.cpu = TimePlan(c0, spans, PlannerDevice::kCpu);
  if (!r.cpu.error.empty()) return InvalidArgument("cpu planner: " + r.cpu.error);
  fmt::print("cpu: {:.3f} s, {:.3g} accesses/s, misses {} ({:.1f}%), peak RSS {}\n", r.cpu.seconds,
             r.accesses / r.cpu.seconds, r.cpu.misses,
             100.0 * r.cpu.misses / std::max<int64_t>(1, r.accesses), FormatBytes(PeakRssBytes()));
  if (sb.sample_seconds > 0) {
    fmt::print("cpu planning / sampling = {:.1f}% (goal <= 50%)\n",
               100.0 * r.cpu.seconds / sb.sample_seconds);
  }
  if (!c.gpu || kernels::CudaDeviceCount() == 0) {
    fmt::print("WARNING: no GPU ({}): GPU planner not timed\n", kernels::DescribeDevice());
    return r;
  }
  r.gpu = TimePlan(c0, spans, PlannerDevice::kGpu);
  if (!r.gpu.error.empty()) {
    fmt::print("gpu planner failed: {}\n", r.gpu.error);
  } else {
    fmt::print("gpu: {:.3f} s, {:.3g} accesses/s ({:.1f}x cpu; goal >= 10x), misses {}{}\n",
               r.gpu.seconds, r.accesses / r.gpu.seconds, r.cpu.seconds / r.gpu.seconds,
               r.gpu.misses, r.gpu.misses == r.cpu.misses ? "" : "  MISMATCH WITH CPU");
  }
  return r;
}

bench::ReportJson ReportOf(const BenchConfig& c, const Superbatch& sb, const Results& r) {
  return {{"batches", c.batches},
          {"accesses", r.accesses},
          {"num_nodes", sb.num_nodes},
          {"capacity_rows", r.capacity},
          {"cpu_seconds", bench::Rounded(r.cpu.seconds, 6)},
          {"cpu_accesses_per_s", bench::Rounded(r.accesses / r.cpu.seconds, 1)},
          {"misses", r.cpu.misses},
          {"sample_seconds", bench::Rounded(sb.sample_seconds, 6)},
          {"gpu_seconds", bench::Rounded(r.gpu.seconds, 6)}};
}

Status Run(const BenchConfig& c) {
  fmt::print("planner_bench: S={}, {}\n", c.batches,
             c.dataset_dir.empty() ? fmt::format("synthetic {} ids/batch from {} nodes (alpha {})",
                                                 c.batch_ids, c.num_nodes, c.alpha)
                                   : "dataset " + c.dataset_dir);
#ifndef NDEBUG
  fmt::print("WARNING: debug build; numbers are not representative\n");
#endif
  Superbatch sb;
  if (c.dataset_dir.empty()) {
    sb = Synthetic(c);
  } else {
    SEER_ASSIGN_OR_RETURN(sb, Sampled(c));
  }
  SEER_ASSIGN_OR_RETURN(const Results results, TimePlanners(c, sb));
  if (c.json.empty()) return Status::Ok();
  return bench::WriteReport(c.json, ReportOf(c, sb, results));
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  return seer::bench::BenchMain<seer::BenchConfig>(argc, argv, seer::ParseFlags, seer::Run, "");
}
