// planner_bench: Belady planner throughput (accesses/s), CPU and (when a device is lent)
// GPU, on synthetic superbatches; and, with --dataset, planning time as a fraction of
// the sampling time of the same superbatch (inspector's SuperbatchSampler).
//
//   planner_bench --batches 1000 --batch-ids 100000 --nodes 100000000 --capacity 10%
//   planner_bench --dataset DIR --batches 100 --batch-size 1000 --fanouts 10,10,10
//   planner_bench --streaming --working-memory 64M --runtime-dir DIR --batches 2000 ...
//
// --streaming plans with PlanBeladyStreaming from a source that regenerates each
// synthetic batch when read (the trace is never held whole), spilling next-use runs and
// changesets to --runtime-dir: the peak RSS it prints is the planner's own, to compare
// across --batches (goal: flat). Its time includes generating every batch twice.
//
// Prints its configuration, WARNING lines when numbers are not to be trusted, and writes
// JSON with --json.
#include <algorithm>
#include <ctime>
#include <chrono>
#include <cmath>
#include <functional>
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

#include "bench_flags.h"
#include "bench_report.h"
#include "cache/belady_planner.h"
#include "cache/belady_gpu_plan_internal.h"
#include "kernels/belady_gpu.h"
#include "kernels/belady_gpu_batches.h"
#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
#include "kernels/device.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

std::vector<int64_t> SyntheticBatch(int64_t b, int64_t ids_per_batch, int64_t num_nodes, double alpha,
                                    uint64_t seed);

// Unique ids per batch drawn from a Zipf-like law over num_nodes (hot ids spread over
// the id range by a multiplicative hash). Per-batch seeds: reproducible in parallel.
std::vector<std::vector<int64_t>> SyntheticSuperbatch(int64_t batches, int64_t ids_per_batch,
                                                      int64_t num_nodes, double alpha, uint64_t seed) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(batches));
  tbb::parallel_for(int64_t{0}, batches, [&](int64_t b) {
    out[static_cast<size_t>(b)] = SyntheticBatch(b, ids_per_batch, num_nodes, alpha, seed);
  });
  return out;
}

// One synthetic batch (as SyntheticSuperbatch makes batch b).
std::vector<int64_t> SyntheticBatch(int64_t b, int64_t ids_per_batch, int64_t num_nodes, double alpha,
                                    uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(b));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::unordered_set<int64_t> seen;
  seen.reserve(static_cast<size_t>(ids_per_batch) * 2);
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(ids_per_batch));
  while (static_cast<int64_t>(ids.size()) < ids_per_batch) {
    int64_t r = std::min<int64_t>(num_nodes - 1, static_cast<int64_t>(num_nodes * std::pow(u(rng), alpha)));
    int64_t v = static_cast<int64_t>((static_cast<unsigned __int128>(r) * 2654435761u) % num_nodes);
    if (seen.insert(v).second) ids.push_back(v);
  }
  return ids;
}

// Regenerates batch b on every read: RAM for one batch only.
class GeneratedBatchSource : public BatchIdSource {
 public:
  GeneratedBatchSource(int64_t batches, int64_t ids_per_batch, int64_t num_nodes, double alpha, uint64_t seed)
      : batches_(batches), ids_per_batch_(ids_per_batch), num_nodes_(num_nodes), alpha_(alpha), seed_(seed) {}
  int64_t num_batches() const override { return batches_; }
  Status Rewind() override {
    next_ = 0;
    return Status::Ok();
  }
  Result<IdSpan> Next() override {
    current_ = SyntheticBatch(next_++, ids_per_batch_, num_nodes_, alpha_, seed_);
    return IdSpan{current_.data(), static_cast<int64_t>(current_.size())};
  }

 private:
  int64_t batches_, ids_per_batch_, num_nodes_;
  double alpha_;
  uint64_t seed_;
  int64_t next_ = 0;
  std::vector<int64_t> current_;
};

