// The executor thread's loop; see training_executor.h for the contract.
#include "executor/training_executor.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "executor/evaluation.h"
#include "storage/base/exception_status.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The batches a schedule from `from` to `epochs` delivers (RunTraining's MakeSchedule).
int64_t ScheduledBatches(const SuperbatchSampler& sampler, const TrainPosition& from, int64_t epochs) {
  if (from.epoch >= epochs) return 0;
  int64_t n = sampler.num_batches() * (epochs - from.epoch);
  for (int64_t k = 0; k < std::min(from.next_superbatch, sampler.num_superbatches()); ++k) {
    n -= sampler.num_batches_in(k);
  }
  return n;
}

}  // namespace

TrainingExecutor::TrainingExecutor(const TrainContext& ctx, TrainPosition start)
    : ctx_(ctx),
      start_(start),
      position_(std::move(start)),
      due_batches_(ScheduledBatches(*ctx.samplers.train, start_, ctx.options.epochs)),
      last_checkpoint_(Clock::now()),
      epoch_start_(Clock::now()) {}

Status TrainingExecutor::Run(SuperbatchPipeline& pipeline) {
  const SuperbatchSampler& sampler = *ctx_.samplers.train;
  while (true) {
    // Before a check point Next() may give up waiting on a stop request (every rank
    // checks there, with or without a batch).
    const bool check = ctx_.options.stop_signal != nullptr && (ctx_.group == nullptr || check_next_);
    const auto wait_start = Clock::now();
    std::optional<GatheredBatch> g = pipeline.Next(check ? ctx_.options.stop_signal : nullptr);
    const double waited = Since(wait_start);
    // No batch: the schedule's end, a stage's error (Stop() reports it), or Next() gave
    // up waiting on a stop request; then every rank agrees to stop here.
    const bool gave_up = !g && check && due_batches_ > 0 && ctx_.options.stop_signal->load() != 0;
    if (!g && !gave_up) return Status::Ok();
    if (check) {
      SEER_ASSIGN_OR_RETURN(const int stop, AgreedStop());
      if (stop != 0) {
        interrupted_by_ = stop;
        return SaveCheckpoint();
      }
    }
    if (!g) return Status::Ok();  // not reached: a rank that gave up holds a request
    --due_batches_;
    ++since_check_;
    check_next_ = g->last || since_check_ >= check_interval_;
    if (!report_ && ctx_.group != nullptr) SEER_RETURN_IF_ERROR(CheckRanksAgree(g->superbatch->planned.epoch));
    EpochReport& r = BeginBatch(*g, waited);
    const PlannedSuperbatch& p = g->superbatch->planned;
    const BatchTrace& batch = g->batch();
    if (AlreadyTrained(*g)) {
      // A resume inside this superbatch: gathered (the cache follows its plan), not trained.
      pipeline.Recycle(std::move(g->rows));
    } else {
      const float* rows = nullptr;
      const DeviceRows* device_rows = nullptr;
      SEER_RETURN_IF_ERROR(AssembleRows(*g, r, &rows, &device_rows));
      if (ctx_.options.batch_hook) {
        if (device_rows != nullptr) rows = ctx_.device_tier->HostRows();
        ctx_.options.batch_hook(batch, rows, static_cast<int64_t>(batch.node_ids.size()),
                                ctx_.data.manifest().feature_dim);
      }
      double loss = 0;
      SEER_RETURN_IF_ERROR(TrainBatch(batch, rows, device_rows, r, &loss));
      ++r.batches;
      r.seeds += batch.num_seeds;
      ++done_batches_;
      done_seeds_ += batch.num_seeds;
      MarkTrained(*g, r);
      pipeline.Recycle(std::move(g->rows));
      ProgressPoint point;
      point.epoch = p.epoch;
      point.epochs = ctx_.options.epochs;
      point.superbatch = p.index;
      point.superbatches = sampler.num_superbatches();
      point.batch = batch.batch_index;
      point.batches_per_epoch = sampler.num_batches();
      point.done_batches = done_batches_;
      point.done_seeds = done_seeds_;
      point.loss = loss_batches_ ? loss_sum_ / loss_batches_ : loss;
      point.hit_ratio = (r.gather.hits + g->hits_so_far) / std::max<double>(1.0, r.gather.rows + g->rows_so_far);
      ctx_.reporter.Progress(point);
    }
    if (g->last) {
      bool stop = false;
      SEER_RETURN_IF_ERROR(EndSuperbatch(*g, pipeline, &stop));
      if (stop) return Status::Ok();
    }
    if (ctx_.checkpointer.DueByTime(Since(last_checkpoint_))) SEER_RETURN_IF_ERROR(SaveCheckpoint());
  }
}

