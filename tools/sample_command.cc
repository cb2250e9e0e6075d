// `seer sample`: runs the inspector alone — samples E epochs of superbatches and writes
// their traces for inspection and for `seer stats`. The run is inspector/sample_run.h;
// every flag is bound to a SampleRunOptions field.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "inspector/sample_run.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/stale_temp.h"
#include "storage/dataset/small_files.h"
#include "flag_binding.h"
#include "commands.h"

namespace seer::cli {
namespace {

// --task: seeds are nodes of a split, or training edges with their negatives (link).
constexpr NameValue<bool> kSampleTaskNames[] = {{"node", false}, {"link", true}};

void AddSampleFlags(CLI::App* cmd, SampleRunOptions* o) {
  cmd->add_option("dataset", o->dataset_dir, "Dataset directory")->required();
  cmd->add_option("--out", o->out_dir, "Trace directory to write (trace.json + one .sbt per superbatch)")->required();
  AddFanoutsOption(cmd, "--fanouts", &o->fanouts, "Fan-out per layer, hop 1 first (-1 = all neighbors)");
  cmd->add_option("--batch-size", o->batch_size, "Seeds per mini-batch")->capture_default_str();
  cmd->add_option("--superbatch", o->superbatch, "Mini-batches per superbatch (S)")->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "Epochs to sample")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same traces)")->capture_default_str();
  cmd->add_option("--threads", o->num_threads, "Sampling threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--split", o->split, "Seed nodes: train | valid | test")->capture_default_str();
  cmd->add_option("--target-type", o->target_type,
                  "Typed datasets: the node type whose split seeds the batches (default: the only node type with "
                  "labels)");
  cmd->add_option("--relation-fanouts", o->relation_fanouts,
                  "Typed datasets: per-relation fan-outs, e.g. 'cites=15,10;paper__written_by__author=5,5' (a relation "
                  "by its key SRC__NAME__DST or its unique NAME; others use --fanouts)");
  cmd->add_option("--ncache-budget", o->ncache_budget,
                  "Build an in-memory neighbor cache of this size first (0 = none; bytes like "
                  "512M or a percentage of the topology like 25%)")
      ->capture_default_str();
  cmd->add_flag("--ncache", o->use_saved_ncache, "Use the neighbor cache in DATASET/ncache (seer ncache build)");
  AddBytesOption(cmd, "--trace-budget", &o->trace_budget_bytes,
                 "Unused: traces stream batch by batch into --out (kept so existing command lines work)");
  cmd->add_option("--runtime-dir", o->runtime_dir, "Unused: traces stream into --out (kept so existing command lines work)")
      ->capture_default_str();
  AddEnumOption(cmd, "--io", &o->io, kIoModeNames, "I/O mode", "Topology reads");
  cmd->add_option("--queue-depth", o->queue_depth, "Reads in flight per sampling thread")->capture_default_str();
  cmd->add_option("--jsonl", o->jsonl_path, "Also append one JSON line per superbatch to this file")
      ->capture_default_str();
  AddEnumOption(cmd, "--task", &o->link, kSampleTaskNames, "task",
                "node: seeds from --split; link: batches of --batch-size training edges with their negatives, as "
                "seer train --task link samples them");
  cmd->add_option("--negatives", o->link_options.negatives, "--task link: negatives per edge (per batch if shared)")
      ->capture_default_str();
  AddEnumOption(cmd, "--negative-dist", &o->link_options.distribution, kNegativeDistributionNames,
                "negative distribution", "--task link: uniform | degree (proportional to in-degree)");
  cmd->add_flag("--shared-negatives", o->link_options.shared, "--task link: one set of negatives per batch");
  cmd->add_flag("--force", o->force, "Overwrite an existing trace directory");
  AddSetFlag(cmd, "--quiet", &o->show_progress, false, "No per-superbatch lines");
}

