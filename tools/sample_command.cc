// `seer sample`: runs the inspector alone — samples E epochs of superbatches and writes
// their traces (inspector/trace_store.h) for inspection and for `seer stats`.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/neighbor_cache.h"
#include "commands.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace_store.h"
#include "storage/base/byte_size.h"
#include "storage/base/process_memory.h"
#include "storage/base/progress.h"
#include "storage/dataset/dataset.h"
#include "storage/io/block_reader.h"

namespace seer::cli {

namespace {

std::string DefaultRuntimeDir(const std::string& dataset_dir) {
  std::filesystem::path p = std::filesystem::absolute(dataset_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return (p.parent_path() / "seer-runtime").string();
}

}  // namespace

CommandMain RegisterSampleCommand(CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "sample",
      "Sample superbatches (GraphSAGE, without replacement) and write their traces to --out");
  struct Flags {
    std::string dataset;
    std::string out;
    std::string fanouts = "10,10,10";
    int64_t batch_size = 1000;
    int64_t superbatch = 100;
    int64_t epochs = 1;
    uint64_t seed = 0;
    int threads = 0;
    std::string split = "train";
    std::string ncache_budget = "0";
    bool use_ncache = false;
    std::string trace_budget = "1G";
    std::string runtime_dir;
    std::string io = "auto";
    int queue_depth = 64;
    std::string jsonl;
    bool force = false;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dataset", f->dataset, "Dataset directory")->required();
  cmd->add_option("--out", f->out, "Trace directory to write (trace.json + one .sbt per superbatch)")
      ->required();
  cmd->add_option("--fanouts", f->fanouts, "Fan-out per layer, hop 1 first (-1 = all neighbors)")
      ->capture_default_str();
  cmd->add_option("--batch-size", f->batch_size, "Seeds per mini-batch")->capture_default_str();
  cmd->add_option("--superbatch", f->superbatch, "Mini-batches per superbatch (S)")
      ->capture_default_str();
  cmd->add_option("--epochs", f->epochs, "Epochs to sample")->capture_default_str();
  cmd->add_option("--seed", f->seed, "Random seed (same seed, same traces)")->capture_default_str();
  cmd->add_option("--threads", f->threads, "Sampling threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--split", f->split, "Seed nodes: train | valid | test")->capture_default_str();
  cmd->add_option("--ncache-budget", f->ncache_budget,
                  "Build an in-memory neighbor cache of this size first (0 = none; bytes like "
                  "512M or a percentage of the topology like 25%)")
      ->capture_default_str();
  cmd->add_flag("--ncache", f->use_ncache, "Use the neighbor cache in DATASET/ncache (seer ncache build)");
  cmd->add_option("--trace-budget", f->trace_budget,
                  "RAM for traces waiting to be written; beyond it they spill to --runtime-dir")
      ->capture_default_str();
  cmd->add_option("--runtime-dir", f->runtime_dir,
                  "Where spilled traces go (default: <dataset parent>/seer-runtime)")
      ->capture_default_str();
  cmd->add_option("--io", f->io, "Topology reads: auto | uring | pread")->capture_default_str();
  cmd->add_option("--queue-depth", f->queue_depth, "Reads in flight per sampling thread")
      ->capture_default_str();
  cmd->add_option("--jsonl", f->jsonl, "Also append one JSON line per superbatch to this file")
      ->capture_default_str();
  cmd->add_flag("--force", f->force, "Overwrite an existing trace directory");
  cmd->add_flag("--quiet", f->quiet, "No per-superbatch lines");