// A rank without a batch (Next() gave up) holds a request, so the maximum is one too.
// Data-parallel: the same allreduce agrees on the batches until the next check, every
// rank's wish taken (about kStopCheckSeconds of batches at this rank's pace).
Result<int> TrainingExecutor::AgreedStop() {
  int64_t values[2] = {ctx_.options.stop_signal->load(), 1};
  if (ctx_.group != nullptr) {
    const double per_batch = since_check_ > 0 ? Since(last_check_) / since_check_ : 0;
    values[1] = per_batch > 0 ? std::clamp<int64_t>(static_cast<int64_t>(kStopCheckSeconds / per_batch), 1,
                                                    kStopCheckMaxBatches)
                              : 1;
    SEER_RETURN_IF_ERROR(ctx_.group->AllreduceInt64(
        values, 2, ProcessGroup::ReduceOp::kMax, fmt::format("stop check before step {}", position_.global_step + 1)));
  }
  check_interval_ = values[1];
  since_check_ = 0;
  last_check_ = Clock::now();
  return static_cast<int>(values[0]);
}

bool TrainingExecutor::AlreadyTrained(const GatheredBatch& g) const {
  const PlannedSuperbatch& p = g.superbatch->planned;
  return p.epoch == start_.epoch && p.index == start_.next_superbatch &&
         static_cast<int64_t>(g.index) < start_.next_batch;
}

void TrainingExecutor::MarkTrained(const GatheredBatch& g, const EpochReport& r) {
  position_.epoch = g.superbatch->planned.epoch;
  position_.next_superbatch = g.superbatch->planned.index;
  position_.next_batch = static_cast<int64_t>(g.index) + 1;
  position_.epoch_loss_sum = loss_sum_;
  position_.epoch_loss_batches = loss_batches_;
  position_.epoch_correct = correct_;
  position_.epoch_labeled = labeled_;
  position_.epoch_batches = r.batches;
  position_.epoch_seeds = r.seeds;
}

Status TrainingExecutor::SaveCheckpoint() {
  last_checkpoint_ = Clock::now();
  return ctx_.checkpointer.Save(ctx_.model, position_);
}

// The epoch's report (started on its first batch), with the batch's waiting time and,
// on a superbatch's first batch, the superbatch's sampling and planning.
EpochReport& TrainingExecutor::BeginBatch(const GatheredBatch& g, double waited) {
  const PlannedSuperbatch& p = g.superbatch->planned;
  if (!report_) {
    report_.emplace();
    report_->epoch = p.epoch;
    report_->link = ctx_.options.task == ModelTask::kLink;
    loss_sum_ = 0;
    loss_batches_ = correct_ = labeled_ = 0;
    if (p.epoch == position_.epoch && (position_.next_superbatch > 0 || position_.next_batch > 0) &&
        p.index == position_.next_superbatch) {
      // A resumed epoch: its batches before the checkpoint count in its report.
      loss_sum_ = position_.epoch_loss_sum;
      loss_batches_ = position_.epoch_loss_batches;
      correct_ = position_.epoch_correct;
      labeled_ = position_.epoch_labeled;
      report_->batches = position_.epoch_batches;
      report_->seeds = position_.epoch_seeds;
    }
  }
  EpochReport& r = *report_;
  r.stall_seconds += waited;
  if (g.index == 0) {
    r.inspect_seconds += p.sample_stats.seconds;
    r.plan_seconds += p.plan.seconds;
    r.ncache_lookups += p.sample_stats.sample.neighbor_lookups;
    r.ncache_hits += p.sample_stats.sample.ncache_hits;
    r.topology_reads.Add(p.sample_stats.sample.reads);
  }
  return r;
}

