// SuperbatchPipeline: the three stage threads that feed the executor, and the bounded
// queues and gates between them (docs/design.md "Executor and models"):
//
//   inspector thread  samples superbatch k+1 of the schedule, streamed batch by batch
//                     into a trace file on the runtime directory (TraceFile, inspector/
//                     trace_stream.h) ...
//   planner thread    ... while the feature-cache policy plans k, reading the batches'
//                     ids back from k's file (its changesets spill beyond a small budget)
//   gather thread     reads k's file record by record and gathers batch after batch —
//                     cache fill, hits, misses, changeset apply, float32 rows — one batch
//                     ahead of the model, also across superbatch boundaries; it waits at
//                     an epoch boundary until the executor's evaluation (which reads the
//                     cache) is done: EpochDone()
// Between the stages only handles (file + record index) and plans travel, so the RAM
// the pipeline holds does not grow with the superbatch size; a trace file is removed
// once gathered, and on every other exit (queues and stages own their handles: RAII).
//   executor (caller) Next() takes the gathered batches in order; Recycle() hands each
//                     batch's row buffer back (two buffers circulate: one trains, one
//                     fills); SuperbatchDone() after the last batch of each superbatch.
// With `overlap` sampling k+1 runs while k executes; without it sampling and executing
// (gathering + training) take turns through an exclusion token, as in Ginex.
//
// Errors: every stage body runs inside RunGuarded (storage/base/exception_status.h), which
// turns a returned error or ANY exception (StatusError, std::bad_alloc, c10::Error, ...)
// into a Status — exceptions are named after their stage ("planner stage: ...",
// "gather stage failed: ...") — records the first one and closes every queue and gate,
// so the other stages and the executor stop instead of waiting.
// Next() then returns nullopt; Stop() returns the first error.
//
// No wait is endless: every blocking wait of a stage thread is noted on a WaitBoard
// (stage_gates.h). While the executor waits in Next(), a state in which no stage thread
// is working (each waits or has finished) and nothing changes for `deadlock_seconds` is
// a deadlock: Next() returns nullopt and Stop() a kInternal Status naming what every
// thread waits for (a bug, reported instead of hanging). Slow work never trips it: a
// thread inside a stage call counts as working. The epoch gate opens through the
// schedule's first epoch (a resumed schedule may start later than first_epoch).
//
// Stopping (Ctrl-C): Stop() raises the `cancel` flag each sample call receives, so a
// superbatch being sampled ends within a batch (its unfinished trace file removed, and
// not an error); a plan or gather in progress is finished first. Next(give_up_on) also
// gives up waiting (nullopt, no error) once that flag is set, so a stop does not wait for
// the next superbatch's sampling and plan.
//
// Ownership: the pipeline owns its threads, queues, gates and the trace files; the stage
// callables (PipelineStages) and what they point at must outlive it. Stop() and the
// destructor close everything and join all three threads, always; they return/finish
// once each stage's current call (a plan or a gather; a sample within a batch) does. Next/Recycle/
// SuperbatchDone/EpochDone/Stop are the executor thread's; not thread-safe among
// themselves.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "executor/bounded_queue.h"
#include "executor/superbatch_cache_planner.h"
#include "executor/feature_gather.h"
#include "executor/stage_gates.h"
#include "inspector/superbatch_driver.h"
#include "inspector/trace_stream.h"
#include "storage/base/status.h"