  return [f] {
    const char* name = "sample";
    auto dataset = Dataset::Open(f->dataset);
    if (!dataset.ok()) return ReportError(name, dataset.status());
    auto fanouts = ParseFanouts(f->fanouts);
    if (!fanouts.ok()) return ReportError(name, fanouts.status().WithContext("--fanouts"));
    auto io = ParseIoMode(f->io);
    if (!io.ok()) return ReportError(name, io.status().WithContext("--io"));
    auto trace_budget = ParseBytes(f->trace_budget);
    if (!trace_budget.ok()) return ReportError(name, trace_budget.status().WithContext("--trace-budget"));
    auto ncache_budget = ParseNeighborCacheBudget(f->ncache_budget, dataset->manifest());
    if (!ncache_budget.ok()) {
      return ReportError(name, ncache_budget.status().WithContext("--ncache-budget"));
    }
    if (f->use_ncache && *ncache_budget != 0) {
      return ReportError(name, "--ncache and --ncache-budget are exclusive");
    }
    if (f->epochs < 0) return ReportError(name, "--epochs must be >= 0");
    if (f->queue_depth < 1) return ReportError(name, "--queue-depth must be >= 1");
    if (f->split != "train" && f->split != "valid" && f->split != "test") {
      return ReportError(name, "--split must be train, valid or test, got '" + f->split + "'");
    }

    TopologyOptions topo_options;
    topo_options.reader.mode = *io;
    topo_options.reader.queue_depth = f->queue_depth;
    topo_options.ncache_budget_bytes = *ncache_budget;
    if (f->use_ncache) topo_options.ncache_dir = NeighborCache::DefaultDir(*dataset);
    topo_options.show_progress = !f->quiet;
    auto topology = Topology::Open(*dataset, topo_options);
    if (!topology.ok()) return ReportError(name, topology.status());
    if (f->use_ncache) {
      Status st = (*topology)->ncache().Validate((*topology)->indptr());
      if (!st.ok()) return ReportError(name, st);
    }
    auto seeds = dataset->LoadSplit(f->split);
    if (!seeds.ok()) return ReportError(name, seeds.status());
    if (seeds->empty()) return ReportError(name, "split '" + f->split + "' of " + f->dataset + " is empty");

    SuperbatchOptions options;
    options.batch_size = f->batch_size;
    options.superbatch_size = f->superbatch;
    options.num_threads = f->threads;
    options.sampler.fanouts = *fanouts;
    options.sampler.seed = f->seed;
    auto sampler = SuperbatchSampler::Create((*topology)->view(), std::move(*seeds), options);
    if (!sampler.ok()) return ReportError(name, sampler.status());

    TraceRunInfo run;
    run.dataset_dir = std::filesystem::absolute(f->dataset).lexically_normal().string();
    run.fanouts = *fanouts;
    run.batch_size = f->batch_size;
    run.superbatch = f->superbatch;
    run.epochs = f->epochs;
    run.seed = f->seed;
    auto writer = TraceDirectoryWriter::Create(f->out, run, f->force);
    if (!writer.ok()) return ReportError(name, writer.status());
    const std::string runtime_dir =
        f->runtime_dir.empty() ? DefaultRuntimeDir(f->dataset) : f->runtime_dir;
    TraceStore store(*trace_budget, runtime_dir);

    std::FILE* jsonl = nullptr;
    if (!f->jsonl.empty()) {
      jsonl = std::fopen(f->jsonl.c_str(), "a");
      if (jsonl == nullptr) return ReportError(name, ErrnoStatus(errno, "open", f->jsonl));
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> jsonl_owner(jsonl, jsonl ? &std::fclose : nullptr);

    const NeighborCacheStats& nc = (*topology)->ncache().stats();
    std::printf("seer sample: %s: %lld seeds (%s), %lld batches of %lld in %lld superbatches of %lld per "
                "epoch, fanouts %s, %lld epochs, seed %llu, io %s%s, neighbor cache %s\n",
                f->dataset.c_str(), static_cast<long long>(sampler->num_seeds()), f->split.c_str(),
                static_cast<long long>(sampler->num_batches()), static_cast<long long>(f->batch_size),
                static_cast<long long>(sampler->num_superbatches()),
                static_cast<long long>(f->superbatch), f->fanouts.c_str(),
                static_cast<long long>(f->epochs), static_cast<unsigned long long>(f->seed),
                IoModeName((*topology)->indices().mode()),
                (*topology)->indices().direct() ? " (O_DIRECT)" : " (buffered)",
                (*topology)->ncache().enabled()
                    ? (FormatBytes(nc.bytes) + ", " + std::to_string(nc.nodes_cached) + " nodes / " +
                       std::to_string(nc.edges_cached) + " edges").c_str()
                    : "off");

    ProgressReporter clock("sample", 0, "", false);
    SampleStats total;
    int64_t superbatches = 0;
    for (int64_t epoch = 0; epoch < f->epochs; ++epoch) {
      for (int64_t k = 0; k < sampler->num_superbatches(); ++k) {
        SuperbatchStats s;
        auto trace = sampler->Sample(epoch, k, &s);
        if (!trace.ok()) return ReportError(name, trace.status());
        total.Add(s.sample);
        ++superbatches;
        if (!f->quiet) {
          std::printf("epoch %lld superbatch %lld/%lld: %lld batches, %lld sampled nodes, %lld unique "
                      "nodes, %lld edges, ncache hit %.1f%%, %lld blocks read, %s read, %.3f s\n",
                      static_cast<long long>(epoch), static_cast<long long>(k + 1),
                      static_cast<long long>(sampler->num_superbatches()),
                      static_cast<long long>(s.sample.batches),
                      static_cast<long long>(s.sample.sampled_nodes),
                      static_cast<long long>(s.unique_nodes), static_cast<long long>(s.sample.edges),
                      100.0 * s.sample.ncache_hit_ratio(),
                      static_cast<long long>(s.sample.reads.device_reads),
                      FormatBytes(s.sample.reads.device_bytes).c_str(), s.seconds);
          std::fflush(stdout);
        }
        if (jsonl != nullptr) {
          std::fprintf(jsonl,
                       "{\"epoch\":%lld,\"superbatch\":%lld,\"batches\":%lld,\"sampled_nodes\":%lld,"
                       "\"unique_nodes\":%lld,\"edges\":%lld,\"ncache_lookups\":%lld,"
                       "\"ncache_hits\":%lld,\"topology_requests\":%lld,\"blocks_read\":%lld,"
                       "\"bytes_read\":%lld,\"seconds\":%.6f}\n",
                       static_cast<long long>(epoch), static_cast<long long>(k),
                       static_cast<long long>(s.sample.batches),
                       static_cast<long long>(s.sample.sampled_nodes),
                       static_cast<long long>(s.unique_nodes), static_cast<long long>(s.sample.edges),
                       static_cast<long long>(s.sample.neighbor_lookups),
                       static_cast<long long>(s.sample.ncache_hits),
                       static_cast<long long>(s.sample.topology_requests),
                       static_cast<long long>(s.sample.reads.device_reads),
                       static_cast<long long>(s.sample.reads.device_bytes), s.seconds);
        }
        Status st = store.Push(std::move(*trace));
        if (!st.ok()) return ReportError(name, st);
      }
      // The epoch's traces wait in the store (RAM up to --trace-budget, then runtime
      // files) and are written out in order; spilled files are removed as they are read.
      while (!store.empty()) {
        auto trace = store.Pop();
        if (!trace.ok()) return ReportError(name, trace.status());
        Status st = writer->Add(*trace);
        if (!st.ok()) return ReportError(name, st);
      }
    }
    Status st = writer->Close();
    if (!st.ok()) return ReportError(name, st);
    ::rmdir(runtime_dir.c_str());  // only succeeds when empty and ours to tidy; errors ignored
    const double seconds = clock.ElapsedSeconds();
    const TraceStoreStats ts = store.stats();
    std::printf("seer sample: wrote %s: %lld superbatches, %lld batches, %lld edges in %.2f s "
                "(%.0f sampled edges/s, %.0f topology reads/s), ncache hit %.1f%%, %lld blocks / %s "
                "read; traces: %lld spilled (%s) to %s, peak trace RAM %s; peak memory %s\n",
                f->out.c_str(), static_cast<long long>(superbatches),
                static_cast<long long>(total.batches), static_cast<long long>(total.edges), seconds,
                seconds > 0 ? total.edges / seconds : 0.0,
                seconds > 0 ? total.reads.device_reads / seconds : 0.0,
                100.0 * total.ncache_hit_ratio(), static_cast<long long>(total.reads.device_reads),
                FormatBytes(total.reads.device_bytes).c_str(), static_cast<long long>(ts.spilled),
                FormatBytes(ts.spilled_bytes).c_str(), runtime_dir.c_str(),
                FormatBytes(ts.peak_ram_bytes).c_str(), FormatBytes(PeakRssBytes()).c_str());
    return 0;
  };
}

}  // namespace seer::cli
