// The inspector + Belady planner alone, over every superbatch of an epoch, in one of
// two modes, reporting the process's peak RSS above its set-up (issue 12, "memory
// independent of S"):
//   streaming  each superbatch streams into a .sbt file on --runtime-dir
//              (SuperbatchSampler::SampleToFile) and is planned from that file
//              (TraceIdSource + PlanBeladyStreaming, --working-memory); changesets spill
//              beyond kChangesetRamBytes — what `seer train` does now
//   in-ram     Sample() holds the whole superbatch and PlanBelady plans it in RAM, its
//              changesets kept in RAM — what `seer train` did before
//   inspector  streaming without the planner: the inspector's own share
// Both start from an empty cache of --capacity rows with the out-degree tie scores and
// carry the cache state from one superbatch to the next, so their misses must agree.
#include <malloc.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench_flags.h"
#include "bench_report.h"
#include "cache/belady_planner.h"
#include "cache/degrees.h"
#include "cache/policies.h"
#include "inspector/superbatch_driver.h"
#include "inspector/topology.h"
#include "inspector/trace_stream.h"
#include "storage/base/byte_size.h"
#include "storage/base/file_io.h"
#include "storage/base/process_memory.h"
#include "storage/dataset/dataset.h"

namespace seer {
namespace {

// The sampling flags (bench_flags.h) and the planner's.
struct BenchConfig : bench::SamplingFlags {
  BenchConfig() : SamplingFlags("10,5", /*batch_size=*/128, /*superbatch=*/500, /*threads=*/2, /*seed=*/1) {}
  std::string mode = "streaming";
  int64_t epochs = 1;
  double capacity_fraction = 0.1;  // of the nodes
  std::string working_memory = "8M";
  std::string runtime_dir = "/tmp/seer-sbmem";
};

std::optional<int> ParseFlags(int argc, char** argv, BenchConfig* c) {
  CLI::App app{"Inspector + Belady planner peak RSS over an epoch: streaming vs in-RAM superbatches"};
  bench::AddSamplingFlags(app, c);
  app.add_option("--mode", c->mode, "streaming | in-ram | inspector")->capture_default_str();
  app.add_option("--epochs", c->epochs, "Epochs")->capture_default_str();
  app.add_option("--capacity", c->capacity_fraction, "Feature-cache rows as a fraction of the nodes")
      ->capture_default_str();
  app.add_option("--working-memory", c->working_memory, "Streaming planner's sort buffer")->capture_default_str();
  app.add_option("--runtime-dir", c->runtime_dir, "Where trace files and planner runs go")->capture_default_str();
  return bench::ParseCommandLine(app, argc, argv);
}

Status Run(const BenchConfig& c) {
  // As seer train does (executor/train_loop.cc KeepLargeAllocationsMapped): large
  // short-lived buffers stay mmapped, so freed ones leave the RSS.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  if (c.mode != "streaming" && c.mode != "in-ram" && c.mode != "inspector") {
    return InvalidArgument("--mode must be streaming, in-ram or inspector");
  }
  SEER_ASSIGN_OR_RETURN(Dataset dataset, Dataset::Open(c.dataset_dir));
  SEER_ASSIGN_OR_RETURN(std::vector<int> fanouts, ParseFanouts(c.fanouts_text));
  SEER_ASSIGN_OR_RETURN(int64_t working_memory, ParseBytes(c.working_memory));
  TopologyOptions topo;
  topo.reader.quiet = true;
  SEER_ASSIGN_OR_RETURN(std::unique_ptr<Topology> topology, Topology::Open(dataset, topo));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> seeds, dataset.LoadSplit("train"));
  SEER_ASSIGN_OR_RETURN(SuperbatchSampler sampler,
                        SuperbatchSampler::Create(topology->view(), std::move(seeds),
                                                  MakeSuperbatchOptions(c.batch_size, c.superbatch, c.threads,
                                                                        fanouts, c.seed, /*shuffle=*/true)));
  const int64_t capacity = static_cast<int64_t>(c.capacity_fraction * dataset.manifest().num_nodes);
  PolicyOptions policy;  // the tie rule's out-degree scores, as training sets them
  SEER_RETURN_IF_ERROR(MakeBeladyNodeScores(dataset, capacity, &policy));
  BeladyPlannerOptions options = policy.planner;
  options.device = PlannerDevice::kCpu;
  const bool streaming = c.mode != "in-ram";
  const bool plan_it = c.mode != "inspector";
  if (streaming) {
    options.working_memory_bytes = working_memory;
    options.runtime_dir = c.runtime_dir;
    options.changeset_budget_bytes = kChangesetRamBytes;
    options.spill_dir = c.runtime_dir;
    SEER_RETURN_IF_ERROR(MakeDirectories(c.runtime_dir));
  }
  std::vector<int64_t> slots = EmptyCacheState(capacity);
  const int64_t setup_rss = ResidentBytesNow();
  const auto start = std::chrono::steady_clock::now();
  int64_t accesses = 0, misses = 0, superbatches = 0;
  double sample_s = 0, plan_s = 0;
  for (int64_t e = 0; e < c.epochs; ++e) {
    for (int64_t k = 0; k < sampler.num_superbatches(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      std::optional<BeladyPlan> plan;
      double sampled_at = 0;
      if (streaming) {
        SEER_ASSIGN_OR_RETURN(TraceFile file, sampler.SampleToFile(e, k, fmt::format("{}/sb-{}-{}.sbt", c.runtime_dir, e, k)));
        sampled_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!plan_it) {
          sample_s += sampled_at;
          ++superbatches;
          continue;
        }
        SEER_ASSIGN_OR_RETURN(TraceIdSource source, TraceIdSource::Open(file));
        SEER_ASSIGN_OR_RETURN(BeladyPlan p, PlanBeladyStreaming(slots, source, options));
        plan.emplace(std::move(p));
      } else {
        SEER_ASSIGN_OR_RETURN(SuperbatchTrace trace, sampler.Sample(e, k));
        sampled_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<IdSpan> spans;
        for (const BatchTrace& b : trace.batches) spans.push_back(IdSpan{b.node_ids.data(), static_cast<int64_t>(b.node_ids.size())});
        SEER_ASSIGN_OR_RETURN(BeladyPlan p, PlanBelady(slots, spans, options));
        plan.emplace(std::move(p));
      }
      sample_s += sampled_at;
      plan_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - sampled_at;
      accesses += plan->num_accesses;
      misses += plan->num_misses;
      slots = std::move(plan->final_slots);
      ++superbatches;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t peak = PeakRssBytes();
  fmt::print("superbatch_memory_bench: mode {} S {} ({} superbatches/epoch, {} epochs): {} accesses, {} misses at "
             "capacity {} rows; sample {:.1f} s, plan {:.1f} s, total {:.1f} s; RSS after set-up {}, peak {}, "
             "peak above set-up {}\n",
             c.mode, c.superbatch, sampler.num_superbatches(), c.epochs, accesses, misses, capacity, sample_s, plan_s,
             seconds, FormatBytes(setup_rss), FormatBytes(peak), FormatBytes(peak - setup_rss));
  if (c.json_path.empty()) return Status::Ok();
  bench::ReportJson report = {{"bench", "superbatch_memory"},
                 {"mode", c.mode},
                 {"superbatch", c.superbatch},
                 {"superbatches", superbatches},
                 {"batch_size", c.batch_size},
                 {"fanouts", c.fanouts_text},
                 {"capacity_rows", capacity},
                 {"accesses", accesses},
                 {"misses", misses},
                 {"sample_seconds", sample_s},
                 {"plan_seconds", plan_s},
                 {"seconds", seconds},
                 {"setup_rss_bytes", setup_rss},
                 {"peak_rss_bytes", peak},
                 {"peak_above_setup_bytes", peak - setup_rss}};
  return bench::WriteReport(c.json_path, report);
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  return seer::bench::BenchMain<seer::BenchConfig>(argc, argv, seer::ParseFlags, seer::Run,
                                                   "superbatch_memory_bench: error: ");
}