namespace seer {

// The pipeline's figures for the memory split (executor/memory_budget.h):
// float32 batch row buffers circulating between the gather thread and the executor (one
// trains while the next fills): MemoryBudgetRequest::pipeline_depth.
inline constexpr int kPipelineRowBuffers = 2;
// Superbatch traces alive at once, one per stage thread (being sampled, planned and
// gathered): what a split whose traces live in RAM reserves
// (MemoryBudgetRequest::traces_in_flight; the streaming inspector keeps them on disk).
inline constexpr int64_t kPipelineTracesInFlight = 3;

// What each stage does, one call at a time (each called from its own thread only).
struct PipelineStages {
  // Writes superbatch (epoch, superbatch)'s trace to a new file at `path` (on the runtime
  // directory) and returns its handle (owning the file). `cancel` becomes true when the
  // pipeline stops: the call may then end early with any error (ignored; no file left).
  std::function<Result<TraceFile>(int64_t epoch, int64_t superbatch, const std::string& path, SuperbatchStats* stats,
                                  const std::atomic<bool>& cancel)>
      sample;
  std::function<Result<SuperbatchPlan>(const TraceFile& trace)> plan;
  std::function<Status(const std::vector<int64_t>& fill_slots, GatherStats* stats)> fill;
  std::function<Status(const BatchTrace& batch, const Changeset* changeset, std::vector<float>* rows,
                       GatherStats* stats)>
      gather;
};
// The training run's stages: `sampler` samples, `planner` plans, `gatherer` fills and
// gathers (the three must outlive the pipeline).
PipelineStages TrainingStages(SuperbatchSampler& sampler, SuperbatchCachePlanner& planner, FeatureGatherer& gatherer);

struct PipelineOptions {
  std::vector<std::pair<int64_t, int64_t>> schedule;  // (epoch, superbatch) in order
  bool overlap = true;
  std::string runtime_dir;           // where the trace files live (created if missing)
  int64_t first_epoch = 0;           // the gather thread may start on this epoch (or the schedule's first)
  double deadlock_seconds = 2;       // see "No wait is endless" above
};

struct PlannedSuperbatch {
  int64_t epoch = 0;
  int64_t index = 0;
  SuperbatchPlan plan;
  SuperbatchStats sample_stats;
};

// A superbatch on its way through the gather thread to the executor. `gather` is
// written by the gather thread only; the executor reads it after taking the
// superbatch's last batch (the queue orders the two).
struct ExecutingSuperbatch {
  PlannedSuperbatch planned;
  GatherStats gather;
};

struct GatheredBatch {
  std::shared_ptr<ExecutingSuperbatch> superbatch;
  size_t index = 0;          // within the superbatch
  bool last = false;         // last batch of its superbatch
  BatchTrace trace;          // read from the superbatch's trace file
  std::vector<float> rows;   // float32, node_ids.size() x feature_dim
  int64_t hits_so_far = 0;   // the superbatch's gather totals when this batch was gathered
  int64_t rows_so_far = 0;
  const BatchTrace& batch() const { return trace; }
};

class SuperbatchPipeline {
 public:
  // Starts the three threads.
  static std::unique_ptr<SuperbatchPipeline> Start(PipelineStages stages, PipelineOptions options);
  ~SuperbatchPipeline();
  SuperbatchPipeline(const SuperbatchPipeline&) = delete;
  SuperbatchPipeline& operator=(const SuperbatchPipeline&) = delete;

  // The next gathered batch; blocks. nullopt when the schedule is done, after a stage
  // failed, after Stop(), or — within a fraction of a second — once *give_up_on is
  // non-zero (a stop request, executor/interrupt.h; null = wait for the batch).
  std::optional<GatheredBatch> Next(const std::atomic<int>* give_up_on = nullptr);
  void Recycle(std::vector<float> rows);
  // After the executor finished a superbatch's last batch (hands the token back when
  // sampling and executing take turns).
  void SuperbatchDone();
  // After the executor finished `epoch` (and evaluated): the gather thread may go on.
  void EpochDone(int64_t epoch);
  // Closes every queue and gate, joins the threads and returns the first stage error.
  // Idempotent.
  Status Stop();

 private:
  SuperbatchPipeline(PipelineStages stages, PipelineOptions options);
  // Runs `body` as stage `name` on a new thread under the error guard.
  std::thread Launch(const char* name, size_t slot, Status (SuperbatchPipeline::*body)());
  Status InspectorStage();
  Status PlannerStage();
  Status GatherStage();
  // Gathers one superbatch's batches, read from `trace`, into `ready_`; *closed when a
  // queue was closed.
  Status GatherSuperbatch(const std::shared_ptr<ExecutingSuperbatch>& sb, const TraceFile& trace, bool* closed);
  void CloseAll();
  std::string TracePath(int64_t epoch, int64_t k) const;

  struct SampledItem {
    TraceFile trace;
    SuperbatchStats stats;
  };
  struct PlannedItem {
    PlannedSuperbatch planned;
    TraceFile trace;
  };

  PipelineStages stages_;
  PipelineOptions options_;
  ErrorSlot error_;
  WaitBoard board_{{"inspector", "planner", "gather"}};
  std::atomic<bool> stop_{false};
  ExclusionToken exclusion_;
  EpochGate epoch_gate_;
  BoundedQueue<SampledItem> sampled_{1};
  BoundedQueue<PlannedItem> planned_{1};
  BoundedQueue<GatheredBatch> ready_{1};
  BoundedQueue<std::vector<float>> free_buffers_{kPipelineRowBuffers};
  std::thread inspector_, planner_, gatherer_;
};

}  // namespace seer