Status TrainingExecutor::AssembleRows(const GatheredBatch& g, EpochReport& r, const float** rows,
                                      const DeviceRows** device_rows) {
  const BatchTrace& batch = g.batch();
  const int64_t row_bytes = ctx_.data.manifest().feature_dim * static_cast<int64_t>(sizeof(float));
  if (ctx_.device_tier == nullptr) {
    *rows = g.rows.data();
    r.gather.h2d_bytes += static_cast<int64_t>(batch.node_ids.size()) * row_bytes;
    return Status::Ok();
  }
  DeviceTierStats stats;
  try {
    SEER_ASSIGN_OR_RETURN(*device_rows, ctx_.device_tier->Assemble(batch, g.rows, &stats));
  } catch (...) {
    return StatusFromCurrentException("device tier");
  }
  r.gather.h2d_bytes += stats.h2d_bytes;
  r.gather.device_hits += stats.hits;
  r.transfer_seconds += stats.transfer_seconds;
  return Status::Ok();
}

Status TrainingExecutor::TrainBatch(const BatchTrace& batch, const float* rows, const DeviceRows* device_rows,
                                    EpochReport& r, double* loss) {
  if (ctx_.model == nullptr) return Status::Ok();
  seed_labels_.resize(static_cast<size_t>(batch.num_seeds));
  for (int64_t s = 0; s < batch.num_seeds && batch.link.empty(); ++s) {  // link prediction reads no label
    seed_labels_[static_cast<size_t>(s)] = ctx_.labels.Get(batch.node_ids[static_cast<size_t>(s)]);
  }
  const auto compute_start = Clock::now();
  StepResult step;
  try {
    step = device_rows != nullptr ? ctx_.model->TrainStepRows(batch, *device_rows, seed_labels_.data())
                                  : ctx_.model->TrainStep(batch, rows, seed_labels_.data());
  } catch (const CollectiveError& e) {
    return e.status();
  } catch (...) {
    return StatusFromCurrentException("training step");
  }
  r.compute_seconds += Since(compute_start);
  *loss = step.loss;
  if (step.num_labeled > 0) {
    loss_sum_ += step.loss;
    ++loss_batches_;
    correct_ += step.num_correct;
    labeled_ += step.num_labeled;
  }
  ++position_.global_step;
  if (ctx_.options.step_hook) ctx_.options.step_hook(batch.epoch, batch.batch_index, step.loss);
  return Status::Ok();
}

// The superbatch's last batch is trained: its gather stats are complete. Ends the epoch
// or checkpoints when due; *stop after --stop-after superbatches.
Status TrainingExecutor::EndSuperbatch(const GatheredBatch& g, SuperbatchPipeline& pipeline, bool* stop) {
  const ExecutingSuperbatch& sb = *g.superbatch;
  const PlannedSuperbatch& p = sb.planned;
  EpochReport& r = *report_;
  r.gather.Add(sb.gather);
  r.gather_seconds += sb.gather.gather_seconds;
  r.io_wait_seconds += sb.gather.io_seconds;
  r.cache_update_seconds += sb.gather.update_seconds;
  r.transfer_seconds += sb.gather.convert_seconds;
  pipeline.SuperbatchDone();
  ++executed_superbatches_;
  const bool epoch_done = p.index + 1 == ctx_.samplers.train->num_superbatches();
  if (epoch_done) {
    SEER_RETURN_IF_ERROR(EndEpoch(p.epoch));
    pipeline.EpochDone(p.epoch);
  } else {
    position_.epoch = p.epoch;
    position_.next_superbatch = p.index + 1;
    position_.next_batch = 0;
    position_.epoch_loss_sum = loss_sum_;
    position_.epoch_loss_batches = loss_batches_;
    position_.epoch_correct = correct_;
    position_.epoch_labeled = labeled_;
    position_.epoch_batches = r.batches;
    position_.epoch_seeds = r.seeds;
    if (ctx_.checkpointer.DueAfterSuperbatch(executed_superbatches_)) SEER_RETURN_IF_ERROR(SaveCheckpoint());
  }
  const int64_t stop_after = ctx_.options.stop_after_superbatches;
  if (stop_after >= 0 && executed_superbatches_ >= stop_after) {
    if (!epoch_done) SEER_RETURN_IF_ERROR(SaveCheckpoint());
    stopped_early_ = true;
    *stop = true;
  }
  return Status::Ok();
}

