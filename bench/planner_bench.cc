// planner_bench: Belady planner throughput (accesses/s), CPU and (when a device is lent)
// GPU, on synthetic superbatches; and, with --dataset, planning time as a fraction of
// the sampling time of the same superbatch (inspector's SuperbatchSampler).
//
//   planner_bench --batches 1000 --batch-ids 100000 --nodes 100000000 --capacity 10%
//   planner_bench --dataset DIR --batches 100 --batch-size 1000 --fanouts 10,10,10
//
// Prints its configuration, WARNING lines when numbers are not to be trusted, and writes
// JSON with --json.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include "cache/belady_planner.h"
#include "inspector/superbatch_driver.h"
#include "kernels/device.h"
#include "storage/base/atomic_file.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

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
  t.seconds = Seconds(start);
  t.misses = plan->num_misses;
  return t;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  using namespace seer;
  CLI::App app{"Belady planner throughput and planning/sampling time ratio"};
  int64_t batches = 1000, batch_ids = 100000, num_nodes = 100000000;
  std::string capacity_text = "10%";
  double alpha = 3.0;
  uint64_t seed = 1;
  std::string dataset_dir, fanouts_text = "10,10,10", json;
  int64_t batch_size = 1000;
  bool gpu = true;
  app.add_option("--batches", batches, "S: batches per superbatch")->capture_default_str();
  app.add_option("--batch-ids", batch_ids, "Synthetic: unique ids per batch")->capture_default_str();
  app.add_option("--nodes", num_nodes, "Synthetic: number of nodes")->capture_default_str();
  app.add_option("--alpha", alpha, "Synthetic: skew (id = N*u^alpha; 1 = uniform)")->capture_default_str();
  app.add_option("--capacity", capacity_text, "Cache rows, or N% of the nodes")->capture_default_str();
  app.add_option("--seed", seed, "Random seed")->capture_default_str();
  app.add_option("--dataset", dataset_dir, "Sample one superbatch of this dataset instead (timed)")
      ->capture_default_str();
  app.add_option("--batch-size", batch_size, "With --dataset: seeds per batch")->capture_default_str();
  app.add_option("--fanouts", fanouts_text, "With --dataset: fan-outs")->capture_default_str();
  app.add_option("--gpu", gpu, "Also time the GPU planner when a device is present")->capture_default_str();
  app.add_option("--json", json, "Write results as JSON to this file")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("planner_bench: S=%lld, %s\n", static_cast<long long>(batches),
              dataset_dir.empty() ? fmt::format("synthetic {} ids/batch from {} nodes (alpha {})", batch_ids,
                                                num_nodes, alpha).c_str()
                                  : ("dataset " + dataset_dir).c_str());
#ifndef NDEBUG
  std::printf("WARNING: debug build; numbers are not representative\n");
