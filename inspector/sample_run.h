// RunSampling: the inspector on its own, as `seer sample` runs it. Samples `epochs`
// epochs of superbatches of one split of a dataset (SuperbatchSampler, same traces for
// any thread count) and writes them to a trace directory (TraceDirectoryWriter in
// inspector/trace_directory.h, the input of `seer stats`); optionally one JSON line per
// superbatch to `jsonl_path`.
//
// Memory: each superbatch streams batch by batch into its .sbt file in the output
// directory (SuperbatchSampler::SampleToFile: a temporary name, synced, then renamed),
// so RAM is the sampler's batches in flight plus one 4 MiB write buffer, whatever the
// superbatch size; nothing spills (trace_budget_bytes and runtime_dir are accepted and
// unused). Blocks until done; single-threaded apart from the sampler's workers. The
// observer's callbacks run on the calling thread.
//
// Typed datasets (storage/dataset/typed_target.h) are sampled as `seer train` samples them:
// TypedTopology over every relation, seeds = the target type's split in global ids,
// per-relation fan-outs; the .sbt files carry the relation count, and trace.json records
// the target type, every relation's fan-outs and the TypedTrainingView's identity (what
// `seer train` records, what `seer stats` compares). No neighbor cache or link
// prediction on typed datasets yet (refused with one line).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cache/neighbor_cache.h"
#include "inspector/superbatch_driver.h"
#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer {

// The options of `seer sample` (tools/sample_command.cc binds its flags to these
// fields, so --help prints these defaults).
struct SampleRunOptions {
  std::string dataset_dir;
  std::string out_dir;                      // trace directory to write
  std::vector<int> fanouts = {10, 10, 10};  // hop 1 first; -1 = all neighbors
  int64_t batch_size = 1000;
  int64_t superbatch = 100;                 // batches per superbatch (S)
  int64_t epochs = 1;
  uint64_t seed = 0;
  int num_threads = 0;                      // 0 = all cores
  std::string split = "train";              // train | valid | test
  // Typed datasets only (refused on a homogeneous one), spelled as `seer train`'s flags:
  // the node type whose split seeds the batches ("" = the only labeled type), and
  // per-relation fan-outs (ParseRelationFanouts; "" = `fanouts` for every relation).
  std::string target_type;
  std::string relation_fanouts;
  // Link prediction (`--task link`): batches of batch_size training edges with their
  // negatives, as `seer train --task link` samples them (split is then unused).
  bool link = false;
  LinkSeedOptions link_options;
  // In-memory neighbor cache built first: bytes ("512M") or a percentage of the
  // topology ("25%"); "0" = none. Exclusive with use_saved_ncache (DATASET/ncache).
  std::string ncache_budget = "0";
  bool use_saved_ncache = false;
  int64_t trace_budget_bytes = int64_t{1} << 30;  // unused: traces stream to out_dir
  std::string runtime_dir;                  // unused; "" = <dataset parent>/seer-runtime
  IoMode io = IoMode::kAuto;                // topology reads
  int queue_depth = 64;                     // reads in flight per sampling thread
  std::string jsonl_path;                   // "" = none; lines are appended
  bool force = false;                       // overwrite an existing trace directory
  bool show_progress = true;                // neighbor-cache build progress on stderr
};

// What the run is about to do, known once the dataset and topology are open.
struct SampleRunPlan {
  int64_t num_seeds = 0;         // of the split
  int64_t num_batches = 0;       // per epoch
  int64_t num_superbatches = 0;  // per epoch
  IoMode io_mode = IoMode::kAuto;  // as resolved by the reader
  bool direct_io = true;
  bool ncache_enabled = false;
  NeighborCacheStats ncache;
  std::string runtime_dir;
  std::string target_type;     // typed datasets: the target node type; "" = homogeneous
  int64_t num_relations = 0;   // typed datasets: relations sampled
};

// The trace files written. Nothing spills (traces stream straight into the output
// directory): spilled and spilled_bytes stay 0 and remain for the summary line.
struct SampleTraceStats {
  int64_t pushed = 0;          // superbatch files written
  int64_t spilled = 0;
  int64_t spilled_bytes = 0;
  int64_t peak_ram_bytes = 0;  // the write buffer (kTraceIoBufferBytes)
};

struct SampleRunSummary {
  int64_t superbatches = 0;
  SampleStats total;
  double seconds = 0;
  SampleTraceStats traces;
};

struct SampleRunObserver {
  std::function<void(const SampleRunPlan&)> on_start;
  // After each superbatch is sampled (stats.epoch, stats.superbatch_index set).
  std::function<void(const SuperbatchStats&)> on_superbatch;
};

// Errors name the file (dataset, trace directory, JSONL file) or the option at fault.
Result<SampleRunSummary> RunSampling(const SampleRunOptions& options,
                                     const SampleRunObserver& observer = {});

}  // namespace seer