void PrintPlan(const SampleRunOptions& o, const SampleRunPlan& plan) {
  const NeighborCacheStats& nc = plan.ncache;
  const std::string ncache =
      plan.ncache_enabled
          ? fmt::format("{}, {} nodes / {} edges", FormatBytes(nc.bytes), nc.nodes_cached, nc.edges_cached)
          : "off";
  fmt::print("seer sample: {}: {} {} ({}), {} batches of {} in {} superbatches of {} per epoch, fanouts {}, "
             "{} epochs, seed {}, io {}{}, neighbor cache {}\n",
             o.dataset_dir, plan.num_seeds, o.link ? "training edges" : "seeds",
             o.link ? fmt::format("link, {} {} negatives per {}", o.link_options.negatives,
                                  NegativeDistributionName(o.link_options.distribution),
                                  o.link_options.shared ? "batch" : "edge")
                    : o.split,
             plan.num_batches, o.batch_size, plan.num_superbatches,
             o.superbatch, fmt::join(o.fanouts, ","), o.epochs, o.seed, IoModeName(plan.io_mode),
             plan.direct_io ? " (O_DIRECT)" : " (buffered)", ncache);
  if (!plan.target_type.empty()) {
    fmt::print("seer sample: typed dataset: target type {}, {} relations{}\n", plan.target_type, plan.num_relations,
               o.relation_fanouts.empty() ? "" : ", relation fanouts " + o.relation_fanouts);
  }
}

void PrintSuperbatch(const SuperbatchStats& s, int64_t num_superbatches) {
  fmt::print("epoch {} superbatch {}/{}: {} batches, {} sampled nodes, {} unique nodes, {} edges, ncache hit "
             "{:.1f}%, {} blocks read, {} read, {:.3f} s\n",
             s.epoch + 1, s.superbatch_index + 1, num_superbatches, s.sample.batches, s.sample.sampled_nodes,
             s.unique_nodes, s.sample.edges, 100.0 * s.sample.ncache_hit_ratio(), s.sample.reads.device_reads,
             FormatBytes(s.sample.reads.device_bytes), s.seconds);
  std::fflush(stdout);
}

// Traces stream into --out (inspector/trace_stream.h): no runtime directory is made.
void PrintSummary(const SampleRunOptions& o, const SampleRunSummary& r) {
  auto rate = [&](double count) { return r.seconds > 0 ? count / r.seconds : 0.0; };
  fmt::print("seer sample: wrote {}: {} superbatches, {} batches, {} edges in {:.2f} s ({:.0f} sampled edges/s, "
             "{:.0f} topology reads/s), ncache hit {:.1f}%, {} blocks / {} read; traces streamed into {} (none "
             "spilled), peak trace RAM {}; peak memory {}\n",
             o.out_dir, r.superbatches, r.total.batches, r.total.edges, r.seconds, rate(static_cast<double>(r.total.edges)),
             rate(static_cast<double>(r.total.reads.device_reads)), 100.0 * r.total.ncache_hit_ratio(), r.total.reads.device_reads,
             FormatBytes(r.total.reads.device_bytes), o.out_dir, FormatBytes(r.traces.peak_ram_bytes),
             FormatBytes(PeakRssBytes()));
}

}  // namespace

CommandMain RegisterSampleCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "sample", "Sample superbatches (GraphSAGE, without replacement) and write their traces to --out");
  auto o = std::make_shared<SampleRunOptions>();
  AddSampleFlags(cmd, o.get());
  return [o] {
    SweepAtStart({o->dataset_dir, o->out_dir}, false);
    {  // the small files fully, with their checksums (one sequential pass), before sampling
       // (a typed dataset's indptrs and split are checked as they are loaded)
      auto dataset = Dataset::OpenAnyKind(o->dataset_dir);
      if (!dataset.ok()) return ReportError("sample", dataset.status());
      if (Status st = dataset->manifest().typed() ? Status::Ok() : ValidateSmallFiles(*dataset, o->show_progress).status();
          !st.ok()) {
        return ReportError("sample", st);
      }
    }
    SampleRunPlan plan;
    SampleRunObserver observer;
    observer.on_start = [&](const SampleRunPlan& p) {
      plan = p;
      PrintPlan(*o, plan);
    };
    if (o->show_progress) {
      observer.on_superbatch = [&](const SuperbatchStats& s) { PrintSuperbatch(s, plan.num_superbatches); };
    }
    auto summary = RunSampling(*o, observer);
    if (!summary.ok()) return ReportError("sample", summary.status());
    PrintSummary(*o, *summary);
    return 0;
  };
}

}  // namespace seer::cli