Status TrainingExecutor::EndEpoch(int64_t epoch) {
  EpochReport& r = *report_;
  r.train_loss = loss_batches_ ? loss_sum_ / loss_batches_ : 0;
  r.train_accuracy = labeled_ ? static_cast<double>(correct_) / labeled_ : 0;
  SEER_RETURN_IF_ERROR(EvaluateEpoch(epoch, r));
  r.seconds = Since(epoch_start_);
  epoch_start_ = Clock::now();
  SEER_RETURN_IF_ERROR(ctx_.reporter.EndEpoch(r));
  epochs_.push_back(r);
  position_.epoch = epoch + 1;
  position_.next_superbatch = 0;
  position_.next_batch = 0;
  position_.epoch_loss_sum = 0;
  position_.epoch_loss_batches = position_.epoch_correct = position_.epoch_labeled = 0;
  position_.epoch_batches = position_.epoch_seeds = 0;
  report_.reset();
  return SaveCheckpoint();
}

// Validation after every --eval-every-th epoch and after the last (none with
// --eval-every 0); the test split too only with --test-every-epoch (by default it is
// evaluated once, after training, on the best-validation weights: train_loop.cc
// FinishModel). A better validation accuracy snapshots the weights.
Status TrainingExecutor::EvaluateEpoch(int64_t epoch, EpochReport& r) {
  const TrainOptions& o = ctx_.options;
  const bool last = epoch + 1 == o.epochs;
  if (ctx_.model == nullptr || o.eval_every <= 0 || !(last || (epoch + 1) % o.eval_every == 0)) return Status::Ok();
  const auto eval_start = Clock::now();
  const bool with_test = o.test_every_epoch && ctx_.samplers.test;
  EvalResult valid, test;
  if (ctx_.samplers.valid) {
    SEER_ASSIGN_OR_RETURN(valid, EvaluateSplit(*ctx_.samplers.valid, ctx_.data.gatherer(), *ctx_.model, ctx_.labels));
  }
  if (with_test) {
    SEER_ASSIGN_OR_RETURN(test, EvaluateSplit(*ctx_.samplers.test, ctx_.data.gatherer(), *ctx_.model, ctx_.labels));
  }
  const std::string when = "evaluation after epoch " + std::to_string(epoch + 1);
  if (ctx_.samplers.valid) {
    SEER_ASSIGN_OR_RETURN(valid, ReduceEvalResult(valid, ctx_.group, "valid " + when));
  }
  if (with_test) {
    SEER_ASSIGN_OR_RETURN(test, ReduceEvalResult(test, ctx_.group, "test " + when));
  }
  r.valid_accuracy = valid.accuracy;
  r.test_accuracy = test.accuracy;
  r.valid_link = valid.link;
  r.test_link = test.link;
  if (valid.accuracy > position_.best_valid_accuracy) {
    position_.best_valid_accuracy = valid.accuracy;
    position_.best_epoch = epoch;
    ctx_.model->SnapshotBest();
  }
  r.eval_seconds = Since(eval_start);
  return Status::Ok();
}

// Uneven batch counts would leave ranks waiting in different collectives: every epoch
// starts by comparing them (one small allreduce), and a mismatch is an error naming the
// ranks rather than a hang.
Status TrainingExecutor::CheckRanksAgree(int64_t epoch) {
  const SuperbatchSampler& sampler = *ctx_.samplers.train;
  const std::string what = "batch-count check of epoch " + std::to_string(epoch + 1);
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> batches, ctx_.group->AllgatherInt64(sampler.num_batches(), what));
  SEER_ASSIGN_OR_RETURN(std::vector<int64_t> superbatches,
                        ctx_.group->AllgatherInt64(sampler.num_superbatches(), what));
  const std::string odd_batches = RanksDifferingFromRankZero(batches);
  const std::string odd_superbatches = RanksDifferingFromRankZero(superbatches);
  if (odd_batches.empty() && odd_superbatches.empty()) return Status::Ok();
  return Status(StatusCode::kInvalidArgument,
                "ranks disagree on the epoch's schedule (rank 0: " + std::to_string(batches[0]) + " batches in " +
                    std::to_string(superbatches[0]) + " superbatches; batches differ at: " +
                    (odd_batches.empty() ? "none" : odd_batches) + "; superbatches differ at: " +
                    (odd_superbatches.empty() ? "none" : odd_superbatches) +
                    "): give every rank the same dataset, --batch-size and --superbatch");
}

}  // namespace seer