struct PlanTiming {
  double seconds = -1;
  int64_t misses = 0;
  uint64_t digest = 0;  // of every changeset and the final state (byte-identity check)
  std::string error;
  std::vector<double> runs;  // seconds of each repeat
  double process_cpu = -1;   // process CPU seconds (all threads) of the last run
};

double ProcessCpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// FNV-1a over the plan: every changeset's counts and arrays, then the final state.
class PlanDigest {
 public:
  template <typename T>
  void Add(const std::vector<T>& v) {
    Add(static_cast<int64_t>(v.size()));
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (size_t k = 0; k < v.size() * sizeof(T); ++k) h_ = (h_ ^ p[k]) * 1099511628211ull;
  }
  void Add(int64_t x) {
    for (int k = 0; k < 8; ++k) h_ = (h_ ^ ((static_cast<uint64_t>(x) >> (8 * k)) & 0xff)) * 1099511628211ull;
  }
  void Add(const Changeset& cs) {
    Add(cs.num_accesses);
    Add(cs.num_misses);
    Add(cs.in_ids);
    Add(cs.in_positions);
    Add(cs.in_slots);
    Add(cs.out_ids);
    Add(cs.out_slots);
    Add(cs.block_ids);
    Add(cs.block_slots);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

using PlanFn = std::function<Result<BeladyPlan>(const std::vector<int64_t>&, const std::vector<IdSpan>&,
                                                 const BeladyPlannerOptions&)>;

// One timed plan by `plan` (wall and process CPU), and its misses and digest.
PlanTiming TimePlanWith(const PlanFn& plan_fn, const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans,
                        const BeladyPlannerOptions& options) {
  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  auto plan = plan_fn(c0, spans, options);
  PlanTiming t;
  if (!plan.ok()) {
    t.error = plan.status().ToString();
    return t;
  }
  t.seconds = bench::SecondsSince(start);
  t.process_cpu = ProcessCpuSeconds() - cpu_start;
  t.misses = plan->num_misses;
  PlanDigest digest;
  for (int64_t i = 0; i < plan->changesets.size(); ++i) {
    auto cs = plan->changesets.Get(i);
    if (!cs.ok()) {
      t.error = cs.status().ToString();
      return t;
    }
    digest.Add(*cs);
  }
  digest.Add(plan->final_slots);
  t.digest = digest.value();
  return t;
}

// The block rule's geometry (--read-block; off by default), for every planner timed.
ReadBlocks g_read_blocks;

PlanTiming TimePlan(const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans, PlannerDevice device,
                    const NodeScoreFn& scores) {
  BeladyPlannerOptions options;
  options.device = device;
  options.node_scores = scores;
  options.read_blocks = g_read_blocks;
  return TimePlanWith(PlanBelady, c0, spans, options);
}

// The GPU planner's Thrust code on host threads (kernels::PlanBeladyThrustHost), through
// the same host steps as PlanBelady(kGpu): flattening, scores, per-batch changesets.
PlanTiming TimeThrustHost(const std::vector<int64_t>& c0, const std::vector<IdSpan>& spans,
                          const NodeScoreFn& scores) {
  BeladyPlannerOptions options;
  options.node_scores = scores;
  options.read_blocks = g_read_blocks;
  return TimePlanWith(
      [](const std::vector<int64_t>& initial, const std::vector<IdSpan>& batches, const BeladyPlannerOptions& o) {
        return belady_internal::PlanBeladyWithBackend(initial, batches, o, kernels::PlanBeladyThrustHost);
      },
      c0, spans, options);
}

// One more run of a Thrust planner backend with its phases timed (time_phases: on CUDA
// each phase then waits for the device, so this run is kept out of the timed ones): one
// line saying where the time goes and how often the host waited for the device.
using ThrustPlanFn = kernels::GpuPlanCode (*)(const kernels::BeladyGpuInput&, kernels::BeladyGpuOutput*,
                                              std::string*);
void PrintPhases(const char* name, ThrustPlanFn plan, const std::vector<int64_t>& c0,
                 const std::vector<IdSpan>& spans, const NodeScoreFn& scores) {
  kernels::FlatBatches flat;
  for (const IdSpan& b : spans) flat.Add(b.data, b.size);
  kernels::BeladyGpuInput in = flat.Input(c0, scores);
  in.time_phases = true;
  if (g_read_blocks.enabled()) {
    in.block_row_bytes = g_read_blocks.row_bytes;
    in.block_bytes = g_read_blocks.block_bytes;
    in.block_num_rows = g_read_blocks.num_rows;
  }
  kernels::BeladyGpuOutput out;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  if (plan(in, &out, &error) != kernels::GpuPlanCode::kOk) {
    fmt::print("{} phases: planner failed: {}\n", name, error);
    return;
  }
  const double seconds = bench::SecondsSince(start);
  std::string split;
  for (int p = 0; p < kernels::kNumPlanPhases; ++p) {
    split += fmt::format("{}{} {:.1f} ms", p > 0 ? ", " : "", kernels::PlanPhaseName(p),
                         1e3 * out.phase_seconds[static_cast<size_t>(p)]);
  }
  fmt::print("{} phases: {} (this timed run {:.3f} s); host syncs {} ({:.2f} per batch), temp allocations {}\n",
             name, split, seconds, out.host_syncs,
             static_cast<double>(out.host_syncs) / static_cast<double>(std::max<size_t>(1, spans.size())),
             out.temp_allocations);
}

// ---- configuration ------------------------------------------------------------------

// The sampling flags (bench_flags.h): --batches is S for synthetic superbatches too, and
// --seed seeds the synthetic ids and scores (sampling keeps the sampler's seed 0).
struct BenchConfig : bench::SamplingFlags {
  BenchConfig() : SamplingFlags("10,10,10", /*batch_size=*/1000, /*superbatch=*/1000, /*threads=*/0, /*seed=*/1) {}
  int64_t batch_ids = 100000;
  int64_t num_nodes = 100000000;
  std::string capacity_text = "10%";
  double alpha = 3.0;
  bool gpu = true;
  std::string planners = "cpu,thrust-host,gpu";
  int repeats = 1;
  bool streaming = false;
  std::string working_memory_text = "64M";
  std::string changeset_budget_text;  // "" = the working memory
  std::string runtime_dir = "/tmp";
  bool degree_scores = false;
  std::string read_block_text = "0";  // the block rule's block size (0 = per-row reads)
  int64_t row_bytes = 512;            // with --read-block: bytes per feature row
};

// Parses the flags; returns the exit code when the bench should not run.
std::optional<int> ParseFlags(int argc, char** argv, BenchConfig* c) {
  CLI::App app{"Belady planner throughput and planning/sampling time ratio"};
  bench::AddSamplingFlags(app, c,
                          {/*dataset_positional=*/false, "--batches", "S: batches per superbatch",
                           /*threads_help=*/nullptr, "Random seed"});
  app.add_option("--batch-ids", c->batch_ids, "Synthetic: unique ids per batch")->capture_default_str();
  app.add_option("--nodes", c->num_nodes, "Synthetic: number of nodes")->capture_default_str();
  app.add_option("--alpha", c->alpha, "Synthetic: skew (id = N*u^alpha; 1 = uniform)")->capture_default_str();
  app.add_option("--capacity", c->capacity_text, "Cache rows, or N% of the nodes")->capture_default_str();
  app.add_option("--gpu", c->gpu, "Also time the GPU planner when a device is present")->capture_default_str();
  app.add_option("--planner", c->planners,
                 "Planners to time, comma-separated: cpu (the baseline, always timed), thrust-host (the "
                 "GPU planner's Thrust code on host threads), gpu (when a device is present)")
      ->capture_default_str();
  app.add_option("--repeats", c->repeats, "Runs of each planner, interleaved (median reported)")
      ->capture_default_str();
  app.add_flag("--streaming", c->streaming,
               "Synthetic: PlanBeladyStreaming from a regenerating source (planner-only peak RSS)");
  app.add_option("--working-memory", c->working_memory_text, "With --streaming: sort buffer budget")
      ->capture_default_str();
  app.add_option("--changeset-budget", c->changeset_budget_text,
                 "With --streaming: changesets held in RAM before they spill (default: --working-memory)");
  app.add_option("--runtime-dir", c->runtime_dir, "With --streaming: where runs and changesets spill")
      ->capture_default_str();
  app.add_flag("--scores", c->degree_scores, "Give the planner node scores (tie rule) from a synthetic table");
  app.add_option("--read-block", c->read_block_text,
                 "Plan the block rule of --read-block with blocks of this size (e.g. 4K; 0 = per-row reads)")
      ->capture_default_str();
  app.add_option("--row-bytes", c->row_bytes, "With --read-block: bytes per feature row")->capture_default_str();
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
  sb.ids = SyntheticSuperbatch(c.superbatch, c.batch_ids, c.num_nodes, c.alpha, c.seed);
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
  SEER_ASSIGN_OR_RETURN(const std::vector<int> fanouts, ParseFanouts(c.fanouts_text));
  const SuperbatchOptions o = MakeSuperbatchOptions(c.batch_size, c.superbatch, /*num_threads=*/0, fanouts,
                                                    /*seed=*/0, /*shuffle=*/true);
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

// A random score per node (uint32 table lookups, as with degree scores).
NodeScoreFn SyntheticScores(int64_t num_nodes, uint64_t seed) {
  std::vector<int64_t> table(static_cast<size_t>(num_nodes));
  std::mt19937_64 rng(seed + 17);
  for (auto& x : table) x = static_cast<int64_t>(rng() % 100000);
  return NodeScoresFromTable(table);
}

// --streaming: the planner's peak RSS with a regenerating source.
Status RunStreaming(const BenchConfig& c) {
  SEER_ASSIGN_OR_RETURN(const int64_t working_memory, ParseBytes(c.working_memory_text));
  SEER_ASSIGN_OR_RETURN(const int64_t capacity, ParseCapacity(c.capacity_text, c.num_nodes));
  GeneratedBatchSource source(c.superbatch, c.batch_ids, c.num_nodes, c.alpha, c.seed);
  BeladyPlannerOptions options;
  options.device = PlannerDevice::kCpu;
  options.working_memory_bytes = working_memory;
  options.runtime_dir = c.runtime_dir;
  options.changeset_budget_bytes = working_memory;
  if (!c.changeset_budget_text.empty()) {
    SEER_ASSIGN_OR_RETURN(options.changeset_budget_bytes, ParseBytes(c.changeset_budget_text));
  }
  options.spill_dir = c.runtime_dir;
  if (c.degree_scores) options.node_scores = SyntheticScores(c.num_nodes, c.seed);
  const int64_t rss_before = PeakRssBytes();
  const auto start = std::chrono::steady_clock::now();
  SEER_ASSIGN_OR_RETURN(BeladyPlan plan, PlanBeladyStreaming(EmptyCacheState(capacity), source, options));
  const double seconds = bench::SecondsSince(start);
  fmt::print("streaming: {} accesses, capacity {} rows, working memory {}: {:.3f} s ({:.3g} accesses/s incl. "
             "generating every batch twice), misses {}, changesets in RAM {} / spilled {}, peak RSS {} (before "
             "planning {})\n",
             plan.num_accesses, capacity, FormatBytes(working_memory), seconds, plan.num_accesses / seconds,
             plan.num_misses, FormatBytes(plan.changesets.ram_bytes()), FormatBytes(plan.changesets.spilled_bytes()),
             FormatBytes(PeakRssBytes()),
             FormatBytes(rss_before));
  if (c.json_path.empty()) return Status::Ok();
  return bench::WriteReport(c.json_path, {{"batches", c.superbatch},
                                     {"accesses", plan.num_accesses},
                                     {"capacity_rows", capacity},
                                     {"working_memory_bytes", working_memory},
                                     {"seconds", bench::Rounded(seconds, 6)},
                                     {"misses", plan.num_misses},
                                     {"peak_rss_bytes", PeakRssBytes()}});
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Results {
  int64_t accesses = 0;
  int64_t capacity = 0;
  PlanTiming cpu;
  PlanTiming thrust_host;  // seconds -1 when not timed
  PlanTiming gpu;          // seconds -1 when not timed
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// One more run of a planner (the same superbatch each time): its time joins the runs, the
// reported time is their median; a failure sticks.
void Rerun(PlanTiming* acc, PlanTiming run) {
  if (!acc->error.empty()) return;
  std::vector<double> runs = std::move(acc->runs);
  if (run.error.empty()) runs.push_back(run.seconds);
  *acc = std::move(run);
  acc->runs = std::move(runs);
  if (acc->error.empty()) acc->seconds = Median(acc->runs);
}

void PrintVersusCpu(const char* name, const PlanTiming& t, const PlanTiming& cpu, int64_t accesses,
                    const char* goal) {
  if (!t.error.empty()) {
    fmt::print("{} planner failed: {}\n", name, t.error);
    return;
  }
  fmt::print("{}: {:.3f} s (process CPU {:.2f} s), {:.3g} accesses/s ({:.2f}x cpu{}), misses {}, {}\n", name,
             t.seconds, t.process_cpu, accesses / t.seconds, cpu.seconds / t.seconds, goal, t.misses,
             t.digest == cpu.digest ? "byte-identical to cpu" : "MISMATCH WITH CPU");
}

Result<Results> TimePlanners(const BenchConfig& c, const Superbatch& sb) {
  Results r;
  for (const auto& b : sb.ids) r.accesses += static_cast<int64_t>(b.size());
  SEER_ASSIGN_OR_RETURN(r.capacity, ParseCapacity(c.capacity_text, sb.num_nodes));
  fmt::print("accesses {}, capacity {} rows, cold start\n", r.accesses, r.capacity);
  const auto spans = MakeIdSpans(sb.ids);
  const auto c0 = EmptyCacheState(r.capacity);

  const NodeScoreFn scores = c.degree_scores ? SyntheticScores(sb.num_nodes, c.seed) : NodeScoreFn();
  SEER_ASSIGN_OR_RETURN(const int64_t block_bytes, ParseBytes(c.read_block_text));
  g_read_blocks = block_bytes > 0 ? ReadBlocks{c.row_bytes, block_bytes, sb.num_nodes} : ReadBlocks{};
  if (g_read_blocks.enabled()) {
    fmt::print("block rule: {} B rows, {} B blocks (--read-block)\n", c.row_bytes, block_bytes);
  }
  bool want_thrust_host = false, want_gpu = false;
  for (const std::string& name : SplitCommas(c.planners)) {
    if (name == "thrust-host") want_thrust_host = true;
    else if (name == "gpu") want_gpu = true;
    else if (name != "cpu") return InvalidArgument("--planner: unknown planner '" + name + "' (cpu, thrust-host, gpu)");
  }
  if (want_gpu && (!c.gpu || kernels::CudaDeviceCount() == 0)) {
    fmt::print("WARNING: no GPU ({}): GPU planner not timed\n", kernels::DescribeDevice());
    want_gpu = false;
  }
  if (c.repeats > 1) fmt::print("{} runs of each planner, interleaved; medians\n", c.repeats);
  for (int rep = 0; rep < std::max(1, c.repeats); ++rep) {
    Rerun(&r.cpu, TimePlan(c0, spans, PlannerDevice::kCpu, scores));
    if (!r.cpu.error.empty()) return InvalidArgument("cpu planner: " + r.cpu.error);
    if (want_thrust_host) Rerun(&r.thrust_host, TimeThrustHost(c0, spans, scores));
    if (want_gpu) Rerun(&r.gpu, TimePlan(c0, spans, PlannerDevice::kGpu, scores));
  }
  fmt::print("cpu: {:.3f} s (process CPU {:.2f} s), {:.3g} accesses/s, misses {} ({:.1f}%), peak RSS {}\n",
             r.cpu.seconds, r.cpu.process_cpu, r.accesses / r.cpu.seconds, r.cpu.misses,
             100.0 * r.cpu.misses / std::max<int64_t>(1, r.accesses), FormatBytes(PeakRssBytes()));
  if (sb.sample_seconds > 0) {
    fmt::print("cpu planning / sampling = {:.1f}% (goal <= 50%)\n",
               100.0 * r.cpu.seconds / sb.sample_seconds);
  }
  if (want_thrust_host) PrintVersusCpu("thrust-host", r.thrust_host, r.cpu, r.accesses, "");
  if (want_gpu) PrintVersusCpu("gpu", r.gpu, r.cpu, r.accesses, "; goal >= 10x");
  if (want_thrust_host) PrintPhases("thrust-host", kernels::PlanBeladyThrustHost, c0, spans, scores);
  if (want_gpu) PrintPhases("gpu", kernels::PlanBeladyGpu, c0, spans, scores);
  return r;
}

bench::ReportJson ReportOf(const BenchConfig& c, const Superbatch& sb, const Results& r) {
  return {{"batches", c.superbatch},
          {"accesses", r.accesses},
          {"num_nodes", sb.num_nodes},
          {"capacity_rows", r.capacity},
          {"read_block_bytes", g_read_blocks.block_bytes},
          {"row_bytes", g_read_blocks.enabled() ? g_read_blocks.row_bytes : 0},
          {"cpu_seconds", bench::Rounded(r.cpu.seconds, 6)},
          {"cpu_accesses_per_s", bench::Rounded(r.accesses / r.cpu.seconds, 1)},
          {"misses", r.cpu.misses},
          {"sample_seconds", bench::Rounded(sb.sample_seconds, 6)},
          {"thrust_host_seconds", bench::Rounded(r.thrust_host.seconds, 6)},
          {"thrust_host_identical", r.thrust_host.seconds > 0 && r.thrust_host.digest == r.cpu.digest},
          {"gpu_seconds", bench::Rounded(r.gpu.seconds, 6)},
          {"gpu_identical", r.gpu.seconds > 0 && r.gpu.digest == r.cpu.digest},
          {"repeats", c.repeats}};
}

Status Run(const BenchConfig& c) {
  fmt::print("planner_bench: S={}, {}\n", c.superbatch,
             c.dataset_dir.empty() ? fmt::format("synthetic {} ids/batch from {} nodes (alpha {})",
                                                 c.batch_ids, c.num_nodes, c.alpha)
                                   : "dataset " + c.dataset_dir);
#ifndef NDEBUG
  fmt::print("WARNING: debug build; numbers are not representative\n");
#endif
  if (c.streaming) {
    if (!c.dataset_dir.empty()) return InvalidArgument("--streaming is for synthetic superbatches only");
    return RunStreaming(c);
  }
  Superbatch sb;
  if (c.dataset_dir.empty()) {
    sb = Synthetic(c);
  } else {
    SEER_ASSIGN_OR_RETURN(sb, Sampled(c));
  }
  SEER_ASSIGN_OR_RETURN(const Results results, TimePlanners(c, sb));
  if (c.json_path.empty()) return Status::Ok();
  return bench::WriteReport(c.json_path, ReportOf(c, sb, results));
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  return seer::bench::BenchMain<seer::BenchConfig>(argc, argv, seer::ParseFlags, seer::Run, "");
}