#endif
  std::vector<std::vector<int64_t>> ids;
  double sample_seconds = -1;
  if (dataset_dir.empty()) {
    auto start = std::chrono::steady_clock::now();
    ids = SyntheticSuperbatch(batches, batch_ids, num_nodes, alpha, seed);
    std::printf("generated synthetic superbatch in %.2f s (not a sampling time)\n", Seconds(start));
  } else {
    auto dataset = Dataset::Open(dataset_dir);
    if (!dataset.ok()) return std::fprintf(stderr, "%s\n", dataset.status().ToString().c_str()), 1;
    num_nodes = dataset->manifest().num_nodes;
    auto topology = Topology::Open(*dataset, TopologyOptions{});
    if (!topology.ok()) return std::fprintf(stderr, "%s\n", topology.status().ToString().c_str()), 1;
    auto seeds = dataset->LoadSplit("train");
    if (!seeds.ok()) return std::fprintf(stderr, "%s\n", seeds.status().ToString().c_str()), 1;
    SuperbatchOptions o;
    o.batch_size = batch_size;
    o.superbatch_size = batches;
    o.sampler.fanouts.clear();
    std::stringstream ss(fanouts_text);
    for (std::string item; std::getline(ss, item, ',');) o.sampler.fanouts.push_back(std::stoi(item));
    auto sampler = SuperbatchSampler::Create((*topology)->view(), *seeds, o);
    if (!sampler.ok()) return std::fprintf(stderr, "%s\n", sampler.status().ToString().c_str()), 1;
    SuperbatchStats stats;
    auto trace = sampler->Sample(0, 0, &stats);
    if (!trace.ok()) return std::fprintf(stderr, "%s\n", trace.status().ToString().c_str()), 1;
    sample_seconds = stats.seconds;
    for (auto& b : trace->batches) ids.push_back(std::move(b.node_ids));
    std::printf("sampled superbatch 0: %zu batches in %.3f s (SuperbatchSampler, page cache may be warm)\n",
                ids.size(), sample_seconds);
  }
  int64_t accesses = 0;
  for (const auto& b : ids) accesses += static_cast<int64_t>(b.size());
  int64_t capacity = 0;
  if (!capacity_text.empty() && capacity_text.back() == '%') {
    capacity = static_cast<int64_t>(std::stod(capacity_text) / 100.0 * static_cast<double>(num_nodes));
  } else {
    capacity = std::stoll(capacity_text);
  }
  std::printf("accesses %lld, capacity %lld rows, cold start\n", static_cast<long long>(accesses),
              static_cast<long long>(capacity));
  const auto spans = MakeIdSpans(ids);
  const auto c0 = EmptyCacheState(capacity);

  PlanTiming cpu = TimePlan(c0, spans, PlannerDevice::kCpu);
  if (!cpu.error.empty()) return std::fprintf(stderr, "cpu planner: %s\n", cpu.error.c_str()), 1;
  const double cpu_rate = accesses / cpu.seconds;
  std::printf("cpu: %.3f s, %.3g accesses/s, misses %lld (%.1f%%), peak RSS %s\n", cpu.seconds, cpu_rate,
              static_cast<long long>(cpu.misses), 100.0 * cpu.misses / std::max<int64_t>(1, accesses),
              FormatBytes(PeakRssBytes()).c_str());
  if (sample_seconds > 0) {
    std::printf("cpu planning / sampling = %.1f%% (goal <= 50%%)\n", 100.0 * cpu.seconds / sample_seconds);
  }
  PlanTiming gpu_t;
  if (gpu && kernels::CudaDeviceCount() > 0) {
    gpu_t = TimePlan(c0, spans, PlannerDevice::kGpu);
    if (!gpu_t.error.empty()) {
      std::printf("gpu planner failed: %s\n", gpu_t.error.c_str());
    } else {
      std::printf("gpu: %.3f s, %.3g accesses/s (%.1fx cpu; goal >= 10x), misses %lld%s\n", gpu_t.seconds,
                  accesses / gpu_t.seconds, cpu.seconds / gpu_t.seconds, static_cast<long long>(gpu_t.misses),
                  gpu_t.misses == cpu.misses ? "" : "  MISMATCH WITH CPU");
    }
  } else {
    std::printf("WARNING: no GPU (%s): GPU planner not timed\n", kernels::DescribeDevice().c_str());
  }
  if (!json.empty()) {
    std::string out = fmt::format(
        "{{\"batches\":{},\"accesses\":{},\"num_nodes\":{},\"capacity_rows\":{},\"cpu_seconds\":{:.6f},"
        "\"cpu_accesses_per_s\":{:.1f},\"misses\":{},\"sample_seconds\":{:.6f},\"gpu_seconds\":{:.6f}}}\n",
        batches, accesses, num_nodes, capacity, cpu.seconds, cpu_rate, cpu.misses, sample_seconds, gpu_t.seconds);
    Status st = WriteFileAtomically(json, out);
    if (!st.ok()) return std::fprintf(stderr, "%s\n", st.ToString().c_str()), 1;
  }
  return 0;
}
