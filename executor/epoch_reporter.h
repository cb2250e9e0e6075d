// EpochReporter: everything `seer train` tells the user and the metrics file while it
// runs —
//   - the progress line (redrawn on a TTY every 0.1 s, plain periodic lines otherwise),
//   - one multi-line summary per epoch and the closing lines on stderr (unless quiet),
//   - the --metrics JSON lines: a "start" line (the run's configuration) when the
//     reporter opens, one "epoch" line per finished epoch, a "final" line at the end.
// Epochs are numbered from 1 in the metrics lines ("epoch", "best_epoch") as on stderr.
// The metrics file is created (truncated) by Open — appended to with `append` (a
// resumed run: a new "start" line, then its epochs) — and every line is written and flushed
// as it happens, so a run that dies leaves the lines it had reached.
//
// Owns the metrics file. Blocks only on that file's writes. Called from the executor
// thread only; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "executor/feature_gather.h"
#include "executor/link_metrics.h"
#include "executor/memory_budget.h"
#include "storage/base/json_file.h"
#include "storage/base/output_lock.h"
#include "storage/base/status.h"
#include "storage/io/block_reader.h"

namespace seer {

struct EpochReport {
  int64_t epoch = 0;
  int64_t batches = 0;
  int64_t seeds = 0;
  double train_loss = 0;             // mean over the epoch's batches (labeled seeds)
  double train_accuracy = 0;
  double valid_accuracy = -1;        // -1 = not evaluated this epoch (link prediction: the MRR)
  double test_accuracy = -1;
  // Link prediction (--task link): the ranking metrics behind valid/test_accuracy, and
  // train_accuracy is the share of scored pairs on the right side of 0.
  bool link = false;
  LinkMetrics valid_link, test_link;
  double seconds = 0;                // wall time of the epoch (executor)
  double inspect_seconds = 0, plan_seconds = 0, gather_seconds = 0, io_wait_seconds = 0,
         cache_update_seconds = 0, transfer_seconds = 0, compute_seconds = 0,
         stall_seconds = 0, eval_seconds = 0;
  GatherStats gather;
  int64_t ncache_lookups = 0, ncache_hits = 0;
  ReadStats topology_reads;
  Json ToJsonObject() const;          // the metrics file's "epoch" line
  std::string ToJson() const;        // ... as one line of text
  std::string Summary() const;       // multi-line human summary
  // The summary's time line: the epoch's seconds as the sum of the training thread's parts
  // (compute + waiting for batches + eval + other), then the pipeline threads' times,
  // which overlap the epoch and are not in the sum.
  std::string TimeBreakdown() const;
};

// What the "start" line records about the run's configuration.
struct RunDescription {
  MemoryBudgetSplit split;
  std::string policy;                // PolicyKindName
  std::string model;                 // ModelKindName, "none" with --no-train
  std::string task = "node";         // ModelTaskName
  std::string pipeline;              // PipelineKindName
  std::string io;                    // "mmap" or the feature reader's IoModeName
  bool overlap = true;
  bool direct = true;
  int64_t batches_per_superbatch = 0;  // the split's S (split.superbatch_reason says why when auto)
  double ncache_share = -1;          // recorded only when >= 0
  Json ToJsonObject() const;
};

// What the "final" line and the closing stderr lines report.
struct RunOutcome {
  bool trained = false;              // a model was trained (best/test accuracies are known)
  double best_valid_accuracy = -1;
  int64_t best_epoch = -1;
  double test_accuracy = -1;
  bool link = false;                 // link prediction: the accuracies are MRRs, test_link has the rest
  LinkMetrics test_link;
  int64_t peak_rss_bytes = -1;
  double seconds = 0;
  bool stopped_early = false;
  int64_t budget_bytes = 0;          // for the closing line
  Json ToJsonObject() const;
};

// Where the executor stands, for the progress line.
struct ProgressPoint {
  int64_t epoch = 0, epochs = 0;
  int64_t superbatch = 0, superbatches = 0;
  int64_t batch = 0, batches_per_epoch = 0;
  int64_t done_batches = 0, done_seeds = 0;
  double loss = 0;
  double hit_ratio = 0;
};

class EpochReporter {
 public:
  struct Options {
    std::string metrics_path;        // "" = no metrics file
    bool quiet = false;              // no lines on stderr
    bool show_progress = true;
    double progress_interval_s = 10; // plain lines when stderr is not a TTY
    bool append = false;             // --resume: append to the metrics file (its earlier epochs stay)
  };
  // Creates (or, with `append`, appends to) the metrics file and writes its start line.
  static Result<std::unique_ptr<EpochReporter>> Open(const Options& options, const RunDescription& run);
  ~EpochReporter();
  EpochReporter(const EpochReporter&) = delete;
  EpochReporter& operator=(const EpochReporter&) = delete;

  // "seer train: LINE" on stderr unless quiet.
  void Say(const std::string& line);
  // The memory split's line, then one "WARNING: ..." line per split warning.
  void SaySplit(const MemoryBudgetSplit& split);
  // Starts the rate/ETA clock for `total_batches` batches.
  void StartProgress(int64_t total_batches);
  void Progress(const ProgressPoint& point);
  // Prints the epoch's summary and appends (and flushes) its metrics line.
  Status EndEpoch(const EpochReport& report);
  // Appends the final line, closes the metrics file and prints the closing lines.
  Status Finish(const RunOutcome& outcome);

 private:
  using Clock = std::chrono::steady_clock;
  EpochReporter(const Options& options, std::FILE* metrics);
  Status WriteLine(const Json& line);
  void BreakProgressLine();  // ends a redrawn line before other output

  Options options_;
  std::FILE* metrics_ = nullptr;
  OutputLock metrics_lock_;  // storage/base/output_lock.h: one run per metrics file
  bool tty_ = false;
  bool progress_dirty_ = false;
  int64_t total_batches_ = 0;
  Clock::time_point progress_start_, progress_last_;
};

}  // namespace seer
